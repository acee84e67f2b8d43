//! The pre-tokenizers' block path against their scalar loop, paired, on
//! corpus files (wall clock; each repetition alternates which runs first):
//!   cargo run --profile devfast --example pretok_speed -- cl100k FILE... [--reps 7]
//!
//! `Scanner::for_each_span` takes the block path on a CPU with AVX2 and
//! ASCII-heavy text; `Scanner::for_each_span_scalar` never does. Driven by
//! `benches/experiments/bench_pretok_block.sh`; `benches/bench_pretok.py` measures the
//! scanners from Python against the regex engines.

// a developer tool run by hand: a missing file or bad argument stops it with a message
#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::time::Instant;

use bytepair::pretok::{Named, Scanner};

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut reps = 7usize;
    if let Some(i) = args.iter().position(|a| a == "--reps") {
        reps = args[i + 1].parse().expect("--reps takes a number");
        args.drain(i..=i + 1);
    }
    let named = match args.first().map(String::as_str) {
        Some("gpt2") => Named::Gpt2,
        Some("cl100k") => Named::Cl100k,
        Some("o200k") => Named::O200k,
        _ => panic!("usage: pretok_speed gpt2|cl100k|o200k FILE... [--reps N]"),
    };
    let sc = Scanner::new(named);
    for path in &args[1..] {
        let text = std::fs::read_to_string(path).expect("a readable UTF-8 file");
        let mut best = [f64::MAX; 2];
        let mut ratios = Vec::new();
        for rep in 0..reps {
            let mut took = [0f64; 2];
            for j in 0..2 {
                let k = j ^ (rep & 1);
                let mut count = 0usize;
                let t0 = Instant::now();
                if k == 0 {
                    sc.for_each_span_scalar(&text, |_, _| count += 1);
                } else {
                    sc.for_each_span(&text, |_, _| count += 1);
                }
                took[k] = t0.elapsed().as_secs_f64();
                std::hint::black_box(count);
                best[k] = best[k].min(took[k]);
            }
            ratios.push(took[0] / took[1]);
        }
        ratios.sort_by(f64::total_cmp);
        let mb = text.len() as f64 / 1e6;
        let name = path.rsplit('/').next().unwrap_or(path);
        println!(
            "{name:20} scalar {:6.0} MB/s  block {:6.0} MB/s  paired speed-up median {:.2} [{:.2}-{:.2}]",
            mb / best[0],
            mb / best[1],
            ratios[ratios.len() / 2],
            ratios[0],
            ratios[ratios.len() - 1]
        );
    }
}
