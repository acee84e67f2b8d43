use super::*;
use crate::pretok::classes::block_at;
use crate::pretok::unicode::{deepseek_tables, tables, DS_CJK, L, LO, M, N, OTHER, UP, WS};
use crate::pretok::wide::classes_ds;

/// Every table of lanes, with the flags each of its code points has in the
/// scanners' table under `L | UP | LO`: a letter, in o200k's upper class,
/// in its lower class.
const CLASSED: [(&[(u32, u32)], u8); 7] = [
    (HANGUL, L | UP | LO),
    (CJK, L | UP | LO),
    (KANA, L | UP | LO),
    (UPPER_TWO_BYTE, L | UP),
    (LOWER_TWO_BYTE, L | LO),
    (CASELESS_TWO_BYTE, L | UP | LO),
    (TWO_BYTE, L),
];

fn code_points(ranges: &[(u32, u32)]) -> impl Iterator<Item = u32> + '_ {
    ranges.iter().flat_map(|&(a, z)| a..=z)
}

#[test]
fn lane_letters_have_their_classes() {
    let t = tables();
    for (ranges, want) in CLASSED {
        // TWO_BYTE's letters have either case: only `L` is stated
        let asked = if want == L { L } else { L | UP | LO };
        for cp in code_points(ranges) {
            assert_eq!(t.of(cp) & asked, want, "U+{cp:04X}");
        }
    }
    // the cased lanes are parts of the caseless one
    for ranges in [UPPER_TWO_BYTE, LOWER_TWO_BYTE, CASELESS_TWO_BYTE] {
        for cp in code_points(ranges) {
            assert!(
                TWO_BYTE.iter().any(|&(a, z)| (a..=z).contains(&cp)),
                "U+{cp:04X}"
            );
        }
    }
}

/// The punctuation lane's characters are punctuation in every family:
/// `[^\s\p{L}\p{N}]` and no mark in the scanners' table, `[\p{P}\p{S}]`
/// outside the CJK region in DeepSeek's.
#[test]
fn lane_punctuation_is_punctuation_in_every_family() {
    let (t, ds) = (tables(), deepseek_tables());
    for cp in code_points(PUNCT_TWO_BYTE) {
        assert_eq!(t.of(cp) & (L | N | WS | M | OTHER), OTHER, "U+{cp:04X}");
        assert_eq!(classes_ds(ds.of(cp)), (false, true), "U+{cp:04X}");
    }
    // and the Latin-1 characters left out are not
    let all: Vec<u32> = code_points(PUNCT_TWO_BYTE).collect();
    for cp in (0xA1..0x100).filter(|cp| !all.contains(cp)) {
        let other = t.of(cp) & (L | N | WS | M | OTHER) == OTHER;
        assert!(
            !other || classes_ds(ds.of(cp)) != (false, true),
            "U+{cp:04X}"
        );
    }
}

/// DeepSeek's chain: the Hangul syllables and the two-byte letters are
/// letters outside its CJK region; the kana letters and the ideographs before
/// U+9000 (the lane without `E9`) are letters inside it; its region ends
/// inside U+9000-U+9FFF.
#[test]
fn lane_letters_in_deepseeks_classes() {
    let ds = deepseek_tables();
    for cp in code_points(HANGUL).chain(code_points(TWO_BYTE)) {
        assert_eq!(ds.of(cp) & DS_CJK, 0, "U+{cp:04X}");
        assert_eq!(classes_ds(ds.of(cp)), (true, false), "U+{cp:04X}");
    }
    for cp in code_points(KANA).chain(CJK[0].0..0x9000) {
        assert_ne!(ds.of(cp) & DS_CJK, 0, "U+{cp:04X}");
        assert_eq!(classes_ds(ds.of(cp)), (true, false), "U+{cp:04X}");
    }
    assert_ne!(ds.of(0x9FA5) & DS_CJK, 0);
    assert_eq!(ds.of(0x9FA6) & DS_CJK, 0);
}

