//! Pre-tokenizers: for the three named patterns the core's pieces must be
//! non-empty, contiguous, cover the text exactly, and equal tiktoken's pieces
//! (the same regex run by fancy_regex). The core must never fail on them.
#![no_main]

use bytepair::pretok::Pretokenizer;
use fuzz_oracle::{named_regex, regex_pieces, NAMED};
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

fn oracles() -> &'static Vec<(Pretokenizer, fancy_regex::Regex)> {
    static O: OnceLock<Vec<(Pretokenizer, fancy_regex::Regex)>> = OnceLock::new();
    O.get_or_init(|| {
        NAMED
            .iter()
            .enumerate()
            .map(|(k, (name, _))| {
                (
                    Pretokenizer::new(Some(name)).unwrap(),
                    named_regex(k).clone(),
                )
            })
            .collect()
    })
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let text = text.as_ref();
    for (k, (pt, re)) in oracles().iter().enumerate() {
        let pieces = pt
            .split(text)
            .unwrap_or_else(|e| panic!("{}: named pre-tokenizer failed: {e}", NAMED[k].0));
        let mut at = 0;
        for p in &pieces {
            assert!(!p.is_empty(), "{}: empty piece", NAMED[k].0);
            assert_eq!(
                &text[at..at + p.len()],
                *p,
                "{}: pieces are not contiguous",
                NAMED[k].0
            );
            at += p.len();
        }
        assert_eq!(
            at,
            text.len(),
            "{}: pieces do not cover the text",
            NAMED[k].0
        );
        // for_each_piece must agree with split
        let mut again = Vec::new();
        pt.for_each_piece(text, |p| again.push(p)).unwrap();
        assert_eq!(again, pieces);
        // the block path (cl100k on ASCII text, where the CPU has it) must
        // agree with the scalar scanner alone
        let sc = pt.scanner().expect("named pattern");
        let mut scalar = Vec::new();
        sc.for_each_span_scalar(text, |s, e| scalar.push(&text[s..e]));
        assert_eq!(
            pieces, scalar,
            "{}: block path differs from the scalar scanner",
            NAMED[k].0
        );
        // the same text three times over: the block edges fall elsewhere
        let long = text.repeat(3);
        let mut fast = Vec::new();
        sc.for_each_span(&long, |s, e| fast.push((s, e)));
        let mut slow = Vec::new();
        sc.for_each_span_scalar(&long, |s, e| slow.push((s, e)));
        assert_eq!(fast, slow, "{}: block path differs on the text repeated", NAMED[k].0);
        if let Some(expected) = regex_pieces(re, text) {
            assert_eq!(
                pieces, expected,
                "{}: pieces differ from tiktoken's regex",
                NAMED[k].0
            );
        }
    }
    // no pre-tokenization: the whole text is one piece
    let whole = Pretokenizer::new(None).unwrap().split(text).unwrap();
    assert_eq!(whole.concat(), text);
    assert!(whole.len() <= 1);
});
