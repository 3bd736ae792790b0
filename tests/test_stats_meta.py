"""syneval_nb.stats.meta held equal to mt-metrics-eval's own code (the oracle in ../shared/oracles) on real data.

Real inputs: TED zh-en (WMT21), the 13 MT systems x 529 segments, sentence chrF (sacrebleu) of each MT output
against refB (the WMT21 reference of this set) and against ref (A), human = expert MQM (rater-normalised
``mqm_z``, or raw ``mqm``); de-en newstest2021 chrF against ref-A for the p-values alone (its DA is system-level).
The oracle is imported by the tests only; the package never imports it.
"""
from __future__ import annotations

import doctest
import importlib
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import sacrebleu
import scipy.stats

from syneval_nb.data import load_ted_zhen_mqm, load_wmt21_deen
from syneval_nb.stats import meta
from syneval_nb.stats.meta import (
    item_grouped_correlation,
    pairwise_accuracy_tie_calibrated,
    pairwise_permutation_p_values,
    permutation_test_acc_eq,
    permutation_test_spa,
    soft_pairwise_accuracy,
    spa_from_p_values,
)

ORACLES = Path(__file__).resolve().parents[2] / "shared" / "oracles"
if not (ORACLES / "mt_metrics_eval" / "stats.py").is_file():
    raise RuntimeError(f"the mt-metrics-eval oracle is not at {ORACLES}; put ../shared beside the checkout")
sys.path.insert(0, str(ORACLES))
from mt_metrics_eval import pce as mtme_pce  # noqa: E402
from mt_metrics_eval import stats as mtme_stats  # noqa: E402

TOL = 1e-9
NSYS = 13  # TED MT systems
NSEG = 529


# ---------------------------------------------------------------------------------------------------------------
# Real data, computed once: system-major order (every segment of system 1, then system 2, ...), mtme's packing
# ---------------------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def ted():
    df = load_ted_zhen_mqm()
    mt = df[~df["is_human"]].sort_values(["system", "seg_id"], kind="stable")
    assert mt["system"].nunique() == NSYS and mt["seg_id"].nunique() == NSEG and len(mt) == NSYS * NSEG
    chrf = np.array([sacrebleu.sentence_chrf(h, [r]).score for h, r in zip(mt["target"], mt["refB"])])
    chrf_a = np.array([sacrebleu.sentence_chrf(h, [r]).score for h, r in zip(mt["target"], mt["ref"])])
    out = {"items": mt["seg_id"].to_numpy(), "mqm_z": mt["mqm_z"].to_numpy(), "mqm": mt["mqm"].to_numpy(),
           "chrf": chrf, "chrf_a": chrf_a}
    assert not any(np.isnan(v).any() for k, v in out.items() if k != "items")
    return out


def _oracle_opt(gold, metric, sample_rate=1.0):
    gold = [None if isinstance(g, float) and math.isnan(g) else g for g in gold]
    return mtme_stats.KendallWithTiesOpt(gold, list(metric), "acc23", NSYS, "item", sample_rate)


def _oracle_corr(gold, metric):
    gold = [None if isinstance(g, float) and math.isnan(g) else g for g in gold]
    return mtme_stats.Correlation(NSYS, gold, list(metric))


# ---------------------------------------------------------------------------------------------------------------
# acc_eq
# ---------------------------------------------------------------------------------------------------------------

def test_acc_eq_optimised_equals_mtme_chrf_on_ted_mqm_z(ted):
    best_tau, best_eps, opt = _oracle_opt(ted["mqm_z"], ted["chrf"])
    r = pairwise_accuracy_tie_calibrated(ted["chrf"], ted["mqm_z"], ted["items"])
    assert abs(r.acc_eq - best_tau) <= TOL
    assert r.epsilon == best_eps
    assert r.acc_eq == pytest.approx(0.4337889583636278, abs=1e-12)
    assert r.epsilon == 0.0  # on MQM z no added metric tie pays: every flip loses more than it gains
    assert (r.num_items, r.num_pairs) == (NSEG, NSEG * 78)
    np.testing.assert_array_equal(r.thresholds, opt.thresholds)
    np.testing.assert_allclose(r.accs, opt.taus, rtol=0, atol=TOL)
    assert len(r.thresholds) == 18780


