//! The pre-tokenizers against `fancy-regex` running the same patterns:
//! exhaustive short strings, random strings, whitespace tails, the fixtures
//! in tests/data, hostile inputs (linear time), and safe cuts.

use super::*;

/// Every pattern with a scanner, by its short name: `(pattern, family)`.
fn named() -> impl Iterator<Item = (&'static str, &'static str, Named)> {
    SPELLINGS.into_iter().map(|(p, n, name)| (name, p, n))
}

/// One or more characters of every class combination the scanners tell
/// apart, plus every character a pattern names literally.
const ALPHABET: &[char] = &[
    'a',
    'Z',
    's',
    'S',
    't',
    'T',
    'l',
    'L',
    'v',
    'V',
    'e',
    'E',
    'r',
    'R',
    'd',
    'D',
    'm',
    'M',
    'k',
    '0',
    '9',
    ' ',
    '\t',
    '\n',
    '\r',
    '\u{b}',
    '\u{c}',
    '\'',
    '/',
    '.',
    '!',
    '\u{0}',
    '\u{17f}',
    '\u{212a}',
    'é',
    'É',
    '\u{1c5}',
    '\u{2b0}',
    '한',
    '中',
    '\u{301}',
    '\u{903}',
    '\u{20dd}',
    '\u{663}',
    '\u{216b}',
    '\u{bd}',
    '\u{a0}',
    '\u{3000}',
    '\u{2028}',
    '\u{85}',
    '\u{200b}',
    '€',
    '😀',
    '\u{e000}',
    '\u{378}',
    '\u{1d400}',
    '\u{1d7ce}',
    '\u{10428}',
    '\u{1f1e6}',
    '\u{2019}',
    'の',
    'カ',
    '\u{309b}',
    '\u{30fb}',
    '\u{3040}',
    '\u{3099}',
    '$',
    '^',
    ':',
];

/// A small alphabet for exhaustive enumeration: one per behaviour class.
const SMALL: &[char] = &[
    'a', 'Z', 's', 'l', 'e', 'v', '\u{17f}', '0', ' ', '\n', '\r', '\t', '\'', '/', '.', '\u{301}',
    '\u{2b0}', '한', '\u{1c5}', '\u{a0}', '中', '\u{200b}', ':',
];

/// Hugging Face's chain of `Split` stages ([`DEEPSEEK_V3_SPLITS`]) with the
/// `Isolated` behaviour: each stage's regex runs on every piece of the stage
/// before as its own text, and every match and every gap is kept.
fn chain_pieces(text: &str) -> Vec<String> {
    // compiled once: the random tests call this 100,000s of times
    static STAGES: std::sync::OnceLock<Vec<fancy_regex::Regex>> = std::sync::OnceLock::new();
    let regexes = STAGES.get_or_init(|| {
        DEEPSEEK_V3_SPLITS
            .iter()
            .map(|stage| compile(stage).expect("stage compiles"))
            .collect()
    });
    let mut pieces = vec![text.to_string()];
    for re in regexes {
        let mut next = Vec::new();
        for p in &pieces {
            let mut at = 0;
            for m in re.find_iter(p) {
                let m = m.expect("no backtracking blowup");
                if m.start() > at {
                    next.push(p[at..m.start()].to_string());
                }
                if m.end() > m.start() {
                    next.push(m.as_str().to_string());
                }
                at = at.max(m.end());
            }
            if at < p.len() {
                next.push(p[at..].to_string());
            }
        }
        pieces = next;
    }
    pieces
}

fn regex_pieces(p: &Pretokenizer, text: &str) -> Vec<String> {
    if p.named() == Some(Named::DeepSeekV3) {
        return chain_pieces(text);
    }
    let re = p.regex().expect("named pattern");
    re.find_iter(text)
        .map(|m| {
            m.expect("no backtracking blowup on short input")
                .as_str()
                .to_owned()
        })
        .collect()
}

fn check(text: &str) {
    for (name, pat, _) in named() {
        let p = Pretokenizer::new(Some(pat)).expect("named");
        let ours: Vec<String> = p
            .split(text)
            .expect("infallible")
            .into_iter()
            .map(str::to_owned)
            .collect();
        let theirs = regex_pieces(&p, text);
        assert_eq!(ours, theirs, "{name} on {text:?}");
        let iter: Vec<&str> = p.scanner().expect("named").pieces(text).collect();
        assert_eq!(iter, ours, "{name} iterator on {text:?}");
    }
}

