"""Checks for notebooks/04_dependency_metrics.ipynb on 50 TED segments (x 13 systems) and 50 WMT21 lines."""
import pytest

from notebook_checks import _length_control as length_control

PARAMS = {"sample": 50, "seed": 0, "max_depth": 9}


def check(result: dict) -> None:
    # the paper's dependency example: chains of "I have a red pen" and HWCM of "I have a blue pen" by hand
    assert sorted(result["worked_example_two_word_chains"]) == ["have I", "have pen", "pen a", "pen red"]
    assert result["worked_example_hwcm"] == pytest.approx((0.8 + 0.75 + 0.5) / 3)
    assert result["worked_example_dstm"] == pytest.approx((0.8 + 0.5 + 0.0) / 3)
    assert result["worked_example_dtkm"] == pytest.approx(4 / 17)
    assert result["n_ted_segments"] == 50 * 13
    assert result["n_deen_systems"] == 19
    # measured on this sample (seed 0): HWCM D=9 r = 0.122 with MQM Fluency, DTKM 0.118, BLEU-4 0.050
    assert result["hwcm_best_r_fluency"] == pytest.approx(0.122, abs=0.01)
    assert result["dtkm_r_fluency"] == pytest.approx(0.118, abs=0.01)
    assert result["ted_r"]["MQM total|HWCM|4"] == pytest.approx(0.289, abs=0.01)
    assert result["ted_r"]["MQM Fluency|BLEU|4"] == pytest.approx(0.050, abs=0.01)
    # the length-only control -|len diff|, recomputed with sacrebleu's tokenizer and scipy
    length_control.check(result, PARAMS["sample"], PARAMS["seed"])
    assert result["deen_dtkm_system_r"] == pytest.approx(0.259, abs=0.02)
    ex = result["table7_example"]
    assert ex["hwcm_pct"] > ex["bleu_pct"] + 0.3  # the rule found a high-HWCM, low-BLEU segment
    assert (ex["system"], ex["seg_id"]) == ("Borderline", 462)
    assert result["signatures"]["hwcm"].startswith("HWCM|depth:9|eff:yes|eps:0.001")
