//! The class masks of one 64-byte block for the flat pass ([`super::ascii`]):
//! bit `k` of each mask is byte `k` of the block; and a block's eight bit
//! planes ([`Way::planes`]), which the pass over the other lines
//! ([`super::fused`]) makes its masks with.
//!
//! The classes are sets of ASCII bytes known only when the chain is built,
//! so each is tested by a nibble table: `t[lo]` has bit `hi` set when the
//! byte `hi << 4 | lo` is in the set. A byte is in it when `t[c & 15]` and
//! `1 << (c >> 4)` share a bit; `1 << hi` is 0 for `hi >= 8`, so no byte >=
//! 0x80 is in any set. With AVX2 or AVX-512BW both lookups are byte shuffles
//! (two per set for 64 bytes with AVX2, one with AVX-512BW); the portable
//! classifier reads the same tables byte by byte.
//!
//! Complexity: a fixed number of vector operations per block.

/// The classes of one block: `a` the first run class, `b` the second's
/// characters outside the first, `w` the prefix whitespace, `d` the digits,
/// `lf` the line breaks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Masks {
    pub(super) a: u64,
    pub(super) b: u64,
    pub(super) w: u64,
    pub(super) d: u64,
    pub(super) lf: u64,
}

/// The nibble tables of the five classes (order of [`Masks`]), each
/// repeated in the four 16-byte lanes of a 64-byte register.
#[derive(Debug)]
pub(super) struct Nibbles([[u8; 64]; 5]);

/// `1 << hi` for `hi` in `0..16` (0 from 8 on), per 16-byte lane.
const POW: [u8; 64] = {
    let mut t = [0u8; 64];
    let mut i = 0;
    while i < 64 {
        if i % 16 < 8 {
            t[i] = 1 << (i % 16);
        }
        i += 1;
    }
    t
};

impl Nibbles {
    /// The tables of the sets `[a, b, w, d, lf]` (ASCII bytes as bits).
    pub(super) fn new(sets: [u128; 5]) -> Nibbles {
        let mut t = [[0u8; 64]; 5];
        for (k, s) in sets.iter().enumerate() {
            for c in (0..128u32).filter(|&c| s >> c & 1 == 1) {
                for lane in 0..4 {
                    t[k][lane * 16 + (c & 15) as usize] |= 1 << (c >> 4);
                }
            }
        }
        Nibbles(t)
    }
}

/// How a block is classified: the best the CPU has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Way {
    Portable,
    #[cfg(target_arch = "x86_64")]
    Avx2,
    #[cfg(target_arch = "x86_64")]
    Avx512,
}

impl Way {
    /// Every classifier the CPU has, slowest first (the portable one always).
    pub(super) fn available() -> impl Iterator<Item = Way> {
        #[cfg(target_arch = "x86_64")]
        let (avx2, avx512) = {
            let avx2 = is_x86_feature_detected!("avx2");
            let avx512 =
                is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512bw");
            (avx2.then_some(Way::Avx2), avx512.then_some(Way::Avx512))
        };
        #[cfg(not(target_arch = "x86_64"))]
        let (avx2, avx512): (Option<Way>, Option<Way>) = (None, None);
        [Some(Way::Portable), avx2, avx512].into_iter().flatten()
    }

    /// The fastest classifier of [`Self::available`].
    pub(super) fn detect() -> Way {
        Way::available().last().unwrap_or(Way::Portable)
    }

