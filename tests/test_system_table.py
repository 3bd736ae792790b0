"""stats.system_table, the one system-level table (issue 34), against computations written out here: scipy's
Pearson r on every resample drawn by hand, Williams (1959) from its formula, mt-metrics-eval's ``Agreement`` for the
pairwise accuracy. (Chapter 10's use over source segments is tested on real rows in
tests/test_studies_learned_study.py.)"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats as sps

from syneval_nb import stats as S

ORACLES = Path(__file__).resolve().parent.parent.parent / "shared" / "oracles"


def _williams(r12, r13, r23, n):
    """Williams (1959), one-sided (Graham & Baldwin 2014, eq. 3), written out."""
    det = 1 - r12 ** 2 - r13 ** 2 - r23 ** 2 + 2 * r12 * r13 * r23
    t = (r12 - r13) * np.sqrt((n - 1) * (1 + r23)) / np.sqrt(2 * det * (n - 1) / (n - 3)
                                                             + ((r12 + r13) / 2) ** 2 * (1 - r23) ** 3)
    return t, sps.t.sf(t, n - 3)


def test_systems_resampled_equals_scipy_on_each_resample_and_williams():
    rng = np.random.default_rng(11)
    n, B = 12, 100
    h = rng.normal(size=n)
    base = h + rng.normal(size=n)
    a = h + 0.4 * rng.normal(size=n)
    t = S.system_table({"a": a, "base": base}, h, baseline="base", controls={"len": rng.normal(size=n)},
                       n_resamples=B, seed=5).set_index("metric")
    assert list(t.index) == ["a", "base", "len"]  # no placebo row: the null is a permutation test
    draws = np.random.default_rng(5).integers(0, n, size=(B, n))  # the systems drawn, by hand
    ra = np.array([sps.pearsonr(a[d], h[d])[0] for d in draws])
    rb = np.array([sps.pearsonr(base[d], h[d])[0] for d in draws])
    assert np.isfinite(ra).all() and np.isfinite(rb).all()
    r_a, r_b = sps.pearsonr(a, h)[0], sps.pearsonr(base, h)[0]
    assert t.at["a", "r"] == pytest.approx(r_a, abs=1e-12)
    assert [t.at["a", "low"], t.at["a", "high"]] == pytest.approx(np.percentile(ra, [2.5, 97.5]), abs=1e-12)
    assert t.at["a", "delta"] == pytest.approx(r_a - r_b, abs=1e-12)
    assert [t.at["a", "delta_low"], t.at["a", "delta_high"]] == pytest.approx(
        np.percentile(ra - rb, [2.5, 97.5]), abs=1e-12)
    assert t.at["a", "p_better"] == pytest.approx((np.sum(ra - rb <= 0) + 1) / (B + 1), abs=1e-12)
    assert (t.at["a", "williams_t"], t.at["a", "williams_p"]) == pytest.approx(
        _williams(r_a, r_b, sps.pearsonr(a, base)[0], n), abs=1e-12)
    assert (t.at["a", "n"], t.at["a", "n_clusters"], t.at["a", "baseline"]) == (n, n, "base")
    boot = t.attrs["bootstrap"]
    assert (boot.unit, boot.null_kind, boot.null.shape) == ("item", "permutation", (S.N_NULL, 3))


def test_systems_resampled_spearman_equals_scipy_on_each_resample():
    """``method="spearman"`` (chapter 07's system level): scipy's Spearman rho on the systems drawn by hand, the
    paired differences on the same draws; no Williams test and no permutation null (both are Pearson's)."""
    rng = np.random.default_rng(3)
    n, B = 10, 80
    h = rng.normal(size=n)
    a, b = h + 0.5 * rng.normal(size=n), h + rng.normal(size=n)
    t = S.system_table({"a": a, "b": b}, h, baseline="b", method="spearman", holm=False, n_resamples=B,
                       seed=7).set_index("metric")
    assert list(t.columns) == list(S.TABLE_COLUMNS[1:])  # no williams_t / williams_p
    draws = np.random.default_rng(7).integers(0, n, size=(B, n))
    ra = np.array([sps.spearmanr(a[d], h[d])[0] for d in draws])
    rb = np.array([sps.spearmanr(b[d], h[d])[0] for d in draws])
    assert t.at["a", "r"] == pytest.approx(sps.spearmanr(a, h)[0], abs=1e-12)
    assert (t.at["a", "method"], t.at["b", "r"]) == ("spearman", pytest.approx(sps.spearmanr(b, h)[0], abs=1e-12))
    ok = np.isfinite(ra)
    assert ok.all()
    assert [t.at["a", "low"], t.at["a", "high"]] == pytest.approx(np.percentile(ra, [2.5, 97.5]), abs=1e-12)
    assert t.at["a", "p_better"] == pytest.approx((np.sum(ra - rb <= 0) + 1) / (B + 1), abs=1e-12)
    assert t.at["a", "p_better_holm"] == t.at["a", "p_better"]  # holm=False
    boot = t.attrs["bootstrap"]
    assert (boot.unit, boot.null_kind, boot.null) == ("item", None, None)
    with pytest.raises(ValueError, match="unknown correlation method 'nope'"):
        S.system_table({"a": a}, h, method="nope")
    with pytest.raises(ValueError, match="is Pearson's: baseline=, controls= and method= are for the table over"):
        S.system_table({"a": a}, h, list("aabbccddee"), segments=[0, 1] * 5, method="spearman")


def test_bad_input_is_named_before_any_work():
    h = np.arange(6.0)
    with pytest.raises(ValueError, match="give both systems= and segments="):
        S.system_table({"m": h}, h, systems=list("aabbcc"))
    with pytest.raises(ValueError, match="give both systems= and segments="):
        S.system_table({"m": h}, h, segments=[0, 1, 2, 0, 1, 2])
    with pytest.raises(ValueError, match="makes no comparisons"):
        S.system_table({"m": h, "b": -h}, h, list("aabbcc"), segments=[0, 1] * 3, baseline="b")
    with pytest.raises(ValueError, match="at least 3 systems"):
        S.system_table({"m": h}, h, list("aaabbb"), segments=[0, 1, 2] * 2)
    with pytest.raises(ValueError, match="human has 6 rows but systems has 5"):
        S.system_table({"m": h}, h, list("aabbc"), segments=[0, 1] * 3)
    # systems on different source segments: named before any resample (the means would be over other sentences)
    with pytest.raises(ValueError, match=r"^system_table over source segments needs every system scored on the "
                                         r"same source segments .*: 'c' has rows on 1 of the 2 segments$"):
        S.system_table({"m": h}, h, list("aabbcc"), segments=[0, 1, 0, 1, 0, 0])


def test_segments_resampled_accuracy_is_mtme_agreement_with_ties():
    """Over source segments: 4 systems x 5 segments; systems c and d have the same metric scores and the same
    human scores on every segment, so their pair is tied in both, which mt-metrics-eval's Agreement counts as
    agreeing (sign 0 == sign 0) in the full data and in every resample."""
    if not (ORACLES / "mt_metrics_eval" / "stats.py").is_file():
        raise RuntimeError(f"the mt-metrics-eval oracle is not at {ORACLES}; put ../shared beside the checkout")
    if str(ORACLES) not in sys.path:
        sys.path.insert(0, str(ORACLES))
    from mt_metrics_eval import stats as mtme

    rng = np.random.default_rng(3)
    n_seg, B = 5, 40
    hs = {s: rng.normal(size=n_seg) for s in "ab"}
    ms = {s: hs[s] + rng.normal(size=n_seg) for s in "ab"}
    hs["c"] = hs["d"] = rng.normal(size=n_seg)
    ms["c"] = ms["d"] = rng.normal(size=n_seg)
    systems = np.repeat(list("abcd"), n_seg)
    seg = np.tile(np.arange(n_seg), 4)
    h = np.concatenate([hs[s] for s in "abcd"])
    m = np.concatenate([ms[s] for s in "abcd"])
    t = S.system_table({"m": m}, h, systems, segments=seg, n_resamples=B, seed=7).set_index("metric")
    hm, mm = [np.array([v[s].mean() for s in "abcd"]) for v in (hs, ms)]
    agree, pairs = mtme.Agreement(list(hm), list(mm))
    assert (agree, pairs) == (t.at["m", "accuracy"] * 6, 6) and t.at["m", "pairs"] == 6 and t.at["m", "systems"] == 4
    assert t.at["m", "r"] == pytest.approx(sps.pearsonr(mm, hm)[0], abs=1e-12)
    rs, accs = [], []
    for d in np.random.default_rng(7).integers(0, n_seg, size=(B, n_seg)):  # the segments drawn, by hand
        hm, mm = [np.array([v[s][d].mean() for s in "abcd"]) for v in (hs, ms)]
        rs.append(sps.pearsonr(mm, hm)[0])
        a, p = mtme.Agreement(list(hm), list(mm))
        accs.append(a / p)
    assert [t.at["m", "low"], t.at["m", "high"]] == pytest.approx(np.percentile(rs, [2.5, 97.5]), abs=1e-12)
    assert [t.at["m", "acc low"], t.at["m", "acc high"]] == pytest.approx(np.percentile(accs, [2.5, 97.5]),
                                                                          abs=1e-12)
