//! The fast lanes of the wide blocks ([`super::wide`]): in one pass of vector
//! compares over a 64-byte block, the first bytes of the characters that need
//! no decode because every code point their bytes allow is a letter, or a
//! punctuation mark or symbol, of known classes. A lane is told by a character's first byte, or by its first two
//! or three bytes where the ones after it are in the block; a character cut by
//! the block's end whose first byte does not decide alone is left out (it is
//! decoded).
//!
//! Each lane's code points are listed in a table of ranges (the statement of
//! what it finds; the pass over DeepSeek LLM's and Coder's lines reads them
//! to learn which lanes a chain classes alike); unit tests check that every
//! one of them has the classes the wide blocks give it, and that
//! every vector version agrees with [`lane_portable`], which reads the ranges.
//!
//! Cost: nine compares per block with a byte >= 0x80 for the three-byte
//! lanes (twice that with AVX2), and about twenty more for the kana and the
//! two-byte ones, only in a block where the first leave characters over
//! (Korean and Chinese blocks seldom do).

use super::classes::Classifier;

/// The lanes of one 64-byte block: bits on the first bytes of the characters
/// in each lane (`cont` and `e9` are bytes, not characters).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Lanes {
    /// The UTF-8 continuation bytes `0x80-0xBF`.
    pub(crate) cont: u64,
    /// The Hangul syllables (`HANGUL`).
    pub(crate) hangul: u64,
    /// The CJK ideographs (`CJK`).
    pub(crate) cjk: u64,
    /// The bytes `E9`: first bytes of U+9000-U+9FFF, where DeepSeek's CJK
    /// region ends.
    pub(crate) e9: u64,
    /// The kana letters (`KANA`).
    pub(crate) kana: u64,
    /// The two-byte letters of `TWO_BYTE`, case not told apart.
    pub(crate) two: u64,
    /// The Latin-1 and Cyrillic capitals (`UPPER_TWO_BYTE`).
    pub(crate) upper_two: u64,
    /// The Latin-1 and Cyrillic small letters (`LOWER_TWO_BYTE`).
    pub(crate) lower_two: u64,
    /// The Hebrew and Arabic letters of `CASELESS_TWO_BYTE`.
    pub(crate) caseless_two: u64,
    /// The Latin-1 punctuation and symbols of `PUNCT_TWO_BYTE`.
    pub(crate) punct_two: u64,
}

/// The Hangul syllables: `EB-EC` alone, `EA` with `B0-BF`, `ED` with `80-9D`.
pub(super) const HANGUL: &[(u32, u32)] = &[(0xAC00, 0xD77F)];

/// The CJK ideographs: `E5-E9` alone, `E4` with `B8-BF`.
pub(super) const CJK: &[(u32, u32)] = &[(0x4E00, 0x9FFF)];

/// The kana letters (`\p{Lo}` and `\p{Lm}`): `E3 81` with a third byte from
/// `81`, `E3 82` with any but `97-9C` and `A0`, `E3 83` with any but `BB`.
/// Left out: the voicing marks U+3099-U+309C, the double hyphen U+30A0 and
/// the middle dot U+30FB, which are no letters, and two unassigned code
/// points.
pub(super) const KANA: &[(u32, u32)] = &[
    (0x3041, 0x3096),
    (0x309D, 0x309F),
    (0x30A1, 0x30FA),
    (0x30FC, 0x30FF),
];

/// The Latin-1 letters, Latin Extended-A and -B, IPA and the modifier
/// letters to U+02BF, most of Cyrillic, the Hebrew letters, and the Arabic
/// letters U+0620-U+064A and U+0680-U+06BF: lead `C4-CA`, `D0`, `D1`, `D3`
/// or `DA` alone, or `C3` with any but `97` and `B7` (the signs `×` and
/// `÷`), `D7` with `90-AA`, `D8` with `A0-BF`, `D9` with `80-8A`.
pub(super) const TWO_BYTE: &[(u32, u32)] = &[
    (0x00C0, 0x00D6),
    (0x00D8, 0x00F6),
    (0x00F8, 0x02BF),
    (0x0400, 0x047F),
    (0x04C0, 0x04FF),
    (0x05D0, 0x05EA),
    (0x0620, 0x064A),
    (0x0680, 0x06BF),
];

/// The Latin-1 and Cyrillic capitals (`\p{Lu}`): `C3` with `80-96` or
/// `98-9E`, `D0` with `80-AF`.
pub(super) const UPPER_TWO_BYTE: &[(u32, u32)] =
    &[(0x00C0, 0x00D6), (0x00D8, 0x00DE), (0x0400, 0x042F)];

/// The Latin-1 and Cyrillic small letters (`\p{Ll}`): `C3` with `9F-B6` or
/// `B8-BF`, `D0` with `B0-BF`, `D1` with `80-9F`.
pub(super) const LOWER_TWO_BYTE: &[(u32, u32)] =
    &[(0x00DF, 0x00F6), (0x00F8, 0x00FF), (0x0430, 0x045F)];

