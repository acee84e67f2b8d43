"""A ``transformers`` folder: ``tokenizer.json`` (see :mod:`.hf_json`),
``tokenizer_config.json`` and ``special_tokens_map.json``.

Reading (:func:`load`) gives the ids ``AutoTokenizer.from_pretrained(folder)``
of ``transformers`` 5 gives, from the files alone:

- ``tokenizer_config.json``'s ``tokenizer_class`` decides the pipeline.
  ``PreTrainedTokenizerFast``, ``PreTrainedTokenizer``, ``TokenizersBackend``
  and ``LlamaTokenizer`` (with a byte-level file) run ``tokenizer.json`` as it
  is. ``Qwen2Tokenizer`` and ``GPT2Tokenizer`` keep the file's vocabulary,
  merges and post-processor but build the rest as their class does:
  ``Qwen2Tokenizer`` NFC, Qwen2's split regex and ``ByteLevel``;
  ``GPT2Tokenizer`` no normalizer and ``ByteLevel`` with GPT-2's regex; both
  drop ``ignore_merges``. Their added tokens are those the config lists in
  ``added_tokens_decoder``. Any other class is refused (``transformers``
  builds a pipeline of its own for it, which bytepair does not know).
- Tokens the config names (``added_tokens_decoder``, ``bos_token``,
  ``eos_token``, ..., ``additional_special_tokens``, ``extra_special_tokens``)
  that the file lacks are added after it, as ``transformers`` adds them.
- ``add_bos_token`` / ``add_eos_token`` are ignored: ``transformers`` drops them
  when a ``tokenizer.json`` is present, so ``encode(text,
  add_special_tokens=True)`` adds what the file's post-processor adds.

Writing (:func:`folder_files`): the three files, such that
``transformers.PreTrainedTokenizerFast.from_pretrained(folder)`` and
``AutoTokenizer.from_pretrained(folder)`` give bytepair's ids.

The roles ``bos_token``, ``eos_token`` and ``pad_token`` are set from special
tokens the caller names (each must be one of the tokenizer's special tokens);
every other special token is listed as an additional special token. No
post-processor is written, so ``encode(text)`` with transformers' default
``add_special_tokens=True`` adds nothing: the ids are exactly bytepair's
``encode(text, allowed_special="all")``. Nothing here imports transformers.

>>> from bytepair import get_encoding
>>> files = folder_files(get_encoding("gpt2"), eos_token="<|endoftext|>")
>>> sorted(files)
['special_tokens_map.json', 'tokenizer.json', 'tokenizer_config.json']
>>> import json; json.loads(files["special_tokens_map.json"])
{'eos_token': '<|endoftext|>'}
"""

from __future__ import annotations

import json
import os
from typing import Any, Callable, Dict, List, Mapping, Optional

from ..errors import ArgumentError, ConversionError, FormatError, UnsupportedComponentError
from ..tokenizer import Tokenizer
from . import hf_json, hf_pipeline
from .common import read_json
from .hf_tokenizer import PipelineTokenizer

TOKENIZER_FILE = "tokenizer.json"
CONFIG_FILE = "tokenizer_config.json"
SPECIAL_MAP_FILE = "special_tokens_map.json"
FILES = (TOKENIZER_FILE, CONFIG_FILE, SPECIAL_MAP_FILE)
ROLES = ("bos_token", "eos_token", "pad_token")


def check_roles(tok: Tokenizer, roles: Mapping[str, Optional[str]]) -> Dict[str, str]:
    """The named roles, each checked to be a special token of ``tok``."""
    out: Dict[str, str] = {}
    for role, token in roles.items():
        if role not in ROLES:
            raise ArgumentError(f"unknown special-token role {role!r}; roles are {', '.join(ROLES)}", name="roles")
        if token is None:
            continue
        if token not in tok.special_tokens:
            known = ", ".join(sorted(tok.special_tokens)) or "none"
            raise FormatError(f"{role} {token!r} is not a special token of this tokenizer (special tokens: {known});"
                              " add it as a special token first")
        out[role] = token
    return out


