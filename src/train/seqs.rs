//! The merge state of one corpus for the loops over token ids
//! ([`super::from_tokens`]): every initial token is a node, nodes of a chunk
//! form a doubly linked list, and the node index orders occurrences exactly
//! as the tie-break rule reads them (chunks in first-seen order, left to
//! right). It is the byte-position state of [`super::positions`] with nodes
//! for whole tokens, so the same invariants hold: a pair occurrence that
//! disappears never comes back, occurrence lists stay sorted (every pair
//! holding a new id is created in the one step that makes the id), and a heap
//! entry never ranks a pair below its true rank.
//!
//! Built from encoded chunks ([`Seqs::from_encoded`]), the state is made on
//! several threads: the nodes task by task (each thread takes the page
//! faults of the nodes it writes), the pairs by hash partition
//! ([`super::pair_build`], which gives the pairs the indices of the serial
//! build): the same state as the serial build.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::mem::MaybeUninit;

use super::encoded::Encoded;
use super::merge_par::{merge_pair_par, PAR_MIN};
use super::pair_build::build_pairs;
use super::pairs::{merge_pair, Node, Pairs, NONE};
use crate::error::{Error, Result};
use crate::hint::advise_huge;
use crate::parallel;
use crate::Rank;

/// The merge state of one corpus (see the module docs).
pub(super) struct Seqs {
    pub nodes: Vec<Node>,
    pub freqs: Vec<i64>,
    pub pairs: Pairs,
    /// Pairs passed over for good.
    pub banned: Vec<bool>,
    pub heap: BinaryHeap<(i64, Reverse<u32>, u32)>,
    /// Weighted number of tokens (sum over chunks of length x frequency).
    pub tokens: i64,
    /// Whether this corpus chooses merges (a dev set only follows them).
    pub chooses: bool,
    /// Threads of a merge step with many occurrences ([`super::merge_par`]).
    threads: usize,
    /// The first node of every chunk (with `threads` > 1).
    starts: Vec<u32>,
}

fn overflow() -> Error {
    Error::training("chunk counts add up to more than 2^61")
}

impl Seqs {
    /// Builds the state from chunks given as id sequences with their counts.
    /// Pairs that `eligible` rejects never enter the heap.
    pub fn new<'a>(
        chunks: impl Iterator<Item = (&'a [Rank], u64)>,
        size_hint: usize,
        chooses: bool,
        eligible: &mut impl FnMut(u32, u32) -> bool,
    ) -> Result<Self> {
        let mut st = Seqs {
            nodes: Vec::with_capacity(size_hint),
            freqs: Vec::new(),
            pairs: Pairs::with_byte_pairs(),
            banned: vec![false; 65536],
            heap: BinaryHeap::new(),
            tokens: 0,
            chooses,
            threads: 1,
            starts: Vec::new(),
        };
        let mut total: i64 = 0;
        for (ci, (ids, c)) in chunks.enumerate() {
            let w = i64::try_from(c)
                .ok()
                .filter(|w| total.checked_add(*w).is_some_and(|t| t < i64::MAX / 4))
                .ok_or_else(overflow)?;
            total += w;
            let len = ids.len() as u64;
            st.tokens = (len as i64)
                .checked_mul(w)
                .and_then(|x| st.tokens.checked_add(x))
                .filter(|t| *t < i64::MAX / 4)
                .ok_or_else(overflow)?;
            st.freqs.push(w);
            let pos = st.nodes.len() as u64;
            if pos + len >= u64::from(NONE - 1) {
                return Err(Error::training(
                    "the corpus holds more than 4 G tokens; use a pre-tokenization pattern",
                ));
            }
            let pos = pos as u32;
            let len = len as u32;
            for (j, &id) in ids.iter().enumerate() {
                let j = j as u32;
                st.nodes.push(Node {
                    tok: id,
                    next: if j + 1 < len { pos + j + 1 } else { NONE },
                    prev: if j > 0 { pos + j - 1 } else { NONE },
                    chunk: ci as u32,
                });
            }
        }
        let mut scratch = Vec::new();
        for p in 0..st.nodes.len() {
            let node = st.nodes[p];
            if node.next != NONE {
                let b = st.nodes[node.next as usize].tok;
                st.inc(
                    node.tok,
                    b,
                    st.freqs[node.chunk as usize],
                    p as u32,
                    &mut scratch,
                );
            }
        }
        if chooses {
            st.fill_heap(eligible);
        }
        Ok(st)
    }

