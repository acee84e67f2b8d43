//! The chain scanner against the stages run one by one on `fancy-regex`
//! (and `char::is_numeric` for `Digits`): exhaustive short strings, random
//! strings, real text, hostile inputs (linear time: an oracle on megabytes).

use super::super::{compile, Pretokenizer};
use super::*;
use masks::Way;

/// DeepSeek LLM's letters (the cased letters of its file, ASCII to Adlam).
const LLM_LETTERS: &str = "\\s?[A-Za-z\u{b5}\u{c0}-\u{d6}\u{d8}-\u{f6}\u{f8}-\u{1ba}\u{1bc}-\u{1bf}\u{1c4}-\u{293}\u{295}-\u{2af}\u{370}-\u{373}\u{376}\u{377}\u{37b}-\u{37d}\u{37f}\u{386}\u{388}-\u{38a}\u{38c}\u{38e}-\u{3a1}\u{3a3}-\u{3f5}\u{3f7}-\u{481}\u{48a}-\u{52f}\u{531}-\u{556}\u{10a0}-\u{10c5}\u{13a0}-\u{13f5}\u{13f8}-\u{13fd}\u{1c90}-\u{1cba}\u{1cbd}-\u{1cbf}\u{1d00}-\u{1d2b}\u{1d6b}-\u{1d77}\u{1d79}-\u{1d9a}\u{1e00}-\u{1f15}\u{1f18}-\u{1f1d}\u{1f20}-\u{1f45}\u{1f48}-\u{1f4d}\u{1f50}-\u{1f57}\u{1f59}\u{1f5b}\u{1f5d}\u{1f5f}-\u{1f7d}\u{1f80}-\u{1fb4}\u{1fb6}-\u{1fbc}\u{1fbe}\u{1fc2}-\u{1fc4}\u{1fc6}-\u{1fcc}\u{1fd0}-\u{1fd3}\u{1fd6}-\u{1fdb}\u{1fe0}-\u{1fec}\u{1ff2}-\u{1ff4}\u{1ff6}-\u{1ffc}\u{2102}\u{2107}\u{210a}-\u{2113}\u{2115}\u{2119}-\u{211d}\u{2124}\u{2126}\u{2128}\u{212a}-\u{212d}\u{212f}-\u{2134}\u{2139}\u{213c}-\u{213f}\u{2145}-\u{2149}\u{214e}\u{2183}\u{2184}\u{2c00}-\u{2c7b}\u{2c7e}-\u{2ce4}\u{2ceb}-\u{2cee}\u{2cf2}\u{2cf3}\u{a640}-\u{a66d}\u{a680}-\u{a69b}\u{a722}-\u{a76f}\u{a771}-\u{a787}\u{a78b}-\u{a78e}\u{ab70}-\u{abbf}\u{fb00}-\u{fb06}\u{fb13}-\u{fb17}\u{ff21}-\u{ff3a}\u{ff41}-\u{ff5a}\u{10400}-\u{1044f}\u{104b0}-\u{104d3}\u{104d8}-\u{104fb}\u{10c80}-\u{10cb2}\u{10cc0}-\u{10cf2}\u{118a0}-\u{118df}\u{1e900}-\u{1e943}]+";
const LLM_PUNCT: &str =
    "\\s?[!-/:-~\u{ff01}-\u{ff0f}\u{ff1a}-\u{ff5e}\u{2018}-\u{201f}\u{3000}-\u{3002}]+";
const CJK_KO: &str = "[\u{4e00}-\u{9fa5}\u{800}-\u{4e00}\u{ac00}-\u{d7ff}]+";

/// DeepSeek LLM 7B's stages, as the Python reader hands them over (`(?m)`
/// before a pattern with `$`).
fn llm() -> Vec<ChainStage<'static>> {
    vec![
        ChainStage::Split("[\r\n]"),
        ChainStage::Split(LLM_LETTERS),
        ChainStage::Split(LLM_PUNCT),
        ChainStage::Split("(?m)\\s+$"),
        ChainStage::Split(CJK_KO),
        ChainStage::Digits { individual: true },
    ]
}

