"""Every ``>>>`` example in the package's docstrings runs and must hold."""

import doctest
import importlib
import pkgutil

import pytest

import bytepair
from conftest import optional

MODULES = sorted(
    m.name for m in pkgutil.walk_packages(bytepair.__path__, "bytepair.") if not m.name.endswith(("_core", "__main__"))
)
#: The optional dependencies a module of the package may import at its top
#: (the ``serve`` extra); a module that fails to import for any other reason
#: fails its test.
OPTIONAL_AT_IMPORT = {"starlette", "uvicorn"}


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    try:
        mod = importlib.import_module(name)
    except ImportError as e:
        missing = (e.name or "").split(".")[0]
        if missing not in OPTIONAL_AT_IMPORT:
            raise
        optional(missing)  # skips, or fails under BYTEPAIR_REQUIRE_OPTIONAL=1
        raise  # the dependency imports on its own: the module's import fails for another reason
    result = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
