"""Tests of syneval_nb.studies.discourse_kernels (notebook 07's study code) on hand examples and a small real
TED sample: the clustered pair-tau bootstrap against combine.segment_tau and a brute-force recomputation of one
resample, the combination tables' average/diff rows, the placebo distribution of the combinations (uniform, tuned
and system level) against a numpy/sklearn/scipy brute force that does not use the kit's combination code, the
permute_human switch, the chapter's claims (decided by stats.decide_claims)."""
from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr
from sklearn.linear_model import LogisticRegression

from syneval_nb import stats
from syneval_nb.metrics import combine
from syneval_nb.stats.resampling import pair_tau_samples
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


def _helps(table, extra="DR", what="toy"):
    """``(claim, verdict)`` of "``extra`` helps" on one table: the chapter's claims on ``tables({what: table})``,
    decided by the one engine (no Holm: the verdict of the claim's own test)."""
    tb = S.tables({what: table})
    cl = [c for c in S.claims(tb) if c.claim.startswith(f"{extra} helps")]
    ((claim, v),) = stats.decide_claims(cl, tb, holm=False).items()
    return claim, v


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
    est, samples, n_units = pair_tau_samples(mat, h, seg, threshold=0.2, distinct=txt, n_resamples=50, seed=3)
    assert n_units == 6 and samples.shape == (50, 4)
    for k in range(4):
        assert est[k] == pytest.approx(combine.segment_tau(mat[k], h, seg, 0.2, texts=txt), abs=1e-12)
        assert est[k] == pytest.approx(_brute_tau(mat[k], h, seg, 0.2, txt), abs=1e-12)
    est_x, _, _ = pair_tau_samples(mat, h, seg, threshold=0.2, distinct=txt, metric_ties="exclude", n_resamples=5)
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
                         "DR-lex": [0.0, 0.0, 1.0, 0.0, 0.0, 1.0], stats.LENGTH: [0.0, 0.5, 1.0, 0.0, 0.5, 1.0]})
    h, seg = np.array([1.0, 2, 3, 1, 2, 3]), np.array([0, 0, 0, 1, 1, 1])
    sc = S.uniform_scores(norm, ["A"])
    assert set(sc) == {("DR", "Orig."), ("DR-lex", "Orig."), ("A", "Orig."), ("A", "+dr"), ("A", "+dr-lex"),
                       ("A", "+length")}
    assert sc[("A", "+dr")].tolist() == [0.5] * 6
    t = S.combination_table(sc, h, seg, threshold=0.0, n_resamples=20)
    # A alone: 6 concordant pairs -> 1; A+DR ties every pair -> -1; A+DR-lex: (0,.25,1): concordant -> 1
    assert t.loc["A", "Orig."] == 1.0 and t.loc["A", "+dr"] == -1.0 and t.loc["A", "+dr-lex"] == 1.0
    assert t.loc["DR", "Orig."] == -1.0
    assert t.loc["average"].tolist()[:3] == [1.0, -1.0, 1.0]  # only A is a base metric
    assert t.loc["diff.", "+dr"] == -2.0
    boot = t.attrs["bootstrap"]
    assert boot.names == ("Orig.", "+dr", "+dr-lex", "+length") and boot.null is None
    assert S.PLACEBO_COL not in t.columns  # no placebo distribution asked for
    v = stats.verdict_beats(t, "+dr", "Orig.")
    # two source segments: below the cluster floor of 20 units, exploratory (its interval below 0)
    assert v["verdict"] == "exploratory" and v["statistic"] == -2.0 and v["test"] == "beats" and v["ci"][1] < 0
    with pytest.raises(KeyError, match="no null distribution"):
        S.tables({"toy": t})


def _numpy_placebo(n, k, seed=0):
    """The placebo columns from scratch: the stream of stats.placebo_distribution, min-max scaled per column."""
    x = np.random.default_rng(np.random.SeedSequence([seed, 0x706C6163, 1])).standard_normal((k, n))
    return (x - x.min(axis=1, keepdims=True)) / (x.max(axis=1, keepdims=True) - x.min(axis=1, keepdims=True))


