//! Bindings for budgets and offsets: functions over a `CoreBPE` (see
//! `crate::core_bpe::budget`), and `Spans`, the compact sequence of token spans
//! that `encode_with_offsets` returns.

use pyo3::exceptions::{PyIndexError, PyValueError};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::{PyList, PySlice, PyString, PyTuple};

use super::encoding::PyCoreBpe;
use super::errors::to_py;
use super::text::Text;
use crate::core_bpe::offsets::Unit;

/// The `(start, end)` span of each token, stored as pairs of u32 (8 bytes a
/// token) and turned into tuples only when read: building a tuple of two ints
/// per token would cost about as much as the encode itself.
#[pyclass(name = "Spans", module = "bytepair._core", frozen, sequence)]
pub struct PySpans {
    spans: Vec<[u32; 2]>,
}

fn pair<'py>(py: Python<'py>, s: [u32; 2]) -> PyResult<Bound<'py, PyTuple>> {
    PyTuple::new(py, [s[0], s[1]])
}

#[pymethods]
impl PySpans {
    fn __len__(&self) -> usize {
        self.spans.len()
    }

    fn __getitem__<'py>(&self, py: Python<'py>, index: &Bound<'py, PyAny>) -> PyResult<Py<PyAny>> {
        if let Ok(slice) = index.cast::<PySlice>() {
            let ind = slice.indices(self.spans.len() as isize)?;
            let mut out = Vec::with_capacity(ind.slicelength);
            let mut i = ind.start;
            for _ in 0..ind.slicelength {
                out.push(pair(py, self.spans[i as usize])?);
                i += ind.step;
            }
            return Ok(PyList::new(py, out)?.into_any().unbind());
        }
        let i: isize = index.extract()?;
        let n = self.spans.len() as isize;
        let j = if i < 0 { i + n } else { i };
        if j < 0 || j >= n {
            return Err(PyIndexError::new_err("span index out of range"));
        }
        Ok(pair(py, self.spans[j as usize])?.into_any().unbind())
    }

    fn __repr__(&self) -> String {
        let head: Vec<String> = self
            .spans
            .iter()
            .take(8)
            .map(|s| format!("({}, {})", s[0], s[1]))
            .collect();
        let more = if self.spans.len() > 8 { ", ..." } else { "" };
        format!(
            "Spans([{}{more}], len={})",
            head.join(", "),
            self.spans.len()
        )
    }

    /// Equal to another `Spans` or to any sequence of the same `(start, end)` pairs.
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        if let Ok(o) = other.cast::<PySpans>() {
            return o.get().spans == self.spans;
        }
        match other.extract::<Vec<(u32, u32)>>() {
            Ok(v) => {
                v.len() == self.spans.len()
                    && v.iter()
                        .zip(&self.spans)
                        .all(|(a, b)| a.0 == b[0] && a.1 == b[1])
            }
            Err(_) => false,
        }
    }

    /// The spans as a list of `(start, end)` tuples.
    fn tolist<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let items = self
            .spans
            .iter()
            .map(|&s| pair(py, s))
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, items)
    }

    /// The start of each span.
    fn starts(&self) -> Vec<u32> {
        self.spans.iter().map(|s| s[0]).collect()
    }

    /// The end of each span.
    fn ends(&self) -> Vec<u32> {
        self.spans.iter().map(|s| s[1]).collect()
    }
}

/// `(ids, spans)`; `unit` is "char" or "byte".
#[pyfunction]
#[pyo3(signature = (core, text, unit, allowed_special=None, disallowed_special=None))]
fn encode_with_spans<'py>(
    py: Python<'py>,
    core: &PyCoreBpe,
    text: Text,
    unit: &str,
    allowed_special: Option<Vec<PyBackedStr>>,
    disallowed_special: Option<Vec<PyBackedStr>>,
) -> PyResult<(Bound<'py, PyList>, PySpans)> {
    let unit = match unit {
        "char" => Unit::Char,
        "byte" => Unit::Byte,
        other => {
            return Err(PyValueError::new_err(format!(
                "unit must be 'char' or 'byte', not {other:?}"
            )))
        }
    };
    if text.len() > u32::MAX as usize {
        return Err(PyValueError::new_err(
            "text too long for offsets (at most 4 GiB of UTF-8)",
        ));
    }
    let policy = core.policy(allowed_special, disallowed_special);
    let (ids, spans) = py
        .detach(|| core.inner.encode_with_spans(&text, &policy, unit))
        .map_err(to_py)?;
    Ok((core.to_list(py, &ids)?, PySpans { spans }))
}

/// Characters of the first head [`count_until`] reads: at least this many,
/// or 8 per token of the limit (English takes about 4 per token).
const HEAD_MIN_CHARS: usize = 4096;

