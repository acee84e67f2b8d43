"""Verified conversion between tokenizer formats (``bytepair.convert``).

:func:`convert` writes a tokenizer in another format, reads the written file
back with bytepair's reader, and checks on a sample text that the re-loaded
tokenizer gives the same ids. When the format's own library is installed
(``tokenizers`` for ``hf`` and ``gpt2``, ``tiktoken`` for ``tiktoken``) the
written file is also loaded by that library and must give the same ids. Only
then is the file moved into place; a failed conversion leaves no output file.

>>> import os, tempfile
>>> out = os.path.join(tempfile.mkdtemp(), "gpt2.tiktoken")
>>> report = convert("gpt2", out, to="tiktoken", check_text="Hello, 세계! 🎉")
>>> report.identical, report.n_vocab, os.path.exists(out)
(True, 50257, True)
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from .atomic import check_output_path, discard, temporary_directory, write_temp
from .checks import check_range
from .errors import ArgumentError, ConversionError, FormatError, UnsupportedComponentError
from .formats import gpt2 as _gpt2
from .formats import hf_folder as _hf_folder
from .formats import hf_json as _hf
from .formats import load as load_any
from .formats import native as _native
from .formats import tiktoken_ranks as _tiktoken
from .formats.common import UNSET
from .outputs import check_outputs
from .registry import get_encoding, list_encoding_names
from .tokenizer import Tokenizer

PathLike = Union[str, "os.PathLike[str]"]

#: Target formats of :func:`convert` (``hf`` = Hugging Face ``tokenizer.json``;
#: ``transformers`` = a folder that ``transformers``' ``from_pretrained`` loads).
TARGETS = ("bytepair", "tiktoken", "hf", "gpt2", "transformers")
#: Targets that are folders of files.
FOLDER_TARGETS = ("gpt2", "transformers")

#: A short text that exercises the pre-tokenizers: several scripts, emoji
#: (including joiner sequences), code, digit runs, contractions, CamelCase,
#: whitespace runs and line ends. The check text is this plus the bundled sample
#: (English prose and Korean legal text).
MULTILINGUAL_SAMPLE = (
    "The quick brown fox jumps over the lazy dog. I'm sure they'll say it's OK; we've "
    "DONE it, HAVEN'T we?\n"
    "안녕하세요, 토크나이저입니다. 대한민국 헌법 제1조 ① 대한민국은 민주공화국이다.\n"
    "日本語のテキスト、カタカナとひらがな。中文文本：你好，世界！\n"
    "Русский текст: съешь же ещё этих мягких французских булок.\n"
    "हिन्दी पाठ: नमस्ते दुनिया। العربية: مرحبا بالعالم. Ελληνικά: γειά σου κόσμε.\n"
    "emoji: 😀 👍🏽 👨‍👩‍👧‍👦 🇰🇷 ❤️ 🎉🎉🎉 strawberry 12345678 3.14159 1,000,000\n"
    "def parseHTTPResponse(self, rawBytes: bytes) -> dict:\n"
    "    \"\"\"CamelCase_and_snake_case; x+=1  # comment\"\"\"\n"
    "\tif x == 0x1F:  return {'a': [1, 2, 3]}\r\n"
    "   many    spaces      here  \n\n\n  trailing   "
)


def sample_text() -> str:
    """The default check text: :data:`MULTILINGUAL_SAMPLE` and the bundled sample corpus."""
    bundled = resources.files(__package__).joinpath("data").joinpath("sample.txt").read_text(encoding="utf-8")
    return MULTILINGUAL_SAMPLE + "\n\n" + bundled


@dataclass
class ConvertReport:
    """What :func:`convert` did.

    Attributes:
        source: the source as given (path, encoding name or tokenizer name).
        destination: the path written (a folder for ``gpt2``).
        format: the target format.
        files: every file written.
        n_vocab: the tokenizer's ``n_vocab``.
        n_merges: merges written (0 for formats without merges).
        checked_tokens: ids compared on the check text.
        identical: the re-loaded file gave the same ids (always True in a
            returned report: a mismatch raises :class:`ConversionError`).
        same_vocab: the re-loaded tokenizer has the same tokens, pattern and
            special tokens as the source.
        peer: the library that also loaded the file and matched
            (``"tokenizers 0.23.3"``), or None when it is not installed or the
            format has no such library.
        seconds: wall time of the conversion.
        notes: things the user should know (e.g. that ``.tiktoken`` files do
            not store the pattern).
    """

    source: str
    destination: str
    format: str
    files: List[str]
    n_vocab: int
    n_merges: int
    checked_tokens: int
    identical: bool
    same_vocab: bool
    peer: Optional[str]
    seconds: float
    notes: List[str] = field(default_factory=list)

    def summary(self) -> str:
        """A few human-readable lines."""
        lines = [
            f"wrote {self.destination} ({self.format}; n_vocab {self.n_vocab:,}"
            + (f", {self.n_merges:,} merges" if self.n_merges else "")
            + f") from {self.source} in {self.seconds:.2f} s",
            f"verified: re-loaded file gives identical ids on {self.checked_tokens:,} tokens of check text"
            + (f"; {self.peer} agrees" if self.peer else ""),
        ]
        if len(self.files) > 1:
            lines.append("files: " + ", ".join(self.files))
        lines.extend(f"note: {n}" for n in self.notes)
        return "\n".join(lines)


# ---------------------------------------------------------------- source


def _resolve_source(
    source: Any, pattern: Any, special_tokens: Optional[Mapping[str, int]], preset: Optional[str]
) -> Tuple[Tokenizer, str]:
    if isinstance(source, Tokenizer):
        if pattern is not UNSET or special_tokens is not None or preset is not None:
            raise TypeError("pattern=, special_tokens= and preset= apply to file sources only")
        return source, source.name
    if isinstance(source, str) and source in list_encoding_names() and not os.path.exists(source):
        if pattern is not UNSET or special_tokens is not None or preset is not None:
            raise TypeError("pattern=, special_tokens= and preset= apply to file sources only")
        return get_encoding(source), source
    if not isinstance(source, (str, os.PathLike)):
        raise TypeError(f"source must be a Tokenizer, an encoding name or a path, not {type(source).__name__}")
    if not os.path.exists(source):
        raise FileNotFoundError(
            f"{os.fspath(source)}: no such file, and not a bundled encoding ({', '.join(list_encoding_names())})"
        )
    kwargs: Dict[str, Any] = {}
    if pattern is not UNSET:
        kwargs["pattern"] = pattern
    if special_tokens is not None:
        kwargs["special_tokens"] = dict(special_tokens)
    if preset is not None:
        kwargs["preset"] = preset
    tok = load_any(source, **kwargs)
    if not isinstance(tok, Tokenizer):
        raise UnsupportedComponentError(
            "a character-level tokenizer maps characters, not bytes, and has no byte-level "
            "equivalent; it cannot be converted to a byte-level BPE format",
            path=os.fspath(source),
        )
    return tok, os.fspath(source)


# ---------------------------------------------------------------- writing


def _payload(tok: Tokenizer, to: str, merges: str, roles: Optional[Mapping[str, Optional[str]]] = None,
             model_max_length: Optional[int] = None) -> Dict[str, bytes]:
    """File name suffix -> bytes."""
    if to == "transformers":
        return _hf_folder.folder_files(tok, merges=merges, model_max_length=model_max_length, **(roles or {}))
    if to == "bytepair":
        text = json.dumps(_native.to_dict(tok), ensure_ascii=False, indent=1) + "\n"
        return {"": text.encode("utf-8")}
    if to == "tiktoken":
        return {"": _tiktoken.dumps(tok)}
    if to == "hf":
        return {"": _hf.dumps(tok, merges=merges).encode("utf-8")}
    vocab, merges_txt = _gpt2.dumps(tok, merges=merges)
    return {_gpt2.VOCAB_FILE: vocab, _gpt2.MERGES_FILE: merges_txt}


def _reload(tok: Tokenizer, to: str, tmp: Dict[str, str]) -> Tokenizer:
    if to == "bytepair":
        return _native.load(tmp[""])
    if to == "tiktoken":
        return _tiktoken.load(tmp[""], pattern=tok.pattern, special_tokens=tok.special_tokens, name=tok.name)
    if to == "hf":
        return _hf.load(tmp[""], name=tok.name)
    if to == "transformers":
        return _hf.load(tmp[_hf_folder.TOKENIZER_FILE], name=tok.name)
    with open(tmp[_gpt2.VOCAB_FILE], "rb") as f:
        vocab = f.read()
    with open(tmp[_gpt2.MERGES_FILE], "rb") as f:
        merges = f.read()
    return _gpt2.loads(vocab, merges, pattern=tok.pattern, name=tok.name,
                       vocab_path=tmp[_gpt2.VOCAB_FILE], merges_path=tmp[_gpt2.MERGES_FILE])


def _peer_encoder(tok: Tokenizer, to: str, tmp: Dict[str, str]) -> Optional[Tuple[str, Callable[[List[str]], List[int]]]]:
    """The format's own library loading the written file, when installed."""
    if to == "tiktoken":
        try:
            import tiktoken
        except ImportError:
            return None
        if tok.pattern is None:
            return None  # tiktoken needs a pattern
        with open(tmp[""], "rb") as f:
            ranks = {t: i for i, t in enumerate(_tiktoken.parse_ranks(f.read())) if t is not None}
        enc = tiktoken.Encoding(name=f"{tok.name}-check", pat_str=tok.pattern, mergeable_ranks=ranks,
                                special_tokens=tok.special_tokens)
        return f"tiktoken {tiktoken.__version__}", lambda ps: _flat(enc.encode_batch(ps, allowed_special="all"))
    if to == "transformers":
        return _transformers_peer(tmp)
    if to in ("hf", "gpt2"):
        try:
            import tokenizers
        except ImportError:
            return None
        if to == "hf":
            hf = tokenizers.Tokenizer.from_file(tmp[""])
        else:
            with open(tmp[_gpt2.VOCAB_FILE], encoding="utf-8") as f:
                vocab = json.load(f)
            with open(tmp[_gpt2.MERGES_FILE], encoding="utf-8") as f:
                merges = [ln for ln in f.read().split("\n")[1:] if ln]
            d = _hf.to_dict(Tokenizer([bytes([b]) for b in range(256)], tok.pattern))
            d["model"].update(vocab=vocab, merges=merges, ignore_merges=False)
            d["added_tokens"] = [
                {"id": i, "content": s, "single_word": False, "lstrip": False, "rstrip": False,
                 "normalized": False, "special": True}
                for s, i in sorted(tok.special_tokens.items(), key=lambda kv: kv[1])
            ]
            hf = tokenizers.Tokenizer.from_str(json.dumps(d))
        return f"tokenizers {tokenizers.__version__}", lambda ps: _flat(
            e.ids for e in hf.encode_batch(ps, add_special_tokens=False))
    return None


