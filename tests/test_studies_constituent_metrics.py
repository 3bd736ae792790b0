"""studies.constituent_metrics: the paper's worked example and the chapter's results on a small real sample."""
import pytest

from syneval_nb.studies import constituent_metrics as study


def test_worked_example_by_hand():
    ex = study.worked_example()
    assert ex["stm"].matches == (6, 3, 1) and ex["stm"].totals == (7, 4, 2)
    assert ex["stm"].score == pytest.approx((6 / 7 + 3 / 4 + 1 / 2) / 3)
    # Collins & Duffy kernel, lam = 1: K(h,r) = 16, K(h,h) = 36, K(r,r) = 90 (tests/test_syntactic.py)
    assert ex["tkm"].score == pytest.approx(16 / (36 * 90) ** 0.5)


def test_results_on_a_small_sample(shared_data):
    ch = study.run(shared_data, sample=6, seed=0, n_resamples=100, progress=False)
    r = study.results(ch, study.worked_example())
    assert r["study"]["families"] == ["STM", "TKM"] and r["n_ted_segments"] == 78
    assert r["signatures"]["stm"].startswith("STM-9|depth:9|eff:no|tree:constituency|hypfault:worst|version:syneval-nb-")
    assert r["headline"]["MQM z|pearson"]["TKM"] == r["curves"]["literal mean"]["MQM z|TKM"]
    # 6 source segments: below the cluster floor, every verdict exploratory
    assert {v["verdict"] for v in r["verdicts"].values()} == {"exploratory"}
