"""The length-only control of notebooks 03 and 04, recomputed independently of the kit's metric code.

On the CI sample (50 TED segments x 13 systems, seed 0, reference refB) the notebooks report the Pearson r of
``-|len diff|`` with MQM total and MQM Fluency. Here the same quantity comes from sacrebleu's own 13a tokenizer
and scipy's pearsonr (the sample itself is drawn by the kit's loader and sampler, which tests/test_data.py checks).
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import pytest
from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a
from scipy.stats import pearsonr

from notebook_checks._data import load_ted_zhen_mqm, sample_segments


@lru_cache(maxsize=4)
def expected(sample: int, seed: int) -> tuple[float, float]:
    """(r with MQM Fluency, r with MQM total) of -|hypothesis tokens - refB tokens| on the sample."""
    ted = load_ted_zhen_mqm()
    mt = sample_segments(ted[~ted["is_human"]], sample, seed)
    tok = Tokenizer13a()
    n = lambda s: len(tok(s.rstrip()).split())  # noqa: E731
    neg_diff = -np.abs(np.array([n(h) - n(r) for h, r in zip(mt["target"], mt["refB"])], dtype=float))
    return (float(pearsonr(neg_diff, mt["mqm_fluency"])[0]), float(pearsonr(neg_diff, mt["mqm"])[0]))


def check(result: dict, sample: int, seed: int) -> None:
    flu, tot = expected(sample, seed)
    assert result["length_r_fluency"] == pytest.approx(flu, abs=1e-9)
    assert result["length_r_mqm"] == pytest.approx(tot, abs=1e-9)
    # on this sample length alone beats sentence BLEU-4 on fluency (0.116 vs 0.050 when measured)
    assert result["length_r_fluency"] > result["ted_r"]["MQM Fluency|BLEU|4"]
