//! The compact merge loop: the same merges as [`super::positions`] in less than
//! half its memory, for tables whose chunks are short (any pattern on real
//! text).
//!
//! Representation. Every chunk's tokens sit in one flat array of symbols
//! (`u16` while the vocabulary fits, else `u32`), chunk after chunk in
//! first-seen order, with a start, a length and a frequency per chunk. A merge
//! rewrites the affected chunks in place (a chunk only shrinks, so starts
//! never move). A pair's occurrences are the ids of the chunks holding it
//! (ascending, each once, possibly stale), not positions.
//!
//! Tie-break. The key of a pair is its first occurrence in the tie-break
//! order: `(chunk id << 32) | byte offset inside the chunk`. A byte offset,
//! unlike a token index, never moves when tokens on its left merge, so a
//! pair's key only grows (its occurrences only disappear once it exists) and
//! the lazy heap of [`super::positions`] works unchanged: an entry never ranks a
//! pair below its true rank; a popped entry with a stale count or key is
//! pushed back with the true values.
//!
//! Cost. A merge scans each chunk that held the pair (and rewrites it from
//! its first occurrence), so a chunk of `L` bytes costs at most `L` per merge
//! that touches it, and at most `min(L - 1, merges)` merges touch it (each
//! removes a token): at most `L * min(L, merges)` over the whole run. [`fits`]
//! takes this loop when that bound, summed over the chunks, is at most
//! [`WORK_PER_BYTE`] symbol visits per chunk byte, which keeps the work
//! linear; other tables go to the position loop of [`super::positions`], whose
//! cost per merge is the number of occurrences whatever the chunk lengths.
//! That bound is loose for a few merges (with 1,000 merges one 5 MB chunk
//! fits it, and may cost 1,000 scans of 5 MB), so by default a run also counts
//! its symbol visits and gives up once they pass a budget
//! ([`BUDGET_PER_BYTE`]): the caller then runs the position loop from the
//! start, and the work lost is a fixed number of visits per byte. Real text
//! stays well within the budget: its chunks are short, and the few long ones
//! (the 3.4 GB corpus of `benches/bench_train_scale.py` holds a 400 KB run of
//! `x` and 100,000 digits of pi and of e) are touched by few merges.
//!
//! Memory (`bytepair.memory.merge_loop_bytes` states it for Python): 2
//! bytes per chunk byte (4 past 65,536 tokens), 16 per chunk, 4 per (pair,
//! chunk) occurrence and about 60 per pair (pair, count, occurrence slice,
//! stale mark, index entry). Only pairs that could still win sit in the heap
//! (see `floor` in `run`), so it stays small. The chunk table is freed
//! before the pairs are counted when the loop owns it.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::Ordering;

use super::occ::Occ;
use super::options::too_long;
use super::pairs::Pairs;
use super::sym::Sym;
use super::{ChunkTable, Control, MergeOptions};
use crate::error::{Error, Result};
use crate::hint::prefetch;
use crate::vocab::spell_merges;
use crate::Rank;

/// Most symbol visits per chunk byte (the bound of [`fits`]) for which the
/// compact loop is taken.
pub const WORK_PER_BYTE: u64 = 4096;

/// The budget of a run that may give up ([`Budget::GiveUp`]): symbol visits
/// per chunk byte, plus visits per occurrence merged. Real text needs 9-40
/// visits per byte and 13-55 per occurrence merged (the corpora of
/// `benches/bench_train_scale.py`, 32,768 and 131,072 merges), so it stays
/// well within; one long chunk that every merge touches passes it after
/// about 64 scans of itself.
pub const BUDGET_PER_BYTE: u64 = 64;
/// See [`BUDGET_PER_BYTE`].
pub const BUDGET_PER_MERGED: u64 = 16;

/// Whether a run may give up when its work passes the budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Budget {
    /// Stop with [`Learned::OverBudget`] past the budget.
    GiveUp,
    /// Run to the end whatever the work (still bounded by [`fits`]).
    Finish,
}

/// What a run of this loop ends with.
pub enum Learned {
    /// The merges learned.
    Merges(Vec<(Rank, Rank)>),
    /// The work passed the budget; an owned table comes back rebuilt from
    /// the loop's symbols (the same chunks, counts and order), a borrowed one
    /// as `None`.
    OverBudget(Option<ChunkTable>),
}

