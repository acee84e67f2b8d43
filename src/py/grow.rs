//! Bindings for growing vocabularies: `extend_merges` (continue BPE on top of
//! an existing tokenizer) and `parity_merges` (parity-aware training).

use pyo3::prelude::*;

use super::encoding::PyCoreBpe;
use super::trainer::{run_interruptible, PyChunkTable, PySpilledRuns};
use crate::train::compact::TableRef;
use crate::train::from_tokens::{extend_merges, parity_merges, ExtendFrom};
use crate::train::{Control, ExtendBounds, MergeOptions};

/// Merges learned on top of `base` from `table` (see
/// `bytepair.reference.extend_from_counts`); new ids start at `first_id`.
/// `table` is a `ChunkTable`, or the `SpilledRuns` of a counter
/// (`ChunkCounter.finish_or_runs`), which the lean loop reads without a
/// table (their files go then; the runs are used up). With `memory_limit`
/// (bytes), past the node loop's need the lean loop learns the same merges,
/// and a `TrainingError` naming the limit comes when neither fits. With
/// `consume`, a table is emptied and its memory freed once its chunks are
/// encoded (the caller's own counts: never).
#[pyfunction]
#[pyo3(name = "extend_merges", signature = (base, table, first_id, num_merges, min_frequency=1, max_token_length=None, progress=None, max_words=None, num_threads=None, memory_limit=None, consume=false))]
#[allow(clippy::too_many_arguments)]
fn extend_merges_py(
    py: Python<'_>,
    base: PyRef<'_, PyCoreBpe>,
    table: Bound<'_, PyAny>,
    first_id: u32,
    num_merges: usize,
    min_frequency: u64,
    max_token_length: Option<usize>,
    progress: Option<Bound<'_, PyAny>>,
    max_words: Option<usize>,
    num_threads: Option<usize>,
    memory_limit: Option<u64>,
    consume: bool,
) -> PyResult<Vec<(u32, u32)>> {
    let v = base.inner.vocab();
    let bounds = ExtendBounds {
        max_words,
        memory_limit,
    };
    let opts = MergeOptions {
        num_merges,
        min_frequency,
        max_token_length,
    };
    let ctl = Control::default();
    let run = |from: ExtendFrom<'_>| {
        run_interruptible(py, &ctl, progress.as_ref(), || {
            extend_merges(v, from, first_id, &opts, bounds, num_threads, &ctl)
        })
    };
    if let Ok(runs) = table.cast::<PySpilledRuns>() {
        let spill = runs.borrow_mut().inner.take().ok_or_else(|| {
            pyo3::exceptions::PyValueError::new_err("these spilled runs were used already")
        })?;
        return run(ExtendFrom::Runs(&spill));
    }
    let mut table = table.cast::<PyChunkTable>()?.borrow_mut();
    let t = if consume {
        TableRef::Owned(std::mem::take(&mut table.inner))
    } else {
        TableRef::Borrowed(&table.inner)
    };
    run(ExtendFrom::Table(t))
}

/// Parity-aware merges (see `bytepair.reference.train_parity_from_counts`):
/// returns the merges and, per merge, the index of the language that chose it
/// (`len(tables)` for the first `global_merges`, chosen on all languages pooled).
#[pyfunction]
#[pyo3(name = "parity_merges", signature = (tables, dev_tables, dev_sizes, num_merges, min_frequency=1, max_token_length=None, progress=None, global_merges=0))]
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
fn parity_merges_py(
    py: Python<'_>,
    tables: Vec<PyRef<'_, PyChunkTable>>,
    dev_tables: Vec<PyRef<'_, PyChunkTable>>,
    dev_sizes: Vec<u64>,
    num_merges: usize,
    min_frequency: u64,
    max_token_length: Option<usize>,
    progress: Option<Bound<'_, PyAny>>,
    global_merges: usize,
) -> PyResult<(Vec<(u32, u32)>, Vec<usize>)> {
    let train: Vec<&crate::train::ChunkTable> = tables.iter().map(|t| &t.inner).collect();
    let dev: Vec<&crate::train::ChunkTable> = dev_tables.iter().map(|t| &t.inner).collect();
    let opts = MergeOptions {
        num_merges,
        min_frequency,
        max_token_length,
    };
    let ctl = Control::default();
    run_interruptible(py, &ctl, progress.as_ref(), || {
        let mut chooser = Vec::new();
        let m = parity_merges(
            &train,
            &dev,
            &dev_sizes,
            global_merges,
            &opts,
            &ctl,
            |_, l| chooser.push(l),
        )?;
        Ok((m, chooser))
    })
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(extend_merges_py, m)?)?;
    m.add_function(wrap_pyfunction!(parity_merges_py, m)?)?;
    Ok(())
}
