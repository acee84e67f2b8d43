//! Characters of several bytes on the block path ("wide" blocks): the classes
//! of a block's non-ASCII characters, each of its bytes in its character's
//! class, for the families whose classes outside ASCII are `\p{L}`, `\p{N}`,
//! `\s` and the rest, o200k's with its upper-case letters, and DeepSeek's
//! chain, whose letters take the marks, whose punctuation is `[\p{P}\p{S}]`
//! and whose CJK ranges are regions of their own
//! ([`super::patterns::Named::blocks_beyond_ascii`]).
//!
//! Most characters are decoded one by one and looked up in the scanners'
//! tables. Three lanes skip that, told by their first one or two bytes in a
//! few vector compares, every character in them a letter (checked by unit
//! tests against the tables): the Hangul syllables U+AC00-U+D77F, the CJK
//! ideographs U+4E00-U+9FFF, and the two-byte letters of Latin Extended,
//! Cyrillic, Hebrew and Arabic (not for o200k's family, whose words need
//! their case). For DeepSeek's chain the ideographs before U+9000 are the
//! letters of its CJK region; those from U+9000 on are decoded, as its region
//! ends at U+9FA5.
//!
//! [`super::block`] explains why the bit algebra holds for such blocks.

use super::classes::{block_at, Classes, Classifier};
use super::patterns::Named;
use super::unicode::{Tables, DS_CJK, DS_L, DS_M, DS_PS, L, LO, M, OTHER, UP};

/// Classes the characters of several bytes in block `x` (at byte `at` of `b`,
/// valid UTF-8) as `named` sees them: a letter (`\p{L}`) joins `l`, any
/// other character outside `\s` and `\p{N}` joins `p`, every byte of the
/// character alike, and all of them join `wide`. Where marks are not
/// punctuation (Qwen3.5's letter runs take them; o200k's words do), a mark
/// stays out of both. For o200k's family an upper-case-only letter (`\p{Lu}`,
/// `\p{Lt}`) also joins `up`. What stays in `na` (numbers, whitespace, those
/// marks, and a character begun before the block that is not a letter) is
/// left to the hard positions. A letter in both of o200k's case classes, or
/// begun before the block, joins `both`. For DeepSeek's chain (its own table)
/// letters and marks join `l`, those of its CJK region `both` too,
/// `[\p{P}\p{S}]` outside that region joins `p`, and the region's
/// punctuation stays in `na`.
///
/// Cost: a few vector compares, then one decode and one table lookup per
/// character of several bytes outside the fast lanes; the loop carries
/// only the mask of first bytes.
#[inline(always)]
pub(super) fn classify_beyond_ascii(
    x: &mut Classes,
    how: Classifier,
    b: &[u8],
    at: usize,
    t: &Tables,
    named: Named,
) {
    let cased = named.cased_words();
    let other = if cased || named == Named::Qwen35 {
        OTHER | M
    } else {
        OTHER
    };
    let ds = named.is_chain();
    let block = block_at(b, at);
    let (cont, hangul, cjk, cjk_9) = how.wide_lanes(&block);
    // DeepSeek's CJK region ends at U+9FA5: the ideographs from U+9000 on
    // are decoded
    let region = if ds { cjk & !cjk_9 } else { 0 };
    // the two-byte lane's letters are cased: not for o200k's family
    let two = if cased {
        0
    } else {
        how.two_byte_letters(&block)
    };
    let fast = two | if ds { hangul | region } else { hangul | cjk };
    let firsts = x.na & !cont & !fast;
    // the case masks only where they are read: the loop is the cost per
    // character. `third` is o200k's upper-case-only letters, or the letters
    // of DeepSeek's CJK region.
    let [mut letters, punct, mut third, lower] = match (cased, ds) {
        (true, _) => first_bytes::<true, false>(firsts, b, at, t, other),
        (false, true) => first_bytes::<false, true>(firsts, b, at, t, other),
        (false, false) => first_bytes::<false, false>(firsts, b, at, t, other),
    };
    letters |= fast;
    third |= region;
    // Continuation bytes first: a character whose first byte is 1 to 3 bytes
    // before the block.
    if cont & 1 != 0 {
        let lead = (1..=3)
            .filter_map(|k| at.checked_sub(k))
            .find(|&j| b.get(j).is_some_and(|&c| c >= 0xC0));
        if let Some(f) = lead.map(|j| t.decode_at(b, j).0) {
            let letter = if ds { classes_ds(f).0 } else { f & L != 0 };
            letters |= u64::from(letter);
            third |= u64::from(ds && letter && f & DS_CJK != 0);
        }
    }
    let l = spread_chars(letters, cont);
    let p = spread_chars(punct, cont);
    if cased {
        // a letter begun before the block (bit 0 of `letters` on a
        // continuation byte) is in neither `third` nor `lower`: it counts as
        // in both classes, and a capital after it is hard (`derive`)
        x.up |= spread_chars(third, cont);
        x.both = spread_chars(letters & !third & !lower, cont);
    } else if ds {
        x.both = spread_chars(third, cont);
    }
    x.l |= l;
    x.p |= p;
    x.na &= !(l | p);
    x.wide = l | p;
}

