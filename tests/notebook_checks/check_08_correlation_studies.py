"""CI check of notebooks/08_correlation_studies.ipynb: 30 TED segments (x 13 systems), 30 WMT21 lines."""
from __future__ import annotations

import pytest

PARAMS = {"sample": 30, "n_resamples": 200, "seed": 0}

VERDICTS = {"holds", "does not hold", "mixed", "cannot tell"}


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

    p = result["pooled"]
    assert p["BLEU_4"] == pytest.approx(0.169, abs=0.02)
    assert p["BLEU_4_ci"][0] < p["BLEU_4"] < p["BLEU_4_ci"][1]
    assert p["len_diff"] == pytest.approx(0.342, abs=0.02)  # length alone beats BLEU_4 on this sample too
    for m in ("STM_4", "HWCM_4", "DSTM_4", "TKM", "DTKM"):
        assert -0.2 < p[m] < 0.5, m

    sl = result["system_level"]
    assert sl["WMT21 de-en, ref A"]["n_systems"] == 19 and sl["TED zh-en, refB"]["n_systems"] == 13
    assert sl["WMT21 de-en, ref A"]["BLEU_4"] == pytest.approx(0.174, abs=0.03)  # measured on these 30 lines
    assert all(v in VERDICTS for v in result["verdicts"].values())
    assert result["verdicts"]["control: length difference beats sentence BLEU (pooled MQM)"] == "holds"
