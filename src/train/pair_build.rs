//! The pair table of a fresh node array ([`super::seqs::Seqs::from_encoded`]),
//! built on several threads by hash partition.
//!
//! First each range of nodes sorts its pair starts into [`PARTS`] buckets by a
//! hash of the pair; then each partition counts its own pairs from the
//! buckets of every range, ranges in order (a small table per partition, so
//! most lookups hit the cache, and no join of large tables afterwards); last,
//! the pairs get their indices on one thread: byte pairs their fixed ones,
//! the others in the order of their first occurrence. That is the order in
//! which a serial scan of the nodes meets them, so the table (indices,
//! counts, occurrence lists ascending) is the serial build's on any thread
//! count: it depends on neither the partition nor the ranges.
//!
//! Memory: 4 bytes per pair start in the buckets while the partitions count,
//! besides the occurrence lists themselves.

use rustc_hash::FxHashMap;

use super::pairs::{Node, Pairs, NONE};
use crate::error::Result;
use crate::parallel;

/// Partitions of the pairs: many more than threads, so that the partitions
/// balance across threads and each one's table stays small.
const PARTS: usize = 64;

/// The partition of pair (a, b): the top bits of a multiplicative hash whose
/// constant differs from the table hasher's (the keys of one partition then
/// spread over the whole of its table).
#[inline]
fn part_of(a: u32, b: u32) -> usize {
    let k = (u64::from(a) << 32 | u64::from(b)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    (k >> (64 - PARTS.trailing_zeros())) as usize
}

/// The pairs of one partition in the order first met there, with their
/// counts and occurrences (node positions, ascending).
#[derive(Default)]
struct PartPairs {
    keys: Vec<(u32, u32)>,
    counts: Vec<i64>,
    occ: Vec<Vec<u32>>,
}

/// The pair table of `nodes` (every chunk a fresh list: the node after `p`
/// is `p + 1` or none), chunk `c` weighing `freqs[c]`; on `threads`
/// threads, the same table on any count (see the module docs).
pub(super) fn build_pairs(nodes: &[Node], freqs: &[i64], threads: Option<usize>) -> Result<Pairs> {
    let k = parallel::resolve_threads(threads)?;
    let n = nodes.len();
    let ranges: Vec<(usize, usize)> = (0..2 * k)
        .map(|r| (n * r / (2 * k), n * (r + 1) / (2 * k)))
        .collect();
    let buckets = parallel::map_par(&ranges, threads, |&(from, to)| {
        Ok(bucket_range(nodes, from, to))
    })?;
    let ids: Vec<usize> = (0..PARTS).collect();
    let parts = parallel::map_par(&ids, threads, |&j| {
        Ok(count_part(nodes, freqs, &buckets, j))
    })?;
    drop(buckets);
    Ok(assemble(parts))
}

/// The pair starts of nodes `from..to`, one bucket per partition, ascending.
fn bucket_range(nodes: &[Node], from: usize, to: usize) -> Vec<Vec<u32>> {
    let guess = (to - from) / PARTS + (to - from) / (8 * PARTS) + 16;
    let mut b: Vec<Vec<u32>> = (0..PARTS).map(|_| Vec::with_capacity(guess)).collect();
    for (p, node) in nodes[from..to].iter().enumerate() {
        if node.next != NONE {
            let next = nodes[node.next as usize].tok;
            b[part_of(node.tok, next)].push((from + p) as u32);
        }
    }
    b
}

/// Partition `j`'s pairs from every range's bucket `j`, ranges in order.
/// Each occurrence list is sized exactly before it is filled (growing
/// millions of lists by pushing costs reallocations and leaves slack).
fn count_part(nodes: &[Node], freqs: &[i64], buckets: &[Vec<Vec<u32>>], j: usize) -> PartPairs {
    let starts = || buckets.iter().flat_map(move |r| r[j].iter().copied());
    let total: usize = buckets.iter().map(|r| r[j].len()).sum();
    let mut index: FxHashMap<u64, u32> = FxHashMap::default();
    let mut t = PartPairs::default();
    let mut sizes: Vec<u32> = Vec::new();
    // the pair index of each start, in bucket order
    let mut which: Vec<u32> = Vec::with_capacity(total);
    for p in starts() {
        let node = nodes[p as usize];
        let (a, b) = (node.tok, nodes[node.next as usize].tok);
        let i = *index
            .entry(u64::from(a) << 32 | u64::from(b))
            .or_insert_with(|| {
                t.keys.push((a, b));
                t.counts.push(0);
                sizes.push(0);
                (t.keys.len() - 1) as u32
            });
        t.counts[i as usize] += freqs[node.chunk as usize];
        sizes[i as usize] += 1;
        which.push(i);
    }
    drop(index);
    t.occ = sizes
        .iter()
        .map(|&n| Vec::with_capacity(n as usize))
        .collect();
    for (p, &i) in starts().zip(&which) {
        t.occ[i as usize].push(p);
    }
    t
}

/// The partitions' pairs as one table: byte pairs at `a * 256 + b`, the
/// others from 65,536 on in the order of their first occurrence.
fn assemble(mut parts: Vec<PartPairs>) -> Pairs {
    let mut pairs = Pairs::with_byte_pairs();
    let mut offsets = Vec::with_capacity(parts.len());
    // (first occurrence, handle): a position starts one pair only, so the
    // first occurrences are distinct and the order is total
    let mut order: Vec<u64> = Vec::new();
    let mut handle = 0u64;
    for t in &mut parts {
        offsets.push(handle);
        for (l, &(a, b)) in t.keys.iter().enumerate() {
            if a < 256 && b < 256 {
                let i = (a * 256 + b) as usize;
                pairs.counts[i] = t.counts[l];
                pairs.occ[i] = std::mem::take(&mut t.occ[l]);
            } else if let Some(&first) = t.occ[l].first() {
                order.push(u64::from(first) << 32 | (handle + l as u64));
            }
        }
        handle += t.keys.len() as u64;
    }
    order.sort_unstable();
    let more = order.len();
    pairs.pair_ab.reserve(more);
    pairs.counts.reserve(more);
    pairs.occ.reserve(more);
    pairs.head.reserve(more);
    pairs.index.reserve(more);
    for e in order {
        let h = e & 0xffff_ffff;
        let j = offsets.partition_point(|&o| o <= h) - 1;
        let l = (h - offsets[j]) as usize;
        let t = &mut parts[j];
        let (a, b) = t.keys[l];
        let i = pairs.pair_ab.len() as u32;
        pairs.pair_ab.push((a, b));
        pairs.counts.push(t.counts[l]);
        pairs.occ.push(std::mem::take(&mut t.occ[l]));
        pairs.head.push(0);
        pairs.index.insert(u64::from(a) << 32 | u64::from(b), i);
    }
    pairs
}

#[cfg(test)]
mod tests {
    use crate::train::encoded::encode_table;
    use crate::train::seqs::Seqs;
    use crate::train::{ChunkTable, Control};
    use crate::vocab::Vocab;

    /// Chunks of few symbols, some repeated; a base holding "aa" and "ab"
    /// gives ids above the bytes, so both kinds of pair index occur.
    fn table(seed: u64, n: u64) -> ChunkTable {
        let mut x = seed;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut t = ChunkTable::new();
        for _ in 0..n {
            let len = 1 + (next() % 30) as usize;
            let chunk: Vec<u8> = (0..len).map(|_| b"aab c."[(next() % 6) as usize]).collect();
            t.add(&chunk, 1 + next() % 4).unwrap();
        }
        t
    }

    #[test]
    fn the_partitioned_table_is_the_serial_one() {
        let mut toks: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        toks.push(b"aa".to_vec());
        toks.push(b"ab".to_vec());
        let base = Vocab::new(toks).unwrap();
        let ctl = Control::default();
        for (seed, n) in [(1, 1), (7, 40), (99, 3_000)] {
            let t = table(0x2545_f491_4f6c_dd1d ^ seed, n);
            let enc = encode_table(&base, &t, Some(1), &ctl).unwrap();
            let mut serial = Seqs::new(enc.chunks(), enc.ids(), true, &mut |_, _| true).unwrap();
            for threads in [1, 2, 3] {
                let enc = encode_table(&base, &t, Some(threads), &ctl).unwrap();
                let mut par = Seqs::from_encoded(enc, Some(threads), &mut |_, _| true).unwrap();
                let (s, p) = (&serial.pairs, &par.pairs);
                assert_eq!(s.pair_ab, p.pair_ab, "{n} chunks, {threads} threads");
                assert_eq!(s.counts, p.counts);
                assert_eq!(s.occ, p.occ);
                assert_eq!(s.index, p.index);
                assert_eq!(serial.banned.len(), par.banned.len());
                assert_eq!(serial.heap.len(), par.heap.len());
                let pops = |st: &mut Seqs| std::iter::from_fn(|| st.heap.pop()).collect::<Vec<_>>();
                let want = pops(&mut serial);
                assert_eq!(want, pops(&mut par));
                serial.heap.extend(want);
            }
        }
    }
}
