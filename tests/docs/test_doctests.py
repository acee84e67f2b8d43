"""Every ``>>>`` example in the package's docstrings runs and must hold."""

import doctest
import importlib
import pkgutil

import pytest

import bytepair

MODULES = sorted(
    m.name for m in pkgutil.walk_packages(bytepair.__path__, "bytepair.") if not m.name.endswith(("_core", "__main__"))
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    try:
        mod = importlib.import_module(name)
    except ImportError as e:  # optional extras (matplotlib, ray) may be absent
        pytest.skip(f"{name}: {e}")
    result = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