/// DeepSeek Coder 33B's stages.
fn coder() -> Vec<ChainStage<'static>> {
    vec![
        ChainStage::Split("[\r\n]"),
        ChainStage::Split("\\s?\\p{L}+"),
        ChainStage::Split("\\s?\\p{P}+"),
        ChainStage::Split(CJK_KO),
        ChainStage::Digits { individual: true },
    ]
}

/// Other chains of the same shapes: `$` without `(?m)` and with a line feed
/// left in the pieces, digits in runs, a prefix class that meets the run's.
fn variants() -> Vec<Vec<ChainStage<'static>>> {
    vec![
        vec![
            ChainStage::Split("\\s+$"),
            ChainStage::Digits { individual: false },
        ],
        vec![ChainStage::Split("(?m)\\s+$"), ChainStage::Split("\\p{L}+")],
        vec![ChainStage::Split("(?m)[ \\t]+$"), ChainStage::Split("x")],
        vec![
            ChainStage::Split("[\\s\\d]?[\\d\\p{L}]+"),
            ChainStage::Split("[a\\n]"),
            ChainStage::Digits { individual: true },
        ],
        vec![
            ChainStage::Digits { individual: false },
            ChainStage::Split("(\\s?\\p{P}+)"),
        ],
    ]
}

/// A `Split` stage's regex, compiled as the custom patterns are.
fn regex(st: &ChainStage) -> Option<fancy_regex::Regex> {
    match *st {
        ChainStage::Split(pat) => Some(compile(pat).expect("stage compiles")),
        ChainStage::Digits { .. } => None,
    }
}

/// The stages one by one: each regex on every piece of the stage before as
/// its own text, every match and gap kept; `Digits` by `char::is_numeric`.
fn staged_with(
    stages: &[ChainStage],
    compiled: &[Option<fancy_regex::Regex>],
    text: &str,
) -> Vec<String> {
    let mut pieces = vec![text.to_string()];
    for (st, re) in stages.iter().zip(compiled) {
        let mut next = Vec::new();
        for p in &pieces {
            let mut at = 0;
            let mut push = |s: usize, e: usize| {
                if at < s {
                    next.push(p[at..s].to_string());
                }
                next.push(p[s..e].to_string());
                at = e;
            };
            match (*st, re) {
                (ChainStage::Split(_), Some(re)) => {
                    for m in re.find_iter(p) {
                        let m = m.expect("no backtracking blowup");
                        push(m.start(), m.end());
                    }
                }
                (ChainStage::Split(_), None) => unreachable!("a split has its regex"),
                (ChainStage::Digits { individual }, _) => {
                    let mut run: Option<(usize, usize)> = None;
                    for (i, c) in p.char_indices() {
                        let e = i + c.len_utf8();
                        match (c.is_numeric(), run) {
                            (true, Some((s, r))) if !individual && r == i => run = Some((s, e)),
                            (true, prev) => {
                                if let Some((s, r)) = prev {
                                    push(s, r);
                                }
                                run = Some((i, e));
                            }
                            (false, _) => {}
                        }
                    }
                    if let Some((s, e)) = run {
                        push(s, e);
                    }
                }
            }
            if at < p.len() {
                next.push(p[at..].to_string());
            }
        }
        pieces = next;
    }
    pieces
}

fn ours(c: &SplitChain, text: &str) -> Vec<String> {
    let mut out = Vec::new();
    c.for_each_span(text, |s: usize, e: usize| out.push(text[s..e].to_string()));
    out
}

type Tested = (
    Vec<ChainStage<'static>>,
    Vec<Option<fancy_regex::Regex>>,
    SplitChain,
);

fn chains() -> Vec<Tested> {
    let mut all = vec![llm(), coder()];
    all.extend(variants());
    all.into_iter()
        .map(|st| {
            let c = SplitChain::new(&st).expect("the chain is recognised");
            let re = st.iter().map(regex).collect();
            (st, re, c)
        })
        .collect()
}

fn check(chains: &[Tested], text: &str) {
    for (st, re, c) in chains {
        assert_eq!(
            ours(c, text),
            staged_with(st, re, text),
            "{} {st:?} on {text:?}",
            c.label()
        );
    }
}