    /// Every counted pair that `eligible` accepts, into the heap.
    /// The heap is made in one pass (heapify) from the entries: entries are
    /// distinct, so the pops come in the same order however it is made.
    fn fill_heap(&mut self, eligible: &mut impl FnMut(u32, u32) -> bool) {
        let mut entries = std::mem::take(&mut self.heap).into_vec();
        for i in 0..self.pairs.pair_ab.len() {
            let (a, b) = self.pairs.pair_ab[i];
            if self.pairs.counts[i] > 0 && eligible(a, b) {
                entries.push((
                    self.pairs.counts[i],
                    Reverse(self.pairs.occ[i][0]),
                    i as u32,
                ));
            }
        }
        self.heap = BinaryHeap::from(entries);
    }

    #[inline]
    fn inc(&mut self, a: u32, b: u32, w: i64, pos: u32, touched: &mut Vec<u32>) {
        let (i, new, before) = self.pairs.add(a, b, w, pos);
        if new {
            self.banned.push(false);
        }
        if before == 0 {
            touched.push(i);
        }
    }

    /// The best pair (highest count, then earliest occurrence) that `skip`
    /// does not reject; rejected pairs are banned for good. `(index, count)`.
    pub fn best(&mut self, mut skip: impl FnMut(u32, u32) -> bool) -> Option<(u32, i64)> {
        loop {
            let (c, Reverse(key), i) = self.heap.pop()?;
            if self.banned[i as usize] {
                continue;
            }
            let cur = self.pairs.counts[i as usize];
            if cur <= 0 {
                continue;
            }
            let Some(first) = self.pairs.first_valid(&self.nodes, i) else {
                continue;
            };
            if cur == c && first == key {
                let (a, b) = self.pairs.pair_ab[i as usize];
                if skip(a, b) {
                    self.banned[i as usize] = true;
                    continue;
                }
                return Some((i, cur));
            }
            self.heap.push((cur, Reverse(first), i));
        }
    }

    /// Puts a pair popped by [`Self::best`] back (it was not used).
    pub fn unpop(&mut self, i: u32, count: i64) {
        if let Some(first) = self.pairs.first_valid(&self.nodes, i) {
            self.heap.push((count, Reverse(first), i));
        }
    }

    /// Merges every occurrence of `(a, b)` into `new_id`, left to right; the
    /// pairs it creates enter the heap when `eligible` accepts them. A pair
    /// with many occurrences is merged on the state's threads (same result).
    pub fn apply(
        &mut self,
        (a, b): (u32, u32),
        new_id: u32,
        touched: &mut Vec<u32>,
        eligible: &mut impl FnMut(u32, u32) -> bool,
    ) -> Result<()> {
        let Some(best) = self.pairs.lookup(a, b) else {
            return Ok(());
        };
        touched.clear();
        let banned = &mut self.banned;
        let mut on_add = |i, new, before| {
            if new {
                banned.push(false);
            }
            if before == 0 {
                touched.push(i);
            }
        };
        let many = self.pairs.occ[best as usize].len() >= PAR_MIN;
        self.tokens -= if self.threads > 1 && many {
            let st = (&self.freqs, &self.starts);
            let step = (best, new_id);
            merge_pair_par(
                &mut self.nodes,
                st.0,
                st.1,
                &mut self.pairs,
                step,
                self.threads,
                &mut on_add,
            )?
        } else {
            merge_pair(
                &mut self.nodes,
                &self.freqs,
                &mut self.pairs,
                best,
                new_id,
                &mut on_add,
            )
        };
        if self.chooses {
            for &t in touched.iter() {
                let (x, y) = self.pairs.pair_ab[t as usize];
                if self.pairs.counts[t as usize] > 0 && !self.banned[t as usize] && eligible(x, y) {
                    if let Some(first) = self.pairs.first_valid(&self.nodes, t) {
                        self.heap
                            .push((self.pairs.counts[t as usize], Reverse(first), t));
                    }
                }
            }
        }
        Ok(())
    }
}

