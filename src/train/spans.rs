//! Where the counter may cut a document: the pre-tokenizer's safe cuts, and
//! for [`SUPERWORD`], the spans of superword training, after every run of
//! newlines.
//!
//! [`SUPERWORD`] is a custom pattern to the regex engine, but every piece it
//! makes ends after a maximal run of `\r`/`\n`: each alternative that reads
//! a newline ends with a greedy newline run and reads nothing after it. So
//! between a newline and a following non-newline byte, pre-tokenizing the two
//! sides apart gives exactly the pieces of the whole, whatever text follows.

use crate::pretok::Pretokenizer;

/// The spans of a superword tokenizer (`bytepair.patterns.SUPERWORD`): no
/// cut at spaces, digits in groups of at most three, a cut after every run of
/// newlines and between `:` and a following space, newline or digit.
pub const SUPERWORD: &str =
    r"\p{N}{1,3}|(?:[^\r\n\p{N}:]|:+[^ \r\n\p{N}:])+:*[\r\n]*|:+[\r\n]*|[\r\n]+";

fn newline(c: u8) -> bool {
    c == b'\r' || c == b'\n'
}

fn is_spans(p: &Pretokenizer) -> bool {
    matches!(p, Pretokenizer::Custom(s, _) if s == SUPERWORD)
}

/// Whether a document can be cut inside at all.
pub fn has_cuts(p: &Pretokenizer) -> bool {
    is_spans(p) || p.scanner().is_some()
}

/// Whether byte `c` of `text` is a cut (see the module docs and
/// [`Pretokenizer::is_safe_cut`]).
pub fn is_cut(p: &Pretokenizer, text: &str, c: usize) -> bool {
    let b = text.as_bytes();
    if !is_spans(p) {
        return p.is_safe_cut(text, c);
    }
    0 < c && c < b.len() && newline(b[c - 1]) && !newline(b[c])
}

/// The first cut at or after byte `from`, if any. Linear in the bytes examined.
pub fn next_cut(p: &Pretokenizer, text: &str, from: usize) -> Option<usize> {
    if !is_spans(p) {
        return p.next_safe_cut(text, from);
    }
    let b = text.as_bytes();
    let at = from.max(1) - 1;
    let mut c = at + memchr::memchr2(b'\r', b'\n', b.get(at..)?)? + 1;
    while c < b.len() && newline(b[c]) {
        c += 1;
    }
    (c < b.len()).then_some(c)
}

/// The last cut at or before byte `before` (clamped to the text), if any.
/// Linear in the bytes examined.
pub fn cut_before(p: &Pretokenizer, text: &str, before: usize) -> Option<usize> {
    if !is_spans(p) {
        return p.safe_cut_before(text, before);
    }
    let b = text.as_bytes();
    let mut end = before.min(b.len().saturating_sub(1));
    loop {
        let q = memchr::memrchr2(b'\r', b'\n', b.get(..end)?)?;
        if !newline(b[q + 1]) {
            return Some(q + 1);
        }
        end = q;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_after_newline_runs_split_like_the_whole() {
        let p = Pretokenizer::new(Some(SUPERWORD)).unwrap();
        let texts = [
            "Answer: yes\n\nthe cat sat\r\non 12345 mats:\n\n\nend",
            "\n\nx\ny:\n 1\n\r\n:: a\n",
            "no newline at all: a b c 1234",
        ];
        for text in texts {
            let whole = p.split(text).unwrap();
            let mut cuts = Vec::new();
            let mut from = 0;
            while let Some(c) = next_cut(&p, text, from) {
                let mut parts = p.split(&text[..c]).unwrap();
                parts.extend(p.split(&text[c..]).unwrap());
                assert_eq!(parts, whole, "cut at {c} of {text:?}");
                cuts.push(c);
                from = c + 1;
            }
            let every: Vec<usize> = (0..=text.len()).filter(|&c| is_cut(&p, text, c)).collect();
            assert_eq!(cuts, every);
            for before in 0..=text.len() {
                let want = every.iter().rev().find(|&&c| c <= before).copied();
                assert_eq!(
                    cut_before(&p, text, before),
                    want,
                    "before {before} of {text:?}"
                );
            }
        }
        assert!(has_cuts(&p));
        assert!(!has_cuts(&Pretokenizer::new(Some(r"\w+")).unwrap()));
        assert!(has_cuts(&Pretokenizer::new(Some("o200k")).unwrap()));
    }
}