def folder_files(
    tok: Tokenizer,
    *,
    bos_token: Optional[str] = None,
    eos_token: Optional[str] = None,
    pad_token: Optional[str] = None,
    model_max_length: Optional[int] = None,
    merges: str = "all",
) -> Dict[str, bytes]:
    """File name -> bytes of the three files."""
    if model_max_length is not None and (
        not isinstance(model_max_length, int) or isinstance(model_max_length, bool) or model_max_length < 1
    ):
        raise ConversionError(f"model_max_length must be a whole number >= 1 (the model's context length), "
                              f"got {model_max_length!r}")
    roles = check_roles(tok, {"bos_token": bos_token, "eos_token": eos_token, "pad_token": pad_token})
    specials = sorted(tok.special_tokens.items(), key=lambda kv: kv[1])
    others = [s for s, _ in specials if s not in roles.values()]
    special_map: Dict[str, object] = dict(roles)
    if others:
        special_map["additional_special_tokens"] = others
    config: Dict[str, object] = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        # transformers' "no limit" value (int(1e30)) unless the caller knows the model's
        "model_max_length": model_max_length if model_max_length is not None else int(1e30),
        "clean_up_tokenization_spaces": False,
        "added_tokens_decoder": {
            str(i): {"content": s, "lstrip": False, "normalized": False, "rstrip": False, "single_word": False,
                     "special": True}
            for s, i in specials
        },
        **roles,
    }
    if others:
        config["additional_special_tokens"] = others

    def dump(obj: object) -> bytes:
        return (json.dumps(obj, ensure_ascii=False, indent=2) + "\n").encode("utf-8")

    return {
        TOKENIZER_FILE: hf_json.dumps(tok, merges=merges).encode("utf-8"),
        CONFIG_FILE: dump(config),
        SPECIAL_MAP_FILE: dump(special_map),
    }


# ---------------------------------------------------------------- reading

#: ``transformers`` 5's ``Qwen2Tokenizer`` split regex (``PRETOKENIZE_REGEX``).
QWEN2_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
               r"|\s*[\r\n]+|\s+(?!\S)|\s+")
#: Classes that run ``tokenizer.json`` as it is.
AS_IS = ("PreTrainedTokenizerFast", "PreTrainedTokenizer", "TokenizersBackend", "LlamaTokenizer")
#: Named special-token roles, in the order ``transformers`` adds them.
NAMED = ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token")


def _byte_level(add_prefix_space: bool, use_regex: bool) -> Dict[str, Any]:
    return {"type": "ByteLevel", "add_prefix_space": add_prefix_space, "trim_offsets": True,
            "use_regex": use_regex}


def _qwen2(doc: Dict[str, Any], config: Dict[str, Any]) -> None:
    doc["normalizer"] = {"type": "NFC"}
    doc["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": QWEN2_REGEX}, "behavior": "Isolated", "invert": False},
        _byte_level(bool(config.get("add_prefix_space")), False)]}


def _gpt2(doc: Dict[str, Any], config: Dict[str, Any]) -> None:
    doc["normalizer"] = None
    doc["pre_tokenizer"] = _byte_level(bool(config.get("add_prefix_space")), True)


#: Classes that build their pipeline themselves around the file's model.
REBUILT: Dict[str, Callable[[Dict[str, Any], Dict[str, Any]], None]] = {
    "Qwen2Tokenizer": _qwen2, "GPT2Tokenizer": _gpt2}
#: The special tokens those classes name when the config does not.
DEFAULT_ROLES: Dict[str, Dict[str, str]] = {
    "Qwen2Tokenizer": {r: "<|endoftext|>" for r in ("unk_token", "eos_token", "pad_token")},
    "GPT2Tokenizer": {r: "<|endoftext|>" for r in ("unk_token", "bos_token", "eos_token")},
}


def _token(value: Any) -> Optional[Dict[str, Any]]:
    """An added-token entry from a config value: a string (special, not
    normalized) or an ``AddedToken`` object."""
    if isinstance(value, str):
        return {"content": value, "special": True, "normalized": False}
    if isinstance(value, dict) and isinstance(value.get("content"), str):
        return {k: value[k] for k in ("content", "special", "normalized", "lstrip", "rstrip", "single_word")
                if k in value}
    return None


