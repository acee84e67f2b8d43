//! The merge step: one pre-tokenized piece of bytes -> ranks.
//!
//! Semantics (tiktoken's, and `bytepair.reference.encode_piece`): start from single
//! bytes; repeatedly merge the adjacent pair whose concatenated bytes are the
//! lowest-ranked token, leftmost on ties; stop when no adjacent pair is a token.
//!
//! These paths give the same result (tested against each other and the reference):
//! - a piece that is itself a token maps straight to its rank (one hash lookup);
//! - short pieces use a scan over a small array of parts, tiktoken-style: each
//!   round finds the minimum and recomputes the two neighbouring pair ranks.
//!   O(n·m) for n bytes and m merges, which is fastest for the short pieces that
//!   make up almost all real text; the piece cache's misses take the same scan
//!   with pair ranks read as ranks of byte ranges ([`encode_short_by_bytes`]);
//! - longer pieces use a binary heap of candidate pairs over a linked list of
//!   parts, with lazy deletion ([`encode_piece_heap`]): O(n log n);
//! - longer pieces made of a few runs of one byte ('x' * N, N spaces) are
//!   merged as runs ([`encode_piece_runs`]): each round merges every pair of
//!   the lowest rank in one sweep over the runs, in time independent of N;
//!   a round that the greedy rule would order otherwise gives up, and the
//!   piece takes one of the paths below;
//! - long repetitive pieces of [`FLAT_MIN`] bytes or more ('aA' * N, a
//!   repeated syllable) first try a few greedy rounds over the flat sequence
//!   ([`encode_piece_flat_runs`]) until it collapses into runs;
//! - other long pieces that are repetitive (a repeated syllable; see
//!   `is_repetitive`) use a queue of candidate pairs instead: a FIFO per rank
//!   plus a small set of the ranks in play ([`encode_piece_queue`]). Time per
//!   byte then stays within ~2x from 10 KB to 10 MB, where the all-pairs heap
//!   grew 3-5x from cache misses once it outgrew the caches;
//! - other long pieces are first cut wherever no token can straddle
//!   ([`crate::vocab::cuts`], [`encode_piece_split`]) and each part takes the scan,
//!   queue or heap: one 10 MB word of random Hangul becomes short parts merged
//!   in cache (10 MB / 10 KB time per byte 0.9-1.5x; 2.6-4.1x with the heap
//!   alone).
//!
//! Performance notes (release build, 2 MB corpus excerpts, one thread, CPU
//! time on a shared 2-core VM; see benches/RESULTS.md for the peer comparison):
//! - the whole-piece lookup answers 94% of English pieces (cl100k_base) with one
//!   probe; Korean (o200k_base) only ~48%, so the merge loop matters there;
//! - merging looks pairs up in a `(left, right) -> rank` map over all
//!   two-token splits of every token (446 k entries for o200k_base, built at
//!   load): a 64-bit probe per candidate instead of hashing a byte slice
//!   (`rank(&piece[a..b])`, tiktoken's way, ~14 MB/cpu-s on Korean/o200k),
//!   ~2x on that input;
//! - the scan works in a stack array: a `Vec` per short piece would cost ~10%
//!   in malloc/free;
//! - the per-thread memo of non-token pieces (`cache.rs`) is what brings Korean
//!   from ~25 to ~65-100 MB/cpu-s in steady state;
//! - the scan path beats the heap for short pieces; above [`SHORT_PIECE_MAX`]
//!   the heap wins and the scan's O(n²) worst case appears.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rustc_hash::FxHashMap;

use crate::vocab::Vocab;
use crate::Rank;

/// Pieces longer than this (in bytes) take the heap or queue path.
pub const SHORT_PIECE_MAX: usize = 128;

const NONE: Rank = crate::vocab::NONE_RANK;

/// Encodes one piece and appends its ranks to `out`, choosing the fastest exact
/// path (whole-token lookup, short scan, heap or queue).
///
/// Precondition: `vocab` holds all 256 single bytes (guaranteed by [`Vocab::new`]).
/// Complexity: O(n log n) in the piece length `n`.
#[inline]
pub fn encode_piece(piece: &[u8], vocab: &Vocab, out: &mut Vec<Rank>) {
    if let Some(r) = vocab.rank(piece) {
        out.push(r);
        return;
    }
    encode_piece_parts(piece, vocab, out);
}

/// [`encode_piece`] for a piece already known not to be a single token: the
/// short scan, the queue, or the split (then the heap), by length and shape.
#[inline]
pub fn encode_piece_parts(piece: &[u8], vocab: &Vocab, out: &mut Vec<Rank>) {
    merge_by_shape(piece, vocab, out, true);
}

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
            merge_by_shape(&piece[start..p], vocab, out, false);
            start = p;
        }
    }
    merge_by_shape(&piece[start..], vocab, out, false);
}

/// The merge path for a piece by its length and shape: the short scan; for a
/// long piece the queue when it is repetitive, else the split (when `split`)
/// or the heap.
#[inline]
fn merge_by_shape(piece: &[u8], vocab: &Vocab, out: &mut Vec<Rank>, split: bool) {
    if piece.len() <= SHORT_PIECE_MAX {
        encode_piece_scan(piece, vocab, out);
    } else if encode_piece_runs(piece, vocab, out) {
        // few runs of one byte each ('x' * N, N spaces): merged as runs
    } else if is_repetitive(piece) {
        if piece.len() < FLAT_MIN || !encode_piece_flat_runs(piece, vocab, out) {
            encode_piece_queue(piece, vocab, out);
        }
    } else if split {
        encode_piece_split(piece, vocab, out);
    } else {
        encode_piece_heap(piece, vocab, out);
    }
}