/// Characters of every class the chains tell apart.
const ALPHABET: &[char] = &[
    'a', 'Z', 'x', '0', '7', ' ', '\t', '\n', '\r', '\u{b}', '.', '!', '~', ':', '@', '_', '\u{0}',
    'é', 'µ', 'ß', '\u{301}', 'Ω', 'Я', 'ǅ', 'ʰ', '한', '\u{1100}', '中', '一', '龥', '\u{9fa6}',
    'の', 'カ', '\u{800}', 'ก', 'अ', '\u{a0}', '\u{3000}', '\u{3001}', '\u{2028}', '\u{85}',
    '\u{200b}', '’', '“', '—', '！', 'Ａ', '１', '\u{663}', 'Ⅻ', '½', '😀', '𐐀', '\u{e000}',
];

#[test]
fn the_models_chains_are_recognised() {
    let llm = SplitChain::new(&llm()).expect("DeepSeek LLM");
    assert_eq!(llm.label(), "Split x5 + Digits x1");
    let c = SplitChain::new(&coder()).expect("DeepSeek Coder");
    assert_eq!(c.label(), "Split x4 + Digits x1");
    let p = Pretokenizer::from_chain(&coder()).expect("chain");
    assert_eq!(p.path(), "scanner:split_chain");
    assert!(p.regex().is_none() && p.named().is_none() && p.pattern().is_none());
    // shapes the scanner does not run
    for other in [
        "\\s+(?!\\S)",
        "a|bc",
        "\\s*\\p{L}+",
        "\\s?\\p{L}+?",
        "\\p{L}{2}",
        "^\\s+",
        "ab",
        "(?-u:\\xFF)+",
        "(",
    ] {
        let st = [ChainStage::Split("[\r\n]"), ChainStage::Split(other)];
        assert!(SplitChain::new(&st).is_none(), "{other:?}");
    }
    assert!(SplitChain::new(&[ChainStage::Split("[\r\n]")]).is_none());
    // at most eight classes
    let many: Vec<String> = (0..9)
        .map(|k| format!("[{}]", (b'a' + k) as char))
        .collect();
    let st: Vec<ChainStage> = many.iter().map(|p| ChainStage::Split(p)).collect();
    assert!(SplitChain::new(&st[..8]).is_some());
    assert!(SplitChain::new(&st).is_none());
}

#[test]
fn examples_split_as_the_stages_do() {
    let c = SplitChain::new(&coder()).expect("chain");
    assert_eq!(
        ours(&c, "def f(x):\n  return 12 \r\n한국어 text"),
        [
            "def",
            " f",
            "(",
            "x",
            "):",
            "\n",
            " ",
            " return",
            " ",
            "1",
            "2",
            " ",
            "\r",
            "\n",
            "한국어",
            " text"
        ]
    );
    let l = SplitChain::new(&llm()).expect("chain");
    // ASCII letters are in both the letter and the punctuation class; Ω is in
    // the letters only; trailing spaces of a piece are a piece
    assert_eq!(
        ours(&l, " Ωmega, x  \n"),
        [" Ω", "mega", ",", " x", "  ", "\n"]
    );
}

#[test]
fn exhaustive_short_strings_match_the_stages() {
    let all = chains();
    let mut buf = String::new();
    for &a in ALPHABET {
        for &b in ALPHABET {
            for &c in ["a", " ", "\n", "1", "中", "!", "\u{301}"].iter() {
                buf.clear();
                buf.push(a);
                buf.push(b);
                buf.push_str(c);
                check(&all, &buf);
            }
        }
    }
}

#[test]
fn random_strings_match_the_stages() {
    let all = chains();
    let mut x: u64 = 0x5eed_c4a1;
    let mut next = |n: usize| {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        (x.wrapping_mul(0x2545_f491_4f6c_dd1d) % n as u64) as usize
    };
    for _ in 0..6_000 {
        let len = next(30);
        let k = 1 + next(6);
        let pool: Vec<char> = (0..k).map(|_| ALPHABET[next(ALPHABET.len())]).collect();
        let text: String = (0..len).map(|_| pool[next(pool.len())]).collect();
        check(&all, &text);
    }
}

#[test]
fn real_text_matches_the_stages() {
    let text = "The Project Gutenberg eBook of Pride and Prejudice, by Jane Austen.\n\n\
        \"It is a truth universally acknowledged,\" she said -- isn't it? 12,345.67 $1,000!!\n\
        def f(x):\n    return x**2  # comment\r\n\tif x:\n\t\tpass  \n\n\n\
        대한민국 헌법은 1948년에 제정되었다. 日本語のテキスト、中文文本。Привет, мир!  \n\
        नमस्ते दुनिया 🎉🎉 café naïve ÉCOLE Ǆemal ʰʰA ﬁne ſtuff\u{a0}\u{a0}end  \u{3000}";
    check(&chains(), text);
}

