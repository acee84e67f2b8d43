//! The pair table that both merge loops share: the byte-position loop of
//! [`super::positions`] and the id-sequence loops of [`super::from_tokens`].
//!
//! Every position of the corpus is a [`Node`] in a doubly linked list per
//! chunk. A pair (a, b) has an index: `a * 256 + b` for two bytes, an entry in
//! `index` otherwise. Per pair the table keeps its weighted count and its
//! occurrences (node positions, in the order the tie-break rule reads them),
//! with `head` skipping occurrences already known to be stale. A count only
//! ever falls for an existing pair, so a heap entry never ranks a pair below
//! its true count.

use rustc_hash::FxHashMap;

use crate::hint::prefetch;

/// How many occurrences ahead a merge step asks for the node it will visit.
pub(super) const PREFETCH_AHEAD: usize = 16;

/// No neighbour.
pub(super) const NONE: u32 = u32::MAX;
/// A position whose token was merged into the one on its left.
pub(super) const DEAD: u32 = u32::MAX;

/// One corpus position: the token starting there (or `DEAD`), its neighbours
/// in the chunk and the chunk's index. Kept together so that visiting an
/// occurrence costs one cache miss, not four (the arena is far larger than the
/// caches and occurrences are visited in scattered order).
#[derive(Clone, Copy)]
pub(super) struct Node {
    pub tok: u32,
    pub next: u32,
    pub prev: u32,
    pub chunk: u32,
}

/// Whether node `p` still starts an occurrence of pair (a, b).
#[inline]
pub(super) fn valid(nodes: &[Node], p: u32, a: u32, b: u32) -> bool {
    let n = &nodes[p as usize];
    n.tok == a && n.next != NONE && nodes[n.next as usize].tok == b
}

/// Counts and occurrences of every pair seen so far (see the module docs).
/// `L` is a pair's occurrence list: a growable `Vec` here, an exact boxed
/// slice in the compact loop.
pub(super) struct Pairs<L = Vec<u32>> {
    pub pair_ab: Vec<(u32, u32)>,
    pub counts: Vec<i64>,
    pub occ: Vec<L>,
    pub head: Vec<u32>,
    /// Pairs with an id >= 256 (byte pairs are indexed `a * 256 + b`).
    pub index: FxHashMap<u64, u32>,
}

impl<L: Default + Clone> Pairs<L> {
    /// The table with the 65,536 byte pairs at their fixed indices, all unseen.
    pub fn with_byte_pairs() -> Self {
        Pairs {
            pair_ab: (0..65536u32).map(|i| (i >> 8, i & 255)).collect(),
            counts: vec![0; 65536],
            occ: vec![L::default(); 65536],
            head: vec![0; 65536],
            index: FxHashMap::default(),
        }
    }

    #[inline]
    pub fn lookup(&self, a: u32, b: u32) -> Option<u32> {
        if a < 256 && b < 256 {
            Some(a * 256 + b)
        } else {
            self.index
                .get(&(u64::from(a) << 32 | u64::from(b)))
                .copied()
        }
    }

    /// The index of (a, b), appended with no count and no occurrences when
    /// it is new; and whether it is new.
    #[inline]
    pub fn intern(&mut self, a: u32, b: u32) -> (u32, bool) {
        if let Some(i) = self.lookup(a, b) {
            return (i, false);
        }
        let i = self.pair_ab.len() as u32;
        self.pair_ab.push((a, b));
        self.counts.push(0);
        self.occ.push(L::default());
        self.head.push(0);
        self.index.insert(u64::from(a) << 32 | u64::from(b), i);
        (i, true)
    }

    /// Takes `w` from the count of (a, b).
    #[inline]
    pub fn dec(&mut self, a: u32, b: u32, w: i64) {
        // Every adjacent pair was counted when it appeared, so it is present.
        if let Some(i) = self.lookup(a, b) {
            self.counts[i as usize] -= w;
        }
    }
}

