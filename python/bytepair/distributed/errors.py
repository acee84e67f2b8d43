"""Exceptions of the scale-out layer.

They subclass :class:`bytepair.errors.BytepairError` and ``ValueError`` like the
rest of bytepair's input errors, so ``except ValueError`` catches them.
"""

from __future__ import annotations

from typing import Any, Dict, Optional

from ..errors import BytepairError, ShardError


class ShardsFailedError(BytepairError, ValueError):
    """Some shards failed while the others finished.

    Attributes:
        failures: shard path to the reason it failed, in input order.
        manifest: for :func:`~bytepair.distributed.encode_dataset`, the manifest
            of the shards that were written (also saved as ``manifest.json``);
            None for :func:`~bytepair.distributed.count_chunks`, whose result
            would be incomplete.
    """

    def __init__(
        self,
        failures: Dict[str, str],
        manifest: Optional[Dict[str, Any]] = None,
        *,
        what: str = "shards",
        total: Optional[int] = None,
    ) -> None:
        self.failures = dict(failures)
        self.manifest = manifest
        # a reason that starts with its shard's path (``path:line: ...``) is not prefixed again
        shown = [reason if reason.startswith(f"{path}:") else f"{path}: {reason}"
                 for path, reason in failures.items()]
        if total == 1 and len(shown) == 1:  # the only shard: its reason is the whole story
            super().__init__(shown[0])
            return
        lines = [f"{len(failures)} of the {what} failed:"] + [f"  {line}" for line in shown]
        if total is None or len(failures) < total:
            lines.append("the other shards finished; fix or remove these and run again")
        else:
            lines.append("fix or remove these and run again")
        super().__init__("\n".join(lines))


class OutputDirError(BytepairError, ValueError):
    """An output directory holds a dataset made with another tokenizer or other
    settings; bytepair never mixes two datasets in one directory."""


class EngineError(BytepairError, ValueError):
    """An engine name or engine option is not valid."""


class EngineUnavailableError(EngineError, ImportError):
    """The engine's optional dependency is not installed (``pip install bytepair[ray]``)."""


__all__ = [
    "EngineError",
    "EngineUnavailableError",
    "OutputDirError",
    "ShardError",
    "ShardsFailedError",
]
