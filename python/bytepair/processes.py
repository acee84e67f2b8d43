"""Worker processes that end with their parent, whatever kills it: what the
worker pools of the tools (the local engine of :mod:`bytepair.distributed`,
``bytepair serve``) share."""

from __future__ import annotations

import ctypes
import os
import threading
import time

#: The ``prctl`` option by which the kernel signals a process when its parent dies (Linux).
_PR_SET_PDEATHSIG = 1


def stop_with_parent(parent: int, sig: int) -> None:
    """Has ``sig`` sent to this process when its parent (pid ``parent``) dies.

    On Linux the kernel sends it (``prctl(PR_SET_PDEATHSIG)``; the parent's id
    is read again afterwards, as it may have died before the call); elsewhere
    a daemon thread polls the parent's id twice a second and sends it. Call it
    as the worker starts, with ``parent`` read in the parent.
    """
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(_PR_SET_PDEATHSIG, sig, 0, 0, 0) == 0 and os.getppid() == parent:
            return
    except (OSError, AttributeError):
        pass

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os.kill(os.getpid(), sig)

    threading.Thread(target=watch, daemon=True).start()