/// Whether a long piece uses few distinct byte pairs (at most 256 of the
/// 65,536): 'x' * N, runs of spaces, a repeated syllable. There the same few
/// ranks come up again and again and the queue's FIFO per rank is linear
/// (measured: flat within 1.5-2x from 10 KB to 10 MB, and 2x faster than the
/// heap at 10 KB), while the all-pairs heap grows 3-5x per byte. Text with
/// many distinct pairs (random base64 or syllables) keeps the heap: nearly
/// every rank is distinct there, so the queue degenerates into a heap of ranks
/// plus bookkeeping, up to 5x slower at 10 KB-1 MB (gpt2) and only 1.0-1.4x
/// faster at 10 MB (cl100k / o200k).
fn is_repetitive(piece: &[u8]) -> bool {
    let mut seen = vec![0u64; 1 << 10];
    let mut distinct = 0usize;
    for w in piece.windows(2) {
        let k = (w[0] as usize) << 8 | w[1] as usize;
        let bit = 1u64 << (k & 63);
        if seen[k >> 6] & bit == 0 {
            seen[k >> 6] |= bit;
            distinct += 1;
            if distinct > 256 {
                return false;
            }
        }
    }
    true
}

/// At most this many runs of one byte in a piece for [`encode_piece_runs`],
/// and in its sequence while merging (it gives up beyond).
const MAX_RUNS: usize = 64;

/// A piece made of a few runs of one byte each ('x' * N, N spaces, a line of
/// '=' after a space), merged on its run-length form: the sequence of parts
/// is kept as runs (token, count), and each round merges every pair of the
/// lowest rank in one left-to-right sweep over the runs. Time O(rounds x
/// runs) plus the output, whatever N: the queue took 7-9 ns per byte of a
/// run of spaces at 10 KB-1 MB (gpt2) and 17-25 at 10 MB, once its 16 bytes
/// per byte left the caches.
///
/// Exactness. The greedy rule merges the lowest-ranked pair, leftmost first.
/// With r the lowest rank in the sequence, the sweep merges the pairs of rank
/// r from left to right, which is what the rule does as long as no merge
/// creates a pair ranked below r (one ranked r cannot appear: it would spell
/// more bytes than token r). So every merge checks the pairs it creates: with
/// the part before it (already final in this sweep) and with the part after it
/// in the sequence as it stood (the sweep has not reached it yet). When one is
/// below r, or the runs grow past [`MAX_RUNS`], nothing has been written: the
/// function returns false and the caller takes another path. The bundled
/// vocabularies pass the checks on every run of an ASCII character the tests
/// try (`tests/encode/test_merge_paths.py`); the tests also feed it shuffled
/// vocabularies that fail them.
pub fn encode_piece_runs(piece: &[u8], vocab: &Vocab, out: &mut Vec<Rank>) -> bool {
    match as_runs(piece.iter().map(|&b| vocab.byte_rank(b))) {
        Some(runs) => merge_runs(runs, vocab, out),
        None => false,
    }
}

/// The run-length form of a sequence of parts, or None past [`MAX_RUNS`] runs.
fn as_runs(parts: impl Iterator<Item = Rank>) -> Option<Vec<(Rank, usize)>> {
    let mut runs: Vec<(Rank, usize)> = Vec::new();
    for t in parts {
        match runs.last_mut() {
            Some((u, c)) if *u == t => *c += 1,
            _ => {
                if runs.len() == MAX_RUNS {
                    return None;
                }
                runs.push((t, 1));
            }
        }
    }
    Some(runs)
}

/// Pieces at least this long that alternate bytes (`'aA' * N`, a repeated
/// syllable) try [`encode_piece_flat_runs`] before the queue: below it the
/// queue's 16 bytes per byte stay in the caches, and it is faster.
pub const FLAT_MIN: usize = 1 << 21;

/// At most this many flat rounds in [`encode_piece_flat_runs`].
const FLAT_ROUNDS: usize = 4;

/// The prefix of a long piece that [`encode_piece_flat_runs`] tries first.
const FLAT_PROBE: usize = 1 << 16;

/// A long repetitive piece whose bytes alternate ('aA' * N, '\r\n' * N, a
/// repeated syllable): a few rounds of the greedy rule over the flat sequence
/// of parts (each round one streaming pass, with the checks of
/// [`sweep_runs`]), until its run-length form has at most [`MAX_RUNS`] runs
/// ('aA' * N becomes 'aA' N times); the runs then finish it as in
/// [`encode_piece_runs`]. False, having written nothing, when the sequence does
/// not collapse within [`FLAT_ROUNDS`] rounds or a check fails. Where it
/// answers, it reads and writes the sequence in order, instead of the queue's
/// scattered 16 bytes per byte, which left the caches at 10 MB (2.0-2.6x the
/// time per byte of 10 KB).
pub fn encode_piece_flat_runs(piece: &[u8], vocab: &Vocab, out: &mut Vec<Rank>) -> bool {
    // a long piece first tries its first FLAT_PROBE bytes: one that does not
    // collapse there is declined at once, not after FLAT_ROUNDS passes over it
    // all (measured: a declined 10 MB piece cost 20-25 ns/byte, about what the
    // queue then spends). A predictor only: the whole piece keeps every check.
    if piece.len() > 2 * FLAT_PROBE
        && !encode_piece_flat_runs(&piece[..FLAT_PROBE], vocab, &mut Vec::new())
    {
        return false;
    }
    let pair = |a: Rank, b: Rank| vocab.pair_rank(a, b).unwrap_or(NONE);
    let mut seq: Vec<Rank> = piece.iter().map(|&b| vocab.byte_rank(b)).collect();
    for _ in 0..FLAT_ROUNDS {
        let r = seq
            .windows(2)
            .map(|w| pair(w[0], w[1]))
            .min()
            .unwrap_or(NONE);
        if r == NONE {
            out.extend_from_slice(&seq);
            return true;
        }
        if !sweep_flat(&mut seq, r, pair) {
            return false;
        }
        if let Some(runs) = as_runs(seq.iter().copied()) {
            return merge_runs(runs, vocab, out);
        }
    }
    false
}