def _transformers_peer(tmp: Dict[str, str]) -> Optional[Tuple[str, Callable[[List[str]], List[int]]]]:
    """transformers' PreTrainedTokenizerFast and AutoTokenizer loading the written folder."""
    try:
        import transformers
    except ImportError:
        return None

    # from_pretrained reads the files by their names: a private copy of the folder
    with temporary_directory("bytepair-transformers-") as copy:
        for name, path in tmp.items():
            shutil.copyfile(path, os.path.join(copy, name))
        fast = transformers.PreTrainedTokenizerFast.from_pretrained(copy, local_files_only=True)
        auto = transformers.AutoTokenizer.from_pretrained(copy, local_files_only=True)

    def both(ps: List[str]) -> List[int]:
        # verbose=False: the check text is longer than a small model_max_length on purpose; transformers'
        # "sequence length is longer" warning is for the user's own calls, which these private copies never see
        ids = _flat(fast(ps, verbose=False)["input_ids"])
        other = _flat(auto(ps, verbose=False)["input_ids"])
        if other != ids:
            raise ConversionError("transformers' AutoTokenizer and PreTrainedTokenizerFast disagree on the "
                                  "written folder; nothing was written")
        return ids

    return f"transformers {transformers.__version__}", both


def _flat(lists: Iterable[List[int]]) -> List[int]:
    return [i for ids in lists for i in ids]


