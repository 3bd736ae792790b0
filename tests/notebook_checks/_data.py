"""The shared data sets the checks read, loaded once per test process (test_notebooks.py runs whole on one worker)
and handed out as copies, so no check sees another's changes; the sampling helpers as syneval_nb.data has them."""
from __future__ import annotations

from functools import lru_cache

import pandas as pd

from syneval_nb import data
from syneval_nb.data import sample_segment_ids, sample_segments

__all__ = ["load_ted_zhen_mqm", "load_newstest2021_zhen_mqm", "sample_segments", "sample_segment_ids"]


@lru_cache(maxsize=1)
def _ted() -> pd.DataFrame:
    return data.load_ted_zhen_mqm()


@lru_cache(maxsize=1)
def _news() -> pd.DataFrame:
    return data.load_newstest2021_zhen_mqm()


def load_ted_zhen_mqm() -> pd.DataFrame:
    """:func:`syneval_nb.data.load_ted_zhen_mqm` of the shared data (a copy)."""
    return _ted().copy()


def load_newstest2021_zhen_mqm() -> pd.DataFrame:
    """:func:`syneval_nb.data.load_newstest2021_zhen_mqm` of the shared data (a copy)."""
    return _news().copy()
