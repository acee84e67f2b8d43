//! Bindings for the encoder/decoder: `_core.CoreBPE`.

use std::borrow::Cow;
use std::collections::HashMap;

use numpy::PyArray1;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedStr;
use pyo3::types::{PyBytes, PyList};

use super::array;
use super::errors::to_py;
use super::ints::IntTable;
use super::text::Text;
use crate::core_bpe::batch::batch_threads;
use crate::core_bpe::{CoreBpe, SpecialPolicy};
use crate::parallel::{map_par, map_streaming};
use crate::vocab::{spell_merges, Vocab};
use crate::Rank;

/// The Rust encoder behind `bytepair.Tokenizer`.
#[pyclass(name = "CoreBPE", module = "bytepair._core", frozen)]
pub(crate) struct PyCoreBpe {
    pub(super) inner: CoreBpe,
    /// One Python int per id, built on first use: turning ids into a list is then
    /// a reference-count bump per id instead of an int allocation (measured: list
    /// building drops from ~15 ns to ~3 ns per id).
    ints: IntTable,
    /// tiktoken's default policy (every special token disallowed), built once:
    /// the common `encode(text)` call then allocates nothing for it.
    default_policy: SpecialPolicy,
}

fn specials_sorted(special_tokens: HashMap<String, Rank>) -> Vec<(String, Rank)> {
    let mut specials: Vec<(String, Rank)> = special_tokens.into_iter().collect();
    specials.sort_by(|(a, r), (b, q)| r.cmp(q).then_with(|| a.cmp(b)));
    specials
}

impl PyCoreBpe {
    fn wrap(inner: CoreBpe) -> Self {
        PyCoreBpe {
            default_policy: inner.policy_default(),
            inner,
            ints: IntTable::default(),
        }
    }

    pub(super) fn policy(
        &self,
        allowed: Option<Vec<PyBackedStr>>,
        disallowed: Option<Vec<PyBackedStr>>,
    ) -> Cow<'_, SpecialPolicy> {
        match (allowed, disallowed) {
            (None, None) => Cow::Borrowed(&self.default_policy),
            (a, d) => {
                let a = a.unwrap_or_default();
                let d = d.unwrap_or_default();
                let a: Vec<&str> = a.iter().map(|s| &**s).collect();
                let d: Vec<&str> = d.iter().map(|s| &**s).collect();
                Cow::Owned(self.inner.policy(&a, &d))
            }
        }
    }

    pub(super) fn to_list<'py>(
        &self,
        py: Python<'py>,
        ids: &[Rank],
    ) -> PyResult<Bound<'py, PyList>> {
        // the mergeable ids (dense); special ids, which may sit far past
        // them, are made when met
        self.ints.list(py, self.inner.vocab().len(), ids)
    }
}

#[pymethods]
impl PyCoreBpe {
    /// `tokens`: bytes by rank, `b""` at a gap; `empty_ranks`: the ranks of
    /// `b""` entries that hold the empty token instead (see `Vocab::with_empty`).
    #[new]
    #[pyo3(signature = (tokens, special_tokens, pattern, empty_ranks = Vec::new()))]
    fn py_new(
        tokens: Vec<Vec<u8>>,
        special_tokens: HashMap<String, Rank>,
        pattern: Option<&str>,
        empty_ranks: Vec<Rank>,
    ) -> PyResult<Self> {
        let inner = Vocab::with_empty(tokens, &empty_ranks)
            .and_then(|v| CoreBpe::from_vocab(v, specials_sorted(special_tokens), pattern))
            .map_err(to_py)?;
        Ok(Self::wrap(inner))
    }

    /// Builds an encoder from an ordered merge list: the 256 byte tokens,
    /// then merge `k` as token `256 + k` (the trainer's output).
    #[staticmethod]
    #[pyo3(signature = (merges, special_tokens, pattern))]
    fn from_merges(
        py: Python<'_>,
        merges: Vec<(Rank, Rank)>,
        special_tokens: HashMap<String, Rank>,
        pattern: Option<&str>,
    ) -> PyResult<Self> {
        let specials = specials_sorted(special_tokens);
        let inner = py
            .detach(|| spell_merges(&merges).and_then(|t| CoreBpe::new(t, specials, pattern)))
            .map_err(to_py)?;
        Ok(Self::wrap(inner))
    }

