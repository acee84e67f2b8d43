"""Hugging Face ``tokenizer.json`` read in full, with ``tokenizers``' semantics.

The components of the byte-level BPE files that open models ship are read and
run by the core's ``Pipeline`` (``src/pipeline``), which gives the ids of
``tokenizers``' ``Tokenizer.encode``:

- normalizers ``NFC``, ``NFD``, ``NFKC``, ``NFKD`` (Unicode 9.0, as the
  reference), ``Lowercase``, ``Strip``, ``Replace``, ``Prepend``, ``Sequence``;
- pre-tokenizers ``Split`` (every behaviour, ``invert``), ``Digits``,
  ``ByteLevel`` (``add_prefix_space``, ``use_regex``), ``Sequence``;
- the ``BPE`` model: merges ranked by pair, ``ignore_merges``, tokens no merge
  makes, byte-level vocabularies missing bytes;
- added tokens, special or not, with ``normalized``, ``single_word``,
  ``lstrip`` and ``rstrip``; ids assigned as ``tokenizers`` assigns them;
- post-processors ``ByteLevel``, ``TemplateProcessing``, ``RobertaProcessing``,
  ``BertProcessing`` and ``Sequence``: their ids are added by
  ``encode(text, add_special_tokens=True)`` only;
- the ``ByteLevel`` decoder.

Anything else raises :class:`~bytepair.errors.UnsupportedComponentError`
naming the component and its JSON path: nothing is approximated.

The file is read once, in the core (:func:`read`): the model's vocabulary and
merges, the bulk of the file, stay there as a ``_core.TokenizerModel``; the
other parts come back as JSON and are checked here.

Regexes are written for Oniguruma, the engine of ``tokenizers``; where its
syntax means something else in ``fancy-regex`` the pattern is adapted: ``^`` and
``$`` are line anchors there, so a pattern using them runs in multi-line mode.
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Tuple

from .. import _core
from .. import patterns as _patterns
from ..errors import FormatError, UnsupportedComponentError, VocabError
from .common import core_json_error, read_json

Component = Tuple[str, str, str, bool, bool]
#: A read file: its JSON without ``model.vocab`` and ``model.merges``, and the
#: model (``None`` when the vocab or the merges are not of their type).
Read = Tuple[Dict[str, Any], Optional["_core.TokenizerModel"]]
#: An added token: (content, id, normalized, single_word, lstrip, rstrip, special).
Added = Tuple[str, int, bool, bool, bool, bool, bool]

_BEHAVIORS = ("Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous")
_UNICODE_FORMS = ("NFC", "NFD", "NFKC", "NFKD")
_POSSESSIVE_BOUNDED = re.compile(r"(?<!\\)\{\d+(,\d*)?\}\+")


def _unsupported(what: str, where: str, path: object, why: str = "") -> UnsupportedComponentError:
    return UnsupportedComponentError(f"unsupported component {what}" + (f": {why}" if why else ""),
                                     path=path, where=where)


def _flatten(comp: Any, where: str, key: str) -> List[Tuple[Any, str]]:
    if isinstance(comp, dict) and comp.get("type") == "Sequence":
        out: List[Tuple[Any, str]] = []
        for i, c in enumerate(comp.get(key) or []):
            out.extend(_flatten(c, f"{where}.{key}[{i}]", key))
        return out
    return [(comp, where)]


def _builtin(pattern: str) -> str:
    """A built-in pattern as ``tokenizers`` files spell it (Oniguruma reads
    ``\\p{N}{1,3}+`` as a repeated group, so cl100k's is written without the
    ``+``, which matches the same text) maps back to the built-in string, whose
    hand-written scanner then runs."""
    for builtin in (_patterns.GPT2, _patterns.CL100K, _patterns.O200K):
        if pattern in (builtin, builtin.replace(r"\p{N}{1,3}+", r"\p{N}{1,3}")):
            return builtin
    return pattern


def _regex(pattern: Any, where: str, path: object) -> str:
    """The fancy-regex form of a ``{"String": s}`` / ``{"Regex": r}`` pattern."""
    if isinstance(pattern, dict) and isinstance(pattern.get("String"), str) and len(pattern) == 1:
        return re.escape(pattern["String"])
    if not (isinstance(pattern, dict) and isinstance(pattern.get("Regex"), str) and len(pattern) == 1):
        raise FormatError(f'a pattern is {{"String": ...}} or {{"Regex": ...}}, got {pattern!r}',
                          path=path, where=where)
    r = pattern["Regex"]
    if _POSSESSIVE_BOUNDED.search(r):
        raise _unsupported(f"regex {r!r}", where, path,
                           "Oniguruma reads 'X{m,n}+' as a repeated group, which fancy-regex reads as possessive")
    r = _builtin(r)
    if "$" in r or re.search(r"(?<!\[)\^", r):
        r = "(?m)" + r  # Oniguruma's ^ and $ are line anchors
    return r


def _normalizers(d: Dict[str, Any], path: object) -> List[Component]:
    norm = d.get("normalizer")
    if norm is None:
        return []
    out: List[Component] = []
    for comp, where in _flatten(norm, "$.normalizer", "normalizers"):
        kind = comp.get("type") if isinstance(comp, dict) else None
        if kind in _UNICODE_FORMS or kind == "Lowercase":
            out.append((kind, "", "", False, False))
        elif kind == "Strip":
            out.append((kind, "", "", bool(comp.get("strip_left", True)), bool(comp.get("strip_right", True))))
        elif kind == "Replace":
            content = comp.get("content")
            if not isinstance(content, str):
                raise FormatError("Replace needs a string content", path=path, where=f"{where}.content")
            out.append((kind, _regex(comp.get("pattern"), f"{where}.pattern", path), content, False, False))
        elif kind == "Prepend":
            prepend = comp.get("prepend")
            if not isinstance(prepend, str):
                raise FormatError("Prepend needs a string prepend", path=path, where=f"{where}.prepend")
            out.append((kind, prepend, "", False, False))
        else:
            raise _unsupported(f"normalizer {kind!r}", f"{where}.type", path)
    return out


def _stages(d: Dict[str, Any], path: object) -> List[Component]:
    pre = d.get("pre_tokenizer")
    if pre is None:
        raise _unsupported("pre_tokenizer null", "$.pre_tokenizer", path,
                           "without a ByteLevel pre-tokenizer the model is not byte-level BPE")
    out: List[Component] = []
    parts = _flatten(pre, "$.pre_tokenizer", "pretokenizers")
    for k, (comp, where) in enumerate(parts):
        kind = comp.get("type") if isinstance(comp, dict) else None
        if out and out[-1][0] == "ByteLevel":
            raise _unsupported(f"pre-tokenizer {kind!r} after ByteLevel", f"{where}.type", path,
                               "it would see byte-level characters")
        if kind == "Split":
            behavior = comp.get("behavior")
            if behavior not in _BEHAVIORS:
                raise _unsupported(f"Split behavior {behavior!r}", f"{where}.behavior", path)
            out.append(("Split", _regex(comp.get("pattern"), f"{where}.pattern", path), behavior,
                        bool(comp.get("invert", False)), False))
        elif kind == "Digits":
            out.append(("Digits", "", "", bool(comp.get("individual_digits", False)), False))
        elif kind == "ByteLevel":
            out.append(("ByteLevel", "", "", bool(comp.get("add_prefix_space", True)),
                        bool(comp.get("use_regex", True))))
        else:
            raise _unsupported(f"pre-tokenizer {kind!r}", f"{where}.type", path)
    if not out or out[-1][0] != "ByteLevel":
        raise _unsupported("pre-tokenizer without ByteLevel", "$.pre_tokenizer", path,
                           "the model is not byte-level BPE")
    return out


def read(data: bytes, path: object = None) -> Read:
    """Reads a ``tokenizer.json``'s bytes (see the module docstring).

    Raises:
        FormatError: not UTF-8, not JSON, not an object, a key listed twice, a
            vocabulary id or a merge of the wrong shape (naming the JSON path).
    """
    try:
        rest, model = _core.read_tokenizer_json(data)
    except FormatError as e:
        raise core_json_error(e, path, data) from None
    return read_json(path, rest.encode("utf-8")), model  # type: ignore[return-value]


def _model(d: Dict[str, Any], model: Optional["_core.TokenizerModel"], path: object) -> "_core.TokenizerModel":
    meta = d.get("model")
    if not isinstance(meta, dict):
        raise FormatError('missing "model" object', path=path, where="$.model")
    kind = meta.get("type", "BPE" if model is not None or "merges" in meta else None)
    if kind != "BPE":
        raise _unsupported(f"model {kind!r}", "$.model.type", path, "bytepair reads byte-level BPE models")
    if meta.get("byte_fallback"):
        raise _unsupported("byte_fallback", "$.model.byte_fallback", path)
    if meta.get("dropout") not in (None, 0, 0.0):
        raise _unsupported(f"dropout {meta.get('dropout')!r}", "$.model.dropout", path,
                           "BPE dropout is random")
    for key in ("continuing_subword_prefix", "end_of_word_suffix"):
        if meta.get(key):
            raise _unsupported(f"{key} {meta.get(key)!r}", f"$.model.{key}", path)
    if model is None:  # the core keeps vocab and merges only when both have their type
        if not isinstance(meta.get("vocab"), dict):
            raise FormatError("model vocab must be an object of token -> id", path=path, where="$.model.vocab")
        raise FormatError("model merges must be a list", path=path, where="$.model.merges")
    return model


def _added(d: Dict[str, Any], model: "_core.TokenizerModel", path: object) -> List[Added]:
    """Added tokens with the ids ``tokenizers`` gives them: the model's id when the
    content is a vocab token, else the next id after the vocab and the added ones."""
    added = d.get("added_tokens") or []
    if not isinstance(added, list):
        raise FormatError("added_tokens must be a list", path=path, where="$.added_tokens")
    out: List[Added] = []
    ids: Dict[str, int] = {}
    size = model.n_tokens
    for k, a in enumerate(added):
        if not isinstance(a, dict) or not isinstance(a.get("content"), str):
            raise FormatError('an added token needs "content" (str)', path=path, where=f"$.added_tokens[{k}]")
        content = a["content"]
        if not content or content in ids:
            continue
        in_vocab = model.get(content)
        if in_vocab is not None:
            new_id = in_vocab
        elif ids:
            top = max(ids.values())
            new_id = top + 1 if top >= size else size
        else:
            new_id = size
        ids[content] = new_id
        special = bool(a.get("special", False))
        normalized = bool(a.get("normalized", not special))
        out.append((content, new_id, normalized, bool(a.get("single_word")), bool(a.get("lstrip")),
                    bool(a.get("rstrip")), special))
    return out


def _template_ids(proc: Dict[str, Any], where: str, path: object) -> Tuple[List[int], List[int]]:
    specials = proc.get("special_tokens") or {}
    before: List[int] = []
    after: List[int] = []
    seen_seq = False
    for k, item in enumerate(proc.get("single") or []):
        if isinstance(item, dict) and "Sequence" in item:
            seen_seq = True
        elif isinstance(item, dict) and "SpecialToken" in item:
            name = item["SpecialToken"].get("id")
            tok = specials.get(name)
            if not isinstance(tok, dict) or not isinstance(tok.get("ids"), list):
                raise FormatError(f"special token {name!r} of the template is not in special_tokens",
                                  path=path, where=f"{where}.single[{k}]")
            (after if seen_seq else before).extend(int(i) for i in tok["ids"])
        else:
            raise FormatError(f"unknown template item {item!r}", path=path, where=f"{where}.single[{k}]")
    return before, after


def _post(d: Dict[str, Any], path: object) -> Tuple[List[int], List[int]]:
    post = d.get("post_processor")
    if post is None:
        return [], []
    before: List[int] = []
    after: List[int] = []
    for comp, where in _flatten(post, "$.post_processor", "processors"):
        kind = comp.get("type") if isinstance(comp, dict) else None
        if kind == "ByteLevel":
            continue
        if kind == "TemplateProcessing":
            b, a = _template_ids(comp, where, path)
        elif kind in ("RobertaProcessing", "BertProcessing"):
            b, a = [int(comp["cls"][1])], [int(comp["sep"][1])]
        else:
            raise _unsupported(f"post-processor {kind!r}", f"{where}.type", path)
        before, after = before + b, a + after
    return before, after


def _check_rest(d: Dict[str, Any], path: object) -> None:
    for key in ("truncation", "padding"):
        if d.get(key) is not None:
            raise _unsupported(f"{key} settings", f"$.{key}", path, f"{key} changes the ids of an encoding")
    dec = d.get("decoder")
    if dec is not None:
        for comp, where in _flatten(dec, "$.decoder", "decoders"):
            kind = comp.get("type") if isinstance(comp, dict) else None
            if kind != "ByteLevel":
                raise _unsupported(f"decoder {kind!r}", f"{where}.type", path,
                                   "a byte-level BPE model decodes with ByteLevel")


def build(file: Read, *, path: object = None) -> Tuple["_core.Pipeline", List[Added]]:
    """The core pipeline of a read ``tokenizer.json`` (:func:`read`) and its
    added tokens ``(content, id, normalized, single_word, lstrip, rstrip, special)``."""
    d, model = file
    if not isinstance(d, dict):
        raise FormatError("a tokenizer.json file is a JSON object", path=path, where="$")
    model = _model(d, model, path)
    _check_rest(d, path)
    normalizers = _normalizers(d, path)
    stages = _stages(d, path)
    before, after = _post(d, path)
    added = _added(d, model, path)
    try:
        pipe = _core.Pipeline(model, bool(d["model"].get("ignore_merges", False)), added,
                              normalizers, stages, before, after)
    except FormatError as e:  # ids the decode table cannot hold (where: the vocab)
        raise FormatError(e.reason or str(e), path=path, where=e.where or None) from None
    except VocabError as e:  # a merge the vocab cannot make (rank: the merge)
        where = None if e.rank is None else f"$.model.merges[{e.rank}]"
        raise FormatError(str(e), path=path, where=where) from e
    return pipe, added


def special_ids(added: List[Added], d: Dict[str, Any]) -> Dict[str, int]:
    """The added tokens marked ``special``, content to id."""
    flags = {a.get("content"): bool(a.get("special")) for a in d.get("added_tokens") or [] if isinstance(a, dict)}
    return {c: i for c, i, *_ in added if flags.get(c)}


def name_of(path: Optional[str], default: str = "tokenizer.json") -> str:
    return path or default
