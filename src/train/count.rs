//! Counting distinct pre-token chunks: the [`ChunkTable`] and the parallel
//! [`Counter`] that fills it.
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

use std::hash::BuildHasher;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use aho_corasick::{AhoCorasick, MatchKind};
use hashbrown::HashTable;
use rayon::prelude::*;
use rustc_hash::FxBuildHasher;

use crate::error::{Error, Result};
use crate::pretok::Pretokenizer;

// ---------------------------------------------------------------- ChunkTable

#[derive(Debug, Clone, Copy)]
struct Entry {
    start: u64,
    len: u32,
    count: u64,
    hash: u64,
}

/// Distinct byte chunks with their counts, in first-seen order.
///
/// The chunk bytes live back to back in one arena (`bytes`), so the whole table
/// costs about 32 bytes per distinct chunk plus the chunk bytes plus an index of
/// one `u32` per slot, and the arena is exactly the concatenation of the chunks
/// in first-seen order (the trainer works on it directly).
#[derive(Debug, Default, Clone)]
pub struct ChunkTable {
    bytes: Vec<u8>,
    entries: Vec<Entry>,
    index: HashTable<Slot>,
}

/// An index slot: the entry number plus the chunk length and 32 hash bits, so
/// most non-matching candidates are rejected without touching the entry or
/// the arena.
#[derive(Debug, Clone, Copy)]
struct Slot {
    idx: u32,
    len: u32,
    tag: u32,
}

#[inline]
fn hash_bytes(b: &[u8]) -> u64 {
    FxBuildHasher.hash_one(b)
}

/// Byte equality with the short cases (most chunks are a few bytes) done in
/// registers instead of a `memcmp` call. Precondition: `a.len() == b.len()`.
#[inline]
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if (8..=16).contains(&n) {
        let w = |s: &[u8], i: usize| -> u64 {
            let mut x = [0u8; 8];
            x.copy_from_slice(&s[i..i + 8]);
            u64::from_le_bytes(x)
        };
        w(a, 0) == w(b, 0) && w(a, n - 8) == w(b, n - 8)
    } else if n < 8 {
        a.iter().zip(b).all(|(x, y)| x == y)
    } else {
        a == b
    }
}

impl ChunkTable {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of distinct chunks.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when no chunk was counted.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Total number of chunk occurrences (sum of counts), saturating.
    pub fn total(&self) -> u64 {
        self.entries
            .iter()
            .fold(0u64, |a, e| a.saturating_add(e.count))
    }

    /// Total bytes of the distinct chunks (the arena size).
    pub fn arena_len(&self) -> usize {
        self.bytes.len()
    }

    /// The concatenation of all distinct chunks in first-seen order.
    pub fn arena(&self) -> &[u8] {
        &self.bytes
    }

    /// The chunk and count at index `i` (first-seen order), or `None` past the end.
    pub fn get(&self, i: usize) -> Option<(&[u8], u64)> {
        let e = self.entries.get(i)?;
        Some((self.slice(e), e.count))
    }

    /// An empty table with room for `entries` chunks of `bytes` bytes in total.
    pub fn with_capacity(entries: usize, bytes: usize) -> Self {
        ChunkTable {
            bytes: Vec::with_capacity(bytes),
            entries: Vec::with_capacity(entries),
            index: HashTable::with_capacity(entries),
        }
    }

    #[inline]
    fn find(&self, chunk: &[u8], h: u64) -> Option<u32> {
        let (len, tag) = (chunk.len() as u32, (h >> 32) as u32);
        self.index
            .find(h, |s| {
                s.len == len && s.tag == tag && {
                    let e = &self.entries[s.idx as usize];
                    same_bytes(
                        &self.bytes[e.start as usize..e.start as usize + e.len as usize],
                        chunk,
                    )
                }
            })
            .map(|s| s.idx)
    }

    /// The count of `chunk`, 0 when absent. O(len(chunk)).
    pub fn count_of(&self, chunk: &[u8]) -> u64 {
        self.find(chunk, hash_bytes(chunk))
            .map_or(0, |i| self.entries[i as usize].count)
    }

