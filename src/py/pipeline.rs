//! Bindings for the `tokenizer.json` pipeline (`bytepair._core.Pipeline`).
//! The file is read once in Rust (`read_tokenizer_json`): the model's
//! vocabulary and merges stay here as a `TokenizerModel`, the rest goes to the
//! Python reader (`bytepair.formats.hf_pipeline`) as JSON text; that reader
//! checks the components and hands them over as plain tuples with the model.

use std::borrow::Cow;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};
use rustc_hash::FxHashSet;

use numpy::PyArray1;

use super::array;
use super::errors::to_py;
use super::ints::IntTable;
use super::text::Text;
use crate::error::{Error, Result};
use crate::pipeline::file::{self, ModelFile};
use crate::pipeline::{
    byte_level_bytes, AddedToken, Behavior, Model, Normalizer, Parts, Pipeline, Stage,
};
use crate::pretok::{ChainStage, Pretokenizer};
use crate::Rank;

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

/// A `Split` (`Isolated`, not inverted) or `Digits` component as a stage
/// of a [`Pretokenizer::from_chain`] chain.
fn chain_stage(c: &Component) -> Option<ChainStage<'_>> {
    match c.0.as_str() {
        "Split" if c.2 == "Isolated" && !c.3 => Some(ChainStage::Split(&c.1)),
        "Digits" => Some(ChainStage::Digits { individual: c.3 }),
        _ => None,
    }
}

/// The stages, with every run of two or more plain `Isolated` splits that
/// has one scanner for the whole chain ([`Pretokenizer::from_splits`]), or
/// of splits and `Digits` that [`Pretokenizer::from_chain`] runs, fused into
/// one stage (the longest such run from each stage on); it gives the same
/// pieces as the stages one by one.
fn fuse_chains(stages: &[Component]) -> Result<Vec<Stage>> {
    let plain = |c: &Component| c.0 == "Split" && c.2 == "Isolated" && !c.3;
    let fused = |p: Pretokenizer| Stage::Split {
        regex: Box::new(p),
        behavior: Behavior::Isolated,
        invert: false,
    };
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
                out.push(fused(p));
                i += run;
                continue;
            }
        }
        let chain: Vec<ChainStage> = stages[i..].iter().map_while(chain_stage).collect();
        let longest = (2..=chain.len())
            .rev()
            .find_map(|n| Pretokenizer::from_chain(&chain[..n]).map(|p| (n, p)));
        if let Some((n, p)) = longest {
            out.push(fused(p));
            i += n;
            continue;
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
/// ids leave more gaps than the vocabulary rule allows is refused before it,
/// naming the token with the largest id.
fn check_decode_table(n: usize, file: &ModelFile, added: &[Added]) -> Result<()> {
    let distinct: FxHashSet<Rank> = file
        .vocab
        .values()
        .copied()
        .chain(added.iter().map(|a| a.1))
        .collect();
    crate::vocab::check_id_gap(n, distinct.len()).map_err(|e| {
        let top = file.vocab.iter().max_by_key(|(_, i)| **i);
        let token = top.map_or(String::new(), |(s, i)| {
            format!("token {} has id {i}: ", file::py_repr(s))
        });
        Error::InvalidFile {
            location: "$.model.vocab".into(),
            reason: format!("{token}{e}"),
        }
    })
}

#[allow(clippy::too_many_arguments)]
fn build(
    file: &ModelFile,
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
    let ids = &file.vocab;
    let n = ids
        .values()
        .copied()
        .chain(added.iter().map(|a| a.1))
        .max()
        .map_or(0, |m| m as usize + 1);
    check_decode_table(n, file, &added)?;
    let mut decode: Vec<Option<Box<[u8]>>> = vec![None; n];
    let mut tokens = Vec::with_capacity(ids.len());
    for (s, &i) in ids {
        match byte_level_bytes(s) {
            Some(b) => {
                decode[i as usize] = Some(b.clone().into());
                tokens.push((b, i));
            }
            None => decode[i as usize] = Some(s.as_bytes().into()),
        }
    }
    let mut pairs = Vec::with_capacity(file.merges.len());
    for (k, m) in file.merges.iter().enumerate() {
        let (a, b, joined) = (m.left(), m.right(), m.joined());
        match (ids.get(a), ids.get(b), ids.get(joined)) {
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
    /// One Python int per id, for lists (see [`IntTable`]).
    ints: IntTable,
}

#[pymethods]
impl PyPipeline {
    #[new]
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (model, ignore_merges, added, normalizers, stages, prefix, suffix))]
    fn py_new(
        py: Python<'_>,
        model: &Bound<'_, PyTokenizerModel>,
        ignore_merges: bool,
        added: Vec<Added>,
        normalizers: Vec<Component>,
        stages: Vec<Component>,
        prefix: Vec<Rank>,
        suffix: Vec<Rank>,
    ) -> PyResult<Self> {
        let file = &model.get().inner;
        let inner = py
            .detach(|| {
                build(
                    file,
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
        Ok(PyPipeline {
            inner,
            paths,
            ints: IntTable::default(),
        })
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
    fn encode<'py>(
        &self,
        py: Python<'py>,
        text: Text,
        add_special_tokens: bool,
        split_special: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        let ids = py
            .detach(|| self.inner.encode(&text, add_special_tokens, split_special))
            .map_err(to_py)?;
        self.ints.list(py, self.inner.n_vocab(), &ids)
    }

    /// `encode` as a `numpy.uint32` array that owns the ids (no copy).
    #[pyo3(signature = (text, add_special_tokens=false, split_special=true))]
    fn encode_to_array<'py>(
        &self,
        py: Python<'py>,
        text: Text,
        add_special_tokens: bool,
        split_special: bool,
    ) -> PyResult<Bound<'py, PyArray1<Rank>>> {
        let ids = py
            .detach(|| self.inner.encode(&text, add_special_tokens, split_special))
            .map_err(to_py)?;
        array::owned(py, ids)
    }

    /// `encode_batch` as one `numpy.uint32` array of every id and the
    /// `int64` offsets of each text's ids in it (`len(texts) + 1` of them).
    #[pyo3(signature = (texts, add_special_tokens=false, split_special=true, num_threads=None))]
    fn encode_batch_to_array<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<Text>,
        add_special_tokens: bool,
        split_special: bool,
        num_threads: Option<usize>,
    ) -> PyResult<array::IdsOffsets<'py>> {
        let (flat, offsets) = py
            .detach(|| {
                let lists =
                    self.encode_all(&texts, add_special_tokens, split_special, num_threads)?;
                let mut offsets = Vec::with_capacity(lists.len() + 1);
                offsets.push(0i64);
                for l in &lists {
                    offsets.push(offsets[offsets.len() - 1] + l.len() as i64);
                }
                Ok::<_, Error>((crate::parallel::concat_par(&lists, num_threads)?, offsets))
            })
            .map_err(to_py)?;
        Ok((array::owned(py, flat)?, array::owned(py, offsets)?))
    }

    /// `encode` of every text, on `num_threads` threads (`None`: one per core).
    #[pyo3(signature = (texts, add_special_tokens=false, split_special=true, num_threads=None))]
    fn encode_batch<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<Text>,
        add_special_tokens: bool,
        split_special: bool,
        num_threads: Option<usize>,
    ) -> PyResult<Bound<'py, PyList>> {
        let lists = py
            .detach(|| self.encode_all(&texts, add_special_tokens, split_special, num_threads))
            .map_err(to_py)?;
        let n = self.inner.n_vocab();
        let lists = lists
            .iter()
            .map(|ids| self.ints.list(py, n, ids))
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, lists)
    }

    /// The bytes of `ids`.
    fn decode_bytes<'py>(&self, py: Python<'py>, ids: Vec<Rank>) -> PyResult<Bound<'py, PyBytes>> {
        let b = self.inner.decode_bytes(&ids).map_err(to_py)?;
        Ok(PyBytes::new(py, &b))
    }
}

