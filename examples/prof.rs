//! Development profiler for the encoder (not part of the API): times
//! pre-tokenization alone, `count` and `encode_ordinary` on a corpus file.
//!   cargo run --profile devfast --example prof -- cl100k_base ~/.cache/bytepair-data/corpora/en_austen.txt
use std::time::Instant;

use bytepair::encode::{cache, CoreBpe};
use bytepair::vocab::Vocab;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let name = &args[1];
    let home = std::env::var("HOME").unwrap();
    let ranks =
        std::fs::read(format!("{home}/.cache/bytepair-data/ranks/{name}.tiktoken")).unwrap();
    let core =
        CoreBpe::from_vocab(Vocab::from_tiktoken(&ranks).unwrap(), vec![], Some(name)).unwrap();
    let policy = core.policy_default();
    let reps: usize = args.get(3).map_or(10, |s| s.parse().unwrap());
    for path in args[2].split(',') {
        let raw = std::fs::read(path).unwrap();
        let raw = &raw[..raw.len().min(1_000_000)];
        let text = String::from_utf8_lossy(raw).into_owned();
        let mb = text.len() as f64 / 1e6;
        let time = |f: &dyn Fn() -> usize| {
            let mut best = f64::MAX;
            let mut n = 0;
            for _ in 0..reps {
                cache::clear_all();
                let t = Instant::now();
                n = f();
                best = best.min(t.elapsed().as_secs_f64());
            }
            (mb / best, n)
        };
        let (p, np) = time(&|| {
            let mut n = 0;
            core.pretokenizer()
                .for_each_piece(&text, |_| n += 1)
                .unwrap();
            n
        });
        let (c, nt) = time(&|| core.count(&text, &policy).unwrap());
        let (e, _) = time(&|| core.encode_ordinary(&text).unwrap().len());
        let short = path.rsplit('/').next().unwrap();
        println!("{short:20} pretok {p:7.1}  count {c:6.1}  encode {e:6.1} MB/s  pieces {np} tokens {nt}");
    }
}