def test_acc_eq_optimised_equals_mtme_on_raw_mqm_where_the_maximum_is_a_float_plateau(ted):
    """Raw MQM: 42% of human pairs tie, and the best threshold ties nearly everything. Two thresholds reach the
    same acc_eq mathematically; mtme's running float sum decides which, and the replay picks the same one."""
    best_tau, best_eps, opt = _oracle_opt(ted["mqm"], ted["chrf"])
    r = pairwise_accuracy_tie_calibrated(ted["chrf"], ted["mqm"], ted["items"])
    assert r.epsilon == best_eps == 69.22717592087012
    assert r.acc_eq == best_tau == pytest.approx(0.416194076874605, abs=1e-12)
    np.testing.assert_array_equal(r.accs, opt.taus)  # bit for bit, plateau included
    top = np.flatnonzero(r.accs == r.accs.max())
    assert top.tolist() == [18756, 18760]  # the plateau; the first index is chosen


@pytest.mark.parametrize("column, epsilon, expected", [
    ("mqm_z", 0.0, 0.4337889583636278),
    ("mqm_z", 1.5, 0.38948669477970016),
    ("mqm_z", 10.0, 0.23484077359313674),
    ("mqm", 0.0, 0.40271920895739394),
    ("mqm", 69.22717592087012, 0.4161940768746055),
])
def test_acc_eq_fixed_epsilon_equals_mtme_kendall_variants_by_item(ted, column, epsilon, expected):
    oracle = _oracle_corr(ted[column], ted["chrf"]).KendallVariants("item", "acc23", epsilon)[0]
    r = pairwise_accuracy_tie_calibrated(ted["chrf"], ted[column], ted["items"], epsilon=epsilon)
    assert abs(r.acc_eq - oracle) <= TOL
    assert r.acc_eq == pytest.approx(expected, abs=1e-12)
    assert (r.epsilon, r.thresholds, r.accs) == (epsilon, None, None)


def test_acc_eq_fixed_epsilon_is_the_optimised_curve_at_that_threshold(ted):
    opt = pairwise_accuracy_tie_calibrated(ted["chrf"], ted["mqm"], ted["items"])
    for k in (0, 1, 500, 9000, 18000, len(opt.thresholds) - 1):
        fixed = pairwise_accuracy_tie_calibrated(ted["chrf"], ted["mqm"], ted["items"], epsilon=opt.thresholds[k])
        assert abs(fixed.acc_eq - opt.accs[k]) <= TOL


def test_acc_eq_sampled_pairs_follow_mtme_random_stream(ted):
    np.random.seed(5)
    best_tau, best_eps, _ = _oracle_opt(ted["mqm_z"], ted["chrf"], sample_rate=0.3)
    oracle_next = np.random.random()
    np.random.seed(5)
    r_global = pairwise_accuracy_tie_calibrated(ted["chrf"], ted["mqm_z"], ted["items"], sample_rate=0.3)
    assert np.random.random() == oracle_next  # the same number of draws from the global generator
    r_seeded = pairwise_accuracy_tie_calibrated(ted["chrf"], ted["mqm_z"], ted["items"], sample_rate=0.3,
                                                random_state=5)
    for r in (r_global, r_seeded):
        assert abs(r.acc_eq - best_tau) <= TOL and r.epsilon == best_eps
        assert r.acc_eq == pytest.approx(0.4413348836368865, abs=1e-12)
    assert 0.29 * NSEG * 78 < r_seeded.num_pairs < 0.31 * NSEG * 78


def test_acc_eq_and_item_pearson_with_unrated_translations_equal_mtme_none_filtering(ted):
    miss = np.random.RandomState(0).random_sample(NSYS * NSEG) < 0.2
    gold = ted["mqm_z"].copy()
    gold[miss] = np.nan
    best_tau, best_eps, _ = _oracle_opt(gold, ted["chrf"])
    r = pairwise_accuracy_tie_calibrated(ted["chrf"], gold, ted["items"])
    assert abs(r.acc_eq - best_tau) <= TOL and r.epsilon == best_eps
    assert r.acc_eq == pytest.approx(0.4356579778129876, abs=1e-12)
    pearson, _, n = _oracle_corr(gold, ted["chrf"]).Pearson("item")
    p = item_grouped_correlation(ted["chrf"], gold, ted["items"], "pearson")
    assert abs(p.corr - pearson) <= TOL and p.num_items == n == 519


