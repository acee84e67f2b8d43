//! The runs path: a long piece made of a few runs of one byte each (`'x' * N`,
//! N spaces, a line of `=`), merged on its run-length form.
//!
//! Runs for a piece longer than [`super::SHORT_PIECE_MAX`] of at most
//! [`MAX_RUNS`] runs, and finishes the flat path ([`super::flat_runs`]) once
//! its sequence has collapsed into runs. Each round merges every pair of the
//! lowest rank in one sweep, checked against the greedy order; when a check
//! fails it declines, having written nothing, and the dispatch takes another
//! path.
//!
//! Complexity: O(rounds × runs) plus the output, whatever the length.

use crate::vocab::{Vocab, NONE_RANK as NONE};
use crate::Rank;

/// At most this many runs of one byte in a piece for [`encode_piece_runs`],
/// and in its sequence while merging (it gives up beyond).
pub(super) const MAX_RUNS: usize = 64;

/// A piece made of a few runs of one byte each ('x' * N, N spaces, a line of
/// '=' after a space), merged on its run-length form: the sequence of parts
/// is kept as runs (token, count), and each round merges every pair of the
/// lowest rank in one left-to-right sweep over the runs. Time O(rounds x
/// runs) plus the output, whatever N: the queue takes 7-9 ns per byte of a
/// run of spaces at 10 KB-1 MB (gpt2) and 17-25 at 10 MB, once its 16 bytes
/// per byte leave the caches.
///
/// Exactness. The greedy rule merges the lowest-ranked pair, leftmost first.
/// With r the lowest rank in the sequence, the sweep merges the pairs of rank
/// r from left to right, which is what the rule does as long as no merge
/// creates a pair ranked below r (one ranked r cannot appear: it would spell
/// more bytes than token r). So every merge checks the pairs it creates: with
/// the part before it (already final in this sweep) and with the part after it
/// in the sequence as it stood (the sweep has not reached it yet). When one is
/// below r, or the runs grow past [`MAX_RUNS`], nothing has been written: the
/// function returns false and the caller takes another path. The bundled
/// vocabularies pass the checks on every run of an ASCII character the tests
/// try (`tests/encode/test_merge_paths.py`); the tests also feed it shuffled
/// vocabularies that fail them.
pub fn encode_piece_runs(piece: &[u8], vocab: &Vocab, out: &mut Vec<Rank>) -> bool {
    match as_runs(piece.iter().map(|&b| vocab.byte_rank(b))) {
        Some(runs) => merge_runs(runs, vocab, out),
        None => false,
    }
}

/// The run-length form of a sequence of parts, or None past [`MAX_RUNS`] runs.
pub(super) fn as_runs(parts: impl Iterator<Item = Rank>) -> Option<Vec<(Rank, usize)>> {
    let mut runs: Vec<(Rank, usize)> = Vec::new();
    for t in parts {
        match runs.last_mut() {
            Some((u, c)) if *u == t => *c += 1,
            _ => {
                if runs.len() == MAX_RUNS {
                    return None;
                }
                runs.push((t, 1));
            }
        }
    }
    Some(runs)
}

/// The rounds of [`encode_piece_runs`] on runs, then their ids into `out`;
/// false (nothing written) when a sweep's checks fail or the runs grow past
/// [`MAX_RUNS`].
pub(super) fn merge_runs(mut runs: Vec<(Rank, usize)>, vocab: &Vocab, out: &mut Vec<Rank>) -> bool {
    let pair = |a: Rank, b: Rank| vocab.pair_rank(a, b).unwrap_or(NONE);
    let mut next = Vec::with_capacity(MAX_RUNS);
    loop {
        let mut r = NONE;
        for (i, &(t, c)) in runs.iter().enumerate() {
            if c >= 2 {
                r = r.min(pair(t, t));
            }
            if let Some(&(u, _)) = runs.get(i + 1) {
                r = r.min(pair(t, u));
            }
        }
        if r == NONE {
            break;
        }
        if !sweep_runs(&runs, r, pair, &mut next) || next.len() > MAX_RUNS {
            return false;
        }
        std::mem::swap(&mut runs, &mut next);
    }
    for &(t, c) in &runs {
        out.resize(out.len() + c, t);
    }
    true
}

/// One round of [`encode_piece_runs`]: every pair of rank `r` in `runs`
/// merged, leftmost first, into `next`; false when a merge creates a pair
/// ranked below `r` (the greedy rule would merge that pair first).
pub(super) fn sweep_runs(
    runs: &[(Rank, usize)],
    r: Rank,
    pair: impl Fn(Rank, Rank) -> Rank,
    next: &mut Vec<(Rank, usize)>,
) -> bool {
    fn push(next: &mut Vec<(Rank, usize)>, t: Rank, c: usize) {
        match next.last_mut() {
            Some((u, k)) if *u == t => *k += c,
            _ if c > 0 => next.push((t, c)),
            _ => {}
        }
    }
    // the pairs a new part `r` makes with the part before it and with `right`,
    // the part after it when it was merged, all ranked above `r`
    let fits = |next: &[(Rank, usize)], right: Option<Rank>| {
        next.last().is_none_or(|&(l, _)| pair(l, r) > r) && right.is_none_or(|u| pair(r, u) > r)
    };
    next.clear();
    // the last part of the previous run, not yet written: it may merge with
    // the first part of this one
    let mut pending: Option<Rank> = None;
    for (i, &(t, mut c)) in runs.iter().enumerate() {
        let after = runs.get(i + 1).map(|&(u, _)| u);
        if let Some(p) = pending.take() {
            if pair(p, t) == r {
                if !fits(next, if c >= 2 { Some(t) } else { after }) {
                    return false;
                }
                push(next, r, 1);
                c -= 1;
            } else {
                push(next, p, 1);
            }
        }
        if c >= 2 && pair(t, t) == r {
            // merges at (0, 1), (2, 3), ...: the first meets the part before,
            // the others the previous merge; each meets the part two after
            // its start (`t` inside the run, `after` past an even run)
            let k = c / 2;
            let ok = fits(next, None)
                && (k < 2 || pair(r, r) > r)
                && (c < 3 || pair(r, t) > r)
                && (c % 2 == 1 || after.is_none_or(|u| pair(r, u) > r));
            if !ok {
                return false;
            }
            push(next, r, k);
            if c % 2 == 1 {
                pending = Some(t);
            }
        } else if c > 0 {
            push(next, t, c - 1);
            pending = Some(t);
        }
    }
    if let Some(p) = pending {
        push(next, p, 1);
    }
    true
}