/// Megabyte-long hostile inputs split as an obvious oracle says; the scanner
/// reads each character a bounded number of times (timed in
/// tests/pretokenize/test_split_chains.py).
#[test]
fn hostile_inputs_split_as_the_oracle_says() {
    const BIG: usize = 1_000_000;
    let count = |c: &SplitChain, text: &str| {
        let mut n = 0usize;
        let mut at = 0;
        c.for_each_span(text, |s: usize, e: usize| {
            assert_eq!(s, at);
            at = e;
            n += 1;
        });
        assert_eq!(at, text.len());
        n
    };
    for st in [llm(), coder()] {
        let c = SplitChain::new(&st).expect("chain");
        assert_eq!(count(&c, &"x".repeat(BIG)), 1);
        assert_eq!(count(&c, &" ".repeat(BIG)), 1);
        assert_eq!(count(&c, &format!("{}x", " ".repeat(BIG))), 2);
        assert_eq!(count(&c, &" x".repeat(BIG / 2)), BIG / 2);
        assert_eq!(count(&c, &"\n".repeat(BIG)), BIG);
        assert_eq!(count(&c, &"7".repeat(BIG)), BIG);
        assert_eq!(count(&c, &"中".repeat(BIG / 3)), 1);
        assert_eq!(count(&c, &" .".repeat(BIG / 2)), BIG / 2);
        assert_eq!(count(&c, &"\u{301}".repeat(BIG / 2)), 1);
        // U+3000 is whitespace, and in both CJK ranges: " " and "\u{3000}"
        // each, then "."
        let spaces = format!("{}.", " \u{3000}".repeat(BIG / 4));
        assert_eq!(count(&c, &spaces), BIG / 2 + 1);
        // lines outside ASCII (the fused pass): one class for a megabyte
        assert_eq!(count(&c, &"한".repeat(BIG / 3)), 1);
        assert_eq!(count(&c, &"\u{3000}".repeat(BIG / 3)), 1);
        assert_eq!(count(&c, &"１".repeat(BIG / 3)), BIG / 3);
        assert_eq!(count(&c, &format!("é{}", " ".repeat(BIG))), 2);
        assert_eq!(count(&c, &format!("{}é", " ".repeat(BIG))), 2);
    }
    let trailing = SplitChain::new(&variants()[1]).expect("chain");
    // `(?m)\s+$` on spaces and line feeds: one match up to the last line feed
    let text = format!("{}x", " \n".repeat(BIG / 2));
    assert_eq!(count(&trailing, &text), 3);
}

/// The model chains take the flat pass on ASCII lines; chains it would split
/// wrongly do not.
#[test]
fn the_flat_pass_runs_only_where_it_splits_as_the_stages() {
    for st in [llm(), coder()] {
        assert!(SplitChain::new(&st).expect("chain").flat.is_some());
    }
    for st in flat_misfits() {
        assert!(
            SplitChain::new(&st).expect("chain").flat.is_none(),
            "{st:?}"
        );
    }
}

/// Chains near the flat shape that it does not run: the second class holds
/// part of the first, the digits come before the runs, the trailing class is
/// not the prefix class, the first stage is not `[\r\n]`, a run has no prefix.
fn flat_misfits() -> Vec<Vec<ChainStage<'static>>> {
    let runs = |second: &'static str| {
        vec![
            ChainStage::Split("[\r\n]"),
            ChainStage::Split("\\s?[A-Za-z]+"),
            ChainStage::Split(second),
            ChainStage::Digits { individual: true },
        ]
    };
    let mut digits_first = coder();
    digits_first.swap(1, 4);
    let mut tab_trailing = llm();
    tab_trailing[3] = ChainStage::Split("[ \\t]+$");
    let mut lf_only = coder();
    lf_only[0] = ChainStage::Split("\n");
    let mut wider_lines = llm();
    wider_lines[0] = ChainStage::Split("[\r\n\u{2028}]");
    vec![
        runs("\\s?[!-/:-m]+"),
        runs("[!-/:-~]+"),
        digits_first,
        tab_trailing,
        lf_only,
        wider_lines,
    ]
}

