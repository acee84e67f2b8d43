//! Text arguments: a Python `str` as the UTF-8 the encoder reads.
//!
//! PyO3's `PyBackedStr` asks CPython for the string's UTF-8 form, which
//! CPython builds one character at a time on first use and keeps with the
//! string. [`Text`] takes that path when it costs nothing (an ASCII string,
//! whose characters are its UTF-8, or a string whose UTF-8 form CPython
//! already keeps) and otherwise, where the CPU has the vector path (AVX-512
//! VBMI2), converts the string's code units itself ([`crate::utf8`]: 3-10
//! times faster) into a buffer of its own, dropped after the call. Without
//! it CPython converts: the scalar loops are no faster than CPython's.
//!
//! The layout read here is CPython's, as PyO3 describes it; on other
//! interpreters, the limited API, free-threaded builds and Python 3.14 and
//! later (where PyO3 does not expose these fields), every string takes
//! PyO3's path.

use std::ops::Deref;

use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::PyString;

use crate::utf8::Utf8;

/// A `str` argument as UTF-8: borrowed from the string, or converted here.
pub(crate) enum Text {
    Python(PyBackedStr),
    Converted(Utf8),
}

impl Deref for Text {
    type Target = str;

    fn deref(&self) -> &str {
        match self {
            Text::Python(s) => s,
            Text::Converted(u) => u.as_str(),
        }
    }
}

impl AsRef<str> for Text {
    fn as_ref(&self) -> &str {
        self
    }
}

impl FromPyObject<'_, '_> for Text {
    type Error = PyErr;

    fn extract(obj: Borrowed<'_, '_, PyAny>) -> PyResult<Self> {
        let s = obj.cast::<PyString>()?;
        if let Some(u) = convert(&s) {
            return Ok(Text::Converted(u));
        }
        Ok(Text::Python(PyBackedStr::try_from(s.to_owned())?))
    }
}

/// The UTF-8 form of `s` made here, or `None` where CPython's path
/// is as cheap (ASCII, or a form CPython already keeps) or the string has a
/// lone surrogate (CPython's conversion then raises `UnicodeEncodeError`, as
/// ever).
#[cfg(not(any(Py_LIMITED_API, PyPy, GraalPy, Py_GIL_DISABLED, Py_3_14)))]
#[allow(unsafe_code)] // reads the string's header and code units, see the SAFETY comments
fn convert(s: &Borrowed<'_, '_, PyString>) -> Option<Utf8> {
    use crate::utf8::Units;
    use pyo3::ffi;
    use pyo3::types::{PyStringData, PyStringMethods};

    let p = s.as_ptr();
    // SAFETY: `p` is a live `str` object (borrowed for this call, the
    // interpreter attached). A compact non-ASCII string's header is a
    // PyCompactUnicodeObject, whose `utf8` field is its kept UTF-8 form or
    // null; an ASCII one (a shorter PyASCIIObject) is excluded before that
    // field is read. Strings that are not compact (legacy ones, made by
    // deprecated C APIs) are left to CPython.
    let cheap = unsafe {
        ffi::PyUnicode_IS_COMPACT(p) == 0
            || ffi::PyUnicode_IS_ASCII(p) != 0
            || !(*p.cast::<ffi::PyCompactUnicodeObject>()).utf8.is_null()
    };
    // without the vector path bytepair's loops are no faster than CPython's
    if cheap || !crate::utf8::vector_available() {
        return None;
    }
    // SAFETY: the code units are read only inside this function, while the
    // string is alive and cannot change (a `str` is immutable once shared).
    let units = match unsafe { s.data() } {
        Ok(PyStringData::Ucs1(b)) => Units::Latin1(b),
        Ok(PyStringData::Ucs2(u)) => Units::Ucs2(u),
        Ok(PyStringData::Ucs4(u)) => Units::Ucs4(u),
        Err(_) => return None,
    };
    // Err: a lone surrogate, for which CPython's conversion raises
    crate::utf8::convert(units, Vec::new()).ok()
}

#[cfg(any(Py_LIMITED_API, PyPy, GraalPy, Py_GIL_DISABLED, Py_3_14))]
fn convert(_s: &Borrowed<'_, '_, PyString>) -> Option<Utf8> {
    None
}
