//! The split path: a long piece that is neither runs nor repetitive, cut
//! wherever no token can straddle ([`crate::vocab::cuts`]), each part merged
//! on its own by the dispatch by shape ([`super::shape`]) without a second split.
//!
//! Complexity: linear when cuts are frequent (random Hangul: short parts
//! merged in cache); a part with no cut takes the heap, O(n log n).

use super::shape::merge_part;
use crate::vocab::Vocab;
use crate::Rank;

/// A long piece cut wherever no token can straddle ([`crate::vocab::cuts`]), each
/// part merged on its own by the short scan, or for a long part the queue or
/// the heap. Exact on any piece; linear when boundaries are frequent (random
/// Hangul), and the heap's O(n log n) when there are none.
///
/// The parts skip the whole-token lookup: that lookup is tiktoken's rule for
/// a whole piece, and a part that happens to be a token must still go through
/// the merges, which may not rebuild it (random vocabularies have such tokens).
pub fn encode_piece_split(piece: &[u8], vocab: &Vocab, out: &mut Vec<Rank>) {
    let cuts = vocab.cuts();
    let mut start = 0;
    for p in 1..piece.len() {
        if cuts.is_boundary(piece, p) {
            merge_part(&piece[start..p], vocab, out);
            start = p;
        }
    }
    merge_part(&piece[start..], vocab, out);
}
