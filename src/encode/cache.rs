//! A per-thread memo of pieces that are not single tokens.
//!
//! Measured on 2 MB excerpts (release build): 52% of Korean pieces under
//! o200k_base are not one token, but only 15% of those are distinct, and 68%
//! of gpt2 pieces on multilingual text are not one token with 16% distinct.
//! Remembering their ranks skips the merge loop for ~85% of them. Whole-token
//! pieces are answered by the vocabulary lookup before the memo is consulted,
//! so English text pays nothing.
//!
//! Pieces of up to 16 bytes (most of them: a Korean word of 1-5 syllables, a
//! name) are kept with their bytes packed in two integers and up to
//! [`SMALL_IDS`] ids inline, so a hit compares two words and reads one entry,
//! with no hashing of a byte string and no second memory access; longer pieces,
//! and short ones with more ids (their small entry points there), keep their
//! bytes and ids in arenas.
//!
//! The memo is thread-local (no locking in `encode_batch`), tagged with the
//! encoder that filled it, and bounded: it stops growing at [`MAX_ENTRIES`]
//! entries or [`MAX_ARENA_BYTES`] of arena, and only holds pieces up to
//! [`MAX_PIECE`] bytes, so it stays under ~10 MB per thread. Clearing it when
//! full was tried: on text without repeats (random base64) the refills made the
//! cost per byte grow 11x from 10 KB to 10 MB.
//!
//! Pieces of 65-256 bytes are remembered too (the limit was 64): ASCII-art
//! table borders and separator lines (`+-----+---…`, 85-125 bytes) are 4% of
//! the Python docs corpus, repeat dozens of times, and cost the O(n·m) scan
//! each time; they took ~6% of a warm encode of that corpus.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};

use std::hash::BuildHasher;

use hashbrown::HashTable;
use rustc_hash::FxBuildHasher;

#[cfg(doc)]
use super::merge::encode_piece;
use super::merge::encode_piece_parts;
use crate::vocab::{hash16, key16, Vocab, MID_MAX};
use crate::Rank;

/// Entries kept per thread; then the memo stops growing.
pub const MAX_ENTRIES: usize = 1 << 15;
/// Longest piece (bytes) worth remembering.
pub const MAX_PIECE: usize = 256;
/// Bytes of arena (piece bytes plus 4 per id) kept per thread; then pieces
/// that need the arena are no longer added.
pub const MAX_ARENA_BYTES: usize = 8 << 20;

/// A fresh owner id for each encoder, so one thread's memo is never read
/// with another vocabulary.
pub fn next_owner() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// Bumped by [`clear_all`]; a memo filled under an older epoch is dropped.
static EPOCH: AtomicU64 = AtomicU64::new(0);

/// Empties every thread's memo (lazily, on each thread's next use). Used by
/// benchmarks to time cold encodes; never needed for correctness.
pub fn clear_all() {
    EPOCH.fetch_add(1, Ordering::Relaxed);
}

/// Ids stored inline for a piece of at most `MID_MAX` (16) bytes.
pub const SMALL_IDS: usize = 5;

/// `Small::n` of a piece whose ids (more than [`SMALL_IDS`]) are in the arena.
const IN_ARENA: u8 = u8::MAX;

/// A remembered piece of at most 16 bytes: bytes packed little-endian and
/// zero-padded into `k0`, `k1`; its `n` ids inline, or [`IN_ARENA`].
#[derive(Clone, Copy)]
struct Small {
    k0: u64,
    k1: u64,
    len: u8,
    n: u8,
    ids: [Rank; SMALL_IDS],
}

/// One remembered piece: its bytes at `keys[koff..koff + klen]` and its ranks
/// at `vals[voff..voff + vlen]` (arenas: no allocation per entry).
#[derive(Clone, Copy)]
struct Entry {
    koff: u32,
    voff: u32,
    klen: u16,
    vlen: u16,
}

#[derive(Default)]
struct Memo {
    owner: u64,
    epoch: u64,
    keys: Vec<u8>,
    vals: Vec<Rank>,
    table: HashTable<Entry>,
    small: HashTable<Small>,
}

impl Memo {
    fn clear(&mut self) {
        self.keys.clear();
        self.vals.clear();
        self.table.clear();
        self.small.clear();
    }

    fn is_full(&self) -> bool {
        self.table.len() + self.small.len() >= MAX_ENTRIES
    }

    /// True when no more pieces may go to the arenas.
    fn arena_full(&self) -> bool {
        self.is_full() || self.keys.len() + 4 * self.vals.len() >= MAX_ARENA_BYTES
    }

