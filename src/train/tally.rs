//! The [`Tally`]: the counting table of one thread, built for the job of
//! counting hundreds of millions of pieces into about a million distinct
//! chunks.
//!
//! * Chunks of up to 15 bytes (nearly every piece) are stored *inline* in
//!   their slot as two words (bytes zero-padded, the length in the top byte),
//!   so a lookup hashes two registers and compares two words: no arena access,
//!   no `memcmp`, one cache line.
//! * Longer chunks keep their 64-bit hash in the slot and their bytes in a side
//!   arena (a 4-byte length, then the bytes).
//! * Open addressing with linear probing over 32-byte slots (at most 3/4
//!   full); each slot holds the count and the chunk's **first position** in
//!   the whole input, so tables filled by any thread in any order are merged
//!   exactly ([`Tally::absorb`]: counts add, first positions take the minimum)
//!   and sorted once by first position into the first-seen-ordered
//!   [`ChunkTable`] ([`Tally::into_table`]): the result never depends on the
//!   number of threads or on which thread counted which block.
//!
//! Memory: 32 bytes per slot, 43-85 bytes per distinct chunk (load 3/4 to
//! 3/8), plus the bytes and 4 bytes of every chunk of 16 bytes or more.

use super::ChunkTable;
use crate::error::{Error, Result};
use crate::hint::prefetch;

/// Top byte of `hi` for a chunk kept in the side arena.
const LONG: u64 = 0xFF << 56;
/// Longest chunk stored inline.
const INLINE_MAX: usize = 15;

#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    /// Inline: bytes 0..8. Long: the hash of the bytes.
    lo: u64,
    /// Inline: bytes 8..15 and the length in the top byte. Long: [`LONG`] |
    /// the arena offset. 0: empty slot.
    hi: u64,
    count: u64,
    /// Position of the chunk's first occurrence in the whole input.
    first: u64,
}

/// Distinct chunks with counts and first positions (see the module docs).
#[derive(Debug, Clone)]
pub struct Tally {
    slots: Vec<Slot>,
    len: usize,
    arena: Vec<u8>,
}

#[inline(always)]
fn fold(a: u64, b: u64) -> u64 {
    let p = (a as u128).wrapping_mul(b as u128);
    (p as u64) ^ ((p >> 64) as u64)
}

#[inline(always)]
fn hash_words(lo: u64, hi: u64) -> u64 {
    fold(lo ^ 0x243f_6a88_85a3_08d3, hi ^ 0x1319_8a2e_0370_7344)
}

fn hash_long(b: &[u8]) -> u64 {
    let mut h = b.len() as u64;
    let mut words = b.chunks_exact(8);
    for w in &mut words {
        let mut x = [0u8; 8];
        x.copy_from_slice(w);
        h = fold(h ^ u64::from_le_bytes(x), 0x9e37_79b9_7f4a_7c15);
    }
    let mut x = [0u8; 8];
    x[..words.remainder().len()].copy_from_slice(words.remainder());
    fold(h ^ u64::from_le_bytes(x), 0xa409_3822_299f_31d0)
}

/// The inline key of `b[s..e]` (`1 <= e - s <= 15`). Reads 16 bytes from `s`
/// when the slice has them (the common case: two unaligned loads and masks).
#[inline(always)]
fn inline_key(b: &[u8], s: usize, e: usize) -> (u64, u64) {
    let n = e - s;
    let (lo, hi) = match b.get(s..s + 16) {
        Some(w) => {
            let mut x = [0u8; 8];
            x.copy_from_slice(&w[..8]);
            let lo = u64::from_le_bytes(x);
            x.copy_from_slice(&w[8..]);
            (lo, u64::from_le_bytes(x))
        }
        None => {
            let mut x = [0u8; 16];
            x[..n].copy_from_slice(&b[s..e]);
            let mut y = [0u8; 8];
            y.copy_from_slice(&x[..8]);
            let lo = u64::from_le_bytes(y);
            y.copy_from_slice(&x[8..]);
            (lo, u64::from_le_bytes(y))
        }
    };
    let lo_mask = if n >= 8 { !0 } else { (1u64 << (8 * n)) - 1 };
    let hi_mask = if n > 8 {
        (1u64 << (8 * (n - 8))) - 1
    } else {
        0
    };
    (lo & lo_mask, (hi & hi_mask) | ((n as u64) << 56))
}