/// Whether `table` goes to this loop for `merges` merges (see the module
/// docs): the bound of its work, the sum over chunks of `L * min(L,
/// merges)`, is at most [`WORK_PER_BYTE`] times the chunk bytes.
pub fn fits(table: &ChunkTable, merges: usize) -> bool {
    let n = table.arena_len();
    if n >= (u32::MAX - 1) as usize {
        return false;
    }
    let m = merges as u128;
    let work: u128 = table
        .iter()
        .map(|(c, _)| c.len() as u128 * (c.len() as u128).min(m))
        .sum();
    work <= u128::from(WORK_PER_BYTE) * n as u128
}

/// Whether merge ids fit 16-bit symbols.
fn narrow(num_merges: usize) -> bool {
    256 + num_merges <= 1 << 16
}

type Heap = BinaryHeap<(i64, Reverse<u64>, u32)>;

/// Counts and occurrences of every pair seen so far. A pair's occurrence
/// list is final once the merge step that creates it ends (no new occurrence
/// of an existing pair ever appears: a pair holds the newest of its two
/// tokens, made in one step), so each list is an exact [`Occ`], filled from
/// the step's staging area.
struct PairSet {
    /// Pairs with their counts, exact occurrence lists and stale marks.
    all: Pairs<Occ>,
    /// The first pair made by the current step.
    step_first: u32,
    /// (pair, chunk) occurrences made by the current step, and the last chunk
    /// staged per new pair.
    staging: Vec<(u32, u32)>,
    staged_last: Vec<u32>,
    /// Per token and role in a step (left neighbour's old pair, its new pair,
    /// right neighbour's old pair, its new pair), the pair index found this
    /// step: the index is searched once per neighbour token, not once per
    /// occurrence. Entries of other steps are stale.
    near: [Vec<(u32, u32)>; 4],
    step: u32,
}

/// Roles of [`PairSet::near`].
const OLD_LEFT: usize = 0;
const NEW_LEFT: usize = 1;
const OLD_RIGHT: usize = 2;
const NEW_RIGHT: usize = 3;
/// No pair.
const ABSENT: u32 = u32::MAX;

impl PairSet {
    fn with_byte_pairs() -> Self {
        PairSet {
            all: Pairs::with_byte_pairs(),
            step_first: 65536,
            staging: Vec::new(),
            staged_last: Vec::new(),
            near: Default::default(),
            step: 0,
        }
    }

    /// Adds `w` to the count of (a, b), a pair holding this step's new token,
    /// occurring in `chunk`; returns its index and whether it is new.
    #[inline]
    fn add(&mut self, a: u32, b: u32, w: i64, chunk: u32) -> (u32, bool) {
        let (i, new) = self.all.intern(a, b);
        if new {
            self.staged_last.push(u32::MAX);
        }
        self.count(i, w, chunk);
        (i, new)
    }

    /// Adds `w` to the count of this step's pair `i` and stages `chunk` as
    /// an occurrence (once).
    #[inline]
    fn count(&mut self, i: u32, w: i64, chunk: u32) {
        self.all.counts[i as usize] += w;
        let last = &mut self.staged_last[(i - self.step_first) as usize];
        if *last != chunk {
            *last = chunk;
            self.staging.push((i, chunk));
        }
    }

    /// Takes `w` from the count of (a, b), the pair of neighbour token `t`
    /// in `role` (every adjacent pair was counted when it appeared, so
    /// absent pairs do not occur).
    #[inline]
    fn dec_near(&mut self, role: usize, t: u32, a: u32, b: u32, w: i64) {
        let (step, i) = self.near[role][t as usize];
        let i = if step == self.step {
            i
        } else {
            let i = self.all.lookup(a, b).unwrap_or(ABSENT);
            self.near[role][t as usize] = (self.step, i);
            i
        };
        if i != ABSENT {
            self.all.counts[i as usize] -= w;
        }
    }

