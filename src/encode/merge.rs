//! The merge step: one pre-tokenized piece of bytes -> ranks.
//!
//! Semantics (tiktoken's, and `bytepair.reference.encode_piece`): start from single
//! bytes; repeatedly merge the adjacent pair whose concatenated bytes are the
//! lowest-ranked token, leftmost on ties; stop when no adjacent pair is a token.
//!
//! Three paths give the same result (tested against each other and the reference):
//! - a piece that is itself a token maps straight to its rank (one hash lookup);
//! - short pieces use a scan over a small array of parts, tiktoken-style: each
//!   round finds the minimum and recomputes the two neighbouring pair ranks.
//!   O(n·m) for n bytes and m merges, which is fastest for the short pieces that
//!   make up almost all real text;
//! - long pieces use a binary heap of candidate pairs over a linked list of parts,
//!   with lazy deletion: O(n log n) on any input, so hostile text ('x' * 10 MB,
//!   one huge word) never goes quadratic.
//!
//! Performance notes (measured on cl100k_base, the corpora of benches/):
//! - the scan path beats the heap for pieces up to a few dozen bytes; above
//!   [`SHORT_PIECE_MAX`] the heap wins and the scan's O(n²) worst case appears;
//! - the whole-piece lookup answers ~80-90% of English pieces with one probe.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::vocab::Vocab;
use crate::Rank;

/// Pieces longer than this (in bytes) take the heap path.
pub const SHORT_PIECE_MAX: usize = 128;

const NONE: Rank = Rank::MAX;

/// Encodes one piece and appends its ranks to `out`, choosing the fastest exact
/// path (whole-token lookup, short scan, or heap).
///
/// Precondition: `vocab` holds all 256 single bytes (guaranteed by [`Vocab::new`]).
/// Complexity: O(n log n) in the piece length `n`.
#[inline]
pub fn encode_piece(piece: &[u8], vocab: &Vocab, out: &mut Vec<Rank>) {
    if let Some(r) = vocab.rank(piece) {
        out.push(r);
        return;
    }
    if piece.len() <= SHORT_PIECE_MAX {
        encode_piece_scan(piece, vocab, out);
    } else {
        encode_piece_heap(piece, vocab, out);
    }
}

/// The short-piece path: an array of part starts with the rank of the pair
/// beginning at each part; each round merges the minimum (leftmost on ties) and
/// recomputes only the two pairs that changed.
///
/// Complexity: O(n²) worst case, so only used for `n <= SHORT_PIECE_MAX`
/// (callers may use it on any length; it is exact, only slower).
pub fn encode_piece_scan(piece: &[u8], vocab: &Vocab, out: &mut Vec<Rank>) {
    let n = piece.len();
    if n == 0 {
        return;
    }
    if n == 1 {
        out.push(vocab.byte_rank(piece[0]));
        return;
    }
    // parts[i] = (start byte of part i, rank of part i joined with part i+1);
    // a sentinel entry (n, NONE) closes the list and the last real part has NONE.
    let mut parts: Vec<(u32, Rank)> = Vec::with_capacity(n + 1);
    for i in 0..n - 1 {
        parts.push((i as u32, vocab.rank(&piece[i..i + 2]).unwrap_or(NONE)));
    }
    parts.push(((n - 1) as u32, NONE));
    parts.push((n as u32, NONE));

    // rank of the pair starting at part i when parts i and i+1 are joined,
    // i.e. the bytes from part i's start to part (i+2)'s start.
    let pair_rank = |parts: &[(u32, Rank)], i: usize| -> Rank {
        if i + 2 < parts.len() {
            vocab
                .rank(&piece[parts[i].0 as usize..parts[i + 2].0 as usize])
                .unwrap_or(NONE)
        } else {
            NONE
        }
    };

    loop {
        // the real parts are 0..len-1; the sentinel never starts a pair
        let mut best = (NONE, usize::MAX);
        for (i, &(_, r)) in parts[..parts.len() - 1].iter().enumerate() {
            if r < best.0 {
                best = (r, i);
            }
        }
        let (r, i) = best;
        if r == NONE {
            break;
        }
        parts.remove(i + 1);
        parts[i].1 = pair_rank(&parts, i);
        if i > 0 {
            parts[i - 1].1 = pair_rank(&parts, i - 1);
        }
    }
    for w in parts.windows(2) {
        out.push(rank_of_span(piece, vocab, w[0].0 as usize, w[1].0 as usize));
    }
}