impl Pairs {
    /// The first valid occurrence of pair `i`, dropping stale entries before it.
    pub fn first_valid(&mut self, nodes: &[Node], i: u32) -> Option<u32> {
        let (a, b) = self.pair_ab[i as usize];
        let mut h = self.head[i as usize] as usize;
        let found = loop {
            match self.occ[i as usize].get(h) {
                None => break None,
                Some(&p) if valid(nodes, p, a, b) => break Some(p),
                Some(_) => h += 1,
            }
        };
        self.head[i as usize] = h as u32;
        found
    }

    /// Adds `w` to the count of (a, b) with an occurrence at `pos`; returns the
    /// pair's index, whether the pair is new, and its count before.
    #[inline]
    pub fn add(&mut self, a: u32, b: u32, w: i64, pos: u32) -> (u32, bool, i64) {
        let (i, new) = self.intern(a, b);
        let before = self.counts[i as usize];
        self.counts[i as usize] += w;
        self.occ[i as usize].push(pos);
        (i, new, before)
    }
}

/// Asks for what a merge step visits a few occurrences ahead of `list[k]`:
/// a node, and the weight of the node's chunk once that node is in (the
/// first pass's loads are out of the cache on a long list, and the weights,
/// one per chunk, are spread over a large array).
#[inline(always)]
pub(super) fn prefetch_ahead(nodes: &[Node], freqs: &[i64], list: &[u32], k: usize) {
    if let Some(&far) = list.get(k + PREFETCH_AHEAD) {
        prefetch(nodes.as_ptr().wrapping_add(far as usize));
    }
    if let Some(n) = list
        .get(k + PREFETCH_AHEAD / 2)
        .and_then(|&p| nodes.get(p as usize))
    {
        prefetch(freqs.as_ptr().wrapping_add(n.chunk as usize));
    }
}

/// Merges every still-valid occurrence of pair `best` = (a, b) into `new_id`,
/// left to right: the left node takes `new_id`, the right one dies, and the
/// counts of the neighbouring pairs move from the old tokens to the new one.
/// `on_add(index, new, before)` is called for every pair occurrence the merge
/// creates, with the pair's index, whether the pair is new and its count
/// before. Returns the total weight merged (tokens saved). Cost: the length
/// of the pair's occurrence list.
pub(super) fn merge_pair(
    nodes: &mut [Node],
    freqs: &[i64],
    pairs: &mut Pairs,
    best: u32,
    new_id: u32,
    mut on_add: impl FnMut(u32, bool, i64),
) -> i64 {
    let (a, b) = pairs.pair_ab[best as usize];
    let mut list = std::mem::take(&mut pairs.occ[best as usize]);
    let from = (pairs.head[best as usize] as usize).min(list.len());
    // First a branch-free pass that keeps the positions still holding `a`:
    // its loads are independent, so the CPU overlaps their cache misses
    // (this pass is most of the time of a merge on a large table).
    let mut kept = 0usize;
    for i in from..list.len() {
        let p = list[i];
        list[kept] = p;
        kept += usize::from(nodes[p as usize].tok == a);
    }
    list.truncate(kept);
    let mut merged = 0i64;
    for (k, &p) in list.iter().enumerate() {
        prefetch_ahead(nodes, freqs, &list, k);
        if !valid(nodes, p, a, b) {
            continue;
        }
        let node = nodes[p as usize];
        let w = freqs[node.chunk as usize];
        let (l, q) = (node.prev, node.next);
        let r = nodes[q as usize].next;
        let x = if l != NONE {
            nodes[l as usize].tok
        } else {
            DEAD
        };
        let y = if r != NONE {
            nodes[r as usize].tok
        } else {
            DEAD
        };
        if l != NONE {
            pairs.dec(x, a, w);
        }
        pairs.counts[best as usize] -= w;
        if r != NONE {
            pairs.dec(b, y, w);
        }
        merged += w;
        nodes[p as usize].tok = new_id;
        nodes[p as usize].next = r;
        nodes[q as usize].tok = DEAD;
        if r != NONE {
            nodes[r as usize].prev = p;
        }
        if l != NONE {
            let (i, new, before) = pairs.add(x, new_id, w, l);
            on_add(i, new, before);
        }
        if r != NONE {
            let (i, new, before) = pairs.add(new_id, y, w, p);
            on_add(i, new, before);
        }
    }
    pairs.head[best as usize] = 0;
    merged
}
