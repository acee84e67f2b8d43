//! Bindings for the trainer: the chunk table, the streaming counter and the
//! merge loop. Long jobs run on a worker thread with the GIL released while
//! the calling thread wakes every 100 ms to run Python's signal handlers
//! (KeyboardInterrupt then cancels the job within one wake-up) and to report
//! progress.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use super::dataset::PyLoader;
use super::errors::to_py;
use super::text::Text;
use crate::dataset::{ColumnLoader, Input};
use crate::error::Result;
use crate::parallel;
use crate::pretok::Pretokenizer;
use crate::train::{
    compact, learn_merges_owned_with, learn_merges_with, spill::Spill, ChunkCounter, ChunkTable,
    Control, Counted, MergeLoop, MergeOptions,
};
use crate::walk::Walk;

/// Runs `job` on a scoped worker thread; meanwhile the calling thread checks
/// signals and calls `progress(bytes_done, merges_done)` every 100 ms.
pub(crate) fn run_interruptible<T: Send>(
    py: Python<'_>,
    ctl: &Control,
    progress: Option<&Bound<'_, PyAny>>,
    job: impl FnOnce() -> Result<T> + Send,
) -> PyResult<T> {
    std::thread::scope(|s| {
        let (tx, rx) = mpsc::channel::<()>();
        // Wrapped so the waiting closure (which must be Send) can borrow it.
        let rx = std::sync::Mutex::new(rx);
        let handle = s.spawn(move || {
            let r = job();
            let _ = tx.send(());
            r
        });
        let mut failure: Option<PyErr> = None;
        loop {
            let finished = py.detach(|| match rx.lock() {
                Ok(rx) => match rx.recv_timeout(Duration::from_millis(100)) {
                    Ok(()) | Err(mpsc::RecvTimeoutError::Disconnected) => true,
                    Err(mpsc::RecvTimeoutError::Timeout) => false,
                },
                Err(_) => true,
            });
            if finished {
                break;
            }
            let step = py.check_signals().and_then(|_| match progress {
                Some(cb) => cb
                    .call1((
                        ctl.bytes_done.load(Ordering::Relaxed),
                        ctl.merges_done.load(Ordering::Relaxed),
                    ))
                    .map(|_| ()),
                None => Ok(()),
            });
            if let Err(e) = step {
                ctl.cancel.store(true, Ordering::Relaxed);
                failure = Some(e);
                break;
            }
        }
        let joined = py.detach(|| handle.join());
        if let Some(e) = failure {
            return Err(e);
        }
        match joined {
            Ok(r) => r.map_err(to_py),
            Err(_) => Err(PyRuntimeError::new_err(
                "internal error in the bytepair trainer (a worker thread panicked)",
            )),
        }
    })
}

// ---------------------------------------------------------------- ChunkTable

/// Distinct chunks and counts in first-seen order (backs `bytepair.counts.ChunkCounts`).
#[pyclass(name = "ChunkTable", module = "bytepair._core")]
#[derive(Default)]
pub(crate) struct PyChunkTable {
    pub(crate) inner: ChunkTable,
}

#[pymethods]
impl PyChunkTable {
    #[new]
    fn new() -> Self {
        Self::default()
    }

    /// Adds `n` to the count of `chunk` (appended when new).
    fn add(&mut self, chunk: &[u8], n: u64) -> PyResult<()> {
        self.inner.add(chunk, n).map_err(to_py)
    }

    /// Adds many `(chunk, count)` pairs in order.
    fn add_items(&mut self, items: Vec<(Vec<u8>, u64)>) -> PyResult<()> {
        for (c, n) in items {
            self.inner.add(&c, n).map_err(to_py)?;
        }
        Ok(())
    }

    /// Adds every count of `other`, new chunks after the existing ones in `other`'s order.
    fn update(&mut self, py: Python<'_>, other: PyRef<'_, PyChunkTable>) -> PyResult<()> {
        let src = &other.inner;
        let dst = &mut self.inner;
        py.detach(|| dst.merge_from(src)).map_err(to_py)
    }

    /// A copy of the table.
    fn copy(&self) -> Self {
        Self {
            inner: self.inner.clone(),
        }
    }

