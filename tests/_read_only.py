"""A command run with a file or folder read-only, also as root (tests of read-only parse caches, issue 24)."""
from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest


def run_read_only(target, *cmd: str) -> subprocess.CompletedProcess:
    """Run ``cmd`` with ``target`` (a file or a folder) read-only: as root (whom file modes do not stop) on a
    read-only bind mount in a private mount namespace, else with the write bits removed."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    if os.geteuid() != 0:
        os.chmod(target, 0o555 if Path(target).is_dir() else 0o444)
        try:
            return subprocess.run(list(cmd), capture_output=True, text=True, env=env, timeout=300)
        finally:
            os.chmod(target, 0o755 if Path(target).is_dir() else 0o644)
    if shutil.which("unshare") is None:
        pytest.skip("root without unshare: cannot make a read-only place")
    t = shlex.quote(str(target))
    script = f"mount --bind {t} {t} && mount -o remount,bind,ro {t} && exec {shlex.join(cmd)}"
    probe = subprocess.run(["unshare", "-m", "sh", "-c", f"mount --bind {t} {t}"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"root without mount namespaces: {probe.stderr[:80]!r}")
    return subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True, env=env, timeout=300)