/// [`sweep_runs`] on a flat sequence, in place: every pair of rank `r`
/// merged, leftmost first; false when a merge creates a pair ranked below
/// `r` (the sequence is then partly rewritten: the caller drops it). The
/// write cursor `j` never passes the read cursor `i`, so every part read
/// ahead of `i` is still the old one.
fn sweep_flat(seq: &mut Vec<Rank>, r: Rank, pair: impl Fn(Rank, Rank) -> Rank) -> bool {
    let n = seq.len();
    let (mut i, mut j) = (0, 0);
    while i < n {
        let t = seq[i];
        if i + 1 < n && pair(t, seq[i + 1]) == r {
            // the new part's pairs: with the part before it (final, at j - 1)
            // and with the part after it as it stands (the sweep has not
            // reached it)
            let left_ok = j == 0 || pair(seq[j - 1], r) > r;
            let right_ok = i + 2 >= n || pair(r, seq[i + 2]) > r;
            if !(left_ok && right_ok) {
                return false;
            }
            seq[j] = r;
            i += 2;
        } else {
            seq[j] = t;
            i += 1;
        }
        j += 1;
    }
    seq.truncate(j);
    true
}

/// The rounds of [`encode_piece_runs`] on runs, then their ids into `out`;
/// false (nothing written) when a sweep's checks fail or the runs grow past
/// [`MAX_RUNS`].
fn merge_runs(mut runs: Vec<(Rank, usize)>, vocab: &Vocab, out: &mut Vec<Rank>) -> bool {
    let pair = |a: Rank, b: Rank| vocab.pair_rank(a, b).unwrap_or(NONE);
    let mut next = Vec::with_capacity(MAX_RUNS);
    loop {
        let mut r = NONE;
        for (i, &(t, c)) in runs.iter().enumerate() {
            if c >= 2 {
                r = r.min(pair(t, t));
            }
            if let Some(&(u, _)) = runs.get(i + 1) {
                r = r.min(pair(t, u));
            }
        }
        if r == NONE {
            break;
        }
        if !sweep_runs(&runs, r, pair, &mut next) || next.len() > MAX_RUNS {
            return false;
        }
        std::mem::swap(&mut runs, &mut next);
    }
    for &(t, c) in &runs {
        out.resize(out.len() + c, t);
    }
    true
}

/// One round of [`encode_piece_runs`]: every pair of rank `r` in `runs`
/// merged, leftmost first, into `next`; false when a merge creates a pair
/// ranked below `r` (the greedy rule would merge that pair first).
fn sweep_runs(
    runs: &[(Rank, usize)],
    r: Rank,
    pair: impl Fn(Rank, Rank) -> Rank,
    next: &mut Vec<(Rank, usize)>,
) -> bool {
    fn push(next: &mut Vec<(Rank, usize)>, t: Rank, c: usize) {
        match next.last_mut() {
            Some((u, k)) if *u == t => *k += c,
            _ if c > 0 => next.push((t, c)),
            _ => {}
        }
    }
    // the pairs a new part `r` makes with the part before it and with `right`,
    // the part after it when it was merged, all ranked above `r`
    let fits = |next: &[(Rank, usize)], right: Option<Rank>| {
        next.last().is_none_or(|&(l, _)| pair(l, r) > r) && right.is_none_or(|u| pair(r, u) > r)
    };
    next.clear();
    // the last part of the previous run, not yet written: it may merge with
    // the first part of this one
    let mut pending: Option<Rank> = None;
    for (i, &(t, mut c)) in runs.iter().enumerate() {
        let after = runs.get(i + 1).map(|&(u, _)| u);
        if let Some(p) = pending.take() {
            if pair(p, t) == r {
                if !fits(next, if c >= 2 { Some(t) } else { after }) {
                    return false;
                }
                push(next, r, 1);
                c -= 1;
            } else {
                push(next, p, 1);
            }
        }
        if c >= 2 && pair(t, t) == r {
            // merges at (0, 1), (2, 3), ...: the first meets the part before,
            // the others the previous merge; each meets the part two after
            // its start (`t` inside the run, `after` past an even run)
            let k = c / 2;
            let ok = fits(next, None)
                && (k < 2 || pair(r, r) > r)
                && (c < 3 || pair(r, t) > r)
                && (c % 2 == 1 || after.is_none_or(|u| pair(r, u) > r));
            if !ok {
                return false;
            }
            push(next, r, k);
            if c % 2 == 1 {
                pending = Some(t);
            }
        } else if c > 0 {
            push(next, t, c - 1);
            pending = Some(t);
        }
    }
    if let Some(p) = pending {
        push(next, p, 1);
    }
    true
}

/// The short-piece path: an array of parts (start byte, token rank, rank of the
/// pair it starts); each round merges the minimum pair (leftmost on ties) and
/// recomputes only the two pairs that changed. Pair ranks come from
/// [`Vocab::pair_rank`] (a 64-bit probe), so no byte string is hashed here.
///
/// Complexity: O(n²) worst case, so only used for `n <= SHORT_PIECE_MAX`
/// (callers may use it on any length; it is exact, only slower).
pub fn encode_piece_scan(piece: &[u8], vocab: &Vocab, out: &mut Vec<Rank>) {
    let n = piece.len();
    if n == 0 {
        return;
    }
    let pair = |l: Rank, r: Rank, _: usize, _: usize| vocab.pair_rank(l, r).unwrap_or(NONE);
    if n > SHORT_PIECE_MAX {
        // exact on any length, but keep the parts off the stack for long pieces
        let mut parts = vec![(0, 0); n];
        let mut at = vec![0; n + 1];
        scan_merge(piece, vocab, &mut parts, &mut at, out, pair);
    } else if n <= 16 {
        // no heap allocation per piece: short pieces are the common case; a
        // small array for the commonest lengths keeps the zeroing cheap
        let (mut parts, mut at) = ([(0, 0); 16], [0; 17]);
        scan_merge(piece, vocab, &mut parts[..n], &mut at[..=n], out, pair);
    } else {
        let (mut parts, mut at) = ([(0, 0); SHORT_PIECE_MAX], [0; SHORT_PIECE_MAX + 1]);
        scan_merge(piece, vocab, &mut parts[..n], &mut at[..=n], out, pair);
    }
}

