//! The merge step: one pre-tokenized piece of bytes -> ranks, and the dispatch
//! that picks its merge path.
//!
//! Semantics (tiktoken's, and `bytepair.reference.encode_piece`): start from single
//! bytes; repeatedly merge the adjacent pair whose concatenated bytes are the
//! lowest-ranked token, leftmost on ties; stop when no adjacent pair is a token.
//!
//! Every path gives that same result (`encode/tests.rs` and
//! `tests/encode/test_merge_paths.py` run each against the others and the
//! reference). [`encode_piece`] and [`merge_by_shape`] choose, in this order:
//!
//! | path | file | runs for | cost |
//! | --- | --- | --- | --- |
//! | whole-token lookup | here | a piece that is a token | one hash probe |
//! | short scan | [`super::scan`] | pieces of at most [`SHORT_PIECE_MAX`] bytes | O(n·m), in cache |
//! | runs | [`super::runs`] | long pieces of at most 64 runs of one byte (`'x' * N`), while each round's sweep is the greedy order | O(rounds × runs) |
//! | flat, then runs | [`super::flat_runs`] | long repetitive pieces of [`super::flat_runs::FLAT_MIN`] bytes or more that collapse into runs in a few rounds (`'aA' * N`) | linear |
//! | queue | [`super::queue`] | other long repetitive pieces (at most 256 distinct byte pairs, see [`is_repetitive`]) | O(n log d), d ranks pending |
//! | split | [`super::split`] | other long pieces: cut where no token can straddle, each part dispatched again | linear when cuts are frequent |
//! | heap | [`super::heap`] | a long part of a split with no cut | O(n log n) |
//!
//! The runs and flat paths check every merge against the greedy order and
//! decline (writing nothing) when it differs; the piece then takes the next
//! path. A path given a piece outside its row is still exact, only slower.
//!
//! Performance notes (release build, 2 MB corpus excerpts, one thread, CPU
//! time on a shared 2-core VM; see benches/RESULTS.md for the peer comparison):
//! - the whole-piece lookup answers 94% of English pieces (cl100k_base) with one
//!   probe; Korean (o200k_base) only ~48%, so the merge loop matters there;
//! - merging looks pairs up in a `(left, right) -> rank` map over all
//!   two-token splits of every token (446 k entries for o200k_base, built at
//!   load): a 64-bit probe per candidate instead of hashing a byte slice
//!   (`rank(&piece[a..b])`, tiktoken's way, ~14 MB/cpu-s on Korean/o200k),
//!   ~2x on that input;
//! - the per-thread piece cache ([`super::cache`]) answers repeated pieces
//!   before any merge: it brings Korean from ~25 to ~65-100 MB/cpu-s in
//!   steady state;
//! - the queue keeps time per byte within ~2x from 10 KB to 10 MB on
//!   repetitive pieces, where the all-pairs heap grows 3-5x from cache misses
//!   once it outgrows the caches; the split brings one 10 MB word of random
//!   Hangul to short parts merged in cache (10 MB / 10 KB time per byte
//!   0.9-1.5x; 2.6-4.1x with the heap alone).

use super::flat_runs::{encode_piece_flat_runs, FLAT_MIN};
use super::heap::encode_piece_heap;
use super::queue::encode_piece_queue;
use super::runs::encode_piece_runs;
use super::scan::encode_piece_scan;
use super::split::encode_piece_split;
use crate::vocab::Vocab;
use crate::Rank;

/// Pieces of at most this many bytes take the short scan; longer ones the
/// long-piece paths (runs, flat, queue, split, heap).
pub const SHORT_PIECE_MAX: usize = 128;

/// Encodes one piece and appends its ranks to `out`: the whole-token lookup,
/// else the merge path [`merge_by_shape`] picks (see the module table).
///
/// Precondition: `vocab` holds all 256 single bytes (guaranteed by [`Vocab::new`]).
/// Complexity: linear in the piece length `n` for short, run-shaped and
/// repetitive pieces and for pieces with frequent cuts; O(n log n) at worst
/// (a long part with no cut, on the heap).
#[inline]
pub fn encode_piece(piece: &[u8], vocab: &Vocab, out: &mut Vec<Rank>) {
    if let Some(r) = vocab.rank(piece) {
        out.push(r);
        return;
    }
    encode_piece_parts(piece, vocab, out);
}

/// [`encode_piece`] for a piece already known not to be a single token: the
/// merge path by length and shape ([`merge_by_shape`]).
#[inline]
pub fn encode_piece_parts(piece: &[u8], vocab: &Vocab, out: &mut Vec<Rank>) {
    merge_by_shape(piece, vocab, out, true);
}

/// The dispatch: the merge path for a piece by its length and shape. The
/// short scan; for a long piece the runs path, then for a repetitive one the
/// flat path (from [`FLAT_MIN`] bytes) or the queue, else the split (when
/// `split`) or the heap. The split calls back here for each part with
/// `split` false.
#[inline]
pub(super) fn merge_by_shape(piece: &[u8], vocab: &Vocab, out: &mut Vec<Rank>, split: bool) {
    if piece.len() <= SHORT_PIECE_MAX {
        encode_piece_scan(piece, vocab, out);
    } else if encode_piece_runs(piece, vocab, out) {
        // few runs of one byte each ('x' * N, N spaces): merged as runs
    } else if is_repetitive(piece) {
        if piece.len() < FLAT_MIN || !encode_piece_flat_runs(piece, vocab, out) {
            encode_piece_queue(piece, vocab, out);
        }
    } else if split {
        encode_piece_split(piece, vocab, out);
    } else {
        encode_piece_heap(piece, vocab, out);
    }
}

/// Whether a long piece uses few distinct byte pairs (at most 256 of the
/// 65,536): 'x' * N, runs of spaces, a repeated syllable. There the same few
/// ranks come up again and again and the queue's FIFO per rank is linear
/// (measured: flat within 1.5-2x from 10 KB to 10 MB, and 2x faster than the
/// heap at 10 KB), while the all-pairs heap grows 3-5x per byte. Text with
/// many distinct pairs (random base64 or syllables) keeps the heap: nearly
/// every rank is distinct there, so the queue degenerates into a heap of ranks
/// plus bookkeeping, up to 5x slower at 10 KB-1 MB (gpt2) and only 1.0-1.4x
/// faster at 10 MB (cl100k / o200k).
pub(super) fn is_repetitive(piece: &[u8]) -> bool {
    let mut seen = vec![0u64; 1 << 10];
    let mut distinct = 0usize;
    for w in piece.windows(2) {
        let k = (w[0] as usize) << 8 | w[1] as usize;
        let bit = 1u64 << (k & 63);
        if seen[k >> 6] & bit == 0 {
            seen[k >> 6] |= bit;
            distinct += 1;
            if distinct > 256 {
                return false;
            }
        }
    }
    true
}

/// A candidate pair's sort key: rank, then left position (the lowest key is
/// the lowest rank, leftmost).
#[inline]
pub(super) fn key(rank: Rank, left: u32) -> u64 {
    ((rank as u64) << 32) | left as u64
}

/// [`key`]'s rank and position.
#[inline]
pub(super) fn unkey(k: u64) -> (Rank, u32) {
    ((k >> 32) as Rank, k as u32)
}
