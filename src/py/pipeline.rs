//! Bindings for the `tokenizer.json` pipeline (`bytepair._core.Pipeline`). The
//! Python reader (`bytepair.formats.hf_pipeline`) checks the file and hands
//! over its components as plain tuples.

use std::borrow::Cow;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString};
use rustc_hash::FxHashMap;

use numpy::PyArray1;

use super::array;
use super::errors::to_py;
use crate::error::{Error, Result};
use crate::pipeline::{
    byte_level_bytes, AddedToken, Behavior, Model, Normalizer, Parts, Pipeline, Stage,
};
use crate::pretok::Pretokenizer;
use crate::Rank;

/// A merge as `tokenizer.json` writes it: `"left right"` or `["left", "right"]`.
enum Merge {
    Joined(String),
    Pair(Vec<String>),
}

/// The merges of a Python list, told apart by type (a failed extraction
/// would build an exception per merge: 320 k of them in GLM-4's file).
fn merges_of(items: &Bound<'_, PyList>) -> PyResult<Vec<Merge>> {
    let mut out = Vec::with_capacity(items.len());
    for item in items.iter() {
        if let Ok(s) = item.cast::<PyString>() {
            out.push(Merge::Joined(s.to_str()?.to_owned()));
        } else {
            out.push(Merge::Pair(item.extract()?));
        }
    }
    Ok(out)
}

/// A normalizer or pre-tokenizer: `(kind, text_a, text_b, flag_x, flag_y)`.
type Component = (String, String, String, bool, bool);
/// An added token: `(content, id, normalized, single_word, lstrip, rstrip, special)`.
type Added = (String, Rank, bool, bool, bool, bool, bool);

fn regex(p: &str) -> Result<Box<Pretokenizer>> {
    Ok(Box::new(Pretokenizer::new(Some(p))?))
}

fn normalizer(c: &Component) -> Result<Normalizer> {
    let (kind, a, b, x, y) = c;
    Ok(match kind.as_str() {
        "NFC" => Normalizer::Nfc,
        "NFD" => Normalizer::Nfd,
        "NFKC" => Normalizer::Nfkc,
        "NFKD" => Normalizer::Nfkd,
        "Lowercase" => Normalizer::Lowercase,
        "Strip" => Normalizer::Strip {
            left: *x,
            right: *y,
        },
        "Replace" => Normalizer::Replace {
            pattern: regex(a)?,
            content: b.clone(),
        },
        "Prepend" => Normalizer::Prepend(a.clone()),
        _ => return Err(Error::vocab(format!("unknown normalizer {kind:?}"))),
    })
}

fn stage(c: &Component) -> Result<Stage> {
    let (kind, a, b, x, y) = c;
    Ok(match kind.as_str() {
        "Split" => Stage::Split {
            regex: regex(a)?,
            behavior: match b.as_str() {
                "Removed" => Behavior::Removed,
                "Isolated" => Behavior::Isolated,
                "MergedWithPrevious" => Behavior::MergedWithPrevious,
                "MergedWithNext" => Behavior::MergedWithNext,
                "Contiguous" => Behavior::Contiguous,
                _ => return Err(Error::vocab(format!("unknown Split behavior {b:?}"))),
            },
            invert: *x,
        },
        "Digits" => Stage::Digits { individual: *x },
        "ByteLevel" => Stage::ByteLevel {
            add_prefix_space: *x,
            regex: if *y { Some(regex("gpt2")?) } else { None },
        },
        _ => return Err(Error::vocab(format!("unknown pre-tokenizer {kind:?}"))),
    })
}

/// The stages, with every run of two or more plain `Isolated` splits that
/// has one scanner for the whole chain ([`Pretokenizer::from_splits`]) fused
/// into one stage; it gives the same pieces as the stages one by one.
fn fuse_chains(stages: &[Component]) -> Result<Vec<Stage>> {
    let plain = |c: &Component| c.0 == "Split" && c.2 == "Isolated" && !c.3;
    let mut out = Vec::with_capacity(stages.len());
    let mut i = 0;
    while i < stages.len() {
        let run = stages[i..].iter().take_while(|c| plain(c)).count();
        if run >= 2 {
            // a `(?m)` prefix (Oniguruma's line anchors) changes nothing in a
            // known chain: its patterns have no `^` or `$` outside a class
            let patterns: Vec<&str> = stages[i..i + run]
                .iter()
                .map(|c| c.1.strip_prefix("(?m)").unwrap_or(&c.1))
                .collect();
            if let Some(p) = Pretokenizer::from_splits(&patterns)? {
                out.push(Stage::Split {
                    regex: Box::new(p),
                    behavior: Behavior::Isolated,
                    invert: false,
                });
                i += run;
                continue;
            }
        }
        out.push(stage(&stages[i])?);
        i += 1;
    }
    Ok(out)
}

