//! Whole texts -> ids: the [`CoreBpe`] encoder (pre-tokenizer, vocabulary and
//! special tokens together).
//!
//! Layout: this file holds the encoder and its text loop; [`special`] the
//! special-token policy (tiktoken's allowed / disallowed semantics);
//! [`decode`] ids -> bytes; [`batch`] many texts on the [`crate::parallel`]
//! pools; [`threads`] one long text on several threads; [`budget`] counting
//! with a limit and exact truncation; [`offsets`] the span of text each token
//! covers; [`unstable`] tiktoken's `encode_with_unstable` completions. One
//! piece -> ids is [`crate::encode`].

pub mod batch;
pub mod budget;
pub mod decode;
mod floor;
pub mod head;
pub mod offsets;
mod prefix_counts;
pub mod special;
pub mod threads;
pub mod unstable;

use aho_corasick::{AhoCorasick, MatchKind};
use rustc_hash::FxHashMap;

use crate::encode::cache::{self, CacheStats, PieceCache, Spans};
use crate::error::{Error, Result};
use crate::pretok::{Named, Pretokenizer};
use crate::vocab::Vocab;
use crate::Rank;

pub use special::SpecialPolicy;

/// The ids to reserve for encoding `text`: one per three bytes. English and
/// code take 0.22-0.30 ids per byte, so a quarter would be outgrown near the
/// end of most texts and the whole output copied once more by the
/// reallocation; Korean (0.3-0.5 with cl100k) may still grow once. The
/// reserve is address space: pages never written are never backed.
pub(crate) fn ids_room(text: &str) -> usize {
    ids_room_bytes(text.len())
}

/// [`ids_room`] for `bytes` bytes of text.
pub(crate) fn ids_room_bytes(bytes: usize) -> usize {
    bytes / 3 + 16
}

/// Receives the output of an encoding run: ids, or only their number.
trait Sink {
    fn ordinary(&mut self, core: &CoreBpe, cache: &mut PieceCache, text: &str) -> Result<()>;
    fn special(&mut self, id: Rank);
}

impl Sink for Vec<Rank> {
    #[inline]
    fn ordinary(&mut self, core: &CoreBpe, cache: &mut PieceCache, text: &str) -> Result<()> {
        cache.encode_text(core.seed(), &core.vocab, &core.pretok, text, self, |_| {})
    }
    #[inline]
    fn special(&mut self, id: Rank) {
        self.push(id);
    }
}

/// Counts tokens; the ids of each batch of pieces are dropped once counted.
struct TokenCount {
    n: usize,
    scratch: Vec<Rank>,
}

impl Sink for TokenCount {
    fn ordinary(&mut self, core: &CoreBpe, cache: &mut PieceCache, text: &str) -> Result<()> {
        let TokenCount { n, scratch } = self;
        cache.encode_text(core.seed(), &core.vocab, &core.pretok, text, scratch, |v| {
            *n += v.len();
            v.clear();
        })
    }
    fn special(&mut self, _id: Rank) {
        self.n += 1;
    }
}

impl Spans for Pretokenizer {
    #[inline]
    fn for_each_span<F: crate::SpanSink>(&self, text: &str, f: F) -> Result<()> {
        Pretokenizer::for_each_span(self, text, f)
    }
}

/// A complete encoder: vocabulary, pre-tokenizer and special tokens.
#[derive(Debug, Clone)]
pub struct CoreBpe {
    vocab: Vocab,
    pretok: Pretokenizer,
    specials: FxHashMap<String, Rank>,
    special_names: Vec<String>,
    special_ids: Vec<Rank>,
    /// Leftmost-longest automaton over all special tokens: where to split.
    special_ac: Option<AhoCorasick>,
    /// Standard automaton over all special tokens: reports overlapping matches,
    /// so a disallowed token hidden inside another match is still found.
    special_overlap: Option<AhoCorasick>,
    special_decoder: FxHashMap<Rank, Vec<u8>>,
    /// Per mergeable token, packed in 16 bits for [`offsets`]' spans: byte
    /// length, character starts, whether its first byte continues a
    /// character (see `offsets::pack_info`). 400 KB for o200k_base, read once
    /// per token where the vocabulary's offsets would miss the cache.
    token_info: std::sync::OnceLock<Vec<u16>>,
    /// The mergeable tokens' ranks sorted by their bytes, indexed by first
    /// byte, for [`unstable`]'s prefix searches; built on first use.
    by_bytes: std::sync::OnceLock<unstable::ByBytes>,
    /// The vocabulary part of every piece cache of this encoder, built on
    /// first use (see [`cache`]).
    seed: cache::SeedCell,
}

