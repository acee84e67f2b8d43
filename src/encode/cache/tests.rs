//! Unit tests of the piece cache: ids equal to plain merging, hit or miss,
//! across growth and wipes, and a cache following its encoder.

use super::*;
use crate::encode::encode_piece;

fn vocab() -> Vocab {
    let mut v: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
    for t in [
        &b"ab"[..],
        b"abc",
        b"bc",
        b"cd",
        b"abcd",
        b"0123456789abcdef",
        b"xy",
        b"efab",
    ] {
        v.push(t.to_vec());
    }
    Vocab::new(v).unwrap()
}

/// Pieces of `cut` bytes (ASCII test texts).
struct Every(usize);

impl Spans for Every {
    fn for_each_span<F: SpanSink>(&self, text: &str, mut f: F) -> Result<()> {
        for s in (0..text.len()).step_by(self.0) {
            f.span(s, (s + self.0).min(text.len()));
        }
        Ok(())
    }
}

fn run(cache: &mut PieceCache, seed: &Arc<Seed>, v: &Vocab, text: &str, cut: usize) -> Vec<Rank> {
    let mut out = Vec::new();
    cache
        .encode_text(seed, v, &Every(cut), text, &mut out, |_| {})
        .unwrap();
    out
}

fn want(v: &Vocab, text: &str, cut: usize) -> Vec<Rank> {
    let mut out = Vec::new();
    Every(cut)
        .for_each_span(text, |s, e| {
            encode_piece(&text.as_bytes()[s..e], v, &mut out)
        })
        .unwrap();
    out
}

fn random_text(n: usize, alphabet: &[u8], mut x: u64) -> String {
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            alphabet[(x % alphabet.len() as u64) as usize] as char
        })
        .collect()
}

#[test]
fn same_ids_as_merging_hit_or_miss_and_after_wipes() {
    let v = vocab();
    let seed = Arc::new(Seed::new(&v));
    let mut c = PieceCache::new(&seed);
    let text = random_text(20_000, b"abcdxy0123456789ef\0", 0x2545_f491_4f6c_dd1d);
    for cut in [1, 2, 3, 5, 8, 16, 17, 40, 300] {
        assert_eq!(
            run(&mut c, &seed, &v, &text, cut),
            want(&v, &text, cut),
            "cut {cut}"
        );
        assert_eq!(
            run(&mut c, &seed, &v, &text, cut),
            want(&v, &text, cut),
            "cut {cut}, warm"
        );
    }
    c.wipe(&seed);
    assert_eq!(c.stats().entries, c.stats().seed_entries);
    assert_eq!(run(&mut c, &seed, &v, &text, 7), want(&v, &text, 7));
}

/// No piece twice in `c`'s table: a probe that starts at a stale home
/// misses and stores its piece again.
fn assert_each_piece_once(c: &PieceCache) {
    let mut seen = std::collections::HashSet::new();
    for slot in c.table.buckets.iter().flat_map(|b| b.0.iter()) {
        if slot.meta() != 0 {
            assert!(
                seen.insert((slot.k0, slot.k1, slot.meta() & 0xFF)),
                "a piece twice in the table"
            );
        }
    }
}

#[test]
fn the_table_doubles_within_the_budget_then_wipes_and_ids_stay() {
    let v = vocab();
    let seed = Arc::new(Seed::new(&v));
    let mut c = PieceCache::new(&seed);
    // the budget is process-wide (a cache reads it on every call): set
    // for this test, restored at its end; other tests' ids do not depend
    // on it
    let old = budget();
    let b = 4 * seed.bytes() + (1 << 20);
    set_budget(b);
    let text = random_text(
        200_000,
        b"abcdefghijklmnopqrstuvwxyz",
        0x9e37_79b9_7f4a_7c15,
    );
    let mut most = 0;
    for cut in [6, 12, 30, 100] {
        let got = run(&mut c, &seed, &v, &text, cut);
        let s = c.stats();
        most = most.max(s.table_bytes);
        assert_eq!(got, want(&v, &text, cut));
        assert!(s.bytes <= s.budget, "{s:?}");
        assert_each_piece_once(&c);
    }
    // new pieces each followed by one seen before: when a miss doubles
    // the table mid-batch, the batch's later pieces must be probed at
    // their new homes, or the seen piece misses and is stored twice
    let mut c = PieceCache::new(&seed);
    let fresh = random_text(
        120_000,
        b"abcdefghijklmnopqrstuvwxyz",
        0x2545_f491_4f6c_dd1d,
    );
    let text: String = fresh
        .as_bytes()
        .chunks(6)
        .flat_map(|w| [std::str::from_utf8(w).unwrap_or(""), "qwerty"])
        .collect();
    assert_eq!(run(&mut c, &seed, &v, &text, 6), want(&v, &text, 6));
    assert!(c.stats().table_bytes > seed.bytes(), "the table never grew");
    assert_each_piece_once(&c);
    let wipes = c.stats().wipes;
    // the load: at most half while the doubled table fits the budget, up
    // to 3/4 once it does not (then a wipe)
    let mut c = PieceCache::new(&seed);
    let text = random_text(400_000, b"abcdefghijklmnopqrstuvwxyz", 0x51_7cc1_b727_220a);
    let (mut could_double, mut could_not) = (0f64, 0f64);
    for chunk in text.as_bytes().chunks(4_000) {
        run(&mut c, &seed, &v, std::str::from_utf8(chunk).unwrap(), 4);
        let s = c.stats();
        let load = s.entries as f64 / (s.table_bytes / std::mem::size_of::<table::Slot>()) as f64;
        let slack = 1.0 / (s.table_bytes / std::mem::size_of::<table::Slot>()) as f64;
        if s.bytes + 2 * s.table_bytes < s.budget {
            could_double = could_double.max(load - slack);
        } else {
            could_not = could_not.max(load);
        }
    }
    set_budget(old);
    assert!(could_double > 0.3 && could_double <= 0.5, "{could_double}");
    assert!(could_not > 0.5 && could_not <= 0.75, "{could_not}");
    // grew by doubling, within the budget, and was wiped once it could not
    assert!(most >= 2 * seed.bytes(), "{most}");
    assert!(
        most <= b && (most / seed.bytes()).is_power_of_two(),
        "{most}"
    );
    assert!(wipes > 0);
}

