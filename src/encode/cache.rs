//! The piece cache: one table answers every piece of at most 16 bytes, whole
//! tokens and merged pieces alike, and a bounded memo keeps longer pieces.
//!
//! **Seeded.** A [`Seed`] (built once per encoder, shared) holds every token of
//! at most [`MID_MAX`] bytes with its rank, so a piece that is one token (most
//! English pieces) is answered by the same probe as a piece that was merged
//! before; no separate vocabulary lookup comes first.
//!
//! **Layout.** 32-byte slots, two per 64-byte bucket (one cache line): the
//! piece's bytes packed in two words (`key16`), up to three ids inline and a
//! word with the length and the id count. A hit reads one line and stores the
//! slot's 16 id bytes into the output unconditionally, advancing by the count
//! ([`PieceCache::encode_text`] reserves room for that). Results of more than
//! three ids live in an arena the slot points to. Linear probing over buckets;
//! nothing is ever removed, only wiped.
//!
//! **Two phases.** Pieces are hashed as the pre-tokenizer yields them and
//! their buckets prefetched; every [`BATCH`] pieces, the batch is probed and
//! emitted, so the cache-line misses of a batch overlap instead of stalling
//! one after the other. The probe-and-emit loop keeps the table and the
//! output cursor in locals; anything else (a miss, a long piece) leaves it
//! for a cold path.
//!
//! **Misses merge from the table.** A piece of at most 16 bytes that is not
//! in the table is merged with its pair ranks read as token ranks of byte
//! ranges of the piece, from this same table (the seed holds every token of
//! at most 16 bytes), after the vocabulary's pair filter; the vocabulary's
//! table of all token splits would be one more cache miss per pair.
//!
//! **Bounded, never frozen.** Each cache has a byte budget ([`budget`]: env
//! `BYTEPAIR_PIECE_CACHE_BYTES`, or [`set_budget`]; default
//! [`DEFAULT_BUDGET`]). The table starts at the seed's size (the seed at most
//! half full) and doubles when 3/4 full, as long as table + arenas stay
//! within the budget (gpt2's 4 MiB table grows to 16 MiB, a small trained
//! vocabulary's from a few KB; o200k's 16 MiB stays). When it cannot double,
//! or the arenas reach the budget, the cache is wiped back to the seed (one
//! copy of the seed table, at the seed's size) and refills with
//! the text being encoded now. So a long-lived process runs as fast as a
//! fresh one: what it saw first does not decide what stays. A budget below
//! the seed table's size leaves the seed alone (nothing is added). Text with
//! no repeats (random base64) pays one wipe per ~100 K new pieces: linear.
//!
//! **Ownership.** A [`PieceCache`] is a plain owned value: a worker thread can
//! keep one across calls ([`crate::core_bpe::CoreBpe::encode_with_cache`]).
//! Calls without one use this thread's caches ([`with_thread_cache`]): up to
//! [`THREAD_CACHES`] per thread, one per encoder, most recent first, dropped
//! with their encoder.

use std::cell::RefCell;
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock, Weak};

use hashbrown::HashTable;
use rustc_hash::FxBuildHasher;

use super::{encode_piece_parts, encode_short_by_bytes};
use crate::error::Result;
use crate::vocab::{key16, key16_window, Vocab, MID_MAX};
use crate::Rank;
use crate::SpanSink;

/// What splits a text into pieces for [`PieceCache::encode_text`]: calls
/// `f(start, end)` for each piece in order, the pieces tiling the text (the
/// pre-tokenizer, implemented in [`crate::core_bpe`]; this module does not
/// depend on `pretok`).
pub trait Spans {
    /// Runs `f` on every piece of `text`.
    fn for_each_span<F: SpanSink>(&self, text: &str, f: F) -> Result<()>;
}

/// Default byte budget of one cache (table, arenas and long-piece memo).
pub const DEFAULT_BUDGET: usize = 32 << 20;
/// Longest piece (bytes) the long-piece memo keeps.
pub const MAX_PIECE: usize = 256;
/// Pieces hashed and prefetched before they are probed.
pub const BATCH: usize = 128;
/// Caches kept per thread (one per encoder used on it).
pub const THREAD_CACHES: usize = 4;
/// Ids stored in a slot.
const INLINE: usize = 3;
/// Words a hit may store past the output's length: a fixed-size copy of an
/// arena result of up to this many ids (Korean words: 4-8 ids), instead of a
/// `memcpy` call per piece.
const SPILL: usize = 8;
/// `n` of a slot whose ids are in the arena (`ids[0]` offset, `ids[1]` count).
const IN_ARENA: u32 = 0xFF;

static BUDGET: AtomicUsize = AtomicUsize::new(0);

/// The byte budget of each piece cache: [`set_budget`]'s value, else env
/// `BYTEPAIR_PIECE_CACHE_BYTES` (an integer), else [`DEFAULT_BUDGET`].
pub fn budget() -> usize {
    match BUDGET.load(Ordering::Relaxed) {
        0 => {
            let b = std::env::var("BYTEPAIR_PIECE_CACHE_BYTES")
                .ok()
                .and_then(|s| s.trim().parse::<usize>().ok())
                .filter(|&b| b > 0)
                .unwrap_or(DEFAULT_BUDGET);
            BUDGET.store(b, Ordering::Relaxed);
            b
        }
        b => b,
    }
}

