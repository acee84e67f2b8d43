//! The one place where core errors become Python exceptions. Each
//! [`Error`] variant maps to one class of `bytepair.errors` (they subclass
//! ValueError / KeyError), looked up at conversion time so Python code can
//! catch them by name; the variant's fields become attributes of the
//! exception (`e.rank`, `e.path`, ...), so Python never parses a message.
//!
//! | variant             | class                    | attributes              |
//! |---------------------|--------------------------|-------------------------|
//! | `InvalidPattern`    | `PatternError`           | `pattern`, `reason`     |
//! | `RegexRuntime`      | `PatternError`           | `pattern`, `reason`     |
//! | `InvalidVocab`      | `VocabError`             | `rank`, `reason`        |
//! | `DisallowedSpecial` | `DisallowedSpecialError` | `token`                 |
//! | `UnknownId`         | `UnknownTokenError`      | `id`                    |
//! | `Threads`           | `ThreadsError`           | `threads`, `reason`     |
//! | `Io`                | `ReadError`              | `path`, `reason`        |
//! | `NotUtf8`           | `ReadError`              | `path`, `offset`        |
//! | `CorruptCounts`     | `CorruptCountsError`     | `what`                  |
//! | `InvalidTraining`   | `TrainingError`          | `reason`                |
//! | `MemoryLimit`       | `TrainingError`          | `argument`, `need`, `limit` |
//! | `InvalidFile`       | `FormatError`            | `where`, `reason`       |
//! | `Interrupted`       | `KeyboardInterrupt`      |                         |

use pyo3::exceptions::{PyKeyError, PyKeyboardInterrupt, PyValueError};
use pyo3::prelude::*;
use pyo3::IntoPyObjectExt;

use crate::error::Error;

/// An attribute name and its value, converted on the way in.
type Attr<'py> = (&'static str, Bound<'py, PyAny>);

fn attr<'py>(py: Python<'py>, name: &'static str, value: impl IntoPyObjectExt<'py>) -> Attr<'py> {
    let value = value
        .into_bound_py_any(py)
        .unwrap_or_else(|_| py.None().into_bound(py));
    (name, value)
}

/// `bytepair.errors.<class>(msg)` with `attrs` set, or `fallback(msg)` when
/// the class cannot be found or built.
fn exception(
    py: Python<'_>,
    class: &str,
    msg: String,
    attrs: Vec<Attr<'_>>,
    fallback: impl FnOnce(String) -> PyErr,
) -> PyErr {
    let built = py
        .import("bytepair.errors")
        .and_then(|m| m.getattr(class))
        .and_then(|cls| cls.call1((msg.clone(),)));
    match built {
        Ok(value) => {
            for (name, v) in attrs {
                // plain exception classes accept any attribute
                let _ = value.setattr(name, v);
            }
            PyErr::from_value(value)
        }
        Err(_) => fallback(msg),
    }
}

fn value_error(msg: String) -> PyErr {
    PyValueError::new_err(msg)
}

/// Converts a core error into the matching `bytepair.errors` exception.
pub(crate) fn to_py(e: Error) -> PyErr {
    Python::attach(|py| {
        let msg = e.to_string();
        let (class, attrs) = match e {
            Error::InvalidPattern { pattern, reason } => (
                "PatternError",
                vec![attr(py, "pattern", pattern), attr(py, "reason", reason)],
            ),
            Error::RegexRuntime { pattern, reason } => (
                "PatternError",
                vec![attr(py, "pattern", pattern), attr(py, "reason", reason)],
            ),
            Error::InvalidVocab { rank, reason } => (
                "VocabError",
                vec![attr(py, "rank", rank), attr(py, "reason", reason)],
            ),
            Error::DisallowedSpecial { token } => {
                ("DisallowedSpecialError", vec![attr(py, "token", token)])
            }
            Error::UnknownId { id } => {
                let attrs = vec![attr(py, "id", id)];
                let key_error = |_: String| PyKeyError::new_err(id);
                return exception(py, "UnknownTokenError", msg, attrs, key_error);
            }
            Error::Threads { threads, reason } => (
                "ThreadsError",
                vec![attr(py, "threads", threads), attr(py, "reason", reason)],
            ),
            Error::Io { path, source } => (
                "ReadError",
                vec![
                    attr(py, "path", path),
                    attr(py, "reason", source.to_string()),
                ],
            ),
            Error::NotUtf8 { path, offset } => (
                "ReadError",
                vec![attr(py, "path", path), attr(py, "offset", offset)],
            ),
            Error::CorruptCounts { what } => ("CorruptCountsError", vec![attr(py, "what", what)]),
            Error::InvalidTraining { reason } => {
                ("TrainingError", vec![attr(py, "reason", reason)])
            }
            Error::MemoryLimit { need, limit, .. } => (
                "TrainingError",
                vec![
                    attr(py, "argument", "memory_limit"),
                    attr(py, "need", need),
                    attr(py, "limit", limit),
                ],
            ),
            Error::InvalidFile { location, reason } => (
                "FormatError",
                vec![attr(py, "where", location), attr(py, "reason", reason)],
            ),
            Error::Interrupted => return PyKeyboardInterrupt::new_err(msg),
        };
        exception(py, class, msg, attrs, value_error)
    })
}
