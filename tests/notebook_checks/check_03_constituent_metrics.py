"""Checks for notebooks/03_constituent_metrics.ipynb on 50 TED segments (x 13 systems) and 50 WMT21 lines."""
import pytest

from notebook_checks import _length_control as length_control

PARAMS = {"sample": 50, "seed": 0, "max_depth": 9}


def check(result: dict) -> None:
    # the paper's worked example, exactly: (6/7 + 3/4 + 1/2) / 3
    assert result["worked_example_stm"] == pytest.approx((6 / 7 + 3 / 4 + 1 / 2) / 3)
    assert round(result["worked_example_stm"], 3) == 0.702
    assert result["worked_example_fractions"] == pytest.approx([6 / 7, 3 / 4, 1 / 2])
    # TKM of the same pair by hand (Collins & Duffy, the notebook's default lam = 1): K(h,r) = 16, K(h,h) = 36,
    # K(r,r) = 90 (the arithmetic is written out in tests/test_syntactic.py::test_tkm_is_the_best_reference_cosine)
    assert result["worked_example_tkm"] == pytest.approx(16 / (36 * 90) ** 0.5)
    assert result["n_ted_segments"] == 50 * 13
    assert result["n_deen_systems"] == 19
    assert result["ted_reference"] == "refB"
    # measured on this sample (seed 0): STM D=9 r = 0.168 with MQM Fluency, TKM 0.130, BLEU-4 0.050
    assert result["best_depth_fluency"] == 9
    assert result["stm_best_r_fluency"] == pytest.approx(0.168, abs=0.01)
    assert result["tkm_r_fluency"] == pytest.approx(0.130, abs=0.01)
    assert result["ted_r"]["MQM Fluency|BLEU|4"] == pytest.approx(0.050, abs=0.01)
    assert result["ted_r"]["MQM total|STM|3"] == pytest.approx(0.237, abs=0.01)
    # the length-only control -|len diff|, recomputed with sacrebleu's tokenizer and scipy
    length_control.check(result, PARAMS["sample"], PARAMS["seed"])
    assert result["deen_tkm_system_r"] == pytest.approx(0.330, abs=0.02)
    assert result["signatures"]["stm"].startswith("STM|depth:9|eff:yes")
