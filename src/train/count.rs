//! Counting distinct pre-token chunks in parallel: the [`ChunkCounter`] that
//! fills a [`ChunkTable`].
//!
//! The table keeps chunks in **first-seen order** (the tie-break rule reads
//! chunks in that order). Counting runs in parallel by cutting the input into
//! blocks; each worker thread counts the blocks it takes into its own
//! [`Tally`], which records every chunk's first position in the whole input.
//! At the end the tallies are merged (counts add, first positions take the
//! minimum) and sorted by first position: the first-seen order of the whole
//! input, whatever the number of threads, the block size or which thread
//! counted which block.
//!
//! Blocks are cut only at document boundaries, at special-token / separator
//! boundaries, or at a *safe cut* of the pre-tokenizer
//! ([`Pretokenizer::next_safe_cut`]: for the named patterns, a letter or number
//! followed by a space or `\n`), where pre-tokenizing both sides separately
//! gives exactly the pieces of the whole, whatever text follows.
//! Custom patterns (and pattern `None`) are never cut inside a document.

use std::sync::atomic::Ordering;
use std::sync::Mutex;

use aho_corasick::{AhoCorasick, MatchKind};
use rayon::prelude::*;

use super::spill::Spill;
use super::tally::{Batch, Tally};
use super::{ChunkTable, Control};
use crate::error::{Error, Result};
use crate::parallel;
use crate::pretok::Pretokenizer;
use crate::SpanSink;

/// What counting ended with ([`ChunkCounter::finish_or_runs`]).
#[derive(Debug)]
pub enum Counted {
    /// The table, in first-seen order.
    Table(ChunkTable),
    /// The sorted runs spilled to disk, not merged.
    Runs(Spill),
}

/// Counts chunks of documents into a [`ChunkTable`], in parallel.
///
/// Documents are cut out of the special tokens (and at the optional document
/// separator), each remaining segment is pre-tokenized, and the chunks are
/// counted. Feeding documents one call after another gives the same table as
/// feeding them all at once.
pub struct ChunkCounter {
    pub(super) pretok: Pretokenizer,
    pub(super) specials: Option<AhoCorasick>,
    pub(super) separator: Option<Vec<u8>>,
    /// Longest special token or separator, in bytes (0 when none).
    pub(super) max_cut_len: usize,
    pub(super) block_size: usize,
    pub(super) stream_block: usize,
    pub(super) range_size: usize,
    /// The special tokens and the separator as bytes (the file reader checks
    /// that no occurrence spans a cut).
    pub(super) cut_strings: Vec<Vec<u8>>,
    /// One tally per worker thread of the pool counting (index
    /// `rayon::current_thread_index`).
    pub(super) tallies: Vec<Mutex<Tally>>,
    /// Input bytes fed so far: the position of the next input's first byte.
    pub(super) offset: u64,
    /// Run files when counting under a memory limit ([`Self::set_memory_limit`]).
    pub(super) spill: Option<Spill>,
    /// The limit in bytes for all tallies together.
    pub(super) memory_limit: usize,
    /// The most the table merged from spilled runs may need while it is
    /// built ([`Self::set_table_limit`]); `None`: no check.
    pub(super) table_limit: Option<u64>,
    /// `(device, inode)` of the files read so far (by `feed_text_files`,
    /// files.rs): a file named twice is read once.
    pub(super) files_seen: rustc_hash::FxHashSet<(u64, u64)>,
}

/// The default target size of one parallel counting task.
pub const DEFAULT_BLOCK: usize = 1 << 20;

/// How much a streamed reader reads at a time ([`super::stream`]).
pub const STREAM_BLOCK: usize = 16 << 20;

/// Bytes per range task of a file ([`super::ranges`]; results do not depend on it).
pub const RANGE: usize = 8 << 20;

