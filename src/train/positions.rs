//! The merge loop: learn merges from a [`ChunkTable`] with incremental updates.
//!
//! Representation. The distinct chunks are laid back to back in first-seen order
//! (the table's arena), so a *position* (byte offset in that arena) orders
//! occurrences exactly as the tie-break rule reads them: by chunk first-seen
//! index, then left to right inside the chunk. Every live token sits at the byte
//! offset where its bytes start, and live tokens of a chunk form a doubly linked
//! list (`next`/`prev`); merging `(a, b)` at `p` keeps `p` and kills the
//! position of `b`. Positions never move, so a pair occurrence keeps its key.
//!
//! Pairs. Each pair has a weighted count (sum of the frequencies of the chunks
//! it occurs in, overlapping occurrences included, as the reference counts) and
//! an occurrence list of positions, sorted, possibly holding stale entries
//! (checked on use: `tok[p] == a && tok[next[p]] == b`). A pair occurrence that
//! disappears never comes back (tokens at a position only grow), so stale
//! entries at the front are dropped for good and the first valid entry is the
//! pair's tie key.
//!
//! Heap. A max-heap of `(count, earliest position)` entries refreshed lazily:
//! after the step that creates a pair, its count only falls and its earliest
//! position only moves right, so a stored entry never ranks a pair below its
//! true rank. An entry popped with a stale count or key is pushed back with the
//! true values; one popped with exact values is the best pair.
//!
//! Complexity: O(N) to build (N = arena bytes), then per merge O(k log P) where
//! k is the number of occurrences of the merged pair (in distinct chunks, not
//! weighted by frequency) and P the heap size.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::Ordering;

use super::options::too_long;
use super::pairs::{merge_pair, Node, Pairs, NONE};
use super::{ChunkTable, Control, MergeOptions};
use crate::error::{Error, Result};
use crate::Rank;

/// The position loop on a borrowed table (see [`super::merge_loop::learn_merges`]).
pub(super) fn learn(
    table: &ChunkTable,
    opts: &MergeOptions,
    ctl: &Control,
) -> Result<Vec<(Rank, Rank)>> {
    run(build(table, opts)?, opts, ctl)
}

/// The position loop on a table it frees once its nodes are built.
pub(super) fn learn_owned(
    table: ChunkTable,
    opts: &MergeOptions,
    ctl: &Control,
) -> Result<Vec<(Rank, Rank)>> {
    let built = build(&table, opts)?;
    drop(table);
    super::return_free_memory();
    run(built, opts, ctl)
}