    /// Builds an encoder straight from the bytes of a `.tiktoken` rank file.
    #[staticmethod]
    #[pyo3(signature = (data, special_tokens, pattern))]
    fn from_tiktoken(
        py: Python<'_>,
        data: &[u8],
        special_tokens: HashMap<String, Rank>,
        pattern: Option<&str>,
    ) -> PyResult<Self> {
        let specials = specials_sorted(special_tokens);
        let inner = py
            .detach(|| {
                Vocab::from_tiktoken(data).and_then(|v| CoreBpe::from_vocab(v, specials, pattern))
            })
            .map_err(to_py)?;
        Ok(Self::wrap(inner))
    }

    // ------------------------------------------------------------ Encoding

    /// `num_threads`: 1 (default) encodes on this thread; `k` or None (one
    /// per core) cuts a long text where the ids cannot change and encodes the
    /// parts in parallel (same ids).
    #[pyo3(name = "encode_ordinary", signature = (text, num_threads=1))]
    fn py_encode_ordinary<'py>(
        &self,
        py: Python<'py>,
        text: Text,
        num_threads: Option<usize>,
    ) -> PyResult<Bound<'py, PyList>> {
        let ids = py
            .detach(|| match num_threads {
                Some(1) => self.inner.encode_ordinary(&text),
                k => self
                    .inner
                    .encode_threads(&text, &self.inner.policy(&[] as &[&str], &[]), k),
            })
            .map_err(to_py)?;
        self.to_list(py, &ids)
    }

    /// `allowed_special` / `disallowed_special`: special-token names; both None
    /// means tiktoken's default (every special token disallowed).
    #[pyo3(name = "encode", signature = (text, allowed_special=None, disallowed_special=None, num_threads=1))]
    fn py_encode<'py>(
        &self,
        py: Python<'py>,
        text: Text,
        allowed_special: Option<Vec<PyBackedStr>>,
        disallowed_special: Option<Vec<PyBackedStr>>,
        num_threads: Option<usize>,
    ) -> PyResult<Bound<'py, PyList>> {
        let policy = self.policy(allowed_special, disallowed_special);
        let ids = py
            .detach(|| self.inner.encode_threads(&text, &policy, num_threads))
            .map_err(to_py)?;
        self.to_list(py, &ids)
    }

    /// The ids as a `numpy.uint32` array that owns them (no copy).
    #[pyo3(name = "encode_to_array", signature = (text, allowed_special=None, disallowed_special=None, num_threads=1))]
    fn py_encode_to_array<'py>(
        &self,
        py: Python<'py>,
        text: Text,
        allowed_special: Option<Vec<PyBackedStr>>,
        disallowed_special: Option<Vec<PyBackedStr>>,
        num_threads: Option<usize>,
    ) -> PyResult<Bound<'py, PyArray1<Rank>>> {
        let policy = self.policy(allowed_special, disallowed_special);
        let ids = py
            .detach(|| self.inner.encode_threads(&text, &policy, num_threads))
            .map_err(to_py)?;
        // the encoder's own buffer, handed over without a copy
        array::owned(py, ids)
    }

    #[pyo3(name = "count", signature = (text, allowed_special=None, disallowed_special=None))]
    fn py_count(
        &self,
        py: Python<'_>,
        text: Text,
        allowed_special: Option<Vec<PyBackedStr>>,
        disallowed_special: Option<Vec<PyBackedStr>>,
    ) -> PyResult<usize> {
        let policy = self.policy(allowed_special, disallowed_special);
        py.detach(|| self.inner.count(&text, &policy))
            .map_err(to_py)
    }

    #[pyo3(name = "encode_batch", signature = (texts, allowed_special=None, disallowed_special=None, num_threads=None))]
    fn py_encode_batch<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<Text>,
        allowed_special: Option<Vec<PyBackedStr>>,
        disallowed_special: Option<Vec<PyBackedStr>>,
        num_threads: Option<usize>,
    ) -> PyResult<Bound<'py, PyList>> {
        let policy = self.policy(allowed_special, disallowed_special);
        let k = batch_threads(&texts, num_threads).map_err(to_py)?;
        if k == 1 || texts.len() <= 1 {
            // nothing to overlap: encode everything with the GIL released
            // (other Python threads keep running), then build the lists
            let all = py
                .detach(|| self.inner.encode_batch(&texts, &policy, Some(1)))
                .map_err(to_py)?;
            let lists = all
                .iter()
                .map(|ids| self.to_list(py, ids))
                .collect::<PyResult<Vec<_>>>()?;
            return PyList::new(py, lists);
        }
        // Workers encode while this thread turns finished texts into lists
        // (which needs the GIL): the serial part overlaps the parallel one.
        // This thread holds the GIL only while building lists; when no
        // result is waiting it encodes the next text itself (GIL released).
        // one slot per text, filled in completion order; collecting them in
        // input order returns the first failing text's error, as before
        let mut lists: Vec<Option<PyResult<Bound<'py, PyList>>>> =
            (0..texts.len()).map(|_| None).collect();
        map_streaming(
            &texts,
            Some(k),
            |t| self.inner.encode(t, &policy),
            |i, r| lists[i] = Some(r.map_err(to_py).and_then(|ids| self.to_list(py, &ids))),
            // encode one text here, with the GIL released
            |job| py.detach(job),
            // block without the GIL for the workers' last results
            |rx| py.detach(|| rx.lock().unwrap_or_else(|e| e.into_inner()).recv().ok()),
        )
        .map_err(to_py)?;
        let lists = lists
            .into_iter()
            .map(|l| {
                l.unwrap_or_else(|| {
                    Err(PyValueError::new_err(
                        "internal error: a batch item is missing",
                    ))
                })
            })
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, lists)
    }

    /// All texts' ids concatenated (one `uint32` array) and the
    /// `len(texts) + 1` offsets into them (`int64`; text `i` is
    /// `ids[offsets[i]:offsets[i + 1]]`). Everything runs with the GIL
    /// released; the arrays reach numpy without a copy.
    #[pyo3(name = "encode_batch_to_arrays", signature = (texts, allowed_special=None, disallowed_special=None, num_threads=None))]
    fn py_encode_batch_to_arrays<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<Text>,
        allowed_special: Option<Vec<PyBackedStr>>,
        disallowed_special: Option<Vec<PyBackedStr>>,
        num_threads: Option<usize>,
    ) -> PyResult<array::IdsOffsets<'py>> {
        let policy = self.policy(allowed_special, disallowed_special);
        let (ids, offsets) = py
            .detach(|| {
                let flat = self.inner.encode_batch_flat(&texts, &policy, num_threads)?;
                let offsets: Vec<i64> = std::iter::once(0i64)
                    .chain(flat.ends.iter().map(|&e| e as i64))
                    .collect();
                Ok((flat.into_ids(num_threads)?, offsets))
            })
            .map_err(to_py)?;
        Ok((array::owned(py, ids)?, array::owned(py, offsets)?))
    }

    #[pyo3(name = "count_batch", signature = (texts, allowed_special=None, disallowed_special=None, num_threads=None))]
    fn py_count_batch(
        &self,
        py: Python<'_>,
        texts: Vec<Text>,
        allowed_special: Option<Vec<PyBackedStr>>,
        disallowed_special: Option<Vec<PyBackedStr>>,
        num_threads: Option<usize>,
    ) -> PyResult<Vec<usize>> {
        let policy = self.policy(allowed_special, disallowed_special);
        py.detach(|| self.inner.count_batch(&texts, &policy, num_threads))
            .map_err(to_py)
    }

    /// The id of one token given as bytes (mergeable) or its text (special).
    fn single_token(&self, token: &[u8]) -> Option<Rank> {
        self.inner.single_token(token)
    }

    // ------------------------------------------------------------ Decoding

    #[pyo3(name = "decode_bytes")]
    fn py_decode_bytes<'py>(
        &self,
        py: Python<'py>,
        ids: Vec<Rank>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = py.detach(|| self.inner.decode_bytes(&ids)).map_err(to_py)?;
        Ok(PyBytes::new(py, &bytes))
    }

    #[pyo3(name = "decode_batch_bytes", signature = (batch, num_threads=None))]
    fn py_decode_batch_bytes<'py>(
        &self,
        py: Python<'py>,
        batch: Vec<Vec<Rank>>,
        num_threads: Option<usize>,
    ) -> PyResult<Vec<Bound<'py, PyBytes>>> {
        let out = py
            .detach(|| map_par(&batch, num_threads, |ids| self.inner.decode_bytes(ids)))
            .map_err(to_py)?;
        Ok(out.iter().map(|b| PyBytes::new(py, b)).collect())
    }

    #[pyo3(name = "token_bytes")]
    fn py_token_bytes<'py>(&self, py: Python<'py>, id: Rank) -> PyResult<Bound<'py, PyBytes>> {
        let b = self.inner.token_bytes(id).map_err(to_py)?;
        Ok(PyBytes::new(py, b))
    }

    /// The bytes of each id.
    fn tokens_bytes<'py>(
        &self,
        py: Python<'py>,
        ids: Vec<Rank>,
    ) -> PyResult<Vec<Bound<'py, PyBytes>>> {
        ids.iter()
            .map(|&i| {
                self.inner
                    .token_bytes(i)
                    .map(|b| PyBytes::new(py, b))
                    .map_err(to_py)
            })
            .collect()
    }

    /// The ranks that hold the empty token (ascending).
    fn empty_ranks(&self) -> Vec<Rank> {
        self.inner.vocab().empty_ranks().to_vec()
    }

    /// Every mergeable token's bytes in rank order.
    fn token_bytes_list<'py>(&self, py: Python<'py>) -> Vec<Bound<'py, PyBytes>> {
        self.inner
            .vocab()
            .tokens()
            .map(|t| PyBytes::new(py, t))
            .collect()
    }

    /// The merge list `[(left, right), ...]` for the multi-byte tokens in rank order.
    fn derive_merges(&self, py: Python<'_>) -> PyResult<Vec<(Rank, Rank)>> {
        py.detach(|| crate::vocab::derive_merges(self.inner.vocab()))
            .map_err(to_py)
    }

    /// tiktoken's `encode_with_unstable`: `(stable ids, completions)` (see
    /// `core_bpe::unstable`), GIL released.
    #[pyo3(name = "encode_with_unstable", signature = (text, allowed_special=None, disallowed_special=None))]
    fn py_encode_with_unstable(
        &self,
        py: Python<'_>,
        text: Text,
        allowed_special: Option<Vec<PyBackedStr>>,
        disallowed_special: Option<Vec<PyBackedStr>>,
    ) -> PyResult<(Vec<Rank>, Vec<Vec<Rank>>)> {
        let policy = self.policy(allowed_special, disallowed_special);
        py.detach(|| self.inner.encode_with_unstable(&text, &policy))
            .map_err(to_py)
    }

    /// tiktoken's `_encode_bytes`: bytes that need not be UTF-8.
    #[pyo3(name = "encode_bytes")]
    fn py_encode_bytes<'py>(&self, py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, PyList>> {
        let ids = py.detach(|| self.inner.encode_bytes(data)).map_err(to_py)?;
        self.to_list(py, &ids)
    }

    /// tiktoken's `encode_single_piece`: bytes merged as one piece (no
    /// pre-tokenizer, no special tokens), GIL released.
    fn encode_single_piece<'py>(
        &self,
        py: Python<'py>,
        piece: &[u8],
    ) -> PyResult<Bound<'py, PyList>> {
        let mut ids = Vec::new();
        py.detach(|| crate::encode::encode_piece(piece, self.inner.vocab(), &mut ids));
        self.to_list(py, &ids)
    }

    // ------------------------------------------------------------ Testing hooks

    /// Encodes one piece of bytes with a chosen merge path: "auto", "scan",
    /// "heap", "queue", "split", "runs" or "flat" (for path-equivalence tests;
    /// "runs" and "flat" raise ValueError for a piece that path declines).
    #[pyo3(signature = (piece, path="auto"))]
    fn encode_piece_with(&self, piece: &[u8], path: &str) -> PyResult<Vec<Rank>> {
        let mut out = Vec::new();
        let v = self.inner.vocab();
        match path {
            "auto" => crate::encode::encode_piece(piece, v, &mut out),
            "scan" => crate::encode::encode_piece_scan(piece, v, &mut out),
            "heap" => crate::encode::encode_piece_heap(piece, v, &mut out),
            "queue" => crate::encode::encode_piece_queue(piece, v, &mut out),
            "split" => crate::encode::encode_piece_split(piece, v, &mut out),
            "runs" => {
                if !crate::encode::encode_piece_runs(piece, v, &mut out) {
                    return Err(PyValueError::new_err(
                        "the runs path declined this piece (too many runs of one byte, \
                         or merges it cannot order)",
                    ));
                }
            }
            "flat" => {
                if !crate::encode::encode_piece_flat_runs(piece, v, &mut out) {
                    return Err(PyValueError::new_err(
                        "the flat path declined this piece (it did not collapse into runs, \
                         or merges it cannot order)",
                    ));
                }
            }
            other => {
                return Err(PyValueError::new_err(format!(
                    "path must be auto, scan, heap, queue, split, runs or flat, not {other:?}"
                )))
            }
        }
        Ok(out)
    }

    /// This thread's piece cache for this encoder: a dict of sizes and
    /// counters (bytes, budget, table_bytes, entries, seed_entries,
    /// long_entries, wipes), or None before its first encode on this thread.
    fn piece_cache_stats(&self) -> Option<HashMap<&'static str, u64>> {
        self.inner.thread_cache_stats().map(|s| {
            HashMap::from([
                ("bytes", s.bytes as u64),
                ("budget", s.budget as u64),
                ("table_bytes", s.table_bytes as u64),
                ("entries", s.entries as u64),
                ("seed_entries", s.seed_entries as u64),
                ("long_entries", s.long_entries as u64),
                ("wipes", s.wipes),
            ])
        })
    }

    #[getter]
    fn n_mergeable(&self) -> usize {
        self.inner.vocab().len()
    }

    #[getter]
    fn n_vocab(&self) -> usize {
        self.inner.n_vocab()
    }

    /// Which path splits text: `scanner:<family>`, `regex` or `whole`.
    #[getter]
    fn pretokenizer_path(&self) -> &'static str {
        self.inner.pretokenizer().path()
    }
}

/// Wipes every thread's piece caches back to the vocabulary seed (benchmarks
/// use it to time cold encodes; results never depend on it).
#[pyfunction]
fn clear_piece_cache() {
    crate::encode::cache::clear_all();
}

/// The byte budget of each piece cache (one per thread and encoder).
#[pyfunction]
fn piece_cache_budget() -> usize {
    crate::encode::cache::budget()
}

/// Sets the byte budget of each piece cache; caches over it are wiped back to
/// the seed on their next use.
#[pyfunction]
fn set_piece_cache_budget(n_bytes: usize) -> PyResult<()> {
    if n_bytes == 0 {
        return Err(PyValueError::new_err(
            "the piece cache budget must be at least 1 byte",
        ));
    }
    crate::encode::cache::set_budget(n_bytes);
    Ok(())
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyCoreBpe>()?;
    m.add_function(wrap_pyfunction!(clear_piece_cache, m)?)?;
    m.add_function(wrap_pyfunction!(piece_cache_budget, m)?)?;
    m.add_function(wrap_pyfunction!(set_piece_cache_budget, m)?)?;
    Ok(())
}