impl ChunkCounter {
    /// A counter for `pretok`, cutting out `specials` (longest first at a
    /// position, like the reference's regex alternation) and splitting documents
    /// at `separator` (dropped) when given. `block_size` is the target task size
    /// in bytes (results do not depend on it).
    pub fn new(
        pretok: Pretokenizer,
        specials: &[String],
        separator: Option<&str>,
        block_size: usize,
    ) -> Result<Self> {
        if specials.iter().any(String::is_empty) {
            // it would match between every two bytes, inside characters too
            return Err(Error::training("a special token is the empty string"));
        }
        let specials_ac = if specials.is_empty() {
            None
        } else {
            Some(
                AhoCorasick::builder()
                    .match_kind(MatchKind::LeftmostLongest)
                    .build(specials)
                    .map_err(|e| Error::training(format!("special tokens: {e}")))?,
            )
        };
        let separator = match separator {
            Some("") => return Err(Error::training("the document separator is empty")),
            s => s.map(|s| s.as_bytes().to_vec()),
        };
        let cut_strings: Vec<Vec<u8>> = specials
            .iter()
            .map(|s| s.as_bytes().to_vec())
            .chain(separator.iter().cloned())
            .collect();
        let max_cut_len = specials
            .iter()
            .map(|s| s.len())
            .chain(separator.iter().map(|s| s.len()))
            .max()
            .unwrap_or(0);
        Ok(ChunkCounter {
            pretok,
            specials: specials_ac,
            separator,
            max_cut_len,
            block_size: block_size.max(64),
            stream_block: STREAM_BLOCK,
            range_size: RANGE,
            cut_strings,
            tallies: Vec::new(),
            offset: 0,
            spill: None,
            memory_limit: usize::MAX,
            table_limit: None,
            files_seen: Default::default(),
        })
    }

    /// Keeps the tallies under `bytes` in total: a thread's tally that grows
    /// past its share is spilled to a sorted run file in a new directory under
    /// `dir` (default: the system's temporary directory) and merged exactly at
    /// the end (see [`super::spill`]).
    pub fn set_memory_limit(&mut self, bytes: usize, dir: Option<&std::path::Path>) -> Result<()> {
        self.memory_limit = bytes;
        self.spill = Some(Spill::new(dir)?);
        Ok(())
    }

    /// Refuses to build, from spilled runs, a table larger than `bytes` (the
    /// whole memory limit, where [`Self::set_memory_limit`] gets the
    /// tallies' share of it): once the chunks merged so far pass it, the
    /// merge only counts the rest and ends with [`Error::MemoryLimit`] (see
    /// [`Spill::merge`]).
    pub fn set_table_limit(&mut self, bytes: u64) {
        self.table_limit = Some(bytes);
    }

    /// Number of run files spilled so far (0 without a memory limit).
    pub fn spilled_runs(&self) -> usize {
        self.spill.as_ref().map_or(0, Spill::runs)
    }

    /// Spills `t` when it holds more than its thread's share of the limit.
    pub(super) fn maybe_spill(&self, t: &mut Tally) -> Result<()> {
        if let Some(s) = &self.spill {
            let share = (self.memory_limit / self.tallies.len().max(1)).max(1 << 16);
            if t.heap_bytes() > share {
                s.spill(t)?;
            }
        }
        Ok(())
    }

    /// Merges the threads' tallies into the first one and returns it.
    fn merged(&mut self) -> Result<&mut Tally> {
        let mut all = std::mem::take(&mut self.tallies).into_iter();
        let mut acc = match all.next() {
            Some(t) => t.into_inner().unwrap_or_else(|e| e.into_inner()),
            None => Tally::default(),
        };
        for t in all {
            acc.absorb(t.into_inner().unwrap_or_else(|e| e.into_inner()))?;
        }
        self.tallies.push(Mutex::new(acc));
        Ok(self.tallies[0].get_mut().unwrap_or_else(|e| e.into_inner()))
    }

    /// Number of distinct chunks counted so far (merges the threads' tallies,
    /// and the spilled runs when there are some).
    pub fn distinct(&mut self) -> Result<usize> {
        if self.spilled_runs() > 0 {
            if let Some(s) = &self.spill {
                for t in &self.tallies {
                    s.spill(&mut t.lock().unwrap_or_else(|e| e.into_inner()))?;
                }
                return Ok(s.merge(self.table_limit)?.len());
            }
        }
        Ok(self.merged()?.len())
    }

    /// Ends counting and returns the table, in first-seen order.
    ///
    /// Complexity: O(n log n) for n distinct chunks.
    pub fn finish(mut self) -> Result<ChunkTable> {
        if self.spilled_runs() > 0 {
            if let Some(s) = &self.spill {
                for t in &self.tallies {
                    s.spill(&mut t.lock().unwrap_or_else(|e| e.into_inner()))?;
                }
                let table = s.merge(self.table_limit);
                drop(self);
                super::return_free_memory();
                return table;
            }
        }
        let t = std::mem::take(self.merged()?);
        let table = t.into_table();
        drop(self);
        super::return_free_memory();
        table
    }