def test_placebo_matrix_is_the_placebo_distributions_columns():
    p = S.placebo_matrix(30, 100, seed=2)
    assert p.shape == (100, 30) and np.abs(p - _numpy_placebo(30, 100, 2)).max() < 1e-15
    h = np.arange(30.0)
    raw = stats.placebo_columns(30, 100, 2)
    assert np.allclose(stats.placebo_distribution(h, 100, seed=2), [np.corrcoef(r, h)[0, 1] for r in raw], atol=1e-12)
    with pytest.raises(ValueError, match="at least 100 columns, got n_placebo=99"):
        S.placebo_matrix(30, 99)


@pytest.fixture(scope="module")
def toy():
    """12 segments x 4 systems in 4 documents; A and B weak metrics, DR close to the human scores, DR-lex noise."""
    rng = np.random.default_rng(5)
    seg = np.repeat(np.arange(12), 4)
    h = np.round(rng.normal(size=48), 1)
    mm = lambda x: (x - x.min()) / (x.max() - x.min())  # noqa: E731
    norm = pd.DataFrame({"A": mm(h + rng.normal(scale=2, size=48)), "B": mm(h + rng.normal(scale=2, size=48)),
                         "DR": mm(h + rng.normal(scale=0.3, size=48)), "DR-lex": mm(rng.normal(size=48)),
                         stats.LENGTH: mm(rng.normal(size=48))})
    return norm, h, seg, seg // 3, np.array([f"t{i}" for i in range(48)], dtype=object)


def _brute_helps(t, est_dr, null, alpha=0.05):
    """The rule of the brief, by hand: statistic = estimate - 95th percentile of the null; interval = bootstrap
    interval of the estimate minus it; p = (k + 1) / (B + 1) from the same B resamples, k of them <= 0."""
    q = np.quantile(null, 0.95)
    d = t.attrs["bootstrap"].column("+dr") - q
    lo, hi = np.percentile(d, [100 * alpha / 2, 100 * (1 - alpha / 2)])
    return est_dr - q, [lo, hi], ((d <= 0).sum() + 1) / (len(d) + 1)


def test_uniform_placebo_null_by_brute_force(toy):
    norm, h, seg, _, txt = toy
    P = _numpy_placebo(48, 100)
    taus = np.array([[_brute_tau((norm[m].to_numpy() + p) / 2, h, seg, 0.0, txt) for m in ("A", "B")] for p in P])
    null = taus.mean(axis=1)
    est_dr = np.mean([_brute_tau((norm[m].to_numpy() + norm["DR"].to_numpy()) / 2, h, seg, 0.0, txt)
                      for m in ("A", "B")])
    t = S.combination_table(S.uniform_scores(norm, ["A", "B"], placebo=S.placebo_matrix(48, 100)), h, seg,
                            threshold=0.0, texts=txt, n_resamples=200)
    b = t.attrs["bootstrap"]
    assert b.null_kind == "placebo" and np.abs(b.null - null).max() < 1e-12
    # the displayed column: each row's 95th percentile, the average row the 95th percentile of the K averages
    assert t.loc["A", S.PLACEBO_COL] == pytest.approx(np.quantile(taus[:, 0], 0.95), abs=1e-12)
    assert t.loc["average", S.PLACEBO_COL] == pytest.approx(np.quantile(null, 0.95), abs=1e-12)
    assert t.attrs["low"].loc["B", S.PLACEBO_COL] == pytest.approx(np.quantile(taus[:, 1], 0.025), abs=1e-12)
    claim, v = _helps(t)
    stat, ci, p = _brute_helps(t, est_dr, null)
    assert claim == "DR helps (toy): +dr beats +placebo (p95)" and v["test"] == "beats the placebo"
    assert v["statistic"] == pytest.approx(stat, abs=1e-12) and v["p"] == p and v["n_null"] == 100
    assert v["ci"] == pytest.approx(ci, abs=1e-12)
    # measured on this toy: DR (noise 0.3) lifts the average tau far above every placebo combination
    # 12 source segments: below the cluster floor, so exploratory (interval above 0, p = 1 / 101)
    assert stat == pytest.approx(0.399285714, abs=1e-8) and p == 1 / 201 and v["verdict"] == "exploratory"
    assert v["ci"][0] > 0
    eff = t.attrs["effects"]
    assert eff.loc["+dr", f"vs {S.PLACEBO_COL}"] == pytest.approx(stat, abs=1e-12)
    _, vl = _helps(t, "DR-lex")
    d = t.attrs["bootstrap"].column("+dr-lex") - np.quantile(null, 0.95)
    assert vl["verdict"] != "holds" and vl["p"] == ((d <= 0).sum() + 1) / (len(d) + 1)


