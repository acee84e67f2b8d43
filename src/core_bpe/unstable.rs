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
//!
//! The unstable bytes are found as tiktoken finds them: the last pre-token
//! piece of the text after its last special token, extended back over the
//! whitespace-only tokens before it when it is whitespace itself.

use rustc_hash::FxHashSet;

use super::{CoreBpe, Sink, SpecialPolicy};
use crate::encode::cache::PieceCache;
use crate::encode::encode_piece;
use crate::error::Result;
use crate::Rank;

/// The mergeable tokens' ranks in order of their bytes (gaps and the ranks
/// a special token fills with its own text left out), and where the tokens
/// of each first byte begin among them (`first[b]..first[b + 1]`).
#[derive(Debug, Clone)]
pub(super) struct ByBytes {
    ranks: Vec<Rank>,
    first: [u32; 257],
}

/// The ids of a run, and where its last plain-text segment begins in them.
/// The run ends with that segment (empty after a final special token), so
/// its length places it in the text.
struct LastSegment {
    ids: Vec<Rank>,
    at: usize,
    len: usize,
}

impl Sink for LastSegment {
    fn ordinary(&mut self, core: &CoreBpe, cache: &mut PieceCache, text: &str) -> Result<()> {
        self.at = self.ids.len();
        self.len = text.len();
        self.ids.ordinary(core, cache, text)
    }
    fn special(&mut self, id: Rank) {
        self.ids.push(id);
        self.at = self.ids.len();
        self.len = 0;
    }
}

/// True when every byte of `token` is a space, newline or tab (tiktoken's test).
fn all_space(token: &[u8]) -> bool {
    token.iter().all(|b| matches!(b, b' ' | b'\n' | b'\t'))
}

impl CoreBpe {
    /// tiktoken's `encode_with_unstable`: the ids that no continuation of
    /// `text` can change, and the candidate ids of the rest (see the module
    /// documentation). Same errors as [`Self::encode`].
    pub fn encode_with_unstable(
        &self,
        text: &str,
        policy: &SpecialPolicy,
    ) -> Result<(Vec<Rank>, Vec<Vec<Rank>>)> {
        let mut run = LastSegment {
            ids: Vec::with_capacity(super::ids_room(text)),
            at: 0,
            len: 0,
        };
        self.run(text, policy, &mut run)?;
        let LastSegment { mut ids, at, len } = run;
        let unstable = self.split_unstable(&mut ids, at, &text[text.len() - len..])?;
        Ok((ids, self.unstable_completions(&unstable)?))
    }

    /// tiktoken's `_encode_bytes`: bytes that need not be UTF-8. Their valid
    /// UTF-8 prefix is encoded as plain text; its unstable end and the rest of
    /// the bytes are then merged as one piece.
    pub fn encode_bytes(&self, data: &[u8]) -> Result<Vec<Rank>> {
        let valid = match std::str::from_utf8(data) {
            Ok(text) => return self.encode_ordinary(text),
            Err(e) => e.valid_up_to(),
        };
        let (head, rest) = data.split_at(valid);
        // `valid_up_to` is a character boundary
        let text = std::str::from_utf8(head).unwrap_or_default();
        let mut ids = self.encode_ordinary(text)?;
        let mut piece = self.split_unstable(&mut ids, 0, text)?;
        piece.extend_from_slice(rest);
        encode_piece(&piece, &self.vocab, &mut ids);
        Ok(ids)
    }

    /// Cuts `ids` before its unstable end and returns that end's bytes. The ids
    /// from `at` on are the encoding of `tail`, the text after the last special
    /// token.
    fn split_unstable(&self, ids: &mut Vec<Rank>, at: usize, tail: &str) -> Result<Vec<u8>> {
        let mut last = None;
        self.pretok
            .for_each_span(tail, |s, e| last = Some((s, e)))?;
        let Some((s, e)) = last else {
            return Ok(Vec::new());
        };
        // the piece's ids end the run: the last ids whose bytes make up its
        // e - s bytes (counted back, not merged again)
        let width = |id: Rank| self.token_bytes(id).map_or(0, <[u8]>::len);
        let (mut n, mut covered) = (0, 0);
        while covered < e - s && n < ids.len() - at {
            covered += width(ids[ids.len() - 1 - n]);
            n += 1;
        }
        let space = |id: Rank| self.token_bytes(id).is_ok_and(all_space);
        if n > 0 && space(ids[ids.len() - n]) {
            while n < ids.len() && space(ids[ids.len() - n - 1]) {
                n += 1;
            }
        }
        let cut = ids.len() - n;
        let unstable = self.decode_bytes(&ids[cut..])?;
        ids.truncate(cut);
        Ok(unstable)
    }

    /// The mergeable tokens in order of their bytes, built once.
    fn tokens_by_bytes(&self) -> &ByBytes {
        self.by_bytes.get_or_init(|| {
            let v = &self.vocab;
            let mut ranks: Vec<Rank> = (0..v.len() as Rank)
                .filter(|&r| {
                    v.token(r).is_some_and(|t| !t.is_empty())
                        && !self.special_decoder.contains_key(&r)
                })
                .collect();
            ranks.sort_unstable_by(|&a, &b| v.token(a).cmp(&v.token(b)));
            let mut first = [0u32; 257];
            for &r in &ranks {
                if let Some(&b) = v.token(r).and_then(<[u8]>::first) {
                    first[usize::from(b) + 1] += 1;
                }
            }
            for i in 1..257 {
                first[i] += first[i - 1];
            }
            ByBytes { ranks, first }
        })
    }

    /// The ranks of the mergeable tokens that start with `prefix`.
    fn tokens_starting_with(&self, prefix: &[u8]) -> &[Rank] {
        let ByBytes { ranks, first } = self.tokens_by_bytes();
        let Some(&b) = prefix.first() else {
            return ranks;
        };
        // the tokens that start with the prefix's first byte, then a binary
        // search among them only
        let b = usize::from(b);
        let same_first = &ranks[first[b] as usize..first[b + 1] as usize];
        let bytes = |r: &Rank| self.vocab.token(*r).unwrap_or_default();
        let lo = same_first.partition_point(|r| bytes(r) < prefix);
        let n = same_first[lo..].partition_point(|r| bytes(r).starts_with(prefix));
        &same_first[lo..lo + n]
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
        assert_eq!(c.tokens_starting_with(b"").len(), 260);
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
    fn with_no_pattern_the_whole_text_is_unstable() {
        let c = core();
        let (stable, completions) = c
            .encode_with_unstable("abc", &c.policy_default())
            .expect("encodes");
        assert!(stable.is_empty());
        assert!(completions.contains(&vec![257]), "{completions:?}");
        // invalid UTF-8 joins the unstable end as one piece
        assert_eq!(c.encode_bytes(b"ab\xff").expect("encodes"), [256, 255]);
        assert_eq!(c.encode_bytes(b"\xffab").expect("encodes"), [255, 256]);
    }

    #[test]
    fn last_char_of_utf8_and_of_broken_bytes() {
        assert_eq!(last_char("a\u{3000}".as_bytes()), (Some('\u{3000}'), 3));
        assert_eq!(last_char(b"a\xe3\x80"), (None, 1));
        assert_eq!(last_char(b" "), (Some(' '), 1));
    }
}
