//! Added tokens of a Hugging Face `tokenizer.json`: found in the text before
//! the model sees it, leftmost-longest, with `tokenizers`' `single_word`,
//! `lstrip` and `rstrip` rules. Tokens with `normalized: false` are matched on
//! the raw text, the others on the normalized text (their own content
//! normalized first); special or not, both split the text the same way.

use aho_corasick::{AhoCorasick, MatchKind};

use crate::error::{Error, Result};
use crate::Rank;

/// One added token's matching rules.
#[derive(Debug, Clone)]
pub struct AddedToken {
    pub content: String,
    pub id: Rank,
    pub single_word: bool,
    pub lstrip: bool,
    pub rstrip: bool,
    /// Special tokens are skipped when a call asks for specials as text
    /// (`tokenizers`' `encode_special_tokens`).
    pub special: bool,
}

/// A piece of text: plain text or an added token's id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Segment {
    Text(usize, usize),
    Token(Rank),
}

/// The tokens of one phase (raw or normalized) and their automaton.
#[derive(Debug, Clone, Default)]
pub struct AddedSet {
    tokens: Vec<AddedToken>,
    ac: Option<AhoCorasick>,
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

impl AddedSet {
    /// Builds the automaton over `tokens` (matched by their `content`).
    pub fn new(tokens: Vec<AddedToken>) -> Result<Self> {
        let ac = if tokens.is_empty() {
            None
        } else {
            let pats: Vec<&str> = tokens.iter().map(|t| t.content.as_str()).collect();
            Some(
                AhoCorasick::builder()
                    .match_kind(MatchKind::LeftmostLongest)
                    .build(&pats)
                    .map_err(|e| Error::vocab(e.to_string()))?,
            )
        };
        Ok(AddedSet { tokens, ac })
    }

    /// Cuts `s` at the added tokens it holds; `f` gets each segment in order
    /// (text segments are byte ranges of `s`, never empty).
    /// With `specials` false, a match of a special token is ignored (its text
    /// stays text), as `tokenizers` does with `encode_special_tokens`.
    pub fn split<F: FnMut(Segment) -> Result<()>>(
        &self,
        s: &str,
        specials: bool,
        mut f: F,
    ) -> Result<()> {
        let Some(ac) = &self.ac else {
            if !s.is_empty() {
                f(Segment::Text(0, s.len()))?;
            }
            return Ok(());
        };
        let mut at = 0;
        for m in ac.find_iter(s) {
            let t = &self.tokens[m.pattern().as_usize()];
            let (mut start, mut stop) = (m.start(), m.end());
            if t.special && !specials {
                continue;
            }
            if t.single_word {
                let before = s[..start].chars().next_back().is_some_and(is_word);
                let after = s[stop..].chars().next().is_some_and(is_word);
                if before || after {
                    continue;
                }
            }
            if t.lstrip {
                let trimmed = s[..start].trim_end_matches(char::is_whitespace).len();
                start = trimmed.max(at);
            }
            if t.rstrip {
                stop = s.len() - s[stop..].trim_start_matches(char::is_whitespace).len();
            }
            if start < at {
                continue; // inside the span a previous token's rstrip took
            }
            if at < start {
                f(Segment::Text(at, start))?;
            }
            f(Segment::Token(t.id))?;
            at = stop;
        }
        if at < s.len() {
            f(Segment::Text(at, s.len()))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tok(content: &str, id: Rank) -> AddedToken {
        AddedToken {
            content: content.into(),
            id,
            single_word: false,
            lstrip: false,
            rstrip: false,
            special: true,
        }
    }

    fn segments(set: &AddedSet, s: &str) -> Vec<Segment> {
        let mut out = Vec::new();
        set.split(s, true, |g| {
            out.push(g);
            Ok(())
        })
        .unwrap();
        out
    }

    #[test]
    fn leftmost_longest_and_word_rules() {
        let set = AddedSet::new(vec![tok("<a>", 7), tok("<a>b", 8)]).unwrap();
        assert_eq!(
            segments(&set, "x<a>b<a>"),
            vec![Segment::Text(0, 1), Segment::Token(8), Segment::Token(7)]
        );
        let mut w = tok("ab", 9);
        w.single_word = true;
        w.lstrip = true;
        let set = AddedSet::new(vec![w]).unwrap();
        assert_eq!(segments(&set, "xab"), vec![Segment::Text(0, 3)]);
        assert_eq!(
            segments(&set, "x  ab"),
            vec![Segment::Text(0, 1), Segment::Token(9)]
        );
    }
}
