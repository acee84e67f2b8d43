//! Counting with a limit from the head of a text: whether a text is over a
//! token budget, decided from a prefix of it, so a caller holding a long text
//! in another form (a Python `str`) converts only as much of it as the
//! decision needs.
//!
//! The claim: let `c` be a safe cut of the pre-tokenizer
//! ([`crate::pretok::Pretokenizer::is_safe_cut`]) in `head` such that no
//! occurrence of any special token's text contains both `text[c - 1]` and
//! `text[c]`, with every special token's length of text still in `head` after
//! `c`. Then for every text that starts with `head`,
//! `count(text) = count(text[..c]) + count(text[c..])`: the special-token
//! matches before `c` are found from bytes that all lie in `head` and none
//! crosses `c`, and inside its segment the pieces before a safe cut end there
//! whatever follows. So `count(text[..c]) > limit` proves `count(text) > limit`.

use super::{CoreBpe, SpecialPolicy};
use crate::error::Result;

/// Cuts tried, from the end of the head back, before giving up on one head
/// (each is rejected only by a special token's text across it).
const CUT_TRIES: usize = 64;

impl CoreBpe {
    /// Whether every text that starts with `head` has more than `limit`
    /// tokens under `policy`, as far as `head` can prove it: `true` when the
    /// tokens before the last usable cut of `head` (see the module notes)
    /// already exceed `limit`; `false` when they do not or `head` has no
    /// such cut (custom patterns and no pre-tokenization have none). A
    /// disallowed special token fails only when it lies before that cut.
    ///
    /// Complexity: linear in `head` (a backward scan for the cut, the
    /// special-token searches of [`Self::count_until`] up to it) plus the
    /// encoding of the part read until the count passes `limit`.
    pub fn count_head_over(
        &self,
        head: &str,
        policy: &SpecialPolicy,
        limit: usize,
    ) -> Result<bool> {
        let longest = self
            .special_names
            .iter()
            .map(String::len)
            .max()
            .unwrap_or(0);
        let pretok = &self.pretok;
        let mut before = match head.len().checked_sub(longest.max(1)) {
            Some(b) => b,
            None => return Ok(false),
        };
        for _ in 0..CUT_TRIES {
            let Some(c) = pretok.safe_cut_before(head, before) else {
                return Ok(false);
            };
            if c == 0 {
                return Ok(false);
            }
            if !self.special_across(head, c, longest) {
                return Ok(self.count_until(&head[..c], policy, limit)? > limit);
            }
            before = c - 1;
        }
        Ok(false)
    }

    /// Whether an occurrence of some special token's text (any of them,
    /// overlapping ones included) contains the bytes `c - 1` and `c` of
    /// `text`; `longest` is the longest special token's length.
    fn special_across(&self, text: &str, c: usize, longest: usize) -> bool {
        let Some(ac) = &self.special_overlap else {
            return false;
        };
        let b = text.as_bytes();
        let lo = c.saturating_sub(longest);
        let hi = (c + longest).min(b.len());
        ac.find_overlapping_iter(&b[lo..hi])
            .any(|m| lo + m.start() < c && lo + m.end() > c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gpt2_bytes() -> CoreBpe {
        let tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        let specials = vec![("<|x y|>".to_string(), 256), ("<|end|>".to_string(), 257)];
        CoreBpe::new(tokens, specials, Some("gpt2")).unwrap()
    }

    /// The claim against every prefix of texts built around the cut points:
    /// `true` only when the whole text is over the limit.
    #[test]
    fn head_over_only_when_the_text_is() {
        let bpe = gpt2_bytes();
        let all = bpe.policy(&["<|x y|>", "<|end|>"], &[]);
        let texts = [
            "ab cd ef gh ij kl mn op",
            "ab<|x y|>cd ef<|end|> gh<|x y|> ij",
            "aa bb<|x y|>cc<|x",
            "one two\nthree 4 five",
        ];
        for text in texts {
            let total = bpe.count(text, &all).unwrap();
            for k in (0..=text.len()).filter(|&k| text.is_char_boundary(k)) {
                for limit in 0..total + 2 {
                    if bpe.count_head_over(&text[..k], &all, limit).unwrap() {
                        assert!(total > limit, "{text:?} head {k} limit {limit}");
                    }
                }
            }
            // a head with room after a cut decides small limits
            assert!(bpe.count_head_over(text, &all, 0).unwrap() || !text.contains(' '));
        }
    }

    /// A cut inside a special token's text is not used, though the head
    /// alone would allow it ("<|x" then " y|>").
    #[test]
    fn no_cut_inside_a_special() {
        let bpe = gpt2_bytes();
        let text = "q<|x y|><|end|>";
        let all = bpe.policy(&["<|x y|>", "<|end|>"], &[]);
        assert_eq!(bpe.count(text, &all).unwrap(), 3);
        assert_eq!(bpe.count("q<|x", &all).unwrap(), 4);
        assert!(!bpe.count_head_over(text, &all, 3).unwrap());
        assert!(bpe.count_head_over("ab cd        ", &all, 1).unwrap());
    }
}