/// DeepSeek's classes of a character from its flags in DeepSeek's table: (a
/// letter or mark, `[\p{P}\p{S}]` outside the CJK region). The region's
/// punctuation is neither: it stays hard.
#[inline(always)]
fn classes_ds(f: u8) -> (bool, bool) {
    (f & (DS_L | DS_M) != 0, f & (DS_PS | DS_CJK) == DS_PS)
}

/// The letters, the other characters (`other` and no more of the flags
/// `other` names), and with `CASED` the upper-case-only and the
/// lower-case-only letters, among the characters whose first bytes are
/// `firsts` (bits of the block at byte `at` of `b`): bits on first bytes.
/// With `DS` the table is DeepSeek's, read by [`classes_ds`], and the third
/// mask holds the letters of its CJK region.
#[inline(always)]
fn first_bytes<const CASED: bool, const DS: bool>(
    mut firsts: u64,
    b: &[u8],
    at: usize,
    t: &Tables,
    other: u8,
) -> [u64; 4] {
    let mut m = [0u64; 4];
    while firsts != 0 {
        let i = firsts.trailing_zeros();
        let f = t.decode_at(b, at + i as usize).0;
        let (letter, punct) = if DS {
            classes_ds(f)
        } else {
            (f & L != 0, f & other == OTHER)
        };
        m[0] |= u64::from(letter) << i;
        m[1] |= u64::from(punct) << i;
        if DS {
            m[2] |= u64::from(letter && f & DS_CJK != 0) << i;
        }
        if CASED {
            m[2] |= u64::from(f & (L | LO) == L) << i;
            m[3] |= u64::from(f & (L | UP) == L) << i;
        }
        firsts &= firsts - 1;
    }
    m
}

/// `first` (bits on the first bytes of characters) copied onto each one's
/// continuation bytes (`cont`; a character has at most three).
#[inline(always)]
fn spread_chars(first: u64, cont: u64) -> u64 {
    let s = first | (cont & first << 1);
    let s = s | (cont & s << 1);
    s | (cont & s << 1)
}

/// The code points the fast lanes take (every one a letter): the tests'
/// statement of what [`Classifier::wide_lanes`] finds.
#[cfg(test)]
pub(super) const FAST_LETTERS: [(u32, u32); 2] = [(0x4E00, 0x9FFF), (0xAC00, 0xD77F)];

/// The two-byte letters the two-byte lane takes ([`Classifier::two_byte_letters`]):
/// Latin Extended-A and -B, IPA and the modifier letters to U+02BF, most of
/// Cyrillic, the Hebrew letters, and the Arabic letters U+0620-U+064A and
/// U+0680-U+06BF. Every one is a letter (a unit test checks the tables): the
/// tests' statement of what the lane finds.
#[cfg(test)]
pub(super) const TWO_BYTE_LETTERS: [(u32, u32); 6] = [
    (0x0100, 0x02BF),
    (0x0400, 0x047F),
    (0x04C0, 0x04FF),
    (0x05D0, 0x05EA),
    (0x0620, 0x064A),
    (0x0680, 0x06BF),
];