/// The long-piece path: parts form a doubly linked list indexed by their first
/// byte; a min-heap holds `(rank, left part)` candidates, and an entry is live
/// only while `pair_rank[left]` still equals its rank (token bytes are unique,
/// so a stale entry can never look live: any change at `left` changes the span
/// and therefore the rank).
///
/// Complexity: O(n log n) time; memory 12 bytes per input byte plus 8 per heap
/// entry (at most n initial + 2 per merge).
pub fn encode_piece_heap(piece: &[u8], vocab: &Vocab, out: &mut Vec<Rank>) {
    let n = piece.len();
    if n < 2 {
        encode_piece_scan(piece, vocab, out);
        return;
    }
    // next[i] / prev[i]: neighbouring part starts (n = end, NONE = no previous).
    let mut next: Vec<u32> = (1..=n as u32).collect();
    let mut prev: Vec<u32> = (0..n as u32).map(|i| i.wrapping_sub(1)).collect();
    prev[0] = NONE;
    let mut pair_rank: Vec<Rank> = Vec::with_capacity(n);
    let mut initial: Vec<Reverse<u64>> = Vec::with_capacity(n);
    for i in 0..n {
        let r = if i + 1 < n {
            vocab.rank(&piece[i..i + 2]).unwrap_or(NONE)
        } else {
            NONE
        };
        pair_rank.push(r);
        if r != NONE {
            initial.push(Reverse(key(r, i as u32)));
        }
    }
    let mut heap = BinaryHeap::from(initial);

    // the end of the pair starting at part `l`: the start of the part after next
    let pair_end = |next: &[u32], l: u32| -> Option<usize> {
        let m = next[l as usize] as usize;
        if m >= n {
            None
        } else {
            Some(next[m] as usize)
        }
    };

    while let Some(Reverse(k)) = heap.pop() {
        let (r, l) = unkey(k);
        if pair_rank[l as usize] != r {
            continue; // stale
        }
        // merge part l with its right neighbour m
        let m = next[l as usize];
        let after = next[m as usize];
        next[l as usize] = after;
        if (after as usize) < n {
            prev[after as usize] = l;
        }
        pair_rank[m as usize] = NONE;
        // new pair (l, after)
        let nr = match pair_end(&next, l) {
            Some(e) => vocab.rank(&piece[l as usize..e]).unwrap_or(NONE),
            None => NONE,
        };
        pair_rank[l as usize] = nr;
        if nr != NONE {
            heap.push(Reverse(key(nr, l)));
        }
        // new pair (prev, l)
        let p = prev[l as usize];
        if p != NONE {
            let pr = vocab
                .rank(&piece[p as usize..after as usize])
                .unwrap_or(NONE);
            pair_rank[p as usize] = pr;
            if pr != NONE {
                heap.push(Reverse(key(pr, p)));
            }
        }
    }
    let mut at = 0usize;
    while at < n {
        let e = next[at] as usize;
        out.push(rank_of_span(piece, vocab, at, e));
        at = e;
    }
}

#[inline]
fn key(rank: Rank, left: u32) -> u64 {
    ((rank as u64) << 32) | left as u64
}

#[inline]
fn unkey(k: u64) -> (Rank, u32) {
    ((k >> 32) as Rank, k as u32)
}

/// The rank of a part produced by merging. Every part is a single byte or the
/// result of merging two parts into a token, so the lookup always succeeds; the
/// byte fallback only keeps the function total.
#[inline]
fn rank_of_span(piece: &[u8], vocab: &Vocab, start: usize, end: usize) -> Rank {
    vocab
        .rank(&piece[start..end])
        .unwrap_or_else(|| vocab.byte_rank(piece[start]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vocab(extra: &[&[u8]]) -> Vocab {
        let mut v: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        v.extend(extra.iter().map(|e| e.to_vec()));
        Vocab::new(v).unwrap()
    }

    /// The obvious quadratic oracle, written independently of both paths.
    fn oracle(piece: &[u8], v: &Vocab) -> Vec<Rank> {
        let mut parts: Vec<Vec<u8>> = piece.iter().map(|&b| vec![b]).collect();
        loop {
            let mut best: Option<(Rank, usize)> = None;
            for i in 0..parts.len().saturating_sub(1) {
                let joined = [parts[i].as_slice(), parts[i + 1].as_slice()].concat();
                if let Some(r) = v.rank(&joined) {
                    if best.is_none_or(|(b, _)| r < b) {
                        best = Some((r, i));
                    }
                }
            }
            let Some((_, i)) = best else { break };
            let right = parts.remove(i + 1);
            parts[i].extend(right);
        }
        parts.iter().map(|p| v.rank(p).unwrap()).collect()
    }

    fn all_paths(piece: &[u8], v: &Vocab) -> [Vec<Rank>; 3] {
        let mut a = Vec::new();
        let mut b = Vec::new();
        let mut c = Vec::new();
        encode_piece(piece, v, &mut a);
        encode_piece_scan(piece, v, &mut b);
        encode_piece_heap(piece, v, &mut c);
        [a, b, c]
    }

    #[test]
    fn paths_agree_with_oracle_on_small_vocab() {
        let v = vocab(&[b"ab", b"bc", b"abc", b"aa", b"aaa", b"aaaa", b"cab", b"ba"]);
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for len in 0..200 {
            for _ in 0..5 {
                let piece: Vec<u8> = (0..len)
                    .map(|_| {
                        seed ^= seed << 13;
                        seed ^= seed >> 7;
                        seed ^= seed << 17;
                        b"abc"[(seed % 3) as usize]
                    })
                    .collect();
                let want = oracle(&piece, &v);
                for got in all_paths(&piece, &v) {
                    assert_eq!(got, want, "piece {:?}", String::from_utf8_lossy(&piece));
                }
            }
        }
    }

    #[test]
    fn leftmost_on_ties() {
        let v = vocab(&[b"aa"]);
        for got in all_paths(b"aaa", &v) {
            assert_eq!(got, vec![256, b'a' as Rank]);
        }
    }

    #[test]
    fn long_run_is_fast_and_exact() {
        let v = vocab(&[b"xx", b"xxxx", b"xxxxxxxx"]);
        let piece = vec![b'x'; 100_003];
        let mut got = Vec::new();
        encode_piece_heap(&piece, &v, &mut got);
        // 'xx' everywhere, then 'xxxx', then 'xxxxxxxx'; 100_003 = 8 * 12_500 + 3
        let mut want = vec![258; 12_500];
        want.extend([256, b'x' as Rank]);
        assert_eq!(got, want);
    }
}
