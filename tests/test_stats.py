"""Statistics against scipy, brute-force enumeration, hand arithmetic and a published worked example."""
from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from syneval_nb import stats as S
from syneval_nb.studies.dependency_metrics import rank_gap


def _data(seed: int, n: int = 200, ties: bool = False):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    y = 0.6 * x + rng.normal(size=n)
    if ties:
        x, y = np.round(x * 2), np.round(y)
    return x, y


# ---------------------------------------------------------------- correlations vs scipy

@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("ties", [False, True])
def test_correlations_match_scipy(seed, ties):
    x, y = _data(seed, n=50 + 37 * seed, ties=ties)
    assert S.pearson(x, y) == pytest.approx(sps.pearsonr(x, y)[0], abs=1e-12)
    assert S.spearman(x, y) == pytest.approx(sps.spearmanr(x, y)[0], abs=1e-12)
    assert S.kendall_tau_b(x, y) == pytest.approx(sps.kendalltau(x, y, variant="b")[0], abs=1e-12)


def test_kendall_large_with_ties_matches_scipy():
    x, y = _data(7, n=19000, ties=True)
    assert S.kendall_tau_b(x, y) == pytest.approx(sps.kendalltau(x, y)[0], abs=1e-12)


def test_kendall_by_hand():
    # x = 1,2,3,4 ; y = 1,3,2,4: pairs (2,3) discordant, other 5 concordant -> (5-1)/6
    assert S.kendall_tau_b([1, 2, 3, 4], [1, 3, 2, 4]) == pytest.approx(4 / 6)
    assert np.isnan(S.kendall_tau_b([1, 1, 1], [1, 2, 3]))
    assert np.isnan(S.pearson([2, 2, 2], [1, 2, 3]))


def test_average_ranks_match_scipy():
    x = np.array([3.0, 1.0, 3.0, 2.0, 3.0, 0.5])
    np.testing.assert_allclose(S.average_ranks(x), sps.rankdata(x))


