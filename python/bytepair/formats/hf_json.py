"""Hugging Face ``tokenizer.json`` for byte-level BPE models.

Written files have a ``BPE`` model (``ignore_merges: true``, every split of every
token as a merge, so Hugging Face's merge-list order gives tiktoken's rank
order), a ``ByteLevel`` decoder, and as pre-tokenizer ``ByteLevel`` with GPT-2's
regex for the gpt2 pattern, ``Split(regex, Isolated)`` + ``ByteLevel(use_regex
=false)`` for any other pattern, and ``ByteLevel(use_regex=false)`` alone for no
pattern. Special tokens are ``added_tokens`` and are also in the model vocab
(otherwise ``tokenizers`` renumbers them).

The reader takes what real GPT-2, Llama-3 and Qwen2 files hold, and refuses,
with :class:`~bytepair.errors.UnsupportedComponentError` naming the component
and its JSON path, what bytepair cannot reproduce exactly: non-BPE models
(WordPiece, Unigram, WordLevel), ``byte_fallback`` and other non-byte-level
setups, dropout, subword prefixes/suffixes, normalizers (unless
``ignore_normalizer=True``), ``add_prefix_space``, truncation and padding, and
added tokens with ``lstrip``/``rstrip``/``single_word``. Post-processors that
only add special tokens around an encoding (``TemplateProcessing``, ...) are
accepted: bytepair's ids are those of ``encode(text, add_special_tokens=False)``.

>>> from bytepair import get_encoding
>>> d = to_dict(get_encoding("gpt2"), merges="minimal")
>>> d["pre_tokenizer"]["type"], d["model"]["type"], len(d["model"]["merges"])
('ByteLevel', 'BPE', 50000)
>>> from_dict(d) == get_encoding("gpt2")
True
"""

from __future__ import annotations

import json
import os
import re
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

from .. import _core
from .. import patterns as _patterns
from ..atomic import atomic_write_text
from ..errors import ArgumentError, FormatError, UnsupportedComponentError
from ..tokenizer import Tokenizer
from . import common as _common
from . import hf_pipeline
from .hf_tokenizer import PipelineTokenizer

PathLike = Union[str, "os.PathLike[str]"]

# ---------------------------------------------------------------- patterns

# Oniguruma (the regex engine of `tokenizers`) reads `X{m,n}+` as "X{m,n}, one
# or more times", not as a possessive repeat. In cl100k's pattern nothing
# follows `\p{N}{1,3}+` inside its alternative, so the greedy `\p{N}{1,3}`
# matches exactly the same text.
_HF_REWRITES = [(r"\p{N}{1,3}+", r"\p{N}{1,3}")]
_POSSESSIVE_BOUNDED = re.compile(r"(?<!\\)\{\d+(,\d*)?\}\+")


def to_hf_pattern(pattern: str) -> str:
    """The pattern as ``tokenizers``' Oniguruma must be given it.

    >>> to_hf_pattern(_patterns.CL100K).count("{1,3}+")
    0
    """
    out = pattern
    for a, b in _HF_REWRITES:
        out = out.replace(a, b)
    if _POSSESSIVE_BOUNDED.search(out):
        raise UnsupportedComponentError(
            f"the pattern {pattern!r} uses a possessive bounded repeat ('{{m,n}}+'), which the regex "
            "engine of tokenizers (Oniguruma) reads as a repeated group; rewrite it without the '+' "
            "(or as an atomic group) before exporting",
            where="pattern",
        )
    return out


def from_hf_pattern(pattern: str) -> str:
    """Maps an HF-adapted copy of a built-in pattern back to the built-in string
    (so the core's fast scanners apply); other patterns pass through."""
    for builtin in (_patterns.GPT2, _patterns.CL100K, _patterns.O200K):
        if pattern == builtin or pattern == to_hf_pattern(builtin):
            return builtin
    return pattern


# ---------------------------------------------------------------- writing