def test_acc_eq_hand_example_averages_items_not_pairs():
    # item a: h 3 > 2 > 1, m 9, 5, 6: pairs (9,5) d=4 C, (9,6) d=3 C, (5,6) d=1 D
    # item b: h 1, 1, (unrated), m 2, 3, 7: one pair (2,3) d=1, tied in human only (T_h)
    items = ["a", "a", "a", "b", "b", "b"]
    human = [3, 2, 1, 1, 1, float("nan")]
    metric = [9, 5, 6, 2, 3, 7]
    # eps 0: a 2/3, b 0/1 -> mean 1/3 (pooling the 4 pairs would give 2/4)
    assert pairwise_accuracy_tie_calibrated(metric, human, items, epsilon=0).acc_eq == pytest.approx(1 / 3)
    r = pairwise_accuracy_tie_calibrated(metric, human, items)
    # eps 1: a's D becomes T_m (a stays 2/3), b's T_h becomes T_hm (b 1/1): 5/6 (pooled: 3/4)
    # eps 3: a 1/3 -> 2/3; eps 4: a 0 -> 1/2
    np.testing.assert_array_equal(r.thresholds, [0.0, 1.0, 3.0, 4.0])
    np.testing.assert_allclose(r.accs, [1 / 3, 5 / 6, 2 / 3, 1 / 2], rtol=0, atol=1e-15)
    assert (r.acc_eq, r.epsilon, r.num_items, r.num_pairs) == (pytest.approx(5 / 6), 1.0, 2, 4)
    oracle = mtme_stats.KendallWithTiesOpt([3, 1, 2, 1, 1, None], [9, 2, 5, 3, 6, 7], "acc23", 3, "item", 1.0)
    assert (oracle[0], oracle[1]) == (pytest.approx(5 / 6), 1.0)  # mtme packs system-major: a/b interleaved


# ---------------------------------------------------------------------------------------------------------------
# Item-grouped correlations
# ---------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("method, variant, epsilon, expected, n", [
    ("pearson", "b", 0.0, 0.11069181388625611, 519),
    ("spearman", "b", 0.0, 0.0943782494549795, 519),
    ("kendall", "b", 0.0, 0.07148568346094772, 519),
    ("kendall", "c", 0.0, 0.06875426748703757, 519),
    ("kendall", "b", 2.0, 0.07771608453769212, 517),  # metric ties |diff| <= 2: 2 more all-tied segments
    ("kendall", "23", 2.0, -0.24763705103969766, 529),
    ("kendall", "acc23", 2.0, 0.37618147448015077, 529),
])
def test_item_grouped_correlation_equals_mtme_average_correlation(ted, method, variant, epsilon, expected, n):
    c = _oracle_corr(ted["mqm_z"], ted["chrf"])
    if method == "pearson":
        oracle = c.Pearson("item")
    elif method == "spearman":
        oracle = c.Spearman("item")
    elif variant in ("b", "c") and epsilon == 0:
        oracle = c.Kendall("item", variant)  # scipy.stats.kendalltau
    else:
        oracle = c.KendallVariants("item", variant, epsilon)
    r = item_grouped_correlation(ted["chrf"], ted["mqm_z"], ted["items"], method, variant=variant, epsilon=epsilon)
    assert abs(r.corr - oracle[0]) <= TOL
    # in 10 segments all 13 systems output the same text (constant chrF): b/c/Pearson/Spearman are NaN there and
    # dropped; 23/acc23 are defined and count every segment
    assert r.num_items == oracle[2] == n
    assert r.corr == pytest.approx(expected, abs=1e-12)


def test_item_grouped_pearson_on_raw_mqm_and_chrf_against_ref_a_equal_mtme(ted):
    for gold, metric, expected, n in ((ted["mqm"], ted["chrf"], 0.09857600066010706, 502),
                                      (ted["mqm_z"], ted["chrf_a"], 0.0748452645361843, 520)):
        oracle = _oracle_corr(gold, metric).Pearson("item")
        r = item_grouped_correlation(metric, gold, ted["items"], "pearson")
        assert abs(r.corr - oracle[0]) <= TOL and r.num_items == oracle[2] == n
        assert r.corr == pytest.approx(expected, abs=1e-12)


