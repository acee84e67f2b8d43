//! Encoding: text -> pieces (pre-tokenization) -> bytes -> ranks by repeated
//! lowest-rank merging, with special tokens found first.

use aho_corasick::{AhoCorasick, MatchKind};
use rustc_hash::{FxHashMap, FxHashSet};

use crate::error::{Error, Result};
use crate::pretok::Pretokenizer;
use crate::vocab::Vocab;
use crate::Rank;

// ---------------------------------------------------------------- Encoding

/// Encodes one piece by merge rank: repeatedly merge the adjacent pair whose
/// concatenated bytes have the lowest rank (leftmost on ties) until no adjacent
/// pair is a token. A piece that is itself a token maps straight to its rank.
///
/// Appends the ranks to `out`.
pub fn byte_pair_encode(piece: &[u8], vocab: &Vocab, out: &mut Vec<Rank>) {
    if let Some(r) = vocab.rank(piece) {
        out.push(r);
        return;
    }
    if piece.len() == 1 {
        // every single byte is a token (checked when the vocabulary was built)
        out.extend(vocab.rank(piece));
        return;
    }
    // parts[i] = start offset of part i; the last entry is piece.len()
    let mut parts: Vec<usize> = (0..=piece.len()).collect();
    loop {
        let mut best: Option<(Rank, usize)> = None;
        for i in 0..parts.len().saturating_sub(2) {
            if let Some(r) = vocab.rank(&piece[parts[i]..parts[i + 2]]) {
                if best.is_none_or(|(b, _)| r < b) {
                    best = Some((r, i));
                }
            }
        }
        match best {
            Some((_, i)) => {
                parts.remove(i + 1);
            }
            None => break,
        }
    }
    for w in parts.windows(2) {
        out.extend(vocab.rank(&piece[w[0]..w[1]]));
    }
}

/// Recovers the merge list of a rank-ordered vocabulary (as tiktoken files hold
/// no merges): for each multi-byte token, encode its bytes using only the tokens of
/// lower rank; a consistent vocabulary yields exactly two parts, the merged pair.
///
/// Errors naming the token when it does not split into two lower-ranked tokens.
/// Cost: one bounded-rank encoding per token.
pub fn derive_merges(vocab: &Vocab) -> Result<Vec<(Rank, Rank)>> {
    let mut out = Vec::new();
    for (rank, tok) in vocab.tokens().iter().enumerate() {
        if tok.len() < 2 {
            continue;
        }
        let rank = rank as Rank;
        let mut parts: Vec<usize> = (0..=tok.len()).collect();
        loop {
            let mut best: Option<(Rank, usize)> = None;
            for i in 0..parts.len().saturating_sub(2) {
                if let Some(r) = vocab.rank(&tok[parts[i]..parts[i + 2]]) {
                    if r < rank && best.is_none_or(|(b, _)| r < b) {
                        best = Some((r, i));
                    }
                }
            }
            match best {
                Some((_, i)) => {
                    parts.remove(i + 1);
                }
                None => break,
            }
        }
        if parts.len() != 3 {
            return Err(Error::InvalidVocab(format!(
                "token {rank} ({tok:?}) is not the merge of two lower-ranked tokens"
            )));
        }
        let left = vocab.rank(&tok[..parts[1]]);
        let right = vocab.rank(&tok[parts[1]..]);
        match (left, right) {
            (Some(a), Some(b)) => out.push((a, b)),
            _ => {
                return Err(Error::InvalidVocab(format!(
                    "token {rank} has no valid split"
                )))
            }
        }
    }
    Ok(out)
}

/// What to do with special-token text found in the input.
#[derive(Debug, Clone, Default)]
pub struct SpecialPolicy {
    /// Special tokens that are encoded as their id when their text appears.
    pub allowed: FxHashSet<String>,
    /// Special tokens whose text makes encoding fail with [`Error::DisallowedSpecial`].
    pub disallowed: FxHashSet<String>,
}

/// A complete encoder: vocabulary, pre-tokenizer and special tokens.
#[derive(Debug, Clone)]
pub struct CoreBpe {
    vocab: Vocab,
    pretok: Pretokenizer,
    specials: FxHashMap<String, Rank>,
    special_names: Vec<String>,
    special_ac: Option<AhoCorasick>,
    special_decoder: FxHashMap<Rank, Vec<u8>>,
}

impl CoreBpe {
    /// Builds an encoder. `tokens` are the mergeable tokens in rank order;
    /// special tokens must not collide with mergeable ranks.
    pub fn new(
        tokens: Vec<Vec<u8>>,
        specials: Vec<(String, Rank)>,
        pattern: Option<&str>,
    ) -> Result<Self> {
        let vocab = Vocab::new(tokens)?;
        let pretok = Pretokenizer::new(pattern)?;
        let mut map = FxHashMap::default();
        let mut special_decoder = FxHashMap::default();
        for (s, r) in &specials {
            if s.is_empty() {
                return Err(Error::InvalidVocab(
                    "a special token is the empty string".into(),
                ));
            }
            if (*r as usize) < vocab.len() {
                return Err(Error::InvalidVocab(format!(
                    "special token {s:?} has id {r}, which is a mergeable token's id"
                )));
            }
            if map.insert(s.clone(), *r).is_some() {
                return Err(Error::InvalidVocab(format!(
                    "special token {s:?} is listed twice"
                )));
            }
            if special_decoder.insert(*r, s.as_bytes().to_vec()).is_some() {
                return Err(Error::InvalidVocab(format!("special id {r} is used twice")));
            }
        }
        let special_names: Vec<String> = specials.iter().map(|(s, _)| s.clone()).collect();
        let special_ac = if special_names.is_empty() {
            None
        } else {
            Some(
                AhoCorasick::builder()
                    .match_kind(MatchKind::LeftmostLongest)
                    .build(&special_names)
                    .map_err(|e| Error::InvalidVocab(e.to_string()))?,
            )
        };
        Ok(CoreBpe {
            vocab,
            pretok,
            specials: map,
            special_names,
            special_ac,
            special_decoder,
        })
    }

