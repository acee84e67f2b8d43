//! Characters of several bytes on the block path ("wide" blocks): the classes
//! of a block's non-ASCII characters, each of its bytes in its character's
//! class, for every family with a block path: those whose classes outside
//! ASCII are `\p{L}`, `\p{N}`, `\s` and the rest, o200k's with its upper-case
//! letters, and DeepSeek's chain, whose letters take the marks, whose
//! punctuation is `[\p{P}\p{S}]` and whose CJK ranges are regions of their
//! own.
//!
//! Most characters are decoded one by one and looked up in the scanners'
//! tables. The fast lanes of [`super::lanes`] skip that for the characters
//! whose first bytes tell they are letters: the Hangul syllables, the CJK
//! ideographs, the kana, and the two-byte letters of Latin-1, Latin
//! Extended, Cyrillic, Hebrew and Arabic; and the Latin-1 punctuation and
//! symbols, for every family. o200k's family, whose words need each
//! letter's case, takes of the two-byte ones only the Latin-1 and Cyrillic
//! capitals and small letters and the caseless Hebrew and Arabic letters.
//! For DeepSeek's chain the kana and the ideographs before U+9000 are the
//! letters of its CJK region; the ideographs from U+9000 on are decoded, as
//! its region ends at U+9FA5.
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
    let mut lanes = how.lanes(&block);
    if x.na & !lanes.cont & !(lanes.hangul | lanes.cjk) != 0 {
        lanes = how.more_lanes(&block, lanes);
    }
    let cont = lanes.cont;
    // DeepSeek's CJK region ends at U+9FA5: the ideographs from U+9000 on
    // are decoded
    let region = if ds {
        lanes.cjk & !lanes.e9 | lanes.kana
    } else {
        0
    };
    // o200k's family takes the two-byte letters whose case is known
    let (fast, cased_up, cased_lo) = match (cased, ds) {
        (true, _) => (
            lanes.hangul
                | lanes.cjk
                | lanes.kana
                | lanes.upper_two
                | lanes.lower_two
                | lanes.caseless_two,
            lanes.upper_two,
            lanes.lower_two,
        ),
        (false, true) => (lanes.two | lanes.hangul | region, 0, 0),
        (false, false) => (lanes.two | lanes.hangul | lanes.cjk | lanes.kana, 0, 0),
    };
    let firsts = x.na & !cont & !fast & !lanes.punct_two;
    // the case masks only where they are read: the loop is the cost per
    // character. `third` is o200k's upper-case-only letters, or the letters
    // of DeepSeek's CJK region.
    let [mut letters, punct, mut third, mut lower] = match (cased, ds) {
        (true, _) => first_bytes::<true, false>(firsts, b, at, t, other),
        (false, true) => first_bytes::<false, true>(firsts, b, at, t, other),
        (false, false) => first_bytes::<false, false>(firsts, b, at, t, other),
    };
    letters |= fast;
    let punct = punct | lanes.punct_two;
    third |= region | cased_up;
    lower |= cased_lo;
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
pub(super) fn classes_ds(f: u8) -> (bool, bool) {
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
