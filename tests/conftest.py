"""Shared fixtures: the real shared data folder (``../shared/data``), resolved like the notebooks do."""
from __future__ import annotations

from pathlib import Path

import pytest

from syneval_nb.paths import data_dir
from syneval_nb.app.runner import import_papermill_for_the_command_line

# Several test modules import nbformat at collection, and every worker runs notebooks through papermill: import it
# once per process the way `run` and `report` do, without jsonschema's optional rfc3987_syntax (which compiles its
# grammars at import, ~3 s of CPU a process, for a format no notebook schema uses).
import_papermill_for_the_command_line()


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


# The files that take longest, longest first (one process, seconds measured with ``--durations=0``). With
# ``--dist loadfile`` each file runs whole on one worker and a worker takes the next file when it runs out; the
# longest-first order keeps one long file from starting last while the other workers sit idle. A file not listed
# runs after these, in the usual order; a stale list costs time, never a result.
LONGEST_FIRST = [
    "test_notebooks.py", "test_cluster.py", "test_long_lines.py", "test_rst_crf.py", "test_one_parse.py",
    "test_your_test_set.py", "test_wheel.py", "test_discourse.py", "test_speedups.py", "test_parsing.py",
    "test_lexical.py", "test_score.py", "test_report.py", "test_sentence_mode.py", "test_runner.py",
]


def pytest_collection_modifyitems(items):
    rank = {name: k for k, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: the order within a file is kept
