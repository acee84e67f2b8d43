//! Counting distinct pre-token chunks in parallel: the [`ChunkCounter`] that
//! fills a [`ChunkTable`].
//!
//! The table keeps chunks in **first-seen order** (the tie-break rule reads
//! chunks in that order). Counting runs in parallel by cutting the input into
//! blocks, counting each block into its own table and merging the block tables
//! in block order: a chunk first appears in the earliest block that holds it, so
//! the merged order is the first-seen order of the whole input, whatever the
//! number of threads or the block size.
//!
//! Blocks are cut only at document boundaries, at special-token / separator
//! boundaries, or at a *safe cut* of the pre-tokenizer
//! ([`Pretokenizer::next_safe_cut`]: for the named patterns, a letter or number
//! followed by a space or `\n`), where pre-tokenizing both sides separately
//! gives exactly the pieces of the whole, whatever text follows.
//! Custom patterns (and pattern `None`) are never cut inside a document.

use std::sync::atomic::Ordering;

use aho_corasick::{AhoCorasick, MatchKind};
use rayon::prelude::*;

use super::stream::STREAM_BLOCK;
use super::{ChunkTable, Control};
use crate::error::{Error, Result};
use crate::parallel;
use crate::pretok::Pretokenizer;
use crate::SpanSink;

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
    pub(super) table: ChunkTable,
}

/// The default target size of one parallel counting task.
pub const DEFAULT_BLOCK: usize = 1 << 20;

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
            table: ChunkTable::new(),
        })
    }

    /// The table counted so far.
    pub fn table(&self) -> &ChunkTable {
        &self.table
    }

    /// Ends counting and returns the table.
    pub fn finish(self) -> ChunkTable {
        self.table
    }

    pub(super) fn can_cut_inside(&self) -> bool {
        matches!(
            self.pretok,
            Pretokenizer::Gpt2 | Pretokenizer::Cl100k | Pretokenizer::O200k
        )
    }

    /// Counts whole documents (each one is cut independently of the others).
    /// Runs on the current rayon pool; checks `ctl` between tasks.
    ///
    /// Complexity: linear in the total text, parallel over blocks.
    pub fn feed_documents(&mut self, docs: &[&str], ctl: &Control) -> Result<()> {
        let mut segments: Vec<&str> = Vec::new();
        for doc in docs {
            self.segments_of(doc, &mut segments);
        }
        self.count_segments(&segments, ctl)
    }

    /// Splits a document at the separator and the special tokens, and cuts long
    /// segments at safe cuts, appending the pieces to `out`.
    fn segments_of<'a>(&self, doc: &'a str, out: &mut Vec<&'a str>) {
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

    /// Groups segments into tasks of about `block_size` bytes, counts the tasks
    /// in parallel and merges their tables in order.
    fn count_segments(&mut self, segments: &[&str], ctl: &Control) -> Result<()> {
        let mut tasks: Vec<&[&str]> = Vec::new();
        let mut begin = 0;
        let mut size = 0;
        for (i, s) in segments.iter().enumerate() {
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
        let pretok = &self.pretok;
        let block_size = self.block_size;
        let tables: Vec<Result<ChunkTable>> = tasks
            .par_iter()
            .map(|task| {
                ctl.check()?;
                // Distinct chunks are typically a few percent of the pieces.
                let mut t = ChunkTable::with_capacity(block_size / 64, block_size / 16);
                let mut n = 0usize;
                for seg in task.iter() {
                    // the span loop: the block pre-tokenizer where the CPU has
                    // it (not the piece iterator, always the scalar scanner)
                    let mut sink = CountPieces {
                        t: &mut t,
                        b: seg.as_bytes(),
                        err: None,
                        ctl,
                        seen: 0,
                    };
                    pretok.for_each_span(seg, &mut sink)?;
                    if let Some(e) = sink.err {
                        return Err(e);
                    }
                    n += seg.len();
                }
                ctl.bytes_done.fetch_add(n as u64, Ordering::Relaxed);
                Ok(t)
            })
            .collect();
        for t in tables {
            self.table.absorb(t?)?;
        }
        Ok(())
    }
}

/// Adds each piece to a chunk table. Asked to stop (by a custom pattern's
/// regex loop, before each piece), it checks every 4,096 pieces whether the
/// job was cancelled: a regex pre-tokenizer is slow enough (tens of MB/s) that
/// one long segment would otherwise delay Ctrl-C by seconds (the named
/// patterns' scanners, which never ask, finish 40 MB in ~0.1 s).
struct CountPieces<'a> {
    t: &'a mut ChunkTable,
    b: &'a [u8],
    err: Option<Error>,
    ctl: &'a Control,
    seen: u32,
}

impl SpanSink for &mut CountPieces<'_> {
    #[inline(always)]
    fn span(&mut self, start: usize, end: usize) {
        if self.err.is_none() {
            if let Err(e) = self.t.add(&self.b[start..end], 1) {
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
        Ok(c.finish())
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
