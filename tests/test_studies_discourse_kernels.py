"""Tests of syneval_nb.studies.discourse_kernels (notebook 07's study code) on hand examples and a small real
TED sample: the clustered pair-tau bootstrap against combine.segment_tau and a brute-force recomputation of one
resample, the combination tables' average/diff rows, the tuned placebo, the permute_human switch, the verdicts."""
from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd
import pytest

from syneval_nb import stats
from syneval_nb.metrics import combine
from syneval_nb.studies import discourse_kernels as S


@pytest.fixture(scope="module")
def ted6(shared_data):
    return S.ted_scores(shared_data, sample=6, metrics=["BLEU", "TER"], progress=False)


def test_ted_scores_real_sample(ted6):
    f = ted6
    assert f["seg_id"].nunique() == 6 and set(f["system"]).isdisjoint({"ref", "refB"})
    assert len(f) == 6 * 13
    assert f["DR"].between(0, 1).all() and f["DR-lex"].between(0, 1).all()
    # single-EDU hypothesis against single-EDU reference: DR is exactly 1
    both = (f["edus_hyp"] == 1) & (f["edus_ref"] == 1)
    assert (f.loc[both, "DR"] == 1.0).all()
    assert ((f["target"] == f["reference"]) <= (f["DR-lex"] > 0.999)).all()
    assert f["placebo"].tolist() == stats.placebo(len(f), 0).tolist()
    assert f[stats.LENGTH].tolist() == combine.length_control(f["target"], f["reference"]).tolist()


def test_permute_human_shuffles_mqm_only(shared_data, ted6):
    p = S.ted_scores(shared_data, sample=6, metrics=["BLEU"], progress=False, permute_human=1)
    assert sorted(p["mqm"]) == sorted(ted6["mqm"]) and p["mqm"].tolist() != ted6["mqm"].tolist()
    assert p["mqm_z"].tolist() == stats.permute_human(ted6["mqm_z"].to_numpy(), 1).tolist()
    assert p["BLEU"].tolist() == ted6["BLEU"].tolist()


def _brute_tau(x, h, seg, thr, texts, ties="discordant"):
    c = d = t = 0
    for i, j in combinations(range(len(x)), 2):
        if seg[i] != seg[j] or abs(h[i] - h[j]) <= thr or texts[i] == texts[j]:
            continue
        if not (np.isfinite(x[i]) and np.isfinite(x[j])):
            continue
        a, b = (i, j) if h[i] > h[j] else (j, i)
        c, d, t = c + (x[a] > x[b]), d + (x[a] < x[b]), t + (x[a] == x[b])
    return (c - d - t) / (c + d + t) if ties == "discordant" else (c - d) / (c + d)


def test_pair_tau_samples_against_segment_tau_and_brute_force(ted6):
    f = ted6
    h, seg, txt = f["mqm_z"].to_numpy(), f["seg_id"].to_numpy(), f["target"].to_numpy(dtype=object)
    mat = np.vstack([f["BLEU"], -f["TER"], f["DR"], f["placebo"]])
    est, samples, n_units = S.pair_tau_samples(mat, h, seg, threshold=0.2, distinct=txt, n_resamples=50, seed=3)
    assert n_units == 6 and samples.shape == (50, 4)
    for k in range(4):
        assert est[k] == pytest.approx(combine.segment_tau(mat[k], h, seg, 0.2, texts=txt), abs=1e-12)
        assert est[k] == pytest.approx(_brute_tau(mat[k], h, seg, 0.2, txt), abs=1e-12)
    est_x, _, _ = S.pair_tau_samples(mat, h, seg, threshold=0.2, distinct=txt, metric_ties="exclude", n_resamples=5)
    assert est_x[2] == pytest.approx(_brute_tau(mat[2], h, seg, 0.2, txt, "exclude"), abs=1e-12)
    # measured: BLEU's WMT12 tau on this sample, and DR's tie penalty
    assert est[0] == pytest.approx(-17 / 251, abs=1e-12)
    assert est[2] < est_x[2]
    # resample 0, rebuilt by hand: each drawn segment copied as often as drawn (a fresh id per copy)
    w = next(stats.bootstrap_weights(n_units, 50, seed=3))[0]
    units = np.unique(seg)
    rows, ids = [], []
    for u, times in zip(units, w):
        for c in range(int(times)):
            idx = np.flatnonzero(seg == u)
            rows.extend(idx)
            ids.extend([f"{u}-{c}"] * len(idx))
    rows = np.array(rows)
    for k in range(4):
        assert samples[0, k] == pytest.approx(_brute_tau(mat[k][rows], h[rows], np.array(ids), 0.2, txt[rows]),
                                              abs=1e-12)


