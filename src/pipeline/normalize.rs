//! Normalizers of a Hugging Face `tokenizer.json`, with `tokenizers`' semantics.
//!
//! The Unicode forms use `unicode-normalization-alignments` 0.1.12, the crate
//! `tokenizers` itself normalizes with: its tables are Unicode 9.0, so a code
//! point assigned later has no decomposition and never composes, exactly as
//! in the reference (a newer normalizer differs on ~120 code points).

use std::borrow::Cow;
use std::sync::OnceLock;

use unicode_normalization_alignments::char::canonical_combining_class;
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
            Normalizer::Nfc => unicode_form(s, Form::C),
            Normalizer::Nfd => unicode_form(s, Form::D),
            Normalizer::Nfkc => unicode_form(s, Form::Kc),
            Normalizer::Nfkd => unicode_form(s, Form::Kd),
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

/// A Unicode normalization form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    C,
    D,
    Kc,
    Kd,
}

impl Form {
    /// The quick check of one character (`Maybe`: it may compose with the
    /// character before it).
    fn quick(self, c: char) -> IsNormalized {
        let one = std::iter::once(c);
        match self {
            Form::C => is_nfc_quick(one),
            Form::D => is_nfd_quick(one),
            Form::Kc => is_nfkc_quick(one),
            Form::Kd => is_nfkd_quick(one),
        }
    }

