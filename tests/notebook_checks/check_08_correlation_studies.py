"""CI check of notebooks/08_correlation_studies.ipynb: 30 TED source segments (x 13 systems), 30 WMT21 lines,
200 resamples."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import pearsonr

from notebook_checks.check_03_constituent_metrics import _shape

PARAMS = {"sample": 30, "n_resamples": 200, "seed": 0}


def check(result: dict) -> None:
    w = result["worked"]
    assert round(w["stm_example"], 3) == 0.702  # Liu & Gildea Sec. 2: (6/7 + 3/4 + 1/2) / 3
    assert round(w["williams_t"], 3) == 1.361 and round(w["williams_p_two_sided"], 3) == 0.187  # Howell p. 262
    assert w["mqm_borderline_84"] == -20.0  # published average for Borderline, segment 84

    ted = result["ted"]
    assert (ted["n_segments"], ted["n_systems"], ted["n_rows"]) == (30, 13, 390)
    # MQM pairs of the seed-0 sample, |diff| > 0 / 1 / 5 (full data: 24100 / 17861 / 5251, see tests/test_stats.py)
    assert ted["mqm_pairs"] == {"0": 1343, "1": 941, "5": 335}
    # the outside anchor does not depend on the sample: shared README, COMET (ref-A) vs DA z, Pearson 0.361
    assert result["comet_anchor"]["A"] == pytest.approx(0.361, abs=5e-4)

    # per-system r recomputed with scipy from the results' own inputs is not possible (scores are not in the JSON);
    # pinned values measured on this sample
    ps = result["per_system"]["MQM z"]
    assert ps["Borderline|BLEU-4"] == pytest.approx(0.119, abs=0.002)
    assert ps["Facebook-AI|-|len diff|"] == pytest.approx(0.805, abs=0.002)
    assert ps["Facebook-AI|chrF"] == pytest.approx(0.435, abs=0.002)
    h = result["headline"]["MQM z|pearson"]
    for m in ("STM-4", "HWCM-4", "DSTM-4", "TKM", "DTKM", "BLEU-4", "chrF", "-hyp length", "-ref length",
              "-|len diff|", "len ratio", "placebo"):
        assert m in h, m
    # one reference choice: de-en ref A is the headline; the B and A+B variants are shown next to it
    by_ref = result["deen_system_r_by_reference"]
    assert by_ref["A"]["BLEU-4"] == result["deen_system_r"]["BLEU-4"]
    assert by_ref["A"]["BLEU-4"] == pytest.approx(0.1737, abs=5e-4)
    assert by_ref["B"]["BLEU-4"] == pytest.approx(0.1805, abs=5e-4)
    _shape(result)
    v = result["verdicts"]
    assert v["STM loses less than BLEU from depth 1 to 9 (MQM z, literal mean)"]["verdict"] == "holds"
    assert v["STM-4 beats BLEU-4 (MQM z, Pearson)"]["verdict"] == "cannot tell"
    assert v["STM-4 beats chrF within source segments (MQM z)"]["verdict"] == "does not hold"
    assert "TKM beats BLEU-4 at system level (TED zh-en, mean MQM z, 13 systems)" in v
    assert v["TKM beats permuted human scores at system level (TED zh-en, mean MQM z, 13 systems)"]["test"] == \
        "beats permuted human scores"
    # Holm over every verdict of the chapter (83 verdicts + 10 talk variants): one family
    allv = {**v, **result["variant_verdicts"]}
    assert len(allv) == 93 and {x["family_size"] for x in allv.values()} == {93}
    # the length control's r with MQM, recomputed with sacrebleu's tokenizer and scipy
    assert result["length_r_mqm"] == pytest.approx(_length_r(), abs=1e-9)


def _length_r() -> float:
    from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

    from syneval_nb.data import load_ted_zhen_mqm, sample_segments

    ted = load_ted_zhen_mqm()
    mt = sample_segments(ted[~ted["is_human"]], PARAMS["sample"], PARAMS["seed"])
    tok = Tokenizer13a()
    n = lambda s: len(tok(s.rstrip()).split())  # noqa: E731
    neg = -np.abs(np.array([n(a) - n(b) for a, b in zip(mt["target"], mt["refB"])], dtype=float))
    return float(pearsonr(neg, mt["mqm"])[0])