def test_uniform_scores_and_combination_table_by_hand():
    # two segments, three systems; A ranks every pair right, DR every pair wrong
    norm = pd.DataFrame({"A": [0.0, 0.5, 1.0, 0.0, 0.5, 1.0], "DR": [1.0, 0.5, 0.0, 1.0, 0.5, 0.0],
                         "DR-lex": [0.0, 0.0, 1.0, 0.0, 0.0, 1.0], "placebo": [0.2, 0.9, 0.1, 0.3, 0.8, 0.4],
                         stats.LENGTH: [0.0, 0.5, 1.0, 0.0, 0.5, 1.0]})
    h, seg = np.array([1.0, 2, 3, 1, 2, 3]), np.array([0, 0, 0, 1, 1, 1])
    sc = S.uniform_scores(norm, ["A"])
    assert set(sc) == {("DR", "Orig."), ("DR-lex", "Orig."), ("A", "Orig."), ("A", "+dr"), ("A", "+dr-lex"),
                       ("A", "+placebo"), ("A", "+length")}
    assert sc[("A", "+dr")].tolist() == [0.5] * 6
    t = S.combination_table(sc, h, seg, threshold=0.0, n_resamples=20)
    # A alone: 6 concordant pairs -> 1; A+DR ties every pair -> -1; A+DR-lex: (0,.25,1): concordant -> 1
    assert t.loc["A", "Orig."] == 1.0 and t.loc["A", "+dr"] == -1.0 and t.loc["A", "+dr-lex"] == 1.0
    # A+placebo per segment (.1,.7,.55) and (.15,.65,.7): 2 + 3 concordant of 6 -> (5 - 1) / 6
    assert t.loc["A", "+placebo"] == pytest.approx(4 / 6)
    assert t.loc["DR", "Orig."] == -1.0
    assert t.loc["average"].tolist()[:3] == [1.0, -1.0, 1.0]  # only A is a base metric
    assert t.loc["diff.", "+dr"] == -2.0
    boot = t.attrs["bootstrap"]
    assert boot.names == ("Orig.", "+dr", "+dr-lex", "+placebo", "+length")
    v = stats.verdict_beats(t, "+dr", "Orig.")
    assert v["verdict"] == "does not hold" and v["statistic"] == -2.0 and v["test"] == "beats"
    claim, v2 = S.helps_verdict(t, "DR-lex", "toy")
    # +dr-lex (1.0) against +placebo (4/6): the difference of the averages over the base metrics (A only)
    assert claim == "DR-lex helps (toy): +dr-lex beats +placebo" and v2["statistic"] == pytest.approx(2 / 6)
    claim, v3 = S.helps_verdict(t, "DR-lex", "toy", stats.LENGTH)
    assert claim == "DR-lex helps beyond length (toy): +dr-lex beats +length"
    assert v3["statistic"] == pytest.approx(t.loc["A", "+dr-lex"] - t.loc["A", "+length"])


def test_tuned_scores_tune_the_placebo_like_dr():
    rng = np.random.default_rng(0)
    n_seg, n_sys = 30, 4
    seg = np.repeat(np.arange(n_seg), n_sys)
    docs = seg // 10
    h = rng.normal(size=len(seg))
    norm = pd.DataFrame({"A": h + rng.normal(scale=0.5, size=len(seg)), "DR": rng.random(len(seg)),
                         "DR-lex": rng.random(len(seg)), "placebo": rng.random(len(seg)),
                         stats.LENGTH: rng.random(len(seg))})
    sc = S.tuned_scores(norm, h, seg, docs, ["A"], mode="cv", threshold=0.0)
    assert sc[("A", "Orig.")].tolist() == norm["A"].tolist()  # every row is evaluated once in cross-validation
    f = norm[["A", "placebo"]].to_numpy()
    want, _ = combine.tuned_cv(f, h, seg, docs, 10, 0.0, 1.0)
    assert sc[("A", "+placebo")].tolist() == pytest.approx(want.tolist())
    assert ("Tuned all", "+dr") in sc
    half = S.tuned_scores(norm, h, seg, docs, ["A"], mode="half", threshold=0.0)
    ev = np.isfinite(half[("A", "+dr")])
    assert np.isnan(half[("A", "Orig.")][~ev]).all() and 0 < ev.sum() < len(seg)
    with pytest.raises(ValueError, match="mode"):
        S.tuned_scores(norm, h, seg, docs, ["A"], mode="x")
