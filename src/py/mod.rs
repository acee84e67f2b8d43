//! PyO3 bindings: the `bytepair._core` extension module. Every #[pyclass] and
//! #[pyfunction] lives under this folder; the core itself never imports pyo3.

use pyo3::prelude::*;

mod array;
mod budget;
mod dataset;
mod encoding;
mod errors;
mod grow;
mod ints;
mod pipeline;
mod pretok;
mod text;
mod trainer;

#[pymodule]
#[pyo3(name = "_core")]
fn core_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // whether a non-ASCII str is converted to UTF-8 by bytepair (py/text.rs)
    m.add("_utf8_vector", crate::utf8::vector_available())?;
    // the most threads a call runs on (more are clamped; src/parallel.rs)
    m.add("MAX_THREADS", crate::parallel::max_threads())?;
    pretok::register(m)?;
    encoding::register(m)?;
    dataset::register(m)?;
    budget::register(m)?;
    trainer::register(m)?;
    grow::register(m)?;
    pipeline::register(m)?;
    Ok(())
}
