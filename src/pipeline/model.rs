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

impl Sym {
    const NONE: Sym = Sym {
        id: NONE,
        prev: usize::MAX,
        next: usize::MAX,
        live: false,
    };
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
        }
    }

    /// Appends the ids of one piece (its bytes) to `out`.
    pub fn encode_piece(&self, piece: &[u8], out: &mut Vec<Rank>) {
        match PieceModel::whole(self, piece) {
            Some(id) => out.push(id),
            None => self.merge_bytes(piece, out),
        }
    }

    /// Appends the ids that merging the bytes of `piece` gives. A piece of at
    /// most [`SMALL`] bytes keeps its symbols and queue on the stack.
    fn merge_bytes(&self, piece: &[u8], out: &mut Vec<Rank>) {
        self.merge_bytes_by(piece, out, false);
    }

    /// [`Model::merge_bytes`]; `heap`: always with the heap (the tests' reference).
    fn merge_bytes_by(&self, piece: &[u8], out: &mut Vec<Rank>, heap: bool) {
        let mut small = [Sym::NONE; SMALL];
        let mut big = Vec::new();
        let room: &mut [Sym] = if piece.len() <= SMALL {
            &mut small
        } else {
            big.resize(piece.len(), Sym::NONE);
            &mut big
        };
        let mut n = 0;
        for &b in piece {
            let id = self.byte_ids[b as usize];
            if let (true, Some(s)) = (id != NONE, room.get_mut(n)) {
                *s = Sym {
                    id,
                    prev: n.wrapping_sub(1),
                    next: n + 1,
                    live: true,
                };
                n += 1;
            }
        }
        let syms = &mut room[..n];
        if n > 1 && (n > SMALL || heap) {
            self.merge_all(syms, &mut BinaryHeap::with_capacity(n));
        } else if n > 1 {
            self.merge_all(syms, &mut Scan::default());
        }
        out.extend(syms.iter().filter(|s| s.live).map(|s| s.id));
    }

    /// `tokenizers`' `Word::merge_all` over `syms`, with `queue` holding the
    /// `(rank, position, merged id)` entries.
    fn merge_all<Q: Queue>(&self, syms: &mut [Sym], queue: &mut Q) {
        let n = syms.len();
        for i in 0..n - 1 {
            if let Some(&(rank, m)) = self.merges.get(&key(syms[i].id, syms[i + 1].id)) {
                queue.push((rank, i, m));
            }
        }
        while let Some((_, pos, new_id)) = queue.pop() {
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
                    queue.push((rank, cur.prev, m));
                }
            }
            if cur.next < n {
                if let Some(&(rank, m)) = self.merges.get(&key(cur.id, syms[cur.next].id)) {
                    queue.push((rank, pos, m));
                }
            }
        }
    }
}

/// A queue entry: `(rank in the merge list, left symbol's position, merged
/// id)`; the least comes first.
type Entry = (u32, usize, Rank);

/// The merge queue of [`Model::merge_all`]: entries pop least first.
trait Queue {
    fn push(&mut self, e: Entry);
    fn pop(&mut self) -> Option<Entry>;
}

impl Queue for BinaryHeap<Reverse<Entry>> {
    #[inline]
    fn push(&mut self, e: Entry) {
        BinaryHeap::push(self, Reverse(e));
    }
    #[inline]
    fn pop(&mut self) -> Option<Entry> {
        BinaryHeap::pop(self).map(|Reverse(e)| e)
    }
}

/// Pieces of at most this many symbols merge with [`Scan`] on the stack.
const SMALL: usize = MID_MAX;

/// The queue of a piece of at most [`SMALL`] symbols, unsorted on the stack:
/// a pop scans for the least entry. It pops exactly what the heap would (the
/// same total order), without an allocation. A piece of `n` symbols pushes
/// at most `3 (n - 1)` entries: `n - 1` pairs, then two per merge.
struct Scan {
    e: [Entry; 3 * SMALL],
    len: usize,
}

impl Default for Scan {
    fn default() -> Self {
        Scan {
            e: [(0, 0, 0); 3 * SMALL],
            len: 0,
        }
    }
}

impl Queue for Scan {
    #[inline]
    fn push(&mut self, e: Entry) {
        if let Some(slot) = self.e.get_mut(self.len) {
            *slot = e;
            self.len += 1;
        }
    }
    #[inline]
    fn pop(&mut self) -> Option<Entry> {
        let live = &self.e[..self.len];
        let (at, &least) = live.iter().enumerate().min_by_key(|&(_, e)| e)?;
        self.len -= 1;
        self.e.swap(at, self.len);
        Some(least)
    }
}

