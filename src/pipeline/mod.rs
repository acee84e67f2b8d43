//! A Hugging Face `tokenizer.json` pipeline for byte-level BPE models, with
//! `tokenizers`' semantics end to end:
//!
//! 1. the raw text is cut at added tokens with `normalized: false` ([`added`]);
//! 2. each text segment is normalized ([`normalize`]) and cut at the added
//!    tokens with `normalized: true`;
//! 3. each remaining segment runs through the pre-tokenizer stages
//!    ([`pretokenize`]), each stage re-splitting every piece;
//! 4. each piece's bytes go through the BPE model ([`model`]: merges by pair
//!    rank, `ignore_merges`, unknown bytes dropped);
//! 5. with `add_special_tokens`, the post-processor's ids go before and after.
//!
//! Decoding is `tokenizers`' `ByteLevel` decoder: a token whose characters are
//! all in GPT-2's byte alphabet is those bytes, any other token its UTF-8.
//! Parsing the file and refusing what is not supported is the Python side's
//! job; this module takes the components already checked.

pub mod added;
pub mod file;
pub mod model;
pub mod normalize;
pub mod pretokenize;

use std::borrow::Cow;
use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::encode::cache::{with_thread_cache, Part, PieceCache, SeedCell, Spans};
use crate::error::{Error, Result};
use crate::pretok::{Named, Pretokenizer, Scanner};
use crate::{Rank, SpanSink};

pub use added::{AddedSet, AddedToken, Segment};
pub use model::Model;
pub use normalize::Normalizer;
pub use pretokenize::{Behavior, Stage};

/// The whole encoder of a `tokenizer.json`.
#[derive(Debug)]
pub struct Pipeline {
    raw_added: AddedSet,
    normalized_added: AddedSet,
    normalizers: Vec<Normalizer>,
    stages: Vec<Stage>,
    model: Model,
    /// Ids the post-processor puts before / after a single sequence.
    prefix: Vec<Rank>,
    suffix: Vec<Rank>,
    /// Decoded bytes of every id (`None`: no token has that id).
    decode: Vec<Option<Box<[u8]>>>,
    /// The stage whose spans are the pieces, when the pre-tokenizer is that
    /// one stage (the others, if any, change nothing): the text then goes
    /// from the scanner straight into the piece cache.
    span_stage: Option<usize>,
    /// The span stage's scanner when it finds the normalized added tokens
    /// that are runs of spaces itself (GPT-2's pattern, GPT-NeoX's runs), with
    /// those tokens' ids and the other normalized added tokens.
    space_runs: Option<SpaceRuns>,
    /// The seed of this pipeline's piece caches ([`Model::seed`]), built on
    /// first use; the caches are the rank encoder's
    /// ([`crate::encode::cache`]), one per thread.
    seed: SeedCell,
}

/// Pieces already cut (by stages that edit the text or re-split pieces), for
/// the piece cache.
struct Listed<'a>(&'a [(usize, usize)]);

impl Spans for Listed<'_> {
    fn for_each_span<F: SpanSink>(&self, _text: &str, mut f: F) -> Result<()> {
        for &(s, e) in self.0 {
            f.span(s, e);
        }
        Ok(())
    }
}

/// GPT-2's scanner that cuts runs of spaces as added tokens in the same walk
/// ([`Scanner::for_each_span_cut`]), and the other normalized added tokens.
#[derive(Debug)]
struct SpaceRuns {
    scanner: Scanner,
    ids: Vec<Rank>,
    rest: AddedSet,
}

impl SpaceRuns {
    /// When the span stage runs GPT-2's scanner and `added` allows it
    /// ([`AddedSet::split_space_runs`]).
    fn new(stage: Option<&Pretokenizer>, added: &AddedSet) -> Option<Self> {
        let scanner = stage?.scanner().filter(|s| s.named() == Named::Gpt2)?;
        let (ids, rest) = added.split_space_runs(crate::pretok::MAX_SPACE_RUN - 1)?;
        Some(SpaceRuns { scanner, ids, rest })
    }
}