    /// [`Self::add`] for the pair (a, b) of neighbour token `t` in `role`.
    #[inline]
    fn add_near(&mut self, role: usize, t: u32, a: u32, b: u32, w: i64, chunk: u32) -> (u32, bool) {
        let (step, i) = self.near[role][t as usize];
        if step != self.step {
            let (i, new) = self.add(a, b, w, chunk);
            self.near[role][t as usize] = (self.step, i);
            return (i, new);
        }
        self.count(i, w, chunk);
        (i, false)
    }

    /// Starts a merge step (pairs made from here on are this step's) with
    /// `tokens` tokens in the vocabulary.
    fn begin_step(&mut self, tokens: usize) {
        self.step += 1;
        for v in &mut self.near {
            v.resize(tokens, (0, 0));
        }
        self.step_first = self.all.pair_ab.len() as u32;
        self.staged_last.clear();
        self.staging.clear();
    }

    /// Ends a merge step: each new pair gets its exact occurrence list.
    fn end_step(&mut self) {
        let first = self.step_first as usize;
        let mut sizes = vec![0u32; self.all.pair_ab.len() - first];
        for &(i, _) in &self.staging {
            sizes[i as usize - first] += 1;
        }
        let mut lists: Vec<Occ> = sizes.iter().map(|&k| Occ::sized(k as usize)).collect();
        let mut filled = vec![0u32; lists.len()];
        for &(i, c) in &self.staging {
            let k = i as usize - first;
            lists[k].set(filled[k] as usize, c);
            filled[k] += 1;
        }
        for (k, list) in lists.into_iter().enumerate() {
            self.all.occ[first + k] = list;
        }
        self.staging.clear();
        if self.staging.capacity() > STAGING_KEEP {
            self.staging.shrink_to(STAGING_KEEP);
        }
    }
}

/// Staging entries kept between steps (the first merges stage millions).
const STAGING_KEEP: usize = 1 << 16;

#[inline]
fn key(chunk: u32, offset: u32) -> u64 {
    u64::from(chunk) << 32 | u64::from(offset)
}

#[derive(Clone, Copy)]
struct Chunk {
    start: u32,
    len: u32,
    freq: i64,
}

struct State<S> {
    syms: Vec<S>,
    /// Per chunk, together (visiting a chunk costs one cache miss for them).
    chunks: Vec<Chunk>,
    pairs: PairSet,
    /// Byte length of every token.
    tok_len: Vec<u32>,
    /// Symbols scanned so far, and occurrences merged.
    visits: u64,
    merged: u64,
    /// The key of each byte pair's first occurrence, found while counting
    /// (emptied once the heap holds them).
    byte_keys: Vec<u64>,
}

/// Learns merges from `table` with the compact loop (exactly the merges of
/// [`super::merge_loop::learn_merges`]); `owned` tables are freed once the symbols
/// are laid out. The caller checked [`fits`] (or tests force this loop).
pub fn learn(
    table: TableRef<'_>,
    opts: &MergeOptions,
    ctl: &Control,
    budget: Budget,
) -> Result<Learned> {
    let owned = matches!(table, TableRef::Owned(_));
    if narrow(opts.num_merges) {
        run(build::<u16>(table)?, opts, ctl, budget, owned)
    } else {
        run(build::<u32>(table)?, opts, ctl, budget, owned)
    }
}

/// A table lent to the loop, or given to it (then freed early).
pub enum TableRef<'a> {
    Borrowed(&'a ChunkTable),
    Owned(ChunkTable),
}

impl TableRef<'_> {
    /// The table, lent or owned.
    pub fn get(&self) -> &ChunkTable {
        match self {
            TableRef::Borrowed(t) => t,
            TableRef::Owned(t) => t,
        }
    }
}

