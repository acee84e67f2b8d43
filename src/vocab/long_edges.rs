//! The first and the last 8 bytes of every token longer than [`MID_MAX`]
//! bytes, for a cheap test before the long lengths are looked up at a
//! position. A search that tries every token length ending (or starting) at
//! each position, such as the budget search's tiling table, skips the long
//! ones wherever no long token has those 8 bytes at its edge.

use rustc_hash::FxHashSet;

use super::{Vocab, MID_MAX};

/// The edge sets of a vocabulary's long tokens (built by [`Vocab::long_edges`]).
#[derive(Debug, Clone, Default)]
pub struct LongEdges {
    heads: FxHashSet<u64>,
    tails: FxHashSet<u64>,
}

fn word(bytes: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&bytes[..8]);
    u64::from_le_bytes(w)
}

impl LongEdges {
    pub(super) fn build(v: &Vocab) -> Self {
        let mut e = LongEdges::default();
        for t in v.tokens().filter(|t| t.len() > MID_MAX) {
            e.heads.insert(word(t));
            e.tails.insert(word(&t[t.len() - 8..]));
        }
        e
    }

    /// Whether a token longer than [`MID_MAX`] bytes may start at `at`
    /// (false when fewer than 8 bytes follow).
    pub fn may_start(&self, text: &[u8], at: usize) -> bool {
        text.get(at..at + 8)
            .is_some_and(|w| self.heads.contains(&word(w)))
    }

    /// Whether a token longer than [`MID_MAX`] bytes may end at `end`
    /// (false when fewer than 8 bytes precede it).
    pub fn may_end(&self, text: &[u8], end: usize) -> bool {
        end.checked_sub(8)
            .and_then(|s| text.get(s..end))
            .is_some_and(|w| self.tails.contains(&word(w)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_long_token_passes_both_tests_at_its_edges() {
        let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        tokens.push(b"abcdefghijklmnopqrstuvwxyz".to_vec());
        tokens.push(b"0123456789ABCDEFGH".to_vec());
        tokens.push(b"short".to_vec());
        let v = Vocab::new(tokens).unwrap();
        let e = v.long_edges();
        let text = b"..abcdefghijklmnopqrstuvwxyz..0123456789ABCDEFGH";
        assert!(e.may_start(text, 2) && e.may_end(text, 28));
        assert!(e.may_start(text, 30) && e.may_end(text, 48));
        // no other position passes, and the text's edges are not an error
        let starts: Vec<usize> = (0..=text.len() + 1)
            .filter(|&i| e.may_start(text, i))
            .collect();
        let ends: Vec<usize> = (0..=text.len() + 1)
            .filter(|&i| e.may_end(text, i))
            .collect();
        assert_eq!((starts, ends), (vec![2, 30], vec![28, 48]));
        // a token of 16 bytes or fewer is not in the sets
        assert!(!e.may_start(b"short...", 0));
    }
}
