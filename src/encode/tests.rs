//! Unit tests of the merge paths: each against a naive oracle and the others,
//! on random vocabularies and on pieces built to hit each path's checks.

use super::queue::{RankQueue, HEAP_MODE};
use super::runs::{sweep_runs, MAX_RUNS};
use super::shape::is_repetitive;
use super::*;
use crate::vocab::{Vocab, NONE_RANK as NONE};
use crate::Rank;

/// Random BPE-consistent vocabularies (each token the concatenation of two
/// earlier ones) and random pieces: the queue path equals the heap path and
/// the oracle.
#[test]
fn queue_matches_oracle_on_random_vocabularies() {
    let mut rng = XorShift(0x2545_f491_4f6c_dd1d);
    let mut rnd = |k: usize| rng.below(k);
    for _ in 0..200 {
        let mut toks: Vec<Vec<u8>> = vec![b"a".to_vec(), b"b".to_vec(), b"c".to_vec()];
        while toks.len() < 40 {
            let t = [toks[rnd(toks.len())].clone(), toks[rnd(toks.len())].clone()].concat();
            if t.len() <= 6 && !toks.contains(&t) {
                toks.push(t);
            }
        }
        let extra: Vec<&[u8]> = toks[3..].iter().map(|t| t.as_slice()).collect();
        let v = vocab(&extra);
        for len in [150usize, 400] {
            let piece: Vec<u8> = (0..len).map(|_| b"abc"[rnd(3)]).collect();
            let want = oracle(&piece, &v);
            let mut q = Vec::new();
            encode_piece_queue(&piece, &v, &mut q);
            assert_eq!(q, want);
            let mut h = Vec::new();
            encode_piece_heap(&piece, &v, &mut h);
            assert_eq!(h, want);
            let mut c = Vec::new();
            encode_piece_split(&piece, &v, &mut c);
            assert_eq!(c, want);
        }
    }
}

/// Pieces of a few long runs of one byte over random vocabularies: the
/// run path equals the oracle whenever it answers, writes nothing when it
/// gives up, answers most pieces of BPE-consistent vocabularies, and gives
/// up on some of the shuffled ones (a longer run of a byte ranked before a
/// shorter one it contains).
#[test]
fn runs_path_matches_oracle_or_gives_up() {
    let mut rng = XorShift(0x51_7cc1_b727_220a);
    let (mut answered, mut tried, mut gave_up_shuffled) = (0, 0, 0);
    for round in 0..300 {
        let shuffled = round % 2 == 1;
        let v = rng.vocab_of_merges(b"ab", 24, 12, shuffled);
        for _ in 0..4 {
            let mut piece = Vec::new();
            for _ in 0..1 + rng.below(4) {
                let (b, n) = (b"ab"[rng.below(2)], 1 + rng.below(220));
                piece.extend(std::iter::repeat_n(b, n));
            }
            let mut got = vec![7];
            tried += 1;
            if encode_piece_runs(&piece, &v, &mut got) {
                answered += 1;
                assert_eq!(
                    got[1..],
                    oracle(&piece, &v)[..],
                    "piece of {} bytes",
                    piece.len()
                );
            } else {
                assert_eq!(got, [7], "a run path that gave up wrote ids");
                gave_up_shuffled += shuffled as usize;
            }
        }
    }
    assert!(answered * 2 > tried, "answered {answered} of {tried}");
    assert!(gave_up_shuffled > 0);
}

/// A merge whose new part would pair below the round's rank with the part
/// after it stops the sweep, even when that part is merged later in the
/// same sweep: `ab a a ba` with `aba` the round's rank and `abaa` ranked
/// lower (the greedy rule merges `aba a` next, the sweep would merge
/// `a ba`).
#[test]
fn sweep_stops_where_the_greedy_rule_turns() {
    let v = vocab(&[b"abaa", b"ab", b"ba", b"aba"]);
    let rank = |t: &[u8]| v.rank(t).unwrap();
    let runs = [(rank(b"ab"), 1), (rank(b"a"), 2), (rank(b"ba"), 1)];
    let pair = |a: Rank, b: Rank| v.pair_rank(a, b).unwrap_or(NONE);
    let mut next = Vec::new();
    assert!(!sweep_runs(&runs, rank(b"aba"), pair, &mut next));
    // without `abaa` the sweep goes through: `aba aba`
    let v = vocab(&[b"ab", b"ba", b"aba"]);
    let rank = |t: &[u8]| v.rank(t).unwrap();
    let runs = [(rank(b"ab"), 1), (rank(b"a"), 2), (rank(b"ba"), 1)];
    let pair = |a: Rank, b: Rank| v.pair_rank(a, b).unwrap_or(NONE);
    assert!(sweep_runs(&runs, rank(b"aba"), pair, &mut next));
    assert_eq!(next, vec![(rank(b"aba"), 2)]);
}