fn build<S: Sym>(table: TableRef<'_>) -> Result<State<S>> {
    let t = table.get();
    let n = t.arena_len();
    let mut st = State {
        syms: Vec::with_capacity(n),
        chunks: Vec::with_capacity(t.len()),
        pairs: PairSet::with_byte_pairs(),
        tok_len: vec![1; 256],
        visits: 0,
        merged: 0,
        byte_keys: vec![u64::MAX; 65536],
    };
    let mut total: i64 = 0;
    for (chunk, c) in t.iter() {
        let w = i64::try_from(c)
            .ok()
            .filter(|w| total.checked_add(*w).is_some_and(|t| t < i64::MAX / 4));
        let w = w.ok_or_else(|| Error::training("chunk counts add up to more than 2^61"))?;
        total += w;
        st.chunks.push(Chunk {
            start: st.syms.len() as u32,
            len: chunk.len() as u32,
            freq: w,
        });
        st.syms.extend(chunk.iter().map(|&b| S::make(u32::from(b))));
    }
    drop(table);
    super::return_free_memory();
    // Occurrence lists of the byte pairs, sized exactly in a first pass.
    let mut last = vec![u32::MAX; 65536];
    let mut sizes = vec![0u32; 65536];
    for c in 0..st.chunks.len() {
        for w in st.chunk(c).windows(2) {
            let i = (w[0].get() << 8 | w[1].get()) as usize;
            if last[i] != c as u32 {
                last[i] = c as u32;
                sizes[i] += 1;
            }
        }
    }
    let mut lists: Vec<Occ> = sizes.iter().map(|&k| Occ::sized(k as usize)).collect();
    // sizes become fill counts
    sizes.fill(0);
    last.fill(u32::MAX);
    for c in 0..st.chunks.len() {
        let f = st.chunks[c].freq;
        let (s, e) = st.bounds(c);
        for j in s..e.saturating_sub(1) {
            let i = (st.syms[j].get() << 8 | st.syms[j + 1].get()) as usize;
            st.pairs.all.counts[i] += f;
            if last[i] != c as u32 {
                last[i] = c as u32;
                if sizes[i] == 0 {
                    st.byte_keys[i] = key(c as u32, (j - s) as u32);
                }
                lists[i].set(sizes[i] as usize, c as u32);
                sizes[i] += 1;
            }
        }
    }
    for (i, list) in lists.into_iter().enumerate() {
        st.pairs.all.occ[i] = list;
    }
    Ok(st)
}

impl<S: Sym> State<S> {
    #[inline]
    fn bounds(&self, c: usize) -> (usize, usize) {
        let k = &self.chunks[c];
        (k.start as usize, k.start as usize + k.len as usize)
    }

    #[inline]
    fn chunk(&self, c: usize) -> &[S] {
        let (s, e) = self.bounds(c);
        &self.syms[s..e]
    }

    /// Byte offset of symbol `j` in the chunk starting at `s` (its new
    /// tokens up to `j` are written).
    fn offset(&self, s: usize, j: usize) -> u32 {
        self.syms[s..j]
            .iter()
            .map(|t| self.tok_len[t.get() as usize])
            .sum()
    }

    /// Byte offset of the first (a, b) in chunk `c`, if any.
    fn find(&mut self, c: u32, a: u32, b: u32) -> Option<u32> {
        let (s, e) = self.bounds(c as usize);
        let (sa, sb) = (S::make(a), S::make(b));
        let Some(at) = self.syms[s..e]
            .windows(2)
            .position(|p| p[0] == sa && p[1] == sb)
        else {
            self.visits += (e - s) as u64;
            return None;
        };
        self.visits += 2 * at as u64 + 1;
        Some(self.offset(s, s + at))
    }

    /// Whether the work so far passed the budget (see [`BUDGET_PER_BYTE`]).
    fn over_budget(&self) -> bool {
        self.visits > BUDGET_PER_BYTE * self.syms.len() as u64 + BUDGET_PER_MERGED * self.merged
    }

    /// The chunk table the loop started from: every chunk's tokens spelled
    /// out in bytes, with its count, in the same order.
    fn to_table(&self, merges: &[(Rank, Rank)]) -> Result<ChunkTable> {
        let tokens = spell_merges(merges)?;
        let mut table = ChunkTable::with_capacity(self.chunks.len(), self.syms.len());
        let mut buf = Vec::new();
        for c in 0..self.chunks.len() {
            buf.clear();
            for t in self.chunk(c) {
                buf.extend_from_slice(&tokens[t.get() as usize]);
            }
            table.add(&buf, self.chunks[c].freq as u64)?;
        }
        Ok(table)
    }

