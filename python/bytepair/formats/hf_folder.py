"""A ``transformers``-ready folder: ``tokenizer.json`` (see :mod:`.hf_json`),
``tokenizer_config.json`` and ``special_tokens_map.json``, such that
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
from typing import Dict, Mapping, Optional

from ..errors import ArgumentError, ConversionError, FormatError
from ..tokenizer import Tokenizer
from . import hf_json

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


__all__ = ["CONFIG_FILE", "FILES", "ROLES", "SPECIAL_MAP_FILE", "TOKENIZER_FILE", "check_roles", "folder_files"]
