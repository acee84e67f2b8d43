//! Rust vectors handed to numpy without a copy.
//!
//! `PyArray1::from_vec` (the `numpy` crate) makes a real `numpy.ndarray`
//! whose base owns the vector: no copy of the ids, and no array-interface
//! dict for numpy to parse on every call (that took ~0.7 µs, more than a
//! short text's whole encode). The array owns its memory alone, so it is
//! writable, and the memory lives as long as some array uses it. numpy is
//! imported on the first call (an `ImportError` without it).

use numpy::PyArray1;
use pyo3::prelude::*;

use crate::Rank;

/// What the batch calls return: every id, and each text's offsets into them.
pub(crate) type IdsOffsets<'py> = (Bound<'py, PyArray1<Rank>>, Bound<'py, PyArray1<i64>>);

/// Ids as a `numpy.uint32` array over the vector itself.
pub(crate) fn ids(py: Python<'_>, v: Vec<Rank>) -> Bound<'_, PyArray1<Rank>> {
    PyArray1::from_vec(py, v)
}

/// Offsets as a `numpy.int64` array over the vector itself.
pub(crate) fn offsets(py: Python<'_>, v: Vec<i64>) -> Bound<'_, PyArray1<i64>> {
    PyArray1::from_vec(py, v)
}
