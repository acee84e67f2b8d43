"""One special-token default for every entry point of the library: special-token
text raises (tiktoken's ``allowed_special=set()``, ``disallowed_special="all"``)
unless the tokenizer was built with ``special_text="text"``, and direct callers
of :mod:`bytepair.budget` get the same fast path as the methods."""

import inspect

import pytest

import bytepair
from bytepair import _core, budget
from bytepair.errors import DisallowedSpecialError
from bytepair.shards import pipeline
from bytepair.special import NO_SPECIALS

TEXT = "hello <|endoftext|> world, and more words after it"
ENC = bytepair.get_encoding("gpt2")
PLAIN_TEXT = ENC.with_special_text("text")


def _calls(tok, path, **kw):
    """Every library entry point with special-token arguments, called with its
    defaults (or with ``kw``)."""
    return {
        "encode": lambda: tok.encode(TEXT, **kw),
        "encode_to_numpy": lambda: tok.encode_to_numpy(TEXT, **kw).tolist(),
        "encode_batch": lambda: tok.encode_batch([TEXT], **kw)[0],
        "encode_batch_to_numpy": lambda: tok.encode_batch_to_numpy([TEXT], **kw)[0].tolist(),
        "encode_files": lambda: tok.encode_files(path, **kw)[0].tolist(),
        "pipeline.encode_files": lambda: pipeline.encode_files(tok, path, **kw)[0].tolist(),
        "count": lambda: tok.count(TEXT, **kw),
        "count(limit)": lambda: tok.count(TEXT, limit=3, **kw),
        "count_batch": lambda: tok.count_batch([TEXT], **kw)[0],
        "truncate_text": lambda: tok.truncate_text(TEXT, 3, **kw),
        "chunk_text": lambda: tok.chunk_text(TEXT, 3, **kw),
        "encode_with_offsets": lambda: tok.encode_with_offsets(TEXT, **kw)[0],
        "encode_with_unstable": lambda: tok.encode_with_unstable(TEXT, **kw),
        "budget.count": lambda: budget.count(tok, TEXT, limit=3, **kw),
        "budget.truncate_text": lambda: budget.truncate_text(tok, TEXT, 3, **kw),
        "budget.chunk_text": lambda: budget.chunk_text(tok, TEXT, 3, **kw),
        "budget.chunk_spans": lambda: budget.chunk_spans(tok, TEXT, 3, **kw),
        "budget.encode_with_offsets": lambda: budget.encode_with_offsets(tok, TEXT, **kw)[0],
        "budget.encode_with_unstable": lambda: budget.encode_with_unstable(tok, TEXT, **kw),
    }


NAMES = list(_calls(ENC, None))


@pytest.fixture(scope="module")
def path(tmp_path_factory):
    p = tmp_path_factory.mktemp("specials") / "doc.txt"
    p.write_text(TEXT, encoding="utf-8")
    return p


@pytest.mark.parametrize("name", NAMES)
def test_special_text_raises_by_default(name, path):
    with pytest.raises(DisallowedSpecialError):
        _calls(ENC, path)[name]()


@pytest.mark.parametrize("name", NAMES)
def test_special_text_text_makes_it_plain_by_default(name, path):
    # a special_text="text" tokenizer's default is tiktoken's explicit disallowed_special=()
    assert _calls(PLAIN_TEXT, path)[name]() == _calls(ENC, path, disallowed_special=())[name]()


def test_plain_text_is_not_the_special_id():
    assert PLAIN_TEXT.encode(TEXT) == ENC.encode_ordinary(TEXT)
    assert ENC.eot_token not in PLAIN_TEXT.encode(TEXT)


def _library_functions():
    """Every public function or method of the library that takes ``allowed_special``."""
    owners = [bytepair.Tokenizer, budget, pipeline]
    for owner in owners:
        for name, fn in inspect.getmembers(owner, inspect.isfunction):
            params = inspect.signature(fn).parameters
            if not name.startswith("_") and "allowed_special" in params:
                yield f"{getattr(owner, '__name__', owner)}.{name}", params


def test_every_entry_point_has_the_one_default():
    seen = []
    for name, params in _library_functions():
        seen.append(name)
        assert params["allowed_special"].default is NO_SPECIALS, name
        assert params["disallowed_special"].default is None, name
    assert len(seen) >= 15, seen  # the walk found the entry points


def _spy(monkeypatch, name):
    calls = []
    real = getattr(_core, name)

    def spy(*args):
        calls.append(args)
        return real(*args)

    monkeypatch.setattr(_core, name, spy)
    return calls


@pytest.mark.parametrize("allowed", [NO_SPECIALS, set(), frozenset()])
def test_direct_budget_callers_take_the_fast_path(monkeypatch, allowed):
    # the core's fast path is (None, None): every special token disallowed
    # without name lists (the slow path passes ([], [names]))
    calls = _spy(monkeypatch, "count_until")
    assert budget.count(ENC, "hello world " * 50, limit=3, allowed_special=allowed) == 4
    assert calls and calls[-1][-2:] == (None, None)
    calls = _spy(monkeypatch, "truncate_at")
    assert budget.truncate_text(ENC, "hello world " * 50, 3, allowed_special=allowed)
    assert calls and calls[-1][-2:] == (None, None)


def test_direct_unstable_callers_take_the_fast_path(monkeypatch):
    want = ENC.encode_with_unstable("hello fanta")

    class Refused:
        def __init__(self, *args, **kwargs):
            raise AssertionError("the general path ran")

    monkeypatch.setattr(budget, "_Prepared", Refused)
    assert budget.encode_with_unstable(ENC, "hello fanta") == want
    with pytest.raises(AssertionError, match="general path"):
        budget.encode_with_unstable(ENC, "hello fanta", allowed_special="all")