def _config_tokens(config: Dict[str, Any]) -> List[Dict[str, Any]]:
    """The tokens the config names, in the order ``transformers`` adds them."""
    out: List[Dict[str, Any]] = []
    decoder = config.get("added_tokens_decoder")
    if isinstance(decoder, dict):
        for key in sorted(decoder, key=lambda k: int(k) if str(k).isdigit() else 1 << 62):
            t = _token(decoder[key])
            if t is not None:
                out.append(t)
    named: List[Any] = [config.get(r) for r in NAMED]
    extra = config.get("extra_special_tokens")
    for group in (config.get("additional_special_tokens"), extra.values() if isinstance(extra, dict) else extra):
        if isinstance(group, (list, tuple, type({}.values()))):
            named.extend(group)
    for value in named:
        t = _token(value)
        if t is not None:
            t["special"] = True
            out.append(t)
    return out


def _tokenizer_class(config: Dict[str, Any], path: str) -> str:
    if config.get("auto_map"):
        raise UnsupportedComponentError("unsupported component auto_map: the folder's tokenizer is code of its own",
                                        path=path, where="$.auto_map")
    name = config.get("tokenizer_class") or "TokenizersBackend"
    name = str(name).removesuffix("Fast") if str(name) != "PreTrainedTokenizerFast" else str(name)
    if name not in AS_IS and name not in REBUILT:
        raise UnsupportedComponentError(
            f"unsupported component tokenizer_class {name!r}: transformers builds a pipeline of its own for it; "
            f"bytepair reads {', '.join(AS_IS + tuple(REBUILT))} (load the folder's tokenizer.json for the "
            "file's own pipeline)", path=path, where="$.tokenizer_class")
    if config.get("split_special_tokens"):
        raise UnsupportedComponentError("unsupported component split_special_tokens=true", path=path,
                                        where="$.split_special_tokens")
    return name


def with_config(doc: Dict[str, Any], config: Dict[str, Any], path: str) -> Optional[Dict[str, Any]]:
    """The ``tokenizer.json`` (without its vocab and merges) that ``AutoTokenizer``
    runs for this config, or ``None`` when that is the file as it is."""
    name = _tokenizer_class(config, path)
    out = dict(doc)
    changed = name in REBUILT
    # the class's own pipeline takes its added tokens from the config's list when
    # there is one (_config_tokens), else from the file, as the file's pipeline does
    added: List[Dict[str, Any]] = []
    if not changed or not isinstance(config.get("added_tokens_decoder"), dict):
        added = [a for a in doc.get("added_tokens") or [] if isinstance(a, dict)]
    if changed:
        out["model"] = {**out.get("model", {}), "ignore_merges": False}
        REBUILT[name](out, config)
    have = {a.get("content") for a in added}
    for t in _config_tokens({**DEFAULT_ROLES.get(name, {}), **config}):
        if t["content"] and t["content"] not in have:
            added.append(t)
            have.add(t["content"])
            changed = True
    out["added_tokens"] = added
    return out if changed else None


def load(folder: str, *, data: Optional[bytes] = None, name: Optional[str] = None) -> Tokenizer:
    """Reads a ``transformers`` folder as ``AutoTokenizer`` would (module docstring)."""
    path = os.path.join(folder, TOKENIZER_FILE)
    if data is None:
        with open(path, "rb") as f:
            data = f.read()
    name = name or os.path.basename(os.path.abspath(folder)) or TOKENIZER_FILE
    config_path = os.path.join(folder, CONFIG_FILE)
    if not os.path.isfile(config_path):
        return hf_json.loads(data, path=path, name=name)
    with open(config_path, "rb") as f:
        config = read_json(config_path, f.read())
    if not isinstance(config, dict):
        raise FormatError("a tokenizer_config.json file is a JSON object", path=config_path, where="$")
    special_map = os.path.join(folder, SPECIAL_MAP_FILE)
    if "added_tokens_decoder" not in config and os.path.isfile(special_map):
        # transformers reads the older special_tokens_map.json then, over the config's roles
        with open(special_map, "rb") as f:
            roles = read_json(special_map, f.read())
        if isinstance(roles, dict):
            config = {**config, **roles}
    file = hf_pipeline.read(data, path)
    changed = with_config(file[0], config, config_path)
    if changed is None:
        return hf_json.loads(data, path=path, name=name, parsed=file)
    return PipelineTokenizer(data, path=path, name=name, parsed=file, override=changed)


__all__ = ["CONFIG_FILE", "FILES", "ROLES", "SPECIAL_MAP_FILE", "TOKENIZER_FILE", "check_roles", "folder_files",
           "load", "with_config"]
