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
//!
//! A folder's files ([`ChunkCounter::feed_walk`]) cost less: the walk's
//! listing gave their type and `(device, inode)`, each is opened relative to
//! its folder, and a file shorter than [`FIRST_READ`] is read with one `read`
//! that stops short at its end: open, read, close, no `fstat`.

use std::borrow::Cow;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use super::{ChunkCounter, Control};
use crate::error::{Error, Result};
use crate::walk::{open, Found, Walk};

/// Files read by one task.
pub const TASK_FILES: usize = 64;
/// Bytes read (and held) before a window is counted.
pub const WINDOW_BYTES: usize = 32 << 20;
/// The first read of a file its folder's listing gave: a file that ends
/// within it costs no `fstat`.
pub const FIRST_READ: usize = 64 << 10;
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
fn key_of<F: FileName + ?Sized>(meta: &std::fs::Metadata, _name: &F) -> FileKey {
    use std::os::unix::fs::MetadataExt;
    (meta.dev(), meta.ino())
}

#[cfg(not(unix))]
fn key_of<F: FileName + ?Sized>(_meta: &std::fs::Metadata, name: &F) -> FileKey {
    use std::hash::{Hash, Hasher};
    let path = name.path();
    let path = path.as_ref();
    let mut h = std::collections::hash_map::DefaultHasher::new();
    std::fs::canonicalize(path)
        .unwrap_or_else(|_| path.to_path_buf())
        .hash(&mut h);
    (0, h.finish())
}

/// A file to read: how it is opened, and its path (for messages and for a
/// large file, counted on its own).
pub trait FileName: Sync {
    /// Opens it for reading without blocking on a pipe.
    fn open(&self) -> std::io::Result<File>;
    /// Its path.
    fn path(&self) -> Cow<'_, Path>;
    /// Its `(device, inode)` when its folder's listing gave them (it is
    /// then a regular file, or a link to one): what the `fstat` of a small
    /// file would otherwise tell.
    fn listed_key(&self) -> Option<FileKey> {
        None
    }
}

impl FileName for PathBuf {
    fn open(&self) -> std::io::Result<File> {
        open(self)
    }
    fn path(&self) -> Cow<'_, Path> {
        Cow::Borrowed(self)
    }
}

impl FileName for Found {
    fn open(&self) -> std::io::Result<File> {
        Found::open(self)
    }
    fn path(&self) -> Cow<'_, Path> {
        Cow::Owned(Found::path(self))
    }
    #[cfg(unix)] // elsewhere the key is not the listing's (see `key_of`)
    fn listed_key(&self) -> Option<FileKey> {
        Found::key(self)
    }
}

/// A name without the ending of a shard (`.gz`, `.jsonl`, `.ndjson`,
/// `.parquet`, `.pq`, in any case): a plain text file, one document (what
/// `bytepair.shards.paths.shard_kind` calls text without gzip).
pub fn is_plain_text(name: &std::ffi::OsStr) -> bool {
    let name = name.as_encoded_bytes();
    ![&b".gz"[..], b".jsonl", b".ndjson", b".parquet", b".pq"]
        .iter()
        .any(|end| {
            name.len() >= end.len() && name[name.len() - end.len()..].eq_ignore_ascii_case(end)
        })
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
/// `Large` (nothing read), or `Failed`. `scratch`: the task's buffer of the
/// first read of a file its listing gave.
fn read_one<F: FileName>(name: &F, buf: &mut Vec<u8>, scratch: &mut [u8]) -> Read1 {
    let mut file = match name.open() {
        Ok(f) => f,
        Err(e) => return Read1::Failed(io_err(&name.path(), e)),
    };
    let start = buf.len();
    let mut first = 0;
    if let Some(key) = name.listed_key() {
        // a regular file by its listing: one read, and a read that stops
        // short of what was asked is the file's end (a regular file's read
        // stops short only there), so no fstat
        first = match read_once(&mut file, scratch) {
            Ok(n) => n,
            Err(e) => return Read1::Failed(io_err(&name.path(), e)),
        };
        buf.extend_from_slice(&scratch[..first]);
        if first < scratch.len() {
            return Read1::Small(key, start, buf.len());
        }
    }
    let meta = match file.metadata() {
        Ok(m) => m,
        Err(e) => return fail(buf, start, io_err(&name.path(), e)),
    };
    if !meta.is_file() {
        return fail(buf, start, not_regular(&name.path()));
    }
    let key = key_of(&meta, name);
    if meta.len() > SMALL_FILE {
        buf.truncate(start);
        return Read1::Large(key);
    }
    // the size fstat gave (the file as it was then; a file that shrank since
    // ends where its reads end)
    let size = (meta.len() as usize).max(first);
    buf.resize(start + size, 0);
    match read_full(&mut file, &mut buf[start + first..]) {
        Ok(n) => buf.truncate(start + first + n),
        Err(e) => return fail(buf, start, io_err(&name.path(), e)),
    }
    Read1::Small(key, start, buf.len())
}

/// One read into `out` (again when a signal interrupts it): the bytes read.
fn read_once(file: &mut File, out: &mut [u8]) -> std::io::Result<usize> {
    loop {
        match file.read(out) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            r => return r,
        }
    }
}