    /// Ends counting as [`Self::finish`] does, but leaves spilled counts on
    /// disk: when runs were spilled, every tally is spilled too and the runs
    /// are returned unmerged (merge them with [`Spill::merge_each`]).
    pub fn finish_or_runs(mut self) -> Result<Counted> {
        if self.spilled_runs() > 0 {
            if let Some(s) = self.spill.take() {
                for t in &self.tallies {
                    s.spill(&mut t.lock().unwrap_or_else(|e| e.into_inner()))?;
                }
                drop(self);
                super::return_free_memory();
                return Ok(Counted::Runs(s));
            }
        }
        self.finish().map(Counted::Table)
    }

    /// Bytes held by the tallies (for memory accounting).
    pub fn heap_bytes(&self) -> usize {
        self.tallies
            .iter()
            .map(|t| t.lock().map_or(0, |t| t.heap_bytes()))
            .sum()
    }

    /// Makes sure there is one tally per thread of the current pool.
    pub(super) fn ensure_tallies(&mut self) {
        let n = rayon::current_num_threads().max(1);
        while self.tallies.len() < n {
            self.tallies.push(Mutex::new(Tally::default()));
        }
    }

    pub(super) fn can_cut_inside(&self) -> bool {
        self.pretok.named().is_some()
    }

    /// Counts whole documents (each one is cut independently of the others).
    /// Runs on the current rayon pool; checks `ctl` between tasks.
    ///
    /// Complexity: linear in the total text, parallel over blocks.
    pub fn feed_documents(&mut self, docs: &[&str], ctl: &Control) -> Result<()> {
        let mut segments: Vec<(u64, &str)> = Vec::new();
        let mut at = self.offset;
        for doc in docs {
            self.segments_of(doc, at, &mut segments);
            at += doc.len() as u64;
        }
        self.count_segments(&segments, ctl)?;
        self.offset = at;
        Ok(())
    }

    /// Splits a document (whose first byte is at position `at` of the input) at
    /// the separator and the special tokens, and cuts long segments at safe
    /// cuts, appending the pieces and their positions to `out`.
    pub(super) fn segments_of<'a>(&self, doc: &'a str, at: u64, out: &mut Vec<(u64, &'a str)>) {
        let mut segs: Vec<&str> = Vec::new();
        self.split_documents(doc, &mut segs);
        let base = doc.as_ptr() as usize;
        out.extend(
            segs.into_iter()
                .map(|s| (at + (s.as_ptr() as usize - base) as u64, s)),
        );
    }