impl Classifier {
    /// The first bytes of the characters of `TWO_BYTE_LETTERS` that the
    /// block shows to be there: lead `C4-CA`, `D0`, `D1`, `D3` or `DA`
    /// alone, or `D7` with a second byte `90-AA` (U+05D0-U+05EA), `D8` with
    /// `A0-BF` (U+0620-U+063F), `D9` with `80-8A` (U+0640-U+064A).
    #[inline(always)]
    #[allow(unsafe_code)]
    pub(crate) fn two_byte_letters(self, b: &[u8; 64]) -> u64 {
        match self {
            #[cfg(test)]
            Classifier::Portable => two_byte_letters_portable(b),
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `Avx2` is only built by `available` after the CPU reported AVX2.
            Classifier::Avx2 => unsafe { two_byte_letters_avx2(b) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `Avx512` is only built by `available` after the CPU
            // reported AVX-512F and AVX-512BW.
            Classifier::Avx512 => unsafe { two_byte_letters_avx512(b) },
        }
    }

    /// The block's UTF-8 continuation bytes (`0x80-0xBF`), and apart the
    /// first bytes of the Hangul syllables U+AC00-U+D77F and of the CJK
    /// ideographs U+4E00-U+9FFF that the block shows to be there: lead
    /// `EB-EC` (U+B000-U+CFFF) or `E5-E9` (U+5000-U+9FFF) alone, or `EA`
    /// with a second byte from `B0` (U+AC00-U+AFFF), `ED` below `9E`
    /// (U+D000-U+D77F), `E4` from `B8` (U+4E00-U+4FFF). The fourth mask is
    /// the bytes `E9` (first bytes of U+9000-U+9FFF).
    #[inline(always)]
    #[allow(unsafe_code)]
    pub(crate) fn wide_lanes(self, b: &[u8; 64]) -> (u64, u64, u64, u64) {
        match self {
            #[cfg(test)]
            Classifier::Portable => wide_lanes_portable(b),
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `Avx2` is only built by `available` after the CPU reported AVX2.
            Classifier::Avx2 => unsafe { wide_lanes_avx2(b) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `Avx512` is only built by `available` after the CPU
            // reported AVX-512F and AVX-512BW.
            Classifier::Avx512 => unsafe { wide_lanes_avx512(b) },
        }
    }
}

/// [`Classifier::wide_lanes`] from the code points (the tests' oracle).
#[cfg(test)]
pub(super) fn wide_lanes_portable(b: &[u8; 64]) -> (u64, u64, u64, u64) {
    let (mut cont, mut hangul, mut cjk) = (0u64, 0u64, 0u64);
    for (k, &c) in b.iter().enumerate() {
        cont |= u64::from(c & 0xC0 == 0x80) << k;
        if c & 0xF0 != 0xE0 {
            continue;
        }
        // the code points a character with this first byte may be, narrowed
        // by its second byte where that is in the block
        let lead = u32::from(c & 0x0F) << 12;
        let (lo, hi) = match b.get(k + 1) {
            Some(&s) if s & 0xC0 == 0x80 => {
                let lo = lead | (u32::from(s & 0x3F) << 6);
                (lo, lo + 0x3F)
            }
            _ => (lead, lead + 0xFFF),
        };
        let inside = |(a, z): (u32, u32)| lo >= a && hi <= z;
        cjk |= u64::from(inside(FAST_LETTERS[0])) << k;
        hangul |= u64::from(inside(FAST_LETTERS[1])) << k;
    }
    let nine = (0..64).fold(0u64, |m, k| m | u64::from(b[k] == 0xE9) << k);
    (cont, hangul, cjk, nine)
}

/// The bytes `x` of `v` with `x - lo < len` (unsigned), as a movemask:
/// `x + 0x80 - lo` below `-128 + len` as signed bytes.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn in_range_avx2(v: std::arch::x86_64::__m256i, lo: u8, len: i16) -> u32 {
    use std::arch::x86_64::*;
    let shifted = _mm256_add_epi8(v, _mm256_set1_epi8(0x80u8.wrapping_sub(lo) as i8));
    let m = _mm256_cmpgt_epi8(_mm256_set1_epi8((-128 + len) as i8), shifted);
    _mm256_movemask_epi8(m) as u32
}

/// The bytes `x` of `v` with `x - lo < len` (unsigned), as a mask.
///
/// # Safety
/// The CPU must support AVX-512F and AVX-512BW.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
unsafe fn in_range_avx512(v: std::arch::x86_64::__m512i, lo: u8, len: u8) -> u64 {
    use std::arch::x86_64::*;
    _mm512_cmplt_epu8_mask(
        _mm512_sub_epi8(v, _mm512_set1_epi8(lo as i8)),
        _mm512_set1_epi8(len as i8),
    )
}

/// [`Classifier::wide_lanes`] with AVX2.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn wide_lanes_avx2(b: &[u8; 64]) -> (u64, u64, u64, u64) {
    use std::arch::x86_64::*;
    let (mut cont, mut hangul, mut cjk) = (0u64, 0u64, 0u64);
    let (mut e4, mut ea, mut ed, mut e9) = (0u64, 0u64, 0u64, 0u64);
    let (mut b8, mut b0, mut below_9e) = (0u64, 0u64, 0u64);
    for h in 0..2 {
        // SAFETY: `b` is 64 readable bytes: both 32-byte loads are in bounds.
        let v = unsafe { _mm256_loadu_si256(b.as_ptr().add(32 * h).cast::<__m256i>()) };
        // SAFETY: the caller's CPU supports AVX2 (this function's contract)
        let range = |lo, len| u64::from(unsafe { in_range_avx2(v, lo, len) }) << (32 * h);
        cont |= range(0x80, 0x40);
        hangul |= range(0xEB, 2);
        cjk |= range(0xE5, 5);
        e4 |= range(0xE4, 1);
        e9 |= range(0xE9, 1);
        ea |= range(0xEA, 1);
        ed |= range(0xED, 1);
        b8 |= range(0xB8, 8);
        b0 |= range(0xB0, 16);
        below_9e |= range(0x80, 0x1E);
    }
    (
        cont,
        hangul | ea & b0 >> 1 | ed & below_9e >> 1,
        cjk | e4 & b8 >> 1,
        e9,
    )
}