/// The chains of the flat pass and their misfits, which the stages judge.
fn ascii_chains() -> Vec<Tested> {
    let mut all = vec![llm(), coder()];
    all.extend(flat_misfits());
    all.into_iter()
        .map(|st| {
            let c = SplitChain::new(&st).expect("chain");
            let re = st.iter().map(regex).collect();
            (st, re, c)
        })
        .collect()
}

/// ASCII characters of every class the flat pass tells apart: letters,
/// `[!-/:-~]` punctuation and symbols (in `\p{P}` or not), whitespace
/// (`\v`, `\f` too), digits, controls, line ends.
const ASCII: &[char] = &[
    'a', 'Z', '0', '9', ' ', '\t', '\u{b}', '\u{c}', '.', '!', '$', '+', '`', '~', '_', '\'', '@',
    '\u{0}', '\u{1f}', '\u{7f}', '\r', '\n',
];

#[test]
fn ascii_strings_match_the_stages() {
    let all = ascii_chains();
    let mut buf = String::new();
    for &a in ASCII {
        for &b in ASCII {
            for &c in ASCII {
                buf.clear();
                buf.extend([a, b, c]);
                check(&all, &buf);
            }
        }
    }
    let mut x: u64 = 0xa5c1_1f1a;
    let mut next = |n: usize| {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        (x.wrapping_mul(0x2545_f491_4f6c_dd1d) % n as u64) as usize
    };
    // every ASCII byte, and lines with one character outside ASCII here and
    // there (the line leaves the flat pass)
    let outside = ['é', '中', '\u{a0}', '\u{3000}', '’', '１'];
    for round in 0..4_000 {
        let len = next(90);
        let text: String = (0..len)
            .map(|_| match next(40) {
                0 if round % 2 == 0 => outside[next(outside.len())],
                1..=9 => char::from(next(128) as u8),
                _ => ASCII[next(ASCII.len())],
            })
            .collect();
        check(&all, &text);
    }
    check(
        &all,
        "a  \t\r\n  1 2  \u{b}\n\u{0} x!!  ?? (3) \u{7f}\u{7f}  ",
    );
}

/// The corpus excerpts in tests/data split the same with and without the
/// flat pass.
#[test]
fn the_flat_pass_splits_the_corpora_as_the_nested_stages() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let mut files = 0;
    for entry in std::fs::read_dir(dir).expect("tests/data") {
        let path = entry.expect("entry").path();
        if path.extension().is_none_or(|e| e != "txt") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("UTF-8 fixture");
        files += 1;
        for st in [llm(), coder()] {
            let flat = SplitChain::new(&st).expect("chain");
            let mut nested = SplitChain::new(&st).expect("chain");
            nested.flat = None;
            assert!(flat.flat.is_some());
            assert_eq!(ours(&flat, &text), ours(&nested, &text), "{path:?}");
        }
    }
    assert!(files >= 6, "tests/data has six fixtures");
}

/// The pieces of the ASCII text `b[p..]` (`p` at a line start) by the
/// byte-by-byte pass, line by line: the oracle of the block pass.
fn by_lines(flat: &Flat, b: &[u8], p: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut s = p;
    for i in p..=b.len() {
        if i == b.len() || b[i] == b'\r' || b[i] == b'\n' {
            if s < i {
                flat.line(&b[s..i], s, &mut |x: usize, y: usize| out.push((x, y)));
            }
            if i < b.len() {
                out.push((i, i + 1));
            }
            s = i + 1;
        }
    }
    out
}

/// Random ASCII text of up to `max` bytes: the flat pass's classes, any
/// ASCII byte, and whitespace runs long enough to cross a block.
fn ascii_text(next: &mut impl FnMut(usize) -> usize, max: usize) -> String {
    let len = next(max);
    let mut text = String::new();
    while text.len() < len {
        match next(30) {
            0 => text.extend(std::iter::repeat_n(' ', 1 + next(100))),
            1 => text.extend(std::iter::repeat_n(
                ['\t', ' ', '\n'][next(3)],
                1 + next(70),
            )),
            2..=6 => text.push(char::from(next(128) as u8)),
            _ => text.push(ASCII[next(ASCII.len())]),
        }
    }
    text
}