def test_item_grouped_correlation_hand_example_and_mtme_nan_rules():
    items = ["a"] * 3 + ["b"] * 3 + ["c"] * 3
    human = [3, 2, 1, 1, 1, 2, 4, 4, 4]  # item c: constant human scores
    metric = [9, 5, 6, 2, 3, 7, 1, 2, 3]
    # a: x-mean [1,0,-1], y-mean [7/3,-5/3,-2/3]: 3/sqrt(2*26/3); b: 3/sqrt((2/3)*14); c: undefined
    pearson = (3 / math.sqrt(52 / 3) + 3 / math.sqrt(28 / 3)) / 2
    r = item_grouped_correlation(metric, human, items, "pearson")
    assert (r.corr, r.num_items) == (pytest.approx(pearson, abs=1e-15), 2)
    assert r.corr == pytest.approx(0.851278599092429, abs=1e-15)
    # Kendall b: a (2 - 1)/3; b (2 - 0)/sqrt(3 - 0)/sqrt(3 - 1)
    kendall = item_grouped_correlation(metric, human, items, "kendall")
    assert kendall.corr == pytest.approx((1 / 3 + 2 / math.sqrt(6)) / 2, abs=1e-15)
    # Spearman: a ranks h [3,2,1] m [3,1,2] -> 0.5; b ranks h [1.5,1.5,3] m [1,2,3] -> sqrt(3)/2
    spearman = item_grouped_correlation(metric, human, items, "spearman")
    assert spearman.corr == pytest.approx((0.5 + math.sqrt(3) / 2) / 2, abs=1e-15)
    zeros = item_grouped_correlation(metric, human, items, "pearson", replace_nans_with_zeros=True)
    assert (zeros.corr, zeros.num_items) == (pytest.approx(2 * pearson / 3, abs=1e-15), 3)
    # acc23, metric ties at |diff| <= 1: a: C, C, D->T_m: 2/3; b: T_h->T_hm, C, C: 1; c (human all tied):
    # (1,2) and (2,3) T_hm, (1,3) T_h: 2/3. acc23 is defined on constant items, so c counts
    acc = item_grouped_correlation(metric, human, items, "kendall", variant="acc23", epsilon=1.0)
    assert (acc.corr, acc.num_items) == (pytest.approx((2 / 3 + 1 + 2 / 3) / 3, abs=1e-15), 3)
    # the same numbers from mtme (system-major packing of the 3 systems x 3 items)
    pack = lambda v: [v[3 * k + s] for s in range(3) for k in range(3)]  # noqa: E731
    c = mtme_stats.Correlation(3, pack(human), pack(metric))
    assert c.Pearson("item")[0] == pytest.approx(r.corr, abs=TOL) and c.Pearson("item")[2] == 2
    assert c.Kendall("item")[0] == pytest.approx(kendall.corr, abs=TOL)
    assert c.Spearman("item")[0] == pytest.approx(spearman.corr, abs=TOL)
    assert c.KendallVariants("item", "acc23", 1.0)[0] == pytest.approx(acc.corr, abs=TOL)
    assert mtme_stats.AverageCorrelation(scipy.stats.pearsonr, 3, "item", replace_nans_with_zeros=True)(
        pack(human), pack(metric))[0] == pytest.approx(zeros.corr, abs=TOL)
    # no defined correlation at all: mtme returns 0, not NaN
    with pytest.warns(RuntimeWarning, match="returning 0.0"):
        none = item_grouped_correlation([1, 2, 3], [4, 4, 4], ["c"] * 3, "pearson")
    assert (none.corr, none.num_items) == (0.0, 0)
    assert mtme_stats.Correlation(3, [4, 4, 4], [1, 2, 3]).Pearson("item") == (0, 0, 0)


# ---------------------------------------------------------------------------------------------------------------
# Soft pairwise accuracy
# ---------------------------------------------------------------------------------------------------------------

def test_spa_equals_mtme_pce_chrf_on_ted_mqm_z(ted):
    human = ted["mqm_z"].reshape(NSYS, NSEG)
    metric = ted["chrf"].reshape(NSYS, NSEG)
    oracle = mtme_pce.compute_one_minus_pce(mtme_pce.compute_pairwise_p_values(human, 1000, 4),
                                            mtme_pce.compute_pairwise_p_values(metric, 1000, 4))
    spa = soft_pairwise_accuracy(metric, human)
    assert abs(spa - oracle) <= TOL
    assert spa == pytest.approx(0.7457179487179487, abs=1e-12)
    via_stats = mtme_stats.Correlation(NSYS, list(ted["mqm_z"]), list(ted["chrf"])).PairwiseConfidenceError()[0]
    assert abs(spa - via_stats) <= TOL
    spa_a = soft_pairwise_accuracy(ted["chrf_a"].reshape(NSYS, NSEG), human)
    assert spa_a == pytest.approx(0.5772307692307693, abs=1e-12)  # against ref A (rated below every MT system)
    for seed, perms in ((11, 200), (0, 50)):
        oracle = mtme_pce.compute_one_minus_pce(mtme_pce.compute_pairwise_p_values(human, perms, seed),
                                                mtme_pce.compute_pairwise_p_values(metric, perms, seed))
        assert abs(soft_pairwise_accuracy(metric, human, num_permutations=perms, seed=seed) - oracle) <= TOL


