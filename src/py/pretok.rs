//! Bindings for the pre-tokenizers (used by tests, benchmarks and `bytepair.inspect`).

use pyo3::prelude::*;

use super::errors::to_py;
use crate::pretok::Pretokenizer;

/// Splits `text` into pre-tokenization pieces with the named or custom pattern
/// (`None`: the whole text is one piece).
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

/// The byte offsets `(start, end)` of every piece in the UTF-8 encoding of `text`.
#[pyfunction]
#[pyo3(signature = (pattern, text))]
fn pretokenize_spans(
    py: Python<'_>,
    pattern: Option<&str>,
    text: &str,
) -> PyResult<Vec<(usize, usize)>> {
    let p = Pretokenizer::new(pattern).map_err(to_py)?;
    py.detach(|| {
        let mut out = Vec::new();
        p.for_each_span(text, |s, e| out.push((s, e))).map(|()| out)
    })
    .map_err(to_py)
}

/// The number of pieces of `text`, without building them (for benchmarks: this
/// measures the splitting alone, not the cost of creating Python strings).
#[pyfunction]
#[pyo3(signature = (pattern, text))]
fn pretokenize_count(py: Python<'_>, pattern: Option<&str>, text: &str) -> PyResult<usize> {
    let p = Pretokenizer::new(pattern).map_err(to_py)?;
    py.detach(|| {
        let mut n = 0usize;
        p.for_each_span(text, |_, _| n += 1).map(|()| n)
    })
    .map_err(to_py)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(pretokenize, m)?)?;
    m.add_function(wrap_pyfunction!(pretokenize_spans, m)?)?;
    m.add_function(wrap_pyfunction!(pretokenize_count, m)?)?;
    Ok(())
}
