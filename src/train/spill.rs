//! Counting under a memory limit: when a thread's [`Tally`] grows past its
//! share of the limit, its chunks are written to a temporary *run* file,
//! sorted by chunk bytes, and the tally starts empty again. At the end every
//! tally is spilled too and the runs are merged (a k-way merge by chunk
//! bytes: counts add, first positions take the minimum), then sorted by first
//! position into the first-seen-ordered [`ChunkTable`]. The result is exactly
//! that of counting in memory.
//!
//! Run format: per chunk, a `u32` length, the bytes, the `u64` count and the
//! `u64` first position, all little-endian. The run files live in a fresh
//! directory under the system's temporary directory (or the one given),
//! made at the first spill (never for a count that fits: a missing parent is
//! an error, not created) and removed once the runs are merged, or when the
//! counter is dropped.
//!
//! Memory while merging: one buffered reader per run (64 KiB) plus the
//! distinct chunks (their bytes and 24 bytes each), then the table itself.

use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use super::tally::Tally;
use super::ChunkTable;
use crate::error::{Error, Result};

fn io_err(path: &Path, e: std::io::Error) -> Error {
    Error::Io {
        path: path.display().to_string(),
        source: e,
    }
}

/// The run files of one counter (see the module docs).
#[derive(Debug)]
pub struct Spill {
    dir: PathBuf,
    /// Whether `dir` exists (made by the first spill).
    made: std::sync::OnceLock<std::result::Result<(), String>>,
    runs: Mutex<Vec<PathBuf>>,
    next: AtomicUsize,
}