_BYTELEVEL_SPLIT = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}
_BYTELEVEL_GPT2 = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}


def _pre_tokenizer(pattern: Optional[str]) -> Dict[str, Any]:
    if pattern is None:
        return dict(_BYTELEVEL_SPLIT)
    if pattern == _patterns.GPT2:
        # ByteLevel's built-in regex is GPT-2's original one; it splits text
        # exactly as tiktoken's gpt2 pattern does.
        return dict(_BYTELEVEL_GPT2)
    return {
        "type": "Sequence",
        "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": to_hf_pattern(pattern)}, "behavior": "Isolated",
             "invert": False},
            dict(_BYTELEVEL_SPLIT),
        ],
    }


def to_dict(tok: Tokenizer, *, merges: str = "all", merge_style: str = "string") -> Dict[str, Any]:
    """The ``tokenizer.json`` content for ``tok``.

    Args:
        merges: ``"all"`` (every split of every token: exact) or ``"minimal"``
            (one split per token: smaller).
        merge_style: ``"string"`` (``"a b"``, read by every ``tokenizers``
            version) or ``"pair"`` (``["a", "b"]``, tokenizers >= 0.20).
    """
    if merge_style not in ("string", "pair"):
        raise ArgumentError(f"merge_style must be 'string' or 'pair', not {merge_style!r}", name="merge_style")
    strs = _common.vocab_strings(tok, "a Hugging Face tokenizer.json", gaps_ok=True)
    empty = set(tok._empty_ranks)
    vocab: Dict[str, int] = {s: i for i, s in enumerate(strs) if s or i in empty}  # a gap has no entry
    specials = sorted(tok.special_tokens.items(), key=lambda kv: kv[1])
    for s, i in specials:
        if s in vocab:
            raise FormatError(
                f"special token {s!r} is spelled like mergeable token {vocab[s]} in byte-level form; "
                "tokenizer.json keys the model vocab by that string and cannot hold both"
            )
        vocab[s] = i
    pairs = _common.merge_pairs(tok, merges)
    merge_list: List[Any]
    if merge_style == "string":
        merge_list = [f"{strs[a]} {strs[b]}" for a, b in pairs]
    else:
        merge_list = [[strs[a], strs[b]] for a, b in pairs]
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [
            {"id": i, "content": s, "single_word": False, "lstrip": False, "rstrip": False,
             "normalized": False, "special": True}
            for s, i in specials
        ],
        "normalizer": None,
        "pre_tokenizer": _pre_tokenizer(tok.pattern),
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": True,
            "vocab": vocab,
            "merges": merge_list,
        },
    }


def dumps(tok: Tokenizer, *, merges: str = "all", merge_style: str = "string") -> str:
    """:func:`to_dict` as JSON text (UTF-8, non-ASCII unescaped)."""
    return json.dumps(to_dict(tok, merges=merges, merge_style=merge_style), ensure_ascii=False) + "\n"


def save(tok: Tokenizer, path: PathLike, *, merges: str = "all", merge_style: str = "string") -> None:
    """Writes ``tokenizer.json`` atomically."""
    atomic_write_text(path, dumps(tok, merges=merges, merge_style=merge_style))


# ---------------------------------------------------------------- reading


def _unsupported(what: str, where: str, path: object, why: str = "") -> UnsupportedComponentError:
    msg = f"unsupported component {what}"
    if why:
        msg += f": {why}"
    return UnsupportedComponentError(msg, path=path, where=where)


def _flatten(comp: Any, where: str, key: str) -> List[Tuple[Dict[str, Any], str]]:
    if isinstance(comp, dict) and comp.get("type") == "Sequence":
        out: List[Tuple[Dict[str, Any], str]] = []
        for i, c in enumerate(comp.get(key) or []):
            out.extend(_flatten(c, f"{where}.{key}[{i}]", key))
        return out
    return [(comp, where)]