    /// The masks of `blk`.
    #[inline(always)]
    #[allow(unsafe_code)]
    pub(super) fn classify(self, n: &Nibbles, blk: &[u8; 64]) -> Masks {
        match self {
            Way::Portable => portable(n, blk),
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `Avx2` comes from `available` after the CPU reported AVX2.
            Way::Avx2 => unsafe { avx2(n, blk) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `Avx512` comes from `available` after the CPU reported
            // AVX-512F and AVX-512BW.
            Way::Avx512 => unsafe { avx512(n, blk) },
        }
    }

    /// The eight bit planes of `blk`: bit `i` of plane `k` is bit `k` of
    /// byte `i` (one mask per flag of a block of flags, one per byte).
    #[inline(always)]
    #[allow(unsafe_code)]
    pub(super) fn planes(self, blk: &[u8; 64]) -> [u64; 8] {
        match self {
            Way::Portable => planes_portable(blk),
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `Avx2` comes from `available` after the CPU reported AVX2.
            Way::Avx2 => unsafe { planes_avx2(blk) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `Avx512` comes from `available` after the CPU reported
            // AVX-512F and AVX-512BW.
            Way::Avx512 => unsafe { planes_avx512(blk) },
        }
    }
}

const LSB: u64 = 0x0101_0101_0101_0101;
/// Gathers the low bit of each byte into the top byte (byte `j` to bit `j`).
const GATHER: u64 = 0x0102_0408_1020_4080;

/// Eight bytes at a time, by multiplication: the oracle of the vector ones.
fn planes_portable(blk: &[u8; 64]) -> [u64; 8] {
    let mut m = [0u64; 8];
    for (j, g) in blk.chunks_exact(8).enumerate() {
        let mut a = [0u8; 8];
        a.copy_from_slice(g);
        let v = u64::from_le_bytes(a);
        for (k, slot) in m.iter_mut().enumerate() {
            *slot |= (((v >> k) & LSB).wrapping_mul(GATHER) >> 56) << (8 * j);
        }
    }
    m
}

/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn planes_avx2(blk: &[u8; 64]) -> [u64; 8] {
    use std::arch::x86_64::*;
    let mut m = [0u64; 8];
    for at in [0, 32] {
        // SAFETY: 32 bytes at offset 0 or 32 of a 64-byte array; `loadu`
        // has no alignment requirement.
        let mut v = unsafe { _mm256_loadu_si256(blk.as_ptr().add(at).cast::<__m256i>()) };
        // plane 7 is each byte's top bit; shifting left by one brings the
        // next plane up (bits crossing into the next byte are not read)
        for k in (0..8).rev() {
            m[k] |= u64::from(_mm256_movemask_epi8(v) as u32) << at;
            v = _mm256_add_epi8(v, v);
        }
    }
    m
}

/// # Safety
/// The CPU must support AVX-512F and AVX-512BW.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
unsafe fn planes_avx512(blk: &[u8; 64]) -> [u64; 8] {
    use std::arch::x86_64::*;
    // SAFETY: a whole 64-byte array; `loadu` has no alignment requirement.
    let v = unsafe { _mm512_loadu_si512(blk.as_ptr().cast::<__m512i>()) };
    let mut m = [0u64; 8];
    for (k, slot) in m.iter_mut().enumerate() {
        *slot = _mm512_test_epi8_mask(v, _mm512_set1_epi8(1 << k));
    }
    m
}

fn from_array(m: [u64; 5]) -> Masks {
    Masks {
        a: m[0],
        b: m[1],
        w: m[2],
        d: m[3],
        lf: m[4],
    }
}

/// Byte by byte: the oracle of the vector classifiers.
fn portable(n: &Nibbles, blk: &[u8; 64]) -> Masks {
    let mut m = [0u64; 5];
    for (i, &c) in blk.iter().enumerate() {
        let bit = POW[(c >> 4) as usize];
        for (slot, t) in m.iter_mut().zip(&n.0) {
            *slot |= u64::from(t[(c & 15) as usize] & bit != 0) << i;
        }
    }
    from_array(m)
}

/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn avx2(n: &Nibbles, blk: &[u8; 64]) -> Masks {
    use std::arch::x86_64::*;
    // SAFETY: every load reads 32 bytes at offset 0 or 32 of a 64-byte array;
    // `loadu` has no alignment requirement.
    let load = |p: &[u8; 64], at: usize| unsafe {
        _mm256_loadu_si256(p.as_ptr().add(at).cast::<__m256i>())
    };
    let low = _mm256_set1_epi8(0x0F);
    let pow = load(&POW, 0);
    let mut m = [0u64; 5];
    for at in [0, 32] {
        let v = load(blk, at);
        let lo = _mm256_and_si256(v, low);
        let bit = _mm256_shuffle_epi8(pow, _mm256_and_si256(_mm256_srli_epi16(v, 4), low));
        for (slot, t) in m.iter_mut().zip(&n.0) {
            let hit = _mm256_and_si256(_mm256_shuffle_epi8(load(t, 0), lo), bit);
            let none = _mm256_movemask_epi8(_mm256_cmpeq_epi8(hit, _mm256_setzero_si256()));
            *slot |= u64::from(!(none as u32)) << at;
        }
    }
    from_array(m)
}

/// # Safety
/// The CPU must support AVX-512F and AVX-512BW.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
unsafe fn avx512(n: &Nibbles, blk: &[u8; 64]) -> Masks {
    use std::arch::x86_64::*;
    // SAFETY: every load reads a whole 64-byte array; `loadu` has no
    // alignment requirement.
    let load = |p: &[u8; 64]| unsafe { _mm512_loadu_si512(p.as_ptr().cast::<__m512i>()) };
    let low = _mm512_set1_epi8(0x0F);
    let v = load(blk);
    let lo = _mm512_and_si512(v, low);
    let bit = _mm512_shuffle_epi8(load(&POW), _mm512_and_si512(_mm512_srli_epi16(v, 4), low));
    let mut m = [0u64; 5];
    for (slot, t) in m.iter_mut().zip(&n.0) {
        *slot = _mm512_test_epi8_mask(_mm512_shuffle_epi8(load(t), lo), bit);
    }
    from_array(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every vector classifier gives the portable one's masks, on blocks of
    /// every byte value at every position.
    #[test]
    fn the_classifiers_agree() {
        let sets = [
            0x07FF_FFFE_07FF_FFFE_0000_0000_0000_0000u128,
            0x7800_0001_F800_0001_FC00_FFFE_0000_0000,
            1 << b' ' | 1 << b'\t' | 1 << 0x0B | 1 << 0x0C,
            0x03FF_0000_0000_0000,
            1 << b'\r' | 1 << b'\n',
        ];
        let n = Nibbles::new(sets);
        let mut x: u64 = 0x9e37_79b9;
        for round in 0..2_000 {
            let mut blk = [0u8; 64];
            for (i, c) in blk.iter_mut().enumerate() {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                *c = if round < 4 {
                    (round * 64 + i) as u8
                } else {
                    x as u8
                };
            }
            let want = portable(&n, &blk);
            for (k, s) in sets.iter().enumerate() {
                let got = [want.a, want.b, want.w, want.d, want.lf][k];
                for (i, &c) in blk.iter().enumerate() {
                    let member = c < 0x80 && s >> c & 1 == 1;
                    assert_eq!(got >> i & 1 == 1, member, "set {k} byte {c:#x}");
                }
            }
            for way in Way::available() {
                assert_eq!(way.classify(&n, &blk), want, "{way:?}");
            }
            let planes = planes_portable(&blk);
            for (k, plane) in planes.iter().enumerate() {
                for (i, &c) in blk.iter().enumerate() {
                    assert_eq!(plane >> i & 1, u64::from(c >> k & 1), "plane {k} byte {i}");
                }
            }
            for way in Way::available() {
                assert_eq!(way.planes(&blk), planes, "{way:?}");
            }
        }
    }
}