impl Model {
    /// The piece cache's seed: empty. Each piece is answered by
    /// [`Model::encode_piece`] the first time, then remembered.
    ///
    /// Without `ignore_merges`, a token that no merge sequence reaches from
    /// its own bytes must not answer its bytes, and telling those apart
    /// would merge every short token at the first encode (about 80 ms on
    /// Llama 3's 128 k tokens, the cost of merging more than a megabyte of
    /// text piece by piece). With it, every token of at most 16 bytes could
    /// be seeded, but a seed of GLM-4's 150 k tokens makes a 16 MB table
    /// whose hits run 9-19 % slower than those of a table that holds only
    /// the pieces met; a piece that is a token costs one lookup of
    /// `whole` instead, once.
    pub fn seed(&self) -> Seed {
        Seed::of(0, std::iter::empty())
    }
}

impl PieceModel for Model {
    fn merge_short<F: Fn(usize, usize) -> Rank>(&self, piece: &[u8], _: F, out: &mut Vec<Rank>) {
        // the seed is empty: a short piece may be a whole token
        self.encode_piece(piece, out);
    }

    fn whole(&self, piece: &[u8]) -> Option<Rank> {
        self.whole.as_ref().and_then(|w| w.get(piece).copied())
    }

    fn merge_long(&self, piece: &[u8], out: &mut Vec<Rank>) {
        // the cache asked `whole` first
        self.merge_bytes(piece, out);
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

    /// The stack queue pops what the heap pops: random vocabularies where
    /// several pairs make one token (as in files converted from rank files),
    /// and pieces on both sides of [`SMALL`].
    #[test]
    fn the_stack_queue_merges_as_the_heap() {
        let mut rng = crate::TestRng(0x9e37_79b9_7f4a_7c15);
        for round in 0..40 {
            let mut toks: Vec<(Vec<u8>, Rank)> =
                (0..4u8).map(|b| (vec![b'a' + b], b as Rank)).collect();
            let mut merges = Vec::new();
            for _ in 0..60 {
                let (x, y) = (rng.below(toks.len()), rng.below(toks.len()));
                let bytes = [toks[x].0.clone(), toks[y].0.clone()].concat();
                let id = match toks.iter().find(|(t, _)| *t == bytes) {
                    Some(&(_, id)) => id,
                    None => {
                        toks.push((bytes, toks.len() as Rank));
                        toks.len() as Rank - 1
                    }
                };
                merges.push((x as Rank, y as Rank, id));
            }
            let m = Model::new(&toks, &merges, false);
            for len in 1..=2 * SMALL + 4 {
                let piece: Vec<u8> = (0..len).map(|_| b"abcdx"[rng.below(5)]).collect();
                let (mut got, mut want) = (Vec::new(), Vec::new());
                m.merge_bytes(&piece, &mut got);
                m.merge_bytes_by(&piece, &mut want, true);
                assert_eq!(got, want, "round {round}, piece {piece:?}");
            }
        }
    }

    /// Two strings sharing an id: `tokenizers` merges a queued pair whose
    /// place another pair took when that pair makes the same id, at the
    /// queued pair's rank (checked with `tokenizers` 0.23.3).
    #[test]
    fn a_pair_making_the_same_id_passes_as_in_tokenizers() {
        // a b c d, bc = 4, "ab" and "abc" both 5, bcd = 6
        let toks: Vec<(Vec<u8>, Rank)> =
            [&b"a"[..], b"b", b"c", b"d", b"bc", b"ab", b"abc", b"bcd"]
                .iter()
                .zip([0, 1, 2, 3, 4, 5, 5, 6])
                .map(|(t, id)| (t.to_vec(), id))
                .collect();
        let m = Model::new(&toks, &[(1, 2, 4), (0, 1, 5), (4, 3, 6), (0, 4, 5)], false);
        // (b, c) merges first; the queued (a, b) then finds (a, bc), which also
        // makes 5, and merges before (bc, d)
        for piece in [&b"abcd"[..], b"abcdabcd"] {
            let mut out = Vec::new();
            m.encode_piece(piece, &mut out);
            assert_eq!(out, [5, 3].repeat(piece.len() / 4));
        }
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
            // the unreached token "abc" answers its bytes only with ignore_merges
            let mut got = Vec::new();
            cache
                .encode_text(&seed, &m, &Every(3), "abc", &mut got, |_| {})
                .unwrap();
            assert_eq!(got, if ignore { vec![5] } else { vec![0, 4] });
        }
    }
}
