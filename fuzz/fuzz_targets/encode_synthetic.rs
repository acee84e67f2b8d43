//! Encoder on synthetic vocabularies built from fuzzed merge lists, on
//! repetitive text (long pieces). Covers vocabularies whose rank order is not
//! the merge order (tiktoken's rule still defines the result) and every
//! pre-tokenizer including none (the whole text is one long piece).
#![no_main]

use arbitrary::Arbitrary;
use bytepair::core_bpe::CoreBpe;
use bytepair::encode::{
    encode_piece, encode_piece_flat_runs, encode_piece_heap, encode_piece_queue, encode_piece_runs,
    encode_piece_scan, encode_piece_split,
};
use fuzz_oracle::{naive_encode, naive_encode_piece, named_regex, Ranks, NAMED};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
struct Input {
    merges: Vec<(u16, u16)>,
    reverse_ranks: bool,
    pattern: u8,
    unit: Vec<u8>,
    repeat: u8,
    tail: Vec<u8>,
}

const MAX_TEXT: usize = 3000;

fuzz_target!(|inp: Input| {
    let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
    let mut seen: std::collections::HashSet<Vec<u8>> = tokens.iter().cloned().collect();
    for &(a, b) in inp.merges.iter().take(400) {
        let n = tokens.len();
        let t = [
            tokens[a as usize % n].as_slice(),
            tokens[b as usize % n].as_slice(),
        ]
        .concat();
        if t.len() <= 48 && seen.insert(t.clone()) {
            tokens.push(t);
        }
    }
    if inp.reverse_ranks {
        tokens[256..].reverse();
    }
    let pattern = match inp.pattern % 4 {
        0 => None,
        k => Some(k as usize - 1),
    };
    let unit = String::from_utf8_lossy(&inp.unit);
    let mut text = String::new();
    if !unit.is_empty() {
        let times = (inp.repeat as usize).min(MAX_TEXT / unit.len());
        text = unit.repeat(times);
    }
    text.push_str(&String::from_utf8_lossy(&inp.tail));
    if text.len() > 2 * MAX_TEXT {
        return;
    }

    let core = CoreBpe::new(tokens.clone(), vec![], pattern.map(|k| NAMED[k].0))
        .expect("a vocabulary with all bytes builds");
    let ranks: Ranks = tokens
        .iter()
        .enumerate()
        .map(|(i, t)| (t.clone(), i as u32))
        .collect();
    let ids = core.encode_ordinary(&text).expect("encode_ordinary");
    assert_eq!(
        core.decode_bytes(&ids).unwrap(),
        text.as_bytes(),
        "round trip"
    );
    if let Some(expected) = naive_encode(&text, pattern.map(named_regex), &ranks) {
        assert_eq!(ids, expected, "ids differ from the naive oracle");
    }
    // every internal merge path, forced, on the whole text as one piece (not
    // when the text is itself a token: only `encode_piece` takes tiktoken's
    // whole-piece shortcut, and with ranks out of merge order the merges may
    // not rebuild that token)
    if !text.is_empty() && !ranks.contains_key(text.as_bytes()) {
        let mut want = Vec::new();
        naive_encode_piece(text.as_bytes(), &ranks, &mut want);
        type Path = fn(&[u8], &bytepair::vocab::Vocab, &mut Vec<u32>);
        let paths: [(&str, Path); 5] = [
            ("encode_piece", encode_piece),
            ("encode_piece_scan", encode_piece_scan),
            ("encode_piece_heap", encode_piece_heap),
            ("encode_piece_queue", encode_piece_queue),
            ("encode_piece_split", encode_piece_split),
        ];
        for (name, path) in paths {
            let mut got = Vec::new();
            path(text.as_bytes(), core.vocab(), &mut got);
            assert_eq!(got, want, "{name} differs from the naive oracle");
        }
        // the run-length and flat paths may decline (then they write nothing)
        type Maybe = fn(&[u8], &bytepair::vocab::Vocab, &mut Vec<u32>) -> bool;
        let maybe: [(&str, Maybe); 2] = [
            ("encode_piece_runs", encode_piece_runs),
            ("encode_piece_flat_runs", encode_piece_flat_runs),
        ];
        for (name, path) in maybe {
            let mut got = Vec::new();
            if path(text.as_bytes(), core.vocab(), &mut got) {
                assert_eq!(got, want, "{name} differs from the naive oracle");
            } else {
                assert!(got.is_empty(), "{name} declined but wrote ids");
            }
        }
    }
});
