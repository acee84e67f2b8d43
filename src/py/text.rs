//! Text arguments: a Python `str` as the UTF-8 the encoder reads.
//!
//! PyO3's `PyBackedStr` asks CPython for the string's UTF-8 form, which
//! CPython builds one character at a time on first use and keeps with the
//! string. [`Text`] takes that path when it costs nothing (an ASCII string,
//! whose characters are its UTF-8, or a string whose UTF-8 form is already
//! kept) and otherwise converts the string's code units itself
//! ([`crate::utf8`]: about 6 times faster on Korean) into a buffer of its
//! own that lives as long as the call. The form is not kept with the string:
//! encoding the same non-ASCII `str` object again converts it again (that
//! costs 0.1-0.2 ms per MB; CPython's first conversion costs 0.5-1.6).
//!
//! Each thread keeps its largest buffer up to [`SPARE_MAX`] bytes for the
//! next call: a fresh one would be page-faulted in on every call (about as
//! costly as the conversion itself).
//!
//! The layout read here is CPython's, as PyO3 describes it; on other
//! interpreters, the limited API, free-threaded builds and Python 3.14 and
//! later (where PyO3 does not expose these fields), every string takes
//! PyO3's path.

use std::cell::RefCell;
use std::ops::Deref;

use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::PyString;

use crate::utf8::{Units, Utf8};

/// A `str` argument as UTF-8: borrowed from the string, or converted here.
pub(crate) enum Text {
    Python(PyBackedStr),
    Converted(Utf8),
}

/// The most bytes of conversion buffer a thread keeps between calls.
pub(crate) const SPARE_MAX: usize = 64 << 20;

thread_local! {
    static SPARE: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

impl Drop for Text {
    fn drop(&mut self) {
        if let Text::Converted(u) = self {
            let buf = std::mem::replace(u, Utf8::empty()).into_buffer();
            if buf.len() <= SPARE_MAX {
                // keep the larger of this buffer and the one kept (a batch
                // converts several texts at once; only one buffer is kept)
                let _ = SPARE.try_with(|s| {
                    if let Ok(mut s) = s.try_borrow_mut() {
                        if buf.len() > s.len() {
                            *s = buf;
                        }
                    }
                });
            }
        }
    }
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
        if let Some(t) = convert(&s) {
            return Ok(Text::Converted(t));
        }
        Ok(Text::Python(PyBackedStr::try_from(s.to_owned())?))
    }
}

/// The UTF-8 form of `s` made here, or `None` where CPython's path is as
/// cheap (ASCII, or a form already kept) or the string has a lone surrogate
/// (CPython's conversion then raises `UnicodeEncodeError`, as ever).
#[cfg(not(any(Py_LIMITED_API, PyPy, GraalPy, Py_GIL_DISABLED, Py_3_14)))]
#[allow(unsafe_code)] // reads the string's header and code units, see the SAFETY comments
fn convert(s: &Borrowed<'_, '_, PyString>) -> Option<Utf8> {
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
    if cheap {
        return None;
    }
    // SAFETY: the code units are read only inside this function, while the
    // string is alive and cannot change (a `str` is immutable once shared).
    let owned = s.to_owned();
    let units = match unsafe { owned.data() }.ok()? {
        PyStringData::Ucs1(b) => Units::Latin1(b),
        PyStringData::Ucs2(u) => Units::Ucs2(u),
        PyStringData::Ucs4(u) => Units::Ucs4(u),
    };
    let spare = SPARE
        .try_with(|s| {
            s.try_borrow_mut()
                .map(|mut s| std::mem::take(&mut *s))
                .unwrap_or_default()
        })
        .unwrap_or_default();
    match crate::utf8::convert(units, spare) {
        Ok(u) => Some(u),
        Err(buf) => {
            // a lone surrogate: CPython's conversion raises; keep the buffer
            let _ = SPARE.try_with(|s| s.try_borrow_mut().map(|mut s| *s = buf));
            None
        }
    }
}

#[cfg(any(Py_LIMITED_API, PyPy, GraalPy, Py_GIL_DISABLED, Py_3_14))]
fn convert(_s: &Borrowed<'_, '_, PyString>) -> Option<Utf8> {
    None
}
