//! One merge step of [`super::pairs::merge_pair`] on several threads, for
//! pairs with many occurrences (the first merges of superword training visit
//! millions of nodes scattered over gigabytes).
//!
//! The occurrence list is cut into parts at chunk boundaries, so each part's
//! nodes lie in a range of their own: the threads rewrite the nodes of their
//! parts (one chunk is always in one part, left to right, so overlapping
//! runs merge as in the serial step) and note each merged occurrence. The
//! pair table is then updated from those notes on one thread, parts in
//! order: the same updates in the same order as the serial step, so counts,
//! occurrence lists and new pair indices are identical.
//!
//! Cost: the node work (cache misses, most of a large step) is shared by the
//! threads; the notes cost 24 bytes per merged occurrence while the step runs.

use std::sync::Mutex;

use super::pairs::{Node, Pairs, DEAD, NONE, PREFETCH_AHEAD};
use crate::error::Result;
use crate::hint::prefetch;
use crate::parallel;

/// Occurrences below this many are merged on the calling thread: waking
/// the pool costs more than the step. (Tests take every step here.)
pub(super) const PAR_MIN: usize = if cfg!(test) { 1 } else { 1 << 16 };

/// One merged occurrence: its node, the node before it (`NONE`: none), the
/// tokens before and after the pair (`DEAD`: none) and its chunk's weight.
#[derive(Clone, Copy)]
struct Note {
    p: u32,
    l: u32,
    x: u32,
    y: u32,
    w: i64,
}

/// [`super::pairs::merge_pair`] on `threads` threads (see the module docs);
/// `starts[c]` is the first node of chunk `c`. Same result, same calls of
/// `on_add` in the same order.
#[allow(clippy::too_many_arguments)]
pub(super) fn merge_pair_par(
    nodes: &mut [Node],
    freqs: &[i64],
    starts: &[u32],
    pairs: &mut Pairs,
    (best, new_id): (u32, u32),
    threads: usize,
    mut on_add: impl FnMut(u32, bool, i64),
) -> Result<i64> {
    let (a, b) = pairs.pair_ab[best as usize];
    let list = std::mem::take(&mut pairs.occ[best as usize]);
    let from = (pairs.head[best as usize] as usize).min(list.len());
    let list = &list[from..];
    let parts = cut(nodes, starts, list, 2 * threads);
    let notes = parallel::map_par(&parts, Some(threads), |m| {
        let mut g = m.lock().unwrap_or_else(|e| e.into_inner());
        let (part, base, occ) = &mut *g;
        Ok(merge_part(part, *base, occ, (a, b, new_id), freqs))
    })?;
    drop(parts);
    let mut merged = 0i64;
    for n in notes.iter().flatten() {
        if n.l != NONE {
            pairs.dec(n.x, a, n.w);
        }
        pairs.counts[best as usize] -= n.w;
        if n.y != DEAD {
            pairs.dec(b, n.y, n.w);
        }
        merged += n.w;
        if n.l != NONE {
            let (i, new, before) = pairs.add(n.x, new_id, n.w, n.l);
            on_add(i, new, before);
        }
        if n.y != DEAD {
            let (i, new, before) = pairs.add(new_id, n.y, n.w, n.p);
            on_add(i, new, before);
        }
    }
    pairs.head[best as usize] = 0;
    Ok(merged)
}

/// A part of the step: its nodes, the index of the first, its occurrences.
type Part<'a> = Mutex<(&'a mut [Node], u32, &'a [u32])>;

/// `list` cut into at most `k` parts at chunk boundaries, each with the
/// nodes of its chunks.
fn cut<'a>(nodes: &'a mut [Node], starts: &[u32], list: &'a [u32], k: usize) -> Vec<Part<'a>> {
    let chunk_of = |nodes: &[Node], i: usize| nodes[list[i] as usize].chunk;
    let mut bounds = vec![0usize];
    for j in 1..k {
        let mut c = (list.len() * j / k).max(bounds[bounds.len() - 1]);
        while c > 0 && c < list.len() && chunk_of(nodes, c) == chunk_of(nodes, c - 1) {
            c += 1;
        }
        if c > bounds[bounds.len() - 1] && c < list.len() {
            bounds.push(c);
        }
    }
    let node_cuts: Vec<u32> = bounds[1..]
        .iter()
        .map(|&c| starts[chunk_of(nodes, c) as usize])
        .collect();
    bounds.push(list.len());
    let mut parts = Vec::with_capacity(bounds.len() - 1);
    let mut rest = nodes;
    let mut base = 0u32;
    for (j, w) in bounds.windows(2).enumerate() {
        let end = node_cuts
            .get(j)
            .copied()
            .unwrap_or(base + rest.len() as u32);
        let (part, tail) = std::mem::take(&mut rest).split_at_mut((end - base) as usize);
        rest = tail;
        parts.push(Mutex::new((part, base, &list[w[0]..w[1]])));
        base = end;
    }
    parts
}