/// Reads into `out` until it is full or the file ends: the bytes read.
fn read_full(file: &mut File, out: &mut [u8]) -> std::io::Result<usize> {
    let mut got = 0;
    while got < out.len() {
        match file.read(&mut out[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

fn fail(buf: &mut Vec<u8>, start: usize, e: Error) -> Read1 {
    buf.truncate(start);
    Read1::Failed(e)
}

fn read_task<F: FileName>(paths: &[F]) -> Task {
    let mut buf = Vec::new();
    let mut scratch = vec![0u8; FIRST_READ];
    let files: Vec<Read1> = paths
        .iter()
        .map(|p| read_one(p, &mut buf, &mut scratch))
        .collect();
    // The bytes of the files are UTF-8 when the whole is and each file
    // starts and ends on a character boundary (one pass over the bytes).
    match String::from_utf8(buf) {
        Ok(text) if files.iter().all(|f| on_boundaries(&text, f)) => Task { text, files },
        Ok(text) => utf8_files(paths, text.into_bytes(), files),
        Err(e) => utf8_files(paths, e.into_bytes(), files),
    }
}

fn on_boundaries(text: &str, file: &Read1) -> bool {
    match file {
        Read1::Small(_, s, e) => text.is_char_boundary(*s) && text.is_char_boundary(*e),
        _ => true,
    }
}

/// A task with some file not UTF-8: each file checked on its own, those that
/// are not UTF-8 failed (naming the offset of their first bad byte) and left
/// out of the text.
fn utf8_files<F: FileName>(paths: &[F], bytes: Vec<u8>, files: Vec<Read1>) -> Task {
    let mut text = String::with_capacity(bytes.len());
    let files = paths
        .iter()
        .zip(files)
        .map(|(name, file)| match file {
            Read1::Small(key, s, e) => match std::str::from_utf8(&bytes[s..e]) {
                Ok(t) => {
                    let start = text.len();
                    text.push_str(t);
                    Read1::Small(key, start, text.len())
                }
                Err(err) => Read1::Failed(Error::NotUtf8 {
                    path: name.path().display().to_string(),
                    offset: err.valid_up_to() as u64,
                }),
            },
            other => other,
        })
        .collect();
    Task { text, files }
}

impl ChunkCounter {
    /// Records that the file at `path` is read: `false` when a file with
    /// the same `(device, inode)` was already read by this counter (it must
    /// then be skipped). A file that cannot be looked up is new (reading it
    /// gives the error).
    pub fn claim_file(&mut self, path: &Path) -> bool {
        match std::fs::metadata(path) {
            Ok(meta) => self.files_seen.insert(key_of(&meta, &path.to_path_buf())),
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
    pub fn feed_text_files<F: FileName>(&mut self, paths: &[F], ctl: &Control) -> Result<u64> {
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

    /// Counts the plain text files that `walk` gives next (see
    /// [`is_plain_text`]), at most `limit` of them, as
    /// [`ChunkCounter::feed_text_files`] does: the bytes counted, the path of
    /// the file that stopped the walk when it is not plain text (the caller
    /// reads it), and whether the walk is over.
    pub fn feed_walk(
        &mut self,
        walk: &mut Walk,
        limit: usize,
        ctl: &Control,
    ) -> Result<(u64, Option<PathBuf>, bool)> {
        let mut files = Vec::new();
        let mut other = None;
        let mut over = false;
        while files.len() < limit.max(1) {
            match walk.next_file() {
                None => {
                    over = true;
                    break;
                }
                Some(f) if is_plain_text(f.name()) => files.push(f),
                Some(f) => {
                    other = Some(f.path());
                    break;
                }
            }
        }
        let done = self.feed_text_files(&files, ctl)?;
        Ok((done, other, over))
    }

    /// Counts the files of a window in order: runs of small files as one
    /// call of documents, large files on their own. A file that failed is
    /// the error, after the files before it are counted.
    fn count_window<F: FileName>(
        &mut self,
        paths: &[F],
        tasks: Vec<Task>,
        ctl: &Control,
    ) -> Result<u64> {
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
                        self.feed_file(&path.path(), ctl)?;
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
                .unwrap_or_else(|| io_err(&paths[i].path(), std::io::Error::other("read failed")))),
        }
    }
}

/// Reads tasks of the files in input order, on the current pool, until about
/// [`WINDOW_BYTES`] are held: the tasks read and how many files they cover.
fn read_window<F: FileName>(paths: &[F], ctl: &Control) -> Result<(Vec<Task>, usize)> {
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

    #[test]
    fn a_character_cut_between_two_files_is_not_utf8() {
        let dir = crate::TestDir::new("files-cut");
        let mut paths = Vec::new();
        for (i, text) in [&b"ok"[..], b"ab\xc3", b"\xa9cd", b"fine"]
            .iter()
            .enumerate()
        {
            let p = dir.join(format!("{i}.txt"));
            std::fs::write(&p, text).unwrap();
            paths.push(p);
        }
        let err = counter()
            .feed_text_files(&paths, &Control::default())
            .unwrap_err();
        assert!(
            matches!(&err, Error::NotUtf8 { path, offset: 2 } if path.ends_with("1.txt")),
            "{err:?}"
        );
        let mut walk = Walk::new(&dir.join(""));
        let err = counter()
            .feed_walk(&mut walk, 10, &Control::default())
            .unwrap_err();
        assert!(
            matches!(&err, Error::NotUtf8 { path, offset: 2 } if path.ends_with("1.txt")),
            "{err:?}"
        );
    }

    #[test]
    fn a_walk_counts_as_its_files_one_by_one_and_hands_back_shards() {
        let dir = crate::TestDir::new("files-walk");
        let mut texts = Vec::new();
        for i in 0..200 {
            let p = dir.join(format!("{:02}/{i:03}.txt", i / 70));
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            // one file past the first read, one past SMALL_FILE
            let extra = match i {
                50 => "more words ".repeat(10_000),
                120 => "big words here ".repeat(80_000),
                _ => String::new(),
            };
            let text = format!("doc {i} the cat sat {}{extra}", i * 7);
            std::fs::write(&p, &text).unwrap();
            texts.push(p);
        }
        std::fs::write(dir.join("01/100.jsonl"), "{}").unwrap();
        let ctl = Control::default();
        let mut one = counter();
        for p in &texts {
            one.feed_file(p, &ctl).unwrap();
        }
        let mut many = counter();
        let mut walk = Walk::new(&dir.join(""));
        let (n1, shard, over) = many.feed_walk(&mut walk, 1000, &ctl).unwrap();
        assert_eq!(shard, Some(dir.join("01/100.jsonl")));
        assert!(!over);
        let (n2, shard, over) = many.feed_walk(&mut walk, 1000, &ctl).unwrap();
        assert_eq!((shard, over), (None, true));
        let total: u64 = texts
            .iter()
            .map(|p| std::fs::metadata(p).unwrap().len())
            .sum();
        assert_eq!(n1 + n2, total);
        assert!(!many.claim_file(&texts[7]));
        assert_eq!(table(one), table(many));
    }
}