/// xorshift64*: a seeded generator, so failures are reproducible.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[test]
fn named_patterns_compile() {
    for (name, pat, family) in named() {
        if family.is_chain() {
            for stage in pat.split(CHAIN_SEPARATOR) {
                compile(stage).expect("compiles");
            }
        } else {
            compile(pat).expect("compiles");
        }
        let p = Pretokenizer::new(Some(pat)).expect("compiles");
        assert_eq!(p.named(), Some(family), "{name}");
        assert_eq!(p.pattern(), Some(pat), "{name}");
        assert_eq!(p.path(), family.path(), "{name}");
    }
    assert_eq!(
        DEEPSEEK_V3_CHAIN,
        DEEPSEEK_V3_SPLITS.join(&CHAIN_SEPARATOR.to_string()[..])
    );
    let chain = Pretokenizer::from_splits(&DEEPSEEK_V3_SPLITS).unwrap();
    assert_eq!(chain.map(|p| p.path()), Some("scanner:deepseek_v3"));
    assert!(Pretokenizer::from_splits(&DEEPSEEK_V3_SPLITS[1..])
        .unwrap()
        .is_none());
    let unknown = format!("a{CHAIN_SEPARATOR}b");
    assert!(matches!(
        Pretokenizer::new(Some(&unknown)),
        Err(Error::InvalidPattern { .. })
    ));
    assert_eq!(Pretokenizer::new(Some("x+")).unwrap().path(), "regex");
    assert_eq!(Pretokenizer::new(None).unwrap().path(), "whole");
    assert_eq!(
        Pretokenizer::new(Some("cl100k_base")).unwrap().path(),
        "scanner:cl100k"
    );
}

#[test]
fn gpt2_seed_example() {
    let p = Pretokenizer::new(Some("gpt2")).unwrap();
    assert_eq!(
        p.split("I'm lowest 토큰").unwrap(),
        vec!["I", "'m", " lowest", " 토큰"]
    );
}

#[test]
fn digits_grouping() {
    let cl = Pretokenizer::new(Some("cl100k")).unwrap();
    assert_eq!(cl.split("12345678").unwrap(), vec!["123", "456", "78"]);
    let g = Pretokenizer::new(Some("gpt2")).unwrap();
    assert_eq!(g.split("12345678").unwrap(), vec!["12345678"]);
}

#[test]
fn invalid_pattern_is_an_error() {
    assert!(matches!(
        Pretokenizer::new(Some("(")),
        Err(Error::InvalidPattern { .. })
    ));
    assert!(matches!(
        Pretokenizer::new(Some("")),
        Err(Error::InvalidPattern { .. })
    ));
}

#[test]
fn unmatched_text_is_its_own_piece() {
    for (pat, text, want) in [
        (
            "the",
            "the cat sat on the mat",
            vec!["the", " cat sat on ", "the", " mat"],
        ),
        ("[a-z]+", "  ab12cd!", vec!["  ", "ab", "12", "cd", "!"]),
        ("x*", "axxb", vec!["a", "xx", "b"]),
        ("z", "abc", vec!["abc"]),
    ] {
        let p = Pretokenizer::new(Some(pat)).unwrap();
        assert_eq!(p.split(text).unwrap(), want, "{pat:?} on {text:?}");
    }
}

#[test]
fn whole_and_empty() {
    let w = Pretokenizer::new(None).unwrap();
    assert_eq!(w.split("a b").unwrap(), vec!["a b"]);
    assert!(w.split("").unwrap().is_empty());
    for (_, pat, _) in named() {
        assert!(Pretokenizer::new(Some(pat))
            .unwrap()
            .split("")
            .unwrap()
            .is_empty());
    }
}

#[test]
fn exhaustive_short_strings_match_fancy_regex() {
    let mut buf = String::new();
    for &a in SMALL {
        for &b in SMALL {
            for &c in SMALL {
                buf.clear();
                buf.extend([a, b, c]);
                check(&buf);
            }
        }
    }
    for &a in ALPHABET {
        for &b in ALPHABET {
            buf.clear();
            buf.extend([a, b]);
            check(&buf);
        }
    }
}

