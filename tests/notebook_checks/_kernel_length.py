"""The length diagnosis of the kernel rows (notebooks 03, 04, 08, issue 22), recomputed outside the study code.

On the CI sample the notebooks report Kendall tau of TKM / DTKM (lambda = 1 and Moschitti's 0.4) with hypothesis
and reference length. Here the kernel scores come from the kit's sentence-level ``tkm``/``dtkm`` (pinned to hand
values in tests/test_syntactic.py), the lengths from sacrebleu's 13a tokenizer and tau from scipy's kendalltau, on
the sample drawn by the kit's loader and sampler (tests/test_data.py checks those).
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import pytest
from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a
from scipy.stats import kendalltau

from notebook_checks._data import load_ted_zhen_mqm, sample_segments
from syneval_nb.metrics import syntactic
from syneval_nb.trees.ptb import read_ptb


@lru_cache(maxsize=8)
def expected(family: str, lam: float, sample: int, seed: int) -> tuple[float, float, float]:
    """(tau with hypothesis length, tau with refB length, median score) of ``family`` (``"tkm"``/``"dtkm"``)."""
    ted = load_ted_zhen_mqm()
    mt = sample_segments(ted[~ted["is_human"]], sample, seed)
    fn = {"tkm": syntactic.tkm, "dtkm": syntactic.dtkm}[family]
    scores = np.array([fn(read_ptb(h), [read_ptb(r)], lam=lam).score for h, r in zip(mt["ptb"], mt["ptb_refB"])])
    tok = Tokenizer13a()
    n = lambda s: len(tok(s.rstrip()).split())  # noqa: E731
    hyp = np.array([n(x) for x in mt["target"]], dtype=float)
    ref = np.array([n(x) for x in mt["refB"]], dtype=float)
    return float(kendalltau(scores, hyp)[0]), float(kendalltau(scores, ref)[0]), float(np.median(scores))


def check(result: dict, family: str, sample: int, seed: int) -> None:
    """The diagnosis rows ``FAMILY`` (lambda 1) and ``FAMILY λ=0.4`` agree with the recomputation."""
    d = result["length_diagnosis"]
    for row, lam in ((family.upper(), 1.0), (f"{family.upper()} λ=0.4", 0.4)):
        tau_h, tau_r, med = expected(family, lam, sample, seed)
        assert d[row]["tau_hyp"] == pytest.approx(tau_h, abs=1e-9), row
        assert d[row]["tau_ref"] == pytest.approx(tau_r, abs=1e-9), row
        assert d[row]["median"] == pytest.approx(med, rel=1e-9), row
        assert d[row]["tau_hyp_low"] <= d[row]["tau_hyp"] <= d[row]["tau_hyp_high"], row