def test_pairwise_p_values_equal_mtme_on_wmt21_deen_chrf():
    seg = load_wmt21_deen().segments.sort_values(["system", "seg_id"], kind="stable")
    seg = seg[seg["seg_id"] < 150]
    n_sys = seg["system"].nunique()
    scores = np.array([sacrebleu.sentence_chrf(h, [r]).score for h, r in zip(seg["target"], seg["ref_A"])])
    scores = scores.reshape(n_sys, 150)
    oracle = mtme_pce.compute_pairwise_p_values(scores, 500)
    p = pairwise_permutation_p_values(scores, num_permutations=500)
    # systems 15 and 17 (VolcTrans-AT, Watermelon) differ on one segment only: every flip that keeps it gives
    # exactly the observed difference, so p is the share of flips keeping it. mtme's float32 sums miss those
    # exact ties and say 0.0; everywhere else the two agree exactly
    (only,) = np.flatnonzero(scores[15] != scores[17])
    keep = np.random.default_rng(4).random((500, 150), dtype=np.float32)[:, only] > np.float32(0.5)
    assert (oracle[15, 17], p[15, 17], keep.mean()) == (0.0, 0.524, 0.524)
    oracle[15, 17] = p[15, 17]
    np.testing.assert_array_equal(p, oracle)  # NaN below the diagonal in both
    upper = p[np.triu_indices(n_sys, 1)]
    assert (n_sys, len(upper), int((upper < 0.05).sum())) == (19, 171, 25)  # 26 by mtme: its false 0.0 above
    assert (p[0, 1], p[0, 2], round(upper.sum(), 9)) == (0.338, 0.488, 76.518)  # 75.994 + 0.524



def _raw_mqm_exact_p(raw: np.ndarray, num_permutations: int = 1000) -> np.ndarray:
    """The permutation p-values of raw MQM in exact arithmetic: its scores are tenths, so ten times them are
    integers and numpy's int64 product with the same sign flips has no rounding at all."""
    tenths = np.rint(raw * 10).astype(np.int64)
    assert np.abs(tenths / 10 - raw).max() < 1e-12  # every raw MQM score is a tenth (a sum of weights)
    signs = np.where(np.random.default_rng(4).random((num_permutations, raw.shape[1]), dtype=np.float32)
                     > np.float32(0.5), 1, -1).astype(np.int64)  # mtme's flips
    null, totals = signs @ tenths.T, tenths.sum(axis=1)
    exact = np.full((len(raw), len(raw)), np.nan)
    for a in range(len(raw) - 1):
        exact[a, a + 1:] = np.count_nonzero(null[:, [a]] - null[:, a + 1:] >= totals[a] - totals[a + 1:],
                                            axis=0) / num_permutations
    return exact


def test_pairwise_p_values_on_raw_mqm_are_exact(ted):
    """Raw MQM is tie-heavy: for many flips the permuted difference equals the observed one exactly. mtme sums
    in float32 and its rounding decides those ties (3 of the 78 TED pairs off by up to 0.003 here, 4 under
    OPENBLAS_CORETYPE=Prescott); the kit's p-values are the exact ones."""
    raw = ted["mqm"].reshape(NSYS, NSEG)
    p = pairwise_permutation_p_values(raw)
    np.testing.assert_array_equal(p, _raw_mqm_exact_p(raw))
    upper = p[np.triu_indices(NSYS, 1)]
    assert (p[0, 1], p[0, 2], p[0, 3], int((upper < 0.05).sum()), round(upper.sum(), 9)) == \
        (1.0, 0.153, 0.995, 24, 38.413)


def test_pairwise_p_values_do_not_depend_on_the_blas_kernel(ted):
    """The same raw MQM p-values under two other OpenBLAS kernels and one thread (mtme's float32 product gave
    other values under Prescott than under the default kernel on this data)."""
    raw = ted["mqm"].reshape(NSYS, NSEG)
    want = pairwise_permutation_p_values(raw)
    code = ("import sys, numpy as np; from syneval_nb.stats.meta import pairwise_permutation_p_values as f; "
            "x = np.load(sys.argv[1]); sys.stdout.write(f(x).tobytes().hex())")
    np.save(tmp := Path(__import__("tempfile").mkdtemp()) / "raw.npy", raw)
    for env in ({"OPENBLAS_CORETYPE": "Prescott"}, {"OPENBLAS_CORETYPE": "Haswell", "OPENBLAS_NUM_THREADS": "1"}):
        out = subprocess.run([sys.executable, "-c", code, str(tmp)], capture_output=True, text=True, check=True,
                             env={**os.environ, **env}).stdout
        assert bytes.fromhex(out) == want.tobytes(), env