/// [`Classifier::wide_lanes`] with AVX-512BW.
///
/// # Safety
/// The CPU must support AVX-512F and AVX-512BW.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
unsafe fn wide_lanes_avx512(b: &[u8; 64]) -> (u64, u64, u64, u64) {
    use std::arch::x86_64::*;
    // SAFETY: `b` is 64 readable bytes, so the unaligned 64-byte load is in bounds.
    let v = unsafe { _mm512_loadu_si512(b.as_ptr().cast::<__m512i>()) };
    // SAFETY: the caller's CPU supports AVX-512BW (this function's contract)
    let range = |lo, len| unsafe { in_range_avx512(v, lo, len) };
    let cont = range(0x80, 0x40);
    let hangul = range(0xEB, 2)
        | range(0xEA, 1) & range(0xB0, 16) >> 1
        | range(0xED, 1) & range(0x80, 0x1E) >> 1;
    let cjk = range(0xE5, 5) | range(0xE4, 1) & range(0xB8, 8) >> 1;
    (cont, hangul, cjk, range(0xE9, 1))
}

/// [`Classifier::two_byte_letters`] from the code points (the tests' oracle).
#[cfg(test)]
pub(super) fn two_byte_letters_portable(b: &[u8; 64]) -> u64 {
    let mut m = 0u64;
    for (k, &c) in b.iter().enumerate() {
        if c & 0xE0 != 0xC0 {
            continue;
        }
        // the code points a character with this first byte may be, exactly
        // where its second byte is in the block
        let lead = u32::from(c & 0x1F) << 6;
        let (lo, hi) = match b.get(k + 1) {
            Some(&s) if s & 0xC0 == 0x80 => {
                (lead | u32::from(s & 0x3F), lead | u32::from(s & 0x3F))
            }
            _ => (lead, lead + 0x3F),
        };
        let inside = TWO_BYTE_LETTERS.iter().any(|&(a, z)| lo >= a && hi <= z);
        m |= u64::from(inside) << k;
    }
    m
}