def _brute_tuned_cv(f, h, seg, docs):
    """Leave-one-document-out (4 documents < 10 folds) PRO by hand: sklearn's logistic regression on the
    pairwise differences of the training rows' human pairs (same segment, human scores differ)."""
    out = np.full(len(h), np.nan)
    for d in np.unique(docs):
        train = np.flatnonzero(docs != d)
        X = [f[i] - f[j] if h[i] > h[j] else f[j] - f[i] for i, j in combinations(train, 2)
             if seg[i] == seg[j] and h[i] != h[j]]
        X = np.array(X)
        m = LogisticRegression(C=1.0, fit_intercept=False, max_iter=1000)
        m.fit(np.vstack([X, -X]), np.r_[np.ones(len(X)), np.zeros(len(X))])
        out[docs == d] = f[docs == d] @ m.coef_.ravel()
    return out


MEASURED_TUNED = 0.798571429  # measured: DR tuned in lifts the average tau far above the placebo combinations


def test_tuned_placebo_null_by_brute_force(toy):
    norm, h, seg, docs, txt = toy
    docs = docs // 2  # 2 documents: 2 folds (the fits are K times over; keep the test short)
    P = _numpy_placebo(48, 100)
    # base ["A"]: the rows A and "Tuned all" (all base metrics = A) are the same combination
    null = np.array([_brute_tau(_brute_tuned_cv(np.column_stack([norm["A"].to_numpy(), p]), h, seg, docs), h, seg,
                                0.0, txt) for p in P])
    sc = S.tuned_scores(norm, h, seg, docs, ["A"], mode="cv", threshold=0.0, placebo=S.placebo_matrix(48, 100))
    assert sc[("Tuned all", S.PLACEBO_COL)].shape == (100, 48)
    t = S.combination_table(sc, h, seg, threshold=0.0, texts=txt, n_resamples=200)
    assert np.abs(t.attrs["bootstrap"].null - null).max() < 1e-9
    # the K columns split over two processes: the same scores
    sc2 = S.tuned_scores(norm, h, seg, docs, ["A"], mode="cv", threshold=0.0, placebo=S.placebo_matrix(48, 100),
                         n_jobs=2)
    assert np.array_equal(sc2[("A", S.PLACEBO_COL)], sc[("A", S.PLACEBO_COL)])
    _, v = _helps(t)
    stat, ci, p = _brute_helps(t, t.loc["average", "+dr"], null)
    assert v["statistic"] == pytest.approx(stat, abs=1e-9) and v["p"] == p and v["ci"] == pytest.approx(ci, abs=1e-9)
    assert stat == pytest.approx(MEASURED_TUNED, abs=1e-8) and p == 1 / 201
    # half/half: each placebo column is tuned exactly like DR (combine.tuned_half on [metric, column k])
    half = S.tuned_scores(norm, h, seg, docs, ["A"], mode="half", threshold=0.0, placebo=S.placebo_matrix(48, 100))
    for k in (0, 57):
        f = np.column_stack([norm["A"].to_numpy(), S.placebo_matrix(48, 100)[k]])
        assert np.array_equal(half[("A", S.PLACEBO_COL)][k], combine.tuned_half(f, h, seg, docs, 0, 0.0)[0],
                              equal_nan=True)


