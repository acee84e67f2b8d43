//! Counting a file in parallel ranges ([`ChunkCounter::feed_file`]): the file
//! is split into ranges ([`RANGE`](super::count::RANGE) bytes by default); each
//! task reads its range (plus a little before and after) with ordinary
//! sequential reads and counts the pieces between two *range cuts* into its
//! thread's tally.
//!
//! Exact at the edges: the range cut at a boundary `e` is the first position
//! `>= e` that is a safe cut of the pre-tokenizer and that no occurrence of a
//! special token or the separator spans. It depends only on the bytes around
//! it, so the task ending at `e` and the task starting at `e` find the same
//! cut: every byte is counted exactly once, and the pieces are those of the
//! whole file (a safe cut splits no piece, and with no occurrence spanning it
//! the leftmost-longest special-token matches on both sides are those of the
//! whole).
//!
//! Memory: one buffer of about a range's bytes per thread; the file is never
//! held whole nor mapped.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Mutex;

use rayon::prelude::*;

use super::{ChunkCounter, Control};
use crate::error::{Error, Result};

/// Bytes read past a range's end to find its end cut (doubled while none is found).
const MARGIN: usize = 64 << 10;
/// Bytes after a boundary looked at first for its cut.
const NEAR: usize = 4 << 10;

fn io_err(path: &Path, e: std::io::Error) -> Error {
    Error::Io {
        path: path.display().to_string(),
        source: e,
    }
}

/// A part of the file in memory: `buf` holds bytes `[at, at + buf.len())`.
struct Window<'a> {
    buf: &'a [u8],
    at: u64,
}

/// The outcome of looking for a range cut in a window.
enum Cut {
    /// The cut (a file position).
    At(u64),
    /// No cut before the window's end: read more.
    More,
    /// Invalid UTF-8 at this file position before any cut.
    Bad(u64),
}

impl ChunkCounter {
    /// Sets the range size of [`Self::feed_file`] (results do not depend on
    /// it; tests use small values).
    pub fn set_range_size(&mut self, n: usize) {
        self.range_size = n.max(64);
    }

    /// Counts one UTF-8 file as one document. For the named patterns the file
    /// is counted in parallel ranges (see the module docs); otherwise it is
    /// streamed in blocks ([`Self::feed_reader`]). Text that is not UTF-8 is
    /// an error naming the file and the byte offset of the first bad byte.
    ///
    /// Complexity: linear in the file; memory about one range per thread.
    pub fn feed_file(&mut self, path: &Path, ctl: &Control) -> Result<()> {
        let file = File::open(path).map_err(|e| io_err(path, e))?;
        let size = file.metadata().map_err(|e| io_err(path, e))?.len();
        if !self.can_cut_inside() || size <= self.range_size as u64 {
            let name = path.display().to_string();
            return self.feed_reader_sized(file, &name, ctl, Some(size));
        }
        drop(file);
        self.ensure_tallies();
        let range = self.range_size as u64;
        let tasks = size.div_ceil(range);
        let buffers: Vec<Mutex<Vec<u8>>> = (0..self.tallies.len())
            .map(|_| Mutex::new(Vec::new()))
            .collect();
        let this = &*self;
        let base = this.offset;
        let results: Vec<Result<()>> = (0..tasks)
            .into_par_iter()
            .map(|k| {
                ctl.check()?;
                let i = rayon::current_thread_index().unwrap_or(0) % buffers.len();
                let mut buf = buffers[i].lock().unwrap_or_else(|e| e.into_inner());
                let s = k * range;
                let e = (s + range).min(size);
                this.count_range(path, size, s, e, base, &mut buf, ctl)?;
                ctl.bytes_done.fetch_add(e - s, Ordering::Relaxed);
                Ok(())
            })
            .collect();
        drop(buffers);
        // the first bad byte of the file, whichever task met it
        let mut first_err: Option<Error> = None;
        for r in results {
            if let Err(e) = r {
                first_err = Some(match (first_err, e) {
                    (
                        Some(Error::NotUtf8 { path, offset: a }),
                        Error::NotUtf8 { offset: b, .. },
                    ) => Error::NotUtf8 {
                        path,
                        offset: a.min(b),
                    },
                    (Some(Error::NotUtf8 { .. }), e) if !matches!(e, Error::NotUtf8 { .. }) => e,
                    (Some(old), _) => old,
                    (None, e) => e,
                });
            }
        }
        if let Some(e) = first_err {
            return Err(e);
        }
        self.offset += size;
        Ok(())
    }

