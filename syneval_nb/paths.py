"""Where the kit finds its data and writes its caches and reports.

Resolution order for the data folder (the folder that holds ``wmt21-deen/`` and ``ted-zhen-mqm/``):

1. an explicit ``folder`` argument;
2. the environment variable ``SYNEVAL_NB_DATA``;
3. ``../shared/data`` beside the repository checkout (how CI and the developers run);
4. the user cache ``~/.cache/syneval-nb/data`` (``SYNEVAL_NB_CACHE`` overrides ``~/.cache/syneval-nb``),
   which :mod:`syneval_nb.data` fills by downloading the public files.

The kit's own small files (the report notebook ``09_evaluate_your_system.ipynb`` and ``data/examples/``) are read
from the checkout when the package runs from one, and otherwise from the package data of the installed wheel
(``syneval_nb/resources/``, copied there at build time by ``setup.py``; found with :mod:`importlib.resources`).
The chapters' notebooks 01-08 exist only in a checkout (``NOTEBOOK_DIR``).
"""
from __future__ import annotations

import importlib.metadata
import importlib.resources
import os
import re
from pathlib import Path
from syneval_nb import __version__

__all__ = ["KIT_DATA_DIR", "data_dir", "cache_dir"]
# ``install_hint`` is a helper of the parsers and the CLI (not in __all__)

REPO_ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK_DIR = REPO_ROOT / "notebooks"  # the chapters (a checkout only; a wheel has no notebooks/ folder)
REPORT_NOTEBOOK_NAME = "09_evaluate_your_system.ipynb"


def in_checkout() -> bool:
    """True when the package runs from a source checkout (editable install or ``PYTHONPATH``), not a wheel."""
    return (REPO_ROOT / "pyproject.toml").is_file() and (REPO_ROOT / "data" / "examples").is_dir()


def package_resources() -> Path | None:
    """The installed package's data folder ``syneval_nb/resources`` (``notebooks/``, ``examples/``), or None
    when there is none (a checkout: the files are in ``notebooks/`` and ``data/`` there)."""
    res = importlib.resources.files("syneval_nb").joinpath("resources")
    return res if isinstance(res, Path) and res.is_dir() else None


def _kit_data_dir() -> Path:
    """The folder holding ``examples/``: ``data/`` of the checkout, else the wheel's package data."""
    if in_checkout():
        return REPO_ROOT / "data"
    res = package_resources()
    return res if res is not None and (res / "examples").is_dir() else REPO_ROOT / "data"


KIT_DATA_DIR = _kit_data_dir()  # small material written by the kit's authors (examples, fixtures)


class KitFileMissing(FileNotFoundError):
    """A file of the kit itself (a notebook, an example) is in neither the checkout nor the package data."""


def report_notebook() -> Path:
    """The report notebook (``syneval-nb report``): ``notebooks/09_evaluate_your_system.ipynb`` of the checkout,
    else the copy in the installed package's data."""
    candidates = [NOTEBOOK_DIR / REPORT_NOTEBOOK_NAME] if in_checkout() else []
    res = package_resources()
    if res is not None:
        candidates.append(res / "notebooks" / REPORT_NOTEBOOK_NAME)
    for c in candidates:
        if c.is_file():
            return c
    raise KitFileMissing(f"the report notebook {REPORT_NOTEBOOK_NAME} is not installed (neither in a checkout's "
                         "notebooks/ nor in the package data): reinstall syneval-nb from its wheel or sdist")


def install_hint(extra: str) -> str:
    """How to add pyproject.toml's ``extra``: in a checkout, else from the wheel the kit came from (not on PyPI)."""
    if in_checkout():
        return f"bash setup.sh (the checkout's full environment) or pip install -e '.[{extra}]'"
    tag = re.search(r"^Tag: (\S+)", f"{importlib.metadata.distribution('syneval-nb').read_text('WHEEL')}\nTag: *", re.M)
    return f"pip install 'syneval_nb-{__version__}-{tag[1]}.whl[{extra}]' (the wheel it came from: not on PyPI)"


def cache_dir() -> Path:
    """The kit's cache folder (parse cache, downloads); created on demand."""
    root = Path(os.environ.get("SYNEVAL_NB_CACHE", Path.home() / ".cache" / "syneval-nb"))
    root.mkdir(parents=True, exist_ok=True)
    return root


def shared_data_dir() -> Path | None:
    """``../shared/data`` beside the checkout, if it exists (never for an installed wheel)."""
    if not in_checkout():
        return None
    cand = REPO_ROOT.parent / "shared" / "data"
    return cand if cand.is_dir() else None


def data_dir(folder: str | os.PathLike | None = None) -> Path:
    """Resolve the data folder (see the module docstring for the order).

    Returns the user cache folder as the last resort even if it is still empty; the loaders in
    :mod:`syneval_nb.data` download into it on first use.
    """
    if folder is not None:
        p = Path(folder).expanduser()
        if not p.is_dir():
            raise FileNotFoundError(f"data folder {p} does not exist")
        return p
    env = os.environ.get("SYNEVAL_NB_DATA")
    if env:
        p = Path(env).expanduser()
        if not p.is_dir():
            raise FileNotFoundError(f"SYNEVAL_NB_DATA={env} is not a folder")
        return p
    shared = shared_data_dir()
    if shared is not None:
        return shared
    p = cache_dir() / "data"
    p.mkdir(parents=True, exist_ok=True)
    return p
