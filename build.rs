//! Under the `python` feature: PyO3's configuration flags (`Py_3_14`, `PyPy`,
//! `Py_LIMITED_API`, `Py_GIL_DISABLED`, ...) for this crate too, so that
//! `src/py/text.rs` reads CPython's string layout only on the interpreters
//! where PyO3 describes it, and falls back to PyO3's own conversion elsewhere.
fn main() {
    #[cfg(feature = "python")]
    pyo3_build_config::use_pyo3_cfgs();
}