    /// The key of pair `i`'s first occurrence, dropping stale chunks before it.
    fn first_key(&mut self, i: u32) -> Option<u64> {
        let (a, b) = self.pairs.all.pair_ab[i as usize];
        let mut h = self.pairs.all.head[i as usize] as usize;
        let found = loop {
            let &c = self.pairs.all.occ[i as usize].get(h)?;
            if let Some(off) = self.find(c, a, b) {
                break key(c, off);
            }
            h += 1;
        };
        self.pairs.all.head[i as usize] = h as u32;
        Some(found)
    }

    /// Lowers the floor from `old` to `new`: pushes every made pair counted
    /// in `[new, old)` (byte pairs are all in the heap from the start).
    /// Returns `new`.
    fn refill(
        &mut self,
        heap: &mut Heap,
        opts: &MergeOptions,
        old: i64,
        new: i64,
        budget: Budget,
    ) -> i64 {
        for i in 65536..self.pairs.all.pair_ab.len() as u32 {
            if budget == Budget::GiveUp && self.over_budget() {
                break; // the caller gives up too
            }
            let cnt = self.pairs.all.counts[i as usize];
            let (x, y) = self.pairs.all.pair_ab[i as usize];
            if (new..old).contains(&cnt) && !too_long(opts, &self.tok_len, x, y) {
                // key 0 ranks the pair no lower than its true key: the true
                // one is found if it comes to the top (many never do)
                heap.push((cnt, Reverse(0), i));
            }
        }
        new
    }

    /// The heap to start from: every byte pair that occurs, keyed by its
    /// first occurrence (all of them, whatever the floor).
    fn byte_pair_heap(&mut self, opts: &MergeOptions) -> Heap {
        let mut heap: Heap = BinaryHeap::new();
        for (i, k) in std::mem::take(&mut self.byte_keys).into_iter().enumerate() {
            let cnt = self.pairs.all.counts[i];
            if cnt > 0 && !too_long(opts, &self.tok_len, i as u32 >> 8, i as u32 & 255) {
                heap.push((cnt, Reverse(k), i as u32));
            }
        }
        heap
    }

    /// Pushes the pairs a merge made (`created`: pair and key of its first
    /// occurrence) whose count is at the floor or above.
    fn push_created(
        &self,
        heap: &mut Heap,
        opts: &MergeOptions,
        created: &[(u32, u64)],
        floor: i64,
    ) {
        for &(t, k) in created {
            let (x, y) = self.pairs.all.pair_ab[t as usize];
            let cnt = self.pairs.all.counts[t as usize];
            if cnt >= floor && !too_long(opts, &self.tok_len, x, y) {
                heap.push((cnt, Reverse(k), t));
            }
        }
    }

    /// Merges every occurrence of pair `best` = (a, b) into `n`, chunk by
    /// chunk, moving the neighbours' counts from the old tokens to the new
    /// one; `created` receives each pair made here with the key of its first
    /// occurrence so far.
    fn merge(&mut self, best: u32, n: u32, created: &mut Vec<(u32, u64)>) {
        let (a, b) = self.pairs.all.pair_ab[best as usize];
        let list = std::mem::take(&mut self.pairs.all.occ[best as usize]);
        self.pairs.begin_step(self.tok_len.len());
        let from = (self.pairs.all.head[best as usize] as usize).min(list.len());
        let (sa, sb, sn) = (S::make(a), S::make(b), S::make(n));
        let todo = &list[from..];
        for (k, &c) in todo.iter().enumerate() {
            // the chunks ahead: their entries, then their symbols
            if let Some(&d) = todo.get(k + 16) {
                prefetch(&self.chunks[d as usize]);
            }
            if let Some(&d) = todo.get(k + 8) {
                if let Some(x) = self.syms.get(self.chunks[d as usize].start as usize) {
                    prefetch(x);
                }
            }
            let (s, e) = self.bounds(c as usize);
            self.visits += (e - s) as u64;
            // a read-only look first: the chunk may no longer hold the pair,
            // and the tokens before its first occurrence stay as they are
            let Some(at) = self.syms[s..e]
                .windows(2)
                .position(|p| p[0] == sa && p[1] == sb)
            else {
                continue;
            };
            let f = self.chunks[c as usize].freq;
            let (mut r, mut w) = (s + at, s + at);
            // the byte offset of symbol w, kept as w moves
            let mut off = self.offset(s, w);
            while r < e {
                if r + 1 < e && self.syms[r] == sa && self.syms[r + 1] == sb {
                    if w > s {
                        let x = self.syms[w - 1].get();
                        self.pairs.dec_near(OLD_LEFT, x, x, a, f);
                        let (i, new) = self.pairs.add_near(NEW_LEFT, x, x, n, f, c);
                        if new {
                            created.push((i, key(c, off - self.tok_len[x as usize])));
                        }
                    }
                    self.pairs.all.counts[best as usize] -= f;
                    if r + 2 < e {
                        let y = self.syms[r + 2].get();
                        self.pairs.dec_near(OLD_RIGHT, y, b, y, f);
                        let (i, new) = self.pairs.add_near(NEW_RIGHT, y, n, y, f, c);
                        if new {
                            created.push((i, key(c, off)));
                        }
                    }
                    self.syms[w] = sn;
                    self.merged += 1;
                    r += 2;
                } else {
                    self.syms[w] = self.syms[r];
                    r += 1;
                }
                off += self.tok_len[self.syms[w].get() as usize];
                w += 1;
            }
            self.chunks[c as usize].len = (w - s) as u32;
        }
        self.pairs.all.head[best as usize] = 0;
        self.pairs.end_step();
    }
}

