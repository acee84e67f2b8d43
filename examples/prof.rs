//! Development profiler for the encoder (not part of the API).
//!
//! Corpus mode: times pre-tokenization alone, `count` and `encode_ordinary`
//! (cold: the piece cache is emptied before each run) on corpus files:
//!   cargo run --release --example prof -- cl100k_base ~/.cache/bytepair-data/corpora/en_austen.txt [reps]
//!
//! Worst-case mode: ns per byte of `count` on 'x' * N, N spaces, random
//! base64 and one word of random Hangul syllables, N = 10 KB .. 10 MB, each
//! size timed over the same 10 MB of input cut into N-byte texts:
//!   cargo run --release --example prof -- cl100k_base worst
//!
//! Pieces mode: where a cold encode's merge time goes, by piece length (the
//! first occurrence of each distinct non-token piece, merged without the cache):
//!   cargo run --release --example prof -- cl100k_base pieces ~/.cache/bytepair-data/corpora/en_pydocs.txt

// a developer tool run by hand: a missing file or bad argument stops it with a message
#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::time::Instant;

use bytepair::core_bpe::CoreBpe;
use bytepair::encode::cache;
use bytepair::vocab::Vocab;

fn best_of(reps: usize, f: &dyn Fn() -> usize) -> (f64, usize) {
    let mut best = f64::MAX;
    let mut n = 0;
    for _ in 0..reps.max(1) {
        cache::clear_all();
        let t = Instant::now();
        n = f();
        best = best.min(t.elapsed().as_secs_f64());
    }
    (best, n)
}