struct State {
    nodes: Vec<Node>,
    /// Frequency of each chunk.
    freqs: Vec<i64>,
    pairs: Pairs,
}
type Heap = BinaryHeap<(i64, Reverse<u32>, u32)>;
/// The loop's structures: nodes, frequencies, pairs with their occurrences,
/// and the heap of the byte pairs.
fn build(table: &ChunkTable, opts: &MergeOptions) -> Result<(State, Heap)> {
    let n = table.arena_len();
    if n >= (u32::MAX - 1) as usize {
        return Err(Error::training(format!(
            "the distinct chunks hold {n} bytes; the trainer handles up to 4 GiB (use a pre-tokenization pattern)"
        )));
    }
    let mut total: i64 = 0;
    let mut st = State {
        nodes: Vec::with_capacity(n),
        freqs: Vec::with_capacity(table.len()),
        pairs: Pairs::with_byte_pairs(),
    };
    let mut pos = 0u32;
    for (ci, (chunk, c)) in table.iter().enumerate() {
        let w = i64::try_from(c)
            .ok()
            .filter(|w| total.checked_add(*w).is_some_and(|t| t < i64::MAX / 4));
        let w = w.ok_or_else(|| Error::training("chunk counts add up to more than 2^61"))?;
        total += w;
        st.freqs.push(w);
        let len = chunk.len() as u32;
        for (j, &byte) in chunk.iter().enumerate() {
            let j = j as u32;
            st.nodes.push(Node {
                tok: u32::from(byte),
                next: if j + 1 < len { pos + j + 1 } else { NONE },
                prev: if j > 0 { pos + j - 1 } else { NONE },
                chunk: ci as u32,
            });
        }
        pos += len;
    }
    // Occurrence lists of the byte pairs, sized exactly in a first pass (growing
    // 65,536 vectors by pushing costs reallocations and page faults).
    let arena = table.arena();
    let mut sizes = vec![0u32; 65536];
    for (p, node) in st.nodes.iter().enumerate() {
        if node.next != NONE {
            sizes[(u32::from(arena[p]) << 8 | u32::from(arena[p + 1])) as usize] += 1;
        }
    }
    for (i, &n) in sizes.iter().enumerate() {
        st.pairs.occ[i] = Vec::with_capacity(n as usize);
    }
    for (p, node) in st.nodes.iter().enumerate() {
        if node.next != NONE {
            let i = (u32::from(arena[p]) << 8 | u32::from(arena[p + 1])) as usize;
            st.pairs.counts[i] += st.freqs[node.chunk as usize];
            st.pairs.occ[i].push(p as u32);
        }
    }
    let tok_len: Vec<u32> = vec![1; 256];
    let mut heap: Heap = BinaryHeap::new();
    for i in 0..65536u32 {
        if st.pairs.counts[i as usize] > 0 && !too_long(opts, &tok_len, i >> 8, i & 255) {
            heap.push((
                st.pairs.counts[i as usize],
                Reverse(st.pairs.occ[i as usize][0]),
                i,
            ));
        }
    }
    Ok((st, heap))
}

/// The merge loop over built structures (see [`learn_merges`]).
fn run(
    (mut st, mut heap): (State, Heap),
    opts: &MergeOptions,
    ctl: &Control,
) -> Result<Vec<(Rank, Rank)>> {
    let mut tok_len: Vec<u32> = vec![1; 256];
    let mut merges: Vec<(Rank, Rank)> = Vec::new();
    let mut touched: Vec<u32> = Vec::new();
    let min_freq = i64::try_from(opts.min_frequency).unwrap_or(i64::MAX);
    while merges.len() < opts.num_merges {
        ctl.check()?;
        // Pop until an entry with exact values comes up.
        let best = loop {
            let Some((c, Reverse(key), i)) = heap.pop() else {
                break None;
            };
            let cur = st.pairs.counts[i as usize];
            if cur <= 0 {
                continue;
            }
            let Some(first) = st.pairs.first_valid(&st.nodes, i) else {
                continue;
            };
            if cur == c && first == key {
                break Some((i, cur));
            }
            heap.push((cur, Reverse(first), i));
        };
        let Some((best, count)) = best else { break };
        if count < min_freq {
            break;
        }
        let (a, b) = st.pairs.pair_ab[best as usize];
        let new_id = (256 + merges.len()) as u32;
        merges.push((a, b));
        tok_len.push(tok_len[a as usize] + tok_len[b as usize]);

        touched.clear();
        merge_pair(
            &mut st.nodes,
            &st.freqs,
            &mut st.pairs,
            best,
            new_id,
            |i, new, _| {
                if new {
                    touched.push(i);
                }
            },
        );
        debug_assert_eq!(st.pairs.counts[best as usize], 0);
        for &t in &touched {
            let (x, y) = st.pairs.pair_ab[t as usize];
            if st.pairs.counts[t as usize] > 0 && !too_long(opts, &tok_len, x, y) {
                if let Some(first) = st.pairs.first_valid(&st.nodes, t) {
                    heap.push((st.pairs.counts[t as usize], Reverse(first), t));
                }
            }
        }
        ctl.merges_done
            .store(merges.len() as u64, Ordering::Relaxed);
    }
    Ok(merges)
}
