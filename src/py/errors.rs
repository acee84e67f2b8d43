//! The one place where core errors become Python exceptions. The exception
//! classes live in `bytepair.errors` (they subclass ValueError / KeyError) and are
//! looked up at conversion time so Python code can catch them by name.

use pyo3::exceptions::{PyKeyError, PyKeyboardInterrupt, PyValueError};
use pyo3::prelude::*;

use crate::error::Error;

pub(crate) fn register(_m: &Bound<'_, PyModule>) -> PyResult<()> {
    Ok(())
}

fn exception(py: Python<'_>, class: &str, msg: String) -> PyErr {
    match py.import("bytepair.errors").and_then(|m| m.getattr(class)) {
        Ok(cls) => PyErr::from_value(
            cls.call1((msg,))
                .unwrap_or_else(|e| e.into_value(py).into_bound(py).into_any()),
        ),
        Err(_) => PyValueError::new_err(msg),
    }
}

/// Converts a core error into the matching `bytepair.errors` exception.
pub(crate) fn to_py(e: Error) -> PyErr {
    Python::attach(|py| {
        let msg = e.to_string();
        match e {
            Error::InvalidPattern { .. } => exception(py, "PatternError", msg),
            Error::RegexRuntime(_) => exception(py, "PatternError", msg),
            Error::InvalidVocab(_) => exception(py, "VocabError", msg),
            Error::DisallowedSpecial { .. } => exception(py, "DisallowedSpecialError", msg),
            Error::UnknownId(id) => {
                let err = exception(py, "UnknownTokenError", msg);
                if err.is_instance_of::<PyKeyError>(py) {
                    err
                } else {
                    PyKeyError::new_err(id)
                }
            }
            Error::InvalidTraining(_) => exception(py, "TrainingError", msg),
            Error::Interrupted => PyKeyboardInterrupt::new_err(msg),
        }
    })
}