#[test]
fn a_cache_follows_the_encoder_it_is_used_with() {
    let v1 = vocab();
    let v2 = Vocab::new((0..=255u8).map(|b| vec![b]).collect()).unwrap();
    let (s1, s2) = (Arc::new(Seed::new(&v1)), Arc::new(Seed::new(&v2)));
    let mut c = PieceCache::new(&s1);
    assert_eq!(run(&mut c, &s1, &v1, "abcdab", 3), want(&v1, "abcdab", 3));
    assert_eq!(run(&mut c, &s2, &v2, "abcdab", 3), want(&v2, "abcdab", 3));
}

/// Stretches and given ids through one batch equal each stretch encoded by
/// itself with the ids between: random cuts of random lengths (stretches of
/// one piece to hundreds, long pieces, ids at every place of a batch,
/// several ids in a row), after a wipe too.
#[test]
fn parts_equal_stretches_encoded_alone() {
    let v = vocab();
    let seed = Arc::new(Seed::new(&v));
    let mut c = PieceCache::new(&seed);
    let text = random_text(30_000, b"abcdxy0123456789ef", 0x9e37_79b9_7f4a_7c15);
    let mut x: u64 = 0x2545_f491;
    let mut next = |m: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % m) as usize
    };
    for round in 0..40 {
        let cut = [1, 2, 3, 5, 17, 40][round % 6];
        let (mut parts, mut at) = (Vec::new(), 0);
        while at < text.len() {
            let n = (1 + next([4, 40, 700][round % 3])).min(text.len() - at);
            parts.push(if next(3) == 0 {
                Part::Id(at, at + n, 1000 + next(50) as Rank)
            } else {
                Part::Text(at, at + n)
            });
            at += n;
        }
        let mut want_ids = Vec::new();
        for p in &parts {
            match *p {
                Part::Text(a, b) => want_ids.extend(want(&v, &text[a..b], cut)),
                Part::Id(_, _, id) => want_ids.push(id),
            }
        }
        let mut got = Vec::new();
        c.encode_parts(&seed, &v, &Every(cut), &text, &mut got, |put| {
            parts.iter().try_for_each(|&p| put(p))
        })
        .unwrap();
        assert_eq!(got, want_ids, "round {round}");
        if round == 20 {
            c.wipe(&seed);
        }
    }
}

/// A piece of more than 16 bytes that is a token is that token, the first
/// time (asked of the vocabulary) and after (from the long-piece table),
/// also among pieces that are not tokens.
#[test]
fn a_long_token_is_its_id_cold_and_warm() {
    let mut toks: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
    let long = b"abcdxy0123456789efab".to_vec();
    toks.push(long.clone());
    let v = Vocab::new(toks).unwrap();
    let id = v.rank(&long).unwrap();
    let seed = Arc::new(Seed::new(&v));
    let mut c = PieceCache::new(&seed);
    let other = "xyxyxyxyxyxyxyxyxyxy";
    let text = format!(
        "{}{other}{}",
        std::str::from_utf8(&long).unwrap(),
        std::str::from_utf8(&long).unwrap()
    );
    let byte_ids: Vec<Rank> = other.bytes().map(Rank::from).collect();
    let mut expect = vec![id];
    expect.extend(&byte_ids);
    expect.push(id);
    for pass in 0..2 {
        assert_eq!(run(&mut c, &seed, &v, &text, 20), expect, "pass {pass}");
        assert_eq!(c.stats().long_entries, 2, "pass {pass}");
    }
}