    /// All `(chunk, count)` pairs in first-seen order.
    fn items<'py>(&self, py: Python<'py>) -> Vec<(Bound<'py, PyBytes>, u64)> {
        self.inner
            .iter()
            .map(|(c, n)| (PyBytes::new(py, c), n))
            .collect()
    }

    /// The count of `chunk` (0 when absent).
    fn count_of(&self, chunk: &[u8]) -> u64 {
        self.inner.count_of(chunk)
    }

    /// Total bytes of the distinct chunks.
    #[getter]
    fn arena_len(&self) -> usize {
        self.inner.arena_len()
    }

    /// The merge loop training `num_merges` merges from this table takes:
    /// "compact" (short chunks) or "positions".
    fn merge_loop(&self, num_merges: usize) -> &'static str {
        loop_name(MergeLoop::for_table(&self.inner, num_merges))
    }

    /// Sum of all counts.
    fn total(&self) -> u64 {
        self.inner.total()
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }

    fn __eq__(&self, other: PyRef<'_, PyChunkTable>) -> bool {
        self.inner == other.inner
    }

    /// The entries as the body of a `.bpc` file.
    fn to_body<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let body = py.detach(|| self.inner.to_body());
        PyBytes::new(py, &body)
    }

    /// Parses a `.bpc` body with `entries` chunks.
    #[staticmethod]
    fn from_body(py: Python<'_>, body: &[u8], entries: u64) -> PyResult<Self> {
        let inner = py
            .detach(|| ChunkTable::from_body(body, entries))
            .map_err(to_py)?;
        Ok(Self { inner })
    }
}

// ---------------------------------------------------------------- Counter

/// Counts chunks of documents (str) and files (read in blocks in Rust), in
/// parallel, into a `ChunkTable`.
#[pyclass(name = "ChunkCounter", module = "bytepair._core")]
pub(crate) struct PyChunkCounter {
    counter: Option<ChunkCounter>,
    pool: Arc<rayon::ThreadPool>,
}

fn finished() -> PyErr {
    PyValueError::new_err("this ChunkCounter is finished")
}

impl PyChunkCounter {
    /// The pool and the counter, or the error for a finished counter.
    fn live(&mut self) -> PyResult<(&rayon::ThreadPool, &mut ChunkCounter)> {
        let counter = self.counter.as_mut().ok_or_else(finished)?;
        Ok((&self.pool, counter))
    }
}

