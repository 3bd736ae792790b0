"""Regression harness: run every notebook in notebooks/ through papermill with small parameters on the real
shared data and assert on the JSON it writes.

Each notebook ``notebooks/NN_name.ipynb`` needs ``tests/notebook_checks/check_NN_name.py`` with ``PARAMS`` (the
small CI parameters) and ``check(result: dict)`` (assertions on values). A notebook without one fails here.
"""
from __future__ import annotations

import importlib
import json

import nbformat
import pytest

from syneval_nb.app.runner import list_notebooks, run_notebook

NOTEBOOKS = list_notebooks()


def test_there_are_notebooks():
    assert len(NOTEBOOKS) >= 1


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_committed_clean(nb):
    """Committed without outputs and with a code cell tagged ``parameters``."""
    book = nbformat.read(str(nb), as_version=4)
    code = [c for c in book.cells if c.cell_type == "code"]
    assert any("parameters" in c.metadata.get("tags", []) for c in code), f"{nb.name}: no 'parameters' cell"
    assert all(not c.outputs for c in code), f"{nb.name} is committed with outputs"
    src = "".join(c.source for c in code)
    assert "write_results(" in src, f"{nb.name} does not write its results file"


@pytest.mark.slow
@pytest.mark.parametrize("nb", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs(nb, shared_data, tmp_path):
    try:
        checks = importlib.import_module(f"notebook_checks.check_{nb.stem}")
    except ModuleNotFoundError:
        pytest.fail(f"no tests/notebook_checks/check_{nb.stem}.py for {nb.name}")
    params = {"data_dir": str(shared_data), **getattr(checks, "PARAMS", {})}
    result = run_notebook(nb, tmp_path, params, html_copy=False)
    assert json.loads((tmp_path / f"{nb.stem}.json").read_text()) == result
    checks.check(result)  # the permute_human run is its own test below (once, not here again)


def _permuted_check(nb) -> bool:
    try:
        return hasattr(importlib.import_module(f"notebook_checks.check_{nb.stem}"), "PERMUTED_PARAMS")
    except ModuleNotFoundError:  # reported by test_notebook_runs
        return False


PERMUTED = [nb for nb in NOTEBOOKS if _permuted_check(nb)]


@pytest.mark.slow
@pytest.mark.parametrize("nb", PERMUTED, ids=[f"{p.stem}-permuted" for p in PERMUTED])
def test_notebook_permuted_human(nb, shared_data, tmp_path, monkeypatch):
    """The ``permute_human`` sanity check: a check module with ``PERMUTED_PARAMS`` and ``check_permuted(result)``
    runs its notebook with every human score shuffled; no "X beats Y" / "X correlates" verdict may hold. The kernel
    runs with matplotlib's Agg backend (it inherits ``MPLBACKEND``): the figures are built but not encoded to PNG,
    which test_notebook_runs does for every figure (about 0.5 s of CPU a figure)."""
    monkeypatch.setenv("MPLBACKEND", "agg")
    checks = importlib.import_module(f"notebook_checks.check_{nb.stem}")
    params = {"data_dir": str(shared_data), **checks.PERMUTED_PARAMS}
    result = run_notebook(nb, tmp_path, params, html_copy=False)
    checks.check_permuted(result)
