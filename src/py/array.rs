//! `_core.Array`: a Rust vector handed to numpy without a copy.
//!
//! The object owns the vector and exposes numpy's array interface
//! (`__array_interface__`, version 3: shape, type string, data pointer,
//! read-only flag). `numpy.asarray(obj)` then builds an array over the
//! vector's memory whose `base` is `obj`, so the memory lives exactly as long
//! as some array uses it. This works with the stable ABI (no buffer protocol
//! needed) and costs one small dict per call instead of a copy of every id.

use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::Rank;

enum Data {
    U32(Vec<Rank>),
    I64(Vec<i64>),
}

/// A read-only, numpy-readable vector of `uint32` ids or `int64` offsets.
#[pyclass(name = "Array", module = "bytepair._core", frozen)]
pub(crate) struct PyArray {
    data: Data,
}

impl PyArray {
    pub(crate) fn ids(v: Vec<Rank>) -> Self {
        PyArray { data: Data::U32(v) }
    }

    pub(crate) fn offsets(v: Vec<i64>) -> Self {
        PyArray { data: Data::I64(v) }
    }
}

#[pymethods]
impl PyArray {
    fn __len__(&self) -> usize {
        match &self.data {
            Data::U32(v) => v.len(),
            Data::I64(v) => v.len(),
        }
    }

    /// numpy's array interface, version 3. The pointer stays valid while this
    /// object lives: the vector is never changed or moved (the class is frozen
    /// and has no method that touches it), and numpy keeps this object as the
    /// array's base.
    #[getter]
    fn __array_interface__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let order = if cfg!(target_endian = "little") {
            '<'
        } else {
            '>'
        };
        let (ptr, len, typestr) = match &self.data {
            Data::U32(v) => (v.as_ptr() as usize, v.len(), format!("{order}u4")),
            Data::I64(v) => (v.as_ptr() as usize, v.len(), format!("{order}i8")),
        };
        let d = PyDict::new(py);
        d.set_item("version", 3)?;
        d.set_item("shape", (len,))?;
        d.set_item("typestr", typestr)?;
        // (address, read_only): the arrays built on it are read-only
        d.set_item("data", (ptr, true))?;
        Ok(d)
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyArray>()?;
    Ok(())
}
