//! The merge loop shared by the heap ([`super::heap`]) and queue
//! ([`super::queue`]) paths: the parts of a long piece as a doubly linked
//! list, one 16-byte record per byte, and a store of candidate pairs
//! ([`PairQueue`]) that yields the lowest-ranked, leftmost one.
//!
//! Complexity: one pop per candidate pair (at most n initial + 2 per merge)
//! plus the store's cost per operation; memory 16 bytes per input byte.

use super::scan::encode_piece_scan;
use crate::vocab::{Vocab, NONE_RANK as NONE};
use crate::Rank;

/// Where the linked-list merge keeps its candidate pairs: push `(rank, left
/// part)`, pop the lowest rank, leftmost first (entries may be stale; the
/// caller checks).
pub(super) trait PairQueue {
    fn push(&mut self, r: Rank, left: u32);
    fn pop(&mut self) -> Option<(Rank, u32)>;
}

/// One part of a long piece being merged: its neighbours (part starts; `n` =
/// end, [`NONE`] = none), its token, and the rank of the pair it starts. One
/// 16-byte record per byte keeps a merge's reads on one or two cache lines.
#[derive(Clone, Copy)]
pub(super) struct Part {
    next: u32,
    prev: u32,
    tok: Rank,
    pair: Rank,
}

/// The initial byte pairs of a long piece, `(rank, left position)` in
/// position order, read from its parts (no list of its own: on a 10 MB piece
/// that list would be 80 MB).
pub(super) fn initial_pairs(parts: &[Part]) -> impl Iterator<Item = (Rank, u32)> + '_ {
    parts
        .iter()
        .enumerate()
        .filter(|(_, p)| p.pair != NONE)
        .map(|(i, p)| (p.pair, i as u32))
}

/// The merge loop of the long-piece paths: parts form a doubly linked list of
/// [`Part`]s indexed by their first byte, and `pending` (built by `make` from
/// the parts and the number of their initial byte pairs, see
/// [`initial_pairs`]) yields the lowest-ranked,
/// leftmost candidate. Each merge recomputes the pair on each side of the new
/// part, the left one first: it lies left of the other, which keeps each
/// rank's arrivals in position order (what [`RankQueue`](super::queue::RankQueue)'s FIFOs expect).
pub(super) fn merge_linked<Q: PairQueue>(
    piece: &[u8],
    vocab: &Vocab,
    out: &mut Vec<Rank>,
    make: impl FnOnce(&[Part], usize) -> Q,
) {
    let n = piece.len();
    if n < 2 {
        encode_piece_scan(piece, vocab, out);
        return;
    }
    let mut parts: Vec<Part> = Vec::with_capacity(n);
    let mut pairs = 0;
    for (i, &b) in piece.iter().enumerate() {
        let pair = piece
            .get(i + 1)
            .map_or(NONE, |&c| vocab.byte_pair_rank(b, c));
        pairs += (pair != NONE) as usize;
        parts.push(Part {
            next: i as u32 + 1,
            prev: (i as u32).wrapping_sub(1),
            tok: vocab.byte_rank(b),
            pair,
        });
    }
    parts[0].prev = NONE;
    run_linked(parts, pairs, vocab, out, make);
}

/// [`merge_linked`] from a sequence of tokens instead of bytes: the merges
/// that follow, in the same order, are those of a piece whose merging has
/// reached `tokens` (the staged path's second stage, [`super::staged`]).
/// One [`Part`] per token.
pub(super) fn merge_tokens_linked<Q: PairQueue>(
    tokens: &[Rank],
    vocab: &Vocab,
    out: &mut Vec<Rank>,
    make: impl FnOnce(&[Part], usize) -> Q,
) {
    let n = tokens.len();
    let mut parts: Vec<Part> = Vec::with_capacity(n);
    let mut pairs = 0;
    for (i, &t) in tokens.iter().enumerate() {
        let pair = tokens
            .get(i + 1)
            .map_or(NONE, |&u| vocab.pair_rank(t, u).unwrap_or(NONE));
        pairs += (pair != NONE) as usize;
        parts.push(Part {
            next: i as u32 + 1,
            prev: (i as u32).wrapping_sub(1),
            tok: t,
            pair,
        });
    }
    if let Some(first) = parts.first_mut() {
        first.prev = NONE;
    }
    run_linked(parts, pairs, vocab, out, make);
}

/// The loop of [`merge_linked`] on its parts (one per initial token; `n` =
/// `parts.len()` ends the list) with `pairs` initial candidate pairs.
fn run_linked<Q: PairQueue>(
    mut parts: Vec<Part>,
    pairs: usize,
    vocab: &Vocab,
    out: &mut Vec<Rank>,
    make: impl FnOnce(&[Part], usize) -> Q,
) {
    let n = parts.len();
    let mut pending = make(&parts, pairs);
    while let Some((r, l)) = pending.pop() {
        let li = l as usize;
        if parts[li].pair != r {
            continue; // stale
        }
        // merge part l with its right neighbour m into token r
        let m = parts[li].next as usize;
        let after = parts[m].next;
        parts[li].next = after;
        if (after as usize) < n {
            parts[after as usize].prev = l;
        }
        parts[m].pair = NONE;
        parts[li].tok = r;
        // new pair (prev, l)
        let p = parts[li].prev;
        if p != NONE {
            let pr = vocab.pair_rank(parts[p as usize].tok, r).unwrap_or(NONE);
            parts[p as usize].pair = pr;
            if pr != NONE {
                pending.push(pr, p);
            }
        }
        // new pair (l, after)
        let nr = if (after as usize) < n {
            vocab
                .pair_rank(r, parts[after as usize].tok)
                .unwrap_or(NONE)
        } else {
            NONE
        };
        parts[li].pair = nr;
        if nr != NONE {
            pending.push(nr, l);
        }
    }
    let mut at = 0usize;
    while at < n {
        out.push(parts[at].tok);
        at = parts[at].next as usize;
    }
}