/// The bytes of an inline key.
fn inline_bytes(lo: u64, hi: u64, out: &mut Vec<u8>) {
    let n = (hi >> 56) as usize;
    let mut x = [0u8; 16];
    x[..8].copy_from_slice(&lo.to_le_bytes());
    x[8..].copy_from_slice(&(hi & !(0xFF << 56)).to_le_bytes());
    out.extend_from_slice(&x[..n]);
}

fn long_chunk(n: usize) -> Error {
    Error::training(format!(
        "a single chunk of {n} bytes is too long (the limit is 4 GiB); use a pre-tokenization pattern or split the documents"
    ))
}

/// One chunk of [`Tally::into_parts`]: `(start, len, count, first)`.
pub type Part = (usize, usize, u64, u64);

/// Pieces counted together by [`Tally::queue_piece`].
pub const BATCH: usize = 16;

/// Queued pieces: key words, hash and first position.
#[derive(Debug)]
pub struct Batch {
    items: [(u64, u64, u64, u64); BATCH],
    n: usize,
}

impl Default for Batch {
    fn default() -> Self {
        Batch {
            items: [(0, 0, 0, 0); BATCH],
            n: 0,
        }
    }
}

impl Default for Tally {
    fn default() -> Self {
        Self::with_slots(1 << 12)
    }
}

impl Tally {
    /// An empty tally with `slots` slots (rounded up to a power of two).
    pub fn with_slots(slots: usize) -> Self {
        Tally {
            slots: vec![Slot::default(); slots.next_power_of_two().max(16)],
            len: 0,
            arena: Vec::new(),
        }
    }

    /// Number of distinct chunks.
    pub fn len(&self) -> usize {
        self.len
    }

    /// The home slot of hash `h`: its top bits (the best mixed ones).
    #[inline(always)]
    fn home(&self, h: u64) -> usize {
        (h >> (64 - self.slots.len().trailing_zeros())) as usize
    }

    /// True when nothing was counted.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes held (slots and arena), for memory accounting.
    pub fn heap_bytes(&self) -> usize {
        self.slots.len() * std::mem::size_of::<Slot>() + self.arena.capacity()
    }

    /// Counts the piece `b[s..e]` (non-empty) once; `at` is the position of
    /// `b[0]` in the whole input. Amortised O(1) for pieces of up to 15 bytes,
    /// O(e - s) otherwise.
    #[inline(always)]
    pub fn add_piece(&mut self, b: &[u8], s: usize, e: usize, at: u64) -> Result<()> {
        if e - s <= INLINE_MAX {
            let (lo, hi) = inline_key(b, s, e);
            self.add_inline(lo, hi, 1, at + s as u64);
            Ok(())
        } else {
            self.add_long(&b[s..e], 1, at + s as u64)
        }
    }

    /// Queues the piece `b[s..e]` (non-empty; at most [`INLINE_MAX`] bytes
    /// when [`Self::is_inline`]) in `batch` after prefetching its home slot;
    /// a full batch is counted. `at` is the position of `b[0]` in the input.
    /// Counting pieces in batches lets the memory accesses of a batch overlap
    /// instead of each piece waiting for its slot's cache line.
    #[inline(always)]
    pub fn queue_piece(&mut self, batch: &mut Batch, b: &[u8], s: usize, e: usize, at: u64) {
        let (lo, hi) = inline_key(b, s, e);
        let h = hash_words(lo, hi);
        prefetch(self.slots.as_ptr().wrapping_add(self.home(h)));
        batch.items[batch.n] = (lo, hi, h, at + s as u64);
        batch.n += 1;
        if batch.n == BATCH {
            self.flush(batch);
        }
    }

    /// Counts the pieces queued in `batch` and empties it.
    #[inline(always)]
    pub fn flush(&mut self, batch: &mut Batch) {
        for &(lo, hi, h, first) in &batch.items[..batch.n] {
            self.add_inline_hashed(lo, hi, h, 1, first);
        }
        batch.n = 0;
    }

    /// True when a piece of `n` bytes is stored inline (see [`Self::queue_piece`]).
    #[inline(always)]
    pub fn is_inline(n: usize) -> bool {
        n <= INLINE_MAX
    }