def _first_difference(a: Sequence[int], b: Sequence[int]) -> int:
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return min(len(a), len(b))


def convert(
    source: Any,
    destination: PathLike,
    *,
    to: str,
    check_text: Optional[str] = None,
    pattern: Any = None,
    special_tokens: Optional[Mapping[str, int]] = None,
    preset: Optional[str] = None,
    merges: str = "all",
    check_peer: bool = True,
    bos_token: Optional[str] = None,
    eos_token: Optional[str] = None,
    pad_token: Optional[str] = None,
    model_max_length: Optional[int] = None,
) -> ConvertReport:
    """Writes ``source`` as ``to`` at ``destination`` and proves the result.

    Args:
        source: a :class:`~bytepair.Tokenizer`, a bundled encoding name
            (``"cl100k_base"``) or a path in any format :func:`bytepair.load` reads.
        destination: the output file (a folder for ``gpt2``: ``vocab.json`` and
            ``merges.txt`` are written inside it).
        to: ``"bytepair"``, ``"tiktoken"``, ``"hf"`` or ``"gpt2"``.
        check_text: the text to compare ids on (default :func:`sample_text`).
            Every special token is appended to it and encoded as special.
        pattern: for source files without one (``.tiktoken``): a pattern name
            or regex, or ``"none"`` for no pre-tokenization.
        special_tokens: for ``.tiktoken`` sources: special-token text to id.
        preset: for ``.tiktoken`` sources: a bundled encoding's pattern and specials.
        merges: for ``hf`` / ``gpt2``: ``"all"`` (every split of every token,
            exact) or ``"minimal"`` (one per token).
        check_peer: also load the file with ``tokenizers`` / ``tiktoken`` (and,
            for ``transformers``, with ``transformers``' ``PreTrainedTokenizerFast``
            and ``AutoTokenizer``) when installed.
        bos_token, eos_token, pad_token: for ``transformers``: the special
            tokens that play these roles (each must be a special token).
        model_max_length: for ``transformers``: the model's context length
            (default: transformers' "no limit").

    Returns:
        A :class:`ConvertReport`.

    Raises:
        ConversionError: the written file gives different ids (nothing is left
            at ``destination``).
        FormatError: the source cannot be read, or cannot be written in ``to``
            (e.g. a pattern the target's regex engine reads differently).
    """
    t0 = time.perf_counter()
    if to not in TARGETS:
        raise ArgumentError(f"to must be one of {', '.join(TARGETS)}, not {to!r}", name="to")
    if pattern is None:
        pattern = UNSET
    elif pattern == "none":
        pattern = None
    roles = {"bos_token": bos_token, "eos_token": eos_token, "pad_token": pad_token}
    if to != "transformers" and any(v is not None for v in roles.values()):
        raise ArgumentError("bos_token, eos_token and pad_token apply to the transformers target only", name="to")
    if to not in FOLDER_TARGETS and os.path.isdir(os.fspath(destination)):
        raise FormatError(f"destination is a folder; give a file name for the {to} file", path=os.fspath(destination))
    if isinstance(check_text, str) and not check_text.strip():
        raise ConversionError("check_text has no text to verify the conversion on; omit it to use the bundled sample")
    if model_max_length is not None:
        # transformers writes int(1e30) for "no limit"
        check_range("model_max_length", model_max_length, 1, 10**30)
    check_output_path(destination, folder=to in FOLDER_TARGETS)  # before any work; names the real path
    tok, source_label = _resolve_source(source, pattern, special_tokens, preset)
    files = _payload(tok, to, merges, roles, model_max_length)

    dest = os.fspath(destination)
    if isinstance(source, (str, os.PathLike)) and os.path.exists(source):  # never written over the source
        planned = [os.path.join(dest, k) for k in files] if to in FOLDER_TARGETS else [dest]
        check_outputs([("the destination", p) for p in planned], [("the source", source)])
    finals, report = _write_verified(tok, to, files, dest, check_text, check_peer)
    n_merges, notes = _summary(tok, to, files)
    return ConvertReport(
        source=source_label,
        destination=dest,
        format=to,
        files=[finals[k] for k in files],
        n_vocab=tok.n_vocab,
        n_merges=n_merges,
        checked_tokens=report[0],
        identical=True,
        same_vocab=report[1],
        peer=report[2],
        seconds=time.perf_counter() - t0,
        notes=notes,
    )


