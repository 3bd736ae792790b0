"""Statistics against scipy, brute-force enumeration, hand arithmetic and a published worked example."""
from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from syneval_nb import stats as S


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


def test_bootstrap_ci_and_groups():
    x, h = _data(9, n=400)
    res = S.bootstrap_ci(x, h, n_resamples=300, seed=1)
    assert res.estimate == pytest.approx(sps.pearsonr(x, h)[0])
    assert res.low < res.estimate < res.high and res.samples.shape == (300,)
    lo, hi = S.fisher_ci(res.estimate, 400)
    assert abs(res.low - lo) < 0.03 and abs(res.high - hi) < 0.03  # bootstrap ~ Fisher for normal data
    groups = np.repeat(np.arange(100), 4)
    for w in S.bootstrap_weights(400, 5, seed=0, groups=groups):
        assert (w.reshape(5, 100, 4) == w.reshape(5, 100, 4)[:, :, :1]).all()  # a group enters whole
        assert (w.sum(axis=1) == 400).all()
    sp = S.bootstrap_ci(x, h, statistic="spearman", n_resamples=40, seed=1)
    assert sp.estimate == pytest.approx(sps.spearmanr(x, h)[0]) and sp.low < sp.high


def test_paired_bootstrap():
    x, h = _data(2, n=500)
    noisy = x + np.random.default_rng(4).normal(size=500) * 3
    r = S.paired_bootstrap(x, noisy, h, n_resamples=400, seed=0)
    assert r.delta.estimate == pytest.approx(sps.pearsonr(x, h)[0] - sps.pearsonr(noisy, h)[0])
    assert r.delta.low > 0 and r.p_value < 0.01
    same = S.paired_bootstrap(x, x, h, n_resamples=50)
    assert same.delta.estimate == 0 and same.p_value == 1.0
    with pytest.raises(ValueError, match="metric_b has 3 values"):
        S.paired_bootstrap(x[:4], x[:3], h[:4])


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


def test_correlation_table():
    x, h = _data(21, n=400)
    good = x
    bad = x + np.random.default_rng(2).normal(size=400) * 3
    scores = {("BLEU", 1): bad, ("BLEU", 2): bad * 2 + 1, ("HWCM", 1): good, ("HWCM", 2): bad, ("TKM", None): good}
    t = S.correlation_table(scores, h)
    row = t[(t.metric == "HWCM") & (t.depth == 1)].iloc[0]
    assert row.r == pytest.approx(sps.pearsonr(good, h)[0])
    r12, r13, r23 = sps.pearsonr(h, good)[0], sps.pearsonr(h, bad)[0], sps.pearsonr(good, bad)[0]
    assert (row.t_vs_base, row.p_better) == pytest.approx(S.williams_test(r12, r13, r23, 400))
    assert row.mark == "+"
    same = t[(t.metric == "HWCM") & (t.depth == 2)].iloc[0]
    assert same.mark == "" and same.t_vs_base == pytest.approx(0.0)  # identical to BLEU@2 up to scale
    kern = t[t.metric == "TKM"].iloc[0]
    assert kern.mark == "" and np.isnan(kern.t_vs_base)  # BLEU at baseline_depth=4 is absent: no test
    t1 = S.correlation_table(scores, h, baseline_depth=1)
    assert t1[t1.metric == "TKM"].iloc[0].mark == "+"  # depth-less rows are tested against BLEU@1 here
    assert (row.low, row.high) == pytest.approx(S.fisher_ci(row.r, 400))
    tb = S.correlation_table(scores, h, ci="bootstrap", n_resamples=200, seed=1)
    assert (tb.r == t.r).all() and (tb.low < tb.r).all() and (tb.r < tb.high).all()



