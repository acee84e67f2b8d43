//! Character classes of the named patterns: one byte of flags per code point.
//!
//! The classes are not hand-copied from the Unicode database: they are read at
//! first use from `regex-syntax`, the crate that gives `fancy-regex` (and hence
//! tiktoken) its meaning of `\p{L}`, `\s`, `(?i)` and so on, by parsing the very
//! sub-expressions that occur in the patterns. So the scanners and the regex
//! engine cannot drift apart; `tests/pretokenize/` also checks every code point
//! against tiktoken itself, which pins the Unicode version (16.0 for tiktoken
//! 0.14 and regex-syntax 0.8).
//!
//! Layout: code points are grouped in blocks of 128; `index` maps a block number
//! to one of the distinct blocks stored in `blocks` (most of the 8,704 blocks are
//! uniform: unassigned, CJK, Hangul, private use; 230 distinct blocks with
//! regex-syntax 0.8.12), so the tables take ~46 KB and build in a few ms.
//! ASCII bytes have their own 256-entry table (entries >= 0x80 are unused) and
//! never touch the block table.

use std::sync::OnceLock;

use regex_syntax::hir::{Class, Hir, HirKind};

/// `\p{L}`: any letter.
pub const L: u8 = 1;
/// `\p{N}`: any number.
pub const N: u8 = 2;
/// `\s`: Unicode `White_Space` (25 code points).
pub const WS: u8 = 4;
/// o200k's "upper" class `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]`.
pub const UP: u8 = 8;
/// o200k's "lower" class `[\p{Ll}\p{Lm}\p{Lo}\p{M}]`.
pub const LO: u8 = 16;
/// `[^\s\p{L}\p{N}]`: punctuation, symbols, marks, controls, unassigned, ...
pub const OTHER: u8 = 32;
/// `[^\r\n\p{L}\p{N}]`: the optional one-character prefix of cl100k/o200k words.
pub const PREFIX: u8 = 64;
/// `\p{M}`: any mark (Qwen3.5's letter runs take them).
pub const M: u8 = 128;

/// The sub-expressions whose classes the scanners need, with their flag.
const CLASSES: [(&str, u8); 8] = [
    (r"\p{L}", L),
    (r"\p{N}", N),
    (r"\s", WS),
    (r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]", UP),
    (r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]", LO),
    (r"[^\s\p{L}\p{N}]", OTHER),
    (r"[^\r\n\p{L}\p{N}]", PREFIX),
    (r"\p{M}", M),
];

/// DeepSeek V3's classes (their own table, [`deepseek_tables`]): `\p{L}`.
pub const DS_L: u8 = 1;
/// `\p{N}`.
pub const DS_N: u8 = 2;
/// `\s` (the same bit as [`WS`], so the whitespace scan serves both tables).
pub const DS_WS: u8 = WS;
/// DeepSeek's CJK ranges `[一-龥぀-ゟ゠-ヿ]`.
pub const DS_CJK: u8 = 8;
/// `\p{M}`.
pub const DS_M: u8 = 16;
/// `[\p{P}\p{S}]`.
pub const DS_PS: u8 = 32;
/// `[^\r\n\p{L}\p{P}\p{S}]`: the optional prefix of DeepSeek's words.
pub const DS_PREFIX: u8 = 64;

/// The classes of [`deepseek_tables`].
const DS_CLASSES: [(&str, u8); 7] = [
    (r"\p{L}", DS_L),
    (r"\p{N}", DS_N),
    (r"\s", DS_WS),
    (
        "[\u{4e00}-\u{9fa5}\u{3040}-\u{309f}\u{30a0}-\u{30ff}]",
        DS_CJK,
    ),
    (r"\p{M}", DS_M),
    (r"[\p{P}\p{S}]", DS_PS),
    (r"[^\r\n\p{L}\p{P}\p{S}]", DS_PREFIX),
];

/// The letters of the contractions (`'s`, `'ll`, `'ve`, ...), whose
/// case-insensitive forms (`(?i:s)` also matches U+017F LATIN SMALL LETTER LONG S)
/// are read from regex-syntax's simple case folding.
const CONTRACTION_LETTERS: &[u8] = b"sdmtlvre";

const BLOCK_BITS: u32 = 7;
const BLOCK: usize = 1 << BLOCK_BITS;
const NUM_BLOCKS: usize = 0x110000 >> BLOCK_BITS;

/// Flag lookup tables, built once per process by [`tables`].
#[derive(Debug)]
pub struct Tables {
    /// Flags of the ASCII characters, indexed by byte (entries >= 0x80 are 0).
    pub ascii: [u8; 256],
    index: Box<[u16; NUM_BLOCKS]>,
    blocks: Vec<u8>,
    /// For ASCII bytes: the contraction letter they fold to (or 0).
    ascii_fold: [u8; 256],
    /// Non-ASCII characters that fold to a contraction letter, e.g. ('ſ', b's').
    other_folds: Vec<(char, u8)>,
}