/// The Hebrew and Arabic letters of `TWO_BYTE`, all `\p{Lo}` or `\p{Lm}`
/// (in both of o200k's case classes): `DA` alone, `D7` with `90-AA`, `D8`
/// with `A0-BF`, `D9` with `80-8A`.
pub(super) const CASELESS_TWO_BYTE: &[(u32, u32)] =
    &[(0x05D0, 0x05EA), (0x0620, 0x064A), (0x0680, 0x06BF)];

/// The Latin-1 punctuation and symbols (`\p{P}` or `\p{S}`, so neither
/// `\s`, `\p{L}`, `\p{N}` nor a mark): `C2` with `A1-A9`, `AB`, `AC`,
/// `AE-B1`, `B4`, `B6-B8`, `BB` or `BF`, and the signs `×` and `÷` (`C3`
/// with `97` or `B7`). Left out: the letters `ª`, `µ`, `º`, the numbers
/// `²`, `³`, `¹`, `¼-¾`, and the soft hyphen (a format character, which
/// DeepSeek's punctuation does not take).
pub(super) const PUNCT_TWO_BYTE: &[(u32, u32)] = &[
    (0x00A1, 0x00A9),
    (0x00AB, 0x00AC),
    (0x00AE, 0x00B1),
    (0x00B4, 0x00B4),
    (0x00B6, 0x00B8),
    (0x00BB, 0x00BB),
    (0x00BF, 0x00BF),
    (0x00D7, 0x00D7),
    (0x00F7, 0x00F7),
];