    /// Iterates `(chunk, count)` in first-seen order.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], u64)> + '_ {
        self.entries.iter().map(move |e| (self.slice(e), e.count))
    }

    #[inline]
    fn slice(&self, e: &Entry) -> &[u8] {
        // Entries are only created by `insert_new`, which appends the bytes first.
        &self.bytes[e.start as usize..e.start as usize + e.len as usize]
    }

    /// Adds `n` to the count of `chunk` (inserting it at the end when new).
    /// Amortised O(len(chunk)). Counts saturate at `u64::MAX`.
    ///
    /// Returns an error when one chunk is 4 GiB or longer.
    pub fn add(&mut self, chunk: &[u8], n: u64) -> Result<()> {
        self.add_hashed(chunk, hash_bytes(chunk), n)
    }

    #[inline]
    fn add_hashed(&mut self, chunk: &[u8], h: u64, n: u64) -> Result<()> {
        if let Some(i) = self.find(chunk, h) {
            let e = &mut self.entries[i as usize];
            e.count = e.count.saturating_add(n);
            return Ok(());
        }
        self.insert_new(chunk, h, n)
    }

    #[cold]
    fn insert_new(&mut self, chunk: &[u8], h: u64, n: u64) -> Result<()> {
        let len = u32::try_from(chunk.len()).map_err(|_| {
            Error::InvalidTraining(format!(
                "a single chunk of {} bytes is too long (the limit is 4 GiB); use a pre-tokenization pattern or split the documents",
                chunk.len()
            ))
        })?;
        let idx = u32::try_from(self.entries.len())
            .map_err(|_| Error::InvalidTraining("more than 4 billion distinct chunks".into()))?;
        let start = self.bytes.len() as u64;
        self.bytes.extend_from_slice(chunk);
        self.entries.push(Entry {
            start,
            len,
            count: n,
            hash: h,
        });
        let entries = &self.entries;
        let slot = Slot {
            idx,
            len,
            tag: (h >> 32) as u32,
        };
        self.index
            .insert_unique(h, slot, |s| entries[s.idx as usize].hash);
        Ok(())
    }

    /// Adds every count of `other` (in `other`'s order, so new chunks go after
    /// the existing ones in the order `other` first saw them).
    /// O(size of `other`).
    pub fn merge_from(&mut self, other: &ChunkTable) -> Result<()> {
        self.bytes.reserve(other.bytes.len() / 4);
        for e in &other.entries {
            self.add_hashed(other.slice(e), e.hash, e.count)?;
        }
        Ok(())
    }

    /// Takes `other` whole when `self` is empty (no copy), else merges it.
    pub fn absorb(&mut self, other: ChunkTable) -> Result<()> {
        if self.entries.is_empty() {
            *self = other;
            Ok(())
        } else {
            self.merge_from(&other)
        }
    }

    /// Serialises the entries: per chunk, a LEB128 length, the bytes and a LEB128
    /// count (the body of bytepair's `.bpc` chunk-count file).
    pub fn to_body(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.bytes.len() + 4 * self.entries.len());
        for (chunk, n) in self.iter() {
            put_varint(&mut out, chunk.len() as u64);
            out.extend_from_slice(chunk);
            put_varint(&mut out, n);
        }
        out
    }

    /// Parses a body written by [`Self::to_body`] holding exactly `entries`
    /// chunks. A chunk listed twice has its counts added. Errors on truncated
    /// or trailing data.
    pub fn from_body(body: &[u8], entries: u64) -> Result<Self> {
        let bad = || Error::InvalidTraining("chunk-count data is truncated or damaged".into());
        let mut t = ChunkTable::new();
        let mut pos = 0usize;
        for _ in 0..entries {
            let n = get_varint(body, &mut pos).ok_or_else(bad)?;
            let end = usize::try_from(n)
                .ok()
                .and_then(|n| pos.checked_add(n))
                .ok_or_else(bad)?;
            let chunk = body.get(pos..end).ok_or_else(bad)?;
            pos = end;
            let c = get_varint(body, &mut pos).ok_or_else(bad)?;
            t.add(chunk, c)?;
        }
        if pos != body.len() {
            return Err(Error::InvalidTraining(
                "chunk-count data has trailing bytes".into(),
            ));
        }
        Ok(t)
    }
}