fn class_ranges(pattern: &str) -> Vec<(u32, u32)> {
    // The patterns are constants of this module; a unit test parses them all.
    let hir: Hir = regex_syntax::Parser::new()
        .parse(pattern)
        .unwrap_or_else(|e| panic!("built-in class {pattern:?} must parse: {e}"));
    match hir.kind() {
        HirKind::Class(Class::Unicode(c)) => c
            .ranges()
            .iter()
            .map(|r| (r.start() as u32, r.end() as u32))
            .collect(),
        HirKind::Literal(lit) => match std::str::from_utf8(&lit.0)
            .ok()
            .and_then(|s| s.chars().next())
        {
            Some(ch) => vec![(ch as u32, ch as u32)],
            None => Vec::new(),
        },
        other => panic!("built-in class {pattern:?} must be a Unicode class, got {other:?}"),
    }
}

impl Tables {
    fn build(classes: &[(&str, u8)]) -> Tables {
        let ranges: Vec<(Vec<(u32, u32)>, u8)> = classes
            .iter()
            .map(|&(pattern, flag)| (class_ranges(pattern), flag))
            .collect();
        Tables::from_ranges(&ranges)
    }

    /// Tables of classes given as code-point ranges `(first, last)`, each with
    /// its flag (the chains' classes, read from their own patterns).
    pub(super) fn from_ranges(classes: &[(Vec<(u32, u32)>, u8)]) -> Tables {
        let mut flat = vec![0u8; 0x110000];
        for (ranges, flag) in classes {
            for &(lo, hi) in ranges {
                for slot in flat.iter_mut().take(hi as usize + 1).skip(lo as usize) {
                    *slot |= flag;
                }
            }
        }
        let mut ascii = [0u8; 256];
        ascii[..128].copy_from_slice(&flat[..128]);

        let mut index = Box::new([0u16; NUM_BLOCKS]);
        let mut blocks: Vec<u8> = Vec::new();
        let mut seen: std::collections::HashMap<&[u8], u16> = std::collections::HashMap::new();
        for (slot, chunk) in index.iter_mut().zip(flat.chunks(BLOCK)) {
            let id = match seen.get(chunk) {
                Some(&id) => id,
                None => {
                    let id = (blocks.len() / BLOCK) as u16;
                    blocks.extend_from_slice(chunk);
                    seen.insert(chunk, id);
                    id
                }
            };
            *slot = id;
        }

        let mut ascii_fold = [0u8; 256];
        let mut other_folds = Vec::new();
        for &letter in CONTRACTION_LETTERS {
            let pattern = format!("(?i:{})", letter as char);
            for (lo, hi) in class_ranges(&pattern) {
                for cp in lo..=hi {
                    match char::from_u32(cp) {
                        Some(ch) if ch.is_ascii() => ascii_fold[cp as usize] = letter,
                        Some(ch) => other_folds.push((ch, letter)),
                        None => {}
                    }
                }
            }
        }
        Tables {
            ascii,
            index,
            blocks,
            ascii_fold,
            other_folds,
        }
    }

    /// Flags of one code point (0 for values above U+10FFFF).
    #[inline(always)]
    pub fn of(&self, cp: u32) -> u8 {
        let block = self
            .index
            .get((cp >> BLOCK_BITS) as usize)
            .copied()
            .unwrap_or(0) as usize;
        self.blocks
            .get((block << BLOCK_BITS) | (cp as usize & (BLOCK - 1)))
            .copied()
            .unwrap_or(0)
    }

    /// Flags and byte length of the non-ASCII character starting at `b[i]`.
    ///
    /// Precondition: `b` is valid UTF-8 and `i` is the start of a non-ASCII
    /// character (on other input the result is meaningless but never a panic).
    #[inline(always)]
    pub fn decode_at(&self, b: &[u8], i: usize) -> (u8, usize) {
        let (cp, len) = decode(b, i);
        (self.of(cp), len)
    }

    /// The contraction letter (`s`, `d`, `m`, `t`, `l`, `v`, `r`, `e`) that the
    /// character at `b[i]` case-folds to, with the character's byte length.
    pub fn fold_at(&self, b: &[u8], i: usize) -> Option<(u8, usize)> {
        let &c = b.get(i)?;
        if c < 0x80 {
            let f = self.ascii_fold[c as usize];
            return (f != 0).then_some((f, 1));
        }
        let (cp, len) = decode(b, i);
        let ch = char::from_u32(cp)?;
        self.other_folds
            .iter()
            .find(|(c, _)| *c == ch)
            .map(|&(_, f)| (f, len))
    }

    /// Number of distinct 128-code-point blocks (for the size note in the docs).
    pub fn distinct_blocks(&self) -> usize {
        self.blocks.len() / BLOCK
    }
}

