//! Rust vectors handed to numpy without a copy.
//!
//! `PyArray1::from_vec` (the `numpy` crate) makes a real `numpy.ndarray`
//! whose base owns the vector: no copy of the ids, and no array-interface
//! dict for numpy to parse on every call (that parse costs ~0.7 µs, more
//! than a short text's whole encode). The array owns its memory alone, so it is
//! writable, and the memory lives as long as some array uses it. numpy is
//! imported on the first call (an `ImportError` without it).

use numpy::{Element, PyArray1};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;

use crate::Rank;

/// What the batch calls return: every id, and each text's offsets into them.
pub(crate) type IdsOffsets<'py> = (Bound<'py, PyArray1<Rank>>, Bound<'py, PyArray1<i64>>);

/// A numpy array over the vector itself (`uint32` ids, `int64` offsets).
///
/// The numpy crate loads numpy's C API on first use and panics when that
/// fails: numpy missing, or a pending interrupt (Ctrl-C, a stopped task)
/// raised while numpy's Python code runs for the version check. Its module is
/// imported here first, once, so such a failure is an ordinary Python error;
/// the crate's own load then runs no Python code.
pub(crate) fn owned<T: Element>(py: Python<'_>, v: Vec<T>) -> PyResult<Bound<'_, PyArray1<T>>> {
    static LOADED: PyOnceLock<()> = PyOnceLock::new();
    LOADED.get_or_try_init(py, || numpy::get_array_module(py).map(|_| ()))?;
    Ok(PyArray1::from_vec(py, v))
}