def test_correlation_tables_stack_one_table_per_human_score():
    x, h = _data(21, n=100)
    scores = {("BLEU", 1): x + 1, ("STM", 1): x}
    both = S.correlation_tables(scores, {"total": h, "negated": -h})
    assert list(both.columns[:3]) == ["human", "metric", "depth"] and len(both) == 4
    total = both[both.human == "total"].drop(columns="human").reset_index(drop=True)
    pd.testing.assert_frame_equal(total, S.correlation_table(scores, h))
    assert both[both.human == "negated"].r.tolist() == pytest.approx((-total.r).tolist())
    assert S.table_row(both, "STM", 1, human="negated").r == pytest.approx(-total.r[1])
    kern = S.correlation_table({("BLEU", 4): x + 1, ("TKM", None): x}, h)
    assert S.table_row(kern, "TKM").r == pytest.approx(sps.pearsonr(x, h)[0])
    with pytest.raises(KeyError, match="2 rows"):
        S.table_row(both, "STM", 1)
    with pytest.raises(KeyError, match="0 rows"):
        S.table_row(both, "STM", 7)


def test_rank_gap_by_hand():
    # percentile ranks over 5 items: a -> .2 .4 .6 .8 1.0; b -> 1.0 .8 .6 .4 .2; gaps -.8 -.4 0 .4 .8
    a, b = [1, 2, 3, 4, 5], [50, 40, 30, 20, 10]
    assert S.rank_gap(a, b) == (4, 1.0, 0.2)
    assert S.rank_gap(a, b, eligible=[True, True, True, False, False]) == (2, 0.6, 0.6)
    assert S.rank_gap(a, b, eligible=[False] * 5) == (4, 1.0, 0.2)  # nothing eligible: every item
    # ties: items 0 and 1 share a (avg rank 1.5/4 = .375) and b (avg .375): gap 0 for both; tiebreak decides
    a2, b2 = [1, 1, 2, 3], [1, 1, 3, 2]
    assert S.rank_gap(a2, b2, eligible=[True, True, False, False], tiebreak=[0, 5, 0, 0])[0] == 1
    assert S.rank_gap(a2, b2, eligible=[True, True, False, False])[0] == 0  # no tiebreak: the first
    with pytest.raises(ValueError, match="same, non-zero length"):
        S.rank_gap([1, 2], [1])
    with pytest.raises(ValueError, match="eligible has 1 entries"):
        S.rank_gap([1, 2], [2, 1], eligible=[True])
    with pytest.raises(ValueError, match="non-finite"):
        S.rank_gap([1, float("nan")], [2, 1])


def test_table_verdict_counts_cells_both_ways():
    nan = float("nan")
    t = pd.DataFrame({"metric": ["BLEU", "STM", "STM", "HWCM", "HWCM"], "depth": [1, 1, 2, 1, 2],
                      "p_better": [nan, 0.01, 0.2, 0.9, 0.99], "p_worse": [nan, 0.99, 0.8, 0.1, 0.01]})
    assert S.table_verdict(t, ["STM"]) == ("holds", 1, 0, 2)  # 1 of 2 better, none worse
    assert S.table_verdict(t, ["HWCM"]) == ("does not hold", 0, 1, 2)
    assert S.table_verdict(t, ["HWCM"], worse=True) == ("holds", 1, 0, 2)  # "HWCM does worse" holds
    assert S.table_verdict(t, ["STM", "HWCM"]) == ("mixed", 1, 1, 4)
    assert S.table_verdict(t, ["BLEU"]) == ("cannot tell", 0, 0, 1)  # the baseline has no test
    assert S.table_verdict(t, ["STM"], alpha=0.001) == ("cannot tell", 0, 0, 2)

def test_claim_verdict():
    nan = float("nan")
    assert S.claim_verdict([0.01, 0.02, 0.3], [0.99, 0.98, 0.7]) == "holds"  # 2 of 3 better, none worse
    assert S.claim_verdict([0.9, 0.99], [0.1, 0.01]) == "does not hold"  # 1 of 2 worse (>= k/2), none better
    assert S.claim_verdict([0.9, 0.5, 0.6], [0.1, 0.5, 0.4]) == "cannot tell"  # nothing significant
    assert S.claim_verdict([0.99, 0.99], [0.01, 0.01]) == "does not hold"
    assert S.claim_verdict([0.01, 0.99], [0.99, 0.01]) == "mixed"
    assert S.claim_verdict([nan], [nan]) == "cannot tell"


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