/// The node work of one part (nodes `base..` in `part`): every still-valid
/// occurrence of `(a, b)` becomes `new_id`, left to right.
fn merge_part(
    part: &mut [Node],
    base: u32,
    occ: &[u32],
    (a, b, new_id): (u32, u32, u32),
    freqs: &[i64],
) -> Vec<Note> {
    let at = |p: u32| (p - base) as usize;
    // a branch-free pass first, as in the serial step: independent loads
    let mut kept = occ.to_vec();
    let mut n = 0usize;
    for &p in occ {
        kept[n] = p;
        n += usize::from(part[at(p)].tok == a);
    }
    kept.truncate(n);
    let mut notes = Vec::with_capacity(kept.len());
    for (k, &p) in kept.iter().enumerate() {
        if let Some(&far) = kept.get(k + PREFETCH_AHEAD) {
            prefetch(part.as_ptr().wrapping_add(at(far)));
        }
        if let Some(n) = kept
            .get(k + PREFETCH_AHEAD / 2)
            .and_then(|&p| part.get(at(p)))
        {
            prefetch(freqs.as_ptr().wrapping_add(n.chunk as usize));
        }
        let node = part[at(p)];
        if node.tok != a || node.next == NONE || part[at(node.next)].tok != b {
            continue;
        }
        let (l, q) = (node.prev, node.next);
        let r = part[at(q)].next;
        let x = if l != NONE { part[at(l)].tok } else { DEAD };
        let y = if r != NONE { part[at(r)].tok } else { DEAD };
        part[at(p)].tok = new_id;
        part[at(p)].next = r;
        part[at(q)].tok = DEAD;
        if r != NONE {
            part[at(r)].prev = p;
        }
        notes.push(Note {
            p,
            l,
            x,
            y,
            w: freqs[node.chunk as usize],
        });
    }
    notes
}

#[cfg(test)]
mod tests {
    use crate::train::compact::TableRef;
    use crate::train::from_tokens::extend_merges;
    use crate::train::{ChunkTable, Control, ExtendBounds, MergeOptions};
    use crate::vocab::Vocab;

    /// Chunks of few symbols (long overlapping runs, many ties), some
    /// repeated, spaces included so that the word bound matters.
    fn tables() -> Vec<ChunkTable> {
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        (0..40)
            .map(|round| {
                let mut t = ChunkTable::new();
                for _ in 0..(1 + next() % (20 + 30 * round)) {
                    let len = 1 + (next() % 40) as usize;
                    let chunk: Vec<u8> =
                        (0..len).map(|_| b"aab c."[(next() % 6) as usize]).collect();
                    t.add(&chunk, 1 + next() % 4).unwrap();
                }
                t
            })
            .collect()
    }

    #[test]
    fn merges_do_not_depend_on_the_thread_count() {
        // a base holding "aa" and "ab": stage-2 style ids above the bytes
        let mut toks: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        toks.push(b"aa".to_vec());
        toks.push(b"ab".to_vec());
        let base = Vocab::new(toks).unwrap();
        let opts = MergeOptions {
            num_merges: 60,
            min_frequency: 1,
            max_token_length: None,
        };
        let ctl = Control::default();
        for (r, t) in tables().iter().enumerate() {
            let words = if r % 2 == 0 { Some(2) } else { None };
            let bounds = ExtendBounds {
                max_words: words,
                memory_limit: None,
            };
            let one = extend_merges(
                &base,
                TableRef::Borrowed(t),
                258,
                &opts,
                bounds,
                Some(1),
                &ctl,
            )
            .unwrap();
            assert!(!one.is_empty());
            for threads in [2, 3] {
                let owned = TableRef::Owned(t.clone());
                let many =
                    extend_merges(&base, owned, 258, &opts, bounds, Some(threads), &ctl).unwrap();
                assert_eq!(one, many, "table {r}, {threads} threads");
            }
        }
    }
}
