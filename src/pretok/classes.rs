//! The classifier of the block path ([`super::block`]): one 64-byte block of
//! text into one bit mask per character class, by the best instruction set
//! the CPU has (AVX-512BW, AVX2; a portable classifier is the tests' oracle),
//! and the checks that decide whether a text goes to the block path at all.
//!
//! Complexity: one compare per class per 64 bytes (per 32 with AVX2).

/// Class masks of one 64-byte block.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Classes {
    /// `A-Z a-z`.
    pub(super) l: u64,
    /// `0-9`.
    pub(super) d: u64,
    /// Other ASCII (punctuation, symbols, controls), apostrophe included.
    pub(super) p: u64,
    /// `' '`.
    pub(super) sp: u64,
    /// `\t`, `\v`, `\f`.
    pub(super) t: u64,
    /// `\r`, `\n`.
    pub(super) c: u64,
    /// Bytes >= 0x80.
    pub(super) na: u64,
    /// `'`.
    pub(super) ap: u64,
    /// `A-Z` (o200k's upper-case class, among the ASCII letters).
    pub(super) up: u64,
    /// `/` (in o200k's `[\r\n/]*`).
    pub(super) sl: u64,
    /// ASCII controls other than whitespace (`\0-\x08`, `\x0E-\x1F`,
    /// `\x7F`), among `p`: DeepSeek's classes put them outside `[\p{P}\p{S}]`.
    pub(super) ctl: u64,
    /// Bytes >= 0x80 of the characters [`super::wide::classify_beyond_ascii`]
    /// classed (0 from the classifiers).
    pub(super) wide: u64,
    /// o200k's family: bytes of letters of several bytes in both of its case
    /// classes (`\p{Lo}`, `\p{Lm}`), and of a letter begun in the block
    /// before, whose case is not looked up (0 from the classifiers).
    pub(super) both: u64,
}

#[cfg(test)]
pub(super) const CL_L: u8 = 1;
#[cfg(test)]
pub(super) const CL_D: u8 = 2;
#[cfg(test)]
pub(super) const CL_P: u8 = 4;
#[cfg(test)]
pub(super) const CL_SP: u8 = 8;
#[cfg(test)]
pub(super) const CL_T: u8 = 16;
#[cfg(test)]
pub(super) const CL_C: u8 = 32;
#[cfg(test)]
pub(super) const CL_NA: u8 = 64;
#[cfg(test)]
pub(super) const CL_AP: u8 = 128;

#[cfg(test)]
/// The class bits of every byte (the portable classifier and the tests).
pub(super) const CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        let c = i as u8;
        t[i] = if c >= 0x80 {
            CL_NA
        } else if c.is_ascii_alphabetic() {
            CL_L
        } else if c.is_ascii_digit() {
            CL_D
        } else if c == b' ' {
            CL_SP
        } else if c == b'\t' || c == 0x0B || c == 0x0C {
            CL_T
        } else if c == b'\r' || c == b'\n' {
            CL_C
        } else if c == b'\'' {
            CL_P | CL_AP
        } else {
            CL_P
        };
        i += 1;
    }
    t
};

/// Byte-by-byte classifier: the oracle of the vector one, and the block path
/// on any platform in tests.
#[cfg(test)]
pub(crate) fn classify_portable(b: &[u8; 64]) -> Classes {
    let mut m = [0u64; 11];
    for (k, &c) in b.iter().enumerate() {
        let f = CLASS[c as usize] as u16
            | (c.is_ascii_uppercase() as u16) << 8
            | ((c == b'/') as u16) << 9
            | (is_control(c) as u16) << 10;
        for (j, slot) in m.iter_mut().enumerate() {
            *slot |= (((f >> j) & 1) as u64) << k;
        }
    }
    Classes {
        l: m[0],
        d: m[1],
        p: m[2],
        sp: m[3],
        t: m[4],
        c: m[5],
        na: m[6],
        ap: m[7],
        up: m[8],
        sl: m[9],
        ctl: m[10],
        wide: 0,
        both: 0,
    }
}

/// An ASCII control that is not whitespace (the `ctl` class).
#[cfg(test)]
pub(super) fn is_control(c: u8) -> bool {
    (c < 0x20 && !(0x09..=0x0D).contains(&c)) || c == 0x7F
}

/// AVX2 classifier (two 32-byte halves, one compare and movemask per class).
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn classify_avx2(b: &[u8; 64]) -> Classes {
    use std::arch::x86_64::*;
    // SAFETY: `b` is 64 readable bytes, so both unaligned 32-byte loads are in
    // bounds; `loadu` has no alignment requirement.
    let halves = unsafe {
        [
            _mm256_loadu_si256(b.as_ptr().cast::<__m256i>()),
            _mm256_loadu_si256(b.as_ptr().add(32).cast::<__m256i>()),
        ]
    };
    // `x + (0x80 - lo)` is below `-128 + len` (signed) exactly when `x - lo`
    // is below `len` (unsigned), for every byte value.
    macro_rules! range {
        ($x:expr, $lo:expr, $len:expr) => {
            _mm256_movemask_epi8(_mm256_cmpgt_epi8(
                _mm256_set1_epi8((-128i16 + $len) as i8),
                _mm256_add_epi8($x, _mm256_set1_epi8((0x80u8).wrapping_sub($lo) as i8)),
            )) as u32 as u64
        };
    }
    macro_rules! eq {
        ($x:expr, $c:expr) => {
            _mm256_movemask_epi8(_mm256_cmpeq_epi8($x, _mm256_set1_epi8($c as i8))) as u32 as u64
        };
    }
    let mut m = Classes::default();
    let mut ws = 0u64;
    for (h, &v) in halves.iter().enumerate() {
        let at = 32 * h as u32;
        let na = (_mm256_movemask_epi8(v) as u32 as u64) << at;
        let folded = _mm256_or_si256(v, _mm256_set1_epi8(0x20));
        m.l |= (range!(folded, b'a', 26) << at) & !na;
        m.d |= range!(v, b'0', 10) << at;
        m.sp |= eq!(v, b' ') << at;
        m.c |= (eq!(v, b'\n') | eq!(v, b'\r')) << at;
        ws |= range!(v, 9u8, 5) << at;
        m.ap |= eq!(v, b'\'') << at;
        m.up |= range!(v, b'A', 26) << at;
        m.sl |= eq!(v, b'/') << at;
        m.ctl |= (range!(v, 0u8, 32) | eq!(v, 0x7Fu8)) << at;
        m.na |= na;
    }
    m.t = ws & !m.c;
    m.p = !(m.l | m.d | m.sp | ws | m.na);
    m.ctl &= !ws;
    m
}

