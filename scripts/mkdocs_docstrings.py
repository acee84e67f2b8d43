"""A griffe extension for the docs site (mkdocs.yml, mkdocstrings' ``extensions``).

The package's docstrings are written for ``help()`` and doctest: ``>>>`` examples
in running text, Sphinx roles (:func:`x`) and double backquotes. Markdown would
read an example's output such as ``['', '토']`` as a link, so before rendering
each run of ``>>>`` lines and their output becomes a ``pycon`` code block, and
roles and double backquotes become plain code spans. The source is not changed.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:func|class|meth|mod|attr|data|exc|obj):`~?([^`]+)`")
_LITERAL = re.compile(r"``([^`]+)``")


def _fence_examples(text: str) -> str:
    out: list[str] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith(">>>"):
            indent = line[: len(line) - len(line.lstrip())]
            block = []
            while i < len(lines) and lines[i].strip():
                block.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i].lstrip())
                i += 1
            out += [f"{indent}```pycon", *(indent + b for b in block), f"{indent}```"]
            continue
        out.append(_LITERAL.sub(r"`\1`", _ROLE.sub(r"`\1`", line)))
        i += 1
    return "\n".join(out)


class DoctestFences(griffe.Extension):
    """Rewrites every docstring of the loaded package as described above."""

    def on_object(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = _fence_examples(obj.docstring.value)
