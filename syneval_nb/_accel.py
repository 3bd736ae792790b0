"""Which implementation of the hot loops runs: the compiled extension :mod:`syneval_nb._speedups` or pure Python.

``bash setup.sh`` builds the extension with Cython (``setup.py``). Each compiled function is a translation of a
pure-Python function that stays in the package as the definition, and ``tests/test_speedups.py`` holds the two
equal on every shipped parse, so the numbers never depend on which one runs; only the speed does
(``benchmarks/syntactic_speed.py`` prints :data:`STATUS`). Pure Python is used when

- the environment variable ``SYNEVAL_NB_PURE_PYTHON`` is ``1`` (read once, at import);
- the extension is not built (no compiler, no Cython, a plain copy of the sources);
- the extension is older than ``_speedups.pyx`` (edited since the last ``bash setup.sh``): a warning says so.
"""
from __future__ import annotations

import os
import warnings
from pathlib import Path
from types import ModuleType

__all__ = ["compiled"]

_OFF = ("1", "true", "yes")


def _load() -> tuple[ModuleType | None, str]:
    if os.environ.get("SYNEVAL_NB_PURE_PYTHON", "").strip().lower() in _OFF:
        return None, "pure Python (SYNEVAL_NB_PURE_PYTHON is set)"
    try:
        from . import _speedups
    except ImportError as exc:
        return None, f"pure Python (the compiled extension is not built: {exc}; `bash setup.sh` builds it)"
    src = Path(__file__).with_name("_speedups.pyx")
    built = Path(_speedups.__file__)
    if src.exists() and src.stat().st_mtime > built.stat().st_mtime:
        msg = (f"{built.name} is older than {src.name}: using pure Python until the extension is rebuilt "
               "(`bash setup.sh`)")
        warnings.warn(msg, RuntimeWarning, stacklevel=2)
        return None, f"pure Python ({msg})"
    return _speedups, f"compiled ({built.name})"


speedups, STATUS = _load()
"""The compiled module (``None``: pure Python) and a sentence saying which implementation runs and why."""


def compiled() -> bool:
    """Whether the compiled extension is in use."""
    return speedups is not None