/// [`encode_piece_scan`] for a piece of at most 16 bytes that is not a token,
/// with the pair ranks after the first round read by `rank_of(start, end)`:
/// the rank of the token whose bytes are `piece[start..end]`, or
/// [`crate::vocab::NONE_RANK`]. That is the definition of a pair's rank (the
/// rank of the two parts' concatenated bytes), so the result is the same.
/// Pairs the vocabulary's filter rules out ([`Vocab::pair_may_be_token`],
/// most of them on Korean) are not asked. The piece cache answers the rest
/// from its own table, which holds every token of at most 16 bytes: one probe
/// of a line common text keeps warm, where [`Vocab::pair_rank`]'s table of
/// all token splits (several MB) is a cache miss. The first round's pairs
/// are two-byte tokens, read from [`Vocab::byte_pair_rank`]'s dense table.
pub fn encode_short_by_bytes(
    piece: &[u8],
    vocab: &Vocab,
    mut rank_of: impl FnMut(usize, usize) -> Rank,
    out: &mut Vec<Rank>,
) {
    let n = piece.len();
    if n == 0 || n > 16 {
        // not a short piece: the general path (exact on any length)
        return encode_piece_parts(piece, vocab, out);
    }
    let pair = |l: Rank, r: Rank, s: usize, e: usize| {
        if vocab.pair_may_be_token(l, r) {
            rank_of(s, e)
        } else {
            NONE
        }
    };
    let (mut parts, mut at) = ([(0, 0); 16], [0; 17]);
    scan_merge(piece, vocab, &mut parts[..n], &mut at[..=n], out, pair);
}

/// The scan: `parts` has exactly `piece.len()` slots, `(token rank of the
/// part, rank of this part joined with the next one)`, and `at` one more, the
/// parts' first bytes (`at[len]` the piece's end). The first round's pairs
/// are two-byte tokens ([`Vocab::byte_pair_rank`]); later ones come from
/// `pair(left, right, start, end)`: the rank of the token spelled by
/// `piece[start..end]`, the two parts `left` and `right` joined.
#[inline]
fn scan_merge(
    piece: &[u8],
    vocab: &Vocab,
    parts: &mut [(Rank, Rank)],
    at: &mut [u32],
    out: &mut Vec<Rank>,
    mut pair: impl FnMut(Rank, Rank, usize, usize) -> Rank,
) {
    let n = piece.len();
    for (slot, w) in parts.iter_mut().zip(piece.windows(2)) {
        *slot = (vocab.byte_rank(w[0]), vocab.byte_pair_rank(w[0], w[1]));
    }
    parts[n - 1] = (vocab.byte_rank(piece[n - 1]), NONE);
    for (k, a) in at.iter_mut().enumerate() {
        *a = k as u32;
    }
    let mut len = n;
    loop {
        let (r, i) = min_pair(&parts[..len]);
        if r == NONE {
            break;
        }
        // drop part i + 1 (it joins part i)
        parts.copy_within(i + 2..len, i + 1);
        at.copy_within(i + 2..=len, i + 1);
        len -= 1;
        parts[i].0 = r;
        parts[i].1 = if i + 1 < len {
            pair(r, parts[i + 1].0, at[i] as usize, at[i + 2] as usize)
        } else {
            NONE
        };
        if i > 0 {
            parts[i - 1].1 = pair(parts[i - 1].0, r, at[i - 1] as usize, at[i + 1] as usize);
        }
    }
    out.extend(parts[..len].iter().map(|&(t, _)| t));
}

/// The lowest pair rank among `parts` and its leftmost index. Each part's key
/// is `rank << 32 | index`, so the minimum key is the answer; four running
/// minima over interleaved parts break the compare-select dependency chain
/// of a single one (with one minimum this loop takes 75% of `scan_merge`'s
/// time on English; it is the merge loop's inner loop, run once per merge).
#[inline(always)]
fn min_pair(parts: &[(Rank, Rank)]) -> (Rank, usize) {
    let mut m = [u64::MAX; 4];
    let mut chunks = parts.chunks_exact(4);
    for (c, ch) in chunks.by_ref().enumerate() {
        for k in 0..4 {
            m[k] = m[k].min(key(ch[k].1, (4 * c + k) as u32));
        }
    }
    let base = parts.len() - chunks.remainder().len();
    for (k, &(_, pr)) in chunks.remainder().iter().enumerate() {
        m[k] = m[k].min(key(pr, (base + k) as u32));
    }
    let (r, i) = unkey(m[0].min(m[1]).min(m[2].min(m[3])));
    (r, i as usize)
}

/// The long-piece path: parts form a doubly linked list indexed by their first
/// byte (`merge_linked`); a min-heap holds `(pair rank, left part)`
/// candidates, and an entry is live only while the pair rank stored at `left`
/// still equals its rank (token bytes are unique, so a stale entry can never
/// look live: any change at `left` changes the pair's bytes and therefore its
/// rank).
///
/// Complexity: O(n log n) time; memory 16 bytes per input byte plus 8 per heap
/// entry (at most n initial + 2 per merge).
pub fn encode_piece_heap(piece: &[u8], vocab: &Vocab, out: &mut Vec<Rank>) {
    merge_linked(piece, vocab, out, |parts, _| {
        BinaryHeap::from_iter(initial_pairs(parts).map(|(r, l)| Reverse(key(r, l))))
    });
}

/// Where the linked-list merge keeps its candidate pairs: push `(rank, left
/// part)`, pop the lowest rank, leftmost first (entries may be stale; the
/// caller checks).
trait Pending {
    fn push(&mut self, r: Rank, left: u32);
    fn pop(&mut self) -> Option<(Rank, u32)>;
}

impl Pending for BinaryHeap<Reverse<u64>> {
    #[inline]
    fn push(&mut self, r: Rank, left: u32) {
        BinaryHeap::push(self, Reverse(key(r, left)));
    }
    #[inline]
    fn pop(&mut self) -> Option<(Rank, u32)> {
        BinaryHeap::pop(self).map(|Reverse(k)| unkey(k))
    }
}

/// One part of a long piece being merged: its neighbours (part starts; `n` =
/// end, [`NONE`] = none), its token, and the rank of the pair it starts. One
/// 16-byte record per byte keeps a merge's reads on one or two cache lines.
#[derive(Clone, Copy)]
struct Part {
    next: u32,
    prev: u32,
    tok: Rank,
    pair: Rank,
}

