//! Counting many text files in one call ([`ChunkCounter::feed_text_files`]),
//! each file one document, each file once.
//!
//! A small file's cost is its system calls, not its bytes: the files are read
//! on the pool's threads in tasks of [`TASK_FILES`] consecutive files (open,
//! `fstat`, one read, close; no path is looked up twice), into one buffer per
//! task. The tasks are taken in input order until about [`WINDOW_BYTES`] are
//! read; that window is then counted in input order (document positions as if
//! each file were fed on its own, so the counts and their first-seen order are
//! those of [`ChunkCounter::feed_file`] on each file in turn). A file larger
//! than [`SMALL_FILE`] is not read into the window: it is counted on its own
//! in parallel ranges.
//!
//! The `fstat` of the open file gives what the caller would otherwise ask the
//! file system for: the size, the type (anything but a regular file is
//! refused: a pipe is opened without blocking and never read) and the
//! `(device, inode)` that makes a file named twice (a hard link, a folder and
//! a glob over it) counted once ([`ChunkCounter::claim_file`] shares the set).

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use super::{ChunkCounter, Control};
use crate::error::{Error, Result};

/// Files read by one task.
pub const TASK_FILES: usize = 64;
/// Bytes read (and held) before a window is counted.
pub const WINDOW_BYTES: usize = 32 << 20;
/// A file larger than this is counted on its own, in parallel ranges.
pub const SMALL_FILE: u64 = 1 << 20;

/// What tells two names of one file apart from two files.
pub type FileKey = (u64, u64);

fn io_err(path: &Path, e: std::io::Error) -> Error {
    Error::Io {
        path: path.display().to_string(),
        source: e,
    }
}

fn not_regular(path: &Path) -> Error {
    io_err(
        path,
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file (a pipe, socket or device)",
        ),
    )
}

#[cfg(unix)]
fn key_of(meta: &std::fs::Metadata, _path: &Path) -> FileKey {
    use std::os::unix::fs::MetadataExt;
    (meta.dev(), meta.ino())
}

#[cfg(not(unix))]
fn key_of(_meta: &std::fs::Metadata, path: &Path) -> FileKey {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    std::fs::canonicalize(path)
        .unwrap_or_else(|_| path.to_path_buf())
        .hash(&mut h);
    (0, h.finish())
}

/// Opens a file for reading without blocking on a pipe (Linux); the caller
/// checks the type before reading.
fn open(path: &Path) -> std::io::Result<File> {
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true);
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.custom_flags(libc::O_NONBLOCK);
    }
    opts.open(path)
}

/// One file of a window, as its task left it.
enum Read1 {
    /// Its text is `buf[start..end]` of the task's buffer.
    Small(FileKey, usize, usize),
    /// Larger than [`SMALL_FILE`]: counted on its own.
    Large(FileKey),
    /// It could not be read, or is not UTF-8.
    Failed(Error),
}

/// The files of one task, read: a buffer of their texts, back to back.
struct Task {
    text: String,
    files: Vec<Read1>,
}

/// Reads one file into the end of `buf`: `Small` with its byte range, or
/// `Large` (nothing read), or `Failed`.
fn read_one(path: &Path, buf: &mut Vec<u8>) -> Read1 {
    let mut file = match open(path) {
        Ok(f) => f,
        Err(e) => return Read1::Failed(io_err(path, e)),
    };
    let meta = match file.metadata() {
        Ok(m) => m,
        Err(e) => return Read1::Failed(io_err(path, e)),
    };
    if !meta.is_file() {
        return Read1::Failed(not_regular(path));
    }
    let key = key_of(&meta, path);
    if meta.len() > SMALL_FILE {
        return Read1::Large(key);
    }
    // the size fstat gave (the file as it was then; a file that shrank since
    // ends where its reads end)
    let start = buf.len();
    let size = meta.len() as usize;
    buf.resize(start + size, 0);
    let mut got = 0;
    while got < size {
        match file.read(&mut buf[start + got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                buf.truncate(start);
                return Read1::Failed(io_err(path, e));
            }
        }
    }
    buf.truncate(start + got);
    if let Err(e) = std::str::from_utf8(&buf[start..]) {
        buf.truncate(start);
        return Read1::Failed(Error::NotUtf8 {
            path: path.display().to_string(),
            offset: e.valid_up_to() as u64,
        });
    }
    Read1::Small(key, start, start + got)
}

fn read_task(paths: &[PathBuf]) -> Task {
    let mut buf = Vec::new();
    let files = paths.iter().map(|p| read_one(p, &mut buf)).collect();
    // every range appended is UTF-8 (failed ones were cut off), so the whole is
    let text = String::from_utf8(buf).unwrap_or_else(|e| {
        let bytes = e.into_bytes();
        String::from_utf8_lossy(&bytes).into_owned()
    });
    Task { text, files }
}

impl ChunkCounter {
    /// Records that the file at `path` is read: `false` when a file with
    /// the same `(device, inode)` was already read by this counter (it must
    /// then be skipped). A file that cannot be looked up is new (reading it
    /// gives the error).
    pub fn claim_file(&mut self, path: &Path) -> bool {
        match std::fs::metadata(path) {
            Ok(meta) => self.files_seen.insert(key_of(&meta, path)),
            Err(_) => true,
        }
    }

