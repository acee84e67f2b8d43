//! The piece cache's table: its memory layout and how one probe reads it.
//!
//! 32-byte slots, two per 64-byte bucket (one cache line): the piece's bytes
//! packed in two words ([`key16`](crate::vocab::key16)), up to [`INLINE`] ids
//! inline and a word with the length and the id count. Results of more than
//! [`INLINE`] ids live in the cache's arena, which the slot points to
//! ([`IN_ARENA`]). Linear probing over buckets; nothing is ever removed (the
//! cache wipes the whole table, see [`super`]). A [`Seed`] is the table an
//! encoder's caches start from: every token of at most 16 bytes with its rank.
//!
//! Complexity: a probe reads one cache line, the next ones only while both
//! slots of a bucket are taken (the table is kept at most 3/4 full).

use super::pending::Pending;
use crate::hint::advise_huge;
use crate::vocab::{key16, Vocab, MID_MAX};
use crate::Rank;

/// Ids stored in a slot.
pub(super) const INLINE: usize = 3;
/// `n` of a slot whose ids are in the arena (`ids[0]` offset, `ids[1]` count).
pub(super) const IN_ARENA: u32 = 0xFF;

/// The table's hash of a piece (its key words and length): one multiply,
/// whose high bits pick the bucket ([`Table::home`] takes them; the low bits
/// are never used). Cheaper than the vocabulary's two-word fold, which also
/// serves tables that index by the low bits.
#[inline(always)]
pub(super) fn hash(k0: u64, k1: u64, len: usize) -> u64 {
    (k0 ^ k1.rotate_left(29) ^ ((len as u64) << 58)).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// Bytes of a bucket (one cache line): the low bits of a bucket's byte
/// offset are free for a piece's length (1..=16) in [`Pending::at`].
pub(super) const LINE: usize = std::mem::size_of::<Bucket>();
const _: () = assert!(LINE == 64 && MID_MAX < LINE);

/// The home bucket of hash `h` in a table of `mask + 1` buckets whose
/// `shift` is `64 - log2(buckets)`: the hash's high bits (see [`hash`]).
#[inline(always)]
fn home(h: u64, shift: u32, mask: usize) -> usize {
    (h >> shift) as usize & mask
}

#[derive(Clone, Copy, Default)]
#[repr(C)]
pub(super) struct Slot {
    pub(super) k0: u64,
    pub(super) k1: u64,
    /// Up to [`INLINE`] ids, then the meta word `len | n << 8` (0 marks an
    /// empty slot: pieces are never empty). One array, so that a hit copies
    /// it to the output with one 16-byte move.
    pub(super) tail: [Rank; INLINE + 1],
}

impl Slot {
    #[inline(always)]
    pub(super) fn meta(&self) -> u32 {
        self.tail[INLINE]
    }

    #[inline(always)]
    pub(super) fn ids(&self) -> [Rank; INLINE] {
        [self.tail[0], self.tail[1], self.tail[2]]
    }

    /// Whether this slot holds the piece `(k0, k1)` of `len` bytes: one
    /// test of all three (the key words, and the length in the meta's low
    /// byte), so a probe branches once per slot.
    #[inline(always)]
    fn holds(&self, k0: u64, k1: u64, len: u32) -> bool {
        ((self.k0 ^ k0) | (self.k1 ^ k1) | ((self.meta() ^ len) & 0xFF) as u64) == 0
    }
}

#[derive(Clone, Copy, Default)]
#[repr(C, align(64))]
pub(super) struct Bucket(pub(super) [Slot; 2]);

/// A table of buckets with a fixed power-of-two size, backed by
/// transparent huge pages where the OS offers them.
pub(super) struct Table {
    pub(super) buckets: Box<[Bucket]>,
    mask: usize,
    shift: u32,
    pub(super) len: usize,
}

impl Table {
    /// An empty table of `buckets` buckets (a power of two, at least 2).
    pub(super) fn new(buckets: usize) -> Table {
        let buckets = buckets.next_power_of_two().max(2);
        let mut v: Vec<Bucket> = Vec::with_capacity(buckets);
        advise_huge(&mut v); // less TLB pressure on a table of several MB
        v.resize(buckets, Bucket::default());
        Table {
            buckets: v.into_boxed_slice(),
            mask: buckets - 1,
            shift: 64 - buckets.trailing_zeros(),
            len: 0,
        }
    }

    pub(super) fn bytes(&self) -> usize {
        self.buckets.len() * std::mem::size_of::<Bucket>()
    }

    fn slots(&self) -> usize {
        self.buckets.len() * 2
    }

    /// At 3/4 of its slots: the most a table is filled to.
    pub(super) fn is_full(&self) -> bool {
        self.len * 4 >= self.slots() * 3
    }

    /// Over half of its slots: where the table doubles if the budget
    /// allows. Linear probing's clusters grow fast past it: a piece added
    /// at 70 % load is found in 2.3 buckets on average, at 50 % in 1.4, and
    /// each bucket is a cache line and a branch the hit loop mispredicts.
    pub(super) fn over_half(&self) -> bool {
        self.len * 2 > self.slots()
    }

    #[inline(always)]
    pub(super) fn home(&self, h: u64) -> usize {
        home(h, self.shift, self.mask)
    }

    /// The same entries in a table of `buckets` buckets (at least as many
    /// as this one's entries need).
    pub(super) fn rehashed(&self, buckets: usize) -> Table {
        let mut t = Table::new(buckets);
        for s in self.buckets.iter().flat_map(|b| b.0.iter()) {
            if s.meta() != 0 {
                let b = t.home(hash(s.k0, s.k1, (s.meta() & 0xFF) as usize));
                t.insert(b, s.k0, s.k1, s.meta(), s.ids());
            }
        }
        t
    }

    /// What a probe reads, copied out (see [`View`]).
    #[inline(always)]
    pub(super) fn view(&self) -> View<'_> {
        View {
            buckets: &self.buckets,
            shift: self.shift,
            mask: self.mask,
            line_mask: self.mask * LINE,
        }
    }

    /// Stores a piece known to be absent, in the first free slot from its
    /// home bucket. The caller keeps the table under 3/4 full.
    pub(super) fn insert(&mut self, b: usize, k0: u64, k1: u64, meta: u32, ids: [Rank; INLINE]) {
        let mut b = b;
        loop {
            // in bounds: b <= mask < buckets.len()
            for s in self.buckets[b].0.iter_mut() {
                if s.meta() == 0 {
                    let [a, b, c] = ids;
                    *s = Slot {
                        k0,
                        k1,
                        tail: [a, b, c, meta],
                    };
                    self.len += 1;
                    return;
                }
            }
            b = (b + 1) & self.mask;
        }
    }
}