/// [`Classifier::two_byte_letters`] with AVX2.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn two_byte_letters_avx2(b: &[u8; 64]) -> u64 {
    use std::arch::x86_64::*;
    let (mut alone, mut d7, mut d8, mut d9) = (0u64, 0u64, 0u64, 0u64);
    let (mut s90, mut sa0, mut s80) = (0u64, 0u64, 0u64);
    for h in 0..2 {
        // SAFETY: `b` is 64 readable bytes: both 32-byte loads are in bounds.
        let v = unsafe { _mm256_loadu_si256(b.as_ptr().add(32 * h).cast::<__m256i>()) };
        // SAFETY: the caller's CPU supports AVX2 (this function's contract)
        let range = |lo, len| u64::from(unsafe { in_range_avx2(v, lo, len) }) << (32 * h);
        alone |= range(0xC4, 7) | range(0xD0, 2) | range(0xD3, 1) | range(0xDA, 1);
        d7 |= range(0xD7, 1);
        d8 |= range(0xD8, 1);
        d9 |= range(0xD9, 1);
        s90 |= range(0x90, 0x1B);
        sa0 |= range(0xA0, 0x20);
        s80 |= range(0x80, 0x0B);
    }
    alone | d7 & s90 >> 1 | d8 & sa0 >> 1 | d9 & s80 >> 1
}