fn xorshift(seed: u64) -> impl FnMut(usize) -> usize {
    let mut x = seed;
    move |n: usize| {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        (x.wrapping_mul(0x2545_f491_4f6c_dd1d) % n as u64) as usize
    }
}

/// The block pass gives the byte-by-byte pass's pieces with every
/// classifier, the region starting at every offset of a block (after a
/// line of filler), on random ASCII text crossing several blocks.
#[test]
fn the_block_pass_matches_the_line_pass_at_every_offset() {
    let mut next = xorshift(0x51ab_77c3);
    for st in [llm(), coder()] {
        let chain = SplitChain::new(&st).expect("chain");
        let (flat, _) = chain.flat.as_ref().expect("flat pass");
        for _ in 0..300 {
            let text = ascii_text(&mut next, 400);
            for k in 0..64 {
                let mut b = vec![b'x'; k];
                if let Some(last) = b.last_mut() {
                    *last = b'\n';
                }
                b.extend_from_slice(text.as_bytes());
                let want = by_lines(flat, &b, k);
                for way in Way::available() {
                    let mut got = Vec::new();
                    flat.region(&b, k, b.len(), way, &mut |x: usize, y: usize| {
                        got.push((x, y))
                    });
                    assert_eq!(got, want, "{way:?} at {k} on {text:?}");
                }
            }
        }
    }
}

/// Texts of several blocks, ASCII lines with a line outside ASCII here and
/// there, split as the stages do.
#[test]
fn long_strings_match_the_stages() {
    let all = ascii_chains();
    let mut next = xorshift(0x0dd_ba11);
    let outside = ['é', '中', '\u{a0}', '\u{3000}', '’', '１'];
    for round in 0..600 {
        let mut text = ascii_text(&mut next, 300);
        if round % 3 == 0 {
            let at = next(text.len() + 1);
            text.insert(at, outside[next(outside.len())]);
        }
        text.push_str(&ascii_text(&mut next, 200));
        check(&all, &text);
    }
}

/// Characters of every class the chains tell apart outside ASCII, with
/// ASCII ones: Hangul, CJK, kana, U+3000 (whitespace, punctuation of DeepSeek
/// LLM, in its CJK ranges), other Unicode whitespace, numerics outside ASCII,
/// punctuation, combining marks, emoji, cased letters.
const MIXED: &[char] = &[
    'a', 'Q', '5', ' ', '\t', '.', ',', '(', '_', '\'', '한', '국', '\u{1100}', '中', '一', '龥',
    '\u{9fa6}', 'の', 'カ', '\u{800}', '\u{3000}', '\u{3001}', '。', '\u{a0}', '\u{2028}',
    '\u{85}', '\u{2003}', '\u{200b}', '\u{663}', '１', 'Ⅻ', '½', '“', '’', '—', '！', '、',
    '\u{301}', '\u{903}', '😀', '🎉', 'é', 'Ω', 'Я', 'ǅ', 'ʰ', 'ก', 'अ', 'Ａ', '𐐀', '\u{e000}',
    'я', 'Ä', 'ש', 'م', 'ڀ', '·', '«', '×', 'ª', '²', '\u{ad}', '鿿', 'ぁ', 'ー', '・',
];

/// Lines with characters outside ASCII (the fused pass), long enough to
/// cross several 64-character words, with runs of one character, split as
/// the stages do; near-miss chains (the nested stages) too.
#[test]
fn mixed_lines_match_the_stages() {
    let all = ascii_chains();
    let mut next = xorshift(0x6b6f_7265);
    for round in 0..3_000 {
        let len = next(if round % 4 == 0 { 300 } else { 40 });
        let k = 2 + next(8);
        let pool: Vec<char> = (0..k).map(|_| MIXED[next(MIXED.len())]).collect();
        let mut text = String::new();
        while text.chars().count() < len {
            let c = pool[next(pool.len())];
            let reps = if next(8) == 0 { 1 + next(90) } else { 1 };
            text.extend(std::iter::repeat_n(c, reps));
            if next(30) == 0 {
                text.push(['\n', '\r'][next(2)]);
            }
        }
        check(&all, &text);
    }
}
