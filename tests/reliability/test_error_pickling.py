"""Errors cross process boundaries (worker processes, Ray tasks) by pickle:
every bytepair error comes back of the same class, with the same message and
every attribute, ``argument`` included, whatever its ``__init__`` takes."""

from __future__ import annotations

import pickle

import pytest

from bytepair import _core, errors
from bytepair.distributed import errors as derrors

CASES = [
    errors.TrainingError("memory_limit 'x' is not a size", argument="memory_limit"),
    errors.ArgumentError("sizes must be positive", name="sizes", low=1, high=3),
    errors.FormatError("bad token", path="t.json", where="$.model.vocab"),
    errors.ConversionError("not exact", path="out.json"),
    errors.ShardError("s.jsonl", "not valid JSONL at line 3"),
    errors.UnknownTokenError("token id 9 is not in the vocabulary"),
    errors.ThreadsError("num_threads must be a positive int or None, not 0", argument="num_threads"),
    errors.OutputIsInputError("-o is the input"),
    derrors.ShardsFailedError({"a.txt": "not UTF-8", "b.txt": "empty"}, {"shards": []}, what="2 shards", total=2),
    derrors.EngineError("max_retries must be between 0 and 1000, got -1", argument="max_retries"),
    derrors.OutputDirError("another tokenizer"),
]


@pytest.mark.parametrize("error", CASES, ids=[type(e).__name__ for e in CASES])
def test_error_survives_pickle(error):
    back = pickle.loads(pickle.dumps(error))
    assert type(back) is type(error)
    assert str(back) == str(error) and back.args == error.args
    assert vars(back) == vars(error)
    assert back.argument == error.argument


def test_error_raised_by_the_core_survives_pickle():
    with pytest.raises(errors.BytepairError) as info:
        _core.CoreBPE([b"a", b"a"], {}, None)
    back = pickle.loads(pickle.dumps(info.value))
    assert type(back) is type(info.value) and str(back) == str(info.value)
    assert vars(back) == vars(info.value)


def test_every_error_class_is_covered():
    classes = {c for m in (errors, derrors) for c in vars(m).values()
               if isinstance(c, type) and issubclass(c, errors.BytepairError)}
    covered = {type(e) for e in CASES}
    for cls in classes - covered:
        if issubclass(cls, errors.FormatError):
            e = cls("a message", path="f.json", where=3)
            e.argument = "x"
        else:
            e = cls("a message", argument="x")
        back = pickle.loads(pickle.dumps(e))
        assert type(back) is cls and str(back) == str(e) and back.argument == "x"
