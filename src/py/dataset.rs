//! Binding of the shard pipeline (`crate::dataset`): `_core.encode_shards`.
//! The whole run happens with the GIL released; it is taken back only to
//! report a finished shard (`on_done`) and to let Python load the Parquet
//! column of a file the Rust reader refuses (`loader`, on the reader thread).

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::PyBytes;

use super::array;
use super::encoding::PyCoreBpe;
use super::errors::to_py;
use crate::dataset::{
    self, Column, ColumnLoader, ColumnSink, Done, Input, Options, Output, Shard, Width,
};
use crate::Rank;

/// Calls a Python `loader(path)`, an iterator of Arrow string arrays
/// `(offsets: bytes, wide: bool, data: bytes)` (native-endian int32 or, when
/// `wide`, int64 offsets). The GIL is held only to take and copy one array,
/// never while the pipeline waits for room.
pub(super) struct PyLoader(pub(super) Py<PyAny>);

fn to_column(offsets: &[u8], wide: bool, data: &[u8]) -> Result<Column, String> {
    let offsets: Option<Vec<usize>> = if wide {
        offsets
            .chunks_exact(8)
            .map(|b| usize::try_from(i64::from_ne_bytes(b.try_into().unwrap_or([0; 8]))).ok())
            .collect()
    } else {
        offsets
            .chunks_exact(4)
            .map(|b| usize::try_from(i32::from_ne_bytes(b.try_into().unwrap_or([0; 4]))).ok())
            .collect()
    };
    Ok(Column {
        offsets: offsets.ok_or("damaged string column (negative offset)")?,
        data: data.to_vec(),
    })
}

impl ColumnLoader for PyLoader {
    fn load(&self, path: &Path, sink: &mut ColumnSink<'_>) -> Result<(), String> {
        let iter = Python::attach(|py| {
            self.0
                .call1(py, (path.to_string_lossy().into_owned(),))
                .and_then(|it| it.bind(py).try_iter().map(|i| i.unbind()))
                .map_err(|e| e.value(py).to_string())
        })?;
        loop {
            let next = Python::attach(|py| -> Result<Option<Column>, String> {
                match iter.bind(py).clone().next() {
                    None => Ok(None),
                    Some(item) => {
                        let (offsets, wide, data): (Bound<'_, PyBytes>, bool, Bound<'_, PyBytes>) =
                            item.and_then(|i| i.extract())
                                .map_err(|e: PyErr| e.value(py).to_string())?;
                        to_column(offsets.as_bytes(), wide, data.as_bytes()).map(Some)
                    }
                }
            })?;
            match next {
                None => return Ok(()),
                Some(col) => {
                    if !sink(col)? {
                        return Ok(());
                    }
                }
            }
        }
    }
}

fn ne_bytes<'py, T: Copy, const W: usize>(
    py: Python<'py>,
    values: &[T],
    f: impl Fn(T) -> [u8; W],
) -> PyResult<Bound<'py, PyBytes>> {
    PyBytes::new_with(py, values.len() * W, |buf| {
        for (dst, &v) in buf.chunks_exact_mut(W).zip(values) {
            dst.copy_from_slice(&f(v));
        }
        Ok(())
    })
}

fn ids_bytes<'py>(py: Python<'py>, ids: &[Rank], width: Width) -> PyResult<Bound<'py, PyBytes>> {
    match width {
        Width::U16 => ne_bytes(py, ids, |v| (v as u16).to_ne_bytes()),
        Width::U32 => ne_bytes(py, ids, |v: Rank| v.to_ne_bytes()),
    }
}

/// The pipeline's shards from the binding's `(path, format, gzip, output,
/// dest)` tuples; an unknown format or output, or a file output without a
/// destination, is a `ValueError`.
fn shard_list(shards: Vec<(String, String, bool, String, Option<String>)>) -> PyResult<Vec<Shard>> {
    let mut list = Vec::with_capacity(shards.len());
    for (path, format, gzip, output, dest) in shards {
        let path = PathBuf::from(path);
        let input = match format.as_str() {
            "text" => Input::Text { path, gzip },
            "jsonl" => Input::Jsonl { path, gzip },
            "parquet" => Input::Columns { path },
            other => {
                return Err(PyValueError::new_err(format!(
                    "unknown shard format {other:?}"
                )))
            }
        };
        let dest = || {
            dest.clone()
                .map(PathBuf::from)
                .ok_or_else(|| PyValueError::new_err("a file output needs a destination"))
        };
        let output = match output.as_str() {
            "bin" => Output::Bin(dest()?),
            "npy" => Output::Npy(dest()?),
            "memory" => Output::Memory,
            "collect" => Output::Collect,
            other => {
                return Err(PyValueError::new_err(format!(
                    "unknown shard output {other:?}"
                )))
            }
        };
        list.push(Shard { input, output });
    }
    Ok(list)
}