/// Periodic pieces ('ab' * N, 'abc' * N, with a head or tail) over random
/// and shuffled vocabularies: the flat path equals the oracle whenever it
/// answers and writes nothing when it declines; it answers some and
/// declines some.
#[test]
fn flat_path_matches_oracle_or_gives_up() {
    let mut rng = XorShift(0x2c1b_3c6d_5a7e_9f11);
    let (mut answered, mut declined) = (0, 0);
    for round in 0..300 {
        let v = rng.vocab_of_merges(b"abc", 30, 10, round % 2 == 1);
        for _ in 0..3 {
            let (u, h, n, t) = (
                1 + rng.below(4),
                rng.below(3),
                150 + rng.below(400),
                rng.below(3),
            );
            let unit = rng.piece(u, b"abc");
            let mut piece = rng.piece(h, b"abc");
            for _ in 0..n / u {
                piece.extend_from_slice(&unit);
            }
            piece.extend(rng.piece(t, b"abc"));
            let mut got = vec![7];
            if encode_piece_flat_runs(&piece, &v, &mut got) {
                answered += 1;
                assert_eq!(got[1..], oracle(&piece, &v)[..], "piece {piece:?}");
            } else {
                declined += 1;
                assert_eq!(got, [7], "a flat path that gave up wrote ids");
            }
        }
    }
    assert!(
        answered > 100 && declined > 0,
        "answered {answered}, declined {declined}"
    );
}

/// More runs than [`MAX_RUNS`]: the run path declines at once.
#[test]
fn runs_path_declines_many_runs() {
    let v = vocab(&[b"ab"]);
    let piece: Vec<u8> = b"ab".repeat(MAX_RUNS);
    let mut out = Vec::new();
    assert!(!encode_piece_runs(&piece, &v, &mut out));
    assert!(out.is_empty());
    assert!(encode_piece_runs(&b"a".repeat(1000), &v, &mut out));
    assert_eq!(out, vec![97; 1000]);
}

/// The tests' pseudo-random numbers (xorshift64).
struct XorShift(u64);

impl XorShift {
    fn below(&mut self, k: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % k as u64) as usize
    }

    /// A vocabulary of the 256 bytes plus tokens made by merging two
    /// earlier ones (starting from `alphabet`, at most `max_len` bytes,
    /// until `size` tokens over the alphabet), in merge order or, when
    /// `shuffled`, in a random rank order.
    fn vocab_of_merges(
        &mut self,
        alphabet: &[u8],
        size: usize,
        max_len: usize,
        shuffled: bool,
    ) -> Vocab {
        let mut toks: Vec<Vec<u8>> = alphabet.iter().map(|&b| vec![b]).collect();
        while toks.len() < size {
            let (i, j) = (self.below(toks.len()), self.below(toks.len()));
            let t = [toks[i].clone(), toks[j].clone()].concat();
            if t.len() <= max_len && !toks.contains(&t) {
                toks.push(t);
            }
        }
        let mut extra: Vec<&[u8]> = toks[alphabet.len()..]
            .iter()
            .map(|t| t.as_slice())
            .collect();
        if shuffled {
            for k in (1..extra.len()).rev() {
                extra.swap(k, self.below(k + 1));
            }
        }
        vocab(&extra)
    }

    /// `len` bytes drawn from `alphabet`.
    fn piece(&mut self, len: usize, alphabet: &[u8]) -> Vec<u8> {
        (0..len)
            .map(|_| alphabet[self.below(alphabet.len())])
            .collect()
    }
}

