//! The first stage of a superword tokenizer's vocabulary: its ranks below the
//! first token that bridges words, as a vocabulary of their own, for the
//! staged merge path ([`crate::encode::encode_piece_staged`]).
//!
//! A superword tokenizer is trained in two stages (`bytepair.superword`):
//! word-sized tokens up to a transition, then tokens that also bridge words.
//! Its files do not record the transition, and none is needed: the staged
//! merge is exact for any split rank (see the staged path's notes), only its
//! speed depends on it. The rank used is the first whose token has a byte
//! other than whitespace followed by a space (`` of the``, `", "`): below it,
//! no token reaches across the space in front of a word, so the cut test
//! finds a boundary there.

use std::sync::OnceLock;

use super::Vocab;
use crate::Rank;

/// Whether the staged path is on (a superword tokenizer's vocabulary, see
/// [`Vocab::set_staged`]) and its first stage, built on first use.
#[derive(Debug, Clone, Default)]
pub struct Stage1 {
    on: bool,
    first: OnceLock<Option<Box<FirstStage>>>,
}

/// The first-stage vocabulary, and which of its tokens the merge rebuilds
/// from their own bytes.
#[derive(Debug, Clone)]
pub struct FirstStage {
    /// The tokens of the ranks below the transition, at the same ranks.
    pub vocab: Vocab,
    /// Bit `r` set when merging the bytes of token `r` by [`Self::vocab`]
    /// gives token `r` itself, built on first use by the caller's merge
    /// ([`Self::reach`]).
    reach: OnceLock<Box<[u64]>>,
}

impl FirstStage {
    /// The first stage of the vocabulary `vocab` (see [`prefix`]).
    pub fn new(vocab: Vocab) -> Self {
        FirstStage {
            vocab,
            reach: OnceLock::new(),
        }
    }

    /// Whether merging the bytes of token `rank` gives `rank` itself; `merge`
    /// says so for one token when the table is built (first call).
    #[inline]
    pub fn reach(&self, rank: Rank, merge: impl Fn(&Vocab, Rank, &[u8]) -> bool) -> bool {
        let bits = self.reach.get_or_init(|| {
            let mut bits = vec![0u64; self.vocab.len().div_ceil(64)].into_boxed_slice();
            for (r, t) in self.vocab.tokens().enumerate() {
                if !t.is_empty() && merge(&self.vocab, r as Rank, t) {
                    bits[r / 64] |= 1 << (r % 64);
                }
            }
            bits
        });
        let r = rank as usize;
        bits.get(r / 64).is_some_and(|w| w & (1 << (r % 64)) != 0)
    }
}

/// The first rank whose token has a byte other than ASCII whitespace followed
/// by a space, if any.
pub fn first_bridge(vocab: &Vocab) -> Option<Rank> {
    vocab
        .tokens()
        .position(|t| {
            t.windows(2)
                .any(|w| w[1] == b' ' && !w[0].is_ascii_whitespace())
        })
        .map(|r| r as Rank)
}

/// The vocabulary of the ranks below `t` (the same ranks), or `None` when it
/// would not hold every single byte or `t` leaves out no token.
pub fn prefix(vocab: &Vocab, t: Rank) -> Option<Vocab> {
    let t = t as usize;
    if t >= vocab.len() || (0..=255u8).any(|b| vocab.byte_rank(b) as usize >= t) {
        return None;
    }
    Vocab::new(vocab.tokens().take(t).map(<[u8]>::to_vec).collect()).ok()
}

impl Vocab {
    /// Turns the staged merge path on: the vocabulary of a tokenizer whose
    /// pieces are spans of words (the superword pattern). The first stage is
    /// built here, not on first use: building a vocabulary uses the thread
    /// pool, and a first use inside a parallel encode would wait on the pool
    /// from a job while the pool's other thread waits on that build.
    pub fn set_staged(&mut self) {
        self.stage1.on = true;
        let _ = self.stage1();
    }

    /// The first stage of the staged path ([`prefix`] at [`first_bridge`]),
    /// built by [`Self::set_staged`]; `None` when the path is off or the
    /// vocabulary has no token bridging words.
    #[inline]
    pub fn stage1(&self) -> Option<&FirstStage> {
        if !self.stage1.on {
            return None;
        }
        self.stage1
            .first
            .get_or_init(|| {
                let vocab = first_bridge(self).and_then(|t| prefix(self, t))?;
                Some(Box::new(FirstStage::new(vocab)))
            })
            .as_deref()
    }
}
