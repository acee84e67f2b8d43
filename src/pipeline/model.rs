//! The BPE model of a Hugging Face `tokenizer.json`, with its own semantics:
//! merges ranked by PAIR (the merge list's order), not by the rank of the
//! merged bytes as in tiktoken.
//!
//! A piece's symbols are its bytes, each the vocabulary id of its byte-level
//! character; a byte whose character is not in the vocabulary is dropped (as
//! `tokenizers` drops an unknown character without `unk_token`), so its
//! neighbours become adjacent. Then, repeatedly, the adjacent pair that comes
//! first in the merge list (leftmost on ties) merges into the merge's token,
//! exactly as `tokenizers`' `Word::merge_all`: a heap of `(rank, position)`,
//! stale entries checked by looking the pair up again and comparing the token
//! it makes. With `ignore_merges`, a piece that is a vocabulary token is that
//! token and nothing is merged.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rustc_hash::FxHashMap;

use crate::encode::cache::{PieceModel, Seed};
use crate::vocab::MID_MAX;
use crate::Rank;

/// No id (a byte whose character the vocabulary lacks).
const NONE: Rank = Rank::MAX;

/// The model: byte symbols, the pair table and (with `ignore_merges`) the
/// whole-piece table.
#[derive(Debug, Clone)]
pub struct Model {
    byte_ids: [Rank; 256],
    /// `(left << 32) | right` -> `(rank in the merge list, merged id)`; a
    /// pair listed twice keeps its last rank (a plain map insert, as HF).
    merges: FxHashMap<u64, (u32, Rank)>,
    /// Byte string -> id of every byte-level vocabulary entry, when
    /// `ignore_merges` is set.
    whole: Option<FxHashMap<Box<[u8]>, Rank>>,
    /// With `ignore_merges`, the vocabulary entries of 1 to [`MID_MAX`]
    /// bytes: the piece cache's seed ([`Model::seed`]).
    short: Vec<(Box<[u8]>, Rank)>,
}

#[inline]
fn key(a: Rank, b: Rank) -> u64 {
    ((a as u64) << 32) | b as u64
}

#[derive(Clone, Copy)]
struct Sym {
    id: Rank,
    prev: usize,
    next: usize,
    live: bool,
}

impl Model {
    /// Builds the model. `tokens`: byte-level vocabulary entries as `(bytes,
    /// id)`; `merges`: `(left id, right id, merged id)` in list order.
    pub fn new(
        tokens: &[(Vec<u8>, Rank)],
        merges: &[(Rank, Rank, Rank)],
        ignore_merges: bool,
    ) -> Self {
        let mut byte_ids = [NONE; 256];
        for (t, id) in tokens {
            if let [b] = t.as_slice() {
                byte_ids[*b as usize] = *id;
            }
        }
        let mut map = FxHashMap::default();
        map.reserve(merges.len());
        for (rank, &(a, b, m)) in merges.iter().enumerate() {
            map.insert(key(a, b), (rank as u32, m));
        }
        let mut seen = rustc_hash::FxHashSet::default();
        let short = tokens
            .iter()
            .filter(|(t, _)| ignore_merges && (1..=MID_MAX).contains(&t.len()))
            .filter(|(t, _)| seen.insert(t.as_slice()))
            .map(|(t, id)| (t.clone().into_boxed_slice(), *id))
            .collect();
        let whole = ignore_merges.then(|| {
            tokens
                .iter()
                .map(|(t, id)| (t.clone().into_boxed_slice(), *id))
                .collect()
        });
        Model {
            byte_ids,
            merges: map,
            whole,
            short,
        }
    }

    /// Appends the ids of one piece (its bytes) to `out`.
    pub fn encode_piece(&self, piece: &[u8], out: &mut Vec<Rank>) {
        if let Some(whole) = &self.whole {
            if let Some(&id) = whole.get(piece) {
                out.push(id);
                return;
            }
        }
        let mut syms: Vec<Sym> = Vec::with_capacity(piece.len());
        for &b in piece {
            let id = self.byte_ids[b as usize];
            if id != NONE {
                let i = syms.len();
                syms.push(Sym {
                    id,
                    prev: i.wrapping_sub(1),
                    next: i + 1,
                    live: true,
                });
            }
        }
        if syms.len() > 1 {
            self.merge_all(&mut syms);
        }
        out.extend(syms.iter().filter(|s| s.live).map(|s| s.id));
    }

