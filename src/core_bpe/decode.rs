//! Decoding: ids -> bytes, a table lookup per id.

use super::CoreBpe;
use crate::error::Result;
use crate::Rank;

// ---------------------------------------------------------------- Decoding

impl CoreBpe {
    /// Concatenates the bytes of `ids`. Errors on the first unknown id.
    /// Linear in the output length.
    pub fn decode_bytes(&self, ids: &[Rank]) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(ids.len() * 4 + 16);
        for &id in ids {
            if !self.vocab().append_token(id, &mut out) {
                out.extend_from_slice(self.token_bytes(id)?);
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use crate::core_bpe::CoreBpe;
    use crate::error::Error;

    #[test]
    fn unknown_id_is_an_error() {
        let tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        let bpe = CoreBpe::new(tokens, vec![("<s>".into(), 300)], None).unwrap();
        assert_eq!(bpe.decode_bytes(&[104, 105, 300]).unwrap(), b"hi<s>");
        assert!(matches!(
            bpe.decode_bytes(&[104, 299]),
            Err(Error::UnknownId { id: 299 })
        ));
    }
}
