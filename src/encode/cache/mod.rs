//! The piece cache: one table answers every piece of at most 16 bytes, whole
//! tokens and merged pieces alike, and a second, hashed table keeps longer
//! pieces. This file is its policy: what is kept, the byte budget, wipes,
//! and which cache a call uses; [`table`] is the table's layout and probe,
//! [`probe`] the batched hot loop that reads it.
//!
//! **Seeded.** A [`Seed`] (built once per encoder, shared) holds every token of
//! at most [`MID_MAX`](crate::vocab::MID_MAX) bytes with its rank, so a piece
//! that is one token (most English pieces) is answered by the same probe as a
//! piece that was merged before; no separate vocabulary lookup comes first.
//!
//! **Misses merge from the table.** A piece of at most 16 bytes that is not
//! in the table is merged with its pair ranks read as token ranks of byte
//! ranges of the piece, from this same table (the seed holds every token of
//! at most 16 bytes), after the vocabulary's pair filter; the vocabulary's
//! table of all token splits would be one more cache miss per pair. Pieces
//! of 17 to [`MAX_PIECE`] bytes are kept in the long-piece table.
//!
//! **Bounded, never frozen.** Each cache has a byte budget ([`budget`]: env
//! `BYTEPAIR_PIECE_CACHE_BYTES`, or [`set_budget`]; default
//! [`DEFAULT_BUDGET`]). The table starts at the seed's size (the seed at most
//! half full) and doubles when over half full, as long as table + arenas
//! stay within the budget (gpt2's 4 MiB table grows to 16 MiB, a small
//! trained vocabulary's from a few KB; o200k's 16 MiB stays): past half load,
//! linear probing's clusters make the pieces added late slow to find. A
//! table that cannot double fills on to 3/4. When it is that full, or the
//! arenas reach the budget, the cache is wiped back to the seed (one copy of
//! the seed table, at the seed's size) and refills with
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

mod pending;
mod probe;
mod table;

use std::cell::RefCell;
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock, Weak};

use hashbrown::HashTable;
use rustc_hash::FxBuildHasher;

use super::{encode_piece_parts, encode_short_by_bytes};
use crate::error::Result;
use crate::vocab::{key16, Vocab};
use crate::Rank;
use crate::SpanSink;
use pending::Pending;
use probe::{Collect, Shifted};
use table::{hash, Table, INLINE, IN_ARENA};

pub use table::Seed;

/// One part of the text of [`PieceCache::encode_parts`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// The stretch `text[a..b]`, to split into pieces.
    Text(usize, usize),
    /// The id of the token that stands for `text[a..b]` (`a < b`).
    Id(usize, usize, Rank),
}

/// What splits a text into pieces for [`PieceCache::encode_text`]: calls
/// `f(start, end)` for each piece in order, the pieces tiling the text (the
/// pre-tokenizer, implemented in [`crate::core_bpe`]; this module does not
/// depend on `pretok`).
pub trait Spans {
    /// Runs `f` on every piece of `text`.
    fn for_each_span<F: SpanSink>(&self, text: &str, f: F) -> Result<()>;
}

/// What a piece cache merges a piece with when the table does not answer
/// it: the rank encoder's vocabulary ([`Vocab`], tiktoken's semantics), or
/// another model whose seed holds exactly the tokens it encodes as
/// themselves (a `tokenizer.json`'s pair-ranked merges,
/// [`crate::pipeline::Model`]). Generic, so the rank encoder's hot loop is
/// compiled for its vocabulary alone.
pub trait PieceModel {
    /// Appends the ids of a piece of at most 16 bytes that is not in the
    /// table. `rank_of(s, e)` is the id the table holds for `piece[s..e]`
    /// when that byte range is one token of the seed, else
    /// [`NONE_RANK`](crate::vocab::NONE_RANK).
    fn merge_short<F: Fn(usize, usize) -> Rank>(
        &self,
        piece: &[u8],
        rank_of: F,
        out: &mut Vec<Rank>,
    );
    /// The id of a piece of more than 16 bytes that is one token answered
    /// without merging, if it is.
    fn whole(&self, piece: &[u8]) -> Option<Rank>;
    /// Appends the ids of a piece of more than 16 bytes ([`Self::whole`]
    /// said no).
    fn merge_long(&self, piece: &[u8], out: &mut Vec<Rank>);
}

impl PieceModel for Vocab {
    #[inline]
    fn merge_short<F: Fn(usize, usize) -> Rank>(
        &self,
        piece: &[u8],
        rank_of: F,
        out: &mut Vec<Rank>,
    ) {
        encode_short_by_bytes(piece, self, rank_of, out);
    }
    #[inline]
    fn whole(&self, piece: &[u8]) -> Option<Rank> {
        self.rank(piece)
    }
    #[inline]
    fn merge_long(&self, piece: &[u8], out: &mut Vec<Rank>) {
        encode_piece_parts(piece, self, out);
    }
}

/// Default byte budget of one cache (table, arenas and long-piece table).
pub const DEFAULT_BUDGET: usize = 32 << 20;
/// Longest piece (bytes) the long-piece table keeps.
pub const MAX_PIECE: usize = 256;
/// Pieces hashed and prefetched before they are probed.
pub const BATCH: usize = 128;
/// Caches kept per thread (one per encoder used on it).
pub const THREAD_CACHES: usize = 4;

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