    #[inline(always)]
    fn add_inline(&mut self, lo: u64, hi: u64, n: u64, first: u64) {
        self.add_inline_hashed(lo, hi, hash_words(lo, hi), n, first)
    }

    #[inline(always)]
    fn add_inline_hashed(&mut self, lo: u64, hi: u64, h: u64, n: u64, first: u64) {
        let mask = self.slots.len() - 1;
        let mut i = self.home(h);
        loop {
            let slot = &mut self.slots[i];
            if slot.hi == hi && slot.lo == lo {
                slot.count = slot.count.saturating_add(n);
                if first < slot.first {
                    slot.first = first;
                }
                return;
            }
            if slot.hi == 0 {
                *slot = Slot {
                    lo,
                    hi,
                    count: n,
                    first,
                };
                self.grew();
                return;
            }
            i = (i + 1) & mask;
        }
    }

    fn long_bytes(&self, hi: u64) -> &[u8] {
        let at = (hi & !LONG) as usize;
        let mut x = [0u8; 4];
        x.copy_from_slice(&self.arena[at..at + 4]);
        let n = u32::from_le_bytes(x) as usize;
        &self.arena[at + 4..at + 4 + n]
    }

    /// Counts a piece of more than [`INLINE_MAX`] bytes (see [`Self::add_piece`]).
    #[inline(never)]
    pub fn add_long(&mut self, chunk: &[u8], n: u64, first: u64) -> Result<()> {
        self.add_long_hashed(chunk, hash_long(chunk), n, first)
    }

    /// [`Self::add_long`] with the chunk's hash already known.
    fn add_long_hashed(&mut self, chunk: &[u8], h: u64, n: u64, first: u64) -> Result<()> {
        let len = u32::try_from(chunk.len()).map_err(|_| long_chunk(chunk.len()))?;
        let mask = self.slots.len() - 1;
        let mut i = self.home(h);
        loop {
            let slot = self.slots[i];
            if slot.hi == 0 {
                break;
            }
            if slot.hi & LONG == LONG && slot.lo == h && self.long_bytes(slot.hi) == chunk {
                let slot = &mut self.slots[i];
                slot.count = slot.count.saturating_add(n);
                slot.first = slot.first.min(first);
                return Ok(());
            }
            i = (i + 1) & mask;
        }
        let at = self.arena.len() as u64;
        self.arena.extend_from_slice(&len.to_le_bytes());
        self.arena.extend_from_slice(chunk);
        self.slots[i] = Slot {
            lo: h,
            hi: LONG | at,
            count: n,
            first,
        };
        self.grew();
        Ok(())
    }

    #[inline(always)]
    fn grew(&mut self) {
        self.len += 1;
        if self.len * 4 > self.slots.len() * 3 {
            self.resize();
        }
    }

    #[cold]
    fn resize(&mut self) {
        self.rehash(self.slots.len() * 2);
    }

    /// Moves every chunk into a table of `slots` slots (a power of two, more
    /// than the chunks).
    fn rehash(&mut self, slots: usize) {
        let old = std::mem::replace(&mut self.slots, vec![Slot::default(); slots]);
        let mask = self.slots.len() - 1;
        for s in old.into_iter().filter(|s| s.hi != 0) {
            let h = if s.hi & LONG == LONG {
                s.lo
            } else {
                hash_words(s.lo, s.hi)
            };
            let mut i = self.home(h);
            while self.slots[i].hi != 0 {
                i = (i + 1) & mask;
            }
            self.slots[i] = s;
        }
    }

    /// Adds every chunk of `other` (counts add, first positions take the
    /// minimum). O(size of `other`).
    pub fn absorb(&mut self, other: Tally) -> Result<()> {
        let (mut a, b) = if other.len > self.len {
            (other, std::mem::take(self))
        } else {
            (std::mem::take(self), other)
        };
        // Room for both first: `b`'s slots are visited in hash order, and
        // inserting in hash order into a table that fills past its load
        // limit on the way piles the keys into one ever longer probe run.
        let need = (a.len + b.len) * 4 / 3 + 1;
        if need > a.slots.len() {
            a.rehash(need.next_power_of_two());
        }
        for s in b.slots.iter().filter(|s| s.hi != 0) {
            if s.hi & LONG == LONG {
                a.add_long_hashed(b.long_bytes(s.hi), s.lo, s.count, s.first)?;
            } else {
                a.add_inline(s.lo, s.hi, s.count, s.first);
            }
        }
        *self = a;
        Ok(())
    }