impl CoreBpe {
    /// Builds an encoder. `tokens` are the mergeable tokens in rank order;
    /// special tokens must not collide with mergeable ranks.
    pub fn new(
        tokens: Vec<Vec<u8>>,
        specials: Vec<(String, Rank)>,
        pattern: Option<&str>,
    ) -> Result<Self> {
        Self::from_vocab(Vocab::new(tokens)?, specials, pattern)
    }

    /// Builds an encoder around an existing vocabulary (e.g. from
    /// [`Vocab::from_tiktoken`]).
    pub fn from_vocab(
        mut vocab: Vocab,
        specials: Vec<(String, Rank)>,
        pattern: Option<&str>,
    ) -> Result<Self> {
        let pretok = Pretokenizer::new(pattern)?;
        if pretok.named() == Some(Named::Superword) {
            // spans of words: long pieces merge in two stages (encode::staged)
            vocab.set_staged();
        }
        let mut map = FxHashMap::default();
        let mut special_decoder = FxHashMap::default();
        for (s, r) in &specials {
            if s.is_empty() {
                return Err(Error::vocab("a special token is the empty string"));
            }
            // a special token may also sit on a rank that holds its own text
            // (a "filler" for a rank the vocabulary leaves out, like a gap);
            // decoding and single-token lookup then agree with the special. A gap (no
            // token at the id, see `Vocab::new`) may hold a special token too.
            let filler = vocab.token(*r) == Some(s.as_bytes());
            if vocab.token(*r).is_some() && !filler {
                return Err(Error::vocab_at(
                    *r,
                    format!("special token {s:?} has id {r}, which is a mergeable token's id"),
                ));
            }
            if map.insert(s.clone(), *r).is_some() {
                return Err(Error::vocab_at(
                    *r,
                    format!("special token {s:?} is listed twice"),
                ));
            }
            // two names may share an id (o200k_harmony: `<|endofprompt|>` and
            // `<|reserved_200018|>`, as tiktoken allows); decoding gives the first
            // in the given order (rank, then name)
            special_decoder
                .entry(*r)
                .or_insert_with(|| s.as_bytes().to_vec());
        }
        let special_names: Vec<String> = specials.iter().map(|(s, _)| s.clone()).collect();
        let special_ids: Vec<Rank> = specials.iter().map(|(_, r)| *r).collect();
        let build = |kind: MatchKind| -> Result<Option<AhoCorasick>> {
            if special_names.is_empty() {
                return Ok(None);
            }
            AhoCorasick::builder()
                .match_kind(kind)
                .build(&special_names)
                .map(Some)
                .map_err(|e| Error::vocab(e.to_string()))
        };
        let special_ac = build(MatchKind::LeftmostLongest)?;
        let special_overlap = build(MatchKind::Standard)?;
        Ok(CoreBpe {
            vocab,
            pretok,
            specials: map,
            special_names,
            special_ids,
            special_ac,
            special_overlap,
            special_decoder,
            token_info: std::sync::OnceLock::new(),
            by_bytes: std::sync::OnceLock::new(),
            seed: cache::SeedCell::default(),
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
    /// ordinary text).
    ///
    /// Complexity: linear pre-tokenization plus O(p log p) per piece of length p.
    pub fn encode_ordinary(&self, text: &str) -> Result<Vec<Rank>> {
        let mut out = Vec::with_capacity(ids_room(text));
        cache::with_thread_cache(self.seed(), |c| out.ordinary(self, c, text))?;
        Ok(out)
    }

    /// Encodes text, turning the text of allowed special tokens into their ids
    /// and failing with [`Error::DisallowedSpecial`] when a disallowed one occurs
    /// anywhere (tiktoken's semantics). Same complexity as [`Self::encode_ordinary`].
    pub fn encode(&self, text: &str, policy: &SpecialPolicy) -> Result<Vec<Rank>> {
        let mut out = Vec::with_capacity(ids_room(text));
        self.run(text, policy, &mut out)?;
        Ok(out)
    }

    /// Appends the encoding of `text` to `out` (see [`Self::encode`]).
    pub fn encode_into(
        &self,
        text: &str,
        policy: &SpecialPolicy,
        out: &mut Vec<Rank>,
    ) -> Result<()> {
        self.run(text, policy, out)
    }

    /// The number of tokens [`Self::encode`] would return, without storing them.
    /// Memory: O(longest piece).
    pub fn count(&self, text: &str, policy: &SpecialPolicy) -> Result<usize> {
        let mut c = TokenCount {
            n: 0,
            scratch: Vec::new(),
        };
        self.run(text, policy, &mut c)?;
        Ok(c.n)
    }

    /// The shared seed of this encoder's piece caches.
    #[inline]
    fn seed(&self) -> &std::sync::Arc<cache::Seed> {
        self.seed.get(&self.vocab)
    }

    /// A piece cache of this encoder owned by the caller: a worker thread
    /// that keeps one across calls and passes it to
    /// [`Self::encode_with_cache`] keeps its warm pieces, within the byte
    /// budget ([`cache::budget`]), without thread-local storage. Calls without
    /// one use the calling thread's cache (kept across calls too).
    pub fn new_cache(&self) -> PieceCache {
        PieceCache::new(self.seed())
    }

    /// [`Self::encode_into`] through `cache` instead of this thread's cache.
    /// A cache made by another encoder is rebuilt for this one first, so the
    /// ids never come from the wrong vocabulary.
    pub fn encode_with_cache(
        &self,
        text: &str,
        policy: &SpecialPolicy,
        cache: &mut PieceCache,
        out: &mut Vec<Rank>,
    ) -> Result<()> {
        self.run_with(text, policy, cache, out)
    }

    /// Sizes of the calling thread's piece cache for this encoder, if it has one.
    pub fn thread_cache_stats(&self) -> Option<CacheStats> {
        cache::thread_cache_stats(self.seed())
    }

    fn run<S: Sink>(&self, text: &str, policy: &SpecialPolicy, sink: &mut S) -> Result<()> {
        cache::with_thread_cache(self.seed(), |c| self.run_with(text, policy, c, sink))
    }

    fn run_with<S: Sink>(
        &self,
        text: &str,
        policy: &SpecialPolicy,
        cache: &mut PieceCache,
        sink: &mut S,
    ) -> Result<()> {
        if policy.any_disallowed {
            self.check_disallowed(text, policy)?;
        }
        let ac = match &self.special_ac {
            Some(ac) if policy.any_allowed => ac,
            _ => return sink.ordinary(self, cache, text),
        };
        // tiktoken's loop: find the next special token; split there when it is
        // allowed, else keep searching one character past its start.
        let mut start = 0;
        let mut search = 0;
        while search <= text.len() {
            let Some(m) = ac.find(&text[search..]) else {
                break;
            };
            let (s, e, p) = (m.start() + search, m.end() + search, m.pattern().as_usize());
            if policy.allowed.get(p).copied().unwrap_or(false) {
                sink.ordinary(self, cache, &text[start..s])?;
                sink.special(self.special_ids[p]);
                start = e;
                search = e;
            } else {
                search = s + text[s..].chars().next().map_or(1, char::len_utf8);
            }
        }
        sink.ordinary(self, cache, &text[start..])
    }

    /// The id of a byte string that is one token (mergeable or special).
    pub fn single_token(&self, bytes: &[u8]) -> Option<Rank> {
        self.vocab.rank(bytes).or_else(|| {
            std::str::from_utf8(bytes)
                .ok()
                .and_then(|s| self.specials.get(s).copied())
        })
    }

    /// One more than the largest id (mergeable or special).
    pub fn n_vocab(&self) -> usize {
        let top = self
            .special_ids
            .iter()
            .map(|&r| r as usize + 1)
            .max()
            .unwrap_or(0);
        top.max(self.vocab.len())
    }

    /// The bytes of one id (mergeable or special).
    pub fn token_bytes(&self, id: Rank) -> Result<&[u8]> {
        self.vocab
            .token(id)
            .or_else(|| self.special_decoder.get(&id).map(|v| v.as_slice()))
            .ok_or(Error::UnknownId { id })
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
        let pol = bpe.policy(&[] as &[&str], &["<|eot|>"]);
        assert!(matches!(
            bpe.encode("a<|eot|>", &pol),
            Err(Error::DisallowedSpecial { .. })
        ));
        let pol = bpe.policy(&["<|eot|>"], &[]);
        assert_eq!(bpe.encode("a<|eot|>b", &pol).unwrap(), vec![97, 256, 98]);
        assert_eq!(bpe.count("a<|eot|>b", &pol).unwrap(), 3);
    }

    #[test]
    fn disallowed_inside_an_allowed_match_is_found() {
        let specials = vec![("<a>".to_string(), 256), ("<a>x".to_string(), 257)];
        let bpe = CoreBpe::new(byte_vocab_plus(&[]), specials, None).unwrap();
        let pol = bpe.policy(&["<a>x"], &["<a>"]);
        assert!(
            matches!(bpe.encode("<a>x", &pol), Err(Error::DisallowedSpecial { token }) if token == "<a>")
        );
    }
}