fn run<S: Sym>(
    mut st: State<S>,
    opts: &MergeOptions,
    ctl: &Control,
    budget: Budget,
    owned: bool,
) -> Result<Learned> {
    let mut heap = st.byte_pair_heap(opts);
    let give_up = |st: &State<S>, merges: &[(Rank, Rank)]| -> Result<Option<Learned>> {
        if budget == Budget::GiveUp && st.over_budget() {
            Ok(Some(Learned::OverBudget(
                owned.then(|| st.to_table(merges)).transpose()?,
            )))
        } else {
            Ok(None)
        }
    };
    let mut merges: Vec<(Rank, Rank)> = Vec::new();
    let mut created: Vec<(u32, u64)> = Vec::new();
    let min_freq = i64::try_from(opts.min_frequency).unwrap_or(i64::MAX);
    // Pairs made with a count below `floor` wait outside the heap (most pairs
    // never come near the top); when the best exact entry falls below the
    // floor, the floor falls and the pairs counted between the two floors are
    // pushed, so every pair that could win is in the heap when one is chosen.
    let lowest = min_freq.max(1);
    let mut floor = heap.peek().map_or(lowest, |e| (e.0 / 2).max(lowest));
    while merges.len() < opts.num_merges {
        ctl.check()?;
        // Pop until an entry with exact values comes up.
        let best = loop {
            if let Some(out) = give_up(&st, &merges)? {
                return Ok(out);
            }
            let Some((c, Reverse(k), i)) = heap.pop() else {
                if floor > lowest {
                    floor = st.refill(&mut heap, opts, floor, lowest, budget);
                    continue;
                }
                break None;
            };
            let cur = st.pairs.all.counts[i as usize];
            if cur <= 0 {
                continue;
            }
            if cur != c {
                heap.push((cur, Reverse(k), i));
                continue;
            }
            let Some(first) = st.first_key(i) else {
                continue;
            };
            if first != k {
                heap.push((cur, Reverse(first), i));
                continue;
            }
            if cur < floor && floor > lowest {
                heap.push((cur, Reverse(first), i));
                floor = st.refill(
                    &mut heap,
                    opts,
                    floor,
                    cur.min(floor / 2).max(lowest),
                    budget,
                );
                continue;
            }
            break Some((i, cur));
        };
        let Some((best, count)) = best else { break };
        if count < min_freq {
            break;
        }
        let (a, b) = st.pairs.all.pair_ab[best as usize];
        let n = (256 + merges.len()) as u32;
        merges.push((a, b));
        st.tok_len
            .push(st.tok_len[a as usize] + st.tok_len[b as usize]);
        created.clear();
        st.merge(best, n, &mut created);
        debug_assert_eq!(st.pairs.all.counts[best as usize], 0);
        st.push_created(&mut heap, opts, &created, floor);
        ctl.merges_done
            .store(merges.len() as u64, Ordering::Relaxed);
    }
    Ok(Learned::Merges(merges))
}
