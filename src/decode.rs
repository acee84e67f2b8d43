//! Decoding: ids -> bytes, a table lookup per id.

use crate::encode::CoreBpe;
use crate::error::Result;
use crate::Rank;

// ---------------------------------------------------------------- Decoding

impl CoreBpe {
    /// Concatenates the bytes of `ids`. Errors on the first unknown id.
    /// Linear in the output length.
    pub fn decode_bytes(&self, ids: &[Rank]) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(ids.len() * 4);
        for &id in ids {
            out.extend_from_slice(self.token_bytes(id)?);
        }
        Ok(out)
    }
}