impl PyPipeline {
    /// `encode` of every text, in order, on `num_threads` threads (`None`:
    /// one per core); what both batch bindings run with the GIL released.
    fn encode_all(
        &self,
        texts: &[Text],
        add_special_tokens: bool,
        split_special: bool,
        num_threads: Option<usize>,
    ) -> Result<Vec<Vec<Rank>>> {
        crate::parallel::map_par(texts, num_threads, |t| {
            self.inner.encode(t, add_special_tokens, split_special)
        })
    }
}

/// Whether a model's merges can mean tiktoken's rank order, checked without
/// building anything: every merge's parts and token are in the vocabulary,
/// the tokens' ids never decrease along the list, every byte has a token,
/// and every longer byte-level token (the ids in `skip` aside: special
/// tokens) is made by a listed merge of two tokens of lower ids. The rank
/// reading checks the rest.
fn rank_ordered(file: &ModelFile, skip: &FxHashSet<Rank>) -> bool {
    let ids = &file.vocab;
    let mut made = FxHashSet::default();
    // the token of the merges being read, and whether one of them made it
    let (mut prev, mut prev_made) = (0, true);
    for m in &file.merges {
        let (Some(&a), Some(&b), Some(&r)) =
            (ids.get(m.left()), ids.get(m.right()), ids.get(m.joined()))
        else {
            return false;
        };
        if r != prev {
            // merges are grouped by token: the group that ended must have made it
            if r < prev || !prev_made {
                return false;
            }
            (prev, prev_made) = (r, false);
        }
        if a < r && b < r {
            made.insert(r);
            prev_made = true;
        }
    }
    if !prev_made {
        return false;
    }
    let mut bytes = [false; 256];
    for (s, i) in ids {
        if skip.contains(i) {
            continue;
        }
        match byte_level_bytes(s).as_deref() {
            Some([b]) => bytes[*b as usize] = true,
            Some([_, _, ..]) if !made.contains(i) => return false,
            _ => {}
        }
    }
    bytes.iter().all(|&b| b)
}

