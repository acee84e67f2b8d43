//! Normalizers of a Hugging Face `tokenizer.json`, with `tokenizers`' semantics.
//!
//! The Unicode forms use `unicode-normalization-alignments` 0.1.12, the crate
//! `tokenizers` itself normalizes with: its tables are Unicode 9.0, so a code
//! point assigned later has no decomposition and never composes, exactly as
//! in the reference (a newer normalizer differs on ~120 code points).

use std::borrow::Cow;

use unicode_normalization_alignments::{is_nfc_quick, is_nfd_quick, is_nfkc_quick, is_nfkd_quick};
use unicode_normalization_alignments::{IsNormalized, UnicodeNormalization};

use crate::error::Result;
use crate::pretok::Pretokenizer;

/// One normalizer (a `Sequence` is flattened into a list of these).
#[derive(Debug, Clone)]
pub enum Normalizer {
    Nfc,
    Nfd,
    Nfkc,
    Nfkd,
    /// Each character lowercased on its own (`char::to_lowercase`).
    Lowercase,
    /// Whitespace (`char::is_whitespace`) removed at the left / right end.
    Strip {
        left: bool,
        right: bool,
    },
    /// Every non-overlapping match of the pattern replaced by `content`.
    Replace {
        pattern: Box<Pretokenizer>,
        content: String,
    },
    /// `prefix` put before a non-empty text.
    Prepend(String),
}

impl Normalizer {
    /// `text` normalized (borrowed back when nothing changes).
    pub fn apply<'a>(&self, text: Cow<'a, str>) -> Result<Cow<'a, str>> {
        let s: &str = &text;
        let out = match self {
            Normalizer::Nfc => unicode_form(
                s,
                |s| is_nfc_quick(s.chars()),
                |s| s.nfc().map(|(c, _)| c).collect(),
            ),
            Normalizer::Nfd => unicode_form(
                s,
                |s| is_nfd_quick(s.chars()),
                |s| s.nfd().map(|(c, _)| c).collect(),
            ),
            Normalizer::Nfkc => unicode_form(
                s,
                |s| is_nfkc_quick(s.chars()),
                |s| s.nfkc().map(|(c, _)| c).collect(),
            ),
            Normalizer::Nfkd => unicode_form(
                s,
                |s| is_nfkd_quick(s.chars()),
                |s| s.nfkd().map(|(c, _)| c).collect(),
            ),
            Normalizer::Lowercase => Some(s.chars().flat_map(char::to_lowercase).collect()),
            Normalizer::Strip { left, right } => {
                let mut t = s;
                if *left {
                    t = t.trim_start_matches(char::is_whitespace);
                }
                if *right {
                    t = t.trim_end_matches(char::is_whitespace);
                }
                (t.len() != s.len()).then(|| t.to_string())
            }
            Normalizer::Replace { pattern, content } => replace(pattern, content, s)?,
            Normalizer::Prepend(p) => (!s.is_empty()).then(|| format!("{p}{s}")),
        };
        Ok(match out {
            Some(o) => Cow::Owned(o),
            None => text,
        })
    }
}

/// `None` when the quick check says the text is already in the form.
fn unicode_form(
    s: &str,
    quick: fn(&str) -> IsNormalized,
    full: fn(&str) -> String,
) -> Option<String> {
    if s.is_ascii() || quick(s) == IsNormalized::Yes {
        return None;
    }
    let out = full(s);
    (out != s).then_some(out)
}

fn replace(pattern: &Pretokenizer, content: &str, s: &str) -> Result<Option<String>> {
    let Some(re) = pattern.regex() else {
        return Ok(None);
    };
    let mut out = String::new();
    let mut at = 0;
    for m in re.find_iter(s) {
        let m = m.map_err(|e| crate::error::Error::RegexRuntime {
            pattern: re.as_str().to_string(),
            reason: e.to_string(),
        })?;
        out.push_str(&s[at..m.start()]);
        out.push_str(content);
        at = m.end();
    }
    if at == 0 && out.is_empty() {
        return Ok(None);
    }
    out.push_str(&s[at..]);
    Ok(Some(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(n: &Normalizer, s: &str) -> String {
        n.apply(Cow::Borrowed(s)).unwrap().into_owned()
    }

    #[test]
    fn forms_and_edits() {
        assert_eq!(run(&Normalizer::Nfc, "e\u{301}"), "\u{e9}");
        assert_eq!(run(&Normalizer::Nfkc, "\u{2460}"), "1");
        // U+32FF (Unicode 12) has no decomposition in Unicode 9.0 tables
        assert_eq!(run(&Normalizer::Nfkc, "\u{32ff}"), "\u{32ff}");
        assert_eq!(run(&Normalizer::Lowercase, "ÀB"), "àb");
        let strip = Normalizer::Strip {
            left: true,
            right: false,
        };
        assert_eq!(run(&strip, "  a "), "a ");
        assert_eq!(run(&Normalizer::Prepend("▁".into()), ""), "");
        let p = Box::new(Pretokenizer::new(Some(" ")).unwrap());
        let r = Normalizer::Replace {
            pattern: p,
            content: "▁".into(),
        };
        assert_eq!(run(&r, "a b c"), "a▁b▁c");
    }
}