impl PartialEq for ChunkTable {
    /// Same chunks, same counts, same order.
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

fn put_varint(out: &mut Vec<u8>, mut n: u64) {
    loop {
        let b = (n & 0x7F) as u8;
        n >>= 7;
        if n == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

fn get_varint(raw: &[u8], pos: &mut usize) -> Option<u64> {
    let mut n = 0u64;
    let mut shift = 0u32;
    loop {
        let b = *raw.get(*pos)?;
        *pos += 1;
        if shift >= 64 || (shift == 63 && b & 0x7E != 0) {
            return None;
        }
        n |= u64::from(b & 0x7F) << shift;
        shift += 7;
        if b & 0x80 == 0 {
            return Some(n);
        }
    }
}

// ---------------------------------------------------------------- Counter

/// Shared flags between a long-running job and its caller: a cancel flag
/// checked in the loops, and progress counters.
#[derive(Debug, Default)]
pub struct Control {
    /// Set to stop the job; it then returns [`Error::Interrupted`] soon.
    pub cancel: AtomicBool,
    /// Input bytes counted so far.
    pub bytes_done: AtomicU64,
    /// Merges learned so far.
    pub merges_done: AtomicU64,
}

impl Control {
    /// Errors with [`Error::Interrupted`] when cancelled.
    #[inline]
    pub fn check(&self) -> Result<()> {
        if self.cancel.load(Ordering::Relaxed) {
            Err(Error::Interrupted)
        } else {
            Ok(())
        }
    }
}

/// Counts chunks of documents into a [`ChunkTable`], in parallel.
///
/// Documents are cut out of the special tokens (and at the optional document
/// separator), each remaining segment is pre-tokenized, and the chunks are
/// counted. Feeding documents one call after another gives the same table as
/// feeding them all at once.
pub struct Counter {
    pretok: Pretokenizer,
    specials: Option<AhoCorasick>,
    separator: Option<Vec<u8>>,
    /// Longest special token or separator, in bytes (0 when none).
    max_cut_len: usize,
    block_size: usize,
    stream_block: usize,
    table: ChunkTable,
}

/// How much a streamed reader reads at a time.
pub const STREAM_BLOCK: usize = 16 << 20;

fn not_utf8(name: &str, base: u64, e: &std::str::Utf8Error) -> Error {
    Error::InvalidTraining(format!(
        "{name}: not UTF-8 text (invalid byte at offset {}); re-encode the file as UTF-8",
        base + e.valid_up_to() as u64
    ))
}

/// The default target size of one parallel counting task.
pub const DEFAULT_BLOCK: usize = 1 << 20;

impl Counter {
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
                    .map_err(|e| Error::InvalidTraining(format!("special tokens: {e}")))?,
            )
        };
        let separator = match separator {
            Some("") => {
                return Err(Error::InvalidTraining(
                    "the document separator is empty".into(),
                ))
            }
            s => s.map(|s| s.as_bytes().to_vec()),
        };
        let max_cut_len = specials
            .iter()
            .map(|s| s.len())
            .chain(separator.iter().map(|s| s.len()))
            .max()
            .unwrap_or(0);
        Ok(Counter {
            pretok,
            specials: specials_ac,
            separator,
            max_cut_len,
            block_size: block_size.max(64),
            stream_block: STREAM_BLOCK,
            table: ChunkTable::new(),
        })
    }

    /// Sets how many bytes [`Self::feed_reader`] reads at a time (results do
    /// not depend on it; tests use small values).
    pub fn set_stream_block(&mut self, n: usize) {
        self.stream_block = n.max(16);
    }

    /// The table counted so far.
    pub fn table(&self) -> &ChunkTable {
        &self.table
    }

    /// Ends counting and returns the table.
    pub fn finish(self) -> ChunkTable {
        self.table
    }

