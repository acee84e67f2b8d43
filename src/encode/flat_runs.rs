//! The flat path: a long repetitive piece of [`FLAT_MIN`] bytes or more whose
//! bytes alternate (`'aA' * N`, `'\r\n' * N`, a repeated syllable).
//!
//! Runs before the queue ([`super::queue`]) for such pieces: up to
//! [`FLAT_ROUNDS`] rounds of the greedy rule over the flat sequence of parts,
//! in place, until the sequence has at most [`MAX_RUNS`](super::runs::MAX_RUNS) runs; the runs path
//! ([`super::runs`]) then finishes it. It declines (nothing written) when the
//! sequence does not collapse or a round's checks fail, and at once when the
//! piece's first [`FLAT_PROBE`] bytes do not collapse.
//!
//! Complexity: linear; each round is one streaming pass over the sequence.

use super::runs::{as_runs, merge_runs};
use crate::vocab::{Vocab, NONE_RANK as NONE};
use crate::Rank;

/// Pieces at least this long that alternate bytes (`'aA' * N`, a repeated
/// syllable) try [`encode_piece_flat_runs`] before the queue: below it the
/// queue's 16 bytes per byte stay in the caches, and it is faster.
pub const FLAT_MIN: usize = 1 << 21;

/// At most this many flat rounds in [`encode_piece_flat_runs`].
const FLAT_ROUNDS: usize = 4;

/// The prefix of a long piece that [`encode_piece_flat_runs`] tries first.
const FLAT_PROBE: usize = 1 << 16;

/// A long repetitive piece whose bytes alternate ('aA' * N, '\r\n' * N, a
/// repeated syllable): a few rounds of the greedy rule over the flat sequence
/// of parts (each round one streaming pass, with the checks of
/// [`sweep_runs`](super::runs::sweep_runs)), until its run-length form has at most [`MAX_RUNS`](super::runs::MAX_RUNS) runs
/// ('aA' * N becomes 'aA' N times); the runs then finish it as in
/// [`encode_piece_runs`](super::runs::encode_piece_runs). False, having written nothing, when the sequence does
/// not collapse within [`FLAT_ROUNDS`] rounds or a check fails. Where it
/// answers, it reads and writes the sequence in order, instead of the queue's
/// scattered 16 bytes per byte, which leave the caches at 10 MB (2.0-2.6x the
/// time per byte of 10 KB).
pub fn encode_piece_flat_runs(piece: &[u8], vocab: &Vocab, out: &mut Vec<Rank>) -> bool {
    // a long piece first tries its first FLAT_PROBE bytes: one that does not
    // collapse there is declined at once, not after FLAT_ROUNDS passes over it
    // all (measured: declining a whole 10 MB piece costs 20-25 ns/byte, about what the
    // queue then spends). A predictor only: the whole piece keeps every check.
    if piece.len() > 2 * FLAT_PROBE
        && !encode_piece_flat_runs(&piece[..FLAT_PROBE], vocab, &mut Vec::new())
    {
        return false;
    }
    let pair = |a: Rank, b: Rank| vocab.pair_rank(a, b).unwrap_or(NONE);
    let mut seq: Vec<Rank> = piece.iter().map(|&b| vocab.byte_rank(b)).collect();
    for _ in 0..FLAT_ROUNDS {
        let r = seq
            .windows(2)
            .map(|w| pair(w[0], w[1]))
            .min()
            .unwrap_or(NONE);
        if r == NONE {
            out.extend_from_slice(&seq);
            return true;
        }
        if !sweep_flat(&mut seq, r, pair) {
            return false;
        }
        if let Some(runs) = as_runs(seq.iter().copied()) {
            return merge_runs(runs, vocab, out);
        }
    }
    false
}

/// [`sweep_runs`](super::runs::sweep_runs) on a flat sequence, in place: every pair of rank `r`
/// merged, leftmost first; false when a merge creates a pair ranked below
/// `r` (the sequence is then partly rewritten: the caller drops it). The
/// write cursor `j` never passes the read cursor `i`, so every part read
/// ahead of `i` is still the old one.
fn sweep_flat(seq: &mut Vec<Rank>, r: Rank, pair: impl Fn(Rank, Rank) -> Rank) -> bool {
    let n = seq.len();
    let (mut i, mut j) = (0, 0);
    while i < n {
        let t = seq[i];
        if i + 1 < n && pair(t, seq[i + 1]) == r {
            // the new part's pairs: with the part before it (final, at j - 1)
            // and with the part after it as it stands (the sweep has not
            // reached it)
            let left_ok = j == 0 || pair(seq[j - 1], r) > r;
            let right_ok = i + 2 >= n || pair(r, seq[i + 2]) > r;
            if !(left_ok && right_ok) {
                return false;
            }
            seq[j] = r;
            i += 2;
        } else {
            seq[j] = t;
            i += 1;
        }
        j += 1;
    }
    seq.truncate(j);
    true
}