def test_bad_inputs_raise():
    with pytest.raises(ValueError, match="x has 3 values but y has 2"):
        S.pearson([1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match="non-finite"):
        S.spearman([1, np.nan, 3], [1, 2, 3])
    with pytest.raises(ValueError, match="1-D"):
        S.kendall_tau_b([[1, 2]], [[1, 2]])
    with pytest.raises(ValueError, match="unknown correlation"):
        S.correlation([1, 2, 3], [1, 2, 3], "tau-z")
    with pytest.raises(ValueError, match="segment_ids has 2"):
        S.wmt_darr_tau([1, 2, 3], [1, 2, 3], [0, 0])
    with pytest.raises(ValueError, match="metric_ties"):
        S.wmt_darr_tau([1, 2], [0, 100], [0, 0], metric_ties="half")


def test_system_level_is_correlation_of_means():
    rng = np.random.default_rng(3)
    systems = np.repeat(list("abcdefg"), 30)
    m, h = rng.normal(size=210), rng.normal(size=210) + (systems == "a")
    g = pd.DataFrame({"s": systems, "m": m, "h": h}).groupby("s").mean()
    assert S.system_level(m, h, systems) == pytest.approx(sps.pearsonr(g.m, g.h)[0], abs=1e-12)
    assert S.system_level(m, h, systems, "kendall") == pytest.approx(sps.kendalltau(g.m, g.h)[0], abs=1e-12)
    with pytest.raises(ValueError, match="at least 3 systems"):
        S.system_level([1, 2, 3, 4], [1, 2, 3, 4], ["a", "a", "b", "b"])


# ---------------------------------------------------------------- WMT taus

def test_darr_tau_by_hand():
    seg = [0, 0, 0]
    da = [90, 60, 50]  # pairs > 25 apart: (90,60) and (90,50); (60,50) is too close
    assert S.wmt_darr_tau([0.5, 0.4, 0.4], da, seg) == 1.0  # both concordant
    # metric tie on (90,60) is discordant: (1 - 1) / 2 = 0; excluded: 1 / 1
    assert S.wmt_darr_tau([0.4, 0.4, 0.1], da, seg) == 0.0
    assert S.wmt_darr_tau([0.4, 0.4, 0.1], da, seg, metric_ties="exclude") == 1.0
    # pairs never cross segments
    assert np.isnan(S.wmt_darr_tau([1, 0], [100, 0], [0, 1]))


def _brute_pairs(h, seg, th):
    out = []
    for i, j in itertools.combinations(range(len(h)), 2):
        if seg[i] == seg[j] and abs(h[i] - h[j]) > th:
            out.append((i, j) if h[i] > h[j] else (j, i))
    return sorted(out)


def _brute_tau(m, h, seg, th, ties_disc=True):
    c = d = 0
    for b, w in _brute_pairs(h, seg, th):
        if m[b] > m[w]:
            c += 1
        elif m[b] < m[w] or ties_disc:
            d += 1
    return (c - d) / (c + d)


@pytest.mark.parametrize("seed", range(4))
def test_taus_match_brute_force(seed):
    rng = np.random.default_rng(seed)
    n = 120
    seg = rng.integers(0, 15, size=n)
    da = rng.integers(0, 101, size=n).astype(float)
    m = np.round(da / 20 + rng.normal(size=n), 1)  # rounded: metric ties occur
    b, w = S.better_worse_pairs(da, seg, 25)
    assert sorted(zip(b.tolist(), w.tolist())) == _brute_pairs(da, seg, 25)
    assert S.wmt_darr_tau(m, da, seg) == pytest.approx(_brute_tau(m, da, seg, 25))
    assert S.wmt_darr_tau(m, da, seg, metric_ties="exclude") == pytest.approx(_brute_tau(m, da, seg, 25, False))
    rank = rng.integers(1, 6, size=n)  # WMT12 ranks, 1 = best; human ties excluded
    assert S.wmt12_tau(m, -rank, seg) == pytest.approx(_brute_tau(m, -rank, seg, 0))
    # distinct: pairs of items with equal labels (identical translations) are dropped, by brute force
    lab = rng.integers(0, 3, size=n)
    pairs = [(b_, w_) for b_, w_ in _brute_pairs(-rank, seg, 0) if lab[b_] != lab[w_]]
    c = sum(m[b_] > m[w_] for b_, w_ in pairs)
    assert S.wmt12_tau(m, -rank, seg, distinct=lab) == pytest.approx((2 * c - len(pairs)) / len(pairs))


@pytest.mark.parametrize("seed", range(3))
def test_pair_tau_samples_is_wmt12_tau_on_every_resample(seed):
    """The bootstrap of pair taus (chapter 07) counts pairs as wmt12_tau does: its estimates are wmt12_tau's (and
    the tau without the tie penalty), a resample is wmt12_tau on the drawn segments (fresh ids per copy), a pair
    with a non-finite score is left out, clusters must hold whole segments."""
    from syneval_nb.stats.resampling import pair_tau_samples

    rng = np.random.default_rng(seed)
    n = 120
    seg = rng.integers(0, 15, size=n)
    h = -rng.integers(1, 6, size=n).astype(float)
    lab = rng.integers(0, 4, size=n)
    mat = np.round(rng.normal(size=(3, n)), 1)
    est, samples, n_units = pair_tau_samples(mat, h, seg, distinct=lab, n_resamples=20, seed=seed)
    assert n_units == 15 and samples.shape == (20, 3)
    assert est.tolist() == [S.wmt12_tau(x, h, seg, distinct=lab) for x in mat]
    est_x = pair_tau_samples(mat, h, seg, threshold=1, metric_ties="exclude", n_resamples=0)[0]
    assert est_x.tolist() == [S.wmt_darr_tau(x, h, seg, 1, metric_ties="exclude") for x in mat]
    w = next(S.bootstrap_weights(n_units, 20, seed=seed))[0]
    units = np.unique(seg)
    idx = np.concatenate([np.flatnonzero(seg == u) for u, t in zip(units, w) for _ in range(int(t))])
    ids = np.concatenate([[f"{u}-{c}"] * int((seg == u).sum()) for u, t in zip(units, w) for c in range(int(t))])
    for k in range(3):
        assert samples[0, k] == pytest.approx(S.wmt12_tau(mat[k, idx], h[idx], ids, distinct=lab[idx]), abs=1e-12)
    bad = mat.copy()
    bad[0, :10], bad[1, :10] = np.nan, np.inf
    keep = np.arange(n) >= 10
    got = pair_tau_samples(bad, h, seg, n_resamples=0)[0]
    assert got[:2].tolist() == [S.wmt12_tau(x[keep], h[keep], seg[keep]) for x in mat[:2]]
    with pytest.raises(ValueError, match="whole segments"):
        pair_tau_samples(mat, h, seg, clusters=np.arange(n) % 2, n_resamples=0)
    with pytest.raises(ValueError, match="metric_ties"):
        pair_tau_samples(mat, h, seg, metric_ties="half")


def test_wmt12_tau_ties_count_against_metric():
    # one segment ranked 1 < 2 < 3 (1 best); a constant metric gets tau = -1, the perfect one +1
    assert S.wmt12_tau([0.3, 0.3, 0.3], [-1, -2, -3], [7, 7, 7]) == -1.0
    assert S.wmt12_tau([0.9, 0.5, 0.1], [-1, -2, -3], [7, 7, 7]) == 1.0
    assert S.wmt12_tau([0.9, 0.5, 0.1], [-1, -1, -3], [7, 7, 7]) == 1.0  # human tie (1,1) dropped


def test_ted_relative_ranking_pair_counts(shared_data):
    """Segment-level MQM pairs on TED zh-en (13 MT systems, 529 segments), counted by brute force too."""
    from syneval_nb.data import load_ted_zhen_mqm

    df = load_ted_zhen_mqm(shared_data)
    mt = df[~df.is_human]
    counts = {th: len(S.better_worse_pairs(mt.mqm.to_numpy(), mt.seg_id.to_numpy(), th)[0]) for th in (0, 1, 5)}
    assert counts == {0: 24100, 1: 17861, 5: 5251}
    brute = {th: 0 for th in counts}
    for _, g in mt.groupby("seg_id"):
        for a, b in itertools.combinations(g.mqm.tolist(), 2):
            for th in brute:
                brute[th] += abs(a - b) > th
    assert brute == counts
    assert 529 * 78 == 41262  # all pairs of 13 systems; 24100 of them are not MQM ties


# ---------------------------------------------------------------- CIs and tests

@pytest.mark.parametrize("n", [10, 30, 500])
def test_fisher_ci_matches_scipy(n):
    x, y = _data(n, n=n)
    r = sps.pearsonr(x, y)
    ci = r.confidence_interval(0.9)  # scipy uses the Fisher transformation
    assert S.fisher_ci(r[0], n, alpha=0.1) == pytest.approx((ci.low, ci.high), abs=1e-12)
    with pytest.raises(ValueError, match="n > 3"):
        S.fisher_ci(0.5, 3)


def test_williams_worked_example():
    """Howell, Statistical Methods for Psychology (6th ed., p. 262), as computed in B. Weaver's Williams1959.sps
    (https://imaging.mrc-cbu.cam.ac.uk/statswiki/FAQ/Will): r12=.80, r13=.72, r23=.89, n=26 ->
    t = 1.361, df = 23, two-sided p = .187 (so one-sided p = .0935)."""
    t, p = S.williams_test(0.80, 0.72, 0.89, 26)
    assert t == pytest.approx(1.361, abs=5e-4)
    assert 2 * p == pytest.approx(0.187, abs=5e-4)
    t2, p2 = S.williams_test(0.72, 0.80, 0.89, 26)
    assert t2 == pytest.approx(-t) and p2 == pytest.approx(1 - p)
    with pytest.raises(ValueError, match="r23"):
        S.williams_test(0.5, 0.4, 1.5, 30)


def test_williams_from_scores():
    x, h = _data(11, n=300)
    y = x + np.random.default_rng(1).normal(size=300) * 2  # a noisier copy of x: worse metric
    t, p = S.williams_from_scores(h, x, y)
    r12, r13, r23 = sps.pearsonr(h, x)[0], sps.pearsonr(h, y)[0], sps.pearsonr(x, y)[0]
    assert (t, p) == pytest.approx(S.williams_test(r12, r13, r23, 300))
    assert t > 0 and p < 0.05


# ---------------------------------------------------------------- bootstrap

def test_vectorised_bootstrap_equals_explicit_resamples():
    x, h = _data(5, n=80)
    z = x**2
    fast = S.bootstrap_pearson_samples(np.vstack([x, z]), h, n_resamples=50, seed=3)
    # the same resamples, expanded to index lists, scored with scipy
    slow = []
    for w in S.bootstrap_weights(80, 50, seed=3):
        for row in w:
            idx = np.repeat(np.arange(80), row.astype(int))
            slow.append([sps.pearsonr(x[idx], h[idx])[0], sps.pearsonr(z[idx], h[idx])[0]])
    np.testing.assert_allclose(fast, np.array(slow), atol=1e-10)


def test_vectorised_spearman_equals_scipy_on_explicit_resamples():
    """bootstrap_spearman_samples against scipy.stats.spearmanr on each resample written out item by item: tied
    values (rounded scores), drawn copies of one item (which tie), resamples of groups of unequal size, and a tiny
    set whose resamples are often constant (NaN, as spearman gives there)."""
    rng = np.random.default_rng(7)
    for n, n_groups, decimals in ((60, None, 1), (45, 9, 0), (4, None, 0)):
        h = np.round(rng.normal(size=n) * 3, decimals)
        x = np.round(h + rng.normal(size=n) * 2, decimals)
        z = np.round(rng.normal(size=n), decimals)
        groups = None if n_groups is None else np.sort(rng.integers(0, n_groups, size=n))
        fast = S.bootstrap_spearman_samples(np.vstack([x, z]), h, n_resamples=120, seed=5, groups=groups)
        slow = []
        for w in S.bootstrap_weights(n, 120, seed=5, groups=groups):
            for row in w:
                idx = np.repeat(np.arange(n), row.astype(int))
                slow.append([S.spearman(x[idx], h[idx]), S.spearman(z[idx], h[idx])])
        slow = np.array(slow)
        assert fast.shape == (120, 2)
        np.testing.assert_array_equal(np.isnan(fast), np.isnan(slow))
        if n == 4:
            assert np.isnan(slow).any()  # the constant resamples are exercised
        ok = ~np.isnan(slow)
        np.testing.assert_allclose(fast[ok], slow[ok], rtol=0, atol=1e-12)
        if n == 4:
            continue
        expanded = [sps.spearmanr(x[np.repeat(np.arange(n), row.astype(int))],
                                  h[np.repeat(np.arange(n), row.astype(int))])[0]
                    for w in S.bootstrap_weights(n, 5, seed=5, groups=groups) for row in w]
        np.testing.assert_allclose(fast[:5, 0], expanded, rtol=0, atol=1e-12)


def test_bootstrap_ci_and_groups():
    x, h = _data(9, n=400)
    res = S.bootstrap_ci(x, h, n_resamples=300, seed=1)
    assert res.estimate == pytest.approx(sps.pearsonr(x, h)[0])
    assert res.low < res.estimate < res.high and res.samples.shape == (300,)
    lo, hi = S.fisher_ci(res.estimate, 400)
    assert abs(res.low - lo) < 0.03 and abs(res.high - hi) < 0.03  # bootstrap ~ Fisher for independent normal rows
    groups = np.repeat(np.arange(100), 4)
    for w in S.bootstrap_weights(400, 5, seed=0, groups=groups):
        assert (w.reshape(5, 100, 4) == w.reshape(5, 100, 4)[:, :, :1]).all()  # a group enters whole
        assert (w.sum(axis=1) == 400).all()
    sp = S.bootstrap_ci(x, h, "spearman", n_resamples=40, seed=1)
    assert sp.estimate == pytest.approx(sps.spearmanr(x, h)[0]) and sp.low < sp.high
    # the former keyword names still work: statistic= for method=, groups= for clusters=
    old = S.bootstrap_ci(x, h, statistic="pearson", n_resamples=50, seed=2, groups=groups)
    new = S.bootstrap_ci(x, h, "pearson", clusters=groups, n_resamples=50, seed=2)
    assert (old.low, old.high) == (new.low, new.high)


def test_paired_bootstrap():
    x, h = _data(2, n=500)
    noisy = x + np.random.default_rng(4).normal(size=500) * 3
    r = S.paired_bootstrap(x, noisy, h, n_resamples=400, seed=0)
    assert r.delta.estimate == pytest.approx(sps.pearsonr(x, h)[0] - sps.pearsonr(noisy, h)[0])
    assert r.delta.low > 0 and r.p_better < 0.01 and r.p_value == r.p_better
    same = S.paired_bootstrap(x, x, h, n_resamples=50)
    assert same.delta.estimate == 0 and same.p_better == 1.0 and same.p_worse == 1.0 and same.p_two_sided == 1.0
    with pytest.raises(ValueError, match="metric_b has 3 values"):
        S.paired_bootstrap(x[:4], x[:3], h[:4])


def test_one_resampling_unit_gives_no_interval_and_no_p():
    """One cluster: every resample is the data, so bootstrap_ci and paired_bootstrap give NaN, not [r, r] and a p
    of 1/(B+1); the estimates stay (scipy's pearsonr)."""
    x, h = _data(2, n=60)
    y = x + np.random.default_rng(5).normal(size=60)
    one = S.bootstrap_ci(x, h, clusters=["d"] * 60, n_resamples=100)
    assert np.isnan([one.low, one.high]).all() and one.estimate == pytest.approx(sps.pearsonr(x, h)[0], abs=1e-12)
    pair = S.paired_bootstrap(x, y, h, clusters=["d"] * 60, n_resamples=100)
    assert np.isnan([pair.delta.low, pair.delta.high, pair.p_better, pair.p_worse, pair.p_two_sided]).all()
    assert pair.delta.estimate == pytest.approx(sps.pearsonr(x, h)[0] - sps.pearsonr(y, h)[0], abs=1e-12)
    two = S.bootstrap_ci(x, h, clusters=["d", "e"] * 30, n_resamples=100)
    assert np.isfinite([two.low, two.high]).all()


def _differ_on_three_segments():
    """TED zh-en MT rows of 50 sampled source segments: chrF against refB, and the same scores +5 on the rows of 3
    source segments only, with MQM z."""
    import sacrebleu
    from notebook_checks._data import load_ted_zhen_mqm, sample_segment_ids

    ted = load_ted_zhen_mqm()
    d = ted[~ted["is_human"] & ted["mqm"].notna()]
    d = d[d["seg_id"].isin(sample_segment_ids(d["seg_id"], 50, 0))]
    a = np.array([sacrebleu.sentence_chrf(x, [r]).score for x, r in zip(d["target"], d["refB"])])
    seg = d["seg_id"].to_numpy()
    changed = np.isin(seg, np.unique(seg)[:3])
    return a + 5.0 * changed, a, d["mqm_z"].to_numpy(), seg, changed


def test_a_resample_where_two_metrics_agree_is_a_tie_on_every_blas_kernel():
    """Two metrics that differ on 3 of 50 source segments: every resample that draws none of the 3 has a difference
    of exactly 0, which floating-point sums give as about +-1e-16 with a sign that changed with the OpenBLAS kernel
    (p_better 0.2917, 0.2977, 0.2947, 0.2927 under the default, Prescott, Haswell and Sandybridge kernels). Such a
    draw is a tie, counted against both claims: recomputed here with the kit's draws (numpy default_rng(0), 100 a
    chunk, source segments), scipy's pearsonr on every resample written out row by row, and the ties found as the
    resamples that draw none of the 3 segments; the same bytes under another kernel and one thread."""
    import os
    import subprocess
    import sys

    b, a, h, seg, changed = _differ_on_three_segments()
    r = S.paired_bootstrap(b, a, h, "pearson", segments=seg, n_resamples=1000, seed=0)
    units = np.unique(seg, return_inverse=True)[1].reshape(-1)
    rng, k = np.random.default_rng(0), int(units.max()) + 1
    counts = [np.bincount(dr, minlength=k) for dr in np.vstack([rng.integers(0, k, (100, k)) for _ in range(10)])]
    tie = np.array([c[np.unique(units[changed])].sum() == 0 for c in counts])
    d = np.array([0.0 if t else sps.pearsonr(np.repeat(b, c[units]), np.repeat(h, c[units]))[0]
                  - sps.pearsonr(np.repeat(a, c[units]), np.repeat(h, c[units]))[0] for t, c in zip(tie, counts)])
    assert (int(tie.sum()), int((d < 0).sum()), int((d > 0).sum())) == (46, 270, 684)
    assert (r.p_better, r.p_worse) == ((270 + 46 + 1) / 1001, (684 + 46 + 1) / 1001) == (0.3166833166833167,
                                                                                          0.7302697302697303)
    code = ("import sys; sys.path.insert(0, 'tests'); from test_stats import _differ_on_three_segments as f; "
            "from syneval_nb import stats; b, a, h, seg, _ = f(); "
            "r = stats.paired_bootstrap(b, a, h, 'pearson', segments=seg, n_resamples=1000, seed=0); "
            "print(repr((r.p_better, r.p_worse, r.delta.low, r.delta.high)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "OPENBLAS_CORETYPE": "Prescott", "OPENBLAS_NUM_THREADS": "1"})
    p_better, p_worse, low, high = eval(out.stdout)
    assert (p_better, p_worse) == (r.p_better, r.p_worse)
    assert (low, high) == pytest.approx((r.delta.low, r.delta.high), abs=1e-15)


def test_p_better_means_a_beats_b():
    """p_better is the one-sided bootstrap p for "a is better than b": the share of resamples where
    stat(a) - stat(b) <= 0. a = human + small noise is clearly better than b = pure noise."""
    rng = np.random.default_rng(0)
    seg = np.repeat(np.arange(60), 5)
    h = rng.normal(size=300)
    a, b = h + 0.3 * rng.normal(size=300), rng.normal(size=300)
    r = S.paired_bootstrap(a, b, h, segments=seg, n_resamples=200, seed=0)
    assert (r.p_better, r.p_worse, r.p_two_sided) == (1 / 201, 1.0, 2 / 201)  # (k + 1) / (B + 1), k = 0 and 200
    d = r.a.samples - r.b.samples
    assert r.p_better == ((d <= 0).sum() + 1) / (len(d) + 1) and r.p_worse == ((d >= 0).sum() + 1) / (len(d) + 1)
    back = S.paired_bootstrap(b, a, h, segments=seg, n_resamples=200, seed=0)
    assert (back.p_better, back.p_worse) == (1.0, 1 / 201)
    t = S.correlation_table({"a": a, "b": b}, h, seg, baseline="b", n_resamples=200)
    row = S.table_row(t, "a")
    assert (row.p_better, row.p_worse, row.mark) == (1 / 201, 1.0, "+")
    tb = S.correlation_table({"a": a, "b": b}, h, seg, baseline="a", n_resamples=200)
    assert (S.table_row(tb, "b").p_better, S.table_row(tb, "b").mark) == (1.0, "-")


def _expand(idx_weights, seg):
    """Item indices of a resample given per-item weights, and segment labels that keep drawn copies apart."""
    idx = np.repeat(np.arange(len(seg)), idx_weights.astype(int))
    copy = np.concatenate([np.arange(int(k)) for k in idx_weights]) if len(idx) else idx
    return idx, seg[idx] * 1000 + copy


@pytest.mark.parametrize("method", ["within", "darr", "pearson"])
def test_vectorised_clustered_bootstrap_equals_explicit_resamples(method):
    """The vectorised within-segment Pearson and DARR tau on resampled segments equal the statistic recomputed
    on each resample written out row by row (a segment drawn twice enters as two segments)."""
    rng = np.random.default_rng(1)
    seg = np.repeat(np.arange(25), 4)
    seg[-1] = 99  # one singleton segment (left out of the within statistic)
    h = np.round(rng.normal(size=100), 1)
    m = np.round(h + rng.normal(size=100), 1)  # rounded: ties in the metric for darr
    fast, _ = S.boot_matrix(m[None, :], h, method, seg, None, 30, 7)
    units = np.unique(seg, return_inverse=True)[1]
    slow = []
    for w in S.bootstrap_weights(100, 30, seed=7, groups=units):
        for row in w:
            idx = np.repeat(np.arange(100), row.astype(int))
            # copies of a segment: label them apart by their position among the copies
            lab = np.empty(len(idx), dtype=np.int64)
            seen: dict = {}
            for k, i in enumerate(idx):
                key = (seg[i], i)
                seen[key] = seen.get(key, -1) + 1
                lab[k] = seg[i] * 1000 + seen[key]
            slow.append(S.correlation(m[idx], h[idx], method, lab) if method != "pearson"
                        else sps.pearsonr(m[idx], h[idx])[0])
    np.testing.assert_allclose(fast[:, 0], slow, atol=1e-10)


def test_holm_by_hand_and_brute_force():
    # p = .01 .04 .03 .20 (m = 4): sorted .01 .03 .04 .20 -> 4*.01 = .04, 3*.03 = .09, 2*.04 = .08 -> max .09,
    # 1*.20 = .20; in input order .04 .09 .09 .20
    np.testing.assert_allclose(S.holm([0.01, 0.04, 0.03, 0.20]), [0.04, 0.09, 0.09, 0.20])
    assert np.isnan(S.holm([0.01, np.nan, 0.5])[1]) and S.holm([0.01, np.nan, 0.5])[0] == pytest.approx(0.02)
    np.testing.assert_allclose(S.holm([0.5, 0.6]), [1.0, 1.0])  # capped at 1
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        S.holm([1.5])
    # brute force: the adjusted p of H_i is the smallest level at which Holm's step-down procedure rejects H_i
    rng = np.random.default_rng(3)
    for _ in range(20):
        p = np.round(rng.uniform(0, 0.2, size=6), 3)
        order = np.argsort(p, kind="stable")
        levels = sorted({min(1.0, (6 - j) * p[order[j]]) for j in range(6)} | {1.0})

        def rejected(level):
            out = set()
            for j, i in enumerate(order):
                if p[i] <= level / (6 - j):
                    out.add(i)
                else:
                    break
            return out

        brute = [min(lv for lv in levels if i in rejected(lv)) for i in range(6)]
        np.testing.assert_allclose(S.holm(p), brute, atol=1e-12)


def test_coverage_of_clustered_and_naive_intervals():
    """Synthetic clustered data with a known correlation: 200 segments x 13 systems, a segment effect u shared by
    metric and human (rows of one segment are correlated), m = u + e1, h = u + e2 with var u = 1, corr(e1, e2)
    = 0.2: true r = (1 + 0.2) / (1 + 1) = 0.6. Over 200 runs the 95% interval that resamples segments covers 0.6 in
    186 runs; the Fisher interval with n = rows in 136. (With 100 segments the percentile interval covers it in
    176-181 of 200 runs depending on the design: the usual small-sample undercoverage of percentile intervals.)"""
    true_r, hits = 0.6, np.zeros(2, dtype=int)
    for run in range(200):
        rng = np.random.default_rng(run)
        seg = np.repeat(np.arange(200), 13)
        u = rng.normal(size=200)[seg]
        e1 = rng.normal(size=len(seg))
        e2 = 0.2 * e1 + np.sqrt(1 - 0.2**2) * rng.normal(size=len(seg))
        m, h = u + e1, u + e2
        b = S.bootstrap_ci(m, h, segments=seg, n_resamples=200, seed=run)
        lo, hi = S.fisher_ci(S.pearson(m, h), len(h))
        hits += [b.low <= true_r <= b.high, lo <= true_r <= hi]
    assert hits.tolist() == [186, 136]
    assert hits[0] >= 180 and hits[1] < 160


# ---------------------------------------------------------------- controls and tables

def test_length_controls_by_hand():
    # hyp 3 vs refs (4, 2): both 1 away, the shorter (2) wins as in BLEU -> diff -1, ratio 3/2
    # hyp 5 vs (5,): diff 0, ratio 1 ; hyp 10 vs (8, 12): tie -> 8 -> diff -2, ratio 1.25
    c = S.length_controls([3, 5, 10], [[4, 2], [5], [8, 12]])
    np.testing.assert_allclose(c["neg_abs_len_diff"], [-1, 0, -2])
    np.testing.assert_allclose(c["len_ratio"], [1.5, 1.0, 1.25])
    np.testing.assert_allclose(S.length_controls(np.array([3, 5]), np.array([4, 4]))["len_ratio"], [0.75, 1.25])
    with pytest.raises(ValueError, match="length 0"):
        S.length_controls([3], [[0]])
    with pytest.raises(ValueError, match="hyp_len has 2 values"):
        S.length_controls([3, 4], [[1]])


def test_correlation_methods_against_independent_computations():
    rng = np.random.default_rng(5)
    seg = np.repeat(np.arange(30), 6)
    h = rng.normal(size=180) + np.repeat(rng.normal(size=30), 6)
    m = h + rng.normal(size=180)
    assert S.correlation(m, h, "pearson") == pytest.approx(sps.pearsonr(m, h)[0], abs=1e-12)
    assert S.correlation(m, h, "spearman") == pytest.approx(sps.spearmanr(m, h)[0], abs=1e-12)
    assert S.correlation(m, h, "kendall") == pytest.approx(sps.kendalltau(m, h, variant="b")[0], abs=1e-12)
    # within: Pearson of the segment-centred scores, centred here with a pandas groupby
    f = pd.DataFrame({"s": seg, "m": m, "h": h})
    c = f[["m", "h"]] - f.groupby("s")[["m", "h"]].transform("mean")
    assert S.correlation(m, h, "within", seg) == pytest.approx(sps.pearsonr(c.m, c.h)[0], abs=1e-12)
    assert S.within_segment(m, h, seg, "kendall") == pytest.approx(sps.kendalltau(c.m, c.h)[0], abs=1e-12)
    assert S.correlation(m, h, "darr", seg) == pytest.approx(_brute_tau(m, h, seg, 0.0))
    assert S.correlation(m, h, "darr", seg, threshold=1.0) == pytest.approx(_brute_tau(m, h, seg, 1.0))
    with pytest.raises(ValueError, match="pass segments="):
        S.correlation(m, h, "within")
    with pytest.raises(ValueError, match="unknown correlation method"):
        S.correlation(m, h, "tau-z")


def test_within_segment_by_hand():
    # segment A: metric 1 2 3, human 2 4 9 -> centred m -1 0 1, h -3 -1 4
    # segment B: metric 10 10, human 0 2 -> centred m 0 0, h -1 1; segment C: one item, left out
    # Pearson of m (-1 0 1 0 0) and h (-3 -1 4 -1 1): sum mh = 3 + 4 = 7; sum m^2 = 2; sum h^2 = 9+1+16+1+1 = 28
    # (both already have mean 0) -> r = 7 / sqrt(2 * 28) = 7 / sqrt(56)
    m = [1, 2, 3, 10, 10, 50]
    h = [2, 4, 9, 0, 2, -7]
    seg = ["A", "A", "A", "B", "B", "C"]
    assert S.within_segment(m, h, seg) == pytest.approx(7 / np.sqrt(56))
    assert S.pearson(m, h) != pytest.approx(7 / np.sqrt(56))  # the pooled r is something else
    np.testing.assert_allclose(S.center_within(h, seg), [-3, -1, 4, -1, 1, 0])


def test_correlation_table_columns_and_values():
    rng = np.random.default_rng(21)
    seg = np.repeat(np.arange(80), 5)
    h = rng.normal(size=400) + np.repeat(rng.normal(size=80), 5)
    good, bad = h + rng.normal(size=400), h + 3 * rng.normal(size=400)
    scores = {("BLEU", 4): bad, ("STM", 4): good, ("TKM", None): bad + good}
    t = S.correlation_table(scores, h, seg, baseline=("BLEU", 4), controls={S.LENGTH: rng.normal(size=400)},
                            n_resamples=300, seed=3)
    assert tuple(t.columns) == S.TABLE_COLUMNS
    assert t.metric.tolist() == ["BLEU-4", "STM-4", "TKM", "-|len diff|", "placebo"]
    row = S.table_row(t, "STM", 4)
    assert row.r == pytest.approx(sps.pearsonr(good, h)[0]) and row.baseline == "BLEU-4"
    assert (row.n, row.n_clusters, row.method) == (400, 80, "pearson")
    ci = S.bootstrap_ci(good, h, segments=seg, n_resamples=300, seed=3)  # the same resamples
    assert (row.low, row.high) == pytest.approx((ci.low, ci.high))
    pb = S.paired_bootstrap(good, bad, h, segments=seg, n_resamples=300, seed=3)
    assert (row.delta, row.delta_low, row.delta_high) == pytest.approx(
        (pb.delta.estimate, pb.delta.low, pb.delta.high))
    assert (row.p_better, row.p_worse) == (pb.p_better, pb.p_worse)
    tested = t[t.baseline != ""]
    np.testing.assert_allclose(tested.p_better_holm, S.holm(tested.p_better))
    np.testing.assert_allclose(tested.p_worse_holm, S.holm(tested.p_worse))
    assert S.table_row(t, "BLEU-4").baseline == "" and np.isnan(S.table_row(t, "BLEU-4").delta)
    # the placebo row: the 95th percentile (and central 95%) of N_NULL random columns' r, brute force with scipy
    cols = np.random.default_rng(np.random.SeedSequence([3, 0x706C6163, 1])).standard_normal((S.N_NULL, 400))
    brute = np.array([sps.pearsonr(c, h)[0] for c in cols])
    prow = S.table_row(t, "placebo")
    assert (prow.r, prow.low, prow.high) == pytest.approx(tuple(np.quantile(brute, [0.95, 0.025, 0.975])))
    assert row.mark == "+" and prow.mark == "" and np.isnan(prow.delta)
    # per-row baselines and the Williams column (explicit request only)
    t2 = S.correlation_table({("BLEU", 1): bad, ("BLEU", 2): bad, ("STM", 1): good, ("STM", 2): bad,
                              ("TKM", None): good}, h, seg, baseline=S.depth_baselines(
                                  [("BLEU", 1), ("BLEU", 2), ("STM", 1), ("STM", 2), ("TKM", None)], "BLEU", 2),
                             n_resamples=100, williams=True, placebo_column=False)
    assert t2.set_index("metric").baseline.to_dict() == {"BLEU-1": "", "BLEU-2": "", "STM-1": "BLEU-1",
                                                         "STM-2": "BLEU-2", "TKM": "BLEU-2"}
    st1 = S.table_row(t2, "STM-1")
    assert (st1.williams_t, st1.williams_p) == pytest.approx(S.williams_from_scores(h, good, bad))
    same = S.table_row(t2, "STM-2")  # identical to its baseline: no difference in any resample
    assert (same.delta, same.p_better, same.p_worse, same.mark) == (0.0, 1.0, 1.0, "")
    with pytest.raises(ValueError, match="baseline rows"):
        S.correlation_table(scores, h, seg, baseline="METEOR")
    with pytest.raises(ValueError, match="Williams"):
        S.correlation_table(scores, h, seg, method="kendall", williams=True, n_resamples=5)
    # system level: no segments, rows are the units
    ts = S.correlation_table({"a": good[:12], "b": bad[:12]}, h[:12], baseline="b", n_resamples=50)
    assert ts.n_clusters.tolist() == [12, 12, 12]


@pytest.mark.parametrize("method", ["spearman", "kendall", "within", "darr"])
def test_correlation_table_other_methods_use_the_same_resamples(method):
    rng = np.random.default_rng(4)
    seg = np.repeat(np.arange(20), 4)
    h = np.round(rng.normal(size=80), 1)
    a, b = h + rng.normal(size=80), rng.normal(size=80)
    t = S.correlation_table({"a": a, "b": b}, h, seg, baseline="b", method=method, n_resamples=40, seed=1)
    row = S.table_row(t, "a")
    assert row.r == pytest.approx(S.correlation(a, h, method, seg)) and row.method == method
    pb = S.paired_bootstrap(a, b, h, method, seg, n_resamples=40, seed=1)
    assert (row.delta_low, row.delta_high, row.p_better) == pytest.approx((pb.delta.low, pb.delta.high, pb.p_better))


def test_clusters_resample_whole_talks():
    rng = np.random.default_rng(2)
    seg = np.repeat(np.arange(40), 3)
    talk = seg // 10  # 4 talks of 10 segments
    h = rng.normal(size=120)
    m = h + rng.normal(size=120)
    t = S.correlation_table({"m": m}, h, seg, clusters=talk, method="within", n_resamples=20)
    assert t.n_clusters.tolist() == [4, 4]
    assert t.attrs["bootstrap"].unit == "cluster"
    with pytest.raises(ValueError, match="whole segments"):
        S.correlation_table({"m": m}, h, seg, clusters=np.arange(120) % 7, method="within", n_resamples=5)


def test_correlation_tables_stack_one_table_per_human_score():
    x, h = _data(21, n=100)
    seg = np.repeat(np.arange(25), 4)
    scores = {("BLEU", 1): x + 1, ("STM", 1): x}
    both = S.correlation_tables(scores, {"total": h, "negated": -h}, seg, baseline="BLEU-1", n_resamples=50)
    assert list(both.columns[:2]) == ["human", "metric"] and len(both) == 6
    total = both[both.human == "total"].drop(columns="human").reset_index(drop=True)
    alone = S.correlation_table(scores, h, seg, baseline="BLEU-1", n_resamples=50)
    pd.testing.assert_frame_equal(total, alone.drop(columns=[]), check_like=False)
    assert both[both.human == "negated"].r.tolist()[:2] == pytest.approx((-total.r).tolist()[:2])
    assert S.table_row(both, "STM", 1, human="negated").r == pytest.approx(-total.r[1])
    assert set(both.attrs["bootstrap"]) == {"total", "negated"}
    with pytest.raises(KeyError, match="2 rows"):
        S.table_row(both, "STM", 1)
    with pytest.raises(KeyError, match="0 rows"):
        S.table_row(both, "STM", 7)


def test_metric_names():
    assert S.metric_name("STM", 4) == "STM-4" == S.metric_name(("STM", 4))
    assert S.metric_name(("TKM", None)) == "TKM" == S.metric_name("TKM")
    with pytest.raises(ValueError, match="non-empty"):
        S.metric_name("")
    assert S.depth_baselines([("BLEU", 4), ("STM", 4), ("STM", 9), "length"]) == {
        "STM-4": "BLEU-4", "STM-9": "BLEU-4", "length": "BLEU-4"}


def test_placebo_and_permute_human():
    p = S.placebo(1000, seed=5)
    assert p.shape == (1000,) and np.array_equal(p, S.placebo(1000, seed=5)) and abs(p.mean()) < 0.1
    assert not np.array_equal(p, S.placebo(1000, seed=6))
    h = np.arange(12.0)
    assert np.array_equal(S.permute_human(h, None), h)
    ph = S.permute_human(h, 1)
    assert sorted(ph) == sorted(h) and not np.array_equal(ph, h) and np.array_equal(ph, S.permute_human(h, 1))
    seg = np.repeat([0, 1, 2], 4)
    pw = S.permute_human(h, 1, segments=seg)
    for s in range(3):  # shuffled within each segment only
        assert sorted(pw[seg == s]) == sorted(h[seg == s])


def _verdict_data(seed=0, n_seg=150, n_sys=8):
    rng = np.random.default_rng(seed)
    seg = np.repeat(np.arange(n_seg), n_sys)
    h = rng.normal(size=len(seg)) + np.repeat(rng.normal(size=n_seg), n_sys)
    return rng, seg, h


def test_verdicts_follow_the_rule():
    rng, seg, h = _verdict_data()
    n = len(h)
    good = h + rng.normal(size=n)
    weak = h + 4 * rng.normal(size=n)
    t = S.correlation_table({"good": good, "weak": weak}, h, seg, baseline="weak", n_resamples=300)
    v = S.verdict_beats(t, "good", "weak")
    assert v["verdict"] == "holds" and v["test"] == "beats" and v["ci"][0] > 0 and v["p"] < 0.05
    assert v["statistic"] == pytest.approx(S.pearson(good, h) - S.pearson(weak, h))
    b = t.attrs["bootstrap"]
    d = b.column("good") - b.column("weak")
    assert v["ci"] == pytest.approx(list(np.quantile(d, [0.025, 0.975]))) and v["p"] == ((d <= 0).sum() + 1) / (len(d) + 1)
    back = S.verdict_beats(t, "weak", "good")
    assert back["verdict"] == "does not hold" and back["ci"][1] < 0 and "below 0 decides" in back["reason"]
    # indistinguishable metrics: cannot tell
    twin = good + 0.01 * rng.normal(size=n)
    tt = S.correlation_table({"good": good, "twin": twin}, h, seg, baseline="twin", n_resamples=300)
    tw = S.verdict_beats(tt, "good", "twin")
    assert tw["verdict"] == "cannot tell" and tw["reason"].endswith("(the interval includes 0)")
    assert S.verdict_correlates(t, "good")["verdict"] == "holds"
    pl = S.verdict_beats_placebo(t, "good")
    q = np.quantile(b.null, 0.95)
    assert pl["test"] == "beats the placebo" and pl["statistic"] == pytest.approx(S.pearson(good, h) - q)
    assert pl["verdict"] == "holds" and pl["p"] == 1 / (S.N_NULL + 1) and pl["n_null"] == S.N_NULL
    s = S.verdict_sentence("good beats weak", v)
    assert s.startswith('"good beats weak": holds (beats: statistic +') and "p = 0.0033" in s  # 1 / 301: (k + 1) / (B + 1), never 0
    assert "Why: beats: pearson r(good) - pearson r(weak) = +" in s and "Rule: holds iff" in s
    import json
    json.dumps(v)  # JSON-ready


def test_decide_never_says_does_not_hold_above_zero():
    for lo, hi, p in [(0.01, 0.05, 0.9), (0.01, 0.05, 0.01), (-0.01, 0.05, 0.01), (-0.05, -0.01, 0.001)]:
        out = S.decide([lo, hi], p, 0.05)
        assert out == ("holds" if lo > 0 and p < 0.05 else "does not hold" if hi < 0 else "cannot tell")
        assert not (lo > 0 and out == "does not hold")


def test_holm_verdicts_with_a_verdict_of_several_tests_by_hand():
    """A verdict made of several tests (a system claim over metrics, chapter 09) brings each test into the one
    family: sorted 0.001, 0.01, 0.02, 0.5 -> 4*0.001, 3*0.01, 2*0.02 = 0.04, max(1*0.5, 0.04) = 0.5."""
    vs = {"one": S.make_verdict("beats", "d", 0.1, [0.01, 0.2], 0.01, 0.05, "rule"),
          "sys": {"tests": {"A better": 0.02, "A worse": 0.5, "B better": 0.001}, "ci": None, "p": 0.001}}
    out = S.holm_verdicts(vs)
    assert out["one"]["p_holm"] == pytest.approx(0.03) and out["one"]["verdict"] == "holds"
    assert out["sys"]["tests_holm"] == pytest.approx({"A better": 0.04, "A worse": 0.5, "B better": 0.004})
    assert {v["family_size"] for v in out.values()} == {4}
    assert "p_holm" not in out["sys"] and "verdict" not in out["sys"]  # its own rule decides it (chapter 09)


def test_holm_verdicts_one_family_by_hand():
    vs = {f"c{i}": S.make_verdict("beats", "d", 0.1, [0.01, 0.2], p, 0.05, "rule")
          for i, p in enumerate([0.01, 0.04, 0.03, 0.005])}
    assert all(v["verdict"] == "holds" for v in vs.values())
    out = S.holm_verdicts(vs)
    # by hand: sorted 0.005, 0.01, 0.03, 0.04 -> 4*0.005=0.02, 3*0.01=0.03, 2*0.03=0.06, max(0.06, 0.04)=0.06
    assert [out[c]["p_holm"] for c in ("c3", "c0", "c2", "c1")] == pytest.approx([0.02, 0.03, 0.06, 0.06])
    assert [out[c]["verdict"] for c in ("c0", "c1", "c2", "c3")] == ["holds", "cannot tell", "cannot tell", "holds"]
    assert out["c1"]["family_size"] == 4 and "is not below 0.05" in out["c1"]["reason"]
    # brute force over a random family: the step-down definition, one p at a time
    ps = np.random.default_rng(3).uniform(size=12) ** 3
    order = np.argsort(ps)
    brute = np.empty(12)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (12 - rank) * ps[i]))
        brute[i] = running
    assert S.holm(ps) == pytest.approx(brute)