/// A table as a probe reads it: the bucket slice, shift and mask held by
/// value, so a hot loop keeps them in registers instead of reloading them
/// through the table on every piece.
#[derive(Clone, Copy)]
pub(super) struct View<'t> {
    pub(super) buckets: &'t [Bucket],
    shift: u32,
    mask: usize,
    /// `mask * LINE`: masks a byte offset to a bucket's first byte.
    line_mask: usize,
}

impl<'t> View<'t> {
    /// The slot holding the piece with key `(k0, k1)`, `len` bytes and hash
    /// `h`, if any.
    #[inline(always)]
    pub(super) fn find(self, h: u64, k0: u64, k1: u64, len: u32) -> Option<&'t Slot> {
        self.find_from(home(h, self.shift, self.mask), k0, k1, len)
    }

    /// [`Self::find`], probing from bucket `b` (the piece's home).
    #[inline(always)]
    fn find_from(self, mut b: usize, k0: u64, k1: u64, len: u32) -> Option<&'t Slot> {
        loop {
            let [s0, s1] = &self.bucket(b).0;
            if s0.holds(k0, k1, len) {
                return Some(s0);
            }
            if s1.holds(k0, k1, len) {
                return Some(s1);
            }
            if s0.meta() == 0 || s1.meta() == 0 {
                return None;
            }
            b = (b + 1) & self.mask;
        }
    }

    /// [`Self::find`] for a pending piece of at most 16 bytes (home bucket
    /// and length in [`Pending::at`]). On x86-64 the key is compared as one 16-byte
    /// vector (SSE2, part of every x86-64 CPU), which leaves the hit loop's
    /// general registers to its cursors instead of spilling them.
    #[inline(always)]
    #[cfg(target_arch = "x86_64")]
    #[allow(unsafe_code)] // SSE2 loads and compares, see the SAFETY comments
    pub(super) fn find_pending(self, p: &Pending) -> Option<&'t Slot> {
        use std::arch::x86_64::{__m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8};
        let len = (p.at % LINE as u64) as u32;
        // SAFETY: SSE2 is in the x86-64 baseline; the load reads the 16
        // bytes of `p.key` (a [u64; 2]), unaligned.
        let key = unsafe { _mm_loadu_si128(p.key.as_ptr().cast::<__m128i>()) };
        let holds = |s: &Slot| {
            // SAFETY: as above; `Slot` is repr(C) with `k0`, `k1` first, so
            // its first 16 bytes are the key words, read unaligned.
            let eq = unsafe {
                _mm_movemask_epi8(_mm_cmpeq_epi8(
                    key,
                    _mm_loadu_si128(std::ptr::from_ref(s).cast::<__m128i>()),
                ))
            };
            (eq == 0xFFFF) & ((s.meta() ^ len) & 0xFF == 0)
        };
        let first = self.bucket_at(p.at as usize);
        let mut b = &first.0;
        let mut i = (p.at as usize & self.line_mask) / LINE;
        loop {
            let [s0, s1] = b;
            if holds(s0) {
                return Some(s0);
            }
            if holds(s1) {
                return Some(s1);
            }
            if s0.meta() == 0 || s1.meta() == 0 {
                return None;
            }
            i = (i + 1) & self.mask;
            b = &self.bucket(i).0;
        }
    }

    /// [`Self::find`] for a pending piece of at most 16 bytes.
    #[inline(always)]
    #[cfg(not(target_arch = "x86_64"))]
    pub(super) fn find_pending(self, p: &Pending) -> Option<&'t Slot> {
        let b = (p.at as usize & self.line_mask) / LINE;
        self.find_from(b, p.key[0], p.key[1], (p.at % LINE as u64) as u32)
    }

    /// The byte offset of the home bucket of a piece of `n` bytes with key
    /// `(k0, k1)`; plus `n`, it is the piece's [`Pending::at`].
    #[inline(always)]
    pub(super) fn home_offset(self, k0: u64, k1: u64, n: usize) -> usize {
        home(hash(k0, k1, n), self.shift, self.mask) * LINE
    }

    /// The bucket at byte offset `off & line_mask` (the low bits of `off`
    /// are ignored): one mask and one add from [`Pending::at`], no shift.
    #[inline(always)]
    #[allow(unsafe_code)] // an unchecked, masked offset, see the SAFETY comment
    fn bucket_at(self, off: usize) -> &'t Bucket {
        debug_assert!(self.line_mask / LINE < self.buckets.len());
        // SAFETY: `line_mask` is `mask * LINE` with `mask = buckets.len() - 1`
        // a power of two minus one (see `bucket`), so `off & line_mask` is a
        // multiple of LINE (the size and alignment of a Bucket) of at most
        // `(buckets.len() - 1) * LINE`: the first byte of a bucket in the
        // slice.
        unsafe {
            &*self
                .buckets
                .as_ptr()
                .cast::<u8>()
                .add(off & self.line_mask)
                .cast::<Bucket>()
        }
    }

    /// Bucket `b`, for `b <= mask`, without a bounds check (the probe loop
    /// runs once per piece; a masked index is always in bounds).
    #[inline(always)]
    #[allow(unsafe_code)] // an unchecked index, see the SAFETY comment
    fn bucket(self, b: usize) -> &'t Bucket {
        debug_assert!(b <= self.mask && self.mask < self.buckets.len());
        // SAFETY: the index is masked here by `mask`, and a View is made only
        // by `Table::view`, whose `mask` is `buckets.len() - 1` (`Table::new`:
        // a power of two, at least 2), so `b & mask < buckets.len()`.
        unsafe { self.buckets.get_unchecked(b & self.mask) }
    }
}