/// A remembered piece of 17..=[`MAX_PIECE`] bytes: bytes at
/// `keys[koff..koff + klen]`, ids at `vals[voff..voff + vlen]`.
#[derive(Clone, Copy)]
struct Long {
    koff: u32,
    voff: u32,
    klen: u16,
    vlen: u32,
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
    /// The batch of [`probe::Collect`], kept between calls: a text cut
    /// into many segments (by added tokens) sets up one batch per segment,
    /// and filling a new one each time cost more than the segment's pieces.
    batch: Vec<Pending>,
}

/// What a cache holds and how often it was wiped (see [`PieceCache::stats`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheStats {
    /// Bytes held: table, arenas and long-piece table (capacities).
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
            batch: Vec::new(),
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

    /// Room for one more entry of `extra` arena bytes: by doubling a table
    /// over half full when the doubled table fits the budget, as it is while
    /// it is under 3/4 full and the arenas fit, or else by a wipe. False when
    /// not even a wiped cache has room (a budget below the seed table).
    fn make_room(&mut self, seed: &Seed, extra: usize) -> bool {
        if self.table.over_half() && self.bytes_if_grown(extra) + self.table.bytes() <= self.budget
        {
            self.table = self.table.rehashed(2 * self.table.buckets.len());
            return true;
        }
        if !self.full(extra) {
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
    pub fn encode_text<S: Spans, M: PieceModel>(
        &mut self,
        seed: &Arc<Seed>,
        model: &M,
        spans: &S,
        text: &str,
        out: &mut Vec<Rank>,
        mut flushed: impl FnMut(&mut Vec<Rank>),
    ) -> Result<()> {
        self.collect(seed, model, text, out, &mut flushed, |sink| {
            spans.for_each_span(text, sink)
        })
    }

    /// Runs `body` with this cache's batch as a sink over `text` (the cache
    /// refreshed for `seed` first), then flushes what is pending and keeps
    /// the batch for the next call.
    #[inline(always)]
    fn collect<M: PieceModel, G: FnMut(&mut Vec<Rank>)>(
        &mut self,
        seed: &Arc<Seed>,
        model: &M,
        text: &str,
        out: &mut Vec<Rank>,
        flushed: &mut G,
        body: impl FnOnce(&mut Collect<'_, '_, M, G>) -> Result<()>,
    ) -> Result<()> {
        self.refresh(seed);
        let batch = std::mem::take(&mut self.batch);
        let mut sink = Collect::new(self, seed, model, text.as_bytes(), out, flushed, batch);
        let r = body(&mut sink);
        sink.flush();
        self.batch = sink.into_batch();
        r
    }

    /// Encodes stretches of `text` and ids between them, in the order `feed`
    /// gives them ([`Part`]), appending to `out` through one batch: the
    /// pieces of each stretch are `spans`' pieces of that stretch alone (as
    /// [`Self::encode_text`] on it would give), and a stretch of a few pieces
    /// between two added tokens does not cost a batch of its own.
    pub fn encode_parts<S: Spans, M: PieceModel, F>(
        &mut self,
        seed: &Arc<Seed>,
        model: &M,
        spans: &S,
        text: &str,
        out: &mut Vec<Rank>,
        feed: F,
    ) -> Result<()>
    where
        F: FnOnce(&mut dyn FnMut(Part) -> Result<()>) -> Result<()>,
    {
        self.collect(
            seed,
            model,
            text,
            out,
            &mut |_: &mut Vec<Rank>| {},
            |sink| {
                feed(&mut |part| match part {
                    Part::Text(a, b) => {
                        let shifted = Shifted {
                            sink: &mut *sink,
                            by: a,
                        };
                        spans.for_each_span(&text[a..b], shifted)
                    }
                    Part::Id(a, b, id) => {
                        sink.fixed(a, b, id);
                        Ok(())
                    }
                })
            },
        )
    }

    /// A piece of at most 16 bytes that is not in the table: merge it and
    /// remember the result (wiping back to the seed first when full).
    #[cold]
    #[inline(never)]
    fn miss<M: PieceModel>(
        &mut self,
        seed: &Seed,
        model: &M,
        text: &[u8],
        p: &Pending,
        out: &mut Vec<Rank>,
    ) {
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
        model.merge_short(piece, rank_of, out);
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

    /// A piece of more than 16 bytes: a remembered piece, or else a token
    /// or merged (and remembered when at most [`MAX_PIECE`] bytes). Out of
    /// the hit loop's way, like [`Self::miss`].
    #[cold]
    #[inline(never)]
    fn encode_long<M: PieceModel>(
        &mut self,
        seed: &Seed,
        model: &M,
        piece: &[u8],
        out: &mut Vec<Rank>,
    ) {
        // a token or merged: asked of the model only when the long-piece
        // table does not have it (a token's lookup costs as much as this
        // table's, and most long pieces are not tokens)
        let ids = |out: &mut Vec<Rank>| match model.whole(piece) {
            Some(r) => out.push(r),
            None => model.merge_long(piece, out),
        };
        if piece.len() > MAX_PIECE {
            ids(out);
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
        ids(out);
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

/// A lazily built, shared seed: what an encoder keeps (see
/// [`crate::core_bpe::CoreBpe`]).
#[derive(Default)]
pub struct SeedCell(OnceLock<Arc<Seed>>);

impl SeedCell {
    /// The seed, built on first use.
    pub fn get(&self, vocab: &Vocab) -> &Arc<Seed> {
        self.get_or(|| Seed::new(vocab))
    }

    /// The seed, built by `make` on first use.
    pub fn get_or(&self, make: impl FnOnce() -> Seed) -> &Arc<Seed> {
        self.0.get_or_init(|| Arc::new(make()))
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
mod tests;