/// [`Classifier::two_byte_letters`] with AVX-512BW.
///
/// # Safety
/// The CPU must support AVX-512F and AVX-512BW.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
unsafe fn two_byte_letters_avx512(b: &[u8; 64]) -> u64 {
    use std::arch::x86_64::*;
    // SAFETY: `b` is 64 readable bytes, so the unaligned 64-byte load is in bounds.
    let v = unsafe { _mm512_loadu_si512(b.as_ptr().cast::<__m512i>()) };
    // SAFETY: the caller's CPU supports AVX-512BW (this function's contract)
    let range = |lo, len| unsafe { in_range_avx512(v, lo, len) };
    range(0xC4, 7)
        | range(0xD0, 2)
        | range(0xD3, 1)
        | range(0xDA, 1)
        | range(0xD7, 1) & range(0x90, 0x1B) >> 1
        | range(0xD8, 1) & range(0xA0, 0x20) >> 1
        | range(0xD9, 1) & range(0x80, 0x0B) >> 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pretok::unicode::{deepseek_tables, tables};

    #[test]
    fn fast_letters_are_letters() {
        let t = tables();
        for &(a, z) in &FAST_LETTERS {
            for cp in a..=z {
                assert!(t.of(cp) & L != 0, "U+{cp:04X}");
            }
        }
        // DeepSeek's chain: the Hangul syllables are letters outside its CJK
        // region, the ideographs before U+9000 (the lane without `E9`)
        // letters inside it; its region ends inside U+9000-U+9FFF
        let ds = deepseek_tables();
        let (a, z) = FAST_LETTERS[1];
        for cp in a..=z {
            assert_eq!(ds.of(cp) & DS_CJK, 0, "U+{cp:04X}");
            assert_eq!(classes_ds(ds.of(cp)), (true, false), "U+{cp:04X}");
        }
        for cp in FAST_LETTERS[0].0..0x9000 {
            assert_ne!(ds.of(cp) & DS_CJK, 0, "U+{cp:04X}");
            assert_eq!(classes_ds(ds.of(cp)), (true, false), "U+{cp:04X}");
        }
        assert_ne!(ds.of(0x9FA5) & DS_CJK, 0);
        assert_eq!(ds.of(0x9FA6) & DS_CJK, 0);
        for &(a, z) in &TWO_BYTE_LETTERS {
            for cp in a..=z {
                assert!(t.of(cp) & L != 0, "U+{cp:04X}");
                assert_eq!(ds.of(cp) & DS_CJK, 0, "U+{cp:04X}");
                assert_eq!(classes_ds(ds.of(cp)), (true, false), "U+{cp:04X}");
            }
        }
    }

    /// On valid text, the two-byte lane holds exactly the first bytes of the
    /// characters of [`TWO_BYTE_LETTERS`] (the second byte in the block, or a
    /// first byte that decides alone); every vector version agrees with it on
    /// bytes around its edges.
    #[test]
    fn two_byte_letters_follow_the_code_points() {
        let text: String = (0x80u32..0x800)
            .filter_map(char::from_u32)
            .flat_map(|c| [c, 'a'])
            .collect();
        let decides_alone = |c: u8| matches!(c, 0xC4..=0xCA | 0xD0 | 0xD1 | 0xD3 | 0xDA);
        for skip in 0..3 {
            let b = &text.as_bytes()[skip..];
            for at in (0..b.len().saturating_sub(64)).step_by(61) {
                let block = block_at(b, at);
                let got = two_byte_letters_portable(&block);
                for (k, &c) in block.iter().enumerate() {
                    let cp = std::str::from_utf8(&b[at + k..])
                        .ok()
                        .and_then(|s| s.chars().next())
                        .map_or(0, u32::from);
                    let decided = k < 63 || decides_alone(c);
                    let want = c >= 0xC0
                        && decided
                        && TWO_BYTE_LETTERS.iter().any(|&(a, z)| (a..=z).contains(&cp));
                    assert_eq!(got >> k & 1 == 1, want, "byte {k} ({c:#x}) at {at}");
                }
                for how in Classifier::available() {
                    assert_eq!(how.two_byte_letters(&block), got, "{block:?}");
                }
            }
        }
        const PICK: [u8; 16] = [
            0xC3, 0xC4, 0xCA, 0xCB, 0xD0, 0xD3, 0xD7, 0xD8, 0xD9, 0xDA, 0x90, 0xAA, 0xAB, 0xA0,
            0x8A, 0x8B,
        ];
        let mut rng = crate::TestRng(0x2b7e);
        for _ in 0..4000 {
            let mut block = [0u8; 64];
            for slot in block.iter_mut() {
                *slot = PICK[rng.below(PICK.len())];
            }
            for how in Classifier::available() {
                assert_eq!(
                    how.two_byte_letters(&block),
                    two_byte_letters_portable(&block),
                    "{block:?}"
                );
            }
        }
    }

    /// On valid text, the fast first bytes of each lane are exactly the
    /// characters in its range of [`FAST_LETTERS`] (their second byte in the
    /// block, or a first byte that decides alone), and the continuation
    /// bytes are the bytes 0x80-0xBF.
    #[test]
    fn portable_wide_lanes_follow_the_code_points() {
        let text: String =
            "가힣\u{d77f}\u{d780}\u{abff}\u{4e00}\u{4dff}\u{9fff}\u{a000}\u{5000}\u{cfff}é😀a ひ"
                .repeat(8);
        for skip in 0..4 {
            let b = &text.as_bytes()[skip..];
            let block = block_at(b, 0);
            let (cont, hangul, cjk, cjk_9) = wide_lanes_portable(&block);
            for (k, &c) in block.iter().enumerate() {
                assert_eq!(cont >> k & 1 == 1, c & 0xC0 == 0x80, "byte {k}");
                assert_eq!(cjk_9 >> k & 1 == 1, c == 0xE9, "byte {k}");
                let want = |(a, z): (u32, u32)| {
                    let s = std::str::from_utf8(&b[k..])
                        .ok()
                        .or_else(|| (1..=4).find_map(|n| std::str::from_utf8(&b[k..k + n]).ok()));
                    let cp = s.and_then(|s| s.chars().next()).map_or(0, u32::from);
                    let decided = k < 63 || matches!(c, 0xE5..=0xE9 | 0xEB | 0xEC);
                    c >= 0xC0 && decided && (a..=z).contains(&cp)
                };
                assert_eq!(
                    cjk >> k & 1 == 1,
                    want(FAST_LETTERS[0]),
                    "byte {k} of {block:?}"
                );
                assert_eq!(
                    hangul >> k & 1 == 1,
                    want(FAST_LETTERS[1]),
                    "byte {k} of {block:?}"
                );
            }
        }
    }

    #[test]
    fn vector_wide_lanes_match_portable() {
        // bytes around the lanes' edges, and real text
        const PICK: [u8; 16] = [
            0xE4, 0xE5, 0xE9, 0xEA, 0xEB, 0xEC, 0xED, 0xEE, 0xB0, 0xB8, 0xB7, 0x9D, 0x9E, 0x80,
            0xBF, b'a',
        ];
        let mut rng = crate::TestRng(0x71de);
        let mut blocks: Vec<[u8; 64]> = (0..4000)
            .map(|_| {
                let mut b = [0u8; 64];
                for slot in b.iter_mut() {
                    *slot = PICK[rng.below(PICK.len())];
                }
                b
            })
            .collect();
        let text = "한국어 文字 テキスト, naïve “quote” 😀".repeat(4);
        for skip in 0..32 {
            blocks.push(block_at(&text.as_bytes()[skip..], 0));
        }
        for how in Classifier::available() {
            for b in &blocks {
                assert_eq!(how.wide_lanes(b), wide_lanes_portable(b), "{b:?}");
            }
        }
    }
}