/// Pending pairs: per rank a FIFO of left positions (a linked list through one
/// shared arena, so no allocation per rank), and a min-heap of the ranks whose
/// FIFO may be non-empty. Pairs of one rank usually arrive in increasing
/// position order, so the FIFO gives the leftmost first; if one ever arrives
/// out of order, that rank switches to a min-heap of positions for good (exact
/// in every case, linear in the common one).
struct RankQueue {
    /// Per rank: `(first entry + 1) | (last entry + 1) << 32`, 0 = empty;
    /// `last` is `u32::MAX` once the rank uses a heap (see `heaps`). Plain
    /// `u64`s so the allocation is a zeroed one (`calloc`), not a fill.
    lists: Vec<u64>,
    /// `(position, next entry + 1)`, 0 = end of list.
    entries: Vec<(u32, u32)>,
    /// First entry (+ 1) of the free list through `entries`' `next` fields, 0
    /// = none: entries are recycled once popped, so the arena stays at the
    /// number of pairs pending at once instead of growing by every pair ever
    /// pushed (about three per byte on 10 MB of spaces, 240 MB).
    free: u32,
    /// Per rank: whether it is in `ranks`.
    queued: Vec<bool>,
    ranks: BinaryHeap<Reverse<Rank>>,
    heaps: FxHashMap<Rank, BinaryHeap<Reverse<u32>>>,
}

const HEAP_MODE: u32 = u32::MAX;

impl Pending for RankQueue {
    #[inline]
    fn push(&mut self, r: Rank, left: u32) {
        RankQueue::push(self, r, left);
    }
    #[inline]
    fn pop(&mut self) -> Option<(Rank, u32)> {
        RankQueue::pop(self)
    }
}

impl RankQueue {
    /// A queue for ranks below `vocab_len`. The per-rank arrays are zeroed
    /// allocations: the OS supplies zero pages, so only the ranks touched cost.
    fn new(vocab_len: usize, pairs: usize) -> Self {
        RankQueue {
            lists: vec![0u64; vocab_len],
            entries: Vec::with_capacity(pairs),
            free: 0,
            queued: vec![false; vocab_len],
            ranks: BinaryHeap::new(),
            heaps: FxHashMap::default(),
        }
    }

    #[inline(always)]
    fn list(&self, ri: usize) -> (u32, u32) {
        let v = self.lists[ri];
        (v as u32, (v >> 32) as u32)
    }

    #[inline(always)]
    fn set_list(&mut self, ri: usize, head: u32, tail: u32) {
        self.lists[ri] = head as u64 | (tail as u64) << 32;
    }

    #[inline]
    fn push(&mut self, r: Rank, pos: u32) {
        let ri = r as usize;
        let (head, tail) = self.list(ri);
        if tail == HEAP_MODE {
            if let Some(h) = self.heaps.get_mut(&r) {
                h.push(Reverse(pos));
            }
        } else if head != 0 && pos < self.entries[tail as usize - 1].0 {
            // out of order: move this rank's pending positions to a heap
            let mut h = BinaryHeap::new();
            let mut at = head;
            while at != 0 {
                let (p, next) = self.entries[at as usize - 1];
                h.push(Reverse(p));
                at = next;
            }
            h.push(Reverse(pos));
            self.heaps.insert(r, h);
            self.set_list(ri, 0, HEAP_MODE);
        } else {
            let e = if self.free != 0 {
                let e = self.free;
                self.free = self.entries[e as usize - 1].1;
                self.entries[e as usize - 1] = (pos, 0);
                e
            } else {
                self.entries.push((pos, 0));
                self.entries.len() as u32
            };
            if head == 0 {
                self.set_list(ri, e, e);
            } else {
                self.entries[tail as usize - 1].1 = e;
                self.set_list(ri, head, e);
            }
        }
        if !self.queued[ri] {
            self.queued[ri] = true;
            self.ranks.push(Reverse(r));
        }
    }

    /// The lowest rank with a pending pair and that pair's leftmost position
    /// (possibly stale: the caller checks).
    #[inline]
    fn pop(&mut self) -> Option<(Rank, u32)> {
        while let Some(&Reverse(r)) = self.ranks.peek() {
            let ri = r as usize;
            let (head, tail) = self.list(ri);
            let got = if tail == HEAP_MODE {
                self.heaps
                    .get_mut(&r)
                    .and_then(|h| h.pop())
                    .map(|Reverse(p)| p)
            } else if head != 0 {
                let (p, next) = self.entries[head as usize - 1];
                if next == 0 {
                    self.set_list(ri, 0, 0);
                } else {
                    self.set_list(ri, next, tail);
                }
                self.entries[head as usize - 1].1 = self.free;
                self.free = head;
                Some(p)
            } else {
                None
            };
            match got {
                Some(pos) => return Some((r, pos)),
                None => {
                    self.queued[ri] = false;
                    self.ranks.pop();
                }
            }
        }
        None
    }
}

/// The long-piece path: the same merges as [`encode_piece_heap`], with the
/// candidate pairs kept in one bucket per rank (a FIFO of positions) and a
/// small min-heap over the distinct ranks that have pending pairs.
///
/// Why: a binary heap over all pairs of a 10 MB piece is ~100 MB, and each pop
/// walks ~23 levels of it with cache misses at the bottom, so time per byte
/// grew 3-5x from 10 KB to 10 MB. Here most operations are appends and reads at
/// the front of a bucket (sequential memory); the rank heap holds only the
/// distinct ranks in play (a few hundred for hostile text). Exactness: the
/// minimum rank comes from the rank heap, the leftmost pair of that rank from
/// its bucket, and stale entries are skipped as in the heap path.
///
/// Complexity: O(n log d) for d distinct ranks pending, O(n log n) at worst
/// (a bucket that turned into a heap); memory 16 bytes per input byte plus 4
/// per candidate pair.
pub fn encode_piece_queue(piece: &[u8], vocab: &Vocab, out: &mut Vec<Rank>) {
    merge_linked(piece, vocab, out, |parts, pairs| {
        let mut queue = RankQueue::new(vocab.len(), pairs);
        for (r, l) in initial_pairs(parts) {
            queue.push(r, l);
        }
        queue
    });
}

/// The initial byte pairs of a long piece, `(rank, left position)` in
/// position order, read from its parts (no list of its own: on a 10 MB piece
/// that list was 80 MB).
fn initial_pairs(parts: &[Part]) -> impl Iterator<Item = (Rank, u32)> + '_ {
    parts
        .iter()
        .enumerate()
        .filter(|(_, p)| p.pair != NONE)
        .map(|(i, p)| (p.pair, i as u32))
}

