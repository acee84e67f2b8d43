//! The walk that cuts runs of spaces against its definition: the runs cut
//! leftmost-longest first, then each stretch between them through the scalar
//! scanner alone; on the fixtures in tests/data, random text dense in spaces,
//! every block offset and long runs.

use super::super::super::unicode::tables;
use super::super::super::Scanner;
use super::*;

/// A piece `(start, end, None)` or a token of spaces `(start, end, Some(id))`.
type Out = Vec<(usize, usize, Option<Rank>)>;

struct Sink(Out);

impl SpanSink for Sink {
    fn span(&mut self, start: usize, end: usize) {
        self.0.push((start, end, None));
    }
    fn fixed(&mut self, start: usize, end: usize, id: Rank) {
        self.0.push((start, end, Some(id)));
    }
}

/// Ids of 2..=max spaces: 1000 + k.
fn ids(max: usize) -> Vec<Rank> {
    (2..=max as Rank).map(|k| 1000 + k).collect()
}

/// The definition: runs of two or more spaces cut leftmost-longest into
/// tokens of at most `max`, each stretch between them pre-tokenized alone.
fn reference(text: &str, max: usize) -> Out {
    let b = text.as_bytes();
    let sc = Scanner::new(Named::Gpt2);
    let mut out = Out::new();
    let stretch = |from: usize, to: usize, out: &mut Out| {
        sc.for_each_span_scalar(&text[from..to], |s, e| out.push((from + s, from + e, None)));
    };
    let (mut seg, mut i) = (0, 0);
    while i < b.len() {
        if b[i] == b' ' && b.get(i + 1) == Some(&b' ') {
            let j = i + b[i..].iter().take_while(|&&c| c == b' ').count();
            stretch(seg, i, &mut out);
            let mut k = i;
            while j - k >= 2 {
                let c = (j - k).min(max);
                out.push((k, k + c, Some(1000 + c as Rank)));
                k += c;
            }
            seg = k;
            i = j;
        } else {
            i += 1;
        }
    }
    stretch(seg, b.len(), &mut out);
    out
}

/// The walk with `how` (`None`: the scalar steps alone).
fn walked(text: &str, max: usize, how: Option<Classifier>) -> Out {
    let s = Scan {
        b: text.as_bytes(),
        t: tables(),
    };
    let ids = ids(max);
    let mut sink = Sink(Out::new());
    let mut runs = Runs::new(s.b, &ids);
    match how {
        Some(how) => walk(&s, text, &mut runs, how, &mut sink),
        None => {
            steps(&s, text, &mut runs, 0, text.len(), &mut sink);
        }
    }
    sink.0
}

fn check(text: &str, max: usize) {
    let want = reference(text, max);
    // the scalar steps, then the walk with each classifier
    let mut ways = vec![None, Some(Classifier::Portable)];
    ways.extend(Classifier::available().map(Some));
    for (way, how) in ways.into_iter().enumerate() {
        let got = walked(text, max, how);
        if got != want {
            let at = got.iter().zip(&want).position(|(a, b)| a != b).unwrap_or(0);
            let lo = want.get(at.saturating_sub(3)).map_or(0, |s| s.0);
            let hi = want.get(at + 3).map_or(text.len(), |s| s.1);
            panic!(
                "way {way} (0: scalar steps, 1: portable blocks, then the vector ones), max {max}: piece {at} is {:?}, want {:?}, near {:?} (byte {lo} of {})",
                got.get(at),
                want.get(at),
                &text[lo..hi],
                text.len()
            );
        }
    }
}

#[test]
fn real_text_equals_the_definition() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap().flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|x| x == "txt") {
            let text = std::fs::read_to_string(&path).unwrap();
            for skip in [0usize, 1, 5, 63] {
                let from = (skip..=text.len())
                    .find(|&i| text.is_char_boundary(i))
                    .unwrap();
                check(&text[from..], 24);
            }
            n += 1;
        }
    }
    assert!(n >= 6, "tests/data has six fixtures, found {n}");
}

/// Pieces that meet runs of spaces in every way, spaces weighted heavily.
const EDGE: &[&str] = &[
    " ", " ", " ", " ", "  ", "   ", "\n", "\n", "\r", "\t", "\u{b}", "'", "s", "'s", "t", "a",
    "Z", "0", "12", ".", "(", "é", "한", "\u{a0}", "\u{3000}", "\r\n", "\n  ", "x  \n", " \t",
    "\t ", ".\n", "'ll", "—", "😀", "·", "“", "①", "한국", "ж", "a·b", "'\u{17f}",
];

use crate::TestRng as Rng;

#[test]
fn random_text_dense_in_spaces_equals_the_definition() {
    let mut rng = Rng(0x5ace_c075);
    for round in 0..6000 {
        let k = 1 + rng.below(8);
        let pool: Vec<&str> = (0..k).map(|_| EDGE[rng.below(EDGE.len())]).collect();
        let mut text = String::new();
        if round % 3 == 0 {
            text.push_str(&"ab ".repeat(rng.below(30)));
        }
        let len = [63, 64, 65, 128, 129, 200, 400, 1000][rng.below(8)];
        while text.len() < len {
            let piece = pool[rng.below(pool.len())];
            // sometimes a long run of one piece (runs of spaces past `max`)
            text.push_str(&piece.repeat(if rng.below(8) == 0 {
                1 + rng.below(60)
            } else {
                1
            }));
        }
        let max = [2, 3, 8, 24, 62][rng.below(5)];
        check(&text, max);
    }
}

#[test]
fn runs_of_every_length_at_every_block_offset() {
    for before in 0..70 {
        for run in [1, 2, 3, 23, 24, 25, 26, 48, 49, 50, 63, 64, 65, 130] {
            for after in ["x", "\n", "\t", ".", "é", "'s", "1"] {
                let text = format!(
                    "{}{}{after}{}{after}!\n",
                    "a".repeat(before),
                    " ".repeat(run),
                    " ".repeat(run)
                );
                check(&text, 24);
                check(&format!("{text}{text}{}", "q".repeat(70)), 24);
            }
        }
    }
}

#[test]
fn hostile_inputs_equal_the_definition() {
    const BIG: usize = 100_000;
    let inputs = [
        " ".repeat(BIG),
        format!("x{}x", " ".repeat(BIG)),
        " x".repeat(BIG / 2),
        "  x".repeat(BIG / 3),
        " \n".repeat(BIG / 2),
        "\n  ".repeat(BIG / 3),
        "\t  ".repeat(BIG / 3),
        "한  ".repeat(BIG / 5),
    ];
    for text in &inputs {
        check(text, 24);
    }
}

#[test]
fn the_long_run_check_sees_the_block_before() {
    // 25 spaces ending in the block: long for 24, not for 25
    let prev = !0u64 << 50;
    let sp = (1u64 << 11) - 1;
    assert!(too_long(sp, prev, 24));
    assert!(!too_long(sp, prev, 25));
    assert!(!too_long(0, !0, 24));
    assert!(too_long(!0, 0, 62));
    assert!(!too_long(!0 >> 1, 0, 63));
}