def test_spa_hand_example():
    base = np.arange(30) % 7
    human = np.array([base + 2, base + 1, base], dtype=float)  # 0 > 1 > 2 on every segment
    # p(i > j) is 0 when i beats j on every segment by the same margin (only the identity flip reaches it, and
    # none of 100 draws over 30 segments is the identity), 1 when i loses everywhere (every flip reaches it)
    p = pairwise_permutation_p_values(human, num_permutations=100)
    assert np.isnan(p[np.tril_indices(3)]).all() and p[np.triu_indices(3, 1)].tolist() == [0.0, 0.0, 0.0]
    reversed_p = pairwise_permutation_p_values(human[::-1], num_permutations=100)
    assert reversed_p[np.triu_indices(3, 1)].tolist() == [1.0, 1.0, 1.0]
    # identical systems: every flip gives exactly the observed difference 0, and ">=" counts it: p = 1
    twins = pairwise_permutation_p_values([base, base, base + 1], num_permutations=100)
    assert twins[np.triu_indices(3, 1)].tolist() == [1.0, 1.0, 1.0]
    assert np.array_equal(twins, mtme_pce.compute_pairwise_p_values(np.array([base, base, base + 1.0]), 100),
                          equal_nan=True)
    metric = np.array([base, base + 2, base + 1], dtype=float)  # p = 1, 1, 0
    assert soft_pairwise_accuracy(metric, human, num_permutations=100) == pytest.approx(1 / 3, abs=1e-15)
    assert soft_pairwise_accuracy(human * 3 + 1, human, num_permutations=100) == 1.0
    nan = float("nan")
    h = [[nan, 0.01, 0.2], [nan, nan, 0.5], [nan, nan, nan]]
    m = [[nan, 0.05, 0.1], [nan, nan, 0.9], [nan, nan, nan]]
    assert spa_from_p_values(h, m) == pytest.approx(1 - (0.04 + 0.1 + 0.4) / 3, abs=1e-15)
    assert spa_from_p_values(h, m) == pytest.approx(mtme_pce.compute_one_minus_pce(np.array(h), np.array(m)))


# ---------------------------------------------------------------------------------------------------------------
# Permutation tests between two metrics (mtme PermutationSigDiff)
# ---------------------------------------------------------------------------------------------------------------

def test_permutation_test_acc_eq_equals_mtme_permutation_sig_diff(ted):
    sub = np.isin(ted["items"], np.unique(ted["items"])[:80])  # 80 segments: mtme re-optimises in pure Python
    gold, ref_a, ref_b, items = ted["mqm_z"][sub], ted["chrf_a"][sub], ted["chrf"][sub], ted["items"][sub]
    c1 = mtme_stats.Correlation(NSYS, list(gold), list(ref_a))
    c2 = mtme_stats.Correlation(NSYS, list(gold), list(ref_b))
    np.random.seed(3)
    p, delta, k_used, corrs = mtme_stats.PermutationSigDiff(c1, c2, mtme_stats.KendallWithTiesOpt, "item", 20,
                                                            variant="acc23", sample_rate=1.0)
    np.random.seed(3)
    r = permutation_test_acc_eq(ref_a, ref_b, gold, items, k=20)
    assert (r.p_value, r.k_used) == (p, k_used) == (0.25, 20)
    assert abs(r.delta - delta) <= TOL and r.delta == pytest.approx(0.015224358974359031, abs=1e-12)
    np.testing.assert_allclose(r.resampled, corrs, rtol=0, atol=TOL)
    own_seed = permutation_test_acc_eq(ref_a, ref_b, gold, items, k=20, random_state=3)
    assert own_seed.p_value == r.p_value and np.array_equal(own_seed.resampled, r.resampled)
    assert r.stat2 - r.stat1 == r.delta
    assert r.stat1 == pytest.approx(pairwise_accuracy_tie_calibrated(ref_a, gold, items).acc_eq, abs=TOL)