/// The merge loop of the long-piece paths: parts form a doubly linked list of
/// [`Part`]s indexed by their first byte, and `pending` (built by `make` from
/// the parts and the number of their initial byte pairs, see
/// [`initial_pairs`]) yields the lowest-ranked,
/// leftmost candidate. Each merge recomputes the pair on each side of the new
/// part, the left one first: it lies left of the other, which keeps each
/// rank's arrivals in position order (what [`RankQueue`]'s FIFOs expect).
fn merge_linked<Q: Pending>(
    piece: &[u8],
    vocab: &Vocab,
    out: &mut Vec<Rank>,
    make: impl FnOnce(&[Part], usize) -> Q,
) {
    let n = piece.len();
    if n < 2 {
        encode_piece_scan(piece, vocab, out);
        return;
    }
    let mut parts: Vec<Part> = Vec::with_capacity(n);
    let mut pairs = 0;
    for (i, &b) in piece.iter().enumerate() {
        let pair = piece
            .get(i + 1)
            .map_or(NONE, |&c| vocab.byte_pair_rank(b, c));
        pairs += (pair != NONE) as usize;
        parts.push(Part {
            next: i as u32 + 1,
            prev: (i as u32).wrapping_sub(1),
            tok: vocab.byte_rank(b),
            pair,
        });
    }
    parts[0].prev = NONE;
    let mut pending = make(&parts, pairs);
    while let Some((r, l)) = pending.pop() {
        let li = l as usize;
        if parts[li].pair != r {
            continue; // stale
        }
        // merge part l with its right neighbour m into token r
        let m = parts[li].next as usize;
        let after = parts[m].next;
        parts[li].next = after;
        if (after as usize) < n {
            parts[after as usize].prev = l;
        }
        parts[m].pair = NONE;
        parts[li].tok = r;
        // new pair (prev, l)
        let p = parts[li].prev;
        if p != NONE {
            let pr = vocab.pair_rank(parts[p as usize].tok, r).unwrap_or(NONE);
            parts[p as usize].pair = pr;
            if pr != NONE {
                pending.push(pr, p);
            }
        }
        // new pair (l, after)
        let nr = if (after as usize) < n {
            vocab
                .pair_rank(r, parts[after as usize].tok)
                .unwrap_or(NONE)
        } else {
            NONE
        };
        parts[li].pair = nr;
        if nr != NONE {
            pending.push(nr, l);
        }
    }
    let mut at = 0usize;
    while at < n {
        out.push(parts[at].tok);
        at = parts[at].next as usize;
    }
}

#[inline]
fn key(rank: Rank, left: u32) -> u64 {
    ((rank as u64) << 32) | left as u64
}

