//! The merge list behind a rank-ordered vocabulary.

use super::Vocab;
use crate::error::{Error, Result};
use crate::Rank;

/// The token bytes a merge list makes, the inverse of [`derive_merges`]: the
/// 256 single bytes, then merge `k` as token `256 + k`, the bytes of its two
/// ids joined.
///
/// Errors naming the merge when one of its ids is not below its own id.
pub fn spell_merges(merges: &[(Rank, Rank)]) -> Result<Vec<Vec<u8>>> {
    let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
    for (k, &(a, b)) in merges.iter().enumerate() {
        let (Some(x), Some(y)) = (tokens.get(a as usize), tokens.get(b as usize)) else {
            return Err(Error::vocab(format!(
                "merge {k} is ({a}, {b}): a merge joins two ids below {}",
                tokens.len()
            )));
        };
        let joined = [x.as_slice(), y.as_slice()].concat();
        tokens.push(joined);
    }
    Ok(tokens)
}

/// Recovers the merge list of a rank-ordered vocabulary (as tiktoken files hold
/// no merges): for each multi-byte token, encode its bytes using only the tokens of
/// lower rank; a consistent vocabulary yields exactly two parts, the merged pair.
///
/// Errors naming the token when it does not split into two lower-ranked tokens.
/// Cost: one bounded-rank encoding per token (quadratic in the token length,
/// which is short).
pub fn derive_merges(vocab: &Vocab) -> Result<Vec<(Rank, Rank)>> {
    let mut out = Vec::new();
    for (rank, tok) in vocab.tokens().enumerate() {
        if tok.len() < 2 {
            continue;
        }
        let rank = rank as Rank;
        let mut parts: Vec<usize> = (0..=tok.len()).collect();
        loop {
            let mut best: Option<(Rank, usize)> = None;
            for i in 0..parts.len().saturating_sub(2) {
                if let Some(r) = vocab.rank(&tok[parts[i]..parts[i + 2]]) {
                    if r < rank && best.is_none_or(|(b, _)| r < b) {
                        best = Some((r, i));
                    }
                }
            }
            match best {
                Some((_, i)) => {
                    parts.remove(i + 1);
                }
                None => break,
            }
        }
        if parts.len() != 3 {
            return Err(Error::vocab_at(
                rank,
                format!("token {rank} ({tok:?}) is not the merge of two lower-ranked tokens"),
            ));
        }
        let left = vocab.rank(&tok[..parts[1]]);
        let right = vocab.rank(&tok[parts[1]..]);
        match (left, right) {
            (Some(a), Some(b)) => out.push((a, b)),
            _ => {
                return Err(Error::vocab_at(
                    rank,
                    format!("token {rank} has no valid split"),
                ))
            }
        }
    }
    Ok(out)
}
