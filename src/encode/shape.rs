//! The dispatch by shape: the merge path of a piece that is not one token, by
//! its length and shape: the short scan, the runs path, and for a repetitive
//! piece the flat path or the queue. A long piece with many distinct pairs is
//! left to the caller: [`super::merge`] cuts it ([`super::split`]); a part of
//! a cut takes the heap ([`merge_part`]).

use super::flat_runs::{encode_piece_flat_runs, FLAT_MIN};
use super::heap::encode_piece_heap;
use super::queue::encode_piece_queue;
use super::runs::encode_piece_runs;
use super::scan::{encode_piece_scan, SHORT_PIECE_MAX};
use crate::vocab::Vocab;
use crate::Rank;

/// Merges `piece` into `out` by the path its length and shape pick: the short
/// scan; for a long piece the runs path, then for a repetitive one the flat
/// path (from [`FLAT_MIN`] bytes) or the queue. False, having written
/// nothing, for a long piece none of them takes (many distinct pairs).
#[inline]
pub(super) fn merge_by_shape(piece: &[u8], vocab: &Vocab, out: &mut Vec<Rank>) -> bool {
    if piece.len() <= SHORT_PIECE_MAX {
        encode_piece_scan(piece, vocab, out);
    } else if encode_piece_runs(piece, vocab, out) {
        // few runs of one byte each ('x' * N, N spaces): merged as runs
    } else if is_repetitive(piece) {
        if piece.len() < FLAT_MIN || !encode_piece_flat_runs(piece, vocab, out) {
            encode_piece_queue(piece, vocab, out);
        }
    } else {
        return false;
    }
    true
}

/// One part of a split piece: [`merge_by_shape`], else the heap (a part is
/// not split again).
#[inline]
pub(super) fn merge_part(piece: &[u8], vocab: &Vocab, out: &mut Vec<Rank>) {
    if !merge_by_shape(piece, vocab, out) {
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
