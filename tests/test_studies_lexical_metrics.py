"""studies.lexical_metrics on a small real sample: tables against scipy, corpus BLEU against sacrebleu."""
import numpy as np
import pytest
import sacrebleu
from scipy.stats import pearsonr

from syneval_nb import stats
from syneval_nb.studies import common, lexical_metrics as study


def test_worked_examples_match_by_hand():
    w = study.worked_examples()
    assert len(w) == 13 and (w["kit"] - w["by hand"]).abs().max() < 1e-12


def test_tables_system_level_and_verdicts(shared_data):
    ted = common.load_ted(shared_data, sample=8, seed=0)
    ls = study.score(ted, progress=False)
    seg = study.segment_tables(ls, n_resamples=100)
    r = pearsonr(ls.scores["TER"], ted["mqm_z"])[0]
    assert stats.table_row(seg, "TER", human="MQM z")["r"] == pytest.approx(r, abs=1e-12)
    assert r > 0  # TER is negated: fewer edits, better MQM
    deen = common.load_deen(shared_data, sample=8, seed=0)
    dl = study.score(deen.segments, deen.references, progress=False)
    for s, g in deen.segments.groupby("system"):
        want = sacrebleu.corpus_bleu(list(g["target"]), [list(g["ref_A"])]).score / 100
        assert dl.system.loc[s, "BLEU-4"] == pytest.approx(want, abs=1e-9)
        want = sacrebleu.corpus_chrf(list(g["target"]), [list(g["ref_A"])]).score / 100
        assert dl.system.loc[s, "chrF"] == pytest.approx(want, abs=1e-9)
    sy = study.system_table(dl, deen.da, n_resamples=100)
    assert stats.table_row(sy, "BLEU-4")["r"] == pytest.approx(
        pearsonr(dl.system.loc[deen.da.index, "BLEU-4"], deen.da)[0], abs=1e-12)
    within = study.segment_tables(ls, method="within", n_resamples=100)
    partial = study.segment_tables(ls, n_resamples=100, beyond_length=True)
    aspects = study.segment_tables(ls, common.ASPECTS, n_resamples=100)
    v = study.verdicts(seg, partial, within, aspects, sy)
    c = v["BLEU-4 tracks Accuracy better than Fluency, more than chrF does (z)"]
    b, f = ls.scores["BLEU-4"], ls.scores["chrF"]
    gap = lambda x: pearsonr(x, ted["mqm_accuracy_z"])[0] - pearsonr(x, ted["mqm_fluency_z"])[0]  # noqa: E731
    assert c["statistic"] == pytest.approx(gap(b) - gap(f), abs=1e-12)
    # 10 metrics: correlates (x2), placebo, system permutation = 4 each; beats vs chrF and BLEU-4 (Pearson, beyond
    # length, within, system) = 4 per baseline (chrF and BLEU-4 against each other only); 9 contrasts
    assert len(v) == 10 * 4 + 8 * 8 + 2 * 4 + 9
    assert {x["family_size"] for x in v.values()} == {sum(x["verdict"] != "exploratory" for x in v.values())}
    assert np.isfinite([x["statistic"] for x in v.values()]).all()
