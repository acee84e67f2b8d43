//! The vocabulary of a byte-level BPE tokenizer: token bytes indexed by rank,
//! and the reverse map. In these tokenizers the rank of a token is its id and its
//! merge priority (lower merges first), as in tiktoken.

use rustc_hash::FxHashMap;

use crate::error::{Error, Result};
use crate::Rank;

/// Token bytes by rank and rank by token bytes.
#[derive(Debug, Clone)]
pub struct Vocab {
    tokens: Vec<Vec<u8>>,
    ranks: FxHashMap<Vec<u8>, Rank>,
}

impl Vocab {
    /// Builds a vocabulary from tokens listed in rank order (index = rank).
    ///
    /// Errors when a token is empty or repeated, or when one of the 256 single
    /// bytes is missing (every byte string must be encodable).
    pub fn new(tokens: Vec<Vec<u8>>) -> Result<Self> {
        if tokens.len() > Rank::MAX as usize {
            return Err(Error::InvalidVocab("too many tokens".into()));
        }
        let mut ranks = FxHashMap::with_capacity_and_hasher(tokens.len(), Default::default());
        for (i, t) in tokens.iter().enumerate() {
            if t.is_empty() {
                return Err(Error::InvalidVocab(format!("token {i} is empty")));
            }
            if let Some(prev) = ranks.insert(t.clone(), i as Rank) {
                return Err(Error::InvalidVocab(format!(
                    "tokens {prev} and {i} are the same bytes {t:?}"
                )));
            }
        }
        for b in 0..=255u8 {
            if !ranks.contains_key(&[b][..]) {
                return Err(Error::InvalidVocab(format!(
                    "the single byte 0x{b:02x} is not a token"
                )));
            }
        }
        Ok(Vocab { tokens, ranks })
    }

    /// Number of mergeable tokens (ranks are `0..len()`).
    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    /// Always false: a valid vocabulary holds at least the 256 bytes.
    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    /// The rank of a byte string, if it is a token.
    #[inline]
    pub fn rank(&self, bytes: &[u8]) -> Option<Rank> {
        self.ranks.get(bytes).copied()
    }

    /// The bytes of a token.
    #[inline]
    pub fn token(&self, rank: Rank) -> Option<&[u8]> {
        self.tokens.get(rank as usize).map(|v| v.as_slice())
    }

    /// All tokens in rank order.
    pub fn tokens(&self) -> &[Vec<u8>] {
        &self.tokens
    }

    /// The reverse map, bytes to rank.
    pub fn ranks(&self) -> &FxHashMap<Vec<u8>, Rank> {
        &self.ranks
    }
}