impl Seqs {
    /// [`Seqs::new`] over chunks encoded by [`super::encoded`], built on
    /// `threads` threads (see the module docs): the same state, pair indices
    /// included, on any thread count.
    pub fn from_encoded(
        enc: Encoded,
        threads: Option<usize>,
        eligible: &mut impl FnMut(u32, u32) -> bool,
    ) -> Result<Self> {
        let n = enc.ids();
        if n as u64 >= u64::from(NONE - 1) {
            return Err(Error::training(
                "the corpus holds more than 4 G tokens; use a pre-tokenization pattern",
            ));
        }
        let (freqs, tokens, starts) = chunk_weights(&enc)?;
        let nodes = build_nodes(&enc, n, threads)?;
        drop(enc); // the ids live on in the nodes
        let k = parallel::resolve_threads(threads)?;
        let pairs = build_pairs(&nodes, &freqs, threads)?;
        let mut st = Seqs {
            nodes,
            freqs,
            banned: vec![false; pairs.pair_ab.len()],
            pairs,
            heap: BinaryHeap::new(),
            tokens,
            chooses: true,
            threads: k,
            starts,
        };
        st.fill_heap(eligible);
        Ok(st)
    }
}

/// Every chunk's count as a weight, the weighted number of tokens, and
/// every chunk's first node.
fn chunk_weights(enc: &Encoded) -> Result<(Vec<i64>, i64, Vec<u32>)> {
    let mut freqs = Vec::with_capacity(enc.chunk_count());
    let mut starts = Vec::with_capacity(enc.chunk_count());
    let (mut total, mut tokens, mut at) = (0i64, 0i64, 0u32);
    for (ids, c) in enc.chunks() {
        starts.push(at);
        at += ids.len() as u32;
        let w = i64::try_from(c)
            .ok()
            .filter(|w| total.checked_add(*w).is_some_and(|t| t < i64::MAX / 4))
            .ok_or_else(overflow)?;
        total += w;
        tokens = (ids.len() as i64)
            .checked_mul(w)
            .and_then(|x| tokens.checked_add(x))
            .filter(|t| *t < i64::MAX / 4)
            .ok_or_else(overflow)?;
        freqs.push(w);
    }
    Ok((freqs, tokens, starts))
}

fn mismatch() -> Error {
    Error::training("stage-2 nodes: the tasks' ids do not add up to the node count")
}

/// The nodes of every chunk, each task's written by one thread (which also
/// takes the page faults of its first touch), in memory backed by huge pages
/// where offered (the merge loop visits it at random).
#[allow(unsafe_code)] // one set_len after every node is written, see the SAFETY comment
fn build_nodes(enc: &Encoded, n: usize, threads: Option<usize>) -> Result<Vec<Node>> {
    let mut nodes: Vec<Node> = Vec::with_capacity(n);
    advise_huge(&mut nodes);
    let mut parts = Vec::with_capacity(enc.tasks().len());
    let mut rest = &mut nodes.spare_capacity_mut()[..n];
    let (mut at, mut chunk) = (0u32, 0u32);
    for (ids, lens) in enc.tasks() {
        if ids.len() > rest.len() {
            return Err(mismatch());
        }
        let (part, tail) = std::mem::take(&mut rest).split_at_mut(ids.len());
        rest = tail;
        parts.push(std::sync::Mutex::new((part, ids, lens, at, chunk)));
        at += ids.len() as u32;
        chunk += lens.len() as u32;
    }
    if !rest.is_empty() {
        return Err(mismatch()); // the set_len below needs the parts to cover all n slots
    }
    parallel::map_par(&parts, threads, |m| {
        let mut g = m.lock().unwrap_or_else(|e| e.into_inner());
        let (part, ids, lens, at, chunk) = &mut *g;
        fill_nodes(part, ids, lens, *at, *chunk);
        Ok(())
    })?;
    drop(parts);
    // SAFETY: the tasks' id counts add up to `n` (both ways checked above,
    // before any write), so the parts cover the first `n` slots exactly, and map_par
    // returned Ok only after every part ran: `fill_nodes` writes every slot
    // of its part (one node per id). An error returns before this line and
    // the vector stays empty.
    unsafe { nodes.set_len(n) };
    Ok(nodes)
}

/// Writes the nodes of one task's chunks (`ids` back to back, `lens` the
/// number of ids of each), its first node at `at`, its first chunk `chunk`:
/// every slot of `part` (one per id).
fn fill_nodes(
    part: &mut [MaybeUninit<Node>],
    ids: &[Rank],
    lens: &[(u32, u64)],
    at: u32,
    chunk: u32,
) {
    let mut from = 0usize;
    for (k, &(len, _)) in lens.iter().enumerate() {
        let len = len as usize;
        for j in 0..len {
            let pos = at + (from + j) as u32;
            part[from + j].write(Node {
                tok: ids[from + j],
                next: if j + 1 < len { pos + 1 } else { NONE },
                prev: if j > 0 { pos - 1 } else { NONE },
                chunk: chunk + k as u32,
            });
        }
        from += len;
    }
}