/// Sets the byte budget of every piece cache (at least 1); caches over it are
/// wiped on their next use.
pub fn set_budget(bytes: usize) {
    BUDGET.store(bytes.max(1), Ordering::Relaxed);
}

/// Bumped by [`clear_all`]: caches wipe back to the seed on their next use.
static EPOCH: AtomicU64 = AtomicU64::new(0);

/// Wipes every thread's caches back to the seed (lazily, on next use). For
/// benchmarks of cold encodes; results never depend on it.
pub fn clear_all() {
    EPOCH.fetch_add(1, Ordering::Relaxed);
}

/// The table's hash of a piece (its key words and length): one multiply,
/// whose high bits pick the bucket ([`Table::home`] takes them; the low bits
/// are never used). Cheaper than the vocabulary's two-word fold, which also
/// serves tables that index by the low bits.
#[inline(always)]
fn hash(k0: u64, k1: u64, len: usize) -> u64 {
    (k0 ^ k1.rotate_left(29) ^ ((len as u64) << 58)).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// Bytes of a bucket (one cache line): the low bits of a bucket's byte
/// offset are free for a piece's length (1..=16) in [`Pending::at`].
const LINE: usize = std::mem::size_of::<Bucket>();
const _: () = assert!(LINE == 64 && MID_MAX < LINE);

/// The home bucket of hash `h` in a table of `mask + 1` buckets whose
/// `shift` is `64 - log2(buckets)`: the hash's high bits (see [`hash`]).
#[inline(always)]
fn home(h: u64, shift: u32, mask: usize) -> usize {
    (h >> shift) as usize & mask
}

#[derive(Clone, Copy, Default)]
#[repr(C)]
struct Slot {
    k0: u64,
    k1: u64,
    /// Up to [`INLINE`] ids, then the meta word `len | n << 8` (0 marks an
    /// empty slot: pieces are never empty). One array, so that a hit copies
    /// it to the output with one 16-byte move.
    tail: [Rank; INLINE + 1],
}

impl Slot {
    #[inline(always)]
    fn meta(&self) -> u32 {
        self.tail[INLINE]
    }

    #[inline(always)]
    fn ids(&self) -> [Rank; INLINE] {
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
struct Bucket([Slot; 2]);

/// A table of buckets with a fixed power-of-two size, backed by
/// transparent huge pages where the OS offers them.
struct Table {
    buckets: Box<[Bucket]>,
    mask: usize,
    shift: u32,
    len: usize,
}

/// Asks the kernel to back `[ptr, ptr + len)` with huge pages (a hint: less
/// TLB pressure on a table of several MB; measured +15% cold by the peer that
/// does it). No-op elsewhere.
#[allow(unsafe_code)] // one madvise call, see the SAFETY comment
fn advise_huge(ptr: *mut u8, len: usize) {
    #[cfg(target_os = "linux")]
    {
        extern "C" {
            fn madvise(addr: *mut std::ffi::c_void, len: usize, advice: i32) -> i32;
        }
        const MADV_HUGEPAGE: i32 = 14;
        let page = 4096usize;
        let start = (ptr as usize) & !(page - 1);
        let end = ptr as usize + len;
        // SAFETY: madvise only changes how the kernel backs pages of this
        // process's own mapping [start, end), which contains the allocation
        // (rounded down to its first page); MADV_HUGEPAGE never changes the
        // contents or validity of memory, and a failure (EINVAL on kernels
        // without THP) is ignored: the hint is optional.
        unsafe {
            madvise(start as *mut std::ffi::c_void, end - start, MADV_HUGEPAGE);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (ptr, len);
}

impl Table {
    /// An empty table of `buckets` buckets (a power of two, at least 2).
    fn new(buckets: usize) -> Table {
        let buckets = buckets.next_power_of_two().max(2);
        let mut v: Vec<Bucket> = Vec::with_capacity(buckets);
        advise_huge(
            v.as_mut_ptr().cast(),
            buckets * std::mem::size_of::<Bucket>(),
        );
        v.resize(buckets, Bucket::default());
        Table {
            buckets: v.into_boxed_slice(),
            mask: buckets - 1,
            shift: 64 - buckets.trailing_zeros(),
            len: 0,
        }
    }

    fn bytes(&self) -> usize {
        self.buckets.len() * std::mem::size_of::<Bucket>()
    }

    fn slots(&self) -> usize {
        self.buckets.len() * 2
    }

    /// At 3/4 of its slots: the most a table is filled to.
    fn is_full(&self) -> bool {
        self.len * 4 >= self.slots() * 3
    }

    #[inline(always)]
    fn home(&self, h: u64) -> usize {
        home(h, self.shift, self.mask)
    }

    /// The same entries in a table of `buckets` buckets (at least as many
    /// as this one's entries need).
    fn rehashed(&self, buckets: usize) -> Table {
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
    fn view(&self) -> View<'_> {
        View {
            buckets: &self.buckets,
            shift: self.shift,
            mask: self.mask,
            line_mask: self.mask * LINE,
        }
    }

    /// Stores a piece known to be absent, in the first free slot from its
    /// home bucket. The caller keeps the table under 3/4 full.
    fn insert(&mut self, b: usize, k0: u64, k1: u64, meta: u32, ids: [Rank; INLINE]) {
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
struct View<'t> {
    buckets: &'t [Bucket],
    shift: u32,
    mask: usize,
    /// `mask * LINE`: masks a byte offset to a bucket's first byte.
    line_mask: usize,
}

impl<'t> View<'t> {
    /// The slot holding the piece with key `(k0, k1)`, `len` bytes and hash
    /// `h`, if any.
    #[inline(always)]
    fn find(self, h: u64, k0: u64, k1: u64, len: u32) -> Option<&'t Slot> {
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
    fn find_pending(self, p: &Pending) -> Option<&'t Slot> {
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
    fn find_pending(self, p: &Pending) -> Option<&'t Slot> {
        let b = (p.at as usize & self.line_mask) / LINE;
        self.find_from(b, p.key[0], p.key[1], (p.at % LINE as u64) as u32)
    }

    /// The byte offset of the home bucket of a piece of `n` bytes with key
    /// `(k0, k1)`; plus `n`, it is the piece's [`Pending::at`].
    #[inline(always)]
    fn home_offset(self, k0: u64, k1: u64, n: usize) -> usize {
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
    table: Table,
}

impl Seed {
    /// Builds the seed: cost linear in the vocabulary (a few ms for o200k).
    pub fn new(vocab: &Vocab) -> Seed {
        let n = vocab
            .tokens()
            .filter(|t| !t.is_empty() && t.len() <= MID_MAX)
            .count();
        // at most half full with the seed: room for as many merged pieces
        let mut table = Table::new((2 * n).div_ceil(2).max(512));
        for (r, t) in vocab.tokens().enumerate() {
            if t.is_empty() || t.len() > MID_MAX {
                continue;
            }
            let (k0, k1) = key16(t, 0, t.len());
            let h = hash(k0, k1, t.len());
            let b = table.home(h);
            table.insert(b, k0, k1, t.len() as u32 | 1 << 8, [r as Rank, 0, 0]);
        }
        Seed { table }
    }

    /// Bytes of the seed table (also the fixed table size of each cache).
    pub fn bytes(&self) -> usize {
        self.table.bytes()
    }
}

/// A remembered piece of 17..=[`MAX_PIECE`] bytes: bytes at
/// `keys[koff..koff + klen]`, ids at `vals[voff..voff + vlen]`.
#[derive(Clone, Copy)]
struct Long {
    koff: u32,
    voff: u32,
    klen: u16,
    vlen: u32,
}

/// Why [`PieceCache::flush`]'s hit loop stopped at a piece: longer than 16
/// bytes (or empty), not in the table, or an arena result (offset, count)
/// longer than one fixed-size copy.
enum Cold {
    Long,
    Miss,
    Arena(usize, usize),
}

/// One pending piece of a batch.
#[derive(Clone, Copy, Default)]
struct Pending {
    start: usize,
    end: usize,
    /// The packed bytes ([`key16`]): one array, so that the hit loop loads
    /// them as one 16-byte vector.
    key: [u64; 2],
    /// The byte offset of the piece's home bucket in the table, with the
    /// piece's length (1..=16) in its low bits (below [`LINE`]); 0 for a
    /// piece the table cannot hold (longer than 16 bytes, or empty). Valid
    /// while the table's size is unchanged: [`PieceCache::flush`] recomputes
    /// it for the rest of the batch when a miss grows or shrinks the table.
    at: u64,
}

/// A piece cache for one encoder: see the module documentation. Owned and
/// `Send`: keep one per worker thread across calls.
pub struct PieceCache {
    /// The seed this cache was built from (weak: an encoder's drop frees
    /// its seed even while threads still hold caches for it).
    seed: Weak<Seed>,
    /// The seed's slot count (a wipe's target).
    seed_len: usize,
    table: Table,
    /// Ids of slots with more than [`INLINE`] ids, and of long pieces.
    vals: Vec<Rank>,
    /// Bytes of long pieces.
    keys: Vec<u8>,
    long: HashTable<Long>,
    budget: usize,
    epoch: u64,
    wipes: u64,
}

/// What a cache holds and how often it was wiped (see [`PieceCache::stats`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheStats {
    /// Bytes held: table, arenas and long-piece memo (capacities).
    pub bytes: usize,
    /// The budget in force.
    pub budget: usize,
    /// Bytes of the table alone (the seed's size, or doubled since within
    /// the budget): the floor of `bytes`.
    pub table_bytes: usize,
    /// Slots in use in the table, seed included.
    pub entries: usize,
    /// Slots used by the seed.
    pub seed_entries: usize,
    /// Long pieces remembered.
    pub long_entries: usize,
    /// Times the cache was wiped back to the seed.
    pub wipes: u64,
}

impl PieceCache {
    /// A cache holding the seed only.
    pub fn new(seed: &Arc<Seed>) -> PieceCache {
        let mut table = Table::new(seed.table.buckets.len());
        table.buckets.copy_from_slice(&seed.table.buckets);
        table.len = seed.table.len;
        PieceCache {
            seed: Arc::downgrade(seed),
            seed_len: seed.table.len,
            table,
            vals: Vec::new(),
            keys: Vec::new(),
            long: HashTable::new(),
            budget: budget(),
            epoch: EPOCH.load(Ordering::Relaxed),
            wipes: 0,
        }
    }

    /// Whether this cache was built from `seed`.
    pub fn is_for(&self, seed: &Arc<Seed>) -> bool {
        std::ptr::eq(self.seed.as_ptr(), Arc::as_ptr(seed))
    }

    /// Sizes and counters.
    pub fn stats(&self) -> CacheStats {
        CacheStats {
            bytes: self.bytes(),
            budget: self.budget,
            table_bytes: self.table.bytes(),
            entries: self.table.len,
            seed_entries: self.seed_len,
            long_entries: self.long.len(),
            wipes: self.wipes,
        }
    }

    fn bytes(&self) -> usize {
        self.table.bytes()
            + self.vals.capacity() * 4
            + self.keys.capacity()
            + self.long.capacity() * (std::mem::size_of::<Long>() + 1)
    }

    /// Back to the seed alone, at the seed's table size (keeping the
    /// allocations when the table never grew).
    fn wipe(&mut self, seed: &Seed) {
        if self.table.buckets.len() != seed.table.buckets.len() {
            self.table = Table::new(seed.table.buckets.len());
        }
        self.table.buckets.copy_from_slice(&seed.table.buckets);
        self.table.len = seed.table.len;
        self.vals.clear();
        self.keys.clear();
        self.long.clear();
        self.wipes += 1;
    }

    /// Picks up [`set_budget`] and [`clear_all`] since the last call.
    fn refresh(&mut self, seed: &Arc<Seed>) {
        if !self.is_for(seed) {
            // an owned cache handed to another encoder: start over for it
            *self = PieceCache::new(seed);
        }
        let epoch = EPOCH.load(Ordering::Relaxed);
        let b = budget();
        if epoch != self.epoch {
            self.epoch = epoch;
            self.wipe(seed);
        }
        if b != self.budget {
            self.budget = b;
            if self.bytes() > b {
                self.wipe(seed);
                // drop the arenas' memory too, so the new bound holds now
                self.vals = Vec::new();
                self.keys = Vec::new();
                self.long = HashTable::new();
            }
        }
    }

    /// True when one more entry of `extra` arena bytes would break a bound.
    #[inline]
    fn full(&self, extra: usize) -> bool {
        self.table.is_full() || self.bytes_if_grown(extra) > self.budget
    }

    /// Room for one more entry of `extra` arena bytes: as it is, or by
    /// doubling the table when that is what is full and the doubled table
    /// fits the budget, or else by a wipe. False when not even a wiped cache
    /// has room (a budget below the seed table).
    fn make_room(&mut self, seed: &Seed, extra: usize) -> bool {
        if !self.full(extra) {
            return true;
        }
        if self.table.is_full() && self.bytes_if_grown(extra) + self.table.bytes() <= self.budget {
            self.table = self.table.rehashed(2 * self.table.buckets.len());
            return true;
        }
        if seed.table.is_full() || seed.table.bytes() + extra > self.budget {
            return false;
        }
        self.wipe(seed);
        true
    }

    /// The bytes after adding `extra` bytes to the arenas, counting the
    /// doubling a `Vec` or table would do.
    fn bytes_if_grown(&self, extra: usize) -> usize {
        let grow = |len: usize, cap: usize, add: usize| {
            if len + add <= cap {
                cap
            } else {
                (len + add).max(2 * cap)
            }
        };
        self.table.bytes()
            + grow(self.vals.len() * 4, self.vals.capacity() * 4, extra)
            + grow(self.keys.len(), self.keys.capacity(), extra)
            + grow(self.long.len(), self.long.capacity(), 1) * (std::mem::size_of::<Long>() + 1) * 8
                / 7
    }

    /// Encodes `text`, split into pieces by `spans`, appending the ids to
    /// `out`; after each batch `flushed(out)` runs (a counter drains `out`
    /// there). `seed` is the encoder's (a cache built for another encoder is
    /// rebuilt for this one, so ids never come from the wrong vocabulary).
    #[inline]
    pub fn encode_text<S: Spans>(
        &mut self,
        seed: &Arc<Seed>,
        vocab: &Vocab,
        spans: &S,
        text: &str,
        out: &mut Vec<Rank>,
        mut flushed: impl FnMut(&mut Vec<Rank>),
    ) -> Result<()> {
        self.refresh(seed);
        let mut sink = Collect::new(self, seed, vocab, text.as_bytes(), out, &mut flushed);
        let r = spans.for_each_span(text, &mut sink);
        sink.flush();
        r
    }

    /// Phase two: probe and emit every pending piece, in order. Not inlined:
    /// phase one ([`Collect`]) is inlined into every call site of the
    /// scanners, and stays small there by calling this.
    ///
    /// The hits run in an inner loop that keeps the table and the output's
    /// cursor in locals; a piece that needs `&mut self` (a miss, a long
    /// piece, an arena result too long for one fixed-size copy) leaves it
    /// with what the probe found ([`Cold`]), is handled without a second
    /// probe, and the loop resumes with fresh locals (the table may have
    /// grown or been wiped).
    #[inline(never)]
    #[allow(unsafe_code)] // the unconditional stores, see the SAFETY comments
    fn flush(
        &mut self,
        seed: &Seed,
        vocab: &Vocab,
        text: &[u8],
        batch: &mut [Pending],
        out: &mut Vec<Rank>,
    ) {
        let (Some(first), Some(last)) = (batch.first(), batch.last()) else {
            return;
        };
        let (first_start, last_end) = (first.start, last.end);
        // phase one and a half: pack, hash and prefetch every piece of the
        // batch in one tight loop, so its cache-line misses overlap. Pieces
        // come in order: when the last starts 16 bytes or more before the
        // text's end, every piece's 16-byte window is inside the text and the
        // loop reads it without a bounds check (every batch but a text's last)
        let view = self.table.view();
        if last
            .start
            .checked_add(MID_MAX)
            .is_some_and(|e| e <= text.len())
        {
            pack_batch::<true>(text, batch, view);
        } else {
            pack_batch::<false>(text, batch, view);
        }
        // a piece of n bytes has at most n ids (every token has a byte), and a
        // hit stores up to SPILL words: room for the whole batch plus one store.
        // Every path below appends at most one id per byte of its piece, so
        // SPILL spare words stay reserved until the end of the batch.
        out.reserve(last_end - first_start + SPILL);
        let mut i = 0;
        while i < batch.len() {
            let (table, vals) = (self.table.view(), &self.vals[..]);
            let mut len = out.len();
            let dst = out.as_mut_ptr();
            // pieces answered by the table, until one that is not
            let mut cold = Cold::Long;
            while let Some(p) = batch.get(i) {
                // the length tag: 0 for a piece the table cannot hold
                if p.at % LINE as u64 == 0 {
                    cold = Cold::Long;
                    break;
                }
                let Some(s) = table.find_pending(p) else {
                    cold = Cold::Miss;
                    break;
                };
                let k = (s.meta() >> 8) as usize;
                if k != IN_ARENA as usize {
                    debug_assert!(out.capacity() - len >= SPILL);
                    // SAFETY: `out` has room for INLINE + 1 <= SPILL more
                    // words past `len`: the reserve above covers every piece
                    // of the batch at one id per byte plus SPILL, and each
                    // piece advances `len` by at most its byte length (a
                    // token has at least one byte), so SPILL spare words
                    // remain. The four words written are plain integers read
                    // from the slot (ids then meta); the final set_len
                    // exposes only the `k` ids of each piece.
                    unsafe {
                        dst.add(len)
                            .cast::<[Rank; INLINE + 1]>()
                            .write_unaligned(s.tail);
                    }
                    len += k;
                } else {
                    let (at, k) = (s.tail[0] as usize, s.tail[1] as usize);
                    let Some(src) = vals.get(at..at + SPILL).filter(|_| k <= SPILL) else {
                        cold = Cold::Arena(at, k);
                        break;
                    };
                    debug_assert!(out.capacity() - len >= SPILL);
                    // SAFETY: as for the inline ids, `out` has room for SPILL
                    // more words (the batch reservation keeps SPILL spare
                    // beyond one id per byte); `src` is SPILL initialised
                    // words of the arena, which `out` (a different vector)
                    // does not overlap; only this piece's `k` ids (k <= its
                    // bytes, so the invariant holds) are exposed.
                    unsafe {
                        std::ptr::copy_nonoverlapping(src.as_ptr(), dst.add(len), SPILL);
                    }
                    len += k;
                }
                i += 1;
            }
            // SAFETY: every word below `len` was written above (each hit
            // wrote at least its `k` ids at its cursor) or was already part
            // of `out`, and `len <= capacity` (the reservation).
            unsafe { out.set_len(len) };
            let Some(&p) = batch.get(i) else { break };
            // the piece the loop stopped at, by what it found
            let buckets = self.table.buckets.len();
            match cold {
                Cold::Long => self.encode_long(seed, vocab, &text[p.start..p.end], out),
                Cold::Miss => self.miss(seed, vocab, text, &p, out),
                Cold::Arena(at, k) => out.extend_from_slice(&self.vals[at..][..k]),
            }
            i += 1;
            if self.table.buckets.len() != buckets {
                // grown or wiped to another size: the homes moved
                let t = self.table.view();
                for q in batch.iter_mut().skip(i) {
                    let n = (q.at % LINE as u64) as usize;
                    if n != 0 {
                        q.at = (t.home_offset(q.key[0], q.key[1], n) + n) as u64;
                    }
                }
            }
        }
    }

    /// A piece of at most 16 bytes that is not in the table: merge it and
    /// remember the result (wiping back to the seed first when full).
    #[cold]
    #[inline(never)]
    fn miss(&mut self, seed: &Seed, vocab: &Vocab, text: &[u8], p: &Pending, out: &mut Vec<Rank>) {
        let piece = &text[p.start..p.end];
        let at = out.len();
        let table = self.table.view();
        // pair ranks from this table: it holds every token of <= 16 bytes
        // (the seed), and an entry of one id is exactly a token (a merged
        // piece of one id would be a token, hence a seed entry)
        let rank_of = |s: usize, e: usize| {
            let (k0, k1) = key16(text, p.start + s, p.start + e);
            match table.find(hash(k0, k1, e - s), k0, k1, (e - s) as u32) {
                Some(slot) if slot.meta() >> 8 == 1 => slot.tail[0],
                _ => crate::vocab::NONE_RANK,
            }
        };
        encode_short_by_bytes(piece, vocab, rank_of, out);
        let k = out.len() - at;
        let extra = if k > INLINE { 4 * k } else { 0 };
        if !self.make_room(seed, extra) {
            return; // even a wiped cache has no room: keep the seed as is
        }
        let (ids, n) = if k <= INLINE {
            let mut ids = [0; INLINE];
            ids[..k].copy_from_slice(&out[at..]);
            (ids, k as u32)
        } else {
            let off = self.vals.len() as Rank;
            self.vals.extend_from_slice(&out[at..]);
            ([off, k as Rank, 0], IN_ARENA)
        };
        let home = self.table.home(hash(p.key[0], p.key[1], piece.len()));
        self.table
            .insert(home, p.key[0], p.key[1], piece.len() as u32 | n << 8, ids);
    }

    /// A piece of more than 16 bytes: a token, a remembered piece, or merged
    /// (and remembered when at most [`MAX_PIECE`] bytes). Out of the hit
    /// loop's way, like [`Self::miss`].
    #[cold]
    #[inline(never)]
    fn encode_long(&mut self, seed: &Seed, vocab: &Vocab, piece: &[u8], out: &mut Vec<Rank>) {
        if let Some(r) = vocab.rank(piece) {
            out.push(r);
            return;
        }
        if piece.len() > MAX_PIECE {
            encode_piece_parts(piece, vocab, out);
            return;
        }
        let h = FxBuildHasher.hash_one(piece);
        let (keys, vals) = (&self.keys, &self.vals);
        if let Some(e) = self.long.find(h, |e| {
            e.klen as usize == piece.len() && &keys[e.koff as usize..][..e.klen as usize] == piece
        }) {
            out.extend_from_slice(&vals[e.voff as usize..][..e.vlen as usize]);
            return;
        }
        let at = out.len();
        encode_piece_parts(piece, vocab, out);
        let k = out.len() - at;
        let extra = piece.len() + 4 * k;
        if !self.make_room(seed, extra) {
            return;
        }
        let e = Long {
            koff: self.keys.len() as u32,
            voff: self.vals.len() as u32,
            klen: piece.len() as u16,
            vlen: k as u32,
        };
        self.keys.extend_from_slice(piece);
        self.vals.extend_from_slice(&out[at..]);
        let keys = &self.keys;
        self.long.insert_unique(h, e, |e| {
            FxBuildHasher.hash_one(&keys[e.koff as usize..][..e.klen as usize])
        });
    }
}

/// Packs, hashes, tags and prefetches each piece of a batch (see
/// [`PieceCache::flush`]). `WINDOWS`: every piece starts at least 16 bytes
/// before the end of `text` (the caller checked the last one; pieces come
/// in order), so each piece's 16-byte window is read without a bounds check.
#[inline(always)]
#[allow(unsafe_code)] // the unchecked window read, see the SAFETY comment
fn pack_batch<const WINDOWS: bool>(text: &[u8], batch: &mut [Pending], t: View<'_>) {
    let base = t.buckets.as_ptr();
    for p in batch.iter_mut() {
        let n = p.end - p.start;
        if n.wrapping_sub(1) < MID_MAX {
            let (k0, k1) = if WINDOWS {
                debug_assert!(p.start + MID_MAX <= text.len());
                // SAFETY: with WINDOWS the caller checked that the batch's
                // last piece starts at least MID_MAX bytes before the end of
                // `text`; pieces come in order, so `p.start + MID_MAX <=
                // text.len()` and the unaligned 16-byte read is in bounds.
                let w = unsafe {
                    text.as_ptr()
                        .add(p.start)
                        .cast::<[u8; MID_MAX]>()
                        .read_unaligned()
                };
                key16_window(w, n)
            } else {
                key16(text, p.start, p.end)
            };
            let off = t.home_offset(k0, k1, n);
            prefetch(base.cast::<u8>().wrapping_add(off).cast());
            (p.key, p.at) = ([k0, k1], (off + n) as u64);
        } else {
            p.at = 0;
        }
    }
}

/// Phase one of [`PieceCache::encode_text`] as the pre-tokenizer's sink:
/// each piece is packed, hashed and its bucket prefetched into a batch held
/// in place; every [`BATCH`] pieces the batch is probed and emitted. The
/// table's base, shift and mask are copied here (and again after each
/// flush, which may grow or wipe the table), so the step inlined into the
/// scanners reads no field behind the cache.
struct Collect<'c, 'a, G: FnMut(&mut Vec<Rank>)> {
    cache: &'c mut PieceCache,
    seed: &'a Seed,
    vocab: &'a Vocab,
    text: &'a [u8],
    out: &'c mut Vec<Rank>,
    flushed: &'c mut G,
    len: usize,
    /// [`BATCH`] pieces, plus room for one block's run past it.
    batch: [Pending; BATCH + 64],
}

impl<'c, 'a, G: FnMut(&mut Vec<Rank>)> Collect<'c, 'a, G> {
    fn new(
        cache: &'c mut PieceCache,
        seed: &'a Seed,
        vocab: &'a Vocab,
        text: &'a [u8],
        out: &'c mut Vec<Rank>,
        flushed: &'c mut G,
    ) -> Self {
        Collect {
            cache,
            seed,
            vocab,
            text,
            out,
            flushed,
            len: 0,
            batch: [Pending::default(); BATCH + 64],
        }
    }

    /// Probes and emits the pending pieces, then re-reads the table.
    #[inline(never)]
    fn flush(&mut self) {
        let batch = &mut self.batch[..self.len.min(BATCH + 64)];
        self.cache
            .flush(self.seed, self.vocab, self.text, batch, self.out);
        self.len = 0;
        (self.flushed)(self.out);
    }
}

impl<G: FnMut(&mut Vec<Rank>)> SpanSink for &mut Collect<'_, '_, G> {
    #[inline(always)]
    fn span(&mut self, start: usize, end: usize) {
        if let Some(slot) = self.batch.get_mut(self.len) {
            slot.start = start;
            slot.end = end;
        }
        self.len += 1;
        if self.len >= BATCH {
            Collect::flush(self);
        }
    }

    #[inline(always)]
    fn run(&mut self, mut start: usize, base: usize, mut ends: u64) -> usize {
        // room for a whole block of pieces past BATCH (see `batch`'s length)
        let mut len = self.len;
        while ends != 0 {
            let end = base + ends.trailing_zeros() as usize;
            if let Some(slot) = self.batch.get_mut(len) {
                slot.start = start;
                slot.end = end;
            }
            len += 1;
            start = end;
            ends &= ends - 1;
        }
        self.len = len;
        if len >= BATCH {
            Collect::flush(self);
        }
        start
    }
}

#[inline(always)]
#[allow(unsafe_code)] // a prefetch hint, see the SAFETY comment
fn prefetch(b: *const Bucket) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching is a hint with no effect on memory contents, and it
    // never faults, whatever the address (callers pass a bucket of the live
    // table).
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(b.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = b;
}

/// A lazily built, shared seed: what an encoder keeps (see
/// [`crate::core_bpe::CoreBpe`]).
#[derive(Default)]
pub struct SeedCell(OnceLock<Arc<Seed>>);

impl SeedCell {
    /// The seed, built on first use.
    pub fn get(&self, vocab: &Vocab) -> &Arc<Seed> {
        self.0.get_or_init(|| Arc::new(Seed::new(vocab)))
    }
}

impl std::fmt::Debug for SeedCell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SeedCell")
    }
}

impl Clone for SeedCell {
    fn clone(&self) -> Self {
        let c = SeedCell::default();
        if let Some(s) = self.0.get() {
            let _ = c.0.set(s.clone());
        }
        c
    }
}

/// This thread's caches: most recently used first, each with a weak link to
/// its encoder's seed so a dropped encoder's cache is freed.
struct ThreadCaches(Vec<(Weak<Seed>, PieceCache)>);

thread_local! {
    static CACHES: RefCell<ThreadCaches> = const { RefCell::new(ThreadCaches(Vec::new())) };
}

/// Runs `f` with this thread's cache for `seed` (created, seeded, on first
/// use). If the thread's caches are already borrowed (cannot happen: encoding
/// never calls back into encoding), `f` gets a fresh cache.
pub fn with_thread_cache<R>(seed: &Arc<Seed>, f: impl FnOnce(&mut PieceCache) -> R) -> R {
    CACHES.with(|cell| {
        let Ok(mut caches) = cell.try_borrow_mut() else {
            return f(&mut PieceCache::new(seed));
        };
        let list = &mut caches.0;
        list.retain(|(w, _)| w.strong_count() > 0);
        let i = match list.iter().position(|(_, c)| c.is_for(seed)) {
            Some(i) => i,
            None => {
                if list.len() >= THREAD_CACHES {
                    list.pop();
                }
                list.push((Arc::downgrade(seed), PieceCache::new(seed)));
                list.len() - 1
            }
        };
        if i != 0 {
            list[..=i].rotate_right(1);
        }
        f(&mut list[0].1)
    })
}

/// Stats of this thread's cache for `seed`, if it has one.
pub fn thread_cache_stats(seed: &Arc<Seed>) -> Option<CacheStats> {
    CACHES.with(|cell| {
        let caches = cell.try_borrow().ok()?;
        caches
            .0
            .iter()
            .find(|(_, c)| c.is_for(seed))
            .map(|(_, c)| c.stats())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::encode_piece;

    fn vocab() -> Vocab {
        let mut v: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        for t in [
            &b"ab"[..],
            b"abc",
            b"bc",
            b"cd",
            b"abcd",
            b"0123456789abcdef",
            b"xy",
            b"efab",
        ] {
            v.push(t.to_vec());
        }
        Vocab::new(v).unwrap()
    }

    /// Pieces of `cut` bytes (ASCII test texts).
    struct Every(usize);

    impl Spans for Every {
        fn for_each_span<F: SpanSink>(&self, text: &str, mut f: F) -> Result<()> {
            for s in (0..text.len()).step_by(self.0) {
                f.span(s, (s + self.0).min(text.len()));
            }
            Ok(())
        }
    }

    fn run(
        cache: &mut PieceCache,
        seed: &Arc<Seed>,
        v: &Vocab,
        text: &str,
        cut: usize,
    ) -> Vec<Rank> {
        let mut out = Vec::new();
        cache
            .encode_text(seed, v, &Every(cut), text, &mut out, |_| {})
            .unwrap();
        out
    }

    fn want(v: &Vocab, text: &str, cut: usize) -> Vec<Rank> {
        let mut out = Vec::new();
        Every(cut)
            .for_each_span(text, |s, e| {
                encode_piece(&text.as_bytes()[s..e], v, &mut out)
            })
            .unwrap();
        out
    }

    fn random_text(n: usize, alphabet: &[u8], mut x: u64) -> String {
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                alphabet[(x % alphabet.len() as u64) as usize] as char
            })
            .collect()
    }

    #[test]
    fn same_ids_as_merging_hit_or_miss_and_after_wipes() {
        let v = vocab();
        let seed = Arc::new(Seed::new(&v));
        let mut c = PieceCache::new(&seed);
        let text = random_text(20_000, b"abcdxy0123456789ef\0", 0x2545_f491_4f6c_dd1d);
        for cut in [1, 2, 3, 5, 8, 16, 17, 40, 300] {
            assert_eq!(
                run(&mut c, &seed, &v, &text, cut),
                want(&v, &text, cut),
                "cut {cut}"
            );
            assert_eq!(
                run(&mut c, &seed, &v, &text, cut),
                want(&v, &text, cut),
                "cut {cut}, warm"
            );
        }
        c.wipe(&seed);
        assert_eq!(c.stats().entries, c.stats().seed_entries);
        assert_eq!(run(&mut c, &seed, &v, &text, 7), want(&v, &text, 7));
    }

    /// No piece twice in `c`'s table: a probe that starts at a stale home
    /// misses and stores its piece again.
    fn assert_each_piece_once(c: &PieceCache) {
        let mut seen = std::collections::HashSet::new();
        for slot in c.table.buckets.iter().flat_map(|b| b.0.iter()) {
            if slot.meta() != 0 {
                assert!(
                    seen.insert((slot.k0, slot.k1, slot.meta() & 0xFF)),
                    "a piece twice in the table"
                );
            }
        }
    }

    #[test]
    fn the_table_doubles_within_the_budget_then_wipes_and_ids_stay() {
        let v = vocab();
        let seed = Arc::new(Seed::new(&v));
        let mut c = PieceCache::new(&seed);
        // the budget is process-wide (a cache reads it on every call): set
        // for this test, restored at its end; other tests' ids do not depend
        // on it
        let old = budget();
        let b = 4 * seed.bytes() + (1 << 20);
        set_budget(b);
        let text = random_text(
            200_000,
            b"abcdefghijklmnopqrstuvwxyz",
            0x9e37_79b9_7f4a_7c15,
        );
        let mut most = 0;
        for cut in [6, 12, 30, 100] {
            let got = run(&mut c, &seed, &v, &text, cut);
            let s = c.stats();
            most = most.max(s.table_bytes);
            assert_eq!(got, want(&v, &text, cut));
            assert!(s.bytes <= s.budget, "{s:?}");
            assert_each_piece_once(&c);
        }
        // new pieces each followed by one seen before: when a miss doubles
        // the table mid-batch, the batch's later pieces must be probed at
        // their new homes, or the seen piece misses and is stored twice
        let mut c = PieceCache::new(&seed);
        let fresh = random_text(
            120_000,
            b"abcdefghijklmnopqrstuvwxyz",
            0x2545_f491_4f6c_dd1d,
        );
        let text: String = fresh
            .as_bytes()
            .chunks(6)
            .flat_map(|w| [std::str::from_utf8(w).unwrap_or(""), "qwerty"])
            .collect();
        assert_eq!(run(&mut c, &seed, &v, &text, 6), want(&v, &text, 6));
        assert!(c.stats().table_bytes > seed.bytes(), "the table never grew");
        assert_each_piece_once(&c);
        let wipes = c.stats().wipes;
        set_budget(old);
        // grew by doubling, within the budget, and was wiped once it could not
        assert!(most >= 2 * seed.bytes(), "{most}");
        assert!(
            most <= b && (most / seed.bytes()).is_power_of_two(),
            "{most}"
        );
        assert!(wipes > 0);
    }

    #[test]
    fn a_cache_follows_the_encoder_it_is_used_with() {
        let v1 = vocab();
        let v2 = Vocab::new((0..=255u8).map(|b| vec![b]).collect()).unwrap();
        let (s1, s2) = (Arc::new(Seed::new(&v1)), Arc::new(Seed::new(&v2)));
        let mut c = PieceCache::new(&s1);
        assert_eq!(run(&mut c, &s1, &v1, "abcdab", 3), want(&v1, "abcdab", 3));
        assert_eq!(run(&mut c, &s2, &v2, "abcdab", 3), want(&v2, "abcdab", 3));
    }
}
