//! The completions of tiktoken's `encode_with_unstable`: the token sequences
//! that may follow the stable ids of a text whose end (the "unstable" bytes)
//! a continuation could still change.
//!
//! The candidates are tiktoken's, in the same construction (its set; here in
//! order of first appearance, each once):
//! 1. every token that starts with the unstable bytes;
//! 2. for every split of the unstable bytes into a prefix and a suffix, and
//!    every token that starts with the suffix: the encoding of prefix + token,
//!    cut after the token that covers the unstable bytes;
//! 3. when the bytes end in a whitespace character after something else: the
//!    bytes before it and the character, each merged as a piece on its own.
//!
//! A whitespace suffix starts tens of thousands of tokens, so step 2 is the
//! cost; the tokens that start with a prefix are found by binary search in the
//! mergeable tokens sorted by their bytes (built once per encoder).

use rustc_hash::FxHashSet;

use super::CoreBpe;
use crate::encode::encode_piece;
use crate::error::Result;
use crate::Rank;

impl CoreBpe {
    /// The mergeable tokens' ranks in order of their bytes (gaps and the
    /// ranks a special token fills with its own text left out), built once.
    fn tokens_by_bytes(&self) -> &[Rank] {
        self.by_bytes.get_or_init(|| {
            let v = &self.vocab;
            let mut ranks: Vec<Rank> = (0..v.len() as Rank)
                .filter(|&r| v.token(r).is_some() && !self.special_decoder.contains_key(&r))
                .collect();
            ranks.sort_unstable_by(|&a, &b| v.token(a).cmp(&v.token(b)));
            ranks
        })
    }

    /// The ranks of the mergeable tokens that start with `prefix`.
    fn tokens_starting_with(&self, prefix: &[u8]) -> &[Rank] {
        let sorted = self.tokens_by_bytes();
        let bytes = |r: &Rank| self.vocab.token(*r).unwrap_or_default();
        let lo = sorted.partition_point(|r| bytes(r) < prefix);
        let n = sorted[lo..].partition_point(|r| bytes(r).starts_with(prefix));
        &sorted[lo..lo + n]
    }

    /// The completions of `unstable` (see the module documentation).
    pub fn unstable_completions(&self, unstable: &[u8]) -> Result<Vec<Vec<Rank>>> {
        if unstable.is_empty() {
            return Ok(Vec::new());
        }
        // the tokens that start with the bytes: distinct one-id candidates
        let mut out: Vec<Vec<Rank>> = self
            .tokens_starting_with(unstable)
            .iter()
            .map(|&r| vec![r])
            .collect();
        let mut singles: FxHashSet<Rank> = out.iter().map(|s| s[0]).collect();
        let mut seen: FxHashSet<Vec<Rank>> = FxHashSet::default();
        let mut add = |seq: &[Rank]| {
            let new = match seq {
                [r] => singles.insert(*r),
                _ => !seen.contains(seq) && seen.insert(seq.to_vec()),
            };
            if new {
                out.push(seq.to_vec());
            }
        };
        let mut possibility = Vec::new();
        let mut ids = Vec::new();
        for i in 1..unstable.len() {
            let (prefix, suffix) = unstable.split_at(i);
            for &r in self.tokens_starting_with(suffix) {
                possibility.clear();
                possibility.extend_from_slice(prefix);
                possibility.extend_from_slice(self.vocab.token(r).unwrap_or_default());
                ids.clear();
                match std::str::from_utf8(&possibility) {
                    Ok(s) => ids = self.encode_ordinary(s)?,
                    Err(_) => encode_piece(&possibility, &self.vocab, &mut ids),
                }
                let mut covered = 0;
                let mut n = 0;
                for &id in &ids {
                    n += 1;
                    covered += self.vocab.token(id).map_or(0, <[u8]>::len);
                    if covered >= unstable.len() {
                        break;
                    }
                }
                add(&ids[..n]);
            }
        }
        if unstable.len() > 1 {
            let (ch, n) = last_char(unstable);
            if unstable.len() > n && ch.is_some_and(char::is_whitespace) {
                let (head, tail) = unstable.split_at(unstable.len() - n);
                let mut seq = Vec::new();
                encode_piece(head, &self.vocab, &mut seq);
                encode_piece(tail, &self.vocab, &mut seq);
                add(&seq);
            }
        }
        Ok(out)
    }
}

/// The last character of `b` and its length in bytes, or `(None, 1)` when its
/// last bytes are not one whole character.
fn last_char(b: &[u8]) -> (Option<char>, usize) {
    for n in 1..=b.len().min(4) {
        if let Ok(s) = std::str::from_utf8(&b[b.len() - n..]) {
            let mut chars = s.chars();
            if let (Some(c), None) = (chars.next(), chars.next()) {
                return (Some(c), n);
            }
        }
    }
    (None, 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn core() -> CoreBpe {
        // bytes, then "ab", "abc", "b ", "  "
        let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        for t in [&b"ab"[..], b"abc", b"b ", b"  "] {
            tokens.push(t.to_vec());
        }
        CoreBpe::new(tokens, vec![], None).expect("a valid vocabulary")
    }

    #[test]
    fn tokens_starting_with_a_prefix_are_a_sorted_range() {
        let c = core();
        let ab: Vec<&[u8]> = c
            .tokens_starting_with(b"ab")
            .iter()
            .map(|&r| c.vocab().token(r).unwrap_or_default())
            .collect();
        assert_eq!(ab, vec![&b"ab"[..], b"abc"]);
        assert_eq!(c.tokens_starting_with(b"\xff"), &[255]);
        assert!(c.tokens_starting_with(b"zz").is_empty());
    }

    #[test]
    fn completions_cover_the_unstable_bytes_once_each() {
        let c = core();
        let got = c.unstable_completions(b"ab").expect("encodes");
        // the tokens starting with "ab"; "a" + each token starting with "b"
        // ("b", "b ") merges "ab" first and is cut there: [256] again, kept once
        assert_eq!(got, [vec![256], vec![257]]);
        let unique: FxHashSet<_> = got.iter().collect();
        assert_eq!(unique.len(), got.len());
        for seq in &got {
            let bytes: Vec<u8> = seq
                .iter()
                .flat_map(|&r| c.vocab().token(r).unwrap_or_default().to_vec())
                .collect();
            assert!(bytes.starts_with(b"ab"), "{seq:?}");
        }
        // a whitespace end: the bytes before it and the space, apart
        assert!(c
            .unstable_completions(b"a ")
            .expect("encodes")
            .contains(&vec![b'a' as Rank, b' ' as Rank]));
        assert!(c.unstable_completions(b"").expect("encodes").is_empty());
    }

    #[test]
    fn last_char_of_utf8_and_of_broken_bytes() {
        assert_eq!(last_char("a\u{3000}".as_bytes()), (Some('\u{3000}'), 3));
        assert_eq!(last_char(b"a\xe3\x80"), (None, 1));
        assert_eq!(last_char(b" "), (Some(' '), 1));
    }
}