/// The model of a `tokenizer.json`: its vocabulary and merges, read once.
#[pyclass(module = "bytepair._core", name = "TokenizerModel", frozen)]
pub struct PyTokenizerModel {
    inner: ModelFile,
}

#[pymethods]
impl PyTokenizerModel {
    /// Vocabulary entries.
    #[getter]
    fn n_tokens(&self) -> usize {
        self.inner.vocab.len()
    }

    /// Merges.
    #[getter]
    fn n_merges(&self) -> usize {
        self.inner.merges.len()
    }

    /// The id of a vocabulary string, or `None`.
    fn get(&self, token: &str) -> Option<Rank> {
        self.inner.vocab.get(token).copied()
    }

    /// Every `(string, id)` entry of the vocabulary.
    fn tokens(&self) -> Vec<(&str, Rank)> {
        self.inner.vocab.iter().map(|(s, i)| (&**s, *i)).collect()
    }

    /// Every merge as `(left, right)`, in list order.
    fn merges(&self) -> Vec<(&str, &str)> {
        self.inner
            .merges
            .iter()
            .map(|m| (m.left(), m.right()))
            .collect()
    }

    /// `(id, bytes)` of every entry written in GPT-2's byte alphabet.
    fn byte_level<'py>(&self, py: Python<'py>) -> Vec<(Rank, Bound<'py, PyBytes>)> {
        self.inner
            .vocab
            .iter()
            .filter_map(|(s, i)| byte_level_bytes(s).map(|b| (*i, PyBytes::new(py, &b))))
            .collect()
    }

    /// Whether the merges can mean tiktoken's rank order, the ids `skip`
    /// (special tokens) aside (see `rank_ordered`).
    fn rank_ordered(&self, py: Python<'_>, skip: Vec<Rank>) -> bool {
        let skip: FxHashSet<Rank> = skip.into_iter().collect();
        py.detach(|| rank_ordered(&self.inner, &skip))
    }
}

/// Reads a `tokenizer.json`'s bytes: the file without `model.vocab` and
/// `model.merges` as JSON text, and the model when both have their type.
#[pyfunction]
fn read_tokenizer_json(
    py: Python<'_>,
    data: &[u8],
) -> PyResult<(String, Option<PyTokenizerModel>)> {
    let parts = py.detach(|| file::read(data)).map_err(to_py)?;
    Ok((
        parts.rest,
        parts.model.map(|inner| PyTokenizerModel { inner }),
    ))
}

/// The keys of a JSON object file, or `None` when it holds no JSON object.
#[pyfunction]
fn json_object_keys(py: Python<'_>, data: &[u8]) -> PyResult<Option<Vec<String>>> {
    py.detach(|| file::object_keys(data)).map_err(to_py)
}

/// Private (tests, benchmarks): the pieces of `text` after the pre-tokenizer
/// `stages` (components as `Pipeline` takes them), with the chains fused as a
/// `Pipeline` fuses them (`fused`) or stage by stage; and each stage's path.
#[pyfunction]
#[pyo3(signature = (stages, text, fused))]
fn _pretokenize_stages(
    py: Python<'_>,
    stages: Vec<Component>,
    text: &str,
    fused: bool,
) -> PyResult<(Vec<String>, Vec<String>)> {
    let stages = if fused {
        fuse_chains(&stages)
    } else {
        stages.iter().map(stage).collect::<Result<Vec<_>>>()
    }
    .map_err(to_py)?;
    let paths = stages.iter().map(Stage::path).collect();
    py.detach(|| {
        let mut buf = text.to_string();
        let mut pieces = vec![(0, buf.len())];
        for st in &stages {
            pieces = st.apply(&mut buf, pieces)?;
        }
        Ok(pieces.iter().map(|&(s, e)| buf[s..e].to_string()).collect())
    })
    .map(|p| (p, paths))
    .map_err(to_py)
}

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_pretokenize_stages, m)?)?;
    m.add_class::<PyPipeline>()?;
    m.add_class::<PyTokenizerModel>()?;
    m.add_function(wrap_pyfunction!(read_tokenizer_json, m)?)?;
    m.add_function(wrap_pyfunction!(json_object_keys, m)?)
}
