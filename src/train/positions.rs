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

use super::compact::{self, Budget, Learned, TableRef};
use super::pairs::{merge_pair, Node, Pairs, NONE};
use super::{ChunkTable, Control};
use crate::error::{Error, Result};
use crate::Rank;

/// Options of the merge loop (see `bytepair.reference.train_from_counts`).
#[derive(Debug, Clone)]
pub struct MergeOptions {
    /// Maximum number of merges to learn.
    pub num_merges: usize,
    /// Stop when the best pair occurs fewer times than this.
    pub min_frequency: u64,
    /// Skip pairs whose merged token would be longer than this many bytes.
    pub max_token_length: Option<usize>,
}

struct State {
    nodes: Vec<Node>,
    /// Frequency of each chunk.
    freqs: Vec<i64>,
    pairs: Pairs,
}

/// Learns up to `opts.num_merges` merges from `table`, exactly as
/// `bytepair.reference.train_from_counts` does (same merges, same order).
/// Merge `k` creates token id `256 + k`. Tables of short chunks (see
/// [`compact::fits`]) go to the compact loop, the others to the position loop
/// of this module; both learn the same merges.
///
/// Checks `ctl.cancel` at every merge and reports progress in
/// `ctl.merges_done`.
///
/// Errors: [`Error::Interrupted`] when cancelled; [`Error::InvalidTraining`] when
/// the table is too large for 32-bit positions or its total count overflows.
pub fn learn_merges(
    table: &ChunkTable,
    opts: &MergeOptions,
    ctl: &Control,
) -> Result<Vec<(Rank, Rank)>> {
    learn_merges_with(
        table,
        opts,
        ctl,
        MergeLoop::for_table(table, opts.num_merges),
    )
}

/// [`learn_merges`] on a table it owns: the table is freed once the loop's
/// own structures are built, so the two are never held at once during the
/// merges (the table costs its bytes plus about 48 bytes per chunk).
pub fn learn_merges_owned(
    table: ChunkTable,
    opts: &MergeOptions,
    ctl: &Control,
) -> Result<Vec<(Rank, Rank)>> {
    let which = MergeLoop::for_table(&table, opts.num_merges);
    learn_merges_owned_with(table, opts, ctl, which)
}

/// The merge loops (they learn the same merges).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MergeLoop {
    /// The compact loop while its work stays within its budget
    /// ([`compact::BUDGET_PER_BYTE`]), then the position loop from the start.
    CompactFirst,
    /// Chunk-id occurrences over a flat symbol array ([`compact`]), to the end.
    Compact,
    /// Byte-position occurrences over linked nodes (this module).
    Positions,
}

impl MergeLoop {
    /// The loop [`learn_merges`] takes for `merges` merges from `table`.
    pub fn for_table(table: &ChunkTable, merges: usize) -> Self {
        if compact::fits(table, merges) {
            MergeLoop::CompactFirst
        } else {
            MergeLoop::Positions
        }
    }
}

/// [`learn_merges`] with a chosen loop (tests run both on the same tables).
pub fn learn_merges_with(
    table: &ChunkTable,
    opts: &MergeOptions,
    ctl: &Control,
    which: MergeLoop,
) -> Result<Vec<(Rank, Rank)>> {
    let budget = match which {
        MergeLoop::Positions => return run(build(table, opts)?, opts, ctl),
        MergeLoop::Compact => Budget::Finish,
        MergeLoop::CompactFirst => Budget::GiveUp,
    };
    match compact::learn(TableRef::Borrowed(table), opts, ctl, budget)? {
        Learned::Merges(merges) => Ok(merges),
        Learned::OverBudget(_) => run(build(table, opts)?, opts, ctl),
    }
}

/// [`learn_merges_owned`] with a chosen loop.
pub fn learn_merges_owned_with(
    table: ChunkTable,
    opts: &MergeOptions,
    ctl: &Control,
    which: MergeLoop,
) -> Result<Vec<(Rank, Rank)>> {
    let budget = match which {
        MergeLoop::Positions => return learn_positions_owned(table, opts, ctl),
        MergeLoop::Compact => Budget::Finish,
        MergeLoop::CompactFirst => Budget::GiveUp,
    };
    match compact::learn(TableRef::Owned(table), opts, ctl, budget)? {
        Learned::Merges(merges) => Ok(merges),
        Learned::OverBudget(Some(table)) => learn_positions_owned(table, opts, ctl),
        Learned::OverBudget(None) => Err(Error::training("the merge loop lost its table")),
    }
}