def test_partial_samples_refit_the_regression_in_each_resample():
    rng = np.random.default_rng(11)
    n = 150
    z = np.column_stack([rng.normal(size=n), rng.normal(size=n)])
    h = z @ [1.0, 0.5] + rng.normal(size=n)
    m = np.vstack([h + z[:, 0] + rng.normal(size=n), rng.normal(size=n)])
    seg = np.repeat(np.arange(50), 3)
    s = S.bootstrap_partial_samples(m, h, z, 7, 3, seg)
    a = lambda zz: np.column_stack([np.ones(len(zz)), zz])  # noqa: E731
    res = lambda v, zz: v - a(zz) @ np.linalg.lstsq(a(zz), v, rcond=None)[0]  # noqa: E731
    for row, w in zip(s, next(S.bootstrap_weights(n, 7, 3, seg))):
        idx = np.repeat(np.arange(n), w.astype(int))
        for j in range(2):
            assert row[j] == pytest.approx(sps.pearsonr(res(m[j][idx], z[idx]), res(h[idx], z[idx]))[0], abs=1e-9)
    # the table: estimate = residual-regression r, the same resamples and units as the plain table
    cov = {"log hyp length": z[:, 0], "log ref length": z[:, 1]}
    t = S.correlation_table({"a": m[0], "b": m[1]}, h, seg, baseline="b", given=cov, n_resamples=7, seed=3)
    ra = S.table_row(t, "a")
    assert ra.r == pytest.approx(sps.pearsonr(res(m[0], z), res(h, z))[0], abs=1e-12)
    assert ra.method == "partial pearson | log hyp length, log ref length"
    np.testing.assert_allclose(t.attrs["bootstrap"].samples, s)
    v = S.verdict_beats(t, "a", "b")
    assert v["test"] == "beats beyond length" and "partial r(a | log hyp length" in v["statistic_text"]
    assert S.verdict_correlates(t, "a")["test"] == "correlates beyond length"
    # the partial placebo: the random columns' residual r (regression fitted once)
    cols = np.random.default_rng(np.random.SeedSequence([3, 0x706C6163, 1])).standard_normal((S.N_NULL, n))
    brute = [sps.pearsonr(res(c, z), res(h, z))[0] for c in cols[:5]]
    assert t.attrs["bootstrap"].null[:5] == pytest.approx(brute, abs=1e-10)
    with pytest.raises(ValueError, match="partial Pearson"):
        S.correlation_table({"a": m[0]}, h, seg, method="within", given=cov, n_resamples=5)