    /// The vocabulary.
    pub fn vocab(&self) -> &Vocab {
        &self.vocab
    }

    /// The pre-tokenizer.
    pub fn pretokenizer(&self) -> &Pretokenizer {
        &self.pretok
    }

    /// Special tokens and their ids.
    pub fn specials(&self) -> &FxHashMap<String, Rank> {
        &self.specials
    }

    /// Encodes text with no special-token handling (special-token text is
    /// ordinary text). Linear in the text length apart from the merge step.
    pub fn encode_ordinary(&self, text: &str) -> Result<Vec<Rank>> {
        let mut out = Vec::with_capacity(text.len() / 3 + 1);
        self.encode_ordinary_into(text, &mut out)?;
        Ok(out)
    }

    fn encode_ordinary_into(&self, text: &str, out: &mut Vec<Rank>) -> Result<()> {
        self.pretok.for_each_piece(text, |piece| {
            byte_pair_encode(piece.as_bytes(), &self.vocab, out)
        })
    }

    /// Encodes text, turning the text of allowed special tokens into their ids
    /// and failing on disallowed ones (tiktoken's semantics).
    pub fn encode(&self, text: &str, policy: &SpecialPolicy) -> Result<Vec<Rank>> {
        let Some(ac) = &self.special_ac else {
            return self.encode_ordinary(text);
        };
        if !policy.disallowed.is_empty() {
            for m in ac.find_overlapping_iter_safe(text) {
                let name = &self.special_names[m];
                if policy.disallowed.contains(name) {
                    return Err(Error::DisallowedSpecial {
                        token: name.clone(),
                    });
                }
            }
        }
        let mut out = Vec::with_capacity(text.len() / 3 + 1);
        let mut start = 0;
        let mut search = 0;
        while search <= text.len() {
            let next = ac
                .find(&text[search..])
                .map(|m| (m.start() + search, m.end() + search, m.pattern().as_usize()));
            match next {
                Some((s, e, p)) if policy.allowed.contains(&self.special_names[p]) => {
                    self.encode_ordinary_into(&text[start..s], &mut out)?;
                    out.push(self.specials[&self.special_names[p]]);
                    start = e;
                    search = e;
                }
                Some((s, _, _)) => {
                    // not allowed: keep looking after the start of this match
                    search = s + text[s..].chars().next().map_or(1, |c| c.len_utf8());
                }
                None => break,
            }
        }
        self.encode_ordinary_into(&text[start..], &mut out)?;
        Ok(out)
    }

    /// The bytes of one id (mergeable or special).
    pub fn token_bytes(&self, id: Rank) -> Result<&[u8]> {
        self.vocab
            .token(id)
            .or_else(|| self.special_decoder.get(&id).map(|v| v.as_slice()))
            .ok_or(Error::UnknownId(id))
    }
}

trait FindAll {
    fn find_overlapping_iter_safe(&self, text: &str) -> Vec<usize>;
}

impl FindAll for AhoCorasick {
    /// Indices of every special token that occurs anywhere in `text`.
    fn find_overlapping_iter_safe(&self, text: &str) -> Vec<usize> {
        // Leftmost-longest automata cannot report overlapping matches; scanning
        // from each match start + 1 finds every occurrence start.
        let mut found = Vec::new();
        let mut at = 0;
        while at <= text.len() {
            match self.find(&text[at..]) {
                Some(m) => {
                    found.push(m.pattern().as_usize());
                    let s = at + m.start();
                    at = s + text[s..].chars().next().map_or(1, |c| c.len_utf8());
                }
                None => break,
            }
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn byte_vocab_plus(extra: &[&[u8]]) -> Vec<Vec<u8>> {
        let mut v: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        v.extend(extra.iter().map(|e| e.to_vec()));
        v
    }

    #[test]
    fn merges_lowest_rank_first() {
        let bpe = CoreBpe::new(byte_vocab_plus(&[b"ab", b"bc", b"abc"]), vec![], None).unwrap();
        // "ab" (256) beats "bc" (257), then "ab"+"c" = "abc" (258)
        assert_eq!(bpe.encode_ordinary("abc").unwrap(), vec![258]);
        assert_eq!(
            bpe.encode_ordinary("abcb").unwrap(),
            vec![258, b'b' as Rank]
        );
    }

    #[test]
    fn disallowed_special_is_an_error() {
        let bpe = CoreBpe::new(byte_vocab_plus(&[]), vec![("<|eot|>".into(), 256)], None).unwrap();
        let mut pol = SpecialPolicy::default();
        pol.disallowed.insert("<|eot|>".into());
        assert!(matches!(
            bpe.encode("a<|eot|>", &pol),
            Err(Error::DisallowedSpecial { .. })
        ));
        let mut pol = SpecialPolicy::default();
        pol.allowed.insert("<|eot|>".into());
        assert_eq!(bpe.encode("a<|eot|>b", &pol).unwrap(), vec![97, 256, 98]);
    }
}