/// The position loop on a table it frees once its nodes are built.
fn learn_positions_owned(
    table: ChunkTable,
    opts: &MergeOptions,
    ctl: &Control,
) -> Result<Vec<(Rank, Rank)>> {
    let built = build(&table, opts)?;
    drop(table);
    super::return_free_memory();
    run(built, opts, ctl)
}

type Heap = BinaryHeap<(i64, Reverse<u32>, u32)>;

/// Whether the token joining `a` and `b` would pass `max_token_length`.
pub(super) fn too_long(opts: &MergeOptions, tok_len: &[u32], a: u32, b: u32) -> bool {
    opts.max_token_length
        .is_some_and(|m| (tok_len[a as usize] + tok_len[b as usize]) as usize > m)
}

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

#[cfg(test)]
mod tests {
    use super::*;

    fn table(chunks: &[(&[u8], u64)]) -> ChunkTable {
        let mut t = ChunkTable::new();
        for (c, n) in chunks {
            t.add(c, *n).unwrap();
        }
        t
    }

    /// Both loops, checked to agree.
    fn both(t: &ChunkTable, o: &MergeOptions) -> Vec<(u32, u32)> {
        let ctl = Control::default();
        let c = learn_merges_with(t, o, &ctl, MergeLoop::Compact).unwrap();
        let p = learn_merges_with(t, o, &ctl, MergeLoop::Positions).unwrap();
        assert_eq!(c, p, "the compact and position loops disagree");
        let f = learn_merges_with(t, o, &ctl, MergeLoop::CompactFirst).unwrap();
        assert_eq!(f, p, "the budgeted compact loop disagrees");
        c
    }

    fn opts(k: usize) -> MergeOptions {
        MergeOptions {
            num_merges: k,
            min_frequency: 1,
            max_token_length: None,
        }
    }

    /// `n` pseudo-random bytes drawn from `alphabet`.
    fn drawn(n: usize, alphabet: &[u8], seed: u32) -> Vec<u8> {
        let mut x = seed;
        (0..n)
            .map(|_| {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                alphabet[(x >> 16) as usize % alphabet.len()]
            })
            .collect()
    }

    #[test]
    fn a_long_chunk_every_merge_touches_runs_out_the_budget() {
        let digits = drawn(20_000, b"0123456789", 7);
        let t = table(&[(b"12 34", 3), (&digits, 1), (b"5 6", 2)]);
        let o = opts(300);
        assert_eq!(MergeLoop::for_table(&t, 300), MergeLoop::CompactFirst);
        let ctl = Control::default();
        // the loop gives up and gives back the very table it started from
        let copy = table(&[(b"12 34", 3), (&digits, 1), (b"5 6", 2)]);
        match compact::learn(TableRef::Owned(copy), &o, &ctl, Budget::GiveUp).unwrap() {
            Learned::OverBudget(Some(back)) => assert!(back == t, "the rebuilt table differs"),
            _ => panic!("the budget did not run out"),
        }
        // then the position loop learns the merges, borrowed or owned
        let p = learn_merges_with(&t, &o, &ctl, MergeLoop::Positions).unwrap();
        assert_eq!(
            learn_merges_with(&t, &o, &ctl, MergeLoop::CompactFirst).unwrap(),
            p
        );
        let copy = table(&[(b"12 34", 3), (&digits, 1), (b"5 6", 2)]);
        assert_eq!(
            learn_merges_owned_with(copy, &o, &ctl, MergeLoop::CompactFirst).unwrap(),
            p
        );
    }

    #[test]
    fn short_chunks_stay_within_the_budget() {
        let mut t = ChunkTable::new();
        for i in 0..5_000u32 {
            let word = drawn(2 + (i % 9) as usize, b"etaoinshrdlu", i);
            t.add(&word, 1 + u64::from(i % 7)).unwrap();
        }
        let ctl = Control::default();
        let got =
            compact::learn(TableRef::Borrowed(&t), &opts(2_000), &ctl, Budget::GiveUp).unwrap();
        assert!(matches!(got, Learned::Merges(m) if m.len() == 2_000));
    }