impl Classifier {
    /// The three-byte lanes of block `b` (`cont`, `hangul`, `cjk`, `e9`); the
    /// others are 0 until [`Self::more_lanes`] adds them. Korean and Chinese
    /// blocks rarely need more.
    #[inline(always)]
    #[allow(unsafe_code)]
    pub(crate) fn lanes(self, b: &[u8; 64]) -> Lanes {
        match self {
            #[cfg(test)]
            Classifier::Portable => Lanes {
                kana: 0,
                two: 0,
                upper_two: 0,
                lower_two: 0,
                caseless_two: 0,
                punct_two: 0,
                ..lanes_portable(b)
            },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `Avx2` is only built by `available` after the CPU reported AVX2.
            Classifier::Avx2 => unsafe { lanes_avx2::<false>(b, Lanes::default()) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `Avx512` is only built by `available` after the CPU
            // reported AVX-512F and AVX-512BW.
            Classifier::Avx512 => unsafe { lanes_avx512::<false>(b, Lanes::default()) },
        }
    }

    /// `base` (from [`Self::lanes`] on the same block) with the kana and the
    /// two-byte lanes, letters and punctuation.
    #[inline(always)]
    #[allow(unsafe_code)]
    pub(crate) fn more_lanes(self, b: &[u8; 64], base: Lanes) -> Lanes {
        match self {
            #[cfg(test)]
            Classifier::Portable => lanes_portable(b),
            #[cfg(target_arch = "x86_64")]
            // SAFETY: as in `lanes`
            Classifier::Avx2 => unsafe { lanes_avx2::<true>(b, base) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: as in `lanes`
            Classifier::Avx512 => unsafe { lanes_avx512::<true>(b, base) },
        }
    }
}

/// With `MORE`, `base` with the kana and two-byte lanes, else the
/// three-byte lanes, from `range(lo, len)`, the block's bytes `x` with
/// `x - lo < len` (unsigned): the byte rules of the lanes' tables, once for
/// every instruction set.
#[inline(always)]
fn lanes_from<const MORE: bool>(range: impl Fn(u8, u8) -> u64, base: Lanes) -> Lanes {
    let second = |lead: u8, lo: u8, len: u8| range(lead, 1) & range(lo, len) >> 1;
    if !MORE {
        return Lanes {
            cont: range(0x80, 0x40),
            hangul: range(0xEB, 2) | second(0xEA, 0xB0, 0x10) | second(0xED, 0x80, 0x1E),
            cjk: range(0xE5, 5) | second(0xE4, 0xB8, 8),
            e9: range(0xE9, 1),
            ..base
        };
    }
    // a third byte in `cont` but outside the listed ones
    let third = |lead2: u8, not: u64| range(lead2, 1) >> 1 & (base.cont & !not) >> 2;
    let kana = range(0xE3, 1)
        & (third(0x81, range(0x80, 1))
            | third(0x82, range(0x97, 6) | range(0xA0, 1))
            | third(0x83, range(0xBB, 1)));
    let caseless_two = range(0xDA, 1)
        | second(0xD7, 0x90, 0x1B)
        | second(0xD8, 0xA0, 0x20)
        | second(0xD9, 0x80, 0x0B);
    let upper_two = second(0xC3, 0x80, 0x17) | second(0xC3, 0x98, 0x07) | second(0xD0, 0x80, 0x30);
    let lower_two = second(0xC3, 0x9F, 0x18)
        | second(0xC3, 0xB8, 0x08)
        | second(0xD0, 0xB0, 0x10)
        | second(0xD1, 0x80, 0x20);
    let c2_punct = range(0xA1, 9)
        | range(0xAB, 2)
        | range(0xAE, 4)
        | range(0xB4, 1)
        | range(0xB6, 3)
        | range(0xBB, 1)
        | range(0xBF, 1);
    let punct_two = range(0xC2, 1) & c2_punct >> 1 | second(0xC3, 0x97, 1) | second(0xC3, 0xB7, 1);
    Lanes {
        kana,
        punct_two,
        two: range(0xC4, 7)
            | range(0xD0, 2)
            | range(0xD3, 1)
            | caseless_two
            | upper_two
            | lower_two,
        upper_two,
        lower_two,
        caseless_two,
        ..base
    }
}

/// The first bytes of the characters whose every code point allowed by the
/// bytes of `b` from it on is in `ranges` (the tests' oracle): a two- or
/// three-byte character's code point, narrowed by each of its bytes in the
/// block.
#[cfg(test)]
pub(super) fn lane_portable(b: &[u8; 64], ranges: &[(u32, u32)]) -> u64 {
    let mut m = 0u64;
    for (k, &c) in b.iter().enumerate() {
        let n = match c {
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            _ => continue,
        };
        let (mut lo, mut hi) = (u32::from(c & (0x7F >> n)), u32::from(c & (0x7F >> n)));
        for j in 1..n {
            match b.get(k + j) {
                Some(&s) if s & 0xC0 == 0x80 => {
                    (lo, hi) = (lo << 6 | u32::from(s & 0x3F), hi << 6 | u32::from(s & 0x3F))
                }
                _ => (lo, hi) = (lo << 6, hi << 6 | 0x3F),
            }
        }
        let inside = ranges.iter().any(|&(a, z)| lo >= a && hi <= z);
        m |= u64::from(inside) << k;
    }
    m
}

/// Every lane of `b` from the code points (the tests' oracle).
#[cfg(test)]
pub(super) fn lanes_portable(b: &[u8; 64]) -> Lanes {
    let bytes = |lo: u8, len: u8| {
        (0..64).fold(0u64, |m, k| m | u64::from(b[k].wrapping_sub(lo) < len) << k)
    };
    Lanes {
        cont: bytes(0x80, 0x40),
        hangul: lane_portable(b, HANGUL),
        cjk: lane_portable(b, CJK),
        e9: bytes(0xE9, 1),
        kana: lane_portable(b, KANA),
        two: lane_portable(b, TWO_BYTE),
        upper_two: lane_portable(b, UPPER_TWO_BYTE),
        lower_two: lane_portable(b, LOWER_TWO_BYTE),
        caseless_two: lane_portable(b, CASELESS_TWO_BYTE),
        punct_two: lane_portable(b, PUNCT_TWO_BYTE),
    }
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
unsafe fn in_range_avx2(v: std::arch::x86_64::__m256i, lo: u8, len: u8) -> u32 {
    use std::arch::x86_64::*;
    let shifted = _mm256_add_epi8(v, _mm256_set1_epi8(0x80u8.wrapping_sub(lo) as i8));
    let bound = (-128 + i16::from(len)) as i8;
    let m = _mm256_cmpgt_epi8(_mm256_set1_epi8(bound), shifted);
    _mm256_movemask_epi8(m) as u32
}

/// [`Classifier::lanes`] (`MORE`: [`Classifier::more_lanes`]) with AVX2, each
/// range on both 32-byte halves.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn lanes_avx2<const MORE: bool>(b: &[u8; 64], base: Lanes) -> Lanes {
    use std::arch::x86_64::*;
    // SAFETY: `b` is 64 readable bytes: both 32-byte loads are in bounds.
    let (v0, v1) = unsafe {
        (
            _mm256_loadu_si256(b.as_ptr().cast::<__m256i>()),
            _mm256_loadu_si256(b.as_ptr().add(32).cast::<__m256i>()),
        )
    };
    let range = |lo, len| {
        // SAFETY: the caller's CPU supports AVX2 (this function's contract)
        let (a, z) = unsafe { (in_range_avx2(v0, lo, len), in_range_avx2(v1, lo, len)) };
        u64::from(a) | u64::from(z) << 32
    };
    lanes_from::<MORE>(range, base)
}

/// [`Classifier::lanes`] (`MORE`: [`Classifier::more_lanes`]) with AVX-512BW.
///
/// # Safety
/// The CPU must support AVX-512F and AVX-512BW.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
unsafe fn lanes_avx512<const MORE: bool>(b: &[u8; 64], base: Lanes) -> Lanes {
    use std::arch::x86_64::*;
    // SAFETY: `b` is 64 readable bytes, so the unaligned 64-byte load is in bounds.
    let v = unsafe { _mm512_loadu_si512(b.as_ptr().cast::<__m512i>()) };
    let range = |lo: u8, len: u8| {
        _mm512_cmplt_epu8_mask(
            _mm512_sub_epi8(v, _mm512_set1_epi8(lo as i8)),
            _mm512_set1_epi8(len as i8),
        )
    };
    lanes_from::<MORE>(range, base)
}

#[cfg(test)]
mod tests;