/// Calls `on_done(i, documents, tokens, ids, offsets, error)` for a finished
/// shard: the ids (in `width`) and offsets as native-endian bytes when the
/// shard kept them in memory, else None; `error` is the reason it failed.
fn report(
    py: Python<'_>,
    on_done: &Py<PyAny>,
    i: usize,
    result: &Result<Done, String>,
    width: Width,
) -> PyResult<Py<PyAny>> {
    match result {
        Ok(d) => {
            let (ids, offs) = if d.offsets.is_empty() {
                (None, None)
            } else {
                let ids = ids_bytes(py, &d.ids, width)?;
                (Some(ids), Some(ne_bytes(py, &d.offsets, i64::to_ne_bytes)?))
            };
            on_done.call1(py, (i, d.documents, d.tokens, ids, offs, None::<String>))
        }
        Err(why) => on_done.call1(
            py,
            (
                i,
                0u64,
                0u64,
                None::<Vec<u8>>,
                None::<Vec<u8>>,
                why.as_str(),
            ),
        ),
    }
}

/// Encodes shards through the native pipeline.
///
/// `shards`: `(path, format, gzip, output, dest)` with format `"text"`,
/// `"jsonl"` or `"parquet"` and output `"bin"`, `"npy"` (written to `dest`),
/// `"memory"` (ids handed to `on_done`) or `"collect"` (returned).
/// `on_done(index, documents, tokens, ids, offsets, error)` is called for each
/// shard in input order; `error` is a short reason or None. Returns the
/// collected ids (uint32) and offsets (int64), native-endian bytes.
#[pyfunction]
#[pyo3(signature = (core, shards, *, column, eot, uint16, num_threads, allowed_special, disallowed_special, loader, on_done, chunk_bytes=None, max_inflight_bytes=None))]
#[allow(clippy::too_many_arguments)]
fn encode_shards<'py>(
    py: Python<'py>,
    core: PyRef<'py, PyCoreBpe>,
    shards: Vec<(String, String, bool, String, Option<String>)>,
    column: String,
    eot: Option<Rank>,
    uint16: bool,
    num_threads: Option<usize>,
    allowed_special: Vec<PyBackedStr>,
    disallowed_special: Vec<PyBackedStr>,
    loader: Option<Py<PyAny>>,
    on_done: Py<PyAny>,
    chunk_bytes: Option<usize>,
    max_inflight_bytes: Option<usize>,
) -> PyResult<array::IdsOffsets<'py>> {
    let list = shard_list(shards)?;
    let mut opts = Options::new(&column, num_threads);
    if let Some(c) = chunk_bytes {
        opts.chunk_bytes = c.max(1);
    }
    if let Some(m) = max_inflight_bytes {
        opts.max_inflight_bytes = m.max(1);
    }
    opts.eot = eot;
    let width = if uint16 { Width::U16 } else { Width::U32 };
    opts.width = width;
    let policy = core.policy(Some(allowed_special), Some(disallowed_special));
    let loader = loader.map(PyLoader);
    let inner = &core.inner;
    // the first Python error (from on_done, or Ctrl-C), raised after the run
    let raised: Mutex<Option<PyErr>> = Mutex::new(None);
    let keep = |e: PyErr| {
        raised
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_or_insert(e);
        false
    };
    let collected = py
        .detach(|| {
            dataset::encode_shards(
                inner,
                &policy,
                &list,
                loader.as_ref().map(|l| l as &dyn ColumnLoader),
                &opts,
                &mut |i, result: Result<Done, String>| {
                    Python::attach(|py| {
                        report(py, &on_done, i, &result, width).map_or_else(keep, |_| true)
                    })
                },
                &mut || Python::attach(|py| py.check_signals().map_or_else(keep, |_| true)),
            )
        })
        .map_err(to_py)?;
    if let Some(e) = raised.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e);
    }
    // the collected vectors themselves, viewed by numpy without a copy
    Ok((
        array::owned(py, collected.ids)?,
        array::owned(py, collected.offsets)?,
    ))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(encode_shards, m)?)?;
    Ok(())
}
