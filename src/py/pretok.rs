//! Bindings for the pre-tokenizers (used by tests and by `bytepair.inspect`).

use pyo3::prelude::*;

use super::errors::to_py;
use crate::pretok::Pretokenizer;

/// Splits `text` into pre-tokenization pieces with the named or custom pattern.
#[pyfunction]
#[pyo3(signature = (pattern, text))]
fn pretokenize(py: Python<'_>, pattern: Option<&str>, text: &str) -> PyResult<Vec<String>> {
    let p = Pretokenizer::new(pattern).map_err(to_py)?;
    py.detach(|| {
        p.split(text)
            .map(|v| v.into_iter().map(str::to_owned).collect())
    })
    .map_err(to_py)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(pretokenize, m)?)?;
    Ok(())
}
