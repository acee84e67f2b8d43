//! The piece cache's hot loop, in two phases. Phase one ([`Collect`], the
//! pre-tokenizer's sink) packs and hashes each piece as it comes and
//! prefetches its bucket; every [`BATCH`] pieces, phase two
//! ([`PieceCache::flush`]) probes the batch and emits the ids, so the
//! cache-line misses of a batch overlap instead of stalling one after the
//! other. The probe-and-emit loop keeps the table and the output cursor in
//! locals; anything else (a miss, a long piece) leaves it for a cold path
//! ([`PieceCache::miss`], [`PieceCache::encode_long`]).
//!
//! Complexity: one probe per piece, O(1) expected; misses cost a merge.

use super::pending::{Pending, FIXED};
use super::table::{View, INLINE, IN_ARENA, LINE};
use super::{PieceCache, PieceModel, Seed, BATCH};
use crate::hint::prefetch;
use crate::vocab::{key16, key16_window, MID_MAX};
use crate::Rank;
use crate::SpanSink;

/// Words a hit may store past the output's length: a fixed-size copy of an
/// arena result of up to this many ids (Korean words: 4-8 ids), instead of a
/// `memcpy` call per piece.
const SPILL: usize = 8;

/// Why [`PieceCache::flush`]'s hit loop stopped at a piece: longer than 16
/// bytes (or empty), not in the table, or an arena result (offset, count)
/// longer than one fixed-size copy.
enum Cold {
    Long,
    Miss,
    Arena(usize, usize),
}

impl PieceCache {
    /// Phase two: probe and emit every pending piece, in order. Not inlined:
    /// phase one ([`Collect`]) is inlined into every call site of the
    /// scanners, and stays small there by calling this.
    ///
    /// The hits run in an inner loop that keeps the table and the output's
    /// cursor in locals; a piece that needs `&mut self` (a miss, a long
    /// piece, an arena result too long for one fixed-size copy) leaves it
    /// with what the probe found ([`Cold`]), is handled without a second
    /// probe, and the loop resumes with fresh locals (the table may have
    /// grown or been wiped).
    #[inline(never)]
    #[allow(unsafe_code)] // the call to `emit_hits`, see the SAFETY comment
    pub(super) fn flush<M: PieceModel>(
        &mut self,
        seed: &Seed,
        model: &M,
        text: &[u8],
        batch: &mut [Pending],
        out: &mut Vec<Rank>,
    ) {
        let (Some(first), Some(last)) = (batch.first(), batch.last()) else {
            return;
        };
        let (first_start, last_end) = (first.start, last.end & !FIXED);
        // phase one and a half: pack, hash and prefetch every piece of the
        // batch in one tight loop, so its cache-line misses overlap. Pieces
        // come in order: when the last starts 16 bytes or more before the
        // text's end, every piece's 16-byte window is inside the text and the
        // loop reads it without a bounds check (every batch but a text's last)
        let view = self.table.view();
        if last
            .start
            .checked_add(MID_MAX)
            .is_some_and(|e| e <= text.len())
        {
            pack_batch::<true>(text, batch, view);
        } else {
            pack_batch::<false>(text, batch, view);
        }
        // a piece of n bytes has at most n ids (every token has a byte), and a
        // hit stores up to SPILL words: room for the whole batch plus one store.
        // Every path below appends at most one id per byte of its piece, so
        // SPILL spare words stay reserved until the end of the batch.
        out.reserve(last_end - first_start + SPILL);
        let mut i = 0;
        while i < batch.len() {
            // SAFETY: `out` has room for one id per byte of every piece left
            // in the batch plus SPILL words: the reservation above, kept by
            // every path here (each appends at most one id per byte of its
            // piece).
            let (stop, cold) = unsafe { self.emit_hits(batch, i, out) };
            i = stop;
            let Some(&p) = batch.get(i) else { break };
            // the piece the loop stopped at, by what it found
            let buckets = self.table.buckets.len();
            match cold {
                Cold::Long => self.encode_long(seed, model, &text[p.start..p.end], out),
                Cold::Miss => self.miss(seed, model, text, &p, out),
                Cold::Arena(at, k) => out.extend_from_slice(&self.vals[at..][..k]),
            }
            i += 1;
            if self.table.buckets.len() != buckets {
                self.rehome(&mut batch[i..]);
            }
        }
    }