#[inline]
fn unkey(k: u64) -> (Rank, u32) {
    ((k >> 32) as Rank, k as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random BPE-consistent vocabularies (each token the concatenation of two
    /// earlier ones) and random pieces: the queue path equals the heap path and
    /// the oracle.
    #[test]
    fn queue_matches_oracle_on_random_vocabularies() {
        let mut rng = XorShift(0x2545_f491_4f6c_dd1d);
        let mut rnd = |k: usize| rng.below(k);
        for _ in 0..200 {
            let mut toks: Vec<Vec<u8>> = vec![b"a".to_vec(), b"b".to_vec(), b"c".to_vec()];
            while toks.len() < 40 {
                let t = [toks[rnd(toks.len())].clone(), toks[rnd(toks.len())].clone()].concat();
                if t.len() <= 6 && !toks.contains(&t) {
                    toks.push(t);
                }
            }
            let extra: Vec<&[u8]> = toks[3..].iter().map(|t| t.as_slice()).collect();
            let v = vocab(&extra);
            for len in [150usize, 400] {
                let piece: Vec<u8> = (0..len).map(|_| b"abc"[rnd(3)]).collect();
                let want = oracle(&piece, &v);
                let mut q = Vec::new();
                encode_piece_queue(&piece, &v, &mut q);
                assert_eq!(q, want);
                let mut h = Vec::new();
                encode_piece_heap(&piece, &v, &mut h);
                assert_eq!(h, want);
                let mut c = Vec::new();
                encode_piece_split(&piece, &v, &mut c);
                assert_eq!(c, want);
            }
        }
    }

    /// Pieces of a few long runs of one byte over random vocabularies: the
    /// run path equals the oracle whenever it answers, writes nothing when it
    /// gives up, answers most pieces of BPE-consistent vocabularies, and gives
    /// up on some of the shuffled ones (a longer run of a byte ranked before a
    /// shorter one it contains).
    #[test]
    fn runs_path_matches_oracle_or_gives_up() {
        let mut rng = XorShift(0x51_7cc1_b727_220a);
        let (mut answered, mut tried, mut gave_up_shuffled) = (0, 0, 0);
        for round in 0..300 {
            let shuffled = round % 2 == 1;
            let v = rng.vocab_of_merges(b"ab", 24, 12, shuffled);
            for _ in 0..4 {
                let mut piece = Vec::new();
                for _ in 0..1 + rng.below(4) {
                    let (b, n) = (b"ab"[rng.below(2)], 1 + rng.below(220));
                    piece.extend(std::iter::repeat_n(b, n));
                }
                let mut got = vec![7];
                tried += 1;
                if encode_piece_runs(&piece, &v, &mut got) {
                    answered += 1;
                    assert_eq!(
                        got[1..],
                        oracle(&piece, &v)[..],
                        "piece of {} bytes",
                        piece.len()
                    );
                } else {
                    assert_eq!(got, [7], "a run path that gave up wrote ids");
                    gave_up_shuffled += shuffled as usize;
                }
            }
        }
        assert!(answered * 2 > tried, "answered {answered} of {tried}");
        assert!(gave_up_shuffled > 0);
    }

    /// A merge whose new part would pair below the round's rank with the part
    /// after it stops the sweep, even when that part is merged later in the
    /// same sweep: `ab a a ba` with `aba` the round's rank and `abaa` ranked
    /// lower (the greedy rule merges `aba a` next, the sweep would merge
    /// `a ba`).
    #[test]
    fn sweep_stops_where_the_greedy_rule_turns() {
        let v = vocab(&[b"abaa", b"ab", b"ba", b"aba"]);
        let rank = |t: &[u8]| v.rank(t).unwrap();
        let runs = [(rank(b"ab"), 1), (rank(b"a"), 2), (rank(b"ba"), 1)];
        let pair = |a: Rank, b: Rank| v.pair_rank(a, b).unwrap_or(NONE);
        let mut next = Vec::new();
        assert!(!sweep_runs(&runs, rank(b"aba"), pair, &mut next));
        // without `abaa` the sweep goes through: `aba aba`
        let v = vocab(&[b"ab", b"ba", b"aba"]);
        let rank = |t: &[u8]| v.rank(t).unwrap();
        let runs = [(rank(b"ab"), 1), (rank(b"a"), 2), (rank(b"ba"), 1)];
        let pair = |a: Rank, b: Rank| v.pair_rank(a, b).unwrap_or(NONE);
        assert!(sweep_runs(&runs, rank(b"aba"), pair, &mut next));
        assert_eq!(next, vec![(rank(b"aba"), 2)]);
    }

    /// Periodic pieces ('ab' * N, 'abc' * N, with a head or tail) over random
    /// and shuffled vocabularies: the flat path equals the oracle whenever it
    /// answers and writes nothing when it declines; it answers some and
    /// declines some.
    #[test]
    fn flat_path_matches_oracle_or_gives_up() {
        let mut rng = XorShift(0x2c1b_3c6d_5a7e_9f11);
        let (mut answered, mut declined) = (0, 0);
        for round in 0..300 {
            let v = rng.vocab_of_merges(b"abc", 30, 10, round % 2 == 1);
            for _ in 0..3 {
                let (u, h, n, t) = (
                    1 + rng.below(4),
                    rng.below(3),
                    150 + rng.below(400),
                    rng.below(3),
                );
                let unit = rng.piece(u, b"abc");
                let mut piece = rng.piece(h, b"abc");
                for _ in 0..n / u {
                    piece.extend_from_slice(&unit);
                }
                piece.extend(rng.piece(t, b"abc"));
                let mut got = vec![7];
                if encode_piece_flat_runs(&piece, &v, &mut got) {
                    answered += 1;
                    assert_eq!(got[1..], oracle(&piece, &v)[..], "piece {piece:?}");
                } else {
                    declined += 1;
                    assert_eq!(got, [7], "a flat path that gave up wrote ids");
                }
            }
        }
        assert!(
            answered > 100 && declined > 0,
            "answered {answered}, declined {declined}"
        );
    }

    /// More runs than [`MAX_RUNS`]: the run path declines at once.
    #[test]
    fn runs_path_declines_many_runs() {
        let v = vocab(&[b"ab"]);
        let piece: Vec<u8> = b"ab".repeat(MAX_RUNS);
        let mut out = Vec::new();
        assert!(!encode_piece_runs(&piece, &v, &mut out));
        assert!(out.is_empty());
        assert!(encode_piece_runs(&b"a".repeat(1000), &v, &mut out));
        assert_eq!(out, vec![97; 1000]);
    }

    /// The tests' pseudo-random numbers (xorshift64).
    struct XorShift(u64);

    impl XorShift {
        fn below(&mut self, k: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % k as u64) as usize
        }

        /// A vocabulary of the 256 bytes plus tokens made by merging two
        /// earlier ones (starting from `alphabet`, at most `max_len` bytes,
        /// until `size` tokens over the alphabet), in merge order or, when
        /// `shuffled`, in a random rank order.
        fn vocab_of_merges(
            &mut self,
            alphabet: &[u8],
            size: usize,
            max_len: usize,
            shuffled: bool,
        ) -> Vocab {
            let mut toks: Vec<Vec<u8>> = alphabet.iter().map(|&b| vec![b]).collect();
            while toks.len() < size {
                let (i, j) = (self.below(toks.len()), self.below(toks.len()));
                let t = [toks[i].clone(), toks[j].clone()].concat();
                if t.len() <= max_len && !toks.contains(&t) {
                    toks.push(t);
                }
            }
            let mut extra: Vec<&[u8]> = toks[alphabet.len()..]
                .iter()
                .map(|t| t.as_slice())
                .collect();
            if shuffled {
                for k in (1..extra.len()).rev() {
                    extra.swap(k, self.below(k + 1));
                }
            }
            vocab(&extra)
        }

        /// `len` bytes drawn from `alphabet`.
        fn piece(&mut self, len: usize, alphabet: &[u8]) -> Vec<u8> {
            (0..len)
                .map(|_| alphabet[self.below(alphabet.len())])
                .collect()
        }
    }

    fn vocab(extra: &[&[u8]]) -> Vocab {
        let mut v: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        v.extend(extra.iter().map(|e| e.to_vec()));
        Vocab::new(v).unwrap()
    }

    /// The obvious quadratic oracle, written independently of both paths.
    fn oracle(piece: &[u8], v: &Vocab) -> Vec<Rank> {
        let mut parts: Vec<Vec<u8>> = piece.iter().map(|&b| vec![b]).collect();
        loop {
            let mut best: Option<(Rank, usize)> = None;
            for i in 0..parts.len().saturating_sub(1) {
                let joined = [parts[i].as_slice(), parts[i + 1].as_slice()].concat();
                if let Some(r) = v.rank(&joined) {
                    if best.is_none_or(|(b, _)| r < b) {
                        best = Some((r, i));
                    }
                }
            }
            let Some((_, i)) = best else { break };
            let right = parts.remove(i + 1);
            parts[i].extend(right);
        }
        parts.iter().map(|p| v.rank(p).unwrap()).collect()
    }

    fn all_paths(piece: &[u8], v: &Vocab) -> [Vec<Rank>; 6] {
        let mut a = Vec::new();
        let mut b = Vec::new();
        let mut c = Vec::new();
        let mut d = Vec::new();
        let mut e = Vec::new();
        encode_piece(piece, v, &mut a);
        encode_piece_scan(piece, v, &mut b);
        encode_piece_heap(piece, v, &mut c);
        encode_piece_queue(piece, v, &mut d);
        encode_piece_split(piece, v, &mut e);
        [a, b, c, d, e, by_bytes(piece, v)]
    }

    /// [`encode_short_by_bytes`] with the ranks of byte ranges from the vocabulary.
    fn by_bytes(piece: &[u8], v: &Vocab) -> Vec<Rank> {
        let mut out = Vec::new();
        let rank_of = |s: usize, e: usize| v.rank(&piece[s..e]).unwrap_or(NONE);
        encode_short_by_bytes(piece, v, rank_of, &mut out);
        out
    }

    /// Short pieces (0-16 bytes, and 17 for the fallback) over random
    /// BPE-consistent vocabularies: pair ranks read as the ranks of byte
    /// ranges give the scan's result and the oracle's.
    #[test]
    fn short_merge_by_byte_ranges_matches_the_oracle() {
        let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
        for _ in 0..300 {
            let mut toks: Vec<Vec<u8>> = vec![b"a".to_vec(), b"b".to_vec(), b"c".to_vec()];
            while toks.len() < 30 {
                let (i, j) = (rng.below(toks.len()), rng.below(toks.len()));
                let t = [toks[i].clone(), toks[j].clone()].concat();
                if t.len() <= 8 && !toks.contains(&t) {
                    toks.push(t);
                }
            }
            let extra: Vec<&[u8]> = toks[3..].iter().map(|t| t.as_slice()).collect();
            let v = vocab(&extra);
            for len in 0..=17 {
                let piece = rng.piece(len, b"abc");
                let mut scan = Vec::new();
                encode_piece_scan(&piece, &v, &mut scan);
                assert_eq!(
                    by_bytes(&piece, &v),
                    scan,
                    "{:?}",
                    String::from_utf8_lossy(&piece)
                );
                assert_eq!(scan, oracle(&piece, &v));
            }
        }
    }

    /// A rank fed out of position order switches to a heap and still pops
    /// leftmost first. (On the vocabularies and corpora tried, the merge loop
    /// never feeds a rank out of order: equal tokens form left to right. The
    /// fallback keeps the queue exact even if some vocabulary does.)
    #[test]
    fn queue_pops_lowest_rank_then_leftmost_even_out_of_order() {
        let mut q = RankQueue::new(10, 0);
        for p in [3, 7, 9] {
            q.push(5, p);
        }
        q.push(2, 40);
        assert_eq!(q.pop(), Some((2, 40)));
        assert_eq!(q.pop(), Some((5, 3)));
        q.push(5, 6); // behind 9: out of order
        assert_eq!(q.list(5).1, HEAP_MODE);
        q.push(5, 1);
        q.push(8, 0);
        let mut got = Vec::new();
        while let Some(x) = q.pop() {
            got.push(x);
        }
        assert_eq!(got, vec![(5, 1), (5, 6), (5, 7), (5, 9), (8, 0)]);
        // a drained rank can be used again
        q.push(5, 2);
        assert_eq!(q.pop(), Some((5, 2)));
        assert_eq!(q.pop(), None);
    }

    #[test]
    fn paths_agree_with_oracle_on_small_vocab() {
        let v = vocab(&[b"ab", b"bc", b"abc", b"aa", b"aaa", b"aaaa", b"cab", b"ba"]);
        let mut rng = XorShift(0x2545_f491_4f6c_dd1d);
        for len in 0..200 {
            for _ in 0..5 {
                let piece = rng.piece(len, b"abc");
                let want = oracle(&piece, &v);
                for got in all_paths(&piece, &v) {
                    assert_eq!(got, want, "piece {:?}", String::from_utf8_lossy(&piece));
                }
            }
        }
    }

    /// Long random pieces over a vocabulary with many overlapping tokens, so
    /// lower-ranked pairs keep appearing mid-merge.
    #[test]
    fn queue_matches_heap_on_long_pieces() {
        let v = vocab(&[
            b"ab", b"ba", b"aa", b"bb", b"aba", b"bab", b"abab", b"aab", b"bba", b"abba", b"baab",
            b"aaaa", b"ababab", b"bbbb", b"abaab", b"ca", b"ac", b"cab", b"abc",
        ]);
        let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
        for len in [129usize, 200, 1000, 5000] {
            for _ in 0..20 {
                let piece = rng.piece(len, b"aabbc");
                let mut h = Vec::new();
                let mut q = Vec::new();
                let mut s = Vec::new();
                let mut c = Vec::new();
                encode_piece_heap(&piece, &v, &mut h);
                encode_piece_queue(&piece, &v, &mut q);
                encode_piece_scan(&piece, &v, &mut s);
                encode_piece_split(&piece, &v, &mut c);
                assert_eq!(q, h);
                assert_eq!(s, h);
                assert_eq!(c, h);
            }
        }
    }

    #[test]
    fn repetitive_pieces_are_told_apart() {
        assert!(is_repetitive(&[b'x'; 5000]));
        assert!(is_repetitive(" ".repeat(5000).as_bytes()));
        assert!(is_repetitive("가나".repeat(2000).as_bytes()));
        let all: Vec<u8> = (0..=255).collect();
        let noise = XorShift(7).piece(5000, &all);
        assert!(!is_repetitive(&noise));
    }

    #[test]
    fn leftmost_on_ties() {
        let v = vocab(&[b"aa"]);
        for got in all_paths(b"aaa", &v) {
            assert_eq!(got, vec![256, b'a' as Rank]);
        }
    }

    #[test]
    fn long_run_is_fast_and_exact() {
        let v = vocab(&[b"xx", b"xxxx", b"xxxxxxxx"]);
        let piece = vec![b'x'; 100_003];
        // 'xx' everywhere, then 'xxxx', then 'xxxxxxxx'; 100_003 = 8 * 12_500 + 3
        let mut want = vec![258; 12_500];
        want.extend([256, b'x' as Rank]);
        let mut got = Vec::new();
        encode_piece_heap(&piece, &v, &mut got);
        assert_eq!(got, want);
        got.clear();
        encode_piece_queue(&piece, &v, &mut got);
        assert_eq!(got, want);
    }
}