fn token_bytes(s: &str) -> Box<[u8]> {
    byte_level_bytes(s)
        .unwrap_or_else(|| s.as_bytes().to_vec())
        .into()
}

/// The decode table has a slot per id up to the largest: a vocabulary whose
/// ids leave more gaps than the vocabulary rule allows is refused before it.
fn check_decode_table(n: usize, vocab: &[(String, Rank)], added: &[Added]) -> Result<()> {
    let distinct: rustc_hash::FxHashSet<Rank> = vocab
        .iter()
        .map(|(_, i)| *i)
        .chain(added.iter().map(|a| a.1))
        .collect();
    crate::vocab::check_id_gap(n, distinct.len())
}

#[allow(clippy::too_many_arguments)]
fn build(
    vocab: Vec<(String, Rank)>,
    merges: Vec<Merge>,
    ignore_merges: bool,
    added: Vec<Added>,
    normalizers: Vec<Component>,
    stages: Vec<Component>,
    prefix: Vec<Rank>,
    suffix: Vec<Rank>,
) -> Result<Pipeline> {
    let normalizers = normalizers
        .iter()
        .map(normalizer)
        .collect::<Result<Vec<_>>>()?;
    let stages = fuse_chains(&stages)?;
    let ids: FxHashMap<&str, Rank> = vocab.iter().map(|(s, i)| (s.as_str(), *i)).collect();
    let mut tokens = Vec::with_capacity(vocab.len());
    for (s, i) in &vocab {
        if let Some(b) = byte_level_bytes(s) {
            tokens.push((b, *i));
        }
    }
    let mut pairs = Vec::with_capacity(merges.len());
    for (k, m) in merges.iter().enumerate() {
        let parts = match m {
            Merge::Pair(v) if v.len() == 2 => Some((v[0].as_str(), v[1].as_str())),
            Merge::Pair(_) => None,
            Merge::Joined(s) => s.split_once(' ').filter(|(_, b)| !b.contains(' ')),
        };
        let Some((a, b)) = parts else {
            return Err(Error::vocab_at(
                k as Rank,
                "a merge is \"left right\" or [\"left\", \"right\"]",
            ));
        };
        let joined = format!("{a}{b}");
        match (ids.get(a), ids.get(b), ids.get(joined.as_str())) {
            (Some(&x), Some(&y), Some(&m)) => pairs.push((x, y, m)),
            _ => {
                return Err(Error::vocab_at(
                    k as Rank,
                    format!(
                        "merge ({a:?}, {b:?}): a part or the merged token {joined:?} is not in the vocab"
                    ),
                ))
            }
        }
    }
    let model = Model::new(&tokens, &pairs, ignore_merges);
    let n = vocab
        .iter()
        .map(|(_, i)| *i)
        .chain(added.iter().map(|a| a.1))
        .max()
        .map_or(0, |m| m as usize + 1);
    check_decode_table(n, &vocab, &added)?;
    let mut decode: Vec<Option<Box<[u8]>>> = vec![None; n];
    for (s, i) in &vocab {
        decode[*i as usize] = Some(token_bytes(s));
    }
    let (mut raw, mut norm) = (Vec::new(), Vec::new());
    for (content, id, normalized, single_word, lstrip, rstrip, special) in added {
        decode[id as usize] = Some(token_bytes(&content));
        let mut t = AddedToken {
            content,
            id,
            single_word,
            lstrip,
            rstrip,
            special,
        };
        if normalized {
            let mut c: Cow<str> = Cow::Borrowed(&t.content);
            for n in &normalizers {
                c = n.apply(c)?;
            }
            t.content = c.into_owned();
            if !t.content.is_empty() {
                norm.push(t);
            }
        } else if !t.content.is_empty() {
            raw.push(t);
        }
    }
    Pipeline::new(Parts {
        raw_added: raw,
        normalized_added: norm,
        normalizers,
        stages,
        model,
        prefix,
        suffix,
        decode,
    })
}

/// The encoder of a Hugging Face `tokenizer.json` (byte-level BPE).
#[pyclass(module = "bytepair._core", name = "Pipeline", frozen)]
pub struct PyPipeline {
    inner: Pipeline,
    paths: Vec<String>,
}