    /// Appends the ids of the pieces from `batch[i]` on that the table
    /// answers, keeping the table and the output's cursor in locals; returns
    /// the index of the first piece it does not answer (`batch.len()` at the
    /// end) and why ([`Cold`]).
    ///
    /// # Safety
    /// `out` has spare capacity for one id per byte of every piece of
    /// `batch[i..]`, plus [`SPILL`] words.
    #[inline(always)]
    #[allow(unsafe_code)] // the unconditional stores, see the SAFETY comments
    unsafe fn emit_hits(
        &self,
        batch: &[Pending],
        mut i: usize,
        out: &mut Vec<Rank>,
    ) -> (usize, Cold) {
        let (table, vals) = (self.table.view(), &self.vals[..]);
        let mut len = out.len();
        let dst = out.as_mut_ptr();
        let mut cold = Cold::Long;
        while let Some(p) = batch.get(i) {
            // the length tag: 0 for a piece the table cannot hold, or an id
            // given by the caller (GPT-NeoX's runs of spaces: one in ten of
            // the entries of indented code), written here
            if p.at % LINE as u64 == 0 {
                if p.end & FIXED == 0 {
                    cold = Cold::Long;
                    break;
                }
                debug_assert!(out.capacity() > len);
                // SAFETY: `out` has room for one id per byte of every piece
                // left plus SPILL words, and this entry's bytes are at least one.
                unsafe { dst.add(len).write(p.key[0] as Rank) };
                len += 1;
                i += 1;
                continue;
            }
            let Some(s) = table.find_pending(p) else {
                cold = Cold::Miss;
                break;
            };
            let k = (s.meta() >> 8) as usize;
            if k != IN_ARENA as usize {
                debug_assert!(out.capacity() - len >= SPILL);
                // SAFETY: `out` has room for INLINE + 1 <= SPILL more words
                // past `len`: the caller's capacity covers every piece at one
                // id per byte plus SPILL, and each piece advances `len` by at
                // most its byte length (a token has at least one byte), so
                // SPILL spare words remain. The four words written are plain
                // integers read from the slot (ids then meta); the final
                // set_len exposes only the `k` ids of each piece.
                unsafe {
                    dst.add(len)
                        .cast::<[Rank; INLINE + 1]>()
                        .write_unaligned(s.tail);
                }
                len += k;
            } else {
                let (at, k) = (s.tail[0] as usize, s.tail[1] as usize);
                let Some(src) = vals.get(at..at + SPILL).filter(|_| k <= SPILL) else {
                    cold = Cold::Arena(at, k);
                    break;
                };
                debug_assert!(out.capacity() - len >= SPILL);
                // SAFETY: as for the inline ids, `out` has room for SPILL
                // more words (the caller's capacity keeps SPILL spare beyond
                // one id per byte); `src` is SPILL initialised words of the
                // arena, which `out` (a different vector) does not overlap;
                // only this piece's `k` ids (k <= its bytes, so the
                // invariant holds) are exposed.
                unsafe {
                    std::ptr::copy_nonoverlapping(src.as_ptr(), dst.add(len), SPILL);
                }
                len += k;
            }
            i += 1;
        }
        // SAFETY: every word below `len` was written above (each hit wrote
        // at least its `k` ids at its cursor) or was already part of `out`,
        // and `len <= capacity` (the caller's capacity).
        unsafe { out.set_len(len) };
        (i, cold)
    }

    /// Recomputes the home bucket of each pending piece after the table grew
    /// or was wiped to another size (a piece the table cannot hold has none).
    fn rehome(&self, pending: &mut [Pending]) {
        let t = self.table.view();
        for q in pending {
            let n = (q.at % LINE as u64) as usize;
            if n != 0 {
                q.at = (t.home_offset(q.key[0], q.key[1], n) + n) as u64;
            }
        }
    }
}

/// Packs, hashes, tags and prefetches each piece of a batch (see
/// [`PieceCache::flush`]). `WINDOWS`: every piece starts at least 16 bytes
/// before the end of `text` (the caller checked the last one; pieces come
/// in order), so each piece's 16-byte window is read without a bounds check.
#[inline(always)]
#[allow(unsafe_code)] // the unchecked window read, see the SAFETY comment
fn pack_batch<const WINDOWS: bool>(text: &[u8], batch: &mut [Pending], t: View<'_>) {
    let base = t.buckets.as_ptr();
    for p in batch.iter_mut() {
        let n = p.end - p.start;
        if n.wrapping_sub(1) < MID_MAX {
            let (k0, k1) = if WINDOWS {
                debug_assert!(p.start + MID_MAX <= text.len());
                // SAFETY: with WINDOWS the caller checked that the batch's
                // last piece starts at least MID_MAX bytes before the end of
                // `text`; pieces come in order, so `p.start + MID_MAX <=
                // text.len()` and the unaligned 16-byte read is in bounds.
                let w = unsafe {
                    text.as_ptr()
                        .add(p.start)
                        .cast::<[u8; MID_MAX]>()
                        .read_unaligned()
                };
                key16_window(w, n)
            } else {
                key16(text, p.start, p.end)
            };
            let off = t.home_offset(k0, k1, n);
            prefetch(base.cast::<u8>().wrapping_add(off));
            (p.key, p.at) = ([k0, k1], (off + n) as u64);
        } else {
            p.at = 0;
        }
    }
}