def _pattern_of(d: Dict[str, Any], path: object) -> Optional[str]:
    pre = d.get("pre_tokenizer")
    if pre is None:
        raise _unsupported("pre_tokenizer null", "$.pre_tokenizer", path,
                           "without a ByteLevel pre-tokenizer the model is not byte-level BPE")
    parts = _flatten(pre, "$.pre_tokenizer", "pretokenizers")
    regex: Optional[str] = None
    seen_bytelevel = False
    for comp, where in parts:
        if not isinstance(comp, dict):
            raise FormatError("a pre-tokenizer must be a JSON object", path=path, where=where)
        kind = comp.get("type")
        if kind == "ByteLevel":
            if seen_bytelevel:
                raise _unsupported("a second ByteLevel pre-tokenizer", where, path)
            seen_bytelevel = True
            if comp.get("add_prefix_space"):
                raise _unsupported("ByteLevel add_prefix_space=true", f"{where}.add_prefix_space", path,
                                   "it inserts a space before the text, which bytepair does not do")
            if comp.get("use_regex", True):
                if regex is not None:
                    raise _unsupported("Split followed by ByteLevel(use_regex=true)", f"{where}.use_regex",
                                       path, "two regex splits in a row are not one pattern")
                regex = _patterns.GPT2
        elif kind == "Split" and not seen_bytelevel and regex is None:
            pat = comp.get("pattern")
            if not isinstance(pat, dict) or "Regex" not in pat:
                raise _unsupported(f"Split pattern {pat!r}", f"{where}.pattern", path,
                                   "only {\"Regex\": ...} split patterns are supported")
            if comp.get("behavior") != "Isolated":
                raise _unsupported(f"Split behavior {comp.get('behavior')!r}", f"{where}.behavior", path,
                                   "only 'Isolated' (each match is a piece) matches bytepair's pre-tokenizer")
            if comp.get("invert"):
                raise _unsupported("Split invert=true", f"{where}.invert", path)
            regex = from_hf_pattern(pat["Regex"])
        else:
            raise _unsupported(f"pre-tokenizer {kind!r}", f"{where}.type", path,
                               "bytepair's pre-tokenization is one regex split followed by ByteLevel")
    if not seen_bytelevel:
        raise _unsupported("pre-tokenizer without ByteLevel", "$.pre_tokenizer", path,
                           "the model is not byte-level BPE")
    return regex


def _check_components(d: Dict[str, Any], path: object, ignore_normalizer: bool) -> None:
    for key in ("truncation", "padding"):
        if d.get(key) is not None:
            raise _unsupported(f"{key} settings", f"$.{key}", path,
                               f"{key} changes the ids of an encoding; set it to null")
    norm = d.get("normalizer")
    if norm is not None and not ignore_normalizer:
        parts = _flatten(norm, "$.normalizer", "normalizers")
        if parts:
            comp, where = parts[0]
            kind = comp.get("type") if isinstance(comp, dict) else comp
            raise _unsupported(
                f"normalizer {kind!r}", where, path,
                "it changes the text before tokenization, which bytepair does not; pass "
                "ignore_normalizer=True to load it anyway (ids then agree only on text the "
                "normalizer leaves unchanged)",
            )
    dec = d.get("decoder")
    if dec is not None:
        for comp, where in _flatten(dec, "$.decoder", "decoders"):
            kind = comp.get("type") if isinstance(comp, dict) else comp
            if kind != "ByteLevel":
                raise _unsupported(f"decoder {kind!r}", f"{where}.type", path,
                                   "a byte-level BPE model decodes with ByteLevel")
    post = d.get("post_processor")
    if post is not None:
        for comp, where in _flatten(post, "$.post_processor", "processors"):
            kind = comp.get("type") if isinstance(comp, dict) else comp
            if kind not in ("ByteLevel", "TemplateProcessing", "RobertaProcessing", "BertProcessing"):
                raise _unsupported(f"post-processor {kind!r}", f"{where}.type", path)


