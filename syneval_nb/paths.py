"""Where the kit finds its data and writes its caches and reports.

Resolution order for the data folder (the folder that holds ``wmt21-deen/`` and ``ted-zhen-mqm/``):

1. an explicit ``folder`` argument;
2. the environment variable ``SYNEVAL_NB_DATA``;
3. ``../shared/data`` beside the repository checkout (how CI and the developers run);
4. the user cache ``~/.cache/syneval-nb/data`` (``SYNEVAL_NB_CACHE`` overrides ``~/.cache/syneval-nb``),
   which :mod:`syneval_nb.data` fills by downloading the public files.
"""
from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK_DIR = REPO_ROOT / "notebooks"
KIT_DATA_DIR = REPO_ROOT / "data"  # small material written by the kit's authors (examples, fixtures)


def cache_dir() -> Path:
    """The kit's cache folder (parse cache, downloads); created on demand."""
    root = Path(os.environ.get("SYNEVAL_NB_CACHE", Path.home() / ".cache" / "syneval-nb"))
    root.mkdir(parents=True, exist_ok=True)
    return root


def shared_data_dir() -> Path | None:
    """``../shared/data`` beside the checkout, if it exists."""
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
