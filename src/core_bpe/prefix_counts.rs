//! The token count of every prefix of one piece, in one pass: for the budget
//! searches inside a piece that has no restart point (random letters, a long
//! run of CJK), where counting each candidate cut on its own costs the
//! square of the piece.
//!
//! Call two tokens `x`, `y` *compatible* when the encoding of the bytes of
//! `x` followed by those of `y` is `[x, y]`: merging by rank never joins them
//! across their border, nor anything inside either. In rank-merge BPE the
//! encoding of a text is the one sequence of tokens that spells it, whose
//! every token encodes to itself, and whose every two neighbours are
//! compatible. So the encoding of `piece[..i]` is that of `piece[..j]`
//! followed by the one token `t = piece[j..i]` that encodes to itself and is
//! compatible with the last token of `piece[..j]`'s encoding; exactly one
//! `t` ending at `i` passes. The pass keeps, for each `i`, that last token
//! and the count, and tests the tokens ending at `i` longest first.
//!
//! This holds for one merge order over bytes, the rank encoder's; the
//! two-stage superword encoding is outside it, and [`one_piece`] says
//! `None` there (and wherever no candidate passes, which the rule says
//! cannot happen), leaving the caller to count each cut. The tests compare
//! every prefix's count with an encode of that prefix.
//!
//! Cost: per byte, the token lengths that end there (the lengths over 16
//! bytes only where a long token's last 8 bytes do), each a hash lookup, and
//! a compatibility test that encodes two tokens once per distinct pair.

use rustc_hash::FxHashMap;

use super::CoreBpe;
use crate::encode::encode_piece;
use crate::pretok::unicode;
use crate::vocab::{Vocab, MID_MAX};
use crate::Rank;

/// The memo of the tests on tokens (each an encode of a token or two).
struct Tests<'a> {
    vocab: &'a Vocab,
    itself: FxHashMap<Rank, bool>,
    pairs: FxHashMap<(Rank, Rank), bool>,
    bytes: Vec<u8>,
    ids: Vec<Rank>,
}

impl<'a> Tests<'a> {
    fn new(vocab: &'a Vocab) -> Self {
        Tests {
            vocab,
            itself: FxHashMap::default(),
            pairs: FxHashMap::default(),
            bytes: Vec::new(),
            ids: Vec::new(),
        }
    }

    /// Whether the encoding of `bytes` is exactly `want`.
    fn encodes_to(&mut self, want: &[Rank]) -> bool {
        self.ids.clear();
        encode_piece(&self.bytes, self.vocab, &mut self.ids);
        self.ids == want
    }

    /// Whether token `t` encodes to itself.
    fn itself(&mut self, t: Rank) -> bool {
        if let Some(&v) = self.itself.get(&t) {
            return v;
        }
        self.bytes.clear();
        let v = self.vocab.append_token(t, &mut self.bytes) && self.encodes_to(&[t]);
        self.itself.insert(t, v);
        v
    }

    /// Whether `x` then `y` encode to `[x, y]`.
    fn compatible(&mut self, x: Rank, y: Rank) -> bool {
        if let Some(&v) = self.pairs.get(&(x, y)) {
            return v;
        }
        self.bytes.clear();
        let v = self.vocab.append_token(x, &mut self.bytes)
            && self.vocab.append_token(y, &mut self.bytes)
            && self.encodes_to(&[x, y]);
        self.pairs.insert((x, y), v);
        v
    }
}

/// `counts[i]`: the number of tokens of `piece[..i]` (`forward`) or of
/// `piece[i..]` encoded as one piece, for every `i` in `0..=piece.len()`
/// (byte positions; a cut inside a character counts its bytes as the encoder
/// would). Backward is the mirror: the first token of `piece[j..]` is the one
/// that encodes to itself and is compatible with the first token of the
/// rest. `None` for a vocabulary whose pieces do not merge by rank alone
/// (superword), or if no token passes at some position.
fn counts(piece: &[u8], vocab: &Vocab, forward: bool) -> Option<Vec<u32>> {
    if vocab.stage1().is_some() {
        return None;
    }
    let n = piece.len();
    let mut counts = vec![0u32; n + 1];
    // the last token of `piece[..p]` (forward), the first of `piece[p..]`
    let mut edge: Vec<Rank> = vec![0; n + 1];
    let mut tests = Tests::new(vocab);
    let edges = vocab.long_edges();
    for step in 1..=n {
        let p = if forward { step } else { n - step };
        let room = vocab.longest().min(step);
        let long = room > MID_MAX
            && if forward {
                edges.may_end(piece, p)
            } else {
                edges.may_start(piece, p)
            };
        let top = if long { room } else { room.min(MID_MAX) };
        let mut found = None;
        for len in (1..=top).rev() {
            // the token `piece[s..e]`, the rest of the text beyond `q`
            let (s, e, q) = if forward {
                (p - len, p, p - len)
            } else {
                (p, p + len, p + len)
            };
            let Some(t) = vocab.rank(&piece[s..e]) else {
                continue;
            };
            let alone = if forward { q == 0 } else { q == n };
            let joins = |tests: &mut Tests| match forward {
                true => tests.compatible(edge[q], t),
                false => tests.compatible(t, edge[q]),
            };
            if tests.itself(t) && (alone || joins(&mut tests)) {
                found = Some((q, t));
                break;
            }
        }
        let (q, t) = found?;
        edge[p] = t;
        counts[p] = counts[q] + 1;
    }
    Some(counts)
}