def test_placebo_distribution_within_and_permutation_by_brute_force():
    rng = np.random.default_rng(5)
    seg = np.repeat(np.arange(30), 4)
    h = rng.normal(size=120)
    cols = np.random.default_rng(np.random.SeedSequence([2, 0x706C6163, 1])).standard_normal((100, 120))
    d = S.placebo_distribution(h, 100, 2, "within", seg)
    assert d[:6] == pytest.approx([S.within_segment(c, h, seg) for c in cols[:6]], abs=1e-12)
    with pytest.raises(ValueError, match="at least 100"):
        S.placebo_distribution(h, 50)
    x, hs = rng.normal(size=(2, 19)), rng.normal(size=19)
    perm = S.permutation_distribution(x, hs, 200, 4)
    prng = np.random.default_rng(np.random.SeedSequence([4, 0x7065726D, 1]))
    first = [hs[prng.permutation(19)] for _ in range(3)]
    assert perm[:3, 1] == pytest.approx([sps.pearsonr(x[1], f)[0] for f in first], abs=1e-12)
    t = S.correlation_table({"a": x[0], "b": x[1]}, hs, null="permutation", n_resamples=50, n_null=200, seed=4)
    assert "placebo" not in t.metric.tolist()
    v = S.verdict_beats_placebo(t, "b")
    assert v["test"] == "beats permuted human scores"
    assert v["p"] == pytest.approx(((perm[:, 1] >= sps.pearsonr(x[1], hs)[0]).sum() + 1) / (len(perm) + 1))
    assert S.null_p(0.5, np.array([0.1, 0.6, 0.7, np.nan])) == pytest.approx((2 + 1) / (3 + 1))


