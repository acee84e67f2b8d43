"""Runs the installed ``bytepair`` executable as a user types it: a subprocess
of the venv's entry point, with this checkout's package first on PYTHONPATH."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import bytepair

EXE = Path(sys.executable).with_name("bytepair")


def bytepair_cli(*argv: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    pkg = Path(bytepair.__file__).resolve().parent.parent
    env["PYTHONPATH"] = os.pathsep.join([str(pkg), env.get("PYTHONPATH", "")])
    return subprocess.run([str(EXE), *argv], capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout,
                          stdin=subprocess.DEVNULL)