    /// `s` normalized as a whole, appended to `out`.
    fn full(self, s: &str, out: &mut String) {
        match self {
            Form::C => out.extend(s.nfc().map(|(c, _)| c)),
            Form::D => out.extend(s.nfd().map(|(c, _)| c)),
            Form::Kc => out.extend(s.nfkc().map(|(c, _)| c)),
            Form::Kd => out.extend(s.nfkd().map(|(c, _)| c)),
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// Whether `c` is a *safe starter* of `form`: combining class 0 and quick
/// check `Yes`. Such a character neither decomposes nor composes with
/// anything before it, and a non-starter after it cannot be reordered across
/// it, so normalizing the text on each side of it separately gives the same
/// characters as normalizing the whole.
fn safe_starter(form: Form, c: char) -> bool {
    c.is_ascii() || safe_in(bmp_safe(form), form, c)
}

/// [`safe_starter`] for a non-ASCII `c`, with the form's BMP table in hand.
#[inline(always)]
fn safe_in(bits: &[u64; 1024], form: Form, c: char) -> bool {
    let i = c as usize;
    if i < 0x10000 {
        return bits[i / 64] >> (i % 64) & 1 == 1;
    }
    safe_starter_lookup(form, c)
}

fn safe_starter_lookup(form: Form, c: char) -> bool {
    canonical_combining_class(c) == 0 && form.quick(c) == IsNormalized::Yes
}

/// The safe starters of the Basic Multilingual Plane, one bit each (8 KB per
/// form, built on first use: two table lookups per code point take far longer
/// than one bit test on text of many scripts).
fn bmp_safe(form: Form) -> &'static [u64; 1024] {
    static TABLES: [OnceLock<Box<[u64; 1024]>>; 4] = [
        OnceLock::new(),
        OnceLock::new(),
        OnceLock::new(),
        OnceLock::new(),
    ];
    TABLES[form.index()].get_or_init(|| {
        let mut bits = Box::new([0u64; 1024]);
        for (i, c) in (0..0x10000u32).filter_map(|u| char::from_u32(u).map(|c| (u as usize, c))) {
            if safe_starter_lookup(form, c) {
                bits[i / 64] |= 1 << (i % 64);
            }
        }
        bits
    })
}

/// The length of the ASCII prefix of `b`, read 8 bytes at a time (code and
/// English text are long ASCII runs between the characters to check).
fn ascii_prefix(b: &[u8]) -> usize {
    let mut n = 0;
    for w in b.chunks_exact(8) {
        let word = u64::from_le_bytes(w.try_into().unwrap_or([0x80; 8]));
        if word & 0x8080_8080_8080_8080 != 0 {
            break;
        }
        n += 8;
    }
    n + b[n..].iter().take_while(|c| c.is_ascii()).count()
}

/// The character of valid UTF-8 `b` that starts at `i` (a non-ASCII lead
/// byte), with the offset after it: decoded in place, as the quick-check
/// loop of [`unicode_form`] does for every character of Korean or Chinese
/// text.
#[inline(always)]
fn char_at(b: &[u8], i: usize) -> Option<(char, usize)> {
    let lead = u32::from(*b.get(i)?);
    let cont = |k: usize| b.get(i + k).map(|&x| u32::from(x) & 0x3F);
    let (u, n) = if lead < 0xE0 {
        ((lead & 0x1F) << 6 | cont(1)?, 2)
    } else if lead < 0xF0 {
        ((lead & 0x0F) << 12 | cont(1)? << 6 | cont(2)?, 3)
    } else {
        (
            (lead & 0x07) << 18 | cont(1)? << 12 | cont(2)? << 6 | cont(3)?,
            4,
        )
    };
    Some((char::from_u32(u)?, i + n))
}

/// Moves `i` past the safe starters at `b[*i..]`, stopping at the first other
/// character (or the end); returns the offset of the last one passed, if
/// any. ASCII goes 8 bytes at a time; each other character is one decode
/// and one bit test (Korean text is almost all safe starters). Not inlined:
/// alone, the loop keeps its few values in registers.
#[inline(never)]
fn skip_safe(b: &[u8], bits: &[u64; 1024], form: Form, i: &mut usize) -> Option<usize> {
    let (mut at, mut last) = (*i, None);
    while let Some(&lead) = b.get(at) {
        if lead.is_ascii() {
            at += ascii_prefix(&b[at..]);
            last = Some(at - 1);
            continue;
        }
        match char_at(b, at) {
            Some((c, next)) if safe_in(bits, form, c) => (last, at) = (Some(at), next),
            _ => break,
        }
    }
    *i = at;
    last
}

/// `s` in `form`, or `None` when it already is.
///
/// The text is scanned once with the per-character quick check; only the
/// stretches that may change are normalized: from the last safe starter
/// before a character that fails the check (its quick check is not `Yes`, or
/// its combining class is lower than the non-starter before it) to the next
/// safe starter after it. The text between stretches is copied as is. The
/// result is the whole-string normalization, because no composition,
/// decomposition or reordering crosses a safe starter. Linear in `s`.
fn unicode_form(s: &str, form: Form) -> Option<String> {
    let mut out: Option<String> = None;
    let mut copied = 0; // s[..copied] is in `out` when it is Some
    let mut safe = 0; // the last safe starter (or the start)
    let mut last_cc = 0u8;
    let mut stretch = String::new();
    let b = s.as_bytes();
    let bits = bmp_safe(form);
    let mut i = 0;
    while i < b.len() {
        if let Some(s) = skip_safe(b, bits, form, &mut i) {
            (safe, last_cc) = (s, 0);
        }
        let Some((c, next)) = char_at(b, i) else {
            break;
        };
        let cc = canonical_combining_class(c);
        if cc != 0 && last_cc <= cc && form.quick(c) == IsNormalized::Yes {
            (last_cc, i) = (cc, next);
            continue;
        }
        let end = s[next..]
            .char_indices()
            .find(|&(_, c)| safe_starter(form, c))
            .map_or(s.len(), |(k, _)| next + k);
        stretch.clear();
        form.full(&s[safe..end], &mut stretch);
        if stretch != s[safe..end] {
            let o = out.get_or_insert_with(|| String::with_capacity(s.len() + s.len() / 8));
            o.push_str(&s[copied..safe]);
            o.push_str(&stretch);
            copied = end;
        }
        (safe, last_cc, i) = (end, 0, end);
    }
    out.map(|mut o| {
        o.push_str(&s[copied..]);
        o
    })
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

    const FORMS: [Form; 4] = [Form::C, Form::D, Form::Kc, Form::Kd];

    /// The stretch-wise result equals the whole-string normalization, and
    /// `None` means exactly that the text is already in the form.
    fn check(s: &str) {
        for form in FORMS {
            let mut whole = String::new();
            form.full(s, &mut whole);
            match unicode_form(s, form) {
                Some(o) => {
                    assert_eq!(o, whole, "{form:?} {s:?}");
                    assert_ne!(o, s, "{form:?} {s:?}");
                }
                None => assert_eq!(whole, s, "{form:?} {s:?}"),
            }
        }
    }

    #[test]
    fn char_at_decodes_every_character() {
        let text: String = (0x80..=0x10FFFFu32).filter_map(char::from_u32).collect();
        let b = text.as_bytes();
        let mut at = 0;
        for (i, c) in text.char_indices() {
            assert_eq!(i, at);
            assert_eq!(char_at(b, i), Some((c, i + c.len_utf8())));
            at = i + c.len_utf8();
        }
        assert_eq!(at, b.len());
    }

    #[test]
    fn stretches_equal_the_whole_on_real_text() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
        for name in [
            "en_austen",
            "en_kjv",
            "en_pydocs",
            "code_python",
            "ko_prose",
            "multi_unicode",
        ] {
            let text = std::fs::read_to_string(dir.join(format!("{name}.txt"))).unwrap();
            for doc in text.split("\n\n") {
                check(doc);
            }
            check(&text);
        }
    }

    /// Characters that interact: combining marks of many classes (some out
    /// of order), Hangul jamo and syllables, characters with canonical and
    /// compatibility decompositions, ones that compose as the second of a
    /// pair, and decompositions that begin with a non-starter.
    const ALPHABET: &[(u32, u32)] = &[
        (0x41, 0x45),
        (0x61, 0x65),
        (0x20, 0x20),
        (0xc0, 0xd6),
        (0xa0, 0xa0),
        (0x300, 0x34f),
        (0x340, 0x344),
        (0x591, 0x5c7),
        (0x610, 0x61a),
        (0x64b, 0x655),
        (0x915, 0x93c),
        (0x93e, 0x94d),
        (0x958, 0x95f),
        (0x9be, 0x9be),
        (0x9c7, 0x9d7),
        (0xb47, 0xb57),
        (0xbc6, 0xbd7),
        (0xf71, 0xf84),
        (0x1100, 0x1114),
        (0x1161, 0x1177),
        (0x11a7, 0x11c3),
        (0xac00, 0xac1d),
        (0xd7a0, 0xd7a3),
        (0x1e00, 0x1e0f),
        (0x1f00, 0x1f0f),
        (0x1fbe, 0x1fc1),
        (0x2126, 0x2126),
        (0x212b, 0x212b),
        (0x2460, 0x2463),
        (0x3099, 0x309c),
        (0x304b, 0x304c),
        (0x3300, 0x3302),
        (0xf900, 0xf902),
        (0xfb01, 0xfb02),
        (0xff21, 0xff23),
        (0x1109a, 0x1109a),
        (0x11099, 0x11099),
        (0x110ba, 0x110ba),
        (0x1d15e, 0x1d165),
        (0x1d16d, 0x1d16f),
        (0x2f800, 0x2f801),
        (0x1f600, 0x1f601),
    ];

    #[test]
    fn stretches_equal_the_whole_on_random_marks_and_jamo() {
        let chars: Vec<char> = ALPHABET
            .iter()
            .flat_map(|&(a, b)| (a..=b).filter_map(char::from_u32))
            .collect();
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for _ in 0..20_000 {
            let n = (next() % 24) as usize;
            let s: String = (0..n)
                .map(|_| chars[(next() % chars.len() as u64) as usize])
                .collect();
            check(&s);
        }
    }

    #[test]
    fn every_bmp_character_after_each_kind_of_neighbour() {
        for u in (0x80..0x10000u32)
            .chain(0x10000..0x10400)
            .chain(0x1d100..0x1d200)
        {
            let Some(c) = char::from_u32(u) else { continue };
            for before in ["a", "e\u{301}", "\u{1100}", "\u{ac00}", "\u{301}"] {
                check(&format!("{before}{c}\u{300}\u{11a8}x"));
            }
        }
    }
}