    /// Encodes `text[start..end]` (at most 16 bytes, not a token) through the
    /// small memo and appends its ids to `out`. A piece with more than
    /// [`SMALL_IDS`] ids keeps them in the arena memo, and its small entry
    /// says so (`n == IN_ARENA`), so every piece is merged at most once and
    /// looked up with one probe in the common case.
    #[inline]
    fn encode_small(
        &mut self,
        text: &[u8],
        start: usize,
        end: usize,
        vocab: &Vocab,
        out: &mut Vec<Rank>,
    ) {
        let (k0, k1) = key16(text, start, end);
        let len = (end - start) as u8;
        let h = hash16(k0, k1, len as usize);
        let piece = &text[start..end];
        if let Some(e) = self
            .small
            .find(h, |e| e.k0 == k0 && e.k1 == k1 && e.len == len)
        {
            if e.n != IN_ARENA {
                out.extend_from_slice(&e.ids[..e.n as usize]);
                return;
            }
            if let Some(ids) = self.get(FxBuildHasher.hash_one(piece), piece) {
                out.extend_from_slice(ids);
                return;
            }
        }
        let at = out.len();
        encode_piece_parts(piece, vocab, out);
        if self.is_full() {
            return;
        }
        let got = &out[at..];
        let mut ids = [0; SMALL_IDS];
        let n = if got.len() <= SMALL_IDS {
            ids[..got.len()].copy_from_slice(got);
            got.len() as u8
        } else if self.arena_full() {
            return;
        } else {
            self.insert(FxBuildHasher.hash_one(piece), piece, got);
            IN_ARENA
        };
        let e = Small {
            k0,
            k1,
            len,
            n,
            ids,
        };
        self.small
            .insert_unique(h, e, |e| hash16(e.k0, e.k1, e.len as usize));
    }

    #[inline]
    fn get(&self, h: u64, piece: &[u8]) -> Option<&[Rank]> {
        let keys = &self.keys;
        self.table
            .find(h, |e| {
                e.klen as usize == piece.len()
                    && &keys[e.koff as usize..e.koff as usize + e.klen as usize] == piece
            })
            .map(|e| &self.vals[e.voff as usize..e.voff as usize + e.vlen as usize])
    }

    fn insert(&mut self, h: u64, piece: &[u8], ranks: &[Rank]) {
        let e = Entry {
            koff: self.keys.len() as u32,
            voff: self.vals.len() as u32,
            klen: piece.len() as u16,
            vlen: ranks.len() as u16,
        };
        self.keys.extend_from_slice(piece);
        self.vals.extend_from_slice(ranks);
        let keys = &self.keys;
        self.table.insert_unique(h, e, |e| {
            FxBuildHasher.hash_one(&keys[e.koff as usize..e.koff as usize + e.klen as usize])
        });
    }
}

thread_local! {
    static MEMO: RefCell<Memo> = RefCell::new(Memo::default());
}

/// Encodes pieces through this thread's memo (see [`with_memo`]). A concrete
/// type rather than a `dyn FnMut`, so the per-piece call (one per piece of the
/// text) is inlined into the pre-tokenizer's loop.
pub struct PieceEncoder<'a> {
    vocab: &'a Vocab,
    /// `None` only if the memo was already borrowed on this thread (cannot
    /// happen: encoding never calls back into encoding); then no memo is used.
    memo: Option<&'a mut Memo>,
}

impl PieceEncoder<'_> {
    /// Appends the ranks of `text[start..end]` to `out`: exactly what
    /// [`encode_piece`] gives (the memo only stores what it returned).
    #[inline(always)]
    pub fn encode(&mut self, text: &[u8], start: usize, end: usize, out: &mut Vec<Rank>) {
        let vocab = self.vocab;
        if let Some(r) = vocab.rank_at(text, start, end) {
            out.push(r);
            return;
        }
        let piece = &text[start..end];
        let Some(memo) = self.memo.as_deref_mut() else {
            encode_piece_parts(piece, vocab, out);
            return;
        };
        if piece.len() <= MID_MAX {
            memo.encode_small(text, start, end, vocab, out);
            return;
        }
        if piece.len() > MAX_PIECE {
            encode_piece_parts(piece, vocab, out);
            return;
        }
        let h = FxBuildHasher.hash_one(piece);
        if let Some(ids) = memo.get(h, piece) {
            out.extend_from_slice(ids);
            return;
        }
        let at = out.len();
        encode_piece_parts(piece, vocab, out);
        // when full, stop adding rather than clear: the pieces met first are
        // the frequent ones in natural text, and text with no repeats (random
        // base64, random syllables) then stops paying for inserts
        if !memo.arena_full() {
            memo.insert(h, piece, &out[at..]);
        }
    }
}

/// Runs `f` with a [`PieceEncoder`] that uses this thread's memo for `owner`.
pub fn with_memo<R>(owner: u64, vocab: &Vocab, f: impl FnOnce(&mut PieceEncoder<'_>) -> R) -> R {
    MEMO.with(|cell| {
        let Ok(mut memo) = cell.try_borrow_mut() else {
            return f(&mut PieceEncoder { vocab, memo: None });
        };
        let epoch = EPOCH.load(Ordering::Relaxed);
        if memo.owner != owner || memo.epoch != epoch {
            memo.clear();
            memo.owner = owner;
            memo.epoch = epoch;
        }
        f(&mut PieceEncoder {
            vocab,
            memo: Some(&mut memo),
        })
    })
}
