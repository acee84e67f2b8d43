//! Text arguments: a Python `str` as the UTF-8 the encoder reads.
//!
//! PyO3's `PyBackedStr` asks CPython for the string's UTF-8 form, which
//! CPython builds one character at a time on first use and keeps with the
//! string. [`Text`] takes that path when it costs nothing (an ASCII string,
//! whose characters are its UTF-8, or a string whose UTF-8 form CPython
//! already keeps) and otherwise, where the CPU has the vector path (AVX-512
//! VBMI2), converts the string's code units itself ([`crate::utf8`]: 3-10
//! times faster) into a buffer of its own. Without it CPython converts, as
//! before: the scalar loops are no faster than CPython's.
//!
//! Each thread keeps, between calls, the last string it converted (a
//! reference to it) with its UTF-8 form, when that form is at most
//! [`KEEP_MAX`] bytes: the same `str` object passed again (`count` then
//! `encode`, or a benchmark's repeated text) is recognised by its address,
//! which cannot be reused while the reference holds it, and its form is
//! reused; and the buffer is written over by the next conversion instead of
//! a fresh one being page-faulted in on every call. So a thread holds on to
//! at most one string and `KEEP_MAX` bytes until its next conversion.
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

use crate::utf8::Utf8;

/// A `str` argument as UTF-8: borrowed from the string, or converted here
/// (with the string it came from, kept on drop; see the module doc).
pub(crate) enum Text {
    Python(PyBackedStr),
    Converted(Kept),
}

/// A string and its UTF-8 form made here (`src` is `None` for a buffer
/// that holds no string's form).
#[derive(Default)]
pub(crate) struct Kept {
    src: Option<Py<PyString>>,
    utf8: Utf8,
}

/// The largest UTF-8 form (buffer bytes) a thread keeps between calls.
pub(crate) const KEEP_MAX: usize = 32 << 20;

thread_local! {
    static KEPT: RefCell<Option<Kept>> = const { RefCell::new(None) };
}

/// Takes this thread's kept string and buffer, if any.
fn take_kept() -> Option<Kept> {
    KEPT.try_with(|k| k.try_borrow_mut().ok().and_then(|mut k| k.take()))
        .ok()
        .flatten()
}

/// Keeps `kept` for this thread's next call (in place of what it kept), if
/// its buffer is small enough.
fn keep(kept: Kept) {
    if kept.utf8.buffer_len() <= KEEP_MAX {
        let _ = KEPT.try_with(|k| k.try_borrow_mut().map(|mut k| *k = Some(kept)));
    }
}

impl Drop for Text {
    fn drop(&mut self) {
        if let Text::Converted(k) = self {
            keep(std::mem::take(k));
        }
    }
}

impl Deref for Text {
    type Target = str;

    fn deref(&self) -> &str {
        match self {
            Text::Python(s) => s,
            Text::Converted(k) => k.utf8.as_str(),
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
        if let Some(k) = convert(&s) {
            return Ok(Text::Converted(k));
        }
        Ok(Text::Python(PyBackedStr::try_from(s.to_owned())?))
    }
}

/// The UTF-8 form of `s` made (or kept) here, or `None` where CPython's path
/// is as cheap (ASCII, or a form CPython already keeps) or the string has a
/// lone surrogate (CPython's conversion then raises `UnicodeEncodeError`, as
/// ever).
#[cfg(not(any(Py_LIMITED_API, PyPy, GraalPy, Py_GIL_DISABLED, Py_3_14)))]
#[allow(unsafe_code)] // reads the string's header and code units, see the SAFETY comments
fn convert(s: &Borrowed<'_, '_, PyString>) -> Option<Kept> {
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
    let kept = take_kept();
    let buf = match kept {
        // the same object as last time: alive since then (the reference held
        // it), so unchanged (a str is immutable), and its form is the one kept
        Some(Kept {
            src: Some(src),
            utf8,
        }) if src.as_ptr() == p => {
            return Some(Kept {
                src: Some(src),
                utf8,
            })
        }
        Some(k) => k.utf8.into_buffer(),
        None => Vec::new(),
    };
    let owned: Bound<'_, PyString> = Borrowed::to_owned(*s);
    // SAFETY: the code units are read only inside this function, while the
    // string is alive and cannot change (a `str` is immutable once shared).
    let units = match unsafe { owned.data() } {
        Ok(PyStringData::Ucs1(b)) => Units::Latin1(b),
        Ok(PyStringData::Ucs2(u)) => Units::Ucs2(u),
        Ok(PyStringData::Ucs4(u)) => Units::Ucs4(u),
        Err(_) => return None,
    };
    match crate::utf8::convert(units, buf) {
        Ok(utf8) => Some(Kept {
            src: Some(owned.unbind()),
            utf8,
        }),
        Err(buf) => {
            // a lone surrogate: CPython's conversion raises; keep the buffer
            keep(Kept {
                src: None,
                utf8: Utf8::unused(buf),
            });
            None
        }
    }
}

#[cfg(any(Py_LIMITED_API, PyPy, GraalPy, Py_GIL_DISABLED, Py_3_14))]
fn convert(_s: &Borrowed<'_, '_, PyString>) -> Option<Kept> {
    None
}