#[test]
fn random_strings_match_fancy_regex() {
    let seed = 0x5eed_0001;
    let mut rng = Rng(seed);
    for _ in 0..20_000 {
        let len = rng.below(24);
        // Bias towards few distinct characters, so runs and repeats occur.
        let k = 1 + rng.below(6);
        let pool: Vec<char> = (0..k)
            .map(|_| ALPHABET[rng.below(ALPHABET.len())])
            .collect();
        let text: String = (0..len).map(|_| pool[rng.below(pool.len())]).collect();
        check(&text);
    }
}

#[test]
fn contractions_and_case_folds() {
    for text in [
        "I'm we'll they've you're he'd it's DON'T WE'LL THEY'VE YOU'RE HE'D IT'S",
        "it'ſ we'Ll o'Re x'VE 'S 'ſ 'K 'k '\u{212a}",
        "'s's'll'LL'lL'ſſ '' ''s a'",
        "ǅx'S Dž'd ʰA'm 한'Re é'T \u{301}'ve .'d",
    ] {
        check(text);
    }
}

#[test]
fn whitespace_tails_match_fancy_regex() {
    for text in [
        "a  b",
        "a \n b",
        "a\n\n\nb",
        "a \r\n\r\n b",
        "  ",
        " ",
        "\n",
        "x\n",
        "x \n",
        "x\n ",
        "x  ",
        " \u{a0}x",
        "\u{3000}\u{3000}x",
        "a\t\tb",
        "a \t\n \t b",
        "// a\n/b",
        "!\n/x",
        ".\r\n/ x",
        " !\n",
        "\u{2028}\u{2029}",
    ] {
        check(text);
    }
}

/// Megabyte-long hostile inputs split as an obvious oracle says (timed in tests/reliability).
#[test]
fn hostile_inputs_split_as_the_oracle_says() {
    const BIG: usize = 1_000_000;
    for (name, _, named) in named() {
        let sc = Scanner::new(named);
        let x = "x".repeat(BIG);
        assert_eq!(
            sc.pieces(&x).collect::<Vec<_>>(),
            vec![x.as_str()],
            "{name}"
        );
        let spaces = " ".repeat(BIG);
        assert_eq!(sc.pieces(&spaces).count(), 1, "{name}");
        let sx = format!("{spaces}x");
        let got: Vec<&str> = sc.pieces(&sx).collect();
        if named.spans_lines() {
            assert_eq!(got, vec![sx.as_str()], "{name}");
            let words = "word ".repeat(BIG / 5);
            assert_eq!(sc.pieces(&words).count(), 1, "{name}");
            let colons = ":".repeat(BIG);
            assert_eq!(sc.pieces(&colons).count(), 1, "{name}");
            let colon_spaces = ": ".repeat(BIG / 2);
            // ":", then " :" each, then the last space
            assert_eq!(sc.pieces(&colon_spaces).count(), BIG / 2 + 1, "{name}");
        } else {
            assert_eq!(got, vec![&spaces[1..], " x"], "{name}");
        }
        let nl = "\n".repeat(BIG);
        assert_eq!(sc.pieces(&nl).count(), 1, "{name}");
        let digits = "7".repeat(BIG);
        let want = if named == Named::Gpt2 {
            1
        } else if named.groups_digits() {
            BIG.div_ceil(3)
        } else {
            BIG
        };
        assert_eq!(sc.pieces(&digits).count(), want, "{name}");
        let marks = "\u{301}".repeat(BIG / 2);
        assert_eq!(sc.pieces(&marks).count(), 1, "{name}");
        let korean = "한".repeat(BIG / 3);
        assert_eq!(sc.pieces(&korean).count(), 1, "{name}");
        // o200k's backtracking case: a modifier letter, then a long run of capitals.
        let lm_caps = format!("\u{2b0}{}", "A".repeat(BIG));
        let got: Vec<&str> = sc.pieces(&lm_caps).collect();
        let want: Vec<&str> = if named.cased_words() {
            vec!["\u{2b0}", &lm_caps[2..]]
        } else {
            vec![&lm_caps]
        };
        assert_eq!(got, want, "{name}");
        let mixed_ws = " \n".repeat(BIG / 2) + "x";
        let total: usize = sc.pieces(&mixed_ws).map(str::len).sum();
        assert_eq!(total, mixed_ws.len(), "{name}");
    }
}