/// The hostile inputs of benches/bench_encode.py's worst-case group (same
/// kinds; the random ones come from a different generator).
fn hostile(kind: &str, n: usize) -> String {
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut rnd = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    match kind {
        "x" => "x".repeat(n),
        "spaces" => " ".repeat(n),
        "base64" => {
            let abc = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
            (0..n).map(|_| abc[(rnd() % 64) as usize] as char).collect()
        }
        _ => (0..n / 3)
            .map(|_| char::from_u32(0xAC00 + (rnd() % 11172) as u32).unwrap_or('가'))
            .collect(),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let name = &args[1];
    let home = std::env::var("HOME").unwrap_or_default();
    let ranks = std::fs::read(format!("{home}/.cache/bytepair-data/ranks/{name}.tiktoken"))
        .expect("rank file (run ../shared/data/get-data.sh)");
    let vocab = Vocab::from_tiktoken(&ranks).expect("valid rank file");
    let core = CoreBpe::from_vocab(vocab, vec![], Some(name)).expect("named pattern");
    let policy = core.policy_default();
    if args.get(2).map(String::as_str) == Some("paths") {
        paths_mode(&core, args.get(3).map_or("korean", String::as_str));
        return;
    }
    if args.get(2).map(String::as_str) == Some("pieces") {
        for path in args.get(3).map_or("", String::as_str).split(',') {
            pieces_mode(&core, path);
        }
        return;
    }
    if args.get(2).map(String::as_str) == Some("worst") {
        println!("{name}: ns per byte of count(), best of runs; 10 KB / 100 KB / 1 MB / 10 MB");
        for kind in ["x", "spaces", "base64", "korean"] {
            let mut row = Vec::new();
            // each size over ~10 MB of input: distinct texts for the small
            // sizes, so no size is timed on data already hot in the caches
            let big = hostile(kind, 10_000_000);
            for n in [10_000, 100_000, 1_000_000, 10_000_000] {
                let mut texts = Vec::new();
                let mut at = 0;
                while at < big.len() {
                    let mut end = (at + n).min(big.len());
                    while !big.is_char_boundary(end) {
                        end -= 1;
                    }
                    texts.push(&big[at..end]);
                    at = end;
                }
                let (t, _) = best_of(2, &|| {
                    texts
                        .iter()
                        .map(|t| core.count(t, &policy).unwrap_or(0))
                        .sum()
                });
                row.push(t / big.len() as f64 * 1e9);
            }
            let cells: Vec<String> = row.iter().map(|v| format!("{v:8.1}")).collect();
            println!(
                "{kind:8}{}   10MB/10KB = {:.2}",
                cells.join(""),
                row[3] / row[0]
            );
        }
        return;
    }
    let reps: usize = args.get(3).map_or(10, |s| s.parse().unwrap_or(10));
    for path in args[2].split(',') {
        let raw = std::fs::read(path).expect("corpus file");
        let raw = &raw[..raw.len().min(1_000_000)];
        let text = String::from_utf8_lossy(raw).into_owned();
        let mb = text.len() as f64 / 1e6;
        let (p, np) = best_of(reps, &|| {
            let mut n = 0;
            let _ = core.pretokenizer().for_each_span(&text, |_, _| n += 1);
            n
        });
        let (c, nt) = best_of(reps, &|| core.count(&text, &policy).unwrap_or(0));
        let (e, _) = best_of(reps, &|| core.encode_ordinary(&text).map_or(0, |v| v.len()));
        // the same text as ~5 KB documents (cut at line ends), one call each
        let mut docs = Vec::new();
        let mut at = 0;
        while at < text.len() {
            let mut end = (at + 5000).min(text.len());
            while end < text.len() && text.as_bytes()[end - 1] != b'\n' {
                end += 1;
            }
            docs.push(&text[at..end]);
            at = end;
        }
        let (d, _) = best_of(reps, &|| {
            docs.iter()
                .map(|t| core.encode_ordinary(t).map_or(0, |v| v.len()))
                .sum()
        });
        let short = path.rsplit('/').next().unwrap_or(path);
        println!(
            "{short:20} pretok {:7.1}  count {:6.1}  encode {:6.1}  docs {:6.1} MB/s  pieces {np} tokens {nt}",
            mb / p,
            mb / c,
            mb / e,
            mb / d
        );
    }
}

fn pieces_mode(core: &CoreBpe, path: &str) {
    use bytepair::encode::encode_piece;
    let raw = std::fs::read(path).expect("corpus file");
    let raw = &raw[..raw.len().min(1_000_000)];
    let text = String::from_utf8_lossy(raw).into_owned();
    let mut spans = Vec::new();
    let _ = core
        .pretokenizer()
        .for_each_span(&text, |s, e| spans.push((s, e)));
    let bounds = [8usize, 16, 32, 64, 128, 256, usize::MAX];
    // per length bucket: pieces, non-token pieces, distinct non-token, merge ns
    let mut rows = vec![(0usize, 0usize, 0usize, 0f64); bounds.len()];
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for &(s, e) in &spans {
        let piece = &text.as_bytes()[s..e];
        let b = bounds.iter().position(|&m| piece.len() <= m).unwrap_or(0);
        rows[b].0 += 1;
        if core.vocab().rank(piece).is_some() {
            continue;
        }
        rows[b].1 += 1;
        if seen.insert(piece) {
            rows[b].2 += 1;
            out.clear();
            let t = Instant::now();
            encode_piece(piece, core.vocab(), &mut out);
            rows[b].3 += t.elapsed().as_secs_f64() * 1e9;
        }
    }
    let short = path.rsplit('/').next().unwrap_or(path);
    println!("{short}: bytes<=  pieces  non-token  distinct  merge ms (first occurrences)");
    for (b, r) in bounds.iter().zip(&rows) {
        println!(
            "{:>18} {:>8} {:>9} {:>9} {:>9.2}",
            if *b == usize::MAX {
                "more".to_string()
            } else {
                b.to_string()
            },
            r.0,
            r.1,
            r.2,
            r.3 / 1e6
        );
    }
}

#[allow(dead_code)]
fn paths_mode(core: &CoreBpe, kind: &str) {
    use bytepair::encode::{encode_piece_heap, encode_piece_queue};
    let big = hostile(kind, 2_000_000);
    for n in [10_000usize, 30_000, 100_000] {
        let chunks: Vec<&[u8]> = big.as_bytes().chunks(n).collect();
        for (label, f) in [
            (
                "heap",
                encode_piece_heap as fn(&[u8], &Vocab, &mut Vec<u32>),
            ),
            ("queue", encode_piece_queue),
        ] {
            let t = Instant::now();
            let mut out = Vec::new();
            for c in &chunks {
                out.clear();
                f(c, core.vocab(), &mut out);
            }
            println!(
                "{kind} {n} {label}: {:.1} ns/byte",
                t.elapsed().as_secs_f64() / big.len() as f64 * 1e9
            );
        }
    }
}