def test_length_controls_and_covariates():
    c = S.length_controls([3, 10], [[4, 8], [10, 12]])
    assert c["neg_hyp_len"].tolist() == [-3, -10] and c["neg_ref_len"].tolist() == [-6, -11]
    assert c["neg_abs_len_diff"].tolist() == [-1, 0] and c["len_ratio"].tolist() == [0.75, 1.0]
    assert list(S.length_rows([3, 10], [[4, 8], [10, 12]])) == ["-hyp length", "-ref length", "-|len diff|",
                                                                 "len ratio"]
    g = S.length_covariates([0, 10], [[4, 8], [10, 12]])
    assert g["log hyp length"] == pytest.approx([0.0, np.log(11)]) and g["log ref length"] == pytest.approx(
        [np.log(7), np.log(12)])


def test_permuted_human_scores_never_give_holds():
    """The permute_human switch: on shuffled human scores no verdict of any test may hold (Holm over all)."""
    rng, seg, h = _verdict_data(seed=1)
    n = len(h)
    good, weak = h + rng.normal(size=n), h + 4 * rng.normal(size=n)
    lens = np.abs(rng.normal(size=(2, n))) * 10 + 1
    cov = S.length_covariates(lens[0], lens[1])
    verdicts = {}
    for seed in range(5):
        hp = S.permute_human(h, seed)
        for given in (None, cov):
            t = S.correlation_table({"good": good, "weak": weak}, hp, seg, baseline="weak", n_resamples=200,
                                    seed=seed, given=given)
            k = f"{seed}{given is not None}"
            verdicts[k + "b"] = S.verdict_beats(t, "good", "weak")
            verdicts[k + "c"] = S.verdict_correlates(t, "good")
            verdicts[k + "p"] = S.verdict_beats_placebo(t, "good")
    assert [c for c, v in S.holm_verdicts(verdicts).items() if v["verdict"] == "holds"] == []