#[pymethods]
impl PyPipeline {
    #[new]
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (vocab, merges, ignore_merges, added, normalizers, stages, prefix, suffix))]
    fn py_new(
        py: Python<'_>,
        vocab: Vec<(String, Rank)>,
        merges: &Bound<'_, PyList>,
        ignore_merges: bool,
        added: Vec<Added>,
        normalizers: Vec<Component>,
        stages: Vec<Component>,
        prefix: Vec<Rank>,
        suffix: Vec<Rank>,
    ) -> PyResult<Self> {
        let merges = merges_of(merges)?;
        let inner = py
            .detach(|| {
                build(
                    vocab,
                    merges,
                    ignore_merges,
                    added,
                    normalizers,
                    stages,
                    prefix,
                    suffix,
                )
            })
            .map_err(to_py)?;
        let paths = inner.stage_paths();
        Ok(PyPipeline { inner, paths })
    }

    /// One more than the largest id.
    #[getter]
    fn n_vocab(&self) -> usize {
        self.inner.n_vocab()
    }

    /// Which engine each pre-tokenizer stage runs on.
    #[getter]
    fn paths(&self) -> Vec<String> {
        self.paths.clone()
    }

    /// The ids of `text` (with `add_special_tokens`, the post-processor's too;
    /// with `split_special` false, special added tokens are plain text).
    #[pyo3(signature = (text, add_special_tokens=false, split_special=true))]
    fn encode(
        &self,
        py: Python<'_>,
        text: &str,
        add_special_tokens: bool,
        split_special: bool,
    ) -> PyResult<Vec<Rank>> {
        py.detach(|| self.inner.encode(text, add_special_tokens, split_special))
            .map_err(to_py)
    }

    /// `encode` as a `numpy.uint32` array that owns the ids (no copy).
    #[pyo3(signature = (text, add_special_tokens=false, split_special=true))]
    fn encode_to_array<'py>(
        &self,
        py: Python<'py>,
        text: &str,
        add_special_tokens: bool,
        split_special: bool,
    ) -> PyResult<Bound<'py, PyArray1<Rank>>> {
        let ids = py
            .detach(|| self.inner.encode(text, add_special_tokens, split_special))
            .map_err(to_py)?;
        Ok(array::owned(py, ids))
    }

    /// `encode_batch` as one `numpy.uint32` array of every id and the
    /// `int64` offsets of each text's ids in it (`len(texts) + 1` of them).
    #[pyo3(signature = (texts, add_special_tokens=false, split_special=true, num_threads=None))]
    fn encode_batch_to_array<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<String>,
        add_special_tokens: bool,
        split_special: bool,
        num_threads: Option<usize>,
    ) -> PyResult<array::IdsOffsets<'py>> {
        let (flat, offsets) = py
            .detach(|| {
                let lists = crate::parallel::map_par(&texts, num_threads, |t| {
                    self.inner.encode(t, add_special_tokens, split_special)
                })?;
                let mut offsets = Vec::with_capacity(lists.len() + 1);
                offsets.push(0i64);
                for l in &lists {
                    offsets.push(offsets[offsets.len() - 1] + l.len() as i64);
                }
                Ok::<_, Error>((crate::parallel::concat_par(&lists, num_threads)?, offsets))
            })
            .map_err(to_py)?;
        Ok((array::owned(py, flat), array::owned(py, offsets)))
    }

    /// `encode` of every text, on `num_threads` threads (`None`: one per core).
    #[pyo3(signature = (texts, add_special_tokens=false, split_special=true, num_threads=None))]
    fn encode_batch(
        &self,
        py: Python<'_>,
        texts: Vec<String>,
        add_special_tokens: bool,
        split_special: bool,
        num_threads: Option<usize>,
    ) -> PyResult<Vec<Vec<Rank>>> {
        py.detach(|| {
            crate::parallel::map_par(&texts, num_threads, |t| {
                self.inner.encode(t, add_special_tokens, split_special)
            })
        })
        .map_err(to_py)
    }

    /// The bytes of `ids`.
    fn decode_bytes<'py>(&self, py: Python<'py>, ids: Vec<Rank>) -> PyResult<Bound<'py, PyBytes>> {
        let b = self.inner.decode_bytes(&ids).map_err(to_py)?;
        Ok(PyBytes::new(py, &b))
    }
}

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyPipeline>()
}
