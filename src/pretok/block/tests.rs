//! The block path against the scalar scanner: the classifiers against the
//! portable one, and the pieces on the fixtures in tests/data, random text
//! over the patterns' edge cases, every block offset and the hostile inputs.

use super::super::classes::{classify_portable, CLASS, CL_C, CL_D, CL_L, CL_P, CL_SP, CL_T};
use super::*;

#[test]
fn classes_agree_with_the_scanner_tables() {
    use super::super::unicode::{tables, L, N, OTHER, WS};
    let t = tables();
    for c in 0u8..0x80 {
        let f = t.ascii[c as usize];
        let k = CLASS[c as usize];
        assert_eq!(k & CL_L != 0, f & L != 0, "{c:#x}");
        assert_eq!(k & CL_D != 0, f & N != 0, "{c:#x}");
        assert_eq!(k & (CL_SP | CL_T | CL_C) != 0, f & WS != 0, "{c:#x}");
        assert_eq!(k & CL_P != 0, f & OTHER != 0, "{c:#x}");
        assert_eq!(k.count_ones(), if c == b'\'' { 2 } else { 1 }, "{c:#x}");
    }
}

#[test]
fn vector_classifier_matches_portable() {
    for how in Classifier::available() {
        vector_matches_portable(how);
    }
}

fn vector_matches_portable(how: Classifier) {
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    let mut block = [0u8; 64];
    for round in 0..2000 {
        for (k, slot) in block.iter_mut().enumerate() {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            *slot = if round < 4 {
                (round * 64 + k) as u8
            } else {
                rng as u8
            };
        }
        assert_eq!(how.classify(&block), classify_portable(&block), "{block:?}");
    }
}

fn spans(named: Named, text: &str, how: Option<Classifier>) -> Vec<(usize, usize)> {
    let sc = super::super::Scanner::new(named);
    let mut out = Vec::new();
    match how {
        None => sc.for_each_span_scalar(text, |a, b| out.push((a, b))),
        Some(how) => {
            let t = if named == Named::DeepSeekV3 {
                super::super::unicode::deepseek_tables()
            } else {
                super::super::unicode::tables()
            };
            let s = Scan {
                b: text.as_bytes(),
                t,
            };
            super::spans(named, &s, text, how, &mut |a, b| out.push((a, b)));
        }
    }
    out
}

/// The block path with every classifier available equals the scalar scanner.
/// The patterns with a block path.
const BLOCKED: [Named; 8] = [
    Named::Gpt2,
    Named::Cl100k,
    Named::O200k,
    Named::Llama3,
    Named::Qwen2,
    Named::Qwen35,
    Named::Nemo,
    Named::DeepSeekV3,
];

fn check(text: &str) {
    for named in BLOCKED {
        check_one(named, text);
    }
}

/// The block walk equals the scalar scanner on `text`, with every
/// classifier.
fn check_one(named: Named, text: &str) {
    let want = spans(named, text, None);
    let mut ways = vec![Classifier::Portable];
    ways.extend(Classifier::available());
    for how in ways {
        let got = spans(named, text, Some(how));
        if got != want {
            let at = got.iter().zip(&want).position(|(a, b)| a != b).unwrap_or(0);
            let lo = want.get(at.saturating_sub(3)).map_or(0, |s| s.0);
            let hi = want.get(at + 3).map_or(text.len(), |s| s.1);
            panic!(
                "{named:?} block path ({how:?}) differs at piece {at}: got {:?}, want {:?}, near {:?} (byte {lo}, text of {} bytes)",
                got.get(at),
                want.get(at),
                &text.as_bytes()[lo..hi],
                text.len()
            );
        }
    }
}

/// The corpus excerpts in tests/data (inside the repository).
fn data_files() -> Vec<std::path::PathBuf> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .collect();
    files.sort();
    files
}

#[test]
fn real_text_equals_scalar() {
    let files = data_files();
    assert!(files.len() >= 6, "tests/data has six fixtures: {files:?}");
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        // every shift of the block grid over the start of the text
        for skip in [0usize, 1, 2, 3, 31, 63] {
            let mut from = skip.min(text.len());
            while !text.is_char_boundary(from) {
                from += 1;
            }
            check(&text[from..]);
        }
    }
}

