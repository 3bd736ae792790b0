"""Shared fixtures: the real shared data folder (``../shared/data``), resolved like the notebooks do."""
from __future__ import annotations

from pathlib import Path

import pytest

from syneval_nb.paths import data_dir


@pytest.fixture(scope="session")
def shared_data() -> Path:
    d = data_dir()
    if not (d / "wmt21-deen").is_dir() or not (d / "ted-zhen-mqm").is_dir():
        pytest.fail(f"the shared data is not at {d}; set SYNEVAL_NB_DATA or put ../shared beside the checkout")
    return d


@pytest.fixture(scope="session")
def deen_dir(shared_data: Path) -> Path:
    return shared_data / "wmt21-deen"


@pytest.fixture(scope="session")
def ted_dir(shared_data: Path) -> Path:
    return shared_data / "ted-zhen-mqm"