/// Phase one of [`PieceCache::encode_text`] as the pre-tokenizer's sink:
/// each piece is packed, hashed and its bucket prefetched into a batch held
/// in place; every [`BATCH`] pieces the batch is probed and emitted. The
/// table's base, shift and mask are copied here (and again after each
/// flush, which may grow or wipe the table), so the step inlined into the
/// scanners reads no field behind the cache.
pub(super) struct Collect<'c, 'a, M: PieceModel, G: FnMut(&mut Vec<Rank>)> {
    cache: &'c mut PieceCache,
    seed: &'a Seed,
    model: &'a M,
    text: &'a [u8],
    out: &'c mut Vec<Rank>,
    flushed: &'c mut G,
    len: usize,
    /// [`BATCH`] pieces, plus room for one block's run past it
    /// ([`BATCH_SLOTS`]).
    batch: Vec<Pending>,
}

/// The slots of a batch: [`BATCH`] pieces, plus room for one block's run
/// past it.
pub(super) const BATCH_SLOTS: usize = BATCH + 64;

impl<'c, 'a, M: PieceModel, G: FnMut(&mut Vec<Rank>)> Collect<'c, 'a, M, G> {
    pub(super) fn new(
        cache: &'c mut PieceCache,
        seed: &'a Seed,
        model: &'a M,
        text: &'a [u8],
        out: &'c mut Vec<Rank>,
        flushed: &'c mut G,
        mut batch: Vec<Pending>,
    ) -> Self {
        // a kept batch is reused as it is: every slot is written before it
        // is read (`len` counts the written ones)
        if batch.len() != BATCH_SLOTS {
            batch = vec![Pending::default(); BATCH_SLOTS];
        }
        Collect {
            cache,
            seed,
            model,
            text,
            out,
            flushed,
            len: 0,
            batch,
        }
    }

    /// The batch, for the next call to keep.
    pub(super) fn into_batch(self) -> Vec<Pending> {
        self.batch
    }

    /// Probes and emits the pending pieces, then re-reads the table.
    #[inline(never)]
    pub(super) fn flush(&mut self) {
        let batch = &mut self.batch[..self.len.min(BATCH_SLOTS)];
        self.cache
            .flush(self.seed, self.model, self.text, batch, self.out);
        self.len = 0;
        (self.flushed)(self.out);
    }
}

impl<M: PieceModel, G: FnMut(&mut Vec<Rank>)> Collect<'_, '_, M, G> {
    /// An id given by the caller, in order with the pieces: the token of
    /// `text[start..end]` (at least one byte), emitted as `id`.
    pub(super) fn fixed(&mut self, start: usize, end: usize, id: Rank) {
        debug_assert!(start < end && end & FIXED == 0);
        if let Some(slot) = self.batch.get_mut(self.len) {
            slot.start = start;
            slot.end = end | FIXED;
            slot.key = [u64::from(id), 0];
        }
        self.len += 1;
        if self.len >= BATCH {
            Collect::flush(self);
        }
    }
}

/// A sink for the pieces of `text[by..]`: each piece is passed on shifted
/// by `by`, into the coordinates of the whole text.
pub(super) struct Shifted<T> {
    pub(super) sink: T,
    pub(super) by: usize,
}

impl<T: SpanSink> SpanSink for Shifted<T> {
    #[inline(always)]
    fn span(&mut self, start: usize, end: usize) {
        self.sink.span(start + self.by, end + self.by);
    }

    #[inline(always)]
    fn run(&mut self, start: usize, base: usize, ends: u64) -> usize {
        self.sink.run(start + self.by, base + self.by, ends) - self.by
    }

    #[inline(always)]
    fn fixed(&mut self, start: usize, end: usize, id: Rank) {
        self.sink.fixed(start + self.by, end + self.by, id);
    }

    #[inline(always)]
    fn stop(&mut self) -> bool {
        self.sink.stop()
    }
}

impl<M: PieceModel, G: FnMut(&mut Vec<Rank>)> SpanSink for &mut Collect<'_, '_, M, G> {
    #[inline(always)]
    fn fixed(&mut self, start: usize, end: usize, id: Rank) {
        Collect::fixed(self, start, end, id);
    }

    #[inline(always)]
    fn span(&mut self, start: usize, end: usize) {
        if let Some(slot) = self.batch.get_mut(self.len) {
            slot.start = start;
            slot.end = end;
        }
        self.len += 1;
        if self.len >= BATCH {
            Collect::flush(self);
        }
    }

    #[inline(always)]
    fn run(&mut self, mut start: usize, base: usize, mut ends: u64) -> usize {
        // room for a whole block of pieces past BATCH (see `batch`'s length)
        let mut len = self.len;
        while ends != 0 {
            let end = base + ends.trailing_zeros() as usize;
            if let Some(slot) = self.batch.get_mut(len) {
                slot.start = start;
                slot.end = end;
            }
            len += 1;
            start = end;
            ends &= ends - 1;
        }
        self.len = len;
        if len >= BATCH {
            Collect::flush(self);
        }
        start
    }
}
