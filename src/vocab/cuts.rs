//! Cutting a long piece where no token can straddle: exact, and it turns one
//! long merge into many short ones.
//!
//! Why it is exact: every part the merge ever builds is a token occurring in the
//! piece. If no token occurrence covers both byte `p - 1` and byte `p`, no part
//! ever crosses `p`, no candidate pair across `p` exists, and the merges on
//! either side never see each other: each side goes through its own merges in
//! the same order as it would alone (its lowest-ranked pair, leftmost on ties,
//! depends only on its own parts). So `encode(piece) = encode(piece[..p]) ++
//! encode(piece[p..])`.
//!
//! How a boundary is tested ([`Cuts::is_boundary`]): for every token of two or
//! more bytes and every cut inside it, the index keeps the cut's context, at
//! most [`WIDTH`] bytes to the left and to the right (fewer where the token
//! ends). A token straddling `p` puts its context around `p` in the text, so
//! when none of the (at most `WIDTH * WIDTH`) contexts around `p` is in the
//! index, `p` is a boundary. The test may call a boundary unsafe (the context
//! matches but the whole token does not), never the reverse.
//!
//! Where it matters: one long word of random Hangul. With o200k_base about two
//! in three syllable boundaries pass the test, so a 10 MB piece becomes short
//! pieces merged in cache instead of one 10 MB heap (measured in
//! benches/RESULTS.md). Repetitive pieces ('x' * N) have no boundary and keep
//! the queue.

use rustc_hash::FxHashSet;

use super::Vocab;

/// Bytes of context kept on each side of a cut. Two already finds as many
/// boundaries in random Hangul as three or four (o200k_base: 74% of byte
/// positions) with a third of the keys.
pub const WIDTH: usize = 2;

/// The contexts of all cuts inside all tokens of a vocabulary.
#[derive(Debug, Clone, Default)]
pub struct Cuts {
    /// Bit `(a << 8) | b` set when byte `a` ends the left side and `b` starts
    /// the right side of some cut: the one-probe filter in front of `keys`.
    pairs: Box<[u64]>,
    /// [`key`] of each cut context.
    keys: FxHashSet<u64>,
}

/// Packs a context: its left and right lengths and up to `2 * WIDTH` bytes.
#[inline]
fn key(left: &[u8], right: &[u8]) -> u64 {
    let mut k = ((left.len() as u64) << 4) | right.len() as u64;
    for &b in left.iter().chain(right) {
        k = (k << 8) | b as u64;
    }
    k
}

impl Cuts {
    /// Indexes every cut of every token of `vocab` (o200k_base: about 1.2 M
    /// cuts, 160 k distinct contexts).
    pub fn build(vocab: &Vocab) -> Self {
        let mut pairs = vec![0u64; 1 << 10].into_boxed_slice();
        let mut keys = FxHashSet::default();
        for t in vocab.tokens() {
            for k in 1..t.len() {
                let left = &t[k.saturating_sub(WIDTH)..k];
                let right = &t[k..(k + WIDTH).min(t.len())];
                let pair = (t[k - 1] as usize) << 8 | t[k] as usize;
                pairs[pair >> 6] |= 1 << (pair & 63);
                keys.insert(key(left, right));
            }
        }
        Cuts { pairs, keys }
    }

    /// Whether no token occurring inside `piece` covers both `piece[p - 1]`
    /// and `piece[p]` (see the module notes). `0 < p < piece.len()`.
    #[inline]
    pub fn is_boundary(&self, piece: &[u8], p: usize) -> bool {
        let pair = (piece[p - 1] as usize) << 8 | piece[p] as usize;
        if self.pairs[pair >> 6] & (1 << (pair & 63)) == 0 {
            return true;
        }
        let lmax = p.min(WIDTH);
        let rmax = (piece.len() - p).min(WIDTH);
        for l in 1..=lmax {
            for r in 1..=rmax {
                if self.keys.contains(&key(&piece[p - l..p], &piece[p..p + r])) {
                    return false;
                }
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vocab(extra: &[&[u8]]) -> Vocab {
        let mut toks: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        toks.extend(extra.iter().map(|t| t.to_vec()));
        Vocab::new(toks).unwrap()
    }

    /// The index against its definition: a boundary iff no token occurrence
    /// straddles it, on every position of strings over a small alphabet (the
    /// test may be conservative, so only "boundary" answers must be exact, and
    /// with these short tokens the contexts are whole tokens, so both are).
    #[test]
    fn boundary_matches_definition() {
        let toks: [&[u8]; 6] = [b"ab", b"bc", b"abc", b"ca", b"cab", b"bb"];
        let v = vocab(&toks);
        let cuts = Cuts::build(&v);
        let mut seed = 7u64;
        let mut rnd = |k: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % k) as usize
        };
        for _ in 0..500 {
            let n = 2 + rnd(12);
            let s: Vec<u8> = (0..n).map(|_| b"abcd"[rnd(4)]).collect();
            for p in 1..n {
                let straddled = toks.iter().any(|t| {
                    (0..n.saturating_sub(t.len() - 1))
                        .any(|a| &s[a..a + t.len()] == *t && a < p && p < a + t.len())
                });
                assert_eq!(cuts.is_boundary(&s, p), !straddled, "{s:?} at {p}");
            }
        }
    }

    /// Longer tokens are matched by their context only: a boundary may be
    /// refused when the context matches and the token does not, never granted
    /// when the token is there.
    #[test]
    fn long_tokens_are_never_missed() {
        let v = vocab(&[b"xy", b"xyz", b"wxyz", b"wxyzw"]);
        let cuts = Cuts::build(&v);
        // "wxyzw" straddles every inner position
        for p in 1..5 {
            assert!(!cuts.is_boundary(b"wxyzw", p));
        }
        // "qxyq": the contexts of "wxyz" around 'x'|'y' match, but "xy" is a token anyway
        assert!(!cuts.is_boundary(b"qxyq", 2));
        // 'q' occurs in no token: every position next to it is a boundary
        assert!(cuts.is_boundary(b"qxyq", 1));
        assert!(cuts.is_boundary(b"qxyq", 3));
        // "zw" is only inside "wxyzw": no boundary is lost in "qzw", and in
        // "yzw" the context (yz | w) matches, so the test refuses a position
        // no token actually straddles (conservative, still exact)
        assert!(cuts.is_boundary(b"qzw", 2));
        assert!(!cuts.is_boundary(b"yzw", 2));
    }
}