#[test]
fn real_text_matches_fancy_regex() {
    let text = "The Project Gutenberg eBook of Pride and Prejudice, by Jane Austen.\n\n\
        \"It is a truth universally acknowledged,\" she said -- isn't it? 12,345.67 $1,000!!\n\
        def f(x):\n    return x**2  # comment\r\n\tif x:\n\t\tpass\n\n\n\
        대한민국 헌법은 1948년에 제정되었다. 日本語のテキスト、中文文本。Привет, мир!\n\
        नमस्ते दुनिया 🎉🎉 café naïve ÉCOLE Ǆemal ʰʰA ﬁne ſtuff\u{a0}\u{a0}end  \n";
    check(text);
    for (name, _, named) in named() {
        let sc = Scanner::new(named);
        let mut spans = Vec::new();
        sc.for_each_span(text, |s, e| spans.push((s, e)));
        let pieces: Vec<&str> = spans.iter().map(|&(s, e)| &text[s..e]).collect();
        assert_eq!(pieces, sc.pieces(text).collect::<Vec<_>>(), "{name}");
    }
}

#[test]
fn safe_cuts_do_not_change_pieces() {
    let seed = 0x5eed_0002;
    let mut rng = Rng(seed);
    let mut cuts_seen = 0;
    for _ in 0..3_000 {
        let len = rng.below(40);
        let k = 2 + rng.below(8);
        let pool: Vec<char> = (0..k)
            .map(|_| ALPHABET[rng.below(ALPHABET.len())])
            .collect();
        let text: String = (0..len).map(|_| pool[rng.below(pool.len())]).collect();
        for (name, pat, _) in named() {
            let p = Pretokenizer::new(Some(pat)).unwrap();
            let whole = p.split(&text).unwrap();
            let every: Vec<usize> = (0..=text.len())
                .filter(|&q| p.is_safe_cut(&text, q))
                .collect();
            for q in 0..=text.len() {
                let next = every.iter().find(|&&c| c >= q).copied();
                let before = every.iter().rev().find(|&&c| c <= q).copied();
                assert_eq!(
                    p.next_safe_cut(&text, q),
                    next,
                    "{name} next from {q} of {text:?}"
                );
                assert_eq!(
                    p.safe_cut_before(&text, q),
                    before,
                    "{name} before {q} of {text:?}"
                );
                if !p.is_safe_cut(&text, q) {
                    continue;
                }
                cuts_seen += 1;
                let mut parts = p.split(&text[..q]).unwrap();
                parts.extend(p.split(&text[q..]).unwrap());
                assert_eq!(
                    parts, whole,
                    "{name} cut at {q} of {text:?} (seed {seed:#x})"
                );
            }
        }
    }
    assert!(
        cuts_seen > 100,
        "the generator should produce safe cuts ({cuts_seen})"
    );
    let p = Pretokenizer::new(Some("o200k")).unwrap();
    let text = "ab, cd\nef 12 '";
    assert_eq!(p.next_safe_cut(text, 0), Some(6));
    assert_eq!(p.next_safe_cut(text, 7), Some(9));
    assert_eq!(p.safe_cut_before(text, text.len()), Some(12));
    assert_eq!(p.safe_cut_before(text, 8), Some(6));
    assert_eq!(
        Pretokenizer::new(None).unwrap().next_safe_cut(text, 0),
        None
    );
}

#[test]
fn superword_spans_cross_spaces_and_cut_at_colons_numbers_and_newlines() {
    let p = Pretokenizer::new(Some(SUPERWORD_PATTERN)).unwrap();
    let text = "Answer: the cat, 12345 mats:\n\nend";
    let want = ["Answer:", " the cat, ", "123", "45", " mats:\n\n", "end"];
    assert_eq!(p.split(text).unwrap(), want);
    assert_eq!(
        (p.next_safe_cut(text, 0), p.safe_cut_before(text, 99)),
        (Some(30), Some(30))
    );
}