    fn learn(t: &ChunkTable, k: usize) -> Vec<(u32, u32)> {
        let o = MergeOptions {
            num_merges: k,
            min_frequency: 1,
            max_token_length: None,
        };
        both(t, &o)
    }

    #[test]
    fn loops_agree_on_pseudo_random_tables() {
        // few symbols, many ties and overlapping runs; some chunks repeat
        // counts so that first-seen order decides
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for round in 0..60 {
            let mut t = ChunkTable::new();
            for _ in 0..(1 + next() % 40) {
                let len = 1 + (next() % 12) as usize;
                let chunk: Vec<u8> = (0..len).map(|_| b"aab c"[(next() % 5) as usize]).collect();
                t.add(&chunk, 1 + next() % 3).unwrap();
            }
            let o = MergeOptions {
                num_merges: 5 + round,
                min_frequency: 1 + (round as u64 % 3),
                max_token_length: if round % 4 == 0 { Some(3) } else { None },
            };
            both(&t, &o);
        }
    }

    #[test]
    fn long_chunks_take_the_position_loop() {
        let short = table(&[(b"ab ab", 1), (b"abc", 2)]);
        assert_eq!(MergeLoop::for_table(&short, 3), MergeLoop::CompactFirst);
        let long = vec![b'a'; 5000];
        let t = table(&[(&long, 1), (b"ab", 1)]);
        // bounded by the merges: 5000 * 3 visits per byte is within the bound
        assert_eq!(MergeLoop::for_table(&t, 3), MergeLoop::CompactFirst);
        assert_eq!(MergeLoop::for_table(&t, 4500), MergeLoop::Positions);
        assert_eq!(learn(&t, 3), vec![(97, 97), (256, 256), (257, 257)]);
    }

    #[test]
    fn wide_symbols_past_65536_tokens() {
        // 70,000 merges need 32-bit symbols; both loops still agree
        let mut t = ChunkTable::new();
        let mut x: u32 = 12345;
        for _ in 0..30_000 {
            let chunk: Vec<u8> = (0..8)
                .map(|_| {
                    x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                    (x >> 16) as u8
                })
                .collect();
            t.add(&chunk, 1).unwrap();
        }
        let m = learn(&t, 70_000);
        assert!(m.len() > 65_280, "{} merges", m.len());
    }

    #[test]
    fn banana_bandana() {
        let t = table(&[(b"banana bandana", 1)]);
        assert_eq!(learn(&t, 3), vec![(97, 110), (98, 256), (256, 97)]);
    }

    #[test]
    fn overlapping_runs_merge_left_to_right() {
        // "aaaa" -> [aa, aa]; then (aa, aa) once.
        let t = table(&[(b"aaaa", 1)]);
        assert_eq!(learn(&t, 5), vec![(97, 97), (256, 256)]);
        // "aaa": (a,a) counted twice, merged once -> [aa, a]; then (aa, a).
        let t = table(&[(b"aaa", 1)]);
        assert_eq!(learn(&t, 5), vec![(97, 97), (256, 97)]);
    }

    #[test]
    fn luna_raw_bytes() {
        let t = table(&[(b"luna saw a star. luna said hi to the star.", 1)]);
        let m = learn(&t, 8);
        assert_eq!(m[0], (b' ' as u32, b's' as u32));
        assert_eq!(m[1], (b'a' as u32, 256));
        assert_eq!(m[2], (b'l' as u32, b'u' as u32));
        assert_eq!(m.len(), 8);
    }

    #[test]
    fn max_token_length_and_min_frequency() {
        let t = table(&[(b"abcabc", 3)]);
        let o = MergeOptions {
            num_merges: 10,
            min_frequency: 1,
            max_token_length: Some(2),
        };
        let m = both(&t, &o);
        assert!(m.len() == 1 && m[0] == (97, 98));
        let o = MergeOptions {
            num_merges: 10,
            min_frequency: 7,
            max_token_length: None,
        };
        assert!(both(&t, &o).is_empty());
    }
}