/// Characters the patterns treat differently, weighted towards ASCII edge cases.
const EDGE: &[&str] = &[
    " ",
    " ",
    " ",
    "\n",
    "\n",
    "\r",
    "\t",
    "\u{b}",
    "\u{c}",
    "'",
    "'",
    "s",
    "S",
    "t",
    "l",
    "L",
    "v",
    "e",
    "r",
    "R",
    "d",
    "m",
    "a",
    "Z",
    "0",
    "1",
    "9",
    ".",
    ",",
    "!",
    "(",
    "-",
    "/",
    "\n/",
    ".\n/",
    "aB",
    "Ab",
    "I'M",
    "\u{0}",
    "\u{7f}",
    "é",
    "한",
    "\u{a0}",
    "\u{3000}",
    "\u{2028}",
    "\u{85}",
    "\u{17f}",
    "\u{212a}",
    "\u{301}",
    "\u{663}",
    "—",
    "😀",
    "’",
    "\r\n",
    "  ",
    "\n\n",
    "'s",
    "'LL",
    "ab",
    "123",
    "\u{1}",
    "\u{1c}",
    "\u{1f}",
    "一",
    "ア",
    "_",
    ".com",
    "\r\n\r\n",
    " 5",
    "  ",
    "\u{b2}",
    "·",
    "“",
    "①",
    "'\u{17f}",
    "\u{200d}",
    "👨",
    "\u{94d}",
    "Ж",
    "ж",
    "٣",
    "a·",
    "·a",
    "«a»",
    " ¿",
    "×÷",
    "\u{ad}",
    "ªº",
    "°C",
    " ·",
    "·\n",
    "“\n",
    "한국",
    " 한",
    "\u{80}",
    "\u{7ff}",
    "É",
    "Éa",
    "aÉ",
    "éA",
    "한A",
    "한AB",
    "\u{1c5}",
    "\u{2b0}",
    "ー",
    "ÀB",
    "Ωω",
    "\u{1c5}a",
    ".한",
    "a한",
    "“a",
    "a\u{301}",
    "API를",
    "ぁ",
    "・",
    "\u{30a0}",
    "\u{9fa5}",
    "\u{9fa6}",
    "\u{3099}",
    "€",
    "漢字",
    " 漢",
    "漢 ",
    "\u{9000}",
    "。",
    "カタカナ",
    "\n漢",
    "ğ",
    "اب",
    "ـ",
    "\u{64b}",
    "א",
    "Ӏ",
    "Жa",
    "\u{2c6}",
    "Я",
    "а",
    "џ",
    "Ѡ",
    "Жж",
    "жЖ",
    "\u{3040}",
    "\u{3096}",
    "\u{3097}",
    "\u{309b}",
    "\u{309d}",
    "\u{30fa}",
    "\u{30ff}",
    "ひらがな",
    "\u{5d0}\u{5ea}",
    "×",
    "÷",
    "ß",
    "ÿ",
    "Þ",
    "Öl",
    "éÉ",
    "l'été",
];

use crate::TestRng as Rng;

#[test]
fn random_edge_text_equals_scalar() {
    let mut rng = Rng(0x5eed_b10c);
    for round in 0..6000 {
        // a pool of a few pieces (runs and repeats), sometimes padded with
        // letters so the hard zones land on every block offset
        let k = 1 + rng.below(8);
        let pool: Vec<&str> = (0..k).map(|_| EDGE[rng.below(EDGE.len())]).collect();
        let mut text = String::new();
        if round % 3 == 0 {
            text.push_str(&"word ".repeat(rng.below(30)));
            text.push_str(&"x".repeat(rng.below(64)));
        }
        let len = [63, 64, 65, 127, 128, 129, 200, 400][rng.below(8)];
        while text.len() < len {
            text.push_str(pool[rng.below(pool.len())]);
        }
        check(&text);
        // exact lengths around block multiples
        let mut cut = len.min(text.len());
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        check(&text[..cut]);
    }
}

#[test]
fn ascii_runs_at_every_block_offset() {
    for unit in [
        " ",
        "\n",
        "\r\n",
        " \n",
        "\n ",
        "\t",
        "7",
        "'s",
        ".",
        ".\n",
        "a'",
        ".\n/",
        "\n/a",
        "/\n",
        "aB",
        "é",
        "\u{a0}",
        " 5",
        "\n 5",
        "\r\n  ",
        ".a",
        "a.",
        "\u{1}",
        "一",
        "x一",
        "“.a",
        "·.a",
        ".·a",
        "a“b",
        " “a",
        "①.a",
        "\u{a0}.a",
        "한.a",
        "👨.a",
        "한A",
        "éA",
        "É",
        ".한",
        "a한",
        "“한",
        "\u{9fa6}a",
        " 一",
        "一.a",
        "\n 一",
        "一 ",
    ] {
        for before in 0..70 {
            for reps in [1, 2, 3, 4, 5, 70] {
                let text = format!(
                    "{}{}x1 {}!\n",
                    "a".repeat(before),
                    unit.repeat(reps),
                    unit.repeat(reps)
                );
                check(&text);
            }
        }
    }
}

#[test]
fn hostile_inputs_equal_scalar() {
    const BIG: usize = 200_000;
    let inputs = [
        "x".repeat(BIG),
        " ".repeat(BIG),
        format!("{}x", " ".repeat(BIG)),
        "\n".repeat(BIG),
        "7".repeat(BIG),
        "\u{301}".repeat(BIG / 2),
        "한".repeat(BIG / 3),
        format!("\u{2b0}{}", "A".repeat(BIG)),
        " \n".repeat(BIG / 2) + "x",
        "\n ".repeat(BIG / 2) + "x",
        ".\n".repeat(BIG / 2),
        "'s".repeat(BIG / 2),
        "a'".repeat(BIG / 2),
        format!("{}\n{}", " ".repeat(BIG), " ".repeat(BIG)),
    ];
    for text in &inputs {
        check(text);
    }
}

#[test]
fn mark_follows_small_cases() {
    // runs 0..4 and 6..8; marks at 2 and 7
    let runs = 0b1100_1111;
    let marks = 0b1000_0100;
    assert_eq!(mark_follows(runs, marks), 0b1100_0111);
    assert_eq!(mark_follows(!0, 1 << 63), !0);
    assert_eq!(mark_follows(!0, 1), 1);
    assert_eq!(fill(0b0111_0110, 0b0001_0000), 0b0111_0000);
}