impl Spans for &SpaceRuns {
    #[inline]
    fn for_each_span<F: SpanSink>(&self, text: &str, f: F) -> Result<()> {
        self.scanner
            .for_each_span_cut(text, &self.ids, f)
            .ok_or_else(|| Error::vocab("the runs of spaces do not fit GPT-2's scanner"))
    }
}

impl Spans for &Pretokenizer {
    #[inline]
    fn for_each_span<F: SpanSink>(&self, text: &str, f: F) -> Result<()> {
        Pretokenizer::for_each_span(self, text, f)
    }
}

/// What a [`Pipeline`] is made of.
pub struct Parts {
    pub raw_added: Vec<AddedToken>,
    pub normalized_added: Vec<AddedToken>,
    pub normalizers: Vec<Normalizer>,
    pub stages: Vec<Stage>,
    pub model: Model,
    pub prefix: Vec<Rank>,
    pub suffix: Vec<Rank>,
    pub decode: Vec<Option<Box<[u8]>>>,
}

/// GPT-2's byte alphabet: the character standing for each byte.
pub fn byte_char(b: u8) -> char {
    match b {
        b'!'..=b'~' | 0xA1..=0xAC | 0xAE..=0xFF => b as char,
        _ => {
            // the other 68 bytes, in byte order, map to U+0100 onwards
            let below = (0..b)
                .filter(|&x| !matches!(x, b'!'..=b'~' | 0xA1..=0xAC | 0xAE..=0xFF))
                .count() as u32;
            char::from_u32(0x100 + below).unwrap_or('\u{100}')
        }
    }
}

/// The bytes of a byte-level string, or `None` when a character is not in
/// the byte alphabet.
pub fn byte_level_bytes(s: &str) -> Option<Vec<u8>> {
    static TABLE: std::sync::OnceLock<FxHashMap<char, u8>> = std::sync::OnceLock::new();
    let t = TABLE.get_or_init(|| (0..=255u8).map(|b| (byte_char(b), b)).collect());
    s.chars().map(|c| t.get(&c).copied()).collect()
}

impl Pipeline {
    /// Which engine runs each pre-tokenizer stage ([`Stage::path`]).
    pub fn stage_paths(&self) -> Vec<String> {
        let mut paths: Vec<String> = self.stages.iter().map(Stage::path).collect();
        if let (Some(i), Some(_)) = (self.span_stage, &self.space_runs) {
            if let Some(p) = paths.get_mut(i) {
                p.push_str(", added runs of spaces cut in the same walk");
            }
        }
        paths
    }

    /// Builds the pipeline (compiles the added-token automata).
    pub fn new(parts: Parts) -> Result<Self> {
        let span_stage = pretokenize::span_stage(&parts.stages);
        let normalized_added = AddedSet::new(parts.normalized_added)?;
        let stage = span_stage.and_then(|i| parts.stages.get(i)?.spans());
        let space_runs = SpaceRuns::new(stage, &normalized_added);
        Ok(Pipeline {
            raw_added: AddedSet::new(parts.raw_added)?,
            normalized_added,
            space_runs,
            normalizers: parts.normalizers,
            stages: parts.stages,
            model: parts.model,
            prefix: parts.prefix,
            suffix: parts.suffix,
            decode: parts.decode,
            span_stage,
            seed: SeedCell::default(),
        })
    }

    /// Number of ids (one more than the largest).
    pub fn n_vocab(&self) -> usize {
        self.decode.len()
    }

    /// The ids of `text`; with `add_special_tokens`, the post-processor's;
    /// with `specials` false, special added tokens are not looked for.
    pub fn encode(
        &self,
        text: &str,
        add_special_tokens: bool,
        specials: bool,
    ) -> Result<Vec<Rank>> {
        let seed = self.seed.get_or(|| self.model.seed());
        let mut out = Vec::with_capacity(text.len() / 3 + 8);
        if add_special_tokens {
            out.extend_from_slice(&self.prefix);
        }
        with_thread_cache(seed, |cache| {
            self.encode_into(text, specials, cache, seed, &mut out)
        })?;
        if add_special_tokens {
            out.extend_from_slice(&self.suffix);
        }
        Ok(out)
    }

