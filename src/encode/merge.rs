//! The merge step: one pre-tokenized piece of bytes -> ranks, and the order in
//! which the merge paths are tried.
//!
//! Semantics (tiktoken's, and `bytepair.reference.encode_piece`): start from single
//! bytes; repeatedly merge the adjacent pair whose concatenated bytes are the
//! lowest-ranked token, leftmost on ties; stop when no adjacent pair is a token.
//!
//! Every path gives that same result (`encode/tests.rs` and
//! `tests/encode/test_merge_paths.py` run each against the others and the
//! reference). [`encode_piece`] and the dispatch by shape ([`super::shape`])
//! choose, in this order:
//!
//! | path | file | runs for | cost |
//! | --- | --- | --- | --- |
//! | whole-token lookup | here | a piece that is a token | one hash probe |
//! | staged | [`super::staged`] | a superword tokenizer's pieces of more than [`STAGED_MIN`] bytes: word-sized parts merged by the ranks below the first token bridging words, then their tokens by the whole vocabulary | linear when word cuts are frequent |
//! | short scan | [`super::scan`] | pieces of at most [`SHORT_PIECE_MAX`](super::SHORT_PIECE_MAX) bytes | O(n·m), in cache |
//! | runs | [`super::runs`] | long pieces of at most 64 runs of one byte (`'x' * N`), while each round's sweep is the greedy order | O(rounds × runs) |
//! | flat, then runs | [`super::flat_runs`] | long repetitive pieces of [`super::flat_runs::FLAT_MIN`] bytes or more that collapse into runs in a few rounds (`'aA' * N`) | linear |
//! | queue | [`super::queue`] | other long repetitive pieces (at most 256 distinct byte pairs, see [`super::shape`]) | O(n log d), d ranks pending |
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

use super::shape::merge_by_shape;
use super::split::encode_piece_split;
use super::staged::encode_piece_staged;
use crate::vocab::Vocab;
use crate::Rank;

/// Pieces longer than this take the staged path ([`super::staged`]) when
/// the vocabulary has one ([`Vocab::stage1`]); shorter ones are merged whole.
pub const STAGED_MIN: usize = 16;

/// Encodes one piece and appends its ranks to `out`: the whole-token lookup,
/// else the merge path by shape (see the module table).
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
/// merge path by length and shape ([`super::shape`]), else the split.
#[inline]
pub fn encode_piece_parts(piece: &[u8], vocab: &Vocab, out: &mut Vec<Rank>) {
    if piece.len() > STAGED_MIN {
        if let Some(stage1) = vocab.stage1() {
            return encode_piece_staged(piece, vocab, stage1, out);
        }
    }
    if !merge_by_shape(piece, vocab, out) {
        encode_piece_split(piece, vocab, out);
    }
}