    /// Counts UTF-8 files, each one document, in the order given, skipping
    /// a file already read (by this call or an earlier one, see the module
    /// docs). Returns the bytes counted. Anything but a regular file is
    /// refused; the error names the file (and the offset of the first byte
    /// that is not UTF-8).
    ///
    /// Complexity: linear in the files and their bytes; memory about
    /// [`WINDOW_BYTES`] plus one range per thread.
    pub fn feed_text_files(&mut self, paths: &[PathBuf], ctl: &Control) -> Result<u64> {
        let mut done = 0u64;
        let mut from = 0;
        while from < paths.len() {
            ctl.check()?;
            let (tasks, next) = read_window(&paths[from..], ctl)?;
            done += self.count_window(&paths[from..from + next], tasks, ctl)?;
            from += next;
        }
        Ok(done)
    }

    /// Counts the files of a window in order: runs of small files as one
    /// call of documents, large files on their own. A file that failed is
    /// the error, after the files before it are counted.
    fn count_window(&mut self, paths: &[PathBuf], tasks: Vec<Task>, ctl: &Control) -> Result<u64> {
        let mut docs: Vec<&str> = Vec::new();
        let mut done = 0u64;
        let mut failed = None;
        let files = tasks
            .iter()
            .flat_map(|t| t.files.iter().map(move |f| (t, f)));
        for (i, (path, (task, file))) in paths.iter().zip(files).enumerate() {
            match file {
                Read1::Small(key, s, e) => {
                    if self.files_seen.insert(*key) {
                        docs.push(&task.text[*s..*e]);
                        done += (*e - *s) as u64;
                    }
                }
                Read1::Large(key) => {
                    if self.files_seen.insert(*key) {
                        self.feed_documents(&docs, ctl)?;
                        docs.clear();
                        let before = self.offset;
                        self.feed_file(path, ctl)?;
                        done += self.offset - before;
                    }
                }
                Read1::Failed(_) => {
                    failed = Some(i);
                    break;
                }
            }
        }
        self.feed_documents(&docs, ctl)?;
        drop(docs);
        match failed {
            None => Ok(done),
            Some(i) => Err(tasks
                .into_iter()
                .flat_map(|t| t.files)
                .nth(i)
                .and_then(|f| match f {
                    Read1::Failed(e) => Some(e),
                    _ => None,
                })
                .unwrap_or_else(|| io_err(&paths[i], std::io::Error::other("read failed")))),
        }
    }
}

/// Reads tasks of the files in input order, on the current pool, until about
/// [`WINDOW_BYTES`] are held: the tasks read and how many files they cover.
fn read_window(paths: &[PathBuf], ctl: &Control) -> Result<(Vec<Task>, usize)> {
    use rayon::prelude::*;
    let n_tasks = paths.len().div_ceil(TASK_FILES);
    let next = AtomicUsize::new(0);
    let held = AtomicUsize::new(0);
    let slots: Vec<Mutex<Option<Task>>> = (0..n_tasks).map(|_| Mutex::new(None)).collect();
    let workers = rayon::current_num_threads().max(1).min(n_tasks);
    (0..workers)
        .into_par_iter()
        .try_for_each(|_| -> Result<()> {
            loop {
                ctl.check()?;
                if held.load(Ordering::Relaxed) >= WINDOW_BYTES {
                    return Ok(());
                }
                let k = next.fetch_add(1, Ordering::Relaxed);
                if k >= n_tasks {
                    return Ok(());
                }
                let end = ((k + 1) * TASK_FILES).min(paths.len());
                let task = read_task(&paths[k * TASK_FILES..end]);
                held.fetch_add(task.text.len(), Ordering::Relaxed);
                *slots[k].lock().unwrap_or_else(|e| e.into_inner()) = Some(task);
            }
        })?;
    // every task taken was finished: the read ones are a prefix
    let tasks: Vec<Task> = slots
        .into_iter()
        .map_while(|s| s.into_inner().unwrap_or_else(|e| e.into_inner()))
        .collect();
    let files = (tasks.len() * TASK_FILES).min(paths.len());
    Ok((tasks, files))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pretok::Pretokenizer;

    fn counter() -> ChunkCounter {
        let p = Pretokenizer::new(Some("gpt2")).unwrap();
        ChunkCounter::new(p, &[], None, 256).unwrap()
    }

    fn table(c: ChunkCounter) -> Vec<(Vec<u8>, u64)> {
        let t = c.finish().unwrap();
        t.iter().map(|(b, n)| (b.to_vec(), n)).collect()
    }

    #[test]
    fn text_files_count_as_one_by_one_and_once() {
        let dir = crate::TestDir::new("files");
        let mut paths = Vec::new();
        for i in 0..300 {
            let p = dir.join(format!("{i:03}.txt"));
            let big = if i == 150 {
                "big words here ".repeat(80_000)
            } else {
                String::new()
            };
            std::fs::write(&p, format!("doc {i} the cat sat {}{big}", i * 7)).unwrap();
            paths.push(p);
        }
        let ctl = Control::default();
        let mut one = counter();
        for p in &paths {
            one.feed_file(p, &ctl).unwrap();
        }
        let mut many = counter();
        let mut twice = paths.clone();
        twice.extend(paths.iter().take(10).cloned());
        let n = many.feed_text_files(&twice, &ctl).unwrap();
        let total: u64 = paths
            .iter()
            .map(|p| std::fs::metadata(p).unwrap().len())
            .sum();
        assert_eq!(n, total);
        assert!(!many.claim_file(&paths[3]));
        assert_eq!(table(one), table(many));
    }
}