#[pymethods]
impl PyChunkCounter {
    #[new]
    #[pyo3(signature = (pattern, special_tokens, separator=None, num_threads=None, block_size=crate::train::DEFAULT_BLOCK, stream_block=None, memory_limit=None, spill_dir=None, table_limit=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        pattern: Option<&str>,
        special_tokens: Vec<String>,
        separator: Option<&str>,
        num_threads: Option<usize>,
        block_size: usize,
        stream_block: Option<usize>,
        memory_limit: Option<usize>,
        spill_dir: Option<PathBuf>,
        table_limit: Option<u64>,
    ) -> PyResult<Self> {
        let pretok = Pretokenizer::new(pattern).map_err(to_py)?;
        let mut counter =
            ChunkCounter::new(pretok, &special_tokens, separator, block_size).map_err(to_py)?;
        if let Some(n) = stream_block {
            counter.set_stream_block(n);
        }
        if let Some(limit) = memory_limit {
            counter
                .set_memory_limit(limit, spill_dir.as_deref())
                .map_err(to_py)?;
        }
        if let Some(limit) = table_limit {
            counter.set_table_limit(limit);
        }
        let pool = parallel::pool(num_threads).map_err(to_py)?;
        Ok(Self {
            counter: Some(counter),
            pool,
        })
    }

    /// Counts documents (each str is cut independently of the others).
    #[pyo3(signature = (texts, progress=None))]
    fn feed_texts(
        &mut self,
        py: Python<'_>,
        texts: Vec<Text>,
        progress: Option<Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let (pool, counter) = self.live()?;
        let ctl = Control::default();
        let docs: Vec<&str> = texts.iter().map(|s| &**s).collect();
        run_interruptible(py, &ctl, progress.as_ref(), || {
            pool.install(|| counter.feed_documents(&docs, &ctl))
        })
    }

    /// Counts UTF-8 files, each one document, in order, each file once
    /// (by device and inode, shared with `claim_file`); many small files are
    /// read in parallel and counted together. Returns the bytes counted.
    #[pyo3(signature = (paths, progress=None))]
    fn feed_text_files(
        &mut self,
        py: Python<'_>,
        paths: Vec<PathBuf>,
        progress: Option<Bound<'_, PyAny>>,
    ) -> PyResult<u64> {
        let (pool, counter) = self.live()?;
        let ctl = Control::default();
        run_interruptible(py, &ctl, progress.as_ref(), || {
            pool.install(|| counter.feed_text_files(&paths, &ctl))
        })
    }

    /// Counts the plain text files the folder walk gives next, at most
    /// `limit`, as `feed_text_files` does: `(bytes counted, the path of the
    /// file that stopped the walk when it is a shard (the caller reads it),
    /// whether the walk is over)`.
    #[pyo3(signature = (walk, limit, progress=None))]
    fn feed_walk(
        &mut self,
        py: Python<'_>,
        walk: &Bound<'_, PyFolderWalk>,
        limit: usize,
        progress: Option<Bound<'_, PyAny>>,
    ) -> PyResult<(u64, Option<OsString>, bool)> {
        let (pool, counter) = self.live()?;
        let ctl = Control::default();
        let mut walk = walk.borrow_mut();
        let walk = &mut walk.inner;
        let (n, shard, over) = run_interruptible(py, &ctl, progress.as_ref(), || {
            pool.install(|| counter.feed_walk(walk, limit, &ctl))
        })?;
        // a str, as the paths of `bytepair.shards.paths` are
        Ok((n, shard.map(PathBuf::into_os_string), over))
    }

    /// Records that the file at `path` is read: false when this counter
    /// has already read it (by device and inode) and it must be skipped.
    fn claim_file(&mut self, path: PathBuf) -> PyResult<bool> {
        let (_, counter) = self.live()?;
        Ok(counter.claim_file(&path))
    }

    /// Counts one UTF-8 file as one document, read in blocks.
    #[pyo3(signature = (path, progress=None))]
    fn feed_file(
        &mut self,
        py: Python<'_>,
        path: PathBuf,
        progress: Option<Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let (pool, counter) = self.live()?;
        let ctl = Control::default();
        run_interruptible(py, &ctl, progress.as_ref(), || {
            pool.install(|| counter.feed_file(&path, &ctl))
        })
    }

    /// Counts one dataset shard: `format` is `"text"` (the file is one
    /// document), `"jsonl"` or `"parquet"` (one document per line / row, the
    /// string under `column`); `gzip` for `.gz` text and JSONL. `loader`:
    /// the Python column loader of the Parquet files the Rust reader refuses
    /// (see `encode_shards`).
    #[pyo3(signature = (path, format, column, gzip=false, progress=None, loader=None))]
    #[allow(clippy::too_many_arguments)] // a Python method: its keywords are its arguments
    fn feed_shard(
        &mut self,
        py: Python<'_>,
        path: PathBuf,
        format: &str,
        column: &str,
        gzip: bool,
        progress: Option<Bound<'_, PyAny>>,
        loader: Option<Py<PyAny>>,
    ) -> PyResult<()> {
        let loader = loader.map(PyLoader);
        let input = match format {
            "text" => Input::Text { path, gzip },
            "jsonl" => Input::Jsonl { path, gzip },
            "parquet" => Input::Columns { path },
            other => {
                return Err(PyValueError::new_err(format!(
                    "unknown shard format {other:?}; use text, jsonl or parquet"
                )))
            }
        };
        let (pool, counter) = self.live()?;
        let ctl = Control::default();
        run_interruptible(py, &ctl, progress.as_ref(), || {
            pool.install(|| {
                counter.feed_shard(
                    &input,
                    column,
                    loader.as_ref().map(|l| l as &dyn ColumnLoader),
                    &ctl,
                )
            })
        })
    }

    /// Run files spilled so far under the memory limit.
    #[getter]
    fn spilled_runs(&self) -> usize {
        self.counter.as_ref().map_or(0, |c| c.spilled_runs())
    }

    /// The number of threads this counter counts on (its pool's size).
    #[getter]
    fn num_threads(&self) -> usize {
        self.pool.current_num_threads()
    }

    /// Number of distinct chunks so far.
    fn __len__(&mut self) -> PyResult<usize> {
        match self.counter.as_mut() {
            Some(c) => c.distinct().map_err(to_py),
            None => Ok(0),
        }
    }

    /// Ends counting and returns the table (the counter cannot be fed again).
    fn finish(&mut self, py: Python<'_>) -> PyResult<PyChunkTable> {
        let c = self.counter.take().ok_or_else(finished)?;
        let inner = py.detach(|| c.finish()).map_err(to_py)?;
        Ok(PyChunkTable { inner })
    }

    /// Ends counting: the table, or the counts spilled to disk, not merged,
    /// when some were spilled (for `extend_merges`).
    fn finish_or_runs(&mut self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let c = self.counter.take().ok_or_else(finished)?;
        match py.detach(|| c.finish_or_runs()).map_err(to_py)? {
            Counted::Table(inner) => Ok(Py::new(py, PyChunkTable { inner })?.into_any()),
            Counted::Runs(s) => Ok(Py::new(py, PySpilledRuns { inner: Some(s) })?.into_any()),
        }
    }
}