def test_rank_gap_by_hand():
    """rank_gap is chapter-04 code (studies.dependency_metrics); its test stays here."""
    # percentile ranks over 5 items: a -> .2 .4 .6 .8 1.0; b -> 1.0 .8 .6 .4 .2; gaps -.8 -.4 0 .4 .8
    a, b = [1, 2, 3, 4, 5], [50, 40, 30, 20, 10]
    assert rank_gap(a, b) == (4, 1.0, 0.2)
    assert rank_gap(a, b, eligible=[True, True, True, False, False]) == (2, 0.6, 0.6)
    assert rank_gap(a, b, eligible=[False] * 5) == (4, 1.0, 0.2)  # nothing eligible: every item
    # ties: items 0 and 1 share a (avg rank 1.5/4 = .375) and b (avg .375): gap 0 for both; tiebreak decides
    a2, b2 = [1, 1, 2, 3], [1, 1, 3, 2]
    assert rank_gap(a2, b2, eligible=[True, True, False, False], tiebreak=[0, 5, 0, 0])[0] == 1
    assert rank_gap(a2, b2, eligible=[True, True, False, False])[0] == 0  # no tiebreak: the first
    with pytest.raises(ValueError, match="same, non-zero length"):
        rank_gap([1, 2], [1])
    with pytest.raises(ValueError, match="eligible has 1 entries"):
        rank_gap([1, 2], [2, 1], eligible=[True])
    with pytest.raises(ValueError, match="non-finite"):
        rank_gap([1, float("nan")], [2, 1])


