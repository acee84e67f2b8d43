"""Module paths that moved when the tools left the library's top level. Importing
an old path still works: it warns (``DeprecationWarning``) and gives the module
at its new place. Nothing here is imported until someone asks for an old path.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings
from types import ModuleType
from typing import Optional, Sequence

#: old module path -> new module path
MOVED = {
    "bytepair.audit": "bytepair.inspect.audit",
    "bytepair.diff": "bytepair.inspect.diff",
    "bytepair.html": "bytepair.render.html",
    "bytepair.plot": "bytepair.render.plot",
    "bytepair.distributed.native": "bytepair.shards.pipeline",
    "bytepair.distributed.readers": "bytepair.shards.readers",
}


class _Alias(importlib.abc.Loader):
    def __init__(self, new: str) -> None:
        self.new = new

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        warnings.warn(f"{spec.name} moved to {self.new}; import it from there", DeprecationWarning, stacklevel=2)
        module = importlib.import_module(self.new)
        sys.modules[spec.name] = module
        return module

    def exec_module(self, module: ModuleType) -> None:
        pass


class MovedFinder(importlib.abc.MetaPathFinder):
    """Finds the old paths in :data:`MOVED`."""

    def find_spec(
        self, fullname: str, path: Optional[Sequence[str]], target: Optional[ModuleType] = None
    ) -> Optional[importlib.machinery.ModuleSpec]:
        new = MOVED.get(fullname)
        if new is None:
            return None
        return importlib.util.spec_from_loader(fullname, _Alias(new))


def install() -> None:
    """Adds the finder to ``sys.meta_path`` once."""
    if not any(isinstance(f, MovedFinder) for f in sys.meta_path):
        sys.meta_path.append(MovedFinder())
