//! Bindings for the pre-tokenizers (used by tests, benchmarks and `bytepair.inspect`).

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use regex_syntax::hir::{Class, ClassUnicode, ClassUnicodeRange, HirKind};

use super::errors::to_py;
use crate::pretok::{Pretokenizer, CL100K_PATTERN, GPT2_PATTERN, O200K_PATTERN, SPELLINGS};

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

/// Which path splits text with `pattern`: `scanner:<family>` for a pattern
/// with a hand-written scanner, `regex` for any other (fancy-regex), `whole`
/// for `None`.
#[pyfunction]
#[pyo3(signature = (pattern))]
fn pretokenizer_path(pattern: Option<&str>) -> PyResult<&'static str> {
    Ok(Pretokenizer::new(pattern).map_err(to_py)?.path())
}

/// Private (tests): the spans of a named pattern by the scalar scanner alone,
/// the reference of the block pre-tokenizer that `pretokenize_spans` may use.
#[pyfunction]
#[pyo3(signature = (pattern, text))]
fn _pretokenize_spans_scalar(
    py: Python<'_>,
    pattern: &str,
    text: &str,
) -> PyResult<Vec<(usize, usize)>> {
    let p = Pretokenizer::new(Some(pattern)).map_err(to_py)?;
    let Some(sc) = p.scanner() else {
        return Err(PyValueError::new_err(format!(
            "{pattern:?} is not a pattern with a scanner (gpt2, cl100k, o200k or a FAST_PATTERNS value)"
        )));
    };
    Ok(py.detach(|| {
        let mut out = Vec::new();
        sc.for_each_span_scalar(text, |s, e| out.push((s, e)));
        out
    }))
}

/// The code-point ranges `(first, last)` of one character class as `regex-syntax`
/// reads it (the crate behind the custom-pattern engine and the scanners' tables:
/// Unicode 16.0), e.g. `\p{L}`, `\s` or `(?i:k)`. Private: `scripts/gen-unicode16.py`
/// and the tests use it to pin `bytepair.reference` to the core's Unicode version.
#[pyfunction]
fn _unicode_class(expr: &str) -> PyResult<Vec<(u32, u32)>> {
    let hir = regex_syntax::Parser::new()
        .parse(expr)
        .map_err(|e| PyValueError::new_err(format!("{expr:?} does not parse: {e}")))?;
    match hir.kind() {
        HirKind::Class(Class::Unicode(c)) => Ok(c
            .ranges()
            .iter()
            .map(|r| (r.start() as u32, r.end() as u32))
            .collect()),
        HirKind::Literal(lit) => {
            match std::str::from_utf8(&lit.0).map(|s| s.chars().collect::<Vec<_>>()) {
                Ok(chars) if chars.len() == 1 => Ok(vec![(chars[0] as u32, chars[0] as u32)]),
                _ => Err(PyValueError::new_err(format!(
                    "{expr:?} is not one character"
                ))),
            }
        }
        _ => Err(PyValueError::new_err(format!(
            "{expr:?} is not a character class"
        ))),
    }
}

/// Simple case folding as `regex-syntax` applies it under `(?i)`: every code point
/// that matches more than itself case-insensitively, with all the code points it
/// matches (itself included), in code-point order.
#[pyfunction]
fn _unicode_case_folds() -> Vec<(u32, Vec<u32>)> {
    let mut out = Vec::new();
    for ch in (0..=0x10FFFFu32).filter_map(char::from_u32) {
        let mut class = ClassUnicode::new([ClassUnicodeRange::new(ch, ch)]);
        class.case_fold_simple();
        let members: Vec<u32> = class
            .ranges()
            .iter()
            .flat_map(|r| r.start() as u32..=r.end() as u32)
            .collect();
        if members.len() > 1 {
            out.push((ch as u32, members));
        }
    }
    out
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(pretokenize, m)?)?;
    m.add_function(wrap_pyfunction!(pretokenize_spans, m)?)?;
    m.add_function(wrap_pyfunction!(pretokenize_count, m)?)?;
    m.add_function(wrap_pyfunction!(_pretokenize_spans_scalar, m)?)?;
    m.add_function(wrap_pyfunction!(pretokenizer_path, m)?)?;
    m.add_function(wrap_pyfunction!(_unicode_class, m)?)?;
    m.add_function(wrap_pyfunction!(_unicode_case_folds, m)?)?;
    // The named patterns are defined once, in `crate::pretok`; `bytepair.patterns` reads them here.
    let named = pyo3::types::PyDict::new(m.py());
    named.set_item("gpt2", GPT2_PATTERN)?;
    named.set_item("cl100k", CL100K_PATTERN)?;
    named.set_item("o200k", O200K_PATTERN)?;
    m.add("NAMED_PATTERNS", named)?;
    // Every pattern string with a scanner, by a short name (tiktoken's three too).
    let fast = pyo3::types::PyDict::new(m.py());
    for (pattern, _, name) in SPELLINGS {
        fast.set_item(name, pattern)?;
    }
    m.add("FAST_PATTERNS", fast)?;
    m.add("SUPERWORD_PATTERN", crate::pretok::SUPERWORD_PATTERN)?;
    Ok(())
}
