"""The manifest of an encoded dataset: the settings a run was made with, and
which shards are done (so an interrupted run resumes and a changed setting is
refused)."""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from ..atomic import atomic_write_text
from ..errors import json_error_text
from ..tokenizer import Tokenizer
from .driver import PathLike
from .errors import OutputDirError

MANIFEST = "manifest.json"
_MANIFEST_FORMAT = "bytepair-dataset"
_MANIFEST_VERSION = 1


def tokenizer_fingerprint(tok: Tokenizer) -> str:
    """A hash of everything that decides the ids: token bytes in rank order,
    the pattern and the special tokens (not the name).

    >>> from bytepair import get_encoding
    >>> a, b = get_encoding("gpt2"), get_encoding("r50k_base")
    >>> tokenizer_fingerprint(a) == tokenizer_fingerprint(b)
    True
    >>> tokenizer_fingerprint(get_encoding("gpt2"))[:7]
    'sha256:'
    """
    h = hashlib.sha256()
    head = {
        "pattern": tok.pattern,
        "special_tokens": sorted(tok.special_tokens.items(), key=lambda kv: kv[1]),
    }
    h.update(json.dumps(head, ensure_ascii=False, sort_keys=True).encode("utf-8"))
    for t in tok.token_bytes_list:
        h.update(len(t).to_bytes(4, "little"))
        h.update(t)
    return "sha256:" + h.hexdigest()


def dtype_for(n_vocab: int) -> str:
    """``"uint16"`` when every id fits in 16 bits, else ``"uint32"``.

    >>> dtype_for(50257), dtype_for(65536), dtype_for(65537)
    ('uint16', 'uint16', 'uint32')
    """
    return "uint16" if n_vocab <= 1 << 16 else "uint32"


def run_settings(
    tok: Tokenizer,
    out_format: str,
    append_eot: bool,
    text_column: str,
    allowed: Any,
    disallowed: Any,
) -> Dict[str, Any]:
    return {
        "tokenizer": {
            "name": tok.name,
            "fingerprint": tokenizer_fingerprint(tok),
            "n_vocab": tok.n_vocab,
            "eot_token": tok.eot_token,
        },
        "dtype": dtype_for(tok.n_vocab),
        "output_format": out_format,
        "append_eot": append_eot,
        "text_column": text_column,
        "allowed_special": allowed if isinstance(allowed, str) else sorted(allowed),
        "disallowed_special": disallowed if isinstance(disallowed, str) else sorted(disallowed),
    }


def read_manifest(out_dir: PathLike) -> Optional[Dict[str, Any]]:
    """The manifest of an output directory, or None when it has none."""
    path = os.path.join(os.fspath(out_dir), MANIFEST)
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        return None
    try:
        m = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        why = json_error_text(e) if isinstance(e, json.JSONDecodeError) else f"not UTF-8 at byte {e.start}"
        raise OutputDirError(
            f"{path}: damaged manifest ({why}); delete the directory or use another one"
        ) from e
    if not isinstance(m, dict) or m.get("format") != _MANIFEST_FORMAT:
        raise OutputDirError(
            f"{path}: not a bytepair dataset manifest; use another output directory"
        )
    if m.get("version") != _MANIFEST_VERSION:
        raise OutputDirError(f"{path}: unknown manifest version {m.get('version')!r}")
    return m


def check_compatible(path: str, old: Dict[str, Any], settings: Dict[str, Any]) -> None:
    if old.get("tokenizer", {}).get("fingerprint") != settings["tokenizer"]["fingerprint"]:
        raise OutputDirError(
            f"{path} was written with tokenizer {old.get('tokenizer', {}).get('name')!r}"
            f" ({old.get('tokenizer', {}).get('fingerprint')}), not with this one"
            f" ({settings['tokenizer']['name']!r}, {settings['tokenizer']['fingerprint']});"
            " outputs of two tokenizers are never mixed: use another output directory"
        )
    for key in (
        "dtype",
        "output_format",
        "append_eot",
        "text_column",
        "allowed_special",
        "disallowed_special",
    ):
        if old.get(key) != settings[key]:
            raise OutputDirError(
                f"{path} was written with {key}={old.get(key)!r}, this run has {settings[key]!r};"
                " use the same settings to resume, or another output directory"
            )


def write_manifest(
    out_dir: str, settings: Dict[str, Any], entries: Dict[str, Dict[str, Any]], order: Sequence[str]
) -> Dict[str, Any]:
    names = [n for n in order if n in entries] + [n for n in entries if n not in set(order)]
    shards = [entries[n] for n in names]
    manifest = {
        "format": _MANIFEST_FORMAT,
        "version": _MANIFEST_VERSION,
        **settings,
        "documents": sum(s["documents"] for s in shards),
        "tokens": sum(s["tokens"] for s in shards),
        "shards": shards,
    }
    atomic_write_text(
        os.path.join(out_dir, MANIFEST), json.dumps(manifest, indent=1, ensure_ascii=False) + "\n"
    )
    return manifest


def source_stamp(path: str) -> Dict[str, int]:
    """What a resumed run compares to decide that a source is unchanged."""
    st = os.stat(path)
    return {"source_bytes": st.st_size, "source_mtime_ns": st.st_mtime_ns}


def is_done(
    out_dir: str, entry: Optional[Dict[str, Any]], src: str, itemsize: int, out_format: str
) -> bool:
    if entry is None:
        return False
    out = os.path.join(out_dir, entry["output"])
    try:
        stamp = source_stamp(src)
        # a manifest without the time (older bytepair) is redone: safe
        if any(entry.get(k) != v for k, v in stamp.items()):
            return False
        size = os.path.getsize(out)
    except OSError:
        return False
    return out_format != "bin" or size == entry["tokens"] * itemsize


def pending_shards(
    out_dir: str, settings: Dict[str, Any], names: Mapping[str, str], out_format: str
) -> Tuple[Dict[str, Dict[str, Any]], List[str]]:
    """What a run in ``out_dir`` has left to do: the manifest entries of the
    shards already done, and the outputs (keys of ``names``, output name to
    source, in order) still to write. A manifest of other settings is refused."""
    old = read_manifest(out_dir)
    entries: Dict[str, Dict[str, Any]] = {}
    if old is not None:
        check_compatible(os.path.join(out_dir, MANIFEST), old, settings)
        entries = {e["output"]: e for e in old.get("shards", [])}
    itemsize = 2 if settings["dtype"] == "uint16" else 4
    todo = [n for n in names if not is_done(out_dir, entries.get(n), names[n], itemsize, out_format)]
    for n in todo:
        entries.pop(n, None)
    return entries, todo