@pytest.mark.parametrize("block_size, k_used", [(1000, 30), (10, 10)])
def test_permutation_test_spa_equals_mtme_permutation_sig_diff(ted, block_size, k_used):
    human = ted["mqm_z"].reshape(NSYS, NSEG)
    ref_a, ref_b = ted["chrf_a"].reshape(NSYS, NSEG), ted["chrf"].reshape(NSYS, NSEG)
    c1 = mtme_stats.Correlation(NSYS, list(ted["mqm_z"]), list(ted["chrf_a"]))
    c2 = mtme_stats.Correlation(NSYS, list(ted["mqm_z"]), list(ted["chrf"]))
    np.random.seed(3)
    p, delta, used, corrs = mtme_stats.PermutationSigDiff(
        c1, c2, mtme_stats.PairwiseConfidenceError, "none", 30,
        mtme_stats.PermutationSigDiffParams(block_size=block_size), num_sys=NSYS, num_permutations=200)
    np.random.seed(3)
    r = permutation_test_spa(ref_a, ref_b, human, k=30, num_permutations=200, block_size=block_size)
    assert (r.p_value, r.k_used) == (p, used) == (0.0, k_used)  # after 10 resamples p = 0 < 0.02: early stop
    assert abs(r.delta - delta) <= TOL and r.delta == pytest.approx(0.1725641025641027, abs=1e-12)
    np.testing.assert_array_equal(r.resampled, corrs)


def test_permutation_tests_identical_metrics_give_p_one_and_delta_zero(ted):
    human = ted["mqm_z"].reshape(NSYS, NSEG)[:, :40]
    metric = ted["chrf"].reshape(NSYS, NSEG)[:, :40]
    spa = permutation_test_spa(metric, metric, human, k=15, num_permutations=50, random_state=0)
    assert (spa.p_value, spa.delta, spa.k_used) == (1.0, 0.0, 15)
    sub = np.isin(ted["items"], np.unique(ted["items"])[:20])
    acc = permutation_test_acc_eq(ted["chrf"][sub], ted["chrf"][sub], ted["mqm_z"][sub], ted["items"][sub], k=10,
                                  random_state=0)
    assert (acc.p_value, acc.delta, acc.k_used) == (1.0, 0.0, 10)


# ---------------------------------------------------------------------------------------------------------------
# Bad input: the message names the argument and what is wrong
# ---------------------------------------------------------------------------------------------------------------

NAN = float("nan")