    /// The chunks' bytes back to back and, per chunk, `(start, len, count,
    /// first)` (in slot order).
    pub fn into_parts(self) -> (Vec<u8>, Vec<Part>) {
        let mut bytes = Vec::with_capacity(self.len * 8 + self.arena.len());
        let mut items = Vec::with_capacity(self.len);
        for s in self.slots.iter().filter(|s| s.hi != 0) {
            let start = bytes.len();
            if s.hi & LONG == LONG {
                bytes.extend_from_slice(self.long_bytes(s.hi));
            } else {
                inline_bytes(s.lo, s.hi, &mut bytes);
            }
            items.push((start, bytes.len() - start, s.count, s.first));
        }
        (bytes, items)
    }

    /// The chunks in first-seen order (by first position) as a [`ChunkTable`].
    /// O(n log n) for n distinct chunks.
    pub fn into_table(self) -> Result<ChunkTable> {
        let mut order: Vec<(u64, u32)> = Vec::with_capacity(self.len);
        for (i, s) in self.slots.iter().enumerate() {
            if s.hi != 0 {
                order.push((s.first, i as u32));
            }
        }
        order.sort_unstable();
        let inline_bytes_total: usize = order.len() * 8;
        let mut t = ChunkTable::with_capacity(order.len(), inline_bytes_total + self.arena.len());
        let mut buf = Vec::with_capacity(16);
        for (_, i) in order {
            let s = self.slots[i as usize];
            if s.hi & LONG == LONG {
                t.push_new(self.long_bytes(s.hi), s.count)?;
            } else {
                buf.clear();
                inline_bytes(s.lo, s.hi, &mut buf);
                t.push_new(&buf, s.count)?;
            }
        }
        Ok(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_and_long_chunks_count_and_order_by_first_position() {
        let text = b"ab cdefghijklmnopq ab xyz 0123456789abcdef cdefghijklmnopq xyz";
        // pieces: split at spaces, keeping the space with the next word
        let mut cuts = vec![0];
        cuts.extend(
            text.iter()
                .enumerate()
                .filter(|(_, &c)| c == b' ')
                .map(|(i, _)| i),
        );
        cuts.push(text.len());
        let mut a = Tally::with_slots(4);
        let mut b = Tally::with_slots(4);
        let half = cuts.len() / 2;
        for w in cuts.windows(2).take(half) {
            a.add_piece(text, w[0], w[1], 0).unwrap();
        }
        for w in cuts.windows(2).skip(half) {
            // the second half seen through a shifted buffer, like a later block
            b.add_piece(&text[10..], w[0] - 10, w[1] - 10, 10).unwrap();
        }
        // absorbed in the "wrong" order: first positions still decide
        b.absorb(a).unwrap();
        let t = b.into_table().unwrap();
        let got: Vec<(Vec<u8>, u64)> = t.iter().map(|(k, n)| (k.to_vec(), n)).collect();
        let mut want: Vec<(Vec<u8>, u64)> = Vec::new();
        for w in cuts.windows(2) {
            let k = text[w[0]..w[1]].to_vec();
            match want.iter_mut().find(|(x, _)| *x == k) {
                Some(e) => e.1 += 1,
                None => want.push((k, 1)),
            }
        }
        assert_eq!(got, want);
    }

    #[test]
    fn keys_of_every_length_stay_apart() {
        let text: Vec<u8> = (0..64u8).map(|i| b'a' + i % 3).collect();
        let mut t = Tally::with_slots(1);
        let mut want = std::collections::HashMap::new();
        for s in 0..40 {
            for n in 1..=20 {
                t.add_piece(&text, s, s + n, 0).unwrap();
                *want.entry(text[s..s + n].to_vec()).or_insert(0u64) += 1;
            }
        }
        let table = t.into_table().unwrap();
        assert_eq!(table.len(), want.len());
        for (k, n) in table.iter() {
            assert_eq!(want[k], n);
        }
    }
}