    /// Reads `[from, to)` of the file (clamped to `size`) into the start of
    /// `buf` (grown when needed, never shrunk, so a thread's buffer is zeroed
    /// once) and returns its length.
    fn read_span(path: &Path, size: u64, from: u64, to: u64, buf: &mut Vec<u8>) -> Result<usize> {
        let n = (to.min(size) - from) as usize;
        if buf.len() < n {
            buf.resize(n, 0);
        }
        let mut f = File::open(path).map_err(|e| io_err(path, e))?;
        f.seek(SeekFrom::Start(from)).map_err(|e| io_err(path, e))?;
        f.read_exact(&mut buf[..n]).map_err(|e| io_err(path, e))?;
        Ok(n)
    }

    /// Counts the pieces between the range cuts at `s` and `e` (0 and the
    /// file end are cuts). `base` is the file's position in the input.
    #[allow(clippy::too_many_arguments)]
    fn count_range(
        &self,
        path: &Path,
        size: u64,
        s: u64,
        e: u64,
        base: u64,
        buf: &mut Vec<u8>,
        ctl: &Control,
    ) -> Result<()> {
        let name = || path.display().to_string();
        let behind = (self.max_cut_len + 8) as u64;
        let from = s.saturating_sub(behind);
        let mut margin = MARGIN as u64;
        loop {
            let n = Self::read_span(path, size, from, e + margin, buf)?;
            let buf = &buf[..n];
            let w = Window { buf, at: from };
            let eof = from + buf.len() as u64 == size;
            // Some(cut), or None when the window must grow to show it
            let cut = |p: u64| match self.range_cut(&w, p, eof) {
                Cut::At(c) => Ok(Some(c)),
                Cut::More => Ok(None),
                Cut::Bad(p) => Err(Error::NotUtf8 {
                    path: name(),
                    offset: p,
                }),
            };
            let start = if s == 0 { Some(0) } else { cut(s)? };
            let Some(start) = start else {
                margin = margin.saturating_mul(2);
                continue;
            };
            let end = if e == size {
                Some(size)
            } else if start >= e {
                // the next range's start cut is this one: nothing of this range is counted
                return Ok(());
            } else {
                cut(e)?
            };
            let Some(end) = end else {
                margin = margin.saturating_mul(2);
                continue;
            };
            let bytes = &buf[(start - from) as usize..(end - from) as usize];
            let text = std::str::from_utf8(bytes).map_err(|err| Error::NotUtf8 {
                path: name(),
                offset: start + err.valid_up_to() as u64,
            })?;
            let mut segs = Vec::new();
            self.segments_of(text, base + start, &mut segs);
            let mut t = self.my_tally();
            for (at, seg) in segs {
                self.count_text(&mut t, seg, at, ctl)?;
            }
            return self.maybe_spill(&mut t);
        }
    }

    /// The first range cut at or after file position `p` in the window, when
    /// the window shows it (see the module docs). `eof`: the window ends at
    /// the end of the file (then the file end is the cut when none comes
    /// before it).
    fn range_cut(&self, w: &Window<'_>, p: u64, eof: bool) -> Cut {
        // A cut nearly always comes within a few bytes of `p`: look there first
        // (validating the whole window each time would triple the UTF-8 work),
        // then in the whole window.
        let rel = p.saturating_sub(w.at) as usize;
        let lo = rel.saturating_sub(self.max_cut_len + 8).min(w.buf.len());
        let near = rel.saturating_add(self.max_cut_len + NEAR).min(w.buf.len());
        if lo > 0 || near < w.buf.len() {
            // the same look-behind as a range's own window
            let part = Window {
                buf: &w.buf[lo..near],
                at: w.at + lo as u64,
            };
            if let Cut::At(c) = self.range_cut_in(&part, p, false) {
                return Cut::At(c);
            }
        }
        self.range_cut_in(w, p, eof)
    }

    /// [`Self::range_cut`] looking at the whole window.
    fn range_cut_in(&self, w: &Window<'_>, p: u64, eof: bool) -> Cut {
        let b = w.buf;
        // a char boundary at or after the look-behind start (valid UTF-8 has one
        // within 3 bytes)
        let mut j = 0;
        while j < b.len() && j < 4 && (b[j] & 0xC0) == 0x80 {
            j += 1;
        }
        let (text, complete) = match std::str::from_utf8(&b[j..]) {
            Ok(t) => (t, true),
            Err(err) => {
                let ok = err.valid_up_to();
                // valid prefix; the error is real unless it is a char cut by the window's end
                let truncated = err.error_len().is_none() && !eof;
                match std::str::from_utf8(&b[j..j + ok]) {
                    Ok(t) if truncated => (t, false),
                    Ok(t) => {
                        let bad = w.at + (j + ok) as u64;
                        return match self.cut_in(t, w.at + j as u64, p) {
                            Some(c) if c < bad => Cut::At(c),
                            _ => Cut::Bad(bad),
                        };
                    }
                    Err(_) => return Cut::Bad(w.at + j as u64),
                }
            }
        };
        match self.cut_in(text, w.at + j as u64, p) {
            Some(c) => Cut::At(c),
            None if complete && eof => Cut::At(w.at + b.len() as u64),
            None => Cut::More,
        }
    }

