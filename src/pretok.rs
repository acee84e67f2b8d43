//! Pre-tokenization: splitting text into the pieces ("chunks") inside which BPE
//! merges happen. Merges never cross a piece boundary.
//!
//! The three named patterns are the exact regular expressions of tiktoken's
//! `gpt2`/`r50k_base`, `cl100k_base` and `o200k_base` encodings. Any other
//! pattern goes through `fancy_regex` (it needs look-ahead and possessive
//! quantifiers). `Pretokenizer::Whole` does no splitting at all.

use std::sync::OnceLock;

use crate::error::{Error, Result};

/// tiktoken's `r50k_pat_str` (used by gpt2 / r50k_base / p50k_base).
pub const GPT2_PATTERN: &str =
    r"'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s";

/// tiktoken's cl100k_base pattern.
pub const CL100K_PATTERN: &str = r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s";

/// tiktoken's o200k_base pattern.
pub const O200K_PATTERN: &str = concat!(
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    "|",
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    "|",
    r"\p{N}{1,3}",
    "|",
    r" ?[^\s\p{L}\p{N}]+[\r\n/]*",
    "|",
    r"\s*[\r\n]+",
    "|",
    r"\s+(?!\S)",
    "|",
    r"\s+",
);

/// How text is cut into pieces before merging.
#[derive(Debug, Clone)]
pub enum Pretokenizer {
    /// tiktoken's gpt2 / r50k_base pattern.
    Gpt2,
    /// tiktoken's cl100k_base pattern.
    Cl100k,
    /// tiktoken's o200k_base pattern.
    O200k,
    /// Any other regular expression (the source string and the compiled form).
    Custom(String, Box<fancy_regex::Regex>),
    /// No pre-tokenization: the whole text is one piece.
    Whole,
}

fn compiled(slot: &'static OnceLock<fancy_regex::Regex>, pat: &str) -> &'static fancy_regex::Regex {
    // The named patterns are constants known to compile (checked by a unit test).
    slot.get_or_init(|| {
        compile(pat).unwrap_or_else(|e| panic!("built-in pattern must compile: {e}"))
    })
}

fn compile(pattern: &str) -> Result<fancy_regex::Regex> {
    fancy_regex::RegexBuilder::new(pattern)
        .backtrack_limit(10_000_000)
        .build()
        .map_err(|e| Error::InvalidPattern {
            pattern: pattern.to_string(),
            reason: e.to_string(),
        })
}

impl Pretokenizer {
    /// Builds a pre-tokenizer from a pattern: `None` means no splitting; the
    /// names `gpt2`/`r50k_base`, `cl100k`/`cl100k_base`, `o200k`/`o200k_base` or the
    /// exact regex strings of those encodings select the built-in scanners; anything
    /// else is compiled as a regular expression.
    pub fn new(pattern: Option<&str>) -> Result<Self> {
        Ok(match pattern {
            None => Pretokenizer::Whole,
            Some("gpt2") | Some("r50k_base") | Some("p50k_base") | Some(GPT2_PATTERN) => {
                Pretokenizer::Gpt2
            }
            Some("cl100k") | Some("cl100k_base") | Some(CL100K_PATTERN) => Pretokenizer::Cl100k,
            Some("o200k") | Some("o200k_base") | Some(O200K_PATTERN) => Pretokenizer::O200k,
            Some(p) => Pretokenizer::Custom(p.to_string(), Box::new(compile(p)?)),
        })
    }

    /// The regex source string, or `None` for [`Pretokenizer::Whole`].
    pub fn pattern(&self) -> Option<&str> {
        match self {
            Pretokenizer::Gpt2 => Some(GPT2_PATTERN),
            Pretokenizer::Cl100k => Some(CL100K_PATTERN),
            Pretokenizer::O200k => Some(O200K_PATTERN),
            Pretokenizer::Custom(p, _) => Some(p),
            Pretokenizer::Whole => None,
        }
    }

    fn regex(&self) -> Option<&fancy_regex::Regex> {
        static GPT2: OnceLock<fancy_regex::Regex> = OnceLock::new();
        static CL100K: OnceLock<fancy_regex::Regex> = OnceLock::new();
        static O200K: OnceLock<fancy_regex::Regex> = OnceLock::new();
        match self {
            Pretokenizer::Gpt2 => Some(compiled(&GPT2, GPT2_PATTERN)),
            Pretokenizer::Cl100k => Some(compiled(&CL100K, CL100K_PATTERN)),
            Pretokenizer::O200k => Some(compiled(&O200K, O200K_PATTERN)),
            Pretokenizer::Custom(_, re) => Some(re),
            Pretokenizer::Whole => None,
        }
    }

    /// Calls `f` on every piece of `text`, left to right. The pieces are
    /// contiguous, non-empty and cover `text` exactly when the pattern matches
    /// every character (all three named patterns do); a custom pattern may skip
    /// characters it does not match, as tiktoken does.
    ///
    /// Complexity: linear in `text` for the named patterns.
    pub fn for_each_piece<'a, F: FnMut(&'a str)>(&self, text: &'a str, mut f: F) -> Result<()> {
        match self.regex() {
            None => {
                if !text.is_empty() {
                    f(text);
                }
                Ok(())
            }
            Some(re) => {
                for m in re.find_iter(text) {
                    let m = m.map_err(|e| Error::RegexRuntime(e.to_string()))?;
                    if !m.as_str().is_empty() {
                        f(m.as_str());
                    }
                }
                Ok(())
            }
        }
    }

    /// The pieces of `text` as a vector (convenience over [`Self::for_each_piece`]).
    pub fn split<'a>(&self, text: &'a str) -> Result<Vec<&'a str>> {
        let mut out = Vec::new();
        self.for_each_piece(text, |p| out.push(p))?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_patterns_compile() {
        for p in [GPT2_PATTERN, CL100K_PATTERN, O200K_PATTERN] {
            compile(p).expect("compiles");
        }
    }

    #[test]
    fn gpt2_seed_example() {
        let p = Pretokenizer::new(Some("gpt2")).unwrap();
        assert_eq!(
            p.split("I'm lowest 토큰").unwrap(),
            vec!["I", "'m", " lowest", " 토큰"]
        );
    }

    #[test]
    fn digits_grouping() {
        let cl = Pretokenizer::new(Some("cl100k")).unwrap();
        assert_eq!(cl.split("12345678").unwrap(), vec!["123", "456", "78"]);
        let g = Pretokenizer::new(Some("gpt2")).unwrap();
        assert_eq!(g.split("12345678").unwrap(), vec!["12345678"]);
    }

    #[test]
    fn invalid_pattern_is_an_error() {
        assert!(matches!(
            Pretokenizer::new(Some("(")),
            Err(Error::InvalidPattern { .. })
        ));
    }
}