def _write_verified(tok: Tokenizer, to: str, files: Dict[str, bytes], dest: str, check_text: Optional[str],
                    check_peer: bool) -> Tuple[Dict[str, str], Any]:
    """Writes ``files`` to temporary files beside ``dest``, verifies them
    (:func:`_verify`) and only then moves them into place; on any failure
    nothing is left (a folder it made is removed). Returns the final paths by
    key and the verification report."""
    if to in FOLDER_TARGETS:
        folder = dest
        made_folder = not os.path.isdir(folder)
        if os.path.exists(folder) and not os.path.isdir(folder):
            raise FormatError(f"the {to} target is a folder (for {', '.join(files)}), but a file "
                              "of that name exists", path=folder)
        os.makedirs(folder, exist_ok=True)
        finals = {k: os.path.join(folder, k) for k in files}
    else:
        folder = os.path.dirname(os.path.abspath(dest))
        made_folder = False
        if os.path.isdir(dest):
            raise FormatError(f"destination is a folder; give a file name for the {to} file", path=dest)
        finals = {"": dest}

    tmp: Dict[str, str] = {}
    try:
        for key, data in files.items():
            tmp[key] = write_temp(folder, data, prefix=".bytepair-convert-")
        report = _verify(tok, to, tmp, check_text, check_peer)
        for key, path in tmp.items():
            os.replace(path, finals[key])
        tmp.clear()
    except BaseException:
        for path in tmp.values():
            discard(path)
        if made_folder:
            shutil.rmtree(folder, ignore_errors=True)
        raise
    return finals, report