def _model(d: Dict[str, Any], path: object, *, typed: bool = False) -> Dict[str, Any]:
    """The ``model`` object, checked; ``typed``: its vocab and merges were read
    by the core and are not in ``d``."""
    model = d.get("model")
    if not isinstance(model, dict):
        raise FormatError("missing \"model\" object", path=path, where="$.model")
    kind = model.get("type", "BPE" if typed or "merges" in model else None)
    if kind != "BPE":
        raise _unsupported(f"model {kind!r}", "$.model.type", path,
                           "bytepair reads byte-level BPE models only (WordPiece, Unigram and "
                           "WordLevel work differently)")
    if model.get("byte_fallback"):
        raise _unsupported("byte_fallback", "$.model.byte_fallback", path,
                           "byte fallback (<0xNN> tokens, SentencePiece-style) is not byte-level BPE")
    if model.get("dropout") not in (None, 0, 0.0):
        raise _unsupported(f"dropout {model.get('dropout')!r}", "$.model.dropout", path,
                           "BPE dropout is random; bytepair's encoding is deterministic")
    for key in ("continuing_subword_prefix", "end_of_word_suffix"):
        if model.get(key):
            raise _unsupported(f"{key} {model.get(key)!r}", f"$.model.{key}", path,
                               "byte-level BPE has no subword markers")
    if typed:
        return model
    for key in ("vocab", "merges"):
        if key not in model:
            raise FormatError(f"missing model {key}", path=path, where=f"$.model.{key}")
    if not isinstance(model["vocab"], dict):
        raise FormatError("model vocab must be an object of token -> id", path=path, where="$.model.vocab")
    if not isinstance(model["merges"], list):
        raise FormatError("model merges must be a list", path=path, where="$.model.merges")
    return model


def _merges(model: Dict[str, Any], path: object) -> List[Tuple[str, str]]:
    out: List[Tuple[str, str]] = []
    append = out.append
    for k, m in enumerate(model["merges"]):
        if type(m) is str:
            a, _, b = m.partition(" ")
            if a and b and " " not in b:
                append((a, b))
                continue
        elif type(m) is list and len(m) == 2:
            a, b = m
            if type(a) is str and type(b) is str and a and b:
                append((a, b))
                continue
        raise FormatError(f"a merge is \"left right\" or [\"left\", \"right\"], got {m!r}",
                          path=path, where=f"$.model.merges[{k}]")
    return out


def _specials(d: Dict[str, Any], vocab_id: Callable[[str], Optional[int]], path: object) -> Dict[str, int]:
    added = d.get("added_tokens") or []
    if not isinstance(added, list):
        raise FormatError("added_tokens must be a list", path=path, where="$.added_tokens")
    out: Dict[str, int] = {}
    for k, a in enumerate(added):
        where = f"$.added_tokens[{k}]"
        if not isinstance(a, dict) or not isinstance(a.get("content"), str) or not isinstance(a.get("id"), int):
            raise FormatError("an added token needs \"id\" (int) and \"content\" (str)", path=path, where=where)
        for flag in ("lstrip", "rstrip", "single_word"):
            if a.get(flag):
                raise _unsupported(f"added token {a['content']!r} with {flag}=true", f"{where}.{flag}", path,
                                   "bytepair matches special tokens literally")
        content, i = a["content"], a["id"]
        if content in out:
            raise FormatError(f"added token {content!r} is listed twice", path=path, where=where)
        known = vocab_id(content)
        if known is not None and known != i:
            raise FormatError(f"added token {content!r} has id {i} but the model vocab gives it "
                              f"{known}", path=path, where=f"{where}.id")
        out[content] = i
    return out