/// Decodes the UTF-8 character starting at `b[i]` (a lead byte >= 0x80 of valid
/// UTF-8) into its code point and length.
#[inline(always)]
fn decode(b: &[u8], i: usize) -> (u32, usize) {
    // One bounds check for the common 2- and 3-byte forms.
    if let Some(&[b0, b1, b2]) = b.get(i..i + 3) {
        let (b0, b1, b2) = (b0 as u32, b1 as u32, b2 as u32);
        if b0 < 0xE0 {
            return (((b0 & 0x1F) << 6) | (b1 & 0x3F), 2);
        }
        if b0 < 0xF0 {
            return (((b0 & 0x0F) << 12) | ((b1 & 0x3F) << 6) | (b2 & 0x3F), 3);
        }
    }
    let at = |k: usize| b.get(i + k).copied().unwrap_or(0) as u32;
    let b0 = at(0);
    if b0 < 0xE0 {
        (((b0 & 0x1F) << 6) | (at(1) & 0x3F), 2)
    } else if b0 < 0xF0 {
        (
            ((b0 & 0x0F) << 12) | ((at(1) & 0x3F) << 6) | (at(2) & 0x3F),
            3,
        )
    } else {
        (
            ((b0 & 0x07) << 18) | ((at(1) & 0x3F) << 12) | ((at(2) & 0x3F) << 6) | (at(3) & 0x3F),
            4,
        )
    }
}

/// The process-wide tables (built on first use, in a few ms).
pub fn tables() -> &'static Tables {
    static TABLES: OnceLock<Tables> = OnceLock::new();
    TABLES.get_or_init(|| Tables::build(&CLASSES))
}

/// The process-wide tables of DeepSeek V3's classes (`DS_*` flags).
pub fn deepseek_tables() -> &'static Tables {
    static TABLES: OnceLock<Tables> = OnceLock::new();
    TABLES.get_or_init(|| Tables::build(&DS_CLASSES))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every code point's flags agree with the regex engine on the same class.
    #[test]
    fn flags_match_regex_on_every_code_point() {
        let t = tables();
        let all: String = (0..0x110000u32).filter_map(char::from_u32).collect();
        for (t, (pattern, flag)) in CLASSES
            .iter()
            .map(|&c| (t, c))
            .chain(DS_CLASSES.iter().map(|&c| (deepseek_tables(), c)))
        {
            let re = regex::Regex::new(pattern).expect("class compiles");
            let mut expected = vec![false; 0x110000];
            for m in re.find_iter(&all) {
                for ch in m.as_str().chars() {
                    expected[ch as usize] = true;
                }
            }
            for ch in all.chars() {
                assert_eq!(
                    t.of(ch as u32) & flag != 0,
                    expected[ch as usize],
                    "{pattern} on U+{:04X}",
                    ch as u32
                );
                let mut buf = [0u8; 4];
                let enc = ch.encode_utf8(&mut buf).as_bytes();
                let (f, len) = if enc.len() == 1 {
                    (t.ascii[enc[0] as usize], 1)
                } else {
                    t.decode_at(enc, 0)
                };
                assert_eq!((f, len), (t.of(ch as u32), enc.len()));
            }
        }
        assert!(
            t.distinct_blocks() < 400,
            "table grew: {} blocks",
            t.distinct_blocks()
        );
    }

    /// The scanners' eight-bytes-at-a-time letter runs assume these ASCII members.
    #[test]
    fn hangul_syllables_are_letters_in_both_o200k_classes() {
        // the scanners' Hangul fast path relies on this
        let t = tables();
        for cp in 0xAC00..=0xD7A3u32 {
            let f = t.of(cp);
            assert_eq!(f & (L | UP | LO), L | UP | LO, "U+{cp:04X}");
            assert_eq!(f & (N | WS | OTHER | PREFIX), 0, "U+{cp:04X}");
        }
    }

    #[test]
    fn ascii_letters_are_a_to_z() {
        let t = tables();
        for c in 0u8..128 {
            assert_eq!(t.ascii[c as usize] & L != 0, c.is_ascii_alphabetic(), "{c}");
            assert_eq!(t.ascii[c as usize] & LO != 0, c.is_ascii_lowercase(), "{c}");
        }
    }

    #[test]
    fn contraction_folds_match_regex() {
        let t = tables();
        for &letter in CONTRACTION_LETTERS {
            let re = regex::Regex::new(&format!("^(?i:{})$", letter as char)).expect("compiles");
            for ch in (0..0x110000u32).filter_map(char::from_u32) {
                let mut buf = [0u8; 4];
                let s = ch.encode_utf8(&mut buf);
                let ours = t.fold_at(s.as_bytes(), 0).is_some_and(|(f, _)| f == letter);
                assert_eq!(
                    ours,
                    re.is_match(s),
                    "(?i:{}) on U+{:04X}",
                    letter as char,
                    ch as u32
                );
            }
        }
        // The one non-ASCII fold among these letters (U+212A KELVIN SIGN folds to k,
        // which no contraction uses).
        assert_eq!(t.fold_at("\u{17F}".as_bytes(), 0), Some((b's', 2)));
    }
}
