//! Tiling floors: lower bounds on the token count of a segment's prefixes or
//! suffixes, for the budget search of [`super::budget`].

use crate::vocab::{Vocab, MID_MAX};

/// Lower bounds on the token count of the segment's prefixes (`left`:
/// `out[k - a]` bounds `count(a..k)`) or suffixes (`out[k - a]` bounds
/// `count(k..b)`): the fewest vocabulary tokens that tile those bytes, by
/// dynamic programming over token ends. Any encoding is such a tiling, so
/// a cut whose bound is over the budget need not be encoded.
///
/// The table stops early, at the cut `stop` it returns with the bounds:
/// once every cut in a window of `L` consecutive ones (`L` the longest
/// token) has a bound over `budget`, so does every cut past the window.
/// A tiling of a longer prefix has a token boundary in that window (no
/// token is longer than `L`), and the tokens before it tile that shorter
/// prefix. So `left` fills `out[..=stop - a]` and no prefix ending at or
/// after `stop` fits; otherwise `out[stop - a..]` and no suffix starting
/// at or before `stop` fits. (A run with no restart point, such as CJK
/// text, would otherwise fill the whole search window's table.)
pub(super) fn tiling_floor(
    vocab: &Vocab,
    bytes: &[u8],
    a: usize,
    b: usize,
    left: bool,
    budget: usize,
) -> (usize, Vec<u32>) {
    let maxlen = vocab.longest().max(1);
    let (short, edges) = (maxlen.min(MID_MAX), vocab.long_edges());
    let n = b - a;
    let mut m = vec![u32::MAX; n + 1];
    let over = |w: &[u32]| w.iter().all(|&x| x as usize > budget);
    if left {
        m[0] = 0;
        for p in 1..=n {
            let mut best = u32::MAX;
            let long = p > MID_MAX && edges.may_end(bytes, a + p);
            let top = if long { maxlen } else { short };
            for l in 1..=top.min(p) {
                let prev = m[p - l];
                if prev < best && vocab.rank_at(bytes, a + p - l, a + p).is_some() {
                    best = prev + 1;
                }
            }
            m[p] = best;
            if p.is_multiple_of(maxlen) && over(&m[p + 1 - maxlen..=p]) {
                return (a + p, m);
            }
        }
        (b, m)
    } else {
        m[n] = 0;
        for p in (0..n).rev() {
            let mut best = u32::MAX;
            let long = n - p > MID_MAX && edges.may_start(bytes, a + p);
            let top = if long { maxlen } else { short };
            for l in 1..=top.min(n - p) {
                let next = m[p + l];
                if next < best && vocab.rank_at(bytes, a + p, a + p + l).is_some() {
                    best = next + 1;
                }
            }
            m[p] = best;
            if (n - p).is_multiple_of(maxlen) && over(&m[p..p + maxlen]) {
                return (a + p, m);
            }
        }
        (a, m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// xorshift64*: seeded, so a failure is reproducible.
    struct Rng(u64);
    impl Rng {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n as u64) as usize
        }
    }

    /// The floor by its definition: every token length at every cut.
    fn naive(vocab: &Vocab, t: &[u8], a: usize, b: usize, left: bool) -> Vec<u32> {
        let n = b - a;
        let mut m = vec![u32::MAX; n + 1];
        let (first, tile) = if left { (0, 1..=n) } else { (n, 1..=n) };
        m[first] = 0;
        for i in tile {
            let p = if left { i } else { n - i };
            for l in 1..=vocab.longest().min(i) {
                let (s, e, other) = if left {
                    (a + p - l, a + p, p - l)
                } else {
                    (a + p, a + p + l, p + l)
                };
                if m[other] != u32::MAX && vocab.rank_at(t, s, e).is_some() {
                    m[p] = m[p].min(m[other] + 1);
                }
            }
        }
        m
    }

    /// The stopped tables against the whole one: the same bounds where they
    /// are filled, and every cut past the stop over the budget. The tokens
    /// run to 24 bytes, so the long-token edge test is taken too.
    #[test]
    fn the_stop_loses_no_cut_that_fits() {
        let mut rng = Rng(0x5eed_f100);
        let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        while tokens.len() < 2000 {
            let t: Vec<u8> = (0..2 + rng.below(23))
                .map(|_| b"abc"[rng.below(3)])
                .collect();
            if !tokens.contains(&t) {
                tokens.push(t);
            }
        }
        let vocab = Vocab::new(tokens.clone()).unwrap();
        assert!(vocab.longest() > MID_MAX);
        let mut stopped = 0;
        for _ in 0..300 {
            // tokens end to end, so long ones occur, with a stray byte between some
            let (mut text, len) = (Vec::new(), 64 + rng.below(300));
            while text.len() < len {
                text.extend_from_slice(&tokens[256 + rng.below(tokens.len() - 256)]);
                if rng.below(3) == 0 {
                    text.push(b"abc"[rng.below(3)]);
                }
            }
            let (a, b) = (rng.below(8), text.len() - rng.below(8));
            for left in [true, false] {
                let (_, whole) = tiling_floor(&vocab, &text, a, b, left, usize::MAX);
                assert_eq!(whole, naive(&vocab, &text, a, b, left));
                // a budget at the floor of some cut, where a wrong stop shows
                let budget =
                    (whole[rng.below(b - a + 1)] as usize + rng.below(3)).saturating_sub(1);
                let (stop, m) = tiling_floor(&vocab, &text, a, b, left, budget);
                let filled = if left { 0..=stop - a } else { stop - a..=b - a };
                for k in filled {
                    assert_eq!(m[k], whole[k], "left={left} k={k}");
                }
                let past = if left { stop - a..=b - a } else { 0..=stop - a };
                if (left && stop < b) || (!left && stop > a) {
                    stopped += 1;
                    assert!(past.into_iter().all(|k| whole[k] as usize > budget));
                }
            }
        }
        assert!(stopped > 100, "{stopped} stops");
    }
}
