//! The staged path: the long pieces of a superword tokenizer, merged in two
//! stages.
//!
//! A superword tokenizer's pieces are whole line segments ("spans"), and its
//! late tokens bridge words (`` of the``), so the cut test of
//! [`crate::vocab::cuts`] finds almost no boundary in a span and the merge runs
//! over every byte of it. The staged path splits the merge at a rank `t`
//! ([`Vocab::stage1`]: the first token that bridges words):
//!
//! 1. merge the span with the tokens of rank `< t` alone. No such token bridges
//!    words, so this merge cuts at nearly every word boundary (the cut
//!    argument of [`crate::vocab::cuts`], on the vocabulary of the ranks
//!    `< t`), and its parts are word-sized pieces merged in cache;
//! 2. go on merging the resulting tokens with the whole vocabulary, a few
//!    tokens per word instead of a few bytes.
//!
//! Why it is exact, for any `t`: the whole merge takes the lowest-ranked pair
//! (leftmost on ties) each round. While some pair ranks below `t`, that is the
//! pair stage 1 takes too, so both make the same merges in the same order up
//! to the first state with no pair below `t`, where stage 1 stops. Stage 2 is
//! the whole merge from that state on. So `t` only decides the speed (a `t`
//! too high leaves fewer cuts, a `t` too low leaves more merges to stage 2).
//!
//! Complexity: the cut test is constant work per byte; stage 1's parts take
//! the dispatch by shape ([`super::shape`]: linear for short, run-shaped and
//! repetitive parts, the heap's O(n log n) for a long part with no cut);
//! stage 2 is the short scan over at most [`SHORT_PIECE_MAX`] tokens, else the
//! heap over the tokens, O(m log m).

use super::heap::merge_tokens_heap;
use super::scan::{min_pair, SHORT_PIECE_MAX};
use super::shape::merge_part;
use crate::vocab::stage1::FirstStage;
use crate::vocab::{Vocab, NONE_RANK as NONE};
use crate::Rank;

/// Encodes a piece that is not one token in two stages (see the module
/// notes): `stage1` holds the vocabulary of `vocab`'s ranks below its
/// transition ([`Vocab::stage1`]), with the same ranks.
pub fn encode_piece_staged(piece: &[u8], vocab: &Vocab, stage1: &FirstStage, out: &mut Vec<Rank>) {
    let at = out.len();
    let cuts = stage1.vocab.cuts();
    let mut start = 0;
    for p in 1..piece.len() {
        // inside a run of ASCII letters and digits, and inside a character,
        // the test would refuse nearly always (the word's own tokens
        // straddle): only the other positions are tried, which keeps every
        // cut found exact
        let inside = (piece[p - 1].is_ascii_alphanumeric() && piece[p].is_ascii_alphanumeric())
            || piece[p] & 0xc0 == 0x80;
        if !inside && cuts.is_boundary(piece, p) {
            first_stage_part(&piece[start..p], stage1, out);
            start = p;
        }
    }
    first_stage_part(&piece[start..], stage1, out);
    let m = out.len() - at;
    if m > SHORT_PIECE_MAX {
        let tokens = out.split_off(at);
        merge_tokens_heap(&tokens, vocab, out);
    } else if m > 32 {
        merge_tokens_scan::<SHORT_PIECE_MAX>(at, vocab, out);
    } else if m > 1 {
        merge_tokens_scan::<32>(at, vocab, out);
    }
}

/// Stage 1 on one part of a cut: the token it is when the merge rebuilds
/// that token from its bytes (most words), else the dispatch by shape.
#[inline]
fn first_stage_part(part: &[u8], stage1: &FirstStage, out: &mut Vec<Rank>) {
    if let Some(r) = stage1.vocab.rank(part) {
        if stage1.reach(r, rebuilds) {
            out.push(r);
            return;
        }
    }
    merge_part(part, &stage1.vocab, out);
}

/// Whether merging `bytes` by `vocab` gives the one token `rank`.
fn rebuilds(vocab: &Vocab, rank: Rank, bytes: &[u8]) -> bool {
    let mut out = Vec::with_capacity(4);
    merge_part(bytes, vocab, &mut out);
    out == [rank]
}

/// Stage 2 on the at most `N` tokens `out[at..]`, in place: the short scan's
/// loop ([`super::scan`]) with token pairs ranked by [`Vocab::pair_rank`],
/// its parts in a stack array of `N` (a small one for the common spans keeps
/// the zeroing cheap).
fn merge_tokens_scan<const N: usize>(at: usize, vocab: &Vocab, out: &mut Vec<Rank>) {
    let pair = |l: Rank, r: Rank| vocab.pair_rank(l, r).unwrap_or(NONE);
    let tokens = &out[at..];
    let mut len = tokens.len();
    let mut parts = [(0, 0); N];
    for (k, w) in tokens.windows(2).enumerate() {
        parts[k] = (w[0], pair(w[0], w[1]));
    }
    parts[len - 1] = (tokens[len - 1], NONE);
    loop {
        let (r, i) = min_pair(&parts[..len]);
        if r == NONE {
            break;
        }
        parts.copy_within(i + 2..len, i + 1);
        len -= 1;
        parts[i].0 = r;
        parts[i].1 = if i + 1 < len {
            pair(r, parts[i + 1].0)
        } else {
            NONE
        };
        if i > 0 {
            parts[i - 1].1 = pair(parts[i - 1].0, r);
        }
    }
    out.truncate(at);
    out.extend(parts[..len].iter().map(|&(t, _)| t));
}