/// The token count, but at most `limit + 1`.
///
/// Reads the text from its head: the first `max(4096, 8 * (limit + 1))`
/// characters, then 4 times as many each round, each head sliced from the
/// `str` and converted alone, until the head proves the text over the limit
/// ([`crate::core_bpe::CoreBpe::count_head_over`]) or is the whole text. So a
/// limit that binds early costs what the tokens up to it cost, whatever the
/// text's length (text without safe cuts, such as a custom pattern's, is read
/// whole). A disallowed special token after the part read is not looked for.
#[pyfunction]
#[pyo3(signature = (core, text, limit, allowed_special=None, disallowed_special=None))]
fn count_until(
    py: Python<'_>,
    core: &PyCoreBpe,
    text: &Bound<'_, PyString>,
    limit: usize,
    allowed_special: Option<Vec<PyBackedStr>>,
    disallowed_special: Option<Vec<PyBackedStr>>,
) -> PyResult<usize> {
    let policy = core.policy(allowed_special, disallowed_special);
    let chars = text.len()?;
    let mut k = limit
        .saturating_add(1)
        .saturating_mul(8)
        .max(HEAD_MIN_CHARS);
    while k < chars {
        let head: Text = text
            .get_item(PySlice::new(py, 0, k as isize, 1))?
            .extract()?;
        if py
            .detach(|| core.inner.count_head_over(&head, &policy, limit))
            .map_err(to_py)?
        {
            return Ok(limit + 1);
        }
        k = k.saturating_mul(4);
    }
    let text: Text = text.extract()?;
    py.detach(|| core.inner.count_until(&text, &policy, limit))
        .map_err(to_py)
}

/// Where to cut, as a number of characters: the length of the longest fitting
/// prefix (`from_start`) or of the longest fitting suffix.
#[pyfunction]
#[pyo3(signature = (core, text, max_tokens, from_start, allowed_special=None, disallowed_special=None))]
fn truncate_at(
    py: Python<'_>,
    core: &PyCoreBpe,
    text: Text,
    max_tokens: usize,
    from_start: bool,
    allowed_special: Option<Vec<PyBackedStr>>,
    disallowed_special: Option<Vec<PyBackedStr>>,
) -> PyResult<usize> {
    let policy = core.policy(allowed_special, disallowed_special);
    py.detach(|| {
        let t: &str = &text;
        if from_start {
            let k = core.inner.truncate_prefix(t, &policy, max_tokens)?;
            Ok(t.get(..k).map_or(0, |s| s.chars().count()))
        } else {
            let k = core.inner.truncate_suffix(t, &policy, max_tokens)?;
            Ok(t.get(k..).map_or(0, |s| s.chars().count()))
        }
    })
    .map_err(to_py)
}

/// [`truncate_at`] on the bytes `lo..hi` of the text, for callers that walk
/// one long text (chunking) without slicing it in Python: `(cut, chars)`
/// where `cut` is the byte offset of the cut (the end of the kept prefix, or
/// the start of the kept suffix) and `chars` the kept part's length in
/// characters. `lo` must be a char boundary; `hi` is clamped to the text and
/// moved back to one.
///
/// The text is taken as CPython's own UTF-8 form of the `str`, which CPython
/// builds on the first call and keeps with the string: a walk makes one call
/// per chunk on the same text, and each call then costs only the part it
/// reads. (A [`Text`] converted here is dropped after each call, so every
/// call would convert the whole text again: quadratic over a walk.)
#[pyfunction]
#[pyo3(signature = (core, text, lo, hi, max_tokens, from_start, allowed_special=None, disallowed_special=None))]
#[allow(clippy::too_many_arguments)]
fn truncate_span(
    py: Python<'_>,
    core: &PyCoreBpe,
    text: PyBackedStr,
    lo: usize,
    hi: usize,
    max_tokens: usize,
    from_start: bool,
    allowed_special: Option<Vec<PyBackedStr>>,
    disallowed_special: Option<Vec<PyBackedStr>>,
) -> PyResult<(usize, usize)> {
    let t: &str = &text;
    let mut hi = hi.min(t.len());
    while hi > lo && !t.is_char_boundary(hi) {
        hi -= 1;
    }
    let Some(part) = t.get(lo..hi) else {
        return Err(PyValueError::new_err(format!(
            "bytes {lo}..{hi} are not a span of whole characters of the text ({} bytes)",
            t.len()
        )));
    };
    let policy = core.policy(allowed_special, disallowed_special);
    py.detach(|| {
        if from_start {
            let k = core.inner.truncate_prefix(part, &policy, max_tokens)?;
            Ok((lo + k, part.get(..k).map_or(0, |s| s.chars().count())))
        } else {
            let k = core.inner.truncate_suffix(part, &policy, max_tokens)?;
            Ok((lo + k, part.get(k..).map_or(0, |s| s.chars().count())))
        }
    })
    .map_err(to_py)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(truncate_span, m)?)?;
    m.add_class::<PySpans>()?;
    m.add_function(wrap_pyfunction!(encode_with_spans, m)?)?;
    m.add_function(wrap_pyfunction!(count_until, m)?)?;
    m.add_function(wrap_pyfunction!(truncate_at, m)?)?;
    Ok(())
}
