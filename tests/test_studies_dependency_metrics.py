"""studies.dependency_metrics: the paper's worked example and the Table-7-like pick on a small real sample."""
import pytest
from scipy.stats import rankdata

from syneval_nb.studies import dependency_metrics as study


def test_worked_example_by_hand():
    ex = study.worked_example()
    assert sorted(" ".join(c) for c in ex["two_word"]) == ["have I", "have pen", "pen a", "pen red"]
    assert ex["hwcm"].score == pytest.approx((0.8 + 0.75 + 0.5) / 3)
    assert ex["dstm"].score == pytest.approx((0.8 + 0.5 + 0.0) / 3)
    assert ex["dtkm"].score == pytest.approx(4 / 17)


def test_table7_pick_and_results(shared_data):
    ch = study.run(shared_data, sample=10, seed=0, n_resamples=100, progress=False)
    t7 = study.table7_example(ch, order=4, min_words=10)
    lit = ch.literal
    # percentile ranks recomputed with scipy (average ranks / n) at the picked row
    i = int(lit.frame.index[(lit.frame["system"] == t7["row"]["system"])
                            & (lit.frame["seg_id"] == t7["row"]["seg_id"])][0])
    n = len(lit.frame)
    assert t7["hwcm_pct"] == pytest.approx(rankdata(lit.segment[("HWCM", 4)])[i] / n, abs=1e-12)
    assert t7["bleu_pct"] == pytest.approx(rankdata(lit.segment[("BLEU", 4)])[i] / n, abs=1e-12)
    assert t7["row"]["mqm_fluency"] == 0 and len(t7["row"]["target"].split()) >= 10
    assert t7["hwcm"].score == pytest.approx(lit.segment[("HWCM", 4)][i], abs=1e-12)
    r = study.results(ch, study.worked_example(), t7)
    assert r["table7_example"]["seg_id"] == int(t7["row"]["seg_id"])
    assert r["study"]["families"] == ["HWCM", "DSTM", "DTKM"]