def test_system_level_table_placebo_null_by_brute_force():
    """At system level (``segments=None``) the combination table is Spearman over the systems, the placebo entries'
    K Spearman values the null, the intervals those of stats.correlation_table resampling the systems."""
    rng = np.random.default_rng(8)
    systems = np.repeat([f"s{i:02d}" for i in range(9)], 5)
    frame = pd.DataFrame({"system": systems, "A": rng.random(45), "B": rng.random(45), "DR": rng.random(45),
                          "DR-lex": rng.random(45), stats.LENGTH: rng.random(45)})
    human = pd.Series(rng.normal(size=9), index=[f"s{i:02d}" for i in range(9)])
    means = frame.groupby("system").mean()
    sc = S.uniform_scores(combine.normalize(means), ["A", "B"], placebo=S.placebo_matrix(9, 100))
    t = S.combination_table(sc, human.to_numpy(), None, n_resamples=50)
    mm = lambda x: (x - x.min()) / (x.max() - x.min())  # noqa: E731
    P = _numpy_placebo(9, 100)
    null = np.array([np.mean([spearmanr((mm(means[m].to_numpy()) + p) / 2, human.to_numpy())[0] for m in ("A", "B")])
                     for p in P])
    assert np.abs(t.attrs["bootstrap"].null - null).max() < 1e-12
    assert t.loc["average", S.PLACEBO_COL] == pytest.approx(np.quantile(null, 0.95), abs=1e-12)
    mmA, mmDR = mm(means["A"].to_numpy()), mm(means["DR"].to_numpy())
    assert t.loc["A", "+dr"] == pytest.approx(spearmanr((mmA + mmDR) / 2, human.to_numpy())[0], abs=1e-12)
    assert t.attrs["bootstrap"].method == "spearman" and t.attrs["bootstrap"].n_clusters == 9
    assert t.attrs["bootstrap"].unit == "item"


def test_tuned_scores_tune_the_extras_like_dr():
    rng = np.random.default_rng(0)
    n_seg, n_sys = 30, 4
    seg = np.repeat(np.arange(n_seg), n_sys)
    docs = seg // 10
    h = rng.normal(size=len(seg))
    norm = pd.DataFrame({"A": h + rng.normal(scale=0.5, size=len(seg)), "DR": rng.random(len(seg)),
                         "DR-lex": rng.random(len(seg)), stats.LENGTH: rng.random(len(seg))})
    sc = S.tuned_scores(norm, h, seg, docs, ["A"], mode="cv", threshold=0.0)
    assert sc[("A", "Orig.")].tolist() == norm["A"].tolist()  # every row is evaluated once in cross-validation
    f = norm[["A", stats.LENGTH]].to_numpy()
    want, _ = combine.tuned_cv(f, h, seg, docs, 10, 0.0, 1.0)
    assert sc[("A", "+length")].tolist() == pytest.approx(want.tolist())
    assert ("Tuned all", "+dr") in sc and ("A", S.PLACEBO_COL) not in sc
    half = S.tuned_scores(norm, h, seg, docs, ["A"], mode="half", threshold=0.0)
    ev = np.isfinite(half[("A", "+dr")])
    assert np.isnan(half[("A", "Orig.")][~ev]).all() and 0 < ev.sum() < len(seg)
    with pytest.raises(ValueError, match="mode"):
        S.tuned_scores(norm, h, seg, docs, ["A"], mode="x")
    for bad in (0, -1, 1.5, True):  # before any fit (a count of processes; joblib's -1 "all cores" is not taken)
        with pytest.raises(ValueError, match=rf"n_jobs must be a whole number >= 1, got {bad!r}"):
            S.tuned_scores(norm, h, seg, docs, ["A"], n_jobs=bad)


