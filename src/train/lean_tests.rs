//! Unit tests of the lean loop ([`super::lean`]) against the node loop of
//! [`super::from_tokens`]: the same merges on random spans, with 2- and
//! 4-byte ids, on threads, from spilled runs; the hand-over between them.

use super::lean::{extend_merges_lean, lean_bytes, SpanSource, SHARED_SPANS};
use super::options::MergeOptions;
use super::Control;
use crate::error::Error;
use crate::pretok::{Pretokenizer, SUPERWORD_PATTERN};
use crate::train::compact::TableRef;
use crate::train::encoded::encode_table;
use crate::train::from_tokens::extend_merges;
use crate::train::{ChunkCounter, ChunkTable, Counted, ExtendBounds};
use crate::vocab::Vocab;
use crate::{Rank, TestDir, TestRng};

/// Merges as id pairs.
type Merges = Vec<(Rank, Rank)>;

fn opts(k: usize) -> MergeOptions {
    MergeOptions {
        num_merges: k,
        min_frequency: 1,
        max_token_length: None,
    }
}

/// The 256 bytes and a few merges, so spans start as several ids.
fn base() -> Vocab {
    let mut toks: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
    for t in [&b"th"[..], b" t", b"he", b" the", b"an", b"in"] {
        toks.push(t.to_vec());
    }
    Vocab::new(toks).unwrap()
}

/// Random spans of few distinct words (many ties, repeated and
/// overlapping pairs such as `aaaa`), with random counts.
fn random_table(rng: &mut TestRng, spans: usize) -> ChunkTable {
    let words = [
        "the", "a", "aa", "aaa", "an", "in", "then", "he", "tha", "at", ",", ".",
    ];
    let mut t = ChunkTable::new();
    for _ in 0..spans {
        let n = 1 + rng.below(7);
        let mut s = String::new();
        for j in 0..n {
            if j > 0 || rng.below(2) == 0 {
                s.push(' ');
            }
            s.push_str(words[rng.below(words.len())]);
        }
        t.add(s.as_bytes(), 1 + rng.below(3) as u64).unwrap();
    }
    t
}

/// The node loop's merges (no memory limit) and the lean loop's.
fn both(
    t: &ChunkTable,
    first_id: Rank,
    k: usize,
    max_words: Option<usize>,
    threads: usize,
) -> (Merges, Merges) {
    let (v, ctl) = (base(), Control::default());
    let bounds = ExtendBounds {
        max_words,
        memory_limit: None,
    };
    let nodes = extend_merges(
        &v,
        TableRef::Borrowed(t),
        first_id,
        &opts(k),
        bounds,
        Some(1),
        &ctl,
    );
    let src = SpanSource::Table(t);
    let lean = extend_merges_lean(
        &v,
        src,
        first_id,
        &opts(k),
        max_words,
        None,
        Some(threads),
        &ctl,
    );
    (nodes.unwrap(), lean.unwrap())
}

#[test]
fn lean_merges_equal_the_node_loop_on_random_spans() {
    let mut rng = TestRng(0x9e37_79b9_7f4a_7c15);
    for round in 0..12 {
        let n = 20 + rng.below(400);
        let t = random_table(&mut rng, n);
        let words = [None, Some(2), Some(4)][round % 3];
        let (nodes, lean) = both(&t, 262, 60, words, 1);
        assert!(nodes.len() > 10, "round {round}: too few merges to compare");
        assert_eq!(nodes, lean, "round {round}, max_words {words:?}");
    }
}

#[test]
fn lean_merges_equal_with_four_byte_ids_and_two_threads() {
    let mut rng = TestRng(77);
    // enough spans that a merge is shared among threads; ids past 65,536, then 2-byte ids
    let mut t = random_table(&mut rng, 4 * SHARED_SPANS);
    // a span past 2^32 occurrences: its count kept aside, the pair counts 64-bit
    t.add(b" then a tha", 5_000_000_000).unwrap();
    let (nodes, lean) = both(&t, 70_000, 80, Some(4), 2);
    assert_eq!(nodes.len(), 80);
    assert_eq!(nodes, lean);
    let (nodes, lean) = both(&t, 262, 80, None, 2);
    assert_eq!(nodes, lean);
}

