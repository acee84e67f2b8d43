//! The body of bytepair's `.bpc` chunk-count file: per chunk, a LEB128
//! length, the bytes and a LEB128 count, in first-seen order. (The header and
//! the file itself are written by `bytepair.counts`.)

use super::ChunkTable;
use crate::error::{Error, Result};

impl ChunkTable {
    /// Serialises the entries: per chunk, a LEB128 length, the bytes and a LEB128
    /// count (the body of bytepair's `.bpc` chunk-count file).
    pub fn to_body(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.bytes.len() + 4 * self.entries.len());
        for (chunk, n) in self.iter() {
            put_varint(&mut out, chunk.len() as u64);
            out.extend_from_slice(chunk);
            put_varint(&mut out, n);
        }
        out
    }

    /// Parses a body written by [`Self::to_body`] holding exactly `entries`
    /// chunks. A chunk listed twice has its counts added. Errors on truncated
    /// or trailing data.
    pub fn from_body(body: &[u8], entries: u64) -> Result<Self> {
        let bad = || Error::CorruptCounts {
            what: "is truncated or damaged",
        };
        let mut t = ChunkTable::new();
        let mut pos = 0usize;
        for _ in 0..entries {
            let n = get_varint(body, &mut pos).ok_or_else(bad)?;
            let end = usize::try_from(n)
                .ok()
                .and_then(|n| pos.checked_add(n))
                .ok_or_else(bad)?;
            let chunk = body.get(pos..end).ok_or_else(bad)?;
            pos = end;
            let c = get_varint(body, &mut pos).ok_or_else(bad)?;
            t.add(chunk, c)?;
        }
        if pos != body.len() {
            return Err(Error::CorruptCounts {
                what: "has trailing bytes",
            });
        }
        Ok(t)
    }
}

fn put_varint(out: &mut Vec<u8>, mut n: u64) {
    loop {
        let b = (n & 0x7F) as u8;
        n >>= 7;
        if n == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

fn get_varint(raw: &[u8], pos: &mut usize) -> Option<u64> {
    let mut n = 0u64;
    let mut shift = 0u32;
    loop {
        let b = *raw.get(*pos)?;
        *pos += 1;
        if shift >= 64 || (shift == 63 && b & 0x7E != 0) {
            return None;
        }
        n |= u64::from(b & 0x7F) << shift;
        shift += 7;
        if b & 0x80 == 0 {
            return Some(n);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_keeps_first_seen_order() {
        let mut t = ChunkTable::new();
        for w in ["b", "a", "b", "c", "a", "b"] {
            t.add(w.as_bytes(), 1).unwrap();
        }
        let got: Vec<_> = t.iter().map(|(k, n)| (k.to_vec(), n)).collect();
        assert_eq!(
            got,
            vec![(b"b".to_vec(), 3), (b"a".to_vec(), 2), (b"c".to_vec(), 1)]
        );
        assert_eq!(t.arena(), b"bac");
        let back = ChunkTable::from_body(&t.to_body(), 3).unwrap();
        assert_eq!(back, t);
        assert!(ChunkTable::from_body(&t.to_body(), 4).is_err());
    }
}