impl Spill {
    /// Run files go to a new directory under `parent` (default: the system's
    /// temporary directory).
    pub fn new(parent: Option<&Path>) -> Result<Spill> {
        let parent = parent.map_or_else(std::env::temp_dir, Path::to_path_buf);
        static SEQ: AtomicUsize = AtomicUsize::new(0);
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let dir = parent.join(format!(
            "bytepair-counts-{}-{}-{stamp}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        ));
        Ok(Spill {
            dir,
            made: std::sync::OnceLock::new(),
            runs: Mutex::new(Vec::new()),
            next: AtomicUsize::new(0),
        })
    }

    /// Number of run files written so far.
    pub fn runs(&self) -> usize {
        self.runs.lock().map_or(0, |r| r.len())
    }

    /// Writes `t`'s chunks as a sorted run and empties it.
    pub fn spill(&self, t: &mut Tally) -> Result<()> {
        if t.is_empty() {
            return Ok(());
        }
        let full = std::mem::take(t);
        let (bytes, mut items) = full.into_parts();
        items.sort_unstable_by(|a, b| bytes[a.0..a.0 + a.1].cmp(&bytes[b.0..b.0 + b.1]));
        self.make_dir()?;
        let path = self
            .dir
            .join(format!("run-{}", self.next.fetch_add(1, Ordering::Relaxed)));
        let f = File::create(&path).map_err(|e| io_err(&path, e))?;
        let mut w = BufWriter::with_capacity(1 << 16, f);
        for &(s, n, count, first) in &items {
            let rec = [
                &(n as u32).to_le_bytes()[..],
                &bytes[s..s + n],
                &count.to_le_bytes(),
                &first.to_le_bytes(),
            ];
            for part in rec {
                w.write_all(part).map_err(|e| io_err(&path, e))?;
            }
        }
        w.flush().map_err(|e| io_err(&path, e))?;
        self.runs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(path);
        Ok(())
    }

    /// Makes the run directory (once); its parent must exist.
    fn make_dir(&self) -> Result<()> {
        let made = self.made.get_or_init(|| {
            std::fs::create_dir(&self.dir).map_err(|e| {
                let parent = self.dir.parent().unwrap_or(Path::new(""));
                if parent.is_dir() {
                    format!("cannot make a spill directory in {}: {e}", parent.display())
                } else {
                    format!(
                        "the temporary directory {} does not exist (set TMPDIR to one that does)",
                        parent.display()
                    )
                }
            })
        });
        made.clone().map_err(Error::training)
    }

    /// Removes the run files and their directory (after the merge; again on drop).
    pub fn remove(&self) {
        if self.made.get().is_some() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }

    /// Merges every run into the first-seen-ordered table. With `limit`,
    /// refuses a table that would need more ([`ChunkTable::priced_bytes`]): past it the
    /// merge keeps only the count of distinct chunks and their bytes, then
    /// stops with [`Error::MemoryLimit`] saying what the whole table needs.
    pub fn merge(&self, limit: Option<u64>) -> Result<ChunkTable> {
        let mut arena: Vec<u8> = Vec::new();
        let mut out: Vec<(u64, u64, u64, u32)> = Vec::new(); // first, count, start, len
                                                             // past the limit: the merge goes on counting the distinct chunks and
                                                             // their bytes to say what it needs
        let mut over: Option<(usize, usize)> = None;
        self.merge_each(|key, count, first| {
            if let Some((n, bytes)) = &mut over {
                (*n, *bytes) = (*n + 1, *bytes + key.len());
                return Ok(());
            }
            out.push((first, count, arena.len() as u64, key.len() as u32));
            arena.extend_from_slice(key);
            if limit.is_some_and(|l| ChunkTable::priced_bytes(out.len(), arena.len()) > l) {
                over = Some((out.len(), arena.len()));
                (out, arena) = (Vec::new(), Vec::new());
            }
            Ok(())
        })?;
        if let (Some((n, bytes)), Some(limit)) = (over, limit) {
            return Err(too_large(
                n,
                bytes,
                ChunkTable::priced_bytes(n, bytes),
                limit,
            ));
        }
        out.sort_unstable();
        let mut t = ChunkTable::with_capacity(out.len(), arena.len());
        for (_, count, start, len) in out {
            t.push_new(&arena[start as usize..start as usize + len as usize], count)?;
        }
        Ok(t)
    }

    /// Merges every run (a k-way merge by chunk bytes) and hands each
    /// distinct chunk to `f` once, in byte order: its bytes, its count over
    /// all runs and its first position (the least of the runs').
    pub fn merge_each(&self, mut f: impl FnMut(&[u8], u64, u64) -> Result<()>) -> Result<()> {
        let runs = self.runs.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let mut readers = Vec::with_capacity(runs.len());
        for p in &runs {
            let file = File::open(p).map_err(|e| io_err(p, e))?;
            readers.push((BufReader::with_capacity(1 << 16, file), p.clone()));
        }
        // heads[i]: the next record of run i
        let mut heads: Vec<Option<Record>> = Vec::with_capacity(readers.len());
        let mut heap = BinaryHeap::new();
        for (i, (r, p)) in readers.iter_mut().enumerate() {
            let rec = read_record(r, p)?;
            if let Some(rec) = &rec {
                heap.push(std::cmp::Reverse((rec.bytes.clone(), i)));
            }
            heads.push(rec);
        }
        // the chunk being summed: bytes, count, first position
        let mut cur: Option<(Vec<u8>, u64, u64)> = None;
        while let Some(std::cmp::Reverse((key, i))) = heap.pop() {
            let rec = heads[i]
                .take()
                .ok_or_else(|| Error::training("spill merge out of step"))?;
            let (r, p) = &mut readers[i];
            heads[i] = read_record(r, p)?;
            if let Some(next) = &heads[i] {
                heap.push(std::cmp::Reverse((next.bytes.clone(), i)));
            }
            match &mut cur {
                Some((bytes, count, first)) if *bytes == key => {
                    *count = count.saturating_add(rec.count);
                    *first = (*first).min(rec.first);
                }
                _ => {
                    if let Some((bytes, count, first)) = cur.take() {
                        f(&bytes, count, first)?;
                    }
                    cur = Some((key, rec.count, rec.first));
                }
            }
        }
        if let Some((bytes, count, first)) = cur {
            f(&bytes, count, first)?;
        }
        Ok(())
    }

    /// The directory of the run files (made at the first spill).
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

fn too_large(n: usize, bytes: usize, need: u64, limit: u64) -> Error {
    let what = format!(
        "the table of the {} distinct chunks counted ({} MB of their bytes, merged from the counts spilled to disk)",
        crate::error::grouped(n as u64),
        crate::error::grouped(bytes as u64 / 1_000_000)
    );
    Error::MemoryLimit { what, need, limit }
}

impl Drop for Spill {
    fn drop(&mut self) {
        self.remove();
    }
}

struct Record {
    bytes: Vec<u8>,
    count: u64,
    first: u64,
}

fn read_record(r: &mut BufReader<File>, path: &Path) -> Result<Option<Record>> {
    let mut len = [0u8; 4];
    match r.read_exact(&mut len) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(io_err(path, e)),
    }
    let mut bytes = vec![0u8; u32::from_le_bytes(len) as usize];
    let mut nums = [0u8; 16];
    r.read_exact(&mut bytes).map_err(|e| io_err(path, e))?;
    r.read_exact(&mut nums).map_err(|e| io_err(path, e))?;
    let mut x = [0u8; 8];
    x.copy_from_slice(&nums[..8]);
    let count = u64::from_le_bytes(x);
    x.copy_from_slice(&nums[8..]);
    Ok(Some(Record {
        bytes,
        count,
        first: u64::from_le_bytes(x),
    }))
}

#[cfg(test)]
mod tests {
    use crate::error::Error;
    use crate::pretok::Pretokenizer;
    use crate::train::{count_documents, ChunkCounter, ChunkTable, Control};

    /// Counts `text` under a tiny tally limit (a spill after nearly every
    /// task) and `table_limit` on the merged table.
    fn spilled(
        text: &str,
        dir: &std::path::Path,
        table_limit: Option<u64>,
    ) -> crate::error::Result<ChunkTable> {
        let p = Pretokenizer::new(Some("o200k")).unwrap();
        let mut c = ChunkCounter::new(p, &[], None, 256).unwrap();
        c.set_memory_limit(1, Some(dir)).unwrap();
        if let Some(l) = table_limit {
            c.set_table_limit(l);
        }
        c.feed_documents(&[text], &Control::default()).unwrap();
        assert!(c.spilled_runs() > 2);
        c.finish()
    }

    /// A table that needs more than the table limit is refused with what the
    /// whole table needs (every distinct chunk counted, not only those merged
    /// before the limit was passed); at that need exactly, it is built.
    #[test]
    fn a_merged_table_past_the_limit_is_refused_with_its_whole_need() {
        let text: String = (0..4000).map(|i| format!(" w{i} x{}", i % 7)).collect();
        let dir = crate::TestDir::new("spill-limit");
        let want = spilled(&text, &dir, None).unwrap();
        let need = want.priced();
        for limit in [need / 3, need - 1] {
            match spilled(&text, &dir, Some(limit)) {
                Err(Error::MemoryLimit {
                    need: n,
                    limit: l,
                    what,
                }) => {
                    assert_eq!((n, l), (need, limit));
                    let n = crate::error::grouped(want.len() as u64);
                    assert!(what.contains(&format!("the {n} distinct chunks")), "{what}");
                }
                other => panic!("expected MemoryLimit, got {other:?}"),
            }
        }
        assert_eq!(spilled(&text, &dir, Some(need)).unwrap(), want);
        assert_eq!(
            std::fs::read_dir(&*dir).unwrap().count(),
            0,
            "run files left behind"
        );
    }

    #[test]
    fn spilled_counts_equal_counting_in_memory() {
        let text = "Alpha beta gamma.\nGamma  delta 12345 epsilon_long_identifier_name\n"
            .repeat(50)
            + &(0..3000).map(|i| format!(" w{i}")).collect::<String>();
        let p = Pretokenizer::new(Some("o200k")).unwrap();
        let want = count_documents(p.clone(), &[], None, &[&text], Some(1), 1 << 20).unwrap();
        let dir = crate::TestDir::new("spill");
        for threads in [1, 2] {
            let pool = crate::parallel::pool(Some(threads)).unwrap();
            let (got, runs) = pool.install(|| {
                let mut c = ChunkCounter::new(p.clone(), &[], None, 256).unwrap();
                // a tiny limit: a spill after nearly every task
                c.set_memory_limit(1, Some(&dir)).unwrap();
                c.feed_documents(&[&text], &Control::default()).unwrap();
                let runs = c.spilled_runs();
                (c.finish().unwrap(), runs)
            });
            assert!(runs > 2, "{runs}");
            assert_eq!(got, want, "threads {threads}");
            assert_eq!(
                std::fs::read_dir(&*dir).unwrap().count(),
                0,
                "run files left behind"
            );
        }
    }
}
