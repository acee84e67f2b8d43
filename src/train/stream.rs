//! Counting one document read from a stream in blocks ([`ChunkCounter::feed_reader`]),
//! cut only where counting both sides apart equals counting them together.

use super::{ChunkCounter, Control};
use crate::error::{Error, Result};

fn not_utf8(name: &str, base: u64, e: &std::str::Utf8Error) -> Error {
    Error::NotUtf8 {
        path: name.to_string(),
        offset: base + e.valid_up_to() as u64,
    }
}

impl ChunkCounter {
    /// Sets how many bytes [`Self::feed_reader`] reads at a time (results do
    /// not depend on it; tests use small values).
    pub fn set_stream_block(&mut self, n: usize) {
        self.stream_block = n.max(16);
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
        reader: R,
        name: &str,
        ctl: &Control,
    ) -> Result<()> {
        self.feed_reader_sized(reader, name, ctl, None)
    }

    /// [`Self::feed_reader`] of a reader expected to hold about `size` bytes:
    /// the first read block is sized to it (one byte more, to see the end), so
    /// a small file costs no block of [`STREAM_BLOCK`] bytes to zero (most of
    /// the time of a 1 KB file).
    pub fn feed_reader_sized<R: std::io::Read>(
        &mut self,
        mut reader: R,
        name: &str,
        ctl: &Control,
        size: Option<u64>,
    ) -> Result<()> {
        let mut buf: Vec<u8> = Vec::new();
        let mut base: u64 = 0;
        let mut block = match size {
            Some(n) => (n as usize).saturating_add(1).min(self.stream_block),
            None => self.stream_block,
        };
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
                        return Err(Error::Io {
                            path: name.to_string(),
                            source: e,
                        })
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pretok::Pretokenizer;
    use crate::train::count_documents;

    #[test]
    fn reader_equals_documents() {
        let text = "Alpha beta.\nGamma  delta\n\nEpsilon 42 zeta\nEta\n".repeat(500);
        for name in ["gpt2", "o200k"] {
            let p = Pretokenizer::new(Some(name)).unwrap();
            let want = count_documents(p.clone(), &[], None, &[&text], Some(1), 1 << 20).unwrap();
            let mut c = ChunkCounter::new(p, &[], None, 100).unwrap();
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
            assert_eq!(c.finish().unwrap(), want);
        }
        let mut c = ChunkCounter::new(Pretokenizer::Whole, &[], None, 100).unwrap();
        let err = c
            .feed_reader(&b"ok\xff"[..], "f.txt", &Control::default())
            .unwrap_err();
        assert!(err.to_string().contains("f.txt") && err.to_string().contains("offset 2"));
    }

    #[test]
    fn stream_cut_is_safe() {
        let c = ChunkCounter::new(
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
