//! Python lists of ids built from a table of the vocabulary's ints, made once
//! per encoder: a list item is a reference to a ready `int`, not a new
//! object per id (that allocation was most of a long list's cost).

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyList;

use crate::Rank;

/// The ints `0..n` of one encoder, built on first use.
#[derive(Default)]
pub(crate) struct IntTable(PyOnceLock<Vec<Py<PyAny>>>);

impl IntTable {
    /// A Python list of `ids`; `n`: the ids the table holds (the dense ones;
    /// an id at or past `n`, such as a special id far above the rest, is made
    /// when met).
    pub(crate) fn list<'py>(
        &self,
        py: Python<'py>,
        n: usize,
        ids: &[Rank],
    ) -> PyResult<Bound<'py, PyList>> {
        let ints = self.0.get_or_init(py, || {
            (0..n as Rank)
                .map(|i| i.into_pyobject(py).map(|o| o.into_any().unbind()))
                .collect::<Result<Vec<_>, _>>()
                .unwrap_or_default()
        });
        let items = ids.iter().map(|&i| match ints.get(i as usize) {
            Some(o) => o.clone_ref(py),
            None => i
                .into_pyobject(py)
                .map(|o| o.into_any().unbind())
                .unwrap_or_else(|e| match e {}),
        });
        PyList::new(py, items)
    }
}