    fn encode_into(
        &self,
        text: &str,
        specials: bool,
        cache: &mut PieceCache,
        seed: &Arc<crate::encode::cache::Seed>,
        out: &mut Vec<Rank>,
    ) -> Result<()> {
        self.raw_added.split(text, specials, |seg| match seg {
            Segment::Token(id, ..) => {
                out.push(id);
                Ok(())
            }
            Segment::Text(s, e) => {
                let mut t: Cow<str> = Cow::Borrowed(&text[s..e]);
                for n in &self.normalizers {
                    t = n.apply(t)?;
                }
                // the stretches between added tokens and the tokens' ids go
                // through one batch of the piece cache; GPT-NeoX's runs of
                // spaces are cut by the scanner's walk itself
                if let Some(runs) = &self.space_runs {
                    return self
                        .encode_stretches(&runs, &runs.rest, &t, specials, cache, seed, out);
                }
                if let Some(re) = self.span_stage.and_then(|i| self.stages[i].spans()) {
                    let added = &self.normalized_added;
                    return self.encode_stretches(&re, added, &t, specials, cache, seed, out);
                }
                self.normalized_added.split(&t, specials, |seg| match seg {
                    Segment::Token(id, ..) => {
                        out.push(id);
                        Ok(())
                    }
                    Segment::Text(a, b) => self.encode_segment(&t[a..b], cache, seed, out),
                })
            }
        })
    }

    /// `t` cut at `added`'s tokens, each stretch split by `spans` alone, all
    /// through one batch of the piece cache ([`PieceCache::encode_parts`]).
    #[allow(clippy::too_many_arguments)]
    fn encode_stretches<S: Spans>(
        &self,
        spans: &S,
        added: &AddedSet,
        t: &str,
        specials: bool,
        cache: &mut PieceCache,
        seed: &Arc<crate::encode::cache::Seed>,
        out: &mut Vec<Rank>,
    ) -> Result<()> {
        cache.encode_parts(seed, &self.model, spans, t, out, |put| {
            added.split(t, specials, |seg| match seg {
                Segment::Token(id, a, b) => put(Part::Id(a, b, id)),
                Segment::Text(a, b) => put(Part::Text(a, b)),
            })
        })
    }

    /// One stretch of text between added tokens, through the stages that
    /// edit the text or re-split pieces (the span stage alone goes through
    /// [`PieceCache::encode_parts`] instead).
    fn encode_segment(
        &self,
        seg: &str,
        cache: &mut PieceCache,
        seed: &Arc<crate::encode::cache::Seed>,
        out: &mut Vec<Rank>,
    ) -> Result<()> {
        let mut buf = seg.to_string();
        let mut pieces = vec![(0, buf.len())];
        for st in &self.stages {
            pieces = st.apply(&mut buf, pieces)?;
        }
        cache.encode_text(seed, &self.model, &Listed(&pieces), &buf, out, |_| {})
    }

    /// The bytes of `ids` (`tokenizers`' `ByteLevel` decoder, before its
    /// UTF-8 step). Errors on an id no token has.
    pub fn decode_bytes(&self, ids: &[Rank]) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(ids.len() * 4);
        for &id in ids {
            match self.decode.get(id as usize) {
                Some(Some(b)) => out.extend_from_slice(b),
                _ => return Err(Error::UnknownId { id }),
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_alphabet() {
        assert_eq!(byte_char(b'a'), 'a');
        assert_eq!(byte_char(b' '), 'Ġ');
        assert_eq!(byte_char(b'\n'), 'Ċ');
        assert_eq!(byte_char(0xAD), 'Ń');
        assert_eq!(byte_level_bytes("Ġhi"), Some(b" hi".to_vec()));
        assert_eq!(byte_level_bytes("<|x y|>"), None);
    }
}
