//! A read-mostly hash table from `(u64 key, u32 tag)` to a `u32` value, laid out
//! so that a lookup usually touches one 64-byte cache line.
//!
//! Why not `hashbrown`: its lookups read a control-byte group and then the slot,
//! two cache lines when the table is larger than the cache. The encoder does one
//! lookup per pre-tokenized piece and one per merge candidate, on tables of
//! 0.1–0.5 M entries (1.5–8 MB), where those second misses would be most of
//! its time.
//!
//! Layout: buckets of four 16-byte slots, each bucket aligned to 64 bytes; a
//! key hashes to a bucket and is stored in its first free slot, or in the next
//! bucket when that one is full (linear probing over buckets). Tag 0 marks an
//! empty slot, so callers use tags `1..`; entries are never removed, so a lookup
//! stops at the first empty slot. The table is at most half full.

/// One entry: 16 bytes, four per cache line.
#[derive(Debug, Clone, Copy, Default)]
#[repr(C)]
struct Slot {
    key: u64,
    tag: u32,
    val: u32,
}

#[derive(Debug, Clone, Copy, Default)]
#[repr(C, align(64))]
struct Bucket([Slot; 4]);

/// See the module documentation.
#[derive(Debug, Clone)]
pub struct FlatTable {
    buckets: Vec<Bucket>,
    /// `buckets.len() - 1` (a power of two minus one).
    mask: usize,
    /// Right shift that turns a 64-bit hash into a bucket index.
    shift: u32,
    len: usize,
}

impl Default for FlatTable {
    fn default() -> Self {
        Self::with_capacity(0)
    }
}

/// A 64x64->128-bit multiply folded back to 64 bits: good high and low bits
/// from one multiplication. The hash of every integer-keyed table in the
/// encoder (this one, the two-word token table, the piece cache).
#[inline(always)]
pub(crate) fn fold_mul(x: u64) -> u64 {
    let m = (x as u128).wrapping_mul(0x9E37_79B9_7F4A_7C15_F39C_C060_5CED_C835);
    (m >> 64) as u64 ^ m as u64
}

/// Mixes a key and tag into 64 bits whose high bits pick the bucket.
#[inline(always)]
fn hash(key: u64, tag: u32) -> u64 {
    fold_mul(key ^ ((tag as u64) << 57))
}

impl FlatTable {
    /// An empty table sized for `n` entries at most half full.
    pub fn with_capacity(n: usize) -> Self {
        let buckets = (n.max(1) * 2).div_ceil(4).next_power_of_two().max(2);
        FlatTable {
            buckets: vec![Bucket::default(); buckets],
            mask: buckets - 1,
            shift: 64 - buckets.trailing_zeros(),
            len: 0,
        }
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the table holds no entry.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline(always)]
    fn home(&self, key: u64, tag: u32) -> usize {
        (hash(key, tag) >> self.shift) as usize & self.mask
    }

    /// Inserts or overwrites `(key, tag) -> val`. `tag` must not be 0. Grows
    /// the table when it would be more than half full.
    pub fn insert(&mut self, key: u64, tag: u32, val: u32) {
        debug_assert!(tag != 0);
        if (self.len + 1) * 2 > self.buckets.len() * 4 {
            self.grow();
        }
        if self.put(key, tag, val) {
            self.len += 1;
        }
    }

    /// Returns true when a new entry was added (false: overwritten).
    fn put(&mut self, key: u64, tag: u32, val: u32) -> bool {
        let mut b = self.home(key, tag);
        loop {
            for s in self.buckets[b].0.iter_mut() {
                if s.tag == 0 {
                    *s = Slot { key, tag, val };
                    return true;
                }
                if s.tag == tag && s.key == key {
                    s.val = val;
                    return false;
                }
            }
            b = (b + 1) & self.mask;
        }
    }

    fn grow(&mut self) {
        let old = std::mem::take(&mut self.buckets);
        let mut bigger = FlatTable::with_capacity(old.len() * 4);
        for bucket in &old {
            for s in &bucket.0 {
                if s.tag != 0 {
                    bigger.put(s.key, s.tag, s.val);
                }
            }
        }
        bigger.len = self.len;
        *self = bigger;
    }

    /// The value stored for `(key, tag)`, if any.
    #[inline(always)]
    pub fn get(&self, key: u64, tag: u32) -> Option<u32> {
        debug_assert!(tag != 0);
        let mut b = self.home(key, tag);
        loop {
            // in bounds: b <= mask < buckets.len()
            let bucket = &self.buckets[b].0;
            for s in bucket {
                if s.key == key && s.tag == tag {
                    return Some(s.val);
                }
                if s.tag == 0 {
                    return None;
                }
            }
            b = (b + 1) & self.mask;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_get_overwrite_and_grow() {
        let mut t = FlatTable::with_capacity(3);
        for i in 0..10_000u64 {
            t.insert(i * 7919, (i % 3 + 1) as u32, i as u32);
        }
        assert_eq!(t.len(), 10_000);
        for i in 0..10_000u64 {
            assert_eq!(t.get(i * 7919, (i % 3 + 1) as u32), Some(i as u32));
            // same key, other tag: absent
            assert_eq!(t.get(i * 7919, 4), None);
        }
        t.insert(0, 1, 5);
        t.insert(0, 1, 6);
        assert_eq!(t.get(0, 1), Some(6));
        assert_eq!(t.len(), 10_000);
        assert_eq!(t.get(1, 1), None);
    }

    #[test]
    fn colliding_keys_spill_to_next_bucket() {
        // more entries than one bucket holds, all in a tiny table
        let mut t = FlatTable::with_capacity(1);
        for k in 0..64u64 {
            t.insert(k, 1, k as u32 + 100);
        }
        for k in 0..64u64 {
            assert_eq!(t.get(k, 1), Some(k as u32 + 100));
        }
        assert_eq!(t.get(64, 1), None);
    }
}