fn vocab(extra: &[&[u8]]) -> Vocab {
    let mut v: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
    v.extend(extra.iter().map(|e| e.to_vec()));
    Vocab::new(v).unwrap()
}

/// The obvious quadratic oracle, written independently of both paths.
fn oracle(piece: &[u8], v: &Vocab) -> Vec<Rank> {
    let mut parts: Vec<Vec<u8>> = piece.iter().map(|&b| vec![b]).collect();
    loop {
        let mut best: Option<(Rank, usize)> = None;
        for i in 0..parts.len().saturating_sub(1) {
            let joined = [parts[i].as_slice(), parts[i + 1].as_slice()].concat();
            if let Some(r) = v.rank(&joined) {
                if best.is_none_or(|(b, _)| r < b) {
                    best = Some((r, i));
                }
            }
        }
        let Some((_, i)) = best else { break };
        let right = parts.remove(i + 1);
        parts[i].extend(right);
    }
    parts.iter().map(|p| v.rank(p).unwrap()).collect()
}

fn all_paths(piece: &[u8], v: &Vocab) -> [Vec<Rank>; 6] {
    let mut a = Vec::new();
    let mut b = Vec::new();
    let mut c = Vec::new();
    let mut d = Vec::new();
    let mut e = Vec::new();
    encode_piece(piece, v, &mut a);
    encode_piece_scan(piece, v, &mut b);
    encode_piece_heap(piece, v, &mut c);
    encode_piece_queue(piece, v, &mut d);
    encode_piece_split(piece, v, &mut e);
    [a, b, c, d, e, by_bytes(piece, v)]
}

/// [`encode_short_by_bytes`] with the ranks of byte ranges from the vocabulary.
fn by_bytes(piece: &[u8], v: &Vocab) -> Vec<Rank> {
    let mut out = Vec::new();
    let rank_of = |s: usize, e: usize| v.rank(&piece[s..e]).unwrap_or(NONE);
    encode_short_by_bytes(piece, v, rank_of, &mut out);
    out
}

/// Short pieces (0-16 bytes, and 17 for the fallback) over random
/// BPE-consistent vocabularies: pair ranks read as the ranks of byte
/// ranges give the scan's result and the oracle's.
#[test]
fn short_merge_by_byte_ranges_matches_the_oracle() {
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
    for _ in 0..300 {
        let mut toks: Vec<Vec<u8>> = vec![b"a".to_vec(), b"b".to_vec(), b"c".to_vec()];
        while toks.len() < 30 {
            let (i, j) = (rng.below(toks.len()), rng.below(toks.len()));
            let t = [toks[i].clone(), toks[j].clone()].concat();
            if t.len() <= 8 && !toks.contains(&t) {
                toks.push(t);
            }
        }
        let extra: Vec<&[u8]> = toks[3..].iter().map(|t| t.as_slice()).collect();
        let v = vocab(&extra);
        for len in 0..=17 {
            let piece = rng.piece(len, b"abc");
            let mut scan = Vec::new();
            encode_piece_scan(&piece, &v, &mut scan);
            assert_eq!(
                by_bytes(&piece, &v),
                scan,
                "{:?}",
                String::from_utf8_lossy(&piece)
            );
            assert_eq!(scan, oracle(&piece, &v));
        }
    }
}

/// A rank fed out of position order switches to a heap and still pops
/// leftmost first. (On the vocabularies and corpora tried, the merge loop
/// never feeds a rank out of order: equal tokens form left to right. The
/// fallback keeps the queue exact even if some vocabulary does.)
#[test]
fn queue_pops_lowest_rank_then_leftmost_even_out_of_order() {
    let mut q = RankQueue::new(10, 0);
    for p in [3, 7, 9] {
        q.push(5, p);
    }
    q.push(2, 40);
    assert_eq!(q.pop(), Some((2, 40)));
    assert_eq!(q.pop(), Some((5, 3)));
    q.push(5, 6); // behind 9: out of order
    assert_eq!(q.list(5).1, HEAP_MODE);
    q.push(5, 1);
    q.push(8, 0);
    let mut got = Vec::new();
    while let Some(x) = q.pop() {
        got.push(x);
    }
    assert_eq!(got, vec![(5, 1), (5, 6), (5, 7), (5, 9), (8, 0)]);
    // a drained rank can be used again
    q.push(5, 2);
    assert_eq!(q.pop(), Some((5, 2)));
    assert_eq!(q.pop(), None);
}