/// The code points a character of `len` bytes may be, given its first
/// `seen` bytes `w`: every completion by continuation bytes.
fn completions(w: &[u8], len: usize) -> Vec<u32> {
    let mut out = vec![Vec::from(w)];
    for _ in w.len()..len {
        out = out
            .into_iter()
            .flat_map(|p| (0x80u8..0xC0).map(move |c| [p.as_slice(), &[c]].concat()))
            .collect();
    }
    out.iter()
        .filter_map(|s| std::str::from_utf8(s).ok())
        .filter_map(|s| s.chars().next())
        .map(u32::from)
        .collect()
}

/// On valid text, each lane holds exactly the first bytes of the characters
/// that are in its ranges whatever their bytes past the block's end: a
/// character whole in the block by its code point, a cut one by every
/// completion of its bytes.
#[test]
fn portable_lanes_follow_the_code_points() {
    let spans = [
        (0x80, 0x800),
        (0x3000, 0x3100),
        (0x4DF0, 0x4E10),
        (0x9FF0, 0xA010),
    ];
    let spans = spans
        .into_iter()
        .chain([(0xABF0, 0xAC10), (0xD770, 0xD790)]);
    let text: String = spans
        .flat_map(|(a, z)| a..z)
        .filter_map(char::from_u32)
        .flat_map(|c| [c, 'a'])
        .collect();
    let inside =
        |ranges: &[(u32, u32)], cp: u32| ranges.iter().any(|&(a, z)| (a..=z).contains(&cp));
    for skip in 0..4 {
        let b = &text.as_bytes()[skip..];
        for at in (0..b.len().saturating_sub(64)).step_by(59) {
            let block = block_at(b, at);
            let lanes = CLASSED.iter().map(|&(r, _)| r);
            for ranges in lanes.chain([PUNCT_TWO_BYTE]) {
                let got = lane_portable(&block, ranges);
                for (k, &c) in block.iter().enumerate() {
                    let len = match c {
                        0xC0..=0xDF => 2,
                        0xE0..=0xEF => 3,
                        _ => 0,
                    };
                    let seen = &block[k..(k + len).min(64)];
                    let want =
                        len > 0 && completions(seen, len).iter().all(|&cp| inside(ranges, cp));
                    assert_eq!(
                        got >> k & 1 == 1,
                        want,
                        "byte {k} ({c:#x}) at {at}, {ranges:x?}"
                    );
                }
            }
        }
    }
}

#[test]
fn vector_lanes_match_portable() {
    // bytes around the lanes' edges, and real text
    const PICK: [u8; 58] = [
        0xE3, 0xE4, 0xE5, 0xE9, 0xEA, 0xEB, 0xEC, 0xED, 0xEE, 0xB0, 0xB8, 0xB7, 0x9D, 0x9E, 0x80,
        0x81, 0x82, 0x83, 0x96, 0x97, 0x9C, 0xA0, 0xA1, 0xBA, 0xBB, 0xBF, 0xC3, 0xC4, 0xCA, 0xCB,
        0xD0, 0xD1, 0xD3, 0xD7, 0xD8, 0xD9, 0xDA, 0xAF, 0x8A, b'a', 0x97, 0x98, 0x9E, 0x9F, 0xB6,
        0xC2, 0xA9, 0xAA, 0xAB, 0xAC, 0xAD, 0xAE, 0xB1, 0xB2, 0xB4, 0xB5, 0xB9, 0xBC,
    ];
    let mut rng = crate::TestRng(0x71de);
    let mut blocks: Vec<[u8; 64]> = (0..20000)
        .map(|_| {
            let mut b = [0u8; 64];
            for slot in b.iter_mut() {
                *slot = PICK[rng.below(PICK.len())];
            }
            b
        })
        .collect();
    let text =
        "한국어 文字 テキスト, ひらがな・ゔ naïve Жизнь и шалом שלום مرحبا “quote” 😀 «¡x·y×z÷2°ª²»"
            .repeat(4);
    for skip in 0..64 {
        blocks.push(block_at(&text.as_bytes()[skip..], 0));
    }
    for how in Classifier::available() {
        for b in &blocks {
            let base = how.lanes(b);
            assert_eq!(base, Classifier::Portable.lanes(b), "{b:?}");
            assert_eq!(how.more_lanes(b, base), lanes_portable(b), "{b:?}");
        }
    }
}
