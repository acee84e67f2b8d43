//! The short scan: the merge path of every piece of at most
//! [`SHORT_PIECE_MAX`] bytes, which is almost all real text.
//!
//! An array of parts, tiktoken-style: each round finds the lowest pair rank
//! (leftmost on ties) and recomputes only the two pairs beside the merge. The
//! parts live in a stack array, so a short piece allocates nothing (a `Vec`
//! per piece costs ~10% in malloc/free). The piece cache's misses take the same
//! scan with pair ranks read as ranks of byte ranges of the piece
//! ([`encode_short_by_bytes`]).
//!
//! Complexity: O(n·m) for n bytes and m merges (O(n²) at worst), in cache;
//! above [`SHORT_PIECE_MAX`] the long-piece paths win.

use super::pair_key::{key, unkey};
use crate::vocab::{Vocab, NONE_RANK as NONE};
use crate::Rank;

/// Pieces of at most this many bytes take the short scan; longer ones the
/// long-piece paths (runs, flat, queue, split, heap).
pub const SHORT_PIECE_MAX: usize = 128;

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
    let pair = |l: Rank, r: Rank, _: usize, _: usize| vocab.pair_rank(l, r).unwrap_or(NONE);
    if n > SHORT_PIECE_MAX {
        // exact on any length, but keep the parts off the stack for long pieces
        let mut parts = vec![(0, 0); n];
        let mut at = vec![0; n + 1];
        scan_merge(piece, vocab, &mut parts, &mut at, out, pair);
    } else if n <= 16 {
        // no heap allocation per piece: short pieces are the common case; a
        // small array for the commonest lengths keeps the zeroing cheap
        let (mut parts, mut at) = ([(0, 0); 16], [0; 17]);
        scan_merge(piece, vocab, &mut parts[..n], &mut at[..=n], out, pair);
    } else {
        let (mut parts, mut at) = ([(0, 0); SHORT_PIECE_MAX], [0; SHORT_PIECE_MAX + 1]);
        scan_merge(piece, vocab, &mut parts[..n], &mut at[..=n], out, pair);
    }
}

/// [`encode_piece_scan`] for a piece of at most 16 bytes that is not a token,
/// with the pair ranks after the first round read by `rank_of(start, end)`:
/// the rank of the token whose bytes are `piece[start..end]`, or
/// [`crate::vocab::NONE_RANK`]. That is the definition of a pair's rank (the
/// rank of the two parts' concatenated bytes), so the result is the same.
/// Pairs the vocabulary's filter rules out ([`Vocab::pair_may_be_token`],
/// most of them on Korean) are not asked. The piece cache answers the rest
/// from its own table, which holds every token of at most 16 bytes: one probe
/// of a line common text keeps warm, where [`Vocab::pair_rank`]'s table of
/// all token splits (several MB) is a cache miss. The first round's pairs
/// are two-byte tokens, read from [`Vocab::byte_pair_rank`]'s dense table.
pub fn encode_short_by_bytes(
    piece: &[u8],
    vocab: &Vocab,
    mut rank_of: impl FnMut(usize, usize) -> Rank,
    out: &mut Vec<Rank>,
) {
    let n = piece.len();
    if n == 0 || n > 16 {
        // not a short piece (the piece cache asks only for those): the plain
        // scan, exact on any length
        return encode_piece_scan(piece, vocab, out);
    }
    let pair = |l: Rank, r: Rank, s: usize, e: usize| {
        if vocab.pair_may_be_token(l, r) {
            rank_of(s, e)
        } else {
            NONE
        }
    };
    let (mut parts, mut at) = ([(0, 0); 16], [0; 17]);
    scan_merge(piece, vocab, &mut parts[..n], &mut at[..=n], out, pair);
}

/// The scan: `parts` has exactly `piece.len()` slots, `(token rank of the
/// part, rank of this part joined with the next one)`, and `at` one more, the
/// parts' first bytes (`at[len]` the piece's end). The first round's pairs
/// are two-byte tokens ([`Vocab::byte_pair_rank`]); later ones come from
/// `pair(left, right, start, end)`: the rank of the token spelled by
/// `piece[start..end]`, the two parts `left` and `right` joined.
#[inline]
fn scan_merge(
    piece: &[u8],
    vocab: &Vocab,
    parts: &mut [(Rank, Rank)],
    at: &mut [u32],
    out: &mut Vec<Rank>,
    mut pair: impl FnMut(Rank, Rank, usize, usize) -> Rank,
) {
    let n = piece.len();
    for (slot, w) in parts.iter_mut().zip(piece.windows(2)) {
        *slot = (vocab.byte_rank(w[0]), vocab.byte_pair_rank(w[0], w[1]));
    }
    parts[n - 1] = (vocab.byte_rank(piece[n - 1]), NONE);
    for (k, a) in at.iter_mut().enumerate() {
        *a = k as u32;
    }
    let mut len = n;
    loop {
        let (r, i) = min_pair(&parts[..len]);
        if r == NONE {
            break;
        }
        // drop part i + 1 (it joins part i)
        parts.copy_within(i + 2..len, i + 1);
        at.copy_within(i + 2..=len, i + 1);
        len -= 1;
        parts[i].0 = r;
        parts[i].1 = if i + 1 < len {
            pair(r, parts[i + 1].0, at[i] as usize, at[i + 2] as usize)
        } else {
            NONE
        };
        if i > 0 {
            parts[i - 1].1 = pair(parts[i - 1].0, r, at[i - 1] as usize, at[i + 1] as usize);
        }
    }
    out.extend(parts[..len].iter().map(|&(t, _)| t));
}

/// The lowest pair rank among `parts` and its leftmost index. Each part's key
/// is `rank << 32 | index`, so the minimum key is the answer; four running
/// minima over interleaved parts break the compare-select dependency chain
/// of a single one (with one minimum this loop takes 75% of `scan_merge`'s
/// time on English; it is the merge loop's inner loop, run once per merge).
#[inline(always)]
pub(super) fn min_pair(parts: &[(Rank, Rank)]) -> (Rank, usize) {
    let mut m = [u64::MAX; 4];
    let mut chunks = parts.chunks_exact(4);
    for (c, ch) in chunks.by_ref().enumerate() {
        for k in 0..4 {
            m[k] = m[k].min(key(ch[k].1, (4 * c + k) as u32));
        }
    }
    let base = parts.len() - chunks.remainder().len();
    for (k, &(_, pr)) in chunks.remainder().iter().enumerate() {
        m[k] = m[k].min(key(pr, (base + k) as u32));
    }
    let (r, i) = unkey(m[0].min(m[1]).min(m[2].min(m[3])));
    (r, i as usize)
}