def _summary(tok: Tokenizer, to: str, files: Dict[str, bytes]) -> Tuple[int, List[str]]:
    """The merges a written file holds, and the notes for loading it back."""
    n_merges = 0
    if to in ("hf", "gpt2", "transformers"):
        n_merges = len(_gpt2.parse_merges(files[_gpt2.MERGES_FILE])[0]) if to == "gpt2" else \
            len(json.loads(files["" if to == "hf" else _hf_folder.TOKENIZER_FILE])["model"]["merges"])
    elif to == "bytepair":
        n_merges = len(tok.merges)
    notes = []
    if to == "tiktoken":
        notes.append(
            "a .tiktoken file stores only the ranks; load it with pattern= and special_tokens= "
            f"(pattern {tok.pattern_name or 'custom'!s}, special tokens {tok.special_tokens})"
        )
    if to == "gpt2" and tok.pattern is not None and tok.pattern_name != "gpt2":
        notes.append("vocab.json + merges.txt do not store the pattern; load them with pattern="
                     f"{tok.pattern_name or 'the same regex'!r}")
    return n_merges, notes


def _verify(tok: Tokenizer, to: str, tmp: Dict[str, str], check_text: Optional[str],
            check_peer: bool) -> Tuple[int, bool, Optional[str]]:
    text = sample_text() if check_text is None else check_text
    if not isinstance(text, str):
        raise TypeError(f"check_text must be str, not {type(text).__name__}")
    specials = sorted(tok.special_tokens, key=lambda s: tok.special_tokens[s])
    if specials:
        text = text + "\n" + " ".join(specials) + "\n"
    back = _reload(tok, to, tmp)
    # Paragraph by paragraph: the same comparison, in parallel, and without
    # pattern-less tokenizers seeing the whole sample as one piece.
    pieces = [p for p in re.split(r"(?<=\n\n)", text) if p]
    want = _flat(tok.encode_batch(pieces, allowed_special="all"))
    got = _flat(back.encode_batch(pieces, allowed_special="all"))
    _compare(want, got, tok, "bytepair's re-loaded file", to)
    same_vocab = (
        back.token_bytes_list == tok.token_bytes_list
        and back.special_tokens == tok.special_tokens
        and back.pattern == tok.pattern
    )
    peer_name = None
    if check_peer:
        try:
            peer = _peer_encoder(tok, to, tmp)
        except UnsupportedComponentError:
            peer = None  # e.g. a pattern only bytepair's own reader takes back (gpt2 files)
        except Exception as e:  # tokenizers raises plain Exception for files it rejects
            if isinstance(e, FileNotFoundError) and e.filename not in tmp.values():
                raise  # the temporary directory the user set is missing: the error names it
            raise ConversionError(
                f"the {to} file was written but its own library cannot load it ({e}); nothing was written"
            ) from e
        if peer is not None:
            peer_name, encode = peer
            _compare(want, encode(pieces), tok, peer_name, to)
    return len(want), same_vocab, peer_name


def _compare(want: List[int], got: List[int], tok: Tokenizer, who: str, to: str) -> None:
    if want == got:
        return
    i = _first_difference(want, got)
    context = tok.decode(want[max(0, i - 5): i + 5])
    raise ConversionError(
        f"conversion to {to} is not exact: {who} gives different ids from token {i} on "
        f"(expected {want[i:i + 5]}, got {got[i:i + 5]}, near {context!r}); nothing was written"
    )


__all__ = ["MULTILINGUAL_SAMPLE", "TARGETS", "ConversionError", "ConvertReport", "convert", "sample_text"]