    fn can_cut_inside(&self) -> bool {
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
        let scanner = pretok.scanner();
        let whole = matches!(pretok, Pretokenizer::Whole);
        let tables: Vec<Result<ChunkTable>> = tasks
            .par_iter()
            .map(|task| {
                ctl.check()?;
                // Distinct chunks are typically a few percent of the pieces.
                let mut t = ChunkTable::with_capacity(block_size / 64, block_size / 16);
                let mut n = 0usize;
                for seg in task.iter() {
                    if let Some(sc) = &scanner {
                        for piece in sc.pieces(seg) {
                            t.add(piece.as_bytes(), 1)?;
                        }
                    } else if whole {
                        t.add(seg.as_bytes(), 1)?;
                    } else {
                        let mut err = None;
                        pretok.for_each_piece(seg, |p| {
                            if err.is_none() {
                                if let Err(e) = t.add(p.as_bytes(), 1) {
                                    err = Some(e);
                                }
                            }
                        })?;
                        if let Some(e) = err {
                            return Err(e);
                        }
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

    /// Counts one document read from `reader` in blocks (never held whole when
    /// the pattern allows safe cuts): memory stays about one block plus the
    /// table. `name` labels errors (a file path). Text that is not UTF-8 is an
    /// error naming `name` and the byte offset.
    ///
    /// Complexity: linear in the stream; the block grows geometrically when no
    /// cut is found (pattern `None` or a custom pattern: the document is read whole).
    pub fn feed_reader<R: std::io::Read>(
        &mut self,
        mut reader: R,
        name: &str,
        ctl: &Control,
    ) -> Result<()> {
        let mut buf: Vec<u8> = Vec::new();
        let mut base: u64 = 0;
        let mut block = self.stream_block;
        loop {
            let old = buf.len();
            buf.resize(old + block, 0);
            let mut filled = old;
            let mut eof = false;
            while filled < buf.len() {
                match reader.read(&mut buf[filled..]) {
                    Ok(0) => {
                        eof = true;
                        break;
                    }
                    Ok(n) => filled += n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        return Err(Error::InvalidTraining(format!("{name}: read error: {e}")))
                    }
                }
            }
            buf.truncate(filled);
            ctl.check()?;
            let text = match std::str::from_utf8(&buf) {
                Ok(t) => t,
                Err(e) if e.error_len().is_none() && !eof => {
                    // An incomplete character at the end of the block: keep it for later.
                    std::str::from_utf8(&buf[..e.valid_up_to()])
                        .map_err(|e| not_utf8(name, base, &e))?
                }
                Err(e) => return Err(not_utf8(name, base, &e)),
            };
            if eof {
                return self.feed_documents(&[text], ctl);
            }
            match self.stream_cut(text) {
                Some(c) => {
                    self.feed_documents(&[&text[..c]], ctl)?;
                    buf.drain(..c);
                    base += c as u64;
                    block = self.stream_block;
                }
                None => block = block.saturating_mul(2),
            }
        }
    }

    /// Where a streamed buffer may be cut so that counting `buf[..c]` now and
    /// `buf[c..] + more` later equals counting it all at once: a safe cut (see
    /// the module docs) that no special token or separator occurrence spans,
    /// or `None` when there is none (the caller must read more).
    ///
    /// `buf` must be valid UTF-8 up to its end (the caller trims an incomplete
    /// last character).
    pub fn stream_cut(&self, buf: &str) -> Option<usize> {
        let b = buf.as_bytes();
        // Matches of specials / separator starting before `limit` end inside
        // `buf` and are the same as in the full stream (leftmost-longest looks at
        // most `max_cut_len` bytes ahead), so a cut at or before `limit` can be
        // checked against the matches found in `buf`.
        let limit = b.len().checked_sub(self.max_cut_len + 1)?;
        let spans = |c: usize| -> bool { self.cut_spans_match(b, c) };
        if self.can_cut_inside() {
            let mut end = limit;
            while let Some(c) = self.pretok.safe_cut_before(buf, end) {
                if !spans(c) {
                    return Some(c);
                }
                end = c.checked_sub(1)?;
            }
            None
        } else if let Some(sep) = &self.separator {
            // Pieces never span documents, so just after a separator is safe.
            let mut last = None;
            for m in memchr::memmem::find_iter(&b[..limit], sep) {
                last = Some(m + sep.len());
            }
            let c = last?;
            (!spans(c)).then_some(c)
        } else {
            None
        }
    }

    /// True when a special-token occurrence or a separator occurrence (as the
    /// splitter would find them scanning `text` from its start) contains
    /// position `c` strictly inside.
    fn cut_spans_match(&self, text: &[u8], c: usize) -> bool {
        if let Some(ac) = &self.specials {
            for m in ac.find_iter(text) {
                if m.start() >= c {
                    break;
                }
                if m.start() < c && c < m.end() {
                    return true;
                }
            }
        }
        if let Some(sep) = &self.separator {
            for m in memchr::memmem::find_iter(text, sep) {
                if m >= c {
                    break;
                }
                if c < m + sep.len() {
                    return true;
                }
            }
        }
        false
    }
}

/// Counts `docs` with `threads` worker threads (0 = all cores) in one call:
/// a convenience over [`Counter`].
pub fn count_documents(
    pretok: Pretokenizer,
    specials: &[String],
    separator: Option<&str>,
    docs: &[&str],
    threads: usize,
    block_size: usize,
) -> Result<ChunkTable> {
    let ctl = Control::default();
    let pool = thread_pool(threads)?;
    pool.install(|| {
        let mut c = Counter::new(pretok, specials, separator, block_size)?;
        c.feed_documents(docs, &ctl)?;
        Ok(c.finish())
    })
}

/// A rayon pool with `threads` threads (0 = one per core).
pub fn thread_pool(threads: usize) -> Result<rayon::ThreadPool> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| Error::InvalidTraining(format!("cannot start worker threads: {e}")))
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
    fn table_keeps_first_seen_order() {
        let mut t = ChunkTable::new();
        for w in ["b", "a", "b", "c", "a", "b"] {
            t.add(w.as_bytes(), 1).unwrap();
        }
        let got: Vec<_> = t.iter().map(|(k, n)| (k.to_vec(), n)).collect();
        assert_eq!(
            got,
            vec![(b"b".to_vec(), 3), (b"a".to_vec(), 2), (b"c".to_vec(), 1)]
        );
        assert_eq!(t.arena(), b"bac");
        let back = ChunkTable::from_body(&t.to_body(), 3).unwrap();
        assert_eq!(back, t);
        assert!(ChunkTable::from_body(&t.to_body(), 4).is_err());
    }

    #[test]
    fn block_size_does_not_change_counts() {
        let text = "Hello world.\nThis is  a test\n\nof cutting\nblocks, it's fine.\n  Indented\nx\ny 123 z\n".repeat(20);
        for name in ["gpt2", "cl100k", "o200k"] {
            let p = Pretokenizer::new(Some(name)).unwrap();
            let want = reference_count(&p, &[&text]);
            for bs in [64, 100, 333, 1 << 20] {
                let t = count_documents(p.clone(), &[], None, &[&text], 2, bs).unwrap();
                let got: Vec<_> = t.iter().map(|(k, n)| (k.to_vec(), n)).collect();
                assert_eq!(got, want, "{name} block {bs}");
            }
        }
    }

    #[test]
    fn reader_equals_documents() {
        let text = "Alpha beta.\nGamma  delta\n\nEpsilon 42 zeta\nEta\n".repeat(500);
        for name in ["gpt2", "o200k"] {
            let p = Pretokenizer::new(Some(name)).unwrap();
            let want = count_documents(p.clone(), &[], None, &[&text], 1, 1 << 20).unwrap();
            let mut c = Counter::new(p, &[], None, 100).unwrap();
            c.set_stream_block(50);
            // A reader that hands out 7 bytes at a time still gives the same table.
            struct Slow<'a>(&'a [u8]);
            impl std::io::Read for Slow<'_> {
                fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
                    let n = self.0.len().min(out.len()).min(7);
                    out[..n].copy_from_slice(&self.0[..n]);
                    self.0 = &self.0[n..];
                    Ok(n)
                }
            }
            c.feed_reader(Slow(text.as_bytes()), "x", &Control::default())
                .unwrap();
            assert_eq!(c.finish(), want);
        }
        let mut c = Counter::new(Pretokenizer::Whole, &[], None, 100).unwrap();
        let err = c
            .feed_reader(&b"ok\xff"[..], "f.txt", &Control::default())
            .unwrap_err();
        assert!(err.to_string().contains("f.txt") && err.to_string().contains("offset 2"));
    }

    #[test]
    fn stream_cut_is_safe() {
        let c = Counter::new(
            Pretokenizer::new(Some("gpt2")).unwrap(),
            &["<|x\ny|>".to_string()],
            None,
            64,
        )
        .unwrap();
        assert_eq!(c.stream_cut("ab\ncd\n\nef gh"), Some(2));
        // The only candidate cut lies inside a special token.
        assert_eq!(c.stream_cut("<|x\ny|> more"), None);
    }
}