    /// The first range cut `>= p` inside `text` (whose first byte is at file
    /// position `at`) with `max_cut_len` bytes of `text` after it.
    fn cut_in(&self, text: &str, at: u64, p: u64) -> Option<u64> {
        let b = text.as_bytes();
        let mut from = (p.checked_sub(at)?) as usize;
        let limit = b.len().checked_sub(self.max_cut_len + 1)?;
        while let Some(c) = self.pretok.next_safe_cut(text, from) {
            if c > limit {
                return None;
            }
            if !self.spanned(b, c) {
                return Some(at + c as u64);
            }
            from = c + 1;
        }
        None
    }

    /// True when an occurrence of a special token or the separator contains
    /// byte position `c` strictly inside (`b` must hold `max_cut_len` bytes
    /// on both sides of `c`, or start / end there).
    fn spanned(&self, b: &[u8], c: usize) -> bool {
        self.cut_strings.iter().any(|s| {
            let lo = (c + 1).saturating_sub(s.len());
            let hi = (c + s.len()).min(b.len());
            memchr::memmem::find_iter(&b[lo..hi], s).any(|m| lo + m < c && c < lo + m + s.len())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pretok::Pretokenizer;
    use crate::train::count_documents;
    use crate::train::ChunkTable;

    /// A file holding `bytes`, in a folder removed when the first value drops.
    fn temp_file(name: &str, bytes: &[u8]) -> (crate::TestDir, std::path::PathBuf) {
        let dir = crate::TestDir::new(&format!("ranges-{name}"));
        let p = dir.join("text");
        std::fs::write(&p, bytes).unwrap();
        (dir, p)
    }

    /// The file counted in ranges of `range` bytes on `threads` threads.
    fn count_file(
        path: &Path,
        p: &Pretokenizer,
        specials: &[String],
        sep: Option<&str>,
        threads: usize,
        range: usize,
    ) -> Result<ChunkTable> {
        let pool = crate::parallel::pool(Some(threads)).unwrap();
        pool.install(|| {
            let mut c = ChunkCounter::new(p.clone(), specials, sep, 64).unwrap();
            c.set_range_size(range);
            c.feed_file(path, &Control::default())?;
            c.finish()
        })
    }

    #[test]
    fn ranges_equal_one_document_whatever_the_range_size() {
        let text =
            "Alpha beta.\nGamma  delta<|end|>x\n\nEpsilon 42 zeta\n  Eta\t\tθήτα 한국어 ok\n"
                .repeat(300);
        let (_dir, path) = temp_file("eq", text.as_bytes());
        for name in ["gpt2", "cl100k", "o200k"] {
            for specials in [vec![], vec!["<|end|>".to_string()]] {
                for sep in [None, Some("\n\n")] {
                    let p = Pretokenizer::new(Some(name)).unwrap();
                    let want =
                        count_documents(p.clone(), &specials, sep, &[&text], Some(1), 1 << 20)
                            .unwrap();
                    for (threads, range) in [(1, 64), (2, 100), (2, 333), (2, 4096), (1, 1 << 20)] {
                        let got = count_file(&path, &p, &specials, sep, threads, range).unwrap();
                        assert_eq!(got, want, "{name} {specials:?} {sep:?} {threads} {range}");
                    }
                }
            }
        }
    }

    #[test]
    fn cuts_far_from_the_boundary_are_found() {
        // words of 10,000 letters: no cut within NEAR bytes of most boundaries
        let word = "abcdefghij".repeat(1000);
        let text = format!("{word} x {word}{word} y, 12 {word}\n").repeat(8);
        let (_dir, path) = temp_file("far", text.as_bytes());
        let p = Pretokenizer::new(Some("gpt2")).unwrap();
        let want = count_documents(p.clone(), &[], None, &[&text], Some(1), 1 << 20).unwrap();
        for range in [4096, 9000, 30_000] {
            let got = count_file(&path, &p, &[], None, 2, range).unwrap();
            assert_eq!(got, want, "{range}");
        }
    }

    #[test]
    fn bad_utf8_names_the_first_bad_byte() {
        let mut bytes = "word ".repeat(200).into_bytes();
        bytes[517] = 0xff;
        bytes[900] = 0xfe;
        let (_dir, path) = temp_file("bad", &bytes);
        let p = Pretokenizer::new(Some("gpt2")).unwrap();
        for range in [64, 100, 5000] {
            let err = count_file(&path, &p, &[], None, 2, range).unwrap_err();
            assert!(err.to_string().contains("offset 517"), "{range}: {err}");
        }
    }
}