#[test]
fn paths_agree_with_oracle_on_small_vocab() {
    let v = vocab(&[b"ab", b"bc", b"abc", b"aa", b"aaa", b"aaaa", b"cab", b"ba"]);
    let mut rng = XorShift(0x2545_f491_4f6c_dd1d);
    for len in 0..200 {
        for _ in 0..5 {
            let piece = rng.piece(len, b"abc");
            let want = oracle(&piece, &v);
            for got in all_paths(&piece, &v) {
                assert_eq!(got, want, "piece {:?}", String::from_utf8_lossy(&piece));
            }
        }
    }
}

/// Long random pieces over a vocabulary with many overlapping tokens, so
/// lower-ranked pairs keep appearing mid-merge.
#[test]
fn queue_matches_heap_on_long_pieces() {
    let v = vocab(&[
        b"ab", b"ba", b"aa", b"bb", b"aba", b"bab", b"abab", b"aab", b"bba", b"abba", b"baab",
        b"aaaa", b"ababab", b"bbbb", b"abaab", b"ca", b"ac", b"cab", b"abc",
    ]);
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
    for len in [129usize, 200, 1000, 5000] {
        for _ in 0..20 {
            let piece = rng.piece(len, b"aabbc");
            let mut h = Vec::new();
            let mut q = Vec::new();
            let mut s = Vec::new();
            let mut c = Vec::new();
            encode_piece_heap(&piece, &v, &mut h);
            encode_piece_queue(&piece, &v, &mut q);
            encode_piece_scan(&piece, &v, &mut s);
            encode_piece_split(&piece, &v, &mut c);
            assert_eq!(q, h);
            assert_eq!(s, h);
            assert_eq!(c, h);
        }
    }
}

#[test]
fn repetitive_pieces_are_told_apart() {
    assert!(is_repetitive(&[b'x'; 5000]));
    assert!(is_repetitive(" ".repeat(5000).as_bytes()));
    assert!(is_repetitive("가나".repeat(2000).as_bytes()));
    let all: Vec<u8> = (0..=255).collect();
    let noise = XorShift(7).piece(5000, &all);
    assert!(!is_repetitive(&noise));
}

#[test]
fn leftmost_on_ties() {
    let v = vocab(&[b"aa"]);
    for got in all_paths(b"aaa", &v) {
        assert_eq!(got, vec![256, b'a' as Rank]);
    }
}

#[test]
fn long_run_is_fast_and_exact() {
    let v = vocab(&[b"xx", b"xxxx", b"xxxxxxxx"]);
    let piece = vec![b'x'; 100_003];
    // 'xx' everywhere, then 'xxxx', then 'xxxxxxxx'; 100_003 = 8 * 12_500 + 3
    let mut want = vec![258; 12_500];
    want.extend([256, b'x' as Rank]);
    let mut got = Vec::new();
    encode_piece_heap(&piece, &v, &mut got);
    assert_eq!(got, want);
    got.clear();
    encode_piece_queue(&piece, &v, &mut got);
    assert_eq!(got, want);
}

/// The staged path at every split rank `t` over random vocabularies of
/// words and spaces (in merge order, and shuffled so that tokens bridging
/// spaces come early and late): the oracle's ids for any `t`, on short
/// pieces and on pieces long enough for stage 2 to take the heap.
#[test]
fn staged_matches_oracle_at_every_split_rank() {
    use crate::vocab::stage1::{prefix, FirstStage};
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
    for round in 0..40 {
        let v = rng.vocab_of_merges(b"ab ", 40, 7, round % 2 == 1);
        for t in 256..v.len() as Rank {
            let Some(first) = prefix(&v, t).map(FirstStage::new) else {
                continue;
            };
            for len in [1usize, 2, 9, 40, 300] {
                let piece = rng.piece(len, b"ab  ");
                let mut got = Vec::new();
                encode_piece_staged(&piece, &v, &first, &mut got);
                assert_eq!(got, oracle(&piece, &v), "t = {t}, piece {piece:?}");
            }
        }
    }
}