def test_helps_needs_the_edge_over_the_metric_alone():
    """30 segments x 4 systems: A ranks every pair right, DR is weakly informative. A + DR beats every A + random
    column (interval above 0, p = 1 / 201) but not A alone, so "DR helps" cannot hold (issue 35)."""
    rng = np.random.default_rng(3)
    seg = np.repeat(np.arange(30), 4)
    h = np.tile([1.0, 2, 3, 4], 30) + 0.01 * np.arange(120)
    mm = lambda x: (x - x.min()) / (x.max() - x.min())  # noqa: E731
    norm = pd.DataFrame({"A": mm(h), "DR": mm(h + rng.normal(scale=1.0, size=120)), "DR-lex": mm(rng.random(120)),
                         stats.LENGTH: mm(rng.random(120))})
    t = S.combination_table(S.uniform_scores(norm, ["A"], placebo=S.placebo_matrix(120, 100)), h, seg,
                            threshold=0.0, n_resamples=200)
    _, v = _helps(t)
    b = t.attrs["bootstrap"]
    assert t.loc["A", "Orig."] == 1.0 and t.loc["A", "+dr"] < 1.0  # the metric alone does better
    assert v["ci"][0] > 0 and v["p"] == 1 / 201 and v["requires"]["ci"][1] <= 0
    assert v["requires"]["ci"] == pytest.approx(np.percentile(b.column("+dr") - b.column("Orig."), [2.5, 97.5]))
    assert v["verdict"] == "cannot tell" and "without that edge the claim cannot hold" in v["reason"]


def test_partial_table_against_numpy():
    """The beyond-length table: each combination's partial r given the flexible length model equals numpy's r of
    the least-squares residuals on [1, covariates]; "helps beyond length" is the difference of the averages."""
    rng = np.random.default_rng(4)
    n = 120
    frame = pd.DataFrame({"seg_id": np.repeat(np.arange(30), 4),
                          "target": [" ".join(["w"] * k) for k in rng.integers(3, 30, n)],
                          "reference": [" ".join(["w"] * k) for k in rng.integers(3, 30, n)],
                          "h": rng.normal(size=n)})
    norm = pd.DataFrame({c: rng.random(n) for c in ("A", "B", "DR", "DR-lex", stats.LENGTH)})
    norm["DR"] = (norm["DR"] + frame["h"]).rank() / n
    sc = S.uniform_scores(norm, ["A", "B"])
    t = S.partial_table(sc, frame, "h", n_resamples=50)
    cov = stats.length_covariates([len(x.split()) for x in frame["target"]],
                                  [len(x.split()) for x in frame["reference"]])
    Z = np.column_stack([np.ones(n), *cov.values()])
    res = lambda y: y - Z @ np.linalg.lstsq(Z, y, rcond=None)[0]  # noqa: E731
    pr = {k: np.corrcoef(res(np.asarray(v)), res(frame["h"].to_numpy()))[0, 1] for k, v in sc.items()}
    assert t.loc["A", "+dr"] == pytest.approx(pr[("A", "+dr")], abs=1e-10)
    assert t.loc["average", "Orig."] == pytest.approx((pr[("A", "Orig.")] + pr[("B", "Orig.")]) / 2, abs=1e-10)
    claim, v = _helps(t)
    assert claim == "DR helps beyond length (toy): +dr beats Orig." and v["test"] == "beats beyond length"
    assert v["statistic"] == pytest.approx(np.mean([pr[(m, "+dr")] - pr[(m, "Orig.")] for m in "AB"]), abs=1e-10)