def test_partial_correlation_formula_and_scipy():
    rng = np.random.default_rng(8)
    z = rng.normal(size=300)
    x = z + rng.normal(size=300)
    y = z + 0.5 * x + rng.normal(size=300)
    rxy, rxz, ryz = sps.pearsonr(x, y)[0], sps.pearsonr(x, z)[0], sps.pearsonr(y, z)[0]
    expect = (rxy - rxz * ryz) / np.sqrt((1 - rxz**2) * (1 - ryz**2))
    assert S.partial_correlation(x, y, z) == pytest.approx(expect, abs=1e-12)
    # two controls: residuals from scipy's linregress-free lstsq equal sklearn-free normal equations
    z2 = np.column_stack([z, rng.normal(size=300)])
    a = np.column_stack([np.ones(300), z2])
    res = lambda v: v - a @ np.linalg.solve(a.T @ a, a.T @ v)  # noqa: E731
    assert S.partial_correlation(x, y, z2) == pytest.approx(sps.pearsonr(res(x), res(y))[0], abs=1e-10)
    xn = x.copy()
    xn[0] = np.nan
    with pytest.raises(ValueError, match="nan_policy"):
        S.partial_correlation(xn, y, z)
    assert np.isnan(S.partial_correlation(z * 2 + 1, y, z))  # x explained by z: undefined, not rounding noise
    assert S.partial_correlation(xn, y, z, nan_policy="omit") == pytest.approx(
        S.partial_correlation(x[1:], y[1:], z[1:]))


