//! Code points to UTF-8: the text of a Python `str` as the encoder reads it.
//!
//! CPython stores a `str` as one code unit per character (1, 2 or 4 bytes
//! wide, the narrowest that fits its largest character) and builds a UTF-8
//! copy only when asked, one character at a time: 1.2-1.6 ms per MB of
//! Korean, 10-17 % of a steady encode of it. The loops here do the same
//! conversion 16 characters at a time where the CPU has AVX-512 VBMI2
//! (each character's 1-4 byte form built in a 32-bit lane, the unused bytes
//! squeezed out with one byte compress), and otherwise one character per step
//! without a branch on its length (one 4-byte store, the cursor advanced by
//! the length), ASCII runs eight or four at a time.
//!
//! A `str` may hold lone surrogates (U+D800-U+DFFF), which UTF-8 cannot
//! encode: the conversions then return `None`, and the caller falls back to
//! CPython's own conversion, which raises the usual `UnicodeEncodeError`.

/// Room past the last form written: the vector path stores 64 bytes at a
/// time, the scalar one 4.
const SLACK: usize = 64;

/// Whether this CPU has the vector path (AVX-512 VBMI2 and BMI2). Without
/// it the scalar loops convert everything, and they are no faster than
/// CPython's own conversion (measured on 1 MB: Korean UCS-2 0.91 against
/// 1.14 ms/MB, Python docs UCS-2 0.49 against 0.38, multilingual UCS-4 1.9
/// against 0.85; the vector path: 0.11, 0.09, 0.26), so callers should
/// convert here only when it is there.
pub fn vector_available() -> bool {
    vbmi2::available()
}