/// Span counts spilled to disk by a counter and not merged; their files go
/// when the object does, or once `extend_merges` has read them.
#[pyclass(name = "SpilledRuns", module = "bytepair._core")]
pub(crate) struct PySpilledRuns {
    pub(crate) inner: Option<Spill>,
}

// ---------------------------------------------------------------- merge loop

/// Learns merges from a table (see `bytepair.reference.train_from_counts`).
/// With `consume`, the table is emptied and freed once the loop is built.
#[pyfunction]
#[pyo3(name = "learn_merges", signature = (table, num_merges, min_frequency=1, max_token_length=None, progress=None, consume=false, merge_loop="auto"))]
#[allow(clippy::too_many_arguments)]
fn learn_merges_py(
    py: Python<'_>,
    mut table: PyRefMut<'_, PyChunkTable>,
    num_merges: usize,
    min_frequency: u64,
    max_token_length: Option<usize>,
    progress: Option<Bound<'_, PyAny>>,
    consume: bool,
    merge_loop: &str,
) -> PyResult<Vec<(u32, u32)>> {
    let opts = MergeOptions {
        num_merges,
        min_frequency,
        max_token_length,
    };
    let which = match merge_loop {
        "auto" => MergeLoop::for_table(&table.inner, num_merges),
        "compact" if compact::fits(&table.inner, num_merges) => MergeLoop::Compact,
        "positions" => MergeLoop::Positions,
        "compact" => {
            return Err(PyValueError::new_err(
                "merge_loop='compact' needs short chunks (see ChunkTable.merge_loop())",
            ))
        }
        other => {
            return Err(PyValueError::new_err(format!(
                "merge_loop must be 'auto', 'compact' or 'positions', got {other:?}"
            )))
        }
    };
    let ctl = Control::default();
    if consume {
        let t = std::mem::take(&mut table.inner);
        return run_interruptible(py, &ctl, progress.as_ref(), || {
            learn_merges_owned_with(t, &opts, &ctl, which)
        });
    }
    let t = &table.inner;
    run_interruptible(py, &ctl, progress.as_ref(), || {
        learn_merges_with(t, &opts, &ctl, which)
    })
}

fn loop_name(which: MergeLoop) -> &'static str {
    match which {
        MergeLoop::CompactFirst | MergeLoop::Compact => "compact",
        MergeLoop::Positions => "positions",
    }
}

/// The regular files under a folder, in sorted path order (see
/// `src/walk.rs`): an iterator of `(path, inode)`, or fed to
/// `ChunkCounter.feed_walk`.
#[pyclass(name = "FolderWalk", module = "bytepair._core")]
pub(crate) struct PyFolderWalk {
    inner: Walk,
}

#[pymethods]
impl PyFolderWalk {
    #[new]
    fn new(py: Python<'_>, top: PathBuf) -> Self {
        let inner = py.detach(|| Walk::new(&top));
        Self { inner }
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&mut self) -> Option<(OsString, u64)> {
        // a str, as the paths of `bytepair.shards.paths` are
        self.inner
            .next_file()
            .map(|f| (f.path().into_os_string(), f.inode))
    }

    /// The files given so far.
    #[getter]
    fn found(&self) -> u64 {
        self.inner.found()
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyChunkTable>()?;
    m.add_class::<PyFolderWalk>()?;
    m.add_class::<PyChunkCounter>()?;
    m.add_class::<PySpilledRuns>()?;
    m.add_function(wrap_pyfunction!(learn_merges_py, m)?)?;
    Ok(())
}