def test_the_chapters_claims_are_data(toy):
    """The chapter's claims on its tables: "helps" is a ``given`` claim reading the verdict tables() computed, beyond
    length a ``beats`` claim on the partial table, the correlation claims the stats tests; the six primary claims
    (the headline) are the Holm family, every other claim exploratory."""
    norm, h, seg, _, txt = toy
    frame = pd.DataFrame({"seg_id": seg, "target": [" ".join(["w"] * (3 + i % 7)) for i in range(48)],
                          "reference": [" ".join(["w"] * (4 + i % 5)) for i in range(48)], "h": h})
    tau = S.combination_table(S.uniform_scores(norm, ["A", "B"], placebo=S.placebo_matrix(48, 100)), h, seg,
                              threshold=0.0, texts=txt, n_resamples=100)
    part = S.partial_table(S.uniform_scores(norm, ["A", "B"]), frame, "h", n_resamples=100)
    x = {m: norm[m].to_numpy() for m in ("DR", "DR-lex", "A")}
    corr = stats.correlation_table(x, h, seg, n_resamples=100)
    cov = stats.length_covariates([len(t.split()) for t in frame["target"]],
                                  [len(t.split()) for t in frame["reference"]])
    pcorr = stats.correlation_table(x, h, seg, n_resamples=100, given=cov)
    tb = S.tables({"u": tau, "u beyond": part}, corr, pcorr)
    assert list(tb) == [("u", "DR"), ("u", "DR-lex"), "u beyond", "correlations", "beyond length"]
    cl = S.claims(tb)
    assert [(c.test, c.on) for c in cl] == [
        ("given", ("u", "DR")), ("given", ("u", "DR-lex")), ("beats", "u beyond"), ("beats", "u beyond"),
        ("correlates", "correlations"), ("beats the placebo", "correlations"), ("correlates", "beyond length"),
        ("correlates", "correlations"), ("beats the placebo", "correlations"), ("correlates", "beyond length")]
    assert [c.claim for c in cl if c.primary] == [
        "DR helps (u): +dr beats +placebo (p95)", "DR-lex helps (u): +dr-lex beats +placebo (p95)",
        "DR helps beyond length (u beyond): +dr beats Orig.", "DR-lex helps beyond length (u beyond): +dr-lex beats Orig.",
        "DR correlates with MQM z beyond length (segment level, partial r given the length model)",
        "DR-lex correlates with MQM z beyond length (segment level, partial r given the length model)"]
    raw = stats.decide_claims(cl, tb, holm=False)
    assert raw["DR helps (u): +dr beats +placebo (p95)"] == tb[("u", "DR")]
    assert raw["DR-lex correlates with MQM z (segment level, Pearson)"] == stats.verdict_correlates(corr, "DR-lex")
    assert raw["DR helps beyond length (u beyond): +dr beats Orig."] == stats.verdict_beats(part, "+dr", "Orig.")
    v = stats.decide_claims(cl, tb)
    # 12 source segments: every verdict is below the cluster floor, so exploratory and out of the family
    assert all(x["verdict"] == "exploratory" for x in v.values()) and {x["family_size"] for x in v.values()} == {0}


def test_fit_pro_is_scikit_learns_logistic_regression_bit_for_bit():
    """combine.fit_pro's direct L-BFGS call (the tuned placebo's thousands of fits) gives exactly scikit-learn's
    LogisticRegression weights (lbfgs, no intercept), on 2 and 3 features, with a NaN feature (its pairs dropped),
    for C = 1 and 0.1."""
    rng = np.random.default_rng(0)
    seg = np.repeat(np.arange(40), 5)
    f = rng.normal(size=(200, 3))
    h = 2 * f[:, 0] + rng.normal(size=200)
    f[7, 2] = np.nan
    b, w = stats.better_worse_pairs(h, seg)
    for feats, c in ((f[:, :2], 1.0), (f, 1.0), (f, 0.1)):
        d = feats[b] - feats[w]
        d = d[np.isfinite(d).all(axis=1)]
        X, y = np.vstack([d, -d]), np.r_[np.ones(len(d)), np.zeros(len(d))]
        expected = LogisticRegression(C=c, fit_intercept=False, max_iter=1000).fit(X, y).coef_.ravel()
        assert np.array_equal(combine.fit_pro(feats, b, w, c), expected), (feats.shape, c)


def test_system_level_placebo_null_is_scipys_spearman_bit_for_bit():
    """The system-level null (K Spearman values per row, ranks of the human scores computed once) equals
    scipy.stats.spearmanr of each column exactly, with ties in the scores and in the human scores."""
    rng = np.random.default_rng(0)
    human = np.round(rng.normal(size=13), 1)
    a = np.round(rng.uniform(size=13), 1)
    placebo = rng.uniform(size=(100, 13))
    placebo[3] = np.round(placebo[3], 1)
    t = S.combination_table({("A", "Orig."): a, ("A", S.PLACEBO_COL): (a + placebo) / 2}, human, None,
                            n_resamples=10)
    null = np.array([spearmanr((a + p) / 2, human)[0] for p in placebo])
    assert t.loc["A", S.PLACEBO_COL] == np.quantile(null, 0.95)
    assert (t.attrs["low"].loc["A", S.PLACEBO_COL], t.attrs["high"].loc["A", S.PLACEBO_COL]) == tuple(
        np.quantile(null, [0.025, 0.975]))