/// `text`'s spans counted with a tally limit so small that they are
/// spilled to runs, and counted in memory.
fn spilled_and_table(text: &str, dir: &std::path::Path) -> (Counted, ChunkTable) {
    let ctl = Control::default();
    let count = |limit: Option<usize>| {
        let p = Pretokenizer::new(Some(SUPERWORD_PATTERN)).unwrap();
        let mut c = ChunkCounter::new(p, &[], None, 256).unwrap();
        if let Some(l) = limit {
            c.set_memory_limit(l, Some(dir)).unwrap();
        }
        c.feed_documents(&[text], &ctl).unwrap();
        c
    };
    let runs = count(Some(1));
    assert!(runs.spilled_runs() > 2);
    (
        runs.finish_or_runs().unwrap(),
        count(None).finish().unwrap(),
    )
}

#[test]
fn lean_merges_from_spilled_runs_equal_those_from_the_table() {
    let mut rng = TestRng(5);
    let words = ["the", "cat", "sat", "on", "mat", "a", "and", "then"];
    let text: String = (0..3000)
        .map(|i| {
            let w = |r: &mut TestRng| words[r.below(words.len())];
            let end = if i % 5 == 4 { ".\n" } else { "," };
            format!(" {} {} {}{end}", w(&mut rng), w(&mut rng), w(&mut rng))
        })
        .collect();
    let dir = TestDir::new("lean-runs");
    let (counted, table) = spilled_and_table(&text, &dir.0);
    let Counted::Runs(spill) = counted else {
        panic!("counting did not spill");
    };
    let (v, ctl) = (base(), Control::default());
    let bounds = ExtendBounds {
        max_words: Some(3),
        memory_limit: None,
    };
    let want = extend_merges(
        &v,
        TableRef::Borrowed(&table),
        262,
        &opts(50),
        bounds,
        Some(1),
        &ctl,
    );
    let got = extend_merges_lean(
        &v,
        SpanSource::Runs(&spill),
        262,
        &opts(50),
        Some(3),
        None,
        Some(2),
        &ctl,
    );
    assert_eq!(want.unwrap(), got.unwrap());
    assert!(
        !spill.dir().join("lean-spans").exists(),
        "the spans' file is removed"
    );
}

#[test]
fn the_node_loop_hands_over_to_the_lean_loop_past_its_limit_and_both_refuse_below() {
    let mut rng = TestRng(11);
    let t = random_table(&mut rng, 300);
    let (v, ctl) = (base(), Control::default());
    let run = |limit: Option<u64>| {
        let bounds = ExtendBounds {
            max_words: Some(4),
            memory_limit: limit,
        };
        extend_merges(
            &v,
            TableRef::Borrowed(&t),
            262,
            &opts(40),
            bounds,
            Some(1),
            &ctl,
        )
    };
    let free = run(None).unwrap();
    let need = match run(Some(1)) {
        Err(Error::MemoryLimit { need, .. }) => need,
        other => panic!("expected a memory-limit error, got {other:?}"),
    };
    let enc = encode_table(&v, &t, Some(1), &ctl).unwrap();
    let node = crate::train::options::state_bytes(enc.ids() as u64, enc.chunk_count() as u64);
    assert!(
        need < node + t.priced(),
        "the lean loop needs less ({need} vs {node})"
    );
    assert!(need >= lean_bytes(enc.ids() as u64, enc.chunk_count() as u64, 2, 302) + t.priced());
    // at the lean loop's need: the lean loop, the same merges; below it, refused
    assert_eq!(run(Some(need)).unwrap(), free);
    assert!(matches!(
        run(Some(need - 1)),
        Err(Error::MemoryLimit { .. })
    ));
}
