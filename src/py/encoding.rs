//! Bindings for the encoder/decoder: `_core.CoreBPE`.

use std::collections::HashMap;

use pyo3::prelude::*;
use pyo3::types::PyBytes;
use rayon::prelude::*;

use super::errors::to_py;
use crate::encode::{CoreBpe, SpecialPolicy};
use crate::Rank;

/// The Rust encoder behind `bytepair.Tokenizer`.
#[pyclass(name = "CoreBPE", module = "bytepair._core", frozen)]
pub struct PyCoreBpe {
    inner: CoreBpe,
}

#[pymethods]
impl PyCoreBpe {
    #[new]
    #[pyo3(signature = (tokens, special_tokens, pattern))]
    fn py_new(
        tokens: Vec<Vec<u8>>,
        special_tokens: HashMap<String, Rank>,
        pattern: Option<&str>,
    ) -> PyResult<Self> {
        let mut specials: Vec<(String, Rank)> = special_tokens.into_iter().collect();
        specials.sort_by_key(|(_, r)| *r);
        Ok(PyCoreBpe {
            inner: CoreBpe::new(tokens, specials, pattern).map_err(to_py)?,
        })
    }

    // ------------------------------------------------------------ Encoding

    #[pyo3(name = "encode_ordinary")]
    fn py_encode_ordinary(&self, py: Python<'_>, text: &str) -> PyResult<Vec<Rank>> {
        py.detach(|| self.inner.encode_ordinary(text))
            .map_err(to_py)
    }

    #[pyo3(name = "encode")]
    fn py_encode(
        &self,
        py: Python<'_>,
        text: &str,
        allowed_special: Vec<String>,
        disallowed_special: Vec<String>,
    ) -> PyResult<Vec<Rank>> {
        let policy = SpecialPolicy {
            allowed: allowed_special.into_iter().collect(),
            disallowed: disallowed_special.into_iter().collect(),
        };
        py.detach(|| self.inner.encode(text, &policy))
            .map_err(to_py)
    }

    #[pyo3(name = "encode_batch")]
    fn py_encode_batch(
        &self,
        py: Python<'_>,
        texts: Vec<String>,
        allowed_special: Vec<String>,
        disallowed_special: Vec<String>,
    ) -> PyResult<Vec<Vec<Rank>>> {
        let policy = SpecialPolicy {
            allowed: allowed_special.into_iter().collect(),
            disallowed: disallowed_special.into_iter().collect(),
        };
        py.detach(|| {
            texts
                .par_iter()
                .map(|t| self.inner.encode(t, &policy))
                .collect::<Result<Vec<_>, _>>()
        })
        .map_err(to_py)
    }

    // ------------------------------------------------------------ Decoding

    #[pyo3(name = "decode_bytes")]
    fn py_decode_bytes<'py>(
        &self,
        py: Python<'py>,
        ids: Vec<Rank>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = py.detach(|| self.inner.decode_bytes(&ids)).map_err(to_py)?;
        Ok(PyBytes::new(py, &bytes))
    }

    #[pyo3(name = "token_bytes")]
    fn py_token_bytes<'py>(&self, py: Python<'py>, id: Rank) -> PyResult<Bound<'py, PyBytes>> {
        let b = self.inner.token_bytes(id).map_err(to_py)?;
        Ok(PyBytes::new(py, b))
    }

    /// The merge list `[(left, right), ...]` for the multi-byte tokens in rank order.
    fn derive_merges(&self, py: Python<'_>) -> PyResult<Vec<(Rank, Rank)>> {
        py.detach(|| crate::encode::derive_merges(self.inner.vocab()))
            .map_err(to_py)
    }

    #[getter]
    fn n_mergeable(&self) -> usize {
        self.inner.vocab().len()
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyCoreBpe>()?;
    Ok(())
}