/// AVX-512BW classifier: the whole block in one register, each class one
/// compare straight into a 64-bit mask (no movemask, no halves to join).
///
/// # Safety
/// The CPU must support AVX-512BW (and so AVX-512F).
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
unsafe fn classify_avx512(b: &[u8; 64]) -> Classes {
    use std::arch::x86_64::*;
    // SAFETY: `b` is 64 readable bytes, so the unaligned 64-byte load is in
    // bounds; `loadu` has no alignment requirement.
    let v = unsafe { _mm512_loadu_si512(b.as_ptr().cast::<__m512i>()) };
    // bytes `x` with `x - lo < len` (unsigned, wrapping)
    macro_rules! range {
        ($x:expr, $lo:expr, $len:expr) => {
            _mm512_cmplt_epu8_mask(
                _mm512_sub_epi8($x, _mm512_set1_epi8($lo as i8)),
                _mm512_set1_epi8($len as i8),
            )
        };
    }
    macro_rules! eq {
        ($c:expr) => {
            _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8($c as i8))
        };
    }
    let na = _mm512_movepi8_mask(v);
    let folded = _mm512_or_si512(v, _mm512_set1_epi8(0x20));
    let l = range!(folded, b'a', 26) & !na;
    let d = range!(v, b'0', 10);
    let sp = eq!(b' ');
    let c = eq!(b'\n') | eq!(b'\r');
    let ws = range!(v, 9u8, 5);
    Classes {
        l,
        d,
        p: !(l | d | sp | ws | na),
        sp,
        t: ws & !c,
        c,
        na,
        ap: eq!(b'\''),
        up: range!(v, b'A', 26),
        sl: eq!(b'/'),
        ctl: (range!(v, 0u8, 32) & !ws) | eq!(0x7Fu8),
        wide: 0,
        both: 0,
    }
}

/// One block's classes by the best classifier the CPU has.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Classifier {
    #[cfg(test)]
    Portable,
    #[cfg(target_arch = "x86_64")]
    Avx2,
    #[cfg(target_arch = "x86_64")]
    Avx512,
}

impl Classifier {
    /// The vector classifier when the CPU has one, else `None` (the scalar
    /// scanner is then faster than the portable classifier).
    pub(crate) fn detect() -> Option<Classifier> {
        Classifier::available().last()
    }

    /// Every vector classifier the CPU has, slowest first (the tests run
    /// each against the portable one). Each also needs BMI1, BMI2, LZCNT and
    /// POPCNT, which its walk is compiled with ([`spans`]). No allocation:
    /// [`Self::detect`] runs once per text, and so once per document of a
    /// batch.
    pub(crate) fn available() -> impl Iterator<Item = Classifier> {
        #[cfg(target_arch = "x86_64")]
        let base = is_x86_feature_detected!("avx2")
            && is_x86_feature_detected!("bmi1")
            && is_x86_feature_detected!("bmi2")
            && is_x86_feature_detected!("lzcnt")
            && is_x86_feature_detected!("popcnt");
        #[cfg(target_arch = "x86_64")]
        let ways = [
            base.then_some(Classifier::Avx2),
            (base && is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512bw"))
                .then_some(Classifier::Avx512),
        ];
        #[cfg(not(target_arch = "x86_64"))]
        let ways: [Option<Classifier>; 0] = [];
        ways.into_iter().flatten()
    }

    #[inline(always)]
    #[allow(unsafe_code)]
    pub(super) fn classify(self, b: &[u8; 64]) -> Classes {
        match self {
            #[cfg(test)]
            Classifier::Portable => classify_portable(b),
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `Avx2` is only built by `available` after the CPU reported AVX2.
            Classifier::Avx2 => unsafe { classify_avx2(b) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `Avx512` is only built by `available` after the CPU
            // reported AVX-512F and AVX-512BW.
            Classifier::Avx512 => unsafe { classify_avx512(b) },
        }
    }
}

/// The block at `at` (64 bytes, zero-padded past the end of `b`).
#[inline(always)]
pub(super) fn block_at(b: &[u8], at: usize) -> [u8; 64] {
    let mut out = [0u8; 64];
    match b.get(at..at + 64) {
        Some(s) => out.copy_from_slice(s),
        None => {
            let rest = b.get(at..).unwrap_or(&[]);
            out[..rest.len()].copy_from_slice(rest);
        }
    }
    out
}

/// Whether a text suits the block path: it is longer than a block. Shorter
/// text runs the scalar loop, which a block's set-up would not pay back.
#[inline]
pub(crate) fn worth_blocks(b: &[u8]) -> bool {
    b.len() > 64
}
