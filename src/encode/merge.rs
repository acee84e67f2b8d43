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
//! Performance notes (release build, 2 MB corpus excerpts, one thread, CPU
//! time on a shared 2-core VM; see benches/RESULTS.md for the peer comparison):
//! - the whole-piece lookup answers 94% of English pieces (cl100k_base) with one
//!   probe; Korean (o200k_base) only ~48%, so the merge loop matters there;
//! - merging by hashing byte slices (`rank(&piece[a..b])`, tiktoken's way) ran
//!   Korean/o200k at ~14 MB/cpu-s; a `(left, right) -> rank` map over all
//!   two-token splits of every token (446 k entries for o200k_base, built at
//!   load) replaces each slice hash by a 64-bit probe: ~2x on that input;
//! - a `Vec` per short piece cost ~10% in malloc/free; the scan now works in a
//!   stack array;
//! - the per-thread memo of non-token pieces (`cache.rs`) is what brings Korean
//!   from ~25 to ~65-100 MB/cpu-s in steady state;
//! - the scan path beats the heap for short pieces; above [`SHORT_PIECE_MAX`]
//!   the heap wins and the scan's O(n²) worst case appears.

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
    encode_piece_parts(piece, vocab, out);
}

/// [`encode_piece`] for a piece already known not to be a single token: the
/// short scan or the heap, by length.
#[inline]
pub fn encode_piece_parts(piece: &[u8], vocab: &Vocab, out: &mut Vec<Rank>) {
    if piece.len() <= SHORT_PIECE_MAX {
        encode_piece_scan(piece, vocab, out);
    } else {
        encode_piece_heap(piece, vocab, out);
    }
}

/// The short-piece path: an array of parts (start byte, token rank, rank of the
/// pair it starts); each round merges the minimum pair (leftmost on ties) and
/// recomputes only the two pairs that changed. Pair ranks come from
/// [`Vocab::pair_rank`] (a 64-bit probe), so no byte string is hashed here.
///
/// Complexity: O(n²) worst case, so only used for `n <= SHORT_PIECE_MAX`
/// (callers may use it on any length; it is exact, only slower).
pub fn encode_piece_scan(piece: &[u8], vocab: &Vocab, out: &mut Vec<Rank>) {
    let n = piece.len();
    if n == 0 {
        return;
    }
    if n > SHORT_PIECE_MAX {
        // exact on any length, but keep the parts off the stack for long pieces
        let mut parts = vec![(0, 0); n];
        scan_merge(piece, vocab, &mut parts, out);
    } else {
        // no heap allocation per piece: short pieces are the common case
        let mut parts = [(0, 0); SHORT_PIECE_MAX];
        scan_merge(piece, vocab, &mut parts[..n], out);
    }
}

/// `parts` has exactly `piece.len()` slots: `(token rank of the part, rank of
/// this part joined with the next one)`.
#[inline]
fn scan_merge(piece: &[u8], vocab: &Vocab, parts: &mut [(Rank, Rank)], out: &mut Vec<Rank>) {
    let n = piece.len();
    let mut prev = vocab.byte_rank(piece[0]);
    for (slot, &b) in parts.iter_mut().zip(&piece[1..]) {
        let r = vocab.byte_rank(b);
        *slot = (prev, vocab.pair_rank(prev, r).unwrap_or(NONE));
        prev = r;
    }
    parts[n - 1] = (prev, NONE);
    let mut len = n;

    loop {
        let mut best = (NONE, 0usize);
        for (i, &(_, pr)) in parts[..len].iter().enumerate() {
            if pr < best.0 {
                best = (pr, i);
            }
        }
        let (r, i) = best;
        if r == NONE {
            break;
        }
        // drop part i + 1 (it joins part i)
        parts.copy_within(i + 2..len, i + 1);
        len -= 1;
        parts[i].0 = r;
        parts[i].1 = if i + 1 < len {
            vocab.pair_rank(r, parts[i + 1].0).unwrap_or(NONE)
        } else {
            NONE
        };
        if i > 0 {
            parts[i - 1].1 = vocab.pair_rank(parts[i - 1].0, r).unwrap_or(NONE);
        }
    }
    out.extend(parts[..len].iter().map(|&(t, _)| t));
}

/// The long-piece path: parts form a doubly linked list indexed by their first
/// byte; a min-heap holds `(pair rank, left part)` candidates, and an entry is
/// live only while `pair_rank[left]` still equals its rank (token bytes are
/// unique, so a stale entry can never look live: any change at `left` changes
/// the pair's bytes and therefore its rank).
///
/// Complexity: O(n log n) time; memory 16 bytes per input byte plus 8 per heap
/// entry (at most n initial + 2 per merge).
pub fn encode_piece_heap(piece: &[u8], vocab: &Vocab, out: &mut Vec<Rank>) {
    let n = piece.len();
    if n < 2 {
        encode_piece_scan(piece, vocab, out);
        return;
    }
    // next[i] / prev[i]: neighbouring part starts (n = end, NONE = no previous);
    // tok[i]: the token rank of the part starting at byte i.
    let mut next: Vec<u32> = (1..=n as u32).collect();
    let mut prev: Vec<u32> = (0..n as u32).map(|i| i.wrapping_sub(1)).collect();
    prev[0] = NONE;
    let mut tok: Vec<Rank> = piece.iter().map(|&b| vocab.byte_rank(b)).collect();
    let mut pair_rank: Vec<Rank> = Vec::with_capacity(n);
    let mut initial: Vec<Reverse<u64>> = Vec::with_capacity(n);
    for i in 0..n {
        let r = if i + 1 < n {
            vocab.pair_rank(tok[i], tok[i + 1]).unwrap_or(NONE)
        } else {
            NONE
        };
        pair_rank.push(r);
        if r != NONE {
            initial.push(Reverse(key(r, i as u32)));
        }
    }
    let mut heap = BinaryHeap::from(initial);

    while let Some(Reverse(k)) = heap.pop() {
        let (r, l) = unkey(k);
        let li = l as usize;
        if pair_rank[li] != r {
            continue; // stale
        }
        // merge part l with its right neighbour m into token r
        let m = next[li] as usize;
        let after = next[m];
        next[li] = after;
        if (after as usize) < n {
            prev[after as usize] = l;
        }
        pair_rank[m] = NONE;
        tok[li] = r;
        // new pair (l, after)
        let nr = if (after as usize) < n {
            vocab.pair_rank(r, tok[after as usize]).unwrap_or(NONE)
        } else {
            NONE
        };
        pair_rank[li] = nr;
        if nr != NONE {
            heap.push(Reverse(key(nr, l)));
        }
        // new pair (prev, l)
        let p = prev[li];
        if p != NONE {
            let pr = vocab.pair_rank(tok[p as usize], r).unwrap_or(NONE);
            pair_rank[p as usize] = pr;
            if pr != NONE {
                heap.push(Reverse(key(pr, p)));
            }
        }
    }
    let mut at = 0usize;
    while at < n {
        out.push(tok[at]);
        at = next[at] as usize;
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