/// Shortest stretch worth a pass: below it the search counts each cut.
const MIN_STRETCH: usize = 256;

/// The counts of every prefix (`prefix`) or suffix of `text[a..b]` as the
/// encoder counts them, indexed by the cut minus `a`, when that stretch is
/// one piece whose every prefix and suffix is one piece too: a named
/// tiktoken pattern, one piece of letters after at most one other
/// character (the caller checks that no special token meets it). `None`
/// otherwise.
pub(super) fn one_piece(
    core: &CoreBpe,
    text: &str,
    (a, b): (usize, usize),
    prefix: bool,
) -> Option<Vec<u32>> {
    let seg = text.get(a..b).filter(|s| s.len() >= MIN_STRETCH)?;
    if !core.pretok.named().is_some_and(|n| n.is_tiktoken()) {
        return None;
    }
    let t = unicode::tables();
    if !seg
        .chars()
        .skip(1)
        .all(|c| t.of(c as u32) & unicode::L != 0)
    {
        return None;
    }
    let mut pieces = 0;
    core.pretok.for_each_span(seg, |_, _| pieces += 1).ok()?;
    if pieces != 1 {
        return None;
    }
    counts(seg.as_bytes(), &core.vocab, prefix)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(vocab: &Vocab, text: &[u8]) {
        let counts = super::counts(text, vocab, true).expect("a rank vocabulary");
        let mut ids = Vec::new();
        for i in 0..=text.len() {
            ids.clear();
            if i > 0 {
                encode_piece(&text[..i], vocab, &mut ids);
            }
            assert_eq!(
                counts[i] as usize,
                ids.len(),
                "prefix of {i} bytes of {:?}",
                String::from_utf8_lossy(text)
            );
        }
        let counts = super::counts(text, vocab, false).expect("a rank vocabulary");
        for i in 0..=text.len() {
            ids.clear();
            if i < text.len() {
                encode_piece(&text[i..], vocab, &mut ids);
            }
            assert_eq!(counts[i] as usize, ids.len(), "suffix from byte {i}");
        }
    }

    use crate::TestRng as Rng;

    /// Random text over `alphabet`, `len` characters.
    fn random(rng: &mut Rng, alphabet: &[&str], len: usize) -> Vec<u8> {
        (0..len)
            .flat_map(|_| alphabet[rng.below(alphabet.len())].bytes())
            .collect()
    }

    /// A bundled rank file (`python/bytepair/data`).
    fn bundled(name: &str) -> Vocab {
        use std::io::Read;
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(format!("python/bytepair/data/{name}.tiktoken.gz"));
        let mut data = Vec::new();
        flate2::read::GzDecoder::new(std::fs::File::open(&path).unwrap())
            .read_to_end(&mut data)
            .unwrap();
        Vocab::from_tiktoken(&data).unwrap()
    }

    #[test]
    fn every_prefix_counts_as_its_own_encoding() {
        let letters: Vec<&str> = "abcdefghijklmnopqrstuvwxyz"
            .split("")
            .filter(|s| !s.is_empty())
            .collect();
        let few = ["a", "b", "c", "ab", "aa"];
        let cased = ["a", "B", "t", "T", "h", "e", "E", "in", "IN"];
        let cjk = ["一", "人", "大", "中", "국", "한", "の", "ア"];
        // bytes of any kind: the rule is about bytes, not pieces
        let mixed = [" ", "a", "the", " the", ".", "\n", "1", "é", "ing", "  "];
        let mut rng = Rng(0x9e37_79b9);
        for name in ["gpt2", "cl100k_base", "o200k_base"] {
            let vocab = bundled(name);
            for alphabet in [&letters[..], &few[..], &cased[..], &cjk[..], &mixed[..]] {
                for len in [1, 2, 7, 40, 300, 300, 300, 300] {
                    let text = random(&mut rng, alphabet, len);
                    check(&vocab, &text);
                }
            }
            check(&vocab, "x".repeat(700).as_bytes());
            check(&vocab, "ab".repeat(300).as_bytes());
        }
    }
}
