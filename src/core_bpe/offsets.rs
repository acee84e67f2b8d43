//! Token offsets: `encode` with the span of text each token covers, in bytes
//! or in characters, as tiktoken's `decode_with_offsets` reports them.
//!
//! Cost: the encode, then one pass over the ids reading one 16-bit entry per
//! token from a table built once per encoder ([`pack_info`]).

use super::{CoreBpe, SpecialPolicy};
use crate::error::Result;
use crate::Rank;

/// Which span a token's offsets give.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Byte offsets into the UTF-8 text.
    Byte,
    /// Character (code point) offsets; a token that starts or ends inside a
    /// character covers that whole character.
    Char,
}

impl CoreBpe {
    /// `encode` with the span of each token: `spans[i] = (start, end)` in bytes
    /// or characters. Character spans: a token covers every character it has a
    /// byte of (a Korean syllable split over three tokens gives all three that
    /// syllable's span), so `start` is the index of the character holding the
    /// token's first byte, as tiktoken's `decode_with_offsets` reports it.
    ///
    /// Cost: the encode and one pass over the ids reading one 16-bit entry per
    /// token (byte length, character starts, whether the first byte continues
    /// a character), for bytes and characters alike.
    pub fn encode_with_spans(
        &self,
        text: &str,
        policy: &SpecialPolicy,
        unit: Unit,
    ) -> Result<(Vec<Rank>, Vec<[u32; 2]>)> {
        let ids = self.encode(text, policy)?;
        let mut spans = Vec::with_capacity(ids.len());
        let len = text.len();
        let mut at = 0usize;
        // every id's bytes, a special token in a gap of the ranks included
        // (p50k_base's 50256)
        let info = self.token_info.get_or_init(|| {
            (0..self.vocab.len() as Rank)
                .map(|id| pack_info(self.token_bytes(id).unwrap_or_default()))
                .collect()
        });
        // (byte length, character starts, first byte continues a character)
        let token = |id: Rank| -> (usize, usize, bool) {
            match info.get(id as usize) {
                Some(&i) if i & INFO_LONG == 0 => (
                    usize::from(i & 0x7F),
                    usize::from((i >> 7) & 0x7F),
                    i & INFO_CONT != 0,
                ),
                _ => {
                    let t = self.token_bytes(id).unwrap_or_default();
                    let starts = t.iter().filter(|&&c| !is_cont(c)).count();
                    (t.len(), starts, t.first().is_some_and(|&c| is_cont(c)))
                }
            }
        };
        if unit == Unit::Byte || text.is_ascii() {
            for &id in &ids {
                let end = (at + token(id).0).min(len);
                spans.push([at as u32, end as u32]);
                at = end;
            }
        } else {
            // a token starts in the character holding its first byte and ends
            // after the one holding its last byte: the running count of
            // character starts, advanced by the token's own (a vocabulary
            // property, so no byte of the text is read again)
            let mut chars_at = 0usize;
            for &id in &ids {
                let (_, starts, first_cont) = token(id);
                let start = chars_at - usize::from(first_cont && chars_at > 0);
                let chars_end = chars_at + starts;
                spans.push([start as u32, chars_end as u32]);
                chars_at = chars_end;
            }
        }
        Ok((ids, spans))
    }
}

/// `token_info` bit: the token's first byte continues a character.
const INFO_CONT: u16 = 1 << 14;
/// `token_info` bit: longer than 127 bytes, look the token up instead.
const INFO_LONG: u16 = 1 << 15;

/// A mergeable token packed for [`CoreBpe::encode_with_spans`] (the encoder's `token_info` table):
/// bits 0-6 its byte length, 7-13 its character starts (bytes that are not
/// `10xxxxxx`), [`INFO_CONT`] and [`INFO_LONG`].
fn pack_info(t: &[u8]) -> u16 {
    if t.len() > 0x7F {
        return INFO_LONG;
    }
    let starts = t.iter().filter(|&&c| !is_cont(c)).count() as u16;
    let cont = if t.first().is_some_and(|&c| is_cont(c)) {
        INFO_CONT
    } else {
        0
    };
    t.len() as u16 | (starts << 7) | cont
}

/// Whether `b` continues a UTF-8 character (`10xxxxxx`).
#[inline(always)]
fn is_cont(b: u8) -> bool {
    (b as i8) < -0x40
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every packed slice of a mixed-script text against its bytes.
    #[test]
    fn pack_info_counts_bytes_and_character_starts() {
        let text = "a한b😀 é".repeat(30);
        let b = text.as_bytes();
        for p in 0..=b.len() {
            for q in p..=b.len().min(p + 12) {
                let i = pack_info(&b[p..q]);
                let starts = b[p..q].iter().filter(|&&c| c & 0xC0 != 0x80).count();
                assert_eq!(usize::from((i >> 7) & 0x7F), starts);
                assert_eq!(usize::from(i & 0x7F), q - p);
                assert_eq!(i & INFO_CONT != 0, q > p && b[p] & 0xC0 == 0x80);
                assert_eq!(i & INFO_LONG, 0);
            }
        }
        assert_eq!(pack_info(&[b'x'; 128]), INFO_LONG);
    }
}