def from_dict(
    d: Any,
    *,
    path: object = None,
    ignore_normalizer: bool = False,
    name: Optional[str] = None,
) -> Tokenizer:
    """Builds a tokenizer from a parsed ``tokenizer.json`` (see the module docstring)."""
    if not isinstance(d, dict):
        raise FormatError("a tokenizer.json file is a JSON object", path=path, where="$")
    model = _model(d, path)
    return _rank_tokenizer(d, model["vocab"], lambda: _merges(model, path), path=path,
                           ignore_normalizer=ignore_normalizer, name=name)


def _rank_tokenizer(d: Dict[str, Any], vocab: Dict[str, Any], merges: Callable[[], List[Tuple[str, str]]], *,
                    path: object, ignore_normalizer: bool, name: Optional[str]) -> Tokenizer:
    _check_components(d, path, ignore_normalizer)
    pattern = _pattern_of(d, path)
    specials = _specials(d, vocab.get, path)
    return _common.build(
        vocab, merges(), specials, pattern,
        name=name or "tokenizer.json", path=path,
        vocab_where=lambda s: f"$.model.vocab[{json.dumps(s, ensure_ascii=False)}]",
        merge_where=lambda k: f"$.model.merges[{k}]",
        gaps_ok=True,
    )


def loads(data: bytes, *, path: object = None, ignore_normalizer: bool = False,
          name: Optional[str] = None, parsed: Optional[hf_pipeline.Read] = None) -> Tokenizer:
    """Reads ``tokenizer.json`` bytes.

    A file whose merges mean tiktoken's rank order (what :func:`save` writes,
    GPT-2's) becomes a rank-based :class:`~bytepair.Tokenizer`; any other file
    (normalizers, several splits, merges ranked by pair, ...) a
    :class:`~bytepair.formats.hf_tokenizer.PipelineTokenizer`, which runs the
    file's own pipeline with ``tokenizers``' semantics. Which one is decided
    from the read file before either is built (:func:`_rank_candidate`).
    ``ignore_normalizer`` asks for the rank-based reading despite a normalizer;
    ``parsed``: the file as :func:`~bytepair.formats.hf_pipeline.read` gives it.
    """
    file = hf_pipeline.read(data, path) if parsed is None else parsed
    doc, model = file
    if model is not None and (ignore_normalizer or _rank_candidate(doc, model)):
        try:
            return _rank_tokenizer(doc, dict(model.tokens()), model.merges, path=path,
                                   ignore_normalizer=ignore_normalizer, name=name)
        except FormatError:
            if ignore_normalizer:
                raise
    return PipelineTokenizer(data, path=path, name=name or "tokenizer.json", parsed=file)


def _rank_candidate(d: Dict[str, Any], model: "_core.TokenizerModel") -> bool:
    """Whether the rank-based reading can hold the file, from checks that
    build nothing: the components are those it reads (no normalizer, one
    regex split, plain special tokens), and the model's merges can mean rank
    order (``TokenizerModel.rank_ordered``). A file converted from tiktoken
    ranks without ``ignore_merges`` (more merges than tokens) needs the pair
    ranks of its pipeline."""
    meta = d.get("model")
    if not isinstance(meta, dict) or d.get("normalizer") is not None:
        return False
    if not meta.get("ignore_merges") and model.n_merges > model.n_tokens:
        return False
    try:
        _model(d, None, typed=True)
        _check_components(d, None, False)
        _pattern_of(d, None)
        specials = _specials(d, model.get, None)
    except FormatError:
        return False
    return bool(model.rank_ordered(list(specials.values())))


def load(path: PathLike, *, ignore_normalizer: bool = False, name: Optional[str] = None,
         data: Optional[bytes] = None) -> Tokenizer:
    """Reads a ``tokenizer.json`` file (``data``: its bytes, when already read)."""
    if data is None:
        with open(path, "rb") as f:
            data = f.read()
    p = os.fspath(path)
    default = os.path.basename(os.path.dirname(os.path.abspath(p))) or "tokenizer.json"
    return loads(data, path=p, ignore_normalizer=ignore_normalizer, name=name or default)
