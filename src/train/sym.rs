//! A token id as a merge loop stores it: `u16` when every id of the run
//! fits 16 bits (half the memory), else `u32`. Shared by the compact loop
//! ([`super::compact`]) and the lean loop ([`super::lean`]).

/// A stored token id.
pub(super) trait Sym: Copy + Eq + Send + Sync + 'static {
    /// Bytes per id.
    const BYTES: u64;
    /// The id.
    fn get(self) -> u32;
    /// `v` as stored (the caller checked that it fits).
    fn make(v: u32) -> Self;
    /// Appends the id's little-endian bytes.
    fn put_le(self, out: &mut Vec<u8>);
    /// The id of [`Self::BYTES`] little-endian bytes.
    fn from_le(b: &[u8]) -> Self;
}

impl Sym for u16 {
    const BYTES: u64 = 2;
    #[inline(always)]
    fn get(self) -> u32 {
        u32::from(self)
    }
    #[inline(always)]
    fn make(v: u32) -> Self {
        v as u16
    }
    fn put_le(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
    fn from_le(b: &[u8]) -> Self {
        u16::from_le_bytes([b[0], b[1]])
    }
}

impl Sym for u32 {
    const BYTES: u64 = 4;
    #[inline(always)]
    fn get(self) -> u32 {
        self
    }
    #[inline(always)]
    fn make(v: u32) -> Self {
        v
    }
    fn put_le(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
    fn from_le(b: &[u8]) -> Self {
        u32::from_le_bytes([b[0], b[1], b[2], b[3]])
    }
}