@pytest.mark.parametrize("call, match", [
    (lambda: pairwise_accuracy_tie_calibrated([1, 2, 3], [1, 2], ["a"] * 3), r"metric and human differ in length"),
    (lambda: pairwise_accuracy_tie_calibrated([1, 2], [1, 2], ["a"] * 3), r"items: length 3 differs"),
    (lambda: pairwise_accuracy_tie_calibrated([1], [1], ["a"]), r"metric/human: need at least 2 entries, got 1"),
    (lambda: pairwise_accuracy_tie_calibrated([1, NAN], [1, 2], ["a"] * 2), r"metric: contains NaN at positions \[1\]"),
    (lambda: pairwise_accuracy_tie_calibrated([1, 2], [1, float("inf")], ["a"] * 2), r"human: contains infinite"),
    (lambda: pairwise_accuracy_tie_calibrated([1, 2], [1, 2], [0.0, NAN]), r"items: contains NaN labels"),
    (lambda: pairwise_accuracy_tie_calibrated([1, 2], [1, 2], ["a", "b"]), r"items: no item has 2 or more"),
    (lambda: pairwise_accuracy_tie_calibrated([1, 2], [NAN, 2], ["a", "a"]), r"items: no item has 2 or more"),
    (lambda: pairwise_accuracy_tie_calibrated([1, 2], [1, 2], "aa"), r"items: expected a 1-D array"),
    (lambda: pairwise_accuracy_tie_calibrated([[1, 2]], [[1, 2]], ["a", "a"]), r"metric: expected a 1-D array"),
    (lambda: pairwise_accuracy_tie_calibrated(["x", "y"], [1, 2], ["a"] * 2), r"metric: expected numbers"),
    (lambda: pairwise_accuracy_tie_calibrated([1, 2], [1, 2], ["a"] * 2, epsilon=-0.1), r"epsilon: must be None"),
    (lambda: pairwise_accuracy_tie_calibrated([1, 2], [1, 2], ["a"] * 2, epsilon=NAN), r"epsilon: must be None"),
    (lambda: pairwise_accuracy_tie_calibrated([1, 2], [1, 2], ["a"] * 2, sample_rate=0), r"sample_rate: must be in"),
    (lambda: pairwise_accuracy_tie_calibrated([1, 2], [1, 2], ["a"] * 2, sample_rate=0.5, random_state="x"),
     r"random_state: expected None"),
    (lambda: item_grouped_correlation([1, 2], [1, 2], ["a"] * 2, "cosine"), r"method: must be one of"),
    (lambda: item_grouped_correlation([1, 2], [1, 2], ["a"] * 2, "kendall", variant="d"), r"variant: must be one"),
    (lambda: item_grouped_correlation([1, 2], [1, 2], ["a"] * 2, "pearson", epsilon=1.0), r"epsilon: a tie thresh"),
    (lambda: item_grouped_correlation([1, 2], [1, 2], ["a"] * 2, "kendall", variant="c", epsilon=1.0),
     r"epsilon: a tie threshold > 0 is defined only for method='kendall' with variant 'b', '23' or 'acc23'"),
    (lambda: item_grouped_correlation([1, NAN, 3], [1, 2, 3], ["a"] * 3), r"metric: contains NaN"),
    (lambda: item_grouped_correlation([1, 2, 3], [1, 2, 3], ["a", "b", "c"]), r"items: no item has 2 or more"),
    (lambda: soft_pairwise_accuracy([[1, 2], [3, 4]], [[1, 2, 3], [3, 4, 5]]), r"differ in shape: \(2, 2\) vs"),
    (lambda: soft_pairwise_accuracy([[1, 2]], [[1, 2]]), r"metric_seg_scores: needs at least 2 systems"),
    (lambda: soft_pairwise_accuracy(np.zeros((2, 0)), np.zeros((2, 0))),
     r"metric_seg_scores: needs at least 2 systems \(rows\) and 1 segment \(column\), got shape \(2, 0\)"),
    (lambda: soft_pairwise_accuracy([1, 2], [1, 2]), r"metric_seg_scores: expected a 2-D array"),
    (lambda: soft_pairwise_accuracy([[1, 2], [3, 4]], [[1, NAN], [3, 4]]),
     r"human_seg_scores: contains NaN or infinite values \(first at \[system, segment\] = \[0, 1\]\)"),
    (lambda: soft_pairwise_accuracy([[1, 2], [3, 4]], [[1, 2], [3, 4]], num_permutations=0),
     r"num_permutations: expected an integer >= 1, got 0"),
    (lambda: pairwise_permutation_p_values([[1, 2], [3, 4]], num_permutations=2.5), r"num_permutations: expected"),
    (lambda: spa_from_p_values([[NAN, 0.1], [NAN, NAN]], [[NAN, NAN], [NAN, NAN]]), r"NaN in the upper triangle"),
    (lambda: spa_from_p_values([[0.1, 0.2]], [[0.1, 0.2]]), r"human_p_values: expected a square"),
    (lambda: permutation_test_acc_eq([1, 2, 3], [1, 2], [1, 2, 3], ["a"] * 3), r"metric1 and metric2 differ"),
    (lambda: permutation_test_acc_eq([1, 1, 1], [1, 2, 3], [1, 2, 3], ["a"] * 3), r"metric1: constant scores"),
    (lambda: permutation_test_acc_eq([1, 2, 3], [1, 2, 3], [1, 2, 3], ["a"] * 3, k=0), r"k: expected an integer"),
    (lambda: permutation_test_acc_eq([1, 2, 3], [3, 2, 3], [1, 2, 3], ["a"] * 3, early_min=2), r"early_min: must"),
    (lambda: permutation_test_spa([[1, 2], [3, 4]], [[1, 2], [3, 4]], [[1, 2, 3], [1, 2, 3]]), r"same shape"),
    (lambda: permutation_test_spa([[1, 1], [1, 1]], [[1, 2], [3, 4]], [[1, 2], [3, 4]]),
     r"metric1_seg_scores: constant scores"),
])
def test_bad_input_raises_a_value_error_naming_the_argument(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_module_doctests_run_and_pass():
    result = doctest.testmod(meta, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted >= 25


def test_the_package_never_imports_the_oracle_or_other_kit_modules():
    assert Path(meta.__file__).parts[-2:] == ("stats", "meta.py")
    source = Path(meta.__file__).read_text()
    imports = [line.strip() for line in source.splitlines() if line.startswith(("import ", "from "))]
    assert imports == ["from __future__ import annotations", "import math", "import numbers", "import warnings",
                       "from dataclasses import dataclass", "import numpy as np"]
    inside = {line.strip() for line in source.splitlines()
              if line.lstrip().startswith(("import ", "from "))} - set(imports)
    assert inside == {"from scipy.stats import zscore  # at first use: `score` and `report` start without scipy.stats",
                      "from scipy.stats import zscore  # at first use, as above"}  # scipy's, loaded when used


def test_the_former_module_name_is_the_same_module_object():
    """``syneval_nb.stats.meta`` is a forwarder: old imports and monkeypatches reach ``syneval_nb.stats.meta``."""
    assert importlib.import_module("syneval_nb.stats.meta") is meta