/// The vocabulary part of every cache of one encoder: its tokens of at most
/// 16 bytes, each answering its own bytes with its rank.
pub struct Seed {
    pub(super) table: Table,
}

impl Seed {
    /// Builds the seed: cost linear in the vocabulary (a few ms for o200k).
    pub fn new(vocab: &Vocab) -> Seed {
        let short = |t: &[u8]| !t.is_empty() && t.len() <= MID_MAX;
        let n = vocab.tokens().filter(|t| short(t)).count();
        let entries = vocab.tokens().enumerate().filter(|(_, t)| short(t));
        Seed::of(n, entries.map(|(r, t)| (t, r as Rank)))
    }

    /// A seed of `n` `(bytes, id)` entries, each non-empty, at most 16
    /// bytes, each byte string once: pieces answered as that one id.
    pub fn of<'t>(n: usize, entries: impl Iterator<Item = (&'t [u8], Rank)>) -> Seed {
        // at most half full with the seed: room for as many merged pieces
        let mut table = Table::new((2 * n).div_ceil(2).max(512));
        for (t, r) in entries {
            debug_assert!(!t.is_empty() && t.len() <= MID_MAX);
            let (k0, k1) = key16(t, 0, t.len());
            let h = hash(k0, k1, t.len());
            let b = table.home(h);
            table.insert(b, k0, k1, t.len() as u32 | 1 << 8, [r, 0, 0]);
        }
        Seed { table }
    }

    /// Bytes of the seed table (also the fixed table size of each cache).
    pub fn bytes(&self) -> usize {
        self.table.bytes()
    }
}