    fn merge_all(&self, syms: &mut [Sym]) {
        let n = syms.len();
        let mut heap: BinaryHeap<Reverse<(u32, usize, Rank)>> = BinaryHeap::with_capacity(n);
        for i in 0..n - 1 {
            if let Some(&(rank, m)) = self.merges.get(&key(syms[i].id, syms[i + 1].id)) {
                heap.push(Reverse((rank, i, m)));
            }
        }
        while let Some(Reverse((_, pos, new_id))) = heap.pop() {
            let cur = syms[pos];
            if !cur.live || cur.next >= n {
                continue;
            }
            let right = syms[cur.next];
            match self.merges.get(&key(cur.id, right.id)) {
                Some(&(_, m)) if m == new_id => {}
                _ => continue,
            }
            syms[pos].id = new_id;
            syms[pos].next = right.next;
            syms[cur.next].live = false;
            if right.next < n {
                syms[right.next].prev = pos;
            }
            let cur = syms[pos];
            if cur.prev < n {
                if let Some(&(rank, m)) = self.merges.get(&key(syms[cur.prev].id, cur.id)) {
                    heap.push(Reverse((rank, cur.prev, m)));
                }
            }
            if cur.next < n {
                if let Some(&(rank, m)) = self.merges.get(&key(cur.id, syms[cur.next].id)) {
                    heap.push(Reverse((rank, pos, m)));
                }
            }
        }
    }
}

impl Model {
    /// The piece cache's seed. With `ignore_merges`, every vocabulary entry
    /// of at most 16 bytes (a piece that is a token is that token). Without
    /// it, none: a token that no merge sequence reaches from its own bytes
    /// must not answer its bytes, and telling those apart would merge every
    /// short token at the first encode (130-200 ms on 150 k tokens, more
    /// than a megabyte of text costs to merge piece by piece); each piece is
    /// merged once instead, then remembered.
    pub fn seed(&self) -> Seed {
        match &self.whole {
            Some(_) => Seed::of(
                self.short.len(),
                self.short.iter().map(|(t, id)| (&t[..], *id)),
            ),
            None => Seed::of(0, std::iter::empty()),
        }
    }
}

impl PieceModel for Model {
    fn merge_short<F: Fn(usize, usize) -> Rank>(&self, piece: &[u8], _: F, out: &mut Vec<Rank>) {
        self.encode_piece(piece, out);
    }

    fn whole(&self, piece: &[u8]) -> Option<Rank> {
        self.whole.as_ref().and_then(|w| w.get(piece).copied())
    }

    fn merge_long(&self, piece: &[u8], out: &mut Vec<Rank>) {
        self.encode_piece(piece, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(ignore: bool) -> Model {
        // ids: a=0 b=1 c=2 ab=3 bc=4 abc=5 (5 is made by no merge)
        let toks: Vec<(Vec<u8>, Rank)> = vec![
            (b"a".to_vec(), 0),
            (b"b".to_vec(), 1),
            (b"c".to_vec(), 2),
            (b"ab".to_vec(), 3),
            (b"bc".to_vec(), 4),
            (b"abc".to_vec(), 5),
        ];
        Model::new(&toks, &[(1, 2, 4), (0, 1, 3)], ignore)
    }

    #[test]
    fn merges_by_pair_rank_and_drops_unknown_bytes() {
        let m = model(false);
        let mut out = Vec::new();
        m.encode_piece(b"abc", &mut out);
        assert_eq!(out, vec![0, 4]); // (b, c) is listed first; abc is never reached
        out.clear();
        m.encode_piece(b"axb", &mut out);
        assert_eq!(out, vec![3]); // x has no token: dropped, a and b then merge
        out.clear();
        model(true).encode_piece(b"abc", &mut out);
        assert_eq!(out, vec![5]);
    }

    /// Pieces of `n` bytes.
    struct Every(usize);

    impl crate::encode::cache::Spans for Every {
        fn for_each_span<F: crate::SpanSink>(
            &self,
            text: &str,
            mut f: F,
        ) -> crate::error::Result<()> {
            for s in (0..text.len()).step_by(self.0) {
                f.span(s, (s + self.0).min(text.len()));
            }
            Ok(())
        }
    }

    #[test]
    fn the_piece_cache_answers_as_the_model_does() {
        use crate::encode::cache::PieceCache;
        use std::sync::Arc;
        for ignore in [false, true] {
            let m = model(ignore);
            let seed = Arc::new(m.seed());
            let mut cache = PieceCache::new(&seed);
            // "abc" alone, and pieces of 1 to 20 bytes: hits, misses, long pieces
            let text = "abcxab".repeat(7);
            for n in [3, 1, 2, 4, 5, 17, 20, 3] {
                let mut got = Vec::new();
                cache
                    .encode_text(&seed, &m, &Every(n), &text, &mut got, |_| {})
                    .unwrap();
                let mut want = Vec::new();
                for s in (0..text.len()).step_by(n) {
                    m.encode_piece(&text.as_bytes()[s..(s + n).min(text.len())], &mut want);
                }
                assert_eq!(got, want, "pieces of {n}, ignore_merges {ignore}");
            }
            // the unreached token "abc" is in the seed only with ignore_merges
            let mut got = Vec::new();
            cache
                .encode_text(&seed, &m, &Every(3), "abc", &mut got, |_| {})
                .unwrap();
            assert_eq!(got, if ignore { vec![5] } else { vec![0, 4] });
        }
    }
}