/// A string's code units, as CPython stores them.
#[derive(Clone, Copy, Debug)]
pub enum Units<'a> {
    Latin1(&'a [u8]),
    Ucs2(&'a [u16]),
    Ucs4(&'a [u32]),
}

/// Text converted to UTF-8, in a buffer that can be reused
/// ([`Utf8::into_buffer`]): its first `len` bytes are the text (none by
/// default).
#[derive(Default)]
pub struct Utf8 {
    buf: Vec<u8>,
    len: usize,
}

impl Utf8 {
    #[allow(unsafe_code)] // an unchecked conversion, see the SAFETY comment
    pub fn as_str(&self) -> &str {
        let bytes = &self.buf[..self.len];
        debug_assert!(std::str::from_utf8(bytes).is_ok());
        // SAFETY: `buf[..len]` is only ever set by `convert`, which writes
        // complete UTF-8 forms of code points that are neither surrogates nor
        // above U+10FFFF (it fails on those before making a `Utf8`): `forms`
        // is the standard encoding, and `put` and the vector path advance
        // exactly over the form they chose (the extra bytes they store are
        // overwritten by the next form or lie past `len`). Checking again
        // would cost ~2 ms per MB of Korean, more than the conversion.
        unsafe { std::str::from_utf8_unchecked(bytes) }
    }

    /// A buffer holding no text, for a later conversion.
    pub fn unused(buf: Vec<u8>) -> Utf8 {
        Utf8 { buf, len: 0 }
    }

    /// Bytes of the buffer (what a kept one costs).
    pub fn buffer_len(&self) -> usize {
        self.buf.len()
    }

    /// The buffer, for the next conversion.
    pub fn into_buffer(self) -> Vec<u8> {
        self.buf
    }
}

/// `units` as UTF-8, written into `buf` (grown as needed; its old contents
/// are overwritten, never read). A lone surrogate (or a value above
/// U+10FFFF, which a `str` never holds) gives the buffer back as the error.
pub fn convert(units: Units<'_>, mut buf: Vec<u8>) -> Result<Utf8, Vec<u8>> {
    let need = match units {
        Units::Latin1(u) => 2 * u.len(),
        Units::Ucs2(u) => 3 * u.len(),
        Units::Ucs4(u) => 4 * u.len(),
    } + SLACK;
    if buf.capacity() == 0 {
        // a new buffer comes zeroed from the allocator (calloc): pages a
        // conversion never writes (most of a UCS-4 string's 4 bytes per
        // character) are never touched
        buf = vec![0; need];
    } else if buf.len() < need {
        // only the new part is zeroed: a reused buffer is written over as is
        buf.resize(need, 0);
    }
    let len = match units {
        Units::Latin1(u) => Some(latin1(u, &mut buf)),
        Units::Ucs2(u) => ucs2(u, &mut buf, true),
        Units::Ucs4(u) => ucs4(u, &mut buf, true),
    };
    match len {
        Some(len) => Ok(Utf8 { buf, len }),
        None => Err(buf),
    }
}

fn latin1(src: &[u8], out: &mut [u8]) -> usize {
    let mut o = 0;
    let mut chunks = src.chunks_exact(8);
    for c in chunks.by_ref() {
        if c.is_ascii() {
            out[o..o + 8].copy_from_slice(c);
            o += 8;
        } else {
            for &b in c {
                o += put(out, o, u32::from(b));
            }
        }
    }
    for &b in chunks.remainder() {
        o += put(out, o, u32::from(b));
    }
    o
}

/// UCS-2 units (code points below U+10000) into `out` (room for 3 bytes
/// each plus [`SLACK`]); the vector path where the CPU has it and `vector`
/// is set (tests clear it to check the scalar loop alone).
fn ucs2(src: &[u16], out: &mut [u8], vector: bool) -> Option<usize> {
    let (i, mut o) = if vector && vbmi2::available() {
        vbmi2::ucs2(src, out)?
    } else {
        (0, 0)
    };
    let mut chunks = src[i..].chunks_exact(4);
    let mut surrogate = false;
    for c in chunks.by_ref() {
        if (c[0] | c[1] | c[2] | c[3]) < 0x80 {
            out[o..o + 4].copy_from_slice(&[c[0] as u8, c[1] as u8, c[2] as u8, c[3] as u8]);
            o += 4;
        } else {
            for &u in c {
                surrogate |= u & 0xF800 == 0xD800;
                o += put(out, o, u32::from(u));
            }
        }
    }
    for &u in chunks.remainder() {
        surrogate |= u & 0xF800 == 0xD800;
        o += put(out, o, u32::from(u));
    }
    (!surrogate).then_some(o)
}

/// [`ucs2`] for UCS-4 units (room for 4 bytes each plus [`SLACK`]).
fn ucs4(src: &[u32], out: &mut [u8], vector: bool) -> Option<usize> {
    let (i, mut o) = if vector && vbmi2::available() {
        vbmi2::ucs4(src, out)?
    } else {
        (0, 0)
    };
    for &u in &src[i..] {
        if u & 0xFFFF_F800 == 0xD800 || u > 0x10_FFFF {
            return None;
        }
        o += put(out, o, u);
    }
    Some(o)
}

/// Writes the 1-4 byte UTF-8 form of code point `c` (not a surrogate) at
/// `out[o..]` as one 4-byte store, the form's bytes first (the caller leaves
/// room past it); returns the form's length. No branch on the length: the
/// forms are built side by side and selected.
#[inline(always)]
fn put(out: &mut [u8], o: usize, c: u32) -> usize {
    let [one, two, three, four] = forms(c);
    let mut v = if c >= 0x80 { two } else { one };
    v = if c >= 0x800 { three } else { v };
    v = if c >= 0x1_0000 { four } else { v };
    out[o..o + 4].copy_from_slice(&v.to_le_bytes());
    1 + usize::from(c >= 0x80) + usize::from(c >= 0x800) + usize::from(c >= 0x1_0000)
}

/// The 1, 2, 3 and 4 byte UTF-8 forms of `c`'s low bits, each as a
/// little-endian word (first byte lowest).
#[inline(always)]
fn forms(c: u32) -> [u32; 4] {
    let tail = |shift: u32| 0x80 | (c >> shift & 0x3F);
    [
        c,
        (0xC0 | c >> 6) | tail(0) << 8,
        (0xE0 | c >> 12) | tail(6) << 8 | tail(0) << 16,
        (0xF0 | c >> 18) | tail(12) << 8 | tail(6) << 16 | tail(0) << 24,
    ]
}

/// Sixteen characters per step: each character's forms built in a 32-bit
/// lane, the right one selected by compares, and the lanes' unused bytes
/// squeezed out by one `vpcompressb` (AVX-512 VBMI2) under a byte mask
/// spread from the compares with `pdep` (BMI2).
#[cfg(target_arch = "x86_64")]
mod vbmi2 {
    use std::arch::x86_64::*;
    use std::sync::OnceLock;

    pub fn available() -> bool {
        static HAS: OnceLock<bool> = OnceLock::new();
        *HAS.get_or_init(|| {
            is_x86_feature_detected!("avx512f")
                && is_x86_feature_detected!("avx512bw")
                && is_x86_feature_detected!("avx512vbmi2")
                && is_x86_feature_detected!("bmi2")
        })
    }

    /// Converts whole blocks of 16 units of `src` into `out` (which has
    /// room for 3 bytes per unit plus [`super::SLACK`]); returns the units
    /// read and bytes written, or `None` at a surrogate. Without the
    /// features or the room (never, from `convert`) it converts nothing:
    /// `(0, 0)`, the scalar loop does it all; no panic reaches Python.
    pub fn ucs2(src: &[u16], out: &mut [u8]) -> Option<(usize, usize)> {
        if !(available() && out.len() >= 3 * src.len() + super::SLACK) {
            debug_assert!(false, "vbmi2::ucs2 without its features or room");
            return Some((0, 0));
        }
        // SAFETY: the CPU has the features `run` is compiled for (checked
        // above, and `available` asks the CPU), and `out` has the room that
        // `run` requires for 16 units of at most 3 bytes each.
        #[allow(unsafe_code)]
        unsafe {
            run::<2>(src.as_ptr().cast(), src.len(), out)
        }
    }

    /// [`ucs2`] for UCS-4 units (room for 4 bytes per unit).
    pub fn ucs4(src: &[u32], out: &mut [u8]) -> Option<(usize, usize)> {
        if !(available() && out.len() >= 4 * src.len() + super::SLACK) {
            debug_assert!(false, "vbmi2::ucs4 without its features or room");
            return Some((0, 0));
        }
        // SAFETY: as in `ucs2`, with 4 bytes per unit.
        #[allow(unsafe_code)]
        unsafe {
            run::<4>(src.as_ptr().cast(), src.len(), out)
        }
    }

    /// The vector loop over `len` units of `WIDTH` bytes at `src`.
    ///
    /// # Safety
    /// The CPU has AVX-512 F, BW, VBMI2 and BMI2; `src` points to `len`
    /// readable units of `WIDTH` (2 or 4) bytes; `out.len() >= WIDTH * len
    /// + 64` (16 units of at most `WIDTH` bytes each take at most 64 bytes:
    /// every 64-byte store begins at or below `WIDTH * units read`).
    #[allow(unsafe_code)]
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi2,bmi2")]
    unsafe fn run<const WIDTH: usize>(
        src: *const u8,
        len: usize,
        out: &mut [u8],
    ) -> Option<(usize, usize)> {
        let (mut i, mut o) = (0, 0);
        let dst = out.as_mut_ptr();
        let ones = 0x1111_1111_1111_1111u64;
        let set = _mm512_set1_epi32;
        let tail = |c: __m512i, shift: u32| {
            _mm512_or_si512(
                _mm512_and_si512(_mm512_srlv_epi32(c, set(shift as i32)), set(0x3F)),
                set(0x80),
            )
        };
        let mut surrogate: u16 = 0;
        while i + 16 <= len {
            // SAFETY: units i..i+16 are inside the `len` readable units.
            let c = unsafe {
                if WIDTH == 2 {
                    _mm512_cvtepu16_epi32(_mm256_loadu_si256(src.add(2 * i).cast()))
                } else {
                    _mm512_loadu_si512(src.add(4 * i).cast())
                }
            };
            let m2 = _mm512_cmpge_epu32_mask(c, set(0x80));
            if m2 == 0 {
                // sixteen ASCII characters (most of English and code): their
                // low bytes, no compress
                debug_assert!(o + 16 <= out.len());
                // SAFETY: o + 16 <= o + 64 <= out.len() (see below).
                unsafe { _mm_storeu_si128(dst.add(o).cast(), _mm512_cvtepi32_epi8(c)) };
                o += 16;
                i += 16;
                continue;
            }
            let (t0, t6, t12) = (tail(c, 0), tail(c, 6), tail(c, 12));
            let shl = |v: __m512i, bits: u32| _mm512_sllv_epi32(v, set(bits as i32));
            let lead = |mark: i32, shift: u32| {
                _mm512_or_si512(set(mark), _mm512_srlv_epi32(c, set(shift as i32)))
            };
            let two = _mm512_or_si512(lead(0xC0, 6), shl(t0, 8));
            let three = _mm512_or_si512(_mm512_or_si512(lead(0xE0, 12), shl(t6, 8)), shl(t0, 16));
            let four = _mm512_or_si512(
                _mm512_or_si512(lead(0xF0, 18), shl(t12, 8)),
                _mm512_or_si512(shl(t6, 16), shl(t0, 24)),
            );
            let m3 = _mm512_cmpge_epu32_mask(c, set(0x800));
            let m4 = _mm512_cmpge_epu32_mask(c, set(0x1_0000));
            surrogate |= _mm512_cmpeq_epi32_mask(_mm512_and_si512(c, set(-0x800)), set(0xD800))
                | _mm512_cmpgt_epu32_mask(c, set(0x10_FFFF));
            let v = _mm512_mask_mov_epi32(c, m2, two);
            let v = _mm512_mask_mov_epi32(v, m3, three);
            let v = _mm512_mask_mov_epi32(v, m4, four);
            // byte j of lane k is kept when the form has more than j bytes
            let keep = ones
                | _pdep_u64(u64::from(m2), ones << 1)
                | _pdep_u64(u64::from(m3), ones << 2)
                | _pdep_u64(u64::from(m4), ones << 3);
            let packed = _mm512_maskz_compress_epi8(keep, v);
            debug_assert!(o + 64 <= out.len());
            // SAFETY: o <= WIDTH * i (each unit's form has at most WIDTH
            // bytes), so o + 64 <= WIDTH * len + 64 <= out.len().
            unsafe { _mm512_storeu_si512(dst.add(o).cast(), packed) };
            o += keep.count_ones() as usize;
            i += 16;
        }
        if surrogate != 0 {
            return None;
        }
        Some((i, o))
    }
}

/// No vector path off x86-64: the scalar loops do everything.
#[cfg(not(target_arch = "x86_64"))]
mod vbmi2 {
    pub fn available() -> bool {
        false
    }

    pub fn ucs2(_src: &[u16], _out: &mut [u8]) -> Option<(usize, usize)> {
        Some((0, 0))
    }

    pub fn ucs4(_src: &[u32], _out: &mut [u8]) -> Option<(usize, usize)> {
        Some((0, 0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn std_utf8(units: impl IntoIterator<Item = u32>) -> String {
        units
            .into_iter()
            .map(|u| char::from_u32(u).unwrap())
            .collect()
    }

    /// `convert` on a reused buffer full of junk (its old contents must not
    /// show), as a `String`; `None` when refused.
    fn converted(units: Units<'_>) -> Option<String> {
        convert(units, vec![0xFF; 100])
            .ok()
            .map(|u| u.as_str().to_owned())
    }

    /// The scalar loops alone (no vector path), into a fresh buffer.
    fn scalar(units: Units<'_>) -> Option<String> {
        let mut out = vec![0u8; 4 * 0x11_0000 * 3 + SLACK];
        let n = match units {
            Units::Latin1(u) => Some(latin1(u, &mut out)),
            Units::Ucs2(u) => ucs2(u, &mut out, false),
            Units::Ucs4(u) => ucs4(u, &mut out, false),
        }?;
        Some(String::from_utf8(out[..n].to_vec()).unwrap())
    }

    #[test]
    fn latin1_matches_std_on_every_byte_and_ascii_runs() {
        let every: Vec<u8> = (0..=255u8).collect();
        let mut texts = vec![every.clone(), every.iter().rev().copied().collect()];
        // ASCII runs of every length around the 8-byte steps, then a high byte
        for n in 0..20 {
            let mut t = vec![b'a'; n];
            t.push(0xE9);
            t.extend(std::iter::repeat_n(b'z', 9));
            texts.push(t);
        }
        for t in texts {
            let want = std_utf8(t.iter().map(|&b| u32::from(b)));
            assert_eq!(converted(Units::Latin1(&t)).as_deref(), Some(want.as_str()));
        }
    }

    /// Every code point of `from..to` but the surrogates, then samples of
    /// them mixed with ASCII and other widths, cut at each offset of the
    /// 16-unit blocks.
    fn samples(from: u32, to: u32) -> Vec<Vec<u32>> {
        let all: Vec<u32> = (from..to)
            .filter(|c| !(0xD800..0xE000).contains(c))
            .collect();
        let mut out = vec![all.clone()];
        let mut x = 0x9E37_79B9u32;
        for skip in 0..17 {
            let mixed: Vec<u32> = all
                .iter()
                .step_by(61)
                .flat_map(|&u| {
                    x ^= x << 13;
                    x ^= x >> 17;
                    x ^= x << 5;
                    [
                        u,
                        [u32::from(b' '), 0xE9, 0x3B1, 0xD55C][(x % 4) as usize],
                        u32::from(b'a'),
                    ]
                })
                .skip(skip)
                .collect();
            out.push(mixed);
        }
        out
    }

    #[test]
    fn ucs2_matches_std_on_every_bmp_character_both_paths() {
        for t in samples(0, 0x1_0000) {
            let units: Vec<u16> = t.iter().map(|&u| u as u16).collect();
            let want = std_utf8(t);
            assert_eq!(
                converted(Units::Ucs2(&units)).as_deref(),
                Some(want.as_str())
            );
            assert_eq!(scalar(Units::Ucs2(&units)).as_deref(), Some(want.as_str()));
        }
    }

    #[test]
    fn ucs4_matches_std_on_every_plane_both_paths() {
        for t in samples(0, 0x11_0000) {
            let want = std_utf8(t.iter().copied());
            assert_eq!(converted(Units::Ucs4(&t)).as_deref(), Some(want.as_str()));
            assert_eq!(scalar(Units::Ucs4(&t)).as_deref(), Some(want.as_str()));
        }
    }

    #[test]
    fn a_lone_surrogate_anywhere_is_refused_and_the_buffer_returned() {
        // at every position of a first and a second 16-unit block, and in the tail
        let base: Vec<u16> = "한국어 text, 日本語 and more text here!!"
            .encode_utf16()
            .collect();
        for s in [0xD800u16, 0xDBFF, 0xDC00, 0xDFFF] {
            for at in 0..=base.len() {
                let mut t = base.clone();
                t.insert(at, s);
                assert_eq!(converted(Units::Ucs2(&t)), None, "{s:#x} at {at}");
                assert_eq!(scalar(Units::Ucs2(&t)), None, "{s:#x} at {at}");
                let t4: Vec<u32> = t
                    .iter()
                    .map(|&u| u32::from(u))
                    .chain("😀".chars().map(u32::from))
                    .collect();
                assert_eq!(converted(Units::Ucs4(&t4)), None, "{s:#x} at {at}");
                assert_eq!(scalar(Units::Ucs4(&t4)), None, "{s:#x} at {at}");
            }
        }
        let buf = vec![7u8; 1000];
        let back = convert(Units::Ucs2(&[0xD800]), buf).err().unwrap();
        assert!(back.len() >= 1000);
    }

    #[test]
    fn a_reused_buffer_gives_the_new_text_only() {
        let long: Vec<u16> = "가나다라마바사아자차카타파하"
            .repeat(50)
            .encode_utf16()
            .collect();
        let u = convert(Units::Ucs2(&long), Vec::new()).ok().unwrap();
        assert_eq!(u.as_str(), "가나다라마바사아자차카타파하".repeat(50));
        let short: Vec<u16> = "ab é".encode_utf16().collect();
        let v = convert(Units::Ucs2(&short), u.into_buffer()).ok().unwrap();
        assert_eq!(v.as_str(), "ab é");
    }
}