def test_a_constant_resample_is_nan_not_rounding_noise():
    # two segments; the metric is constant within each: a resample that draws one segment twice has a constant
    # metric (r undefined), one that draws both has r = pearson(m, h) = 0.8627...
    seg = np.repeat([0, 1], 3)
    m, h = np.array([1.0, 1, 1, 2, 2, 2]), np.array([0.1, 0.5, 0.3, 0.9, 0.7, 1.2])
    s = S.bootstrap_pearson_samples(m[None], h, 20, 0, seg)[:, 0]
    both = np.array([len(set(np.repeat(seg, w.astype(int)))) == 2 for c in S.bootstrap_weights(6, 20, 0, seg)
                     for w in c])
    assert np.isnan(s[~both]).all() and np.allclose(s[both], sps.pearsonr(m, h)[0])
    assert both.sum() == 9  # of 20 resamples (seed 0)


def test_a_tau_verdict_names_its_statistic():
    """A verdict on a tau table says tau, not r: "wmt12 tau(A) - wmt12 tau(B)"."""
    from syneval_nb.stats.verdicts import _r_text

    def boot(method):
        return S.TableBootstrap(("+dr",), np.zeros(1), np.zeros((1, 1)), {}, {}, 0.05, method, "segment", 1,
                                    False)

    assert _r_text(boot("wmt12 tau"), "+dr") == "wmt12 tau(+dr)"
    assert _r_text(boot("tau, metric ties excluded"), "+dr") == "tau(+dr, metric ties excluded)"
    assert _r_text(boot("pearson"), "STM-4") == "pearson r(STM-4)"


def test_cluster_floor_and_edge_rules():
    """Issue 35: a verdict resampling fewer than 20 units is exploratory (out of the Holm family, never holds); a
    contrast of edges holds only where the metric has its own edge on the first human score."""
    rng = np.random.default_rng(3)
    h = rng.normal(size=400)
    good, weak = h + 0.5 * rng.normal(size=400), rng.normal(size=400)
    talks = np.repeat(np.arange(19), 22)[:400]  # 19 clusters: one below the floor
    t19 = S.correlation_table({"good": good, "weak": weak}, h, clusters=talks, n_resamples=200)
    v = S.verdict_beats(t19, "good", "weak")
    assert v["verdict"] == "exploratory" and v["n_units"] == 19 and v["ci"][0] > 0
    assert "fewer than 20" in v["reason"] and "exploratory" in v["rule"]
    t20 = S.correlation_table({"good": good, "weak": weak}, h, clusters=np.repeat(np.arange(20), 20),
                              n_resamples=200)
    w = S.verdict_beats(t20, "good", "weak")
    assert w["verdict"] == "holds" and w["n_units"] == 20 and w["p"] == 1 / 201
    fam = S.holm_verdicts({"a": v, "b": w})
    assert fam["a"]["verdict"] == "exploratory" and np.isnan(fam["a"]["p_holm"])
    assert fam["b"]["family_size"] == 1 and fam["b"]["p_holm"] == 1 / 201  # the exploratory one is not counted
    # a contrast with a large difference of differences but no edge on the first score cannot hold
    v2 = S.make_verdict("difference", "d", 0.3, [0.1, 0.5], 0.001, 0.05, "rule",
                        requires={"text": "A's own edge on X", "ci": [-0.02, 0.04]})
    assert v2["verdict"] == "cannot tell" and "without that edge" in v2["reason"]
    v3 = S.make_verdict("difference", "d", 0.3, [0.1, 0.5], 0.001, 0.05, "rule",
                        requires={"text": "A's own edge on X", "ci": [0.01, 0.04]})
    assert v3["verdict"] == "holds" and S.holm_verdicts({"x": v2})["x"]["verdict"] == "cannot tell"


def test_flexible_length_model_is_a_spline_basis_and_beats_the_linear_one():
    """Issue 35: "beyond length" removes a flexible model of both lengths: log lengths with restricted cubic spline
    terms (Harrell's formula, recomputed here by hand), the spline terms of the log ratio and the product."""
    rng = np.random.default_rng(5)
    hl = rng.integers(1, 60, size=300)
    rl = rng.integers(1, 60, size=300)
    cov = S.length_covariates(hl, rl)
    assert list(cov) == ["log hyp length", "log hyp length s1", "log hyp length s2", "log ref length",
                         "log ref length s1", "log ref length s2", "log length ratio s1", "log length ratio s2",
                         "log hyp x ref length"]
    h = np.log1p(hl)
    k = np.quantile(h, [0.05, 0.35, 0.65, 0.95])

    def rcs(x, j):  # Harrell (2015) eq. 2.25, divided by (k4 - k1)^2
        p = lambda u: np.maximum(u, 0) ** 3  # noqa: E731
        return (p(x - k[j]) - p(x - k[2]) * (k[3] - k[j]) / (k[3] - k[2])
                + p(x - k[3]) * (k[2] - k[j]) / (k[3] - k[2])) / (k[3] - k[0]) ** 2

    assert cov["log hyp length s1"] == pytest.approx(rcs(h, 0), abs=1e-12)
    assert cov["log hyp length s2"] == pytest.approx(rcs(h, 1), abs=1e-12)
    assert cov["log hyp x ref length"] == pytest.approx(h * np.log1p(rl), abs=1e-12)
    lin = S.length_covariates(hl, rl, model="linear")
    assert list(lin) == ["log hyp length", "log ref length"]
    # a quality that falls off on both sides of the reference length: the linear model misses it
    y = -np.abs(np.log1p(hl) - np.log1p(rl)) + 0.1 * rng.normal(size=300)
    m = rng.normal(size=300) + y
    r_lin = S.partial_correlation(m, y, np.column_stack(list(lin.values())))
    r_flex = S.partial_correlation(m, y, np.column_stack(list(cov.values())))
    assert r_flex < r_lin  # more of the metric's agreement was length
    t = S.correlation_table({"m": m}, y, None, given=cov, n_resamples=50, placebo_column=False)
    assert t.loc[t.metric == "m", "r"].item() == pytest.approx(r_flex, abs=1e-12)
    assert t["method"].iloc[0] == "partial pearson | the length model"
    # a constant length has no spline terms; a wrong model name is refused
    assert list(S.length_covariates([5] * 10, [7] * 10)) == ["log hyp length", "log ref length",
                                                             "log hyp x ref length"]
    with pytest.raises(ValueError, match="'flexible' or 'linear'"):
        S.length_covariates(hl, rl, model="cubic")