    fn split_documents<'a>(&self, doc: &'a str, out: &mut Vec<&'a str>) {
        match &self.separator {
            Some(sep) => {
                let mut last = 0;
                for m in memchr::memmem::find_iter(doc.as_bytes(), sep) {
                    // The separator is a whole str, so both ends are char boundaries.
                    self.split_specials(&doc[last..m], out);
                    last = m + sep.len();
                }
                self.split_specials(&doc[last..], out);
            }
            None => self.split_specials(doc, out),
        }
    }

    fn split_specials<'a>(&self, doc: &'a str, out: &mut Vec<&'a str>) {
        match &self.specials {
            Some(ac) => {
                let mut last = 0;
                for m in ac.find_iter(doc) {
                    self.cut_long(&doc[last..m.start()], out);
                    last = m.end();
                }
                self.cut_long(&doc[last..], out);
            }
            None => self.cut_long(doc, out),
        }
    }

    fn cut_long<'a>(&self, seg: &'a str, out: &mut Vec<&'a str>) {
        if seg.is_empty() {
            return;
        }
        if !self.can_cut_inside() || seg.len() <= self.block_size {
            out.push(seg);
            return;
        }
        let mut start = 0;
        while seg.len() - start > self.block_size {
            match self.pretok.next_safe_cut(seg, start + self.block_size) {
                Some(c) => {
                    out.push(&seg[start..c]);
                    start = c;
                }
                None => break,
            }
        }
        out.push(&seg[start..]);
    }

    /// Groups segments into tasks of about `block_size` bytes and counts the
    /// tasks in parallel, each into the tally of the thread that runs it.
    fn count_segments(&mut self, segments: &[(u64, &str)], ctl: &Control) -> Result<()> {
        let mut tasks: Vec<&[(u64, &str)]> = Vec::new();
        let mut begin = 0;
        let mut size = 0;
        for (i, (_, s)) in segments.iter().enumerate() {
            size += s.len();
            if size >= self.block_size {
                tasks.push(&segments[begin..=i]);
                begin = i + 1;
                size = 0;
            }
        }
        if begin < segments.len() {
            tasks.push(&segments[begin..]);
        }
        self.ensure_tallies();
        let this = &*self;
        let results: Vec<Result<()>> = tasks
            .par_iter()
            .map(|task| {
                ctl.check()?;
                let mut t = this.my_tally();
                let mut n = 0usize;
                for &(at, seg) in task.iter() {
                    this.count_text(&mut t, seg, at, ctl)?;
                    n += seg.len();
                }
                this.maybe_spill(&mut t)?;
                ctl.bytes_done.fetch_add(n as u64, Ordering::Relaxed);
                Ok(())
            })
            .collect();
        results.into_iter().collect()
    }

    /// The tally of the calling worker thread.
    pub(super) fn my_tally(&self) -> std::sync::MutexGuard<'_, Tally> {
        let i = rayon::current_thread_index().unwrap_or(0) % self.tallies.len().max(1);
        // a poisoned lock only means a panic elsewhere; the tally is intact
        self.tallies[i].lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Counts the pieces of one segment (no special token or separator inside)
    /// whose first byte is at position `at` of the input.
    pub(super) fn count_text(
        &self,
        t: &mut Tally,
        seg: &str,
        at: u64,
        ctl: &Control,
    ) -> Result<()> {
        // the span loop: the block pre-tokenizer where the CPU has it (not the
        // piece iterator, always the scalar scanner)
        let mut sink = CountPieces {
            t,
            batch: Batch::default(),
            b: seg.as_bytes(),
            at,
            err: None,
            ctl,
            seen: 0,
        };
        self.pretok.for_each_span(seg, &mut sink)?;
        sink.t.flush(&mut sink.batch);
        match sink.err {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// Adds each piece to a chunk table. Asked to stop (by a custom pattern's
/// regex loop, before each piece), it checks every 4,096 pieces whether the
/// job was cancelled: a regex pre-tokenizer is slow enough (tens of MB/s) that
/// one long segment would otherwise delay Ctrl-C by seconds (the named
/// patterns' scanners, which never ask, finish 40 MB in ~0.1 s).
struct CountPieces<'a> {
    t: &'a mut Tally,
    batch: Batch,
    b: &'a [u8],
    at: u64,
    err: Option<Error>,
    ctl: &'a Control,
    seen: u32,
}

impl SpanSink for &mut CountPieces<'_> {
    #[inline(always)]
    fn span(&mut self, start: usize, end: usize) {
        if Tally::is_inline(end - start) {
            self.t
                .queue_piece(&mut self.batch, self.b, start, end, self.at);
        } else if self.err.is_none() {
            if let Err(e) = self
                .t
                .add_long(&self.b[start..end], 1, self.at + start as u64)
            {
                self.err = Some(e);
            }
        }
    }

    fn stop(&mut self) -> bool {
        self.seen = self.seen.wrapping_add(1);
        if self.seen.is_multiple_of(4096) {
            if let Err(e) = self.ctl.check() {
                self.err.get_or_insert(e);
            }
        }
        self.err.is_some()
    }
}

/// Counts `docs` on `threads` threads (`None`: one per core; see
/// [`crate::parallel`]) in one call: a convenience over [`ChunkCounter`].
pub fn count_documents(
    pretok: Pretokenizer,
    specials: &[String],
    separator: Option<&str>,
    docs: &[&str],
    threads: Option<usize>,
    block_size: usize,
) -> Result<ChunkTable> {
    let ctl = Control::default();
    let pool = parallel::pool(threads)?;
    pool.install(|| {
        let mut c = ChunkCounter::new(pretok, specials, separator, block_size)?;
        c.feed_documents(docs, &ctl)?;
        c.finish()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference_count(p: &Pretokenizer, docs: &[&str]) -> Vec<(Vec<u8>, u64)> {
        let mut out: Vec<(Vec<u8>, u64)> = Vec::new();
        for d in docs {
            for piece in p.split(d).unwrap() {
                match out.iter_mut().find(|(k, _)| k == piece.as_bytes()) {
                    Some(e) => e.1 += 1,
                    None => out.push((piece.as_bytes().to_vec(), 1)),
                }
            }
        }
        out
    }

    #[test]
    fn block_size_does_not_change_counts() {
        let text = "Hello world.\nThis is  a test\n\nof cutting\nblocks, it's fine.\n  Indented\nx\ny 123 z\n".repeat(20);
        for name in ["gpt2", "cl100k", "o200k"] {
            let p = Pretokenizer::new(Some(name)).unwrap();
            let want = reference_count(&p, &[&text]);
            for bs in [64, 100, 333, 1 << 20] {
                let t = count_documents(p.clone(), &[], None, &[&text], Some(2), bs).unwrap();
                let got: Vec<_> = t.iter().map(|(k, n)| (k.to_vec(), n)).collect();
                assert_eq!(got, want, "{name} block {bs}");
            }
        }
    }
}
