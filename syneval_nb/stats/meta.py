"""WMT meta-evaluation statistics with mt-metrics-eval's exact definitions: plain functions over numpy arrays.

(Formerly ``syneval_nb.stats.meta``, which still forwards here. Imports no other kit module.)

The definitions are those of google-research/mt-metrics-eval (``stats.py``, ``tau_optimization.py``, ``pce.py``;
"mtme" below), re-implemented (vectorised) and held equal to that code by ``tests/test_stats_meta.py`` (SPA's
p-values but where mtme's float32 rounding decides an exact tie: :func:`pairwise_permutation_p_values`):

* :func:`pairwise_accuracy_tie_calibrated`: segment-level pairwise accuracy with tie calibration, acc_eq
  (Deutsch, Foster & Freitag 2023), pairs formed within an item (mtme ``average_by="item"``) and averaged per item;
* :func:`item_grouped_correlation`: Pearson, Spearman or a Kendall variant computed within each item, then
  averaged as mtme's ``AverageCorrelation`` does;
* :func:`pairwise_permutation_p_values`, :func:`spa_from_p_values`, :func:`soft_pairwise_accuracy`: system-level
  soft pairwise accuracy, SPA = 1 - PCE (Thompson, Mathur, Deutsch & Khayrallah 2024);
* :func:`permutation_test_acc_eq`, :func:`permutation_test_spa`: mtme's ``PermutationSigDiff`` (PERM-BOTH, Deutsch
  et al. 2021) comparing two metrics on acc_eq or on SPA.

Conventions (not mtme's, which passes gold first): ``metric`` comes first, ``human`` second; both are "higher is
better" (negate MQM penalties first). In the long format, ``metric``, ``human`` and ``items`` are 1-D and parallel,
one entry per scored translation; ``items`` labels the source segment, so pairs are formed only between
translations of the same source. ``NaN`` in ``human`` means "not rated" and is dropped, as mtme drops ``None`` gold
scores; ``metric`` must be finite. Items are visited in sorted label order, and within an item the entries keep
their input order (mtme's order when the input is system-major: every item of system 1, then system 2, ...).

References:

* Daniel Deutsch, George Foster, Markus Freitag (2023). Ties Matter: Meta-Evaluating Modern Metrics with Pairwise
  Accuracy and Tie Calibration. EMNLP 2023. arXiv:2305.14324.
* Brian Thompson, Nitika Mathur, Daniel Deutsch, Huda Khayrallah (2024). Improving Statistical Significance in
  Human Evaluation of Automatic Metrics via Soft Pairwise Accuracy. WMT 2024. arXiv:2409.09598.
* Daniel Deutsch, Rotem Dror, Dan Roth (2021). A Statistical Analysis of Summarization Evaluation Metrics Using
  Resampling Methods. TACL 9. arXiv:2104.00054.
"""
from __future__ import annotations

import math
import numbers
import warnings
from dataclasses import dataclass

import numpy as np

__all__ = ["pairwise_accuracy", "soft_pairwise_accuracy", "item_grouped_correlation", "permutation_test_acc_eq"]

METHODS = ("pearson", "spearman", "kendall")
KENDALL_VARIANTS = ("b", "c", "23", "acc23")


# ----------------------------------------------------------------------------------------------------------------
# Results
# ----------------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class TieCalibratedAccuracy:
    """Result of :func:`pairwise_accuracy_tie_calibrated`.

    ``acc_eq``: the accuracy; ``epsilon``: the tie threshold used (metric pairs with ``|diff| <= epsilon`` are
    ties); ``num_items``: items that contributed at least one pair (the denominator of the average);
    ``num_pairs``: pairs used; ``thresholds``/``accs``: the searched curve (mtme's ``TauOptimizationResult``
    ``thresholds``/``taus``), ``None`` when ``epsilon`` was given.
    """
    acc_eq: float
    epsilon: float
    num_items: int
    num_pairs: int
    thresholds: np.ndarray | None = None
    accs: np.ndarray | None = None


@dataclass(frozen=True)
class ItemCorrelation:
    """Result of :func:`item_grouped_correlation`: the average and the number of items averaged (mtme's ``n``)."""
    corr: float
    num_items: int


@dataclass(frozen=True)
class PermutationTestResult:
    """Result of :func:`permutation_test_acc_eq` / :func:`permutation_test_spa` (mtme ``PermutationSigDiff``).

    ``p_value``: p-value for "metric2 is better than metric1" (one-sided); ``delta``: statistic(metric2) -
    statistic(metric1); ``k_used``: resamples drawn (fewer than ``k`` after an early stop); ``stat1``/``stat2``:
    the statistic of each metric; ``resampled``: array (k_used, 2) of the resampled (metric2, metric1) statistics.
    """
    p_value: float
    delta: float
    k_used: int
    stat1: float
    stat2: float
    resampled: np.ndarray


# ----------------------------------------------------------------------------------------------------------------
# Input checks
# ----------------------------------------------------------------------------------------------------------------

# kept apart from stats.correlation.as_vector: messages start with the argument's name and NaN may be allowed
def _vector(x, name: str, *, allow_nan: bool) -> np.ndarray:
    try:
        a = np.asarray(x, dtype=float)
    except (TypeError, ValueError) as e:
        raise ValueError(f"{name}: expected numbers, got {type(x).__name__} ({e})") from None
    if a.ndim != 1:
        raise ValueError(f"{name}: expected a 1-D array, got shape {a.shape}")
    if np.isinf(a).any():
        raise ValueError(f"{name}: contains infinite values at positions {np.flatnonzero(np.isinf(a))[:5].tolist()}")
    if not allow_nan and np.isnan(a).any():
        raise ValueError(f"{name}: contains NaN at positions {np.flatnonzero(np.isnan(a))[:5].tolist()} "
                         f"(NaN is allowed only in human, where it marks an unrated translation)")
    return a


def _matrix(x, name: str) -> np.ndarray:
    try:
        a = np.asarray(x, dtype=float)
    except (TypeError, ValueError) as e:
        raise ValueError(f"{name}: expected numbers, got {type(x).__name__} ({e})") from None
    if a.ndim != 2:
        raise ValueError(f"{name}: expected a 2-D array (systems x segments), got shape {a.shape}")
    if a.shape[0] < 2 or a.shape[1] < 1:
        raise ValueError(f"{name}: needs at least 2 systems (rows) and 1 segment (column), got shape {a.shape}")
    if not np.isfinite(a).all():
        bad = np.argwhere(~np.isfinite(a))[0].tolist()
        raise ValueError(f"{name}: contains NaN or infinite values (first at [system, segment] = {bad}); keep "
                         f"only segments scored for every system")
    return a


# kept apart from stats.correlation.dense_labels: rejects NaN/None/incomparable labels, never passes None through
def _item_codes(items, n: int) -> np.ndarray:
    a = np.asarray(items)
    if a.ndim != 1:
        raise ValueError(f"items: expected a 1-D array of labels, got shape {a.shape}")
    if len(a) != n:
        raise ValueError(f"items: length {len(a)} differs from metric/human length {n}")
    if a.dtype.kind == "f" and np.isnan(a).any():
        raise ValueError(f"items: contains NaN labels at positions {np.flatnonzero(np.isnan(a))[:5].tolist()}")
    if a.dtype.kind == "O" and any(v is None for v in a):
        raise ValueError("items: contains None labels")
    try:
        _, codes = np.unique(a, return_inverse=True)
    except TypeError as e:
        raise ValueError(f"items: labels must be mutually comparable ({e})") from None
    return codes.reshape(-1)


def _long_format(metric, human, items):
    """Checked (metric, human, item codes), NaN-human entries removed, sorted by item (stable)."""
    m = _vector(metric, "metric", allow_nan=False)
    h = _vector(human, "human", allow_nan=True)
    if len(m) != len(h):
        raise ValueError(f"metric and human differ in length: {len(m)} vs {len(h)}")
    if len(m) < 2:
        raise ValueError(f"metric/human: need at least 2 entries, got {len(m)}")
    codes = _item_codes(items, len(m))
    keep = ~np.isnan(h)
    order = np.flatnonzero(keep)[np.argsort(codes[keep], kind="stable")]
    return m[order], h[order], codes[order]


def _groups(codes_sorted: np.ndarray):
    """(item code, start, size) of each run of equal codes in a sorted code vector."""
    if len(codes_sorted) == 0:
        return np.zeros(0, np.intp), np.zeros(0, np.intp), np.zeros(0, np.intp)
    starts = np.flatnonzero(np.r_[True, codes_sorted[1:] != codes_sorted[:-1]])
    sizes = np.diff(np.r_[starts, len(codes_sorted)])
    return codes_sorted[starts], starts, sizes


def _pairs(sizes: np.ndarray):
    """All pairs (i, j), i < j, within each contiguous group, in row-major order; and each pair's group index."""
    n = int(sizes.sum())
    grp = np.repeat(np.arange(len(sizes)), sizes)
    starts = np.cumsum(sizes) - sizes
    local = np.arange(n) - starts[grp]
    partners = sizes[grp] - 1 - local  # partners after each element
    i = np.repeat(np.arange(n), partners)
    first = np.cumsum(partners) - partners
    j = i + 1 + (np.arange(len(i)) - np.repeat(first, partners))
    return i, j, grp[i]


def _sign_cmp(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a > b).astype(np.int8) - (a < b).astype(np.int8)


def _check_positive_int(value, name: str, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{name}: expected an integer >= {minimum}, got {value!r}")
    return int(value)


def _random_source(random_state):
    """np.random (mtme's global legacy generator) for None, else a RandomState."""
    if random_state is None or random_state is np.random:
        return np.random
    if isinstance(random_state, np.random.RandomState):
        return random_state
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        return np.random.RandomState(int(random_state))
    raise ValueError(f"random_state: expected None, an int seed or a numpy RandomState, got {random_state!r}")


# ----------------------------------------------------------------------------------------------------------------
# acc_eq: pairwise accuracy with tie calibration
# ----------------------------------------------------------------------------------------------------------------

def pairwise_accuracy_tie_calibrated(metric, human, items, *, epsilon: float | None = None,
                                     sample_rate: float = 1.0, random_state=None) -> TieCalibratedAccuracy:
    """Segment-level pairwise accuracy with tie calibration, acc_eq (Deutsch, Foster & Freitag 2023), per item.

    Variant: mtme's ``acc23`` with ``average_by="item"``, i.e. ``KendallWithTiesOpt(gold, metric, "acc23",
    num_sys, "item")`` (``tau_optimization`` with ``TauSufficientStats.acc_23``). Pairs are formed only between
    translations of the same item (source segment). For each item with at least one pair,
    ``acc = (C + T_hm) / (C + D + T_h + T_m + T_hm)``: concordant pairs plus pairs tied in both human and metric,
    over all pairs, where a metric pair is tied when ``|m_i - m_j| <= epsilon`` and a human pair when
    ``h_i == h_j``. **acc_eq is the unweighted mean of the per-item accuracies** (mtme averages per item; it does
    not pool pairs over items).

    ``epsilon=None``: the threshold is optimised as in mtme's ``tau_optimization``: the candidates are 0.0 and every
    pair's ``|m_i - m_j|``; the first (smallest) candidate with the largest acc_eq wins. Where several thresholds
    reach the same value mathematically, mtme's choice is decided by the rounding of its running float sum; it is
    replayed here (same order of operations), so the chosen ``epsilon`` is mtme's. A given ``epsilon`` (>= 0)
    computes the fixed-threshold form, mtme's ``KendallVariants(variant="acc23", epsilon=...)`` averaged by item.

    ``sample_rate`` < 1 keeps each pair with probability ``sample_rate`` (mtme: one ``random() <= sample_rate``
    draw per pair in item order); draws come from ``random_state`` (None: numpy's global legacy generator, as
    mtme; an int or ``RandomState``: that generator). Note mtme's ``KendallWithTiesOpt`` defaults to 0.1, this
    function to 1.0 (all pairs, exact).

    >>> items = ["a", "a", "a", "b", "b", "b"]
    >>> human = [3, 2, 1, 1, 1, 2]
    >>> metric = [9, 5, 6, 2, 3, 7]
    >>> pairwise_accuracy_tie_calibrated(metric, human, items, epsilon=0).acc_eq  # a: 2/3, b: 2/3
    0.6666666666666666
    >>> r = pairwise_accuracy_tie_calibrated(metric, human, items)  # eps=1 ties a's discordant and b's tied pair
    >>> round(r.acc_eq, 6), r.epsilon
    (0.833333, 1.0)
    """
    if isinstance(sample_rate, bool) or not isinstance(sample_rate, numbers.Real) or not 0 < sample_rate <= 1:
        raise ValueError(f"sample_rate: must be in (0, 1], got {sample_rate!r}")
    if epsilon is not None:
        if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real) or not math.isfinite(epsilon) \
                or epsilon < 0:
            raise ValueError(f"epsilon: must be None (optimise) or a finite number >= 0, got {epsilon!r}")
    m, h, codes = _long_format(metric, human, items)
    item_code, _, sizes = _groups(codes)
    i, j, g = _pairs(sizes)
    if sample_rate != 1.0 and len(i):
        keep = _random_source(random_state).random_sample(len(i)) <= sample_rate
        i, j, g = i[keep], j[keep], g[keep]
    if len(i) == 0:
        raise ValueError("items: no item has 2 or more scored translations (non-NaN human), so there is no pair")

    sh = _sign_cmp(h[i], h[j])
    sm = _sign_cmp(m[i], m[j])
    diff = np.abs(m[i] - m[j])
    right_untied = (sh * sm == 1) | ((sh == 0) & (sm == 0))  # C or T_hm with the metric as it is
    right_tied = sh == 0  # T_hm once the pair is a metric tie (else T_m)

    rows, g = np.unique(g, return_inverse=True)  # groups that kept a pair, compact ids
    n_rows = len(rows)
    n_pairs = np.bincount(g, minlength=n_rows)

    if epsilon is not None:
        right = np.where(diff <= epsilon, right_tied, right_untied)
        acc = np.bincount(g, weights=right, minlength=n_rows) / n_pairs
        return TieCalibratedAccuracy(float(np.mean(acc)), float(epsilon), n_rows, len(i))

    # Tie calibration. Each pair, taken in order of increasing |diff|, turns into a metric tie; the per-item
    # counts of right pairs are followed exactly (integers), the mean is replayed as mtme's running float sum.
    start_right = np.bincount(g, weights=right_untied, minlength=n_rows).astype(np.int64)
    order = np.argsort(diff, kind="stable")
    d_sorted, g_sorted = diff[order], g[order]
    change = (right_tied.astype(np.int64) - right_untied.astype(np.int64))[order]
    by_row = np.argsort(g_sorted, kind="stable")
    c = np.cumsum(change[by_row])
    row_first = np.flatnonzero(np.r_[True, g_sorted[by_row][1:] != g_sorted[by_row][:-1]])
    before_row = (c - change[by_row])[row_first]
    cum = np.empty_like(c)
    cum[by_row] = c - np.repeat(before_row, np.diff(np.r_[row_first, len(c)]))
    after = start_right[g_sorted] + cum
    before = after - change
    denom = n_pairs[g_sorted]

    # mtme sums the starting per-item values in the iteration order of a Python set of the item (row) numbers.
    value0 = start_right / n_pairs
    item_rows = item_code[rows].tolist()
    pos = dict(zip(item_rows, range(n_rows)))
    total0 = sum(float(value0[pos[r]]) for r in set(item_rows))
    steps = np.empty(2 * len(order) + 1)
    steps[0] = total0
    steps[1::2] = -(before / denom)
    steps[2::2] = after / denom
    running = np.cumsum(steps)[2::2] / n_rows  # after each pair

    last_of_run = np.flatnonzero(np.r_[d_sorted[1:] != d_sorted[:-1], True])
    thresholds = d_sorted[last_of_run]
    accs = running[last_of_run]
    if thresholds[0] != 0.0:
        thresholds = np.r_[0.0, thresholds]
        accs = np.r_[total0 / n_rows, accs]
    best = int(np.nanargmax(accs))
    return TieCalibratedAccuracy(float(accs[best]), float(thresholds[best]), n_rows, len(i), thresholds, accs)


# ----------------------------------------------------------------------------------------------------------------
# Item-grouped correlations
# ----------------------------------------------------------------------------------------------------------------

def _group_pearson(x, y, grp, n_groups):
    n = np.bincount(grp, minlength=n_groups)
    xm = x - (np.bincount(grp, weights=x, minlength=n_groups) / n)[grp]
    ym = y - (np.bincount(grp, weights=y, minlength=n_groups) / n)[grp]
    sxy = np.bincount(grp, weights=xm * ym, minlength=n_groups)
    sxx = np.bincount(grp, weights=xm * xm, minlength=n_groups)
    syy = np.bincount(grp, weights=ym * ym, minlength=n_groups)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = sxy / np.sqrt(sxx) / np.sqrt(syy)
    return np.clip(r, -1.0, 1.0)


def _group_constant(x, starts):
    return np.maximum.reduceat(x, starts) == np.minimum.reduceat(x, starts)


def _group_average_ranks(x, grp, starts):
    """Average ranks (1-based, ties averaged, as scipy.stats.rankdata) within each contiguous group."""
    order = np.lexsort((x, grp))
    xs, gs = x[order], grp[order]
    run_start = np.flatnonzero(np.r_[True, (xs[1:] != xs[:-1]) | (gs[1:] != gs[:-1])])
    run_len = np.diff(np.r_[run_start, len(xs)])
    mid = run_start + (run_len - 1) / 2.0  # mean position of the run
    ranks = np.empty(len(x))
    ranks[order] = np.repeat(mid, run_len) - starts[gs[run_start]].repeat(run_len) + 1.0
    return ranks


def _group_distinct(x, grp, n_groups):
    order = np.lexsort((x, grp))
    xs, gs = x[order], grp[order]
    new = np.r_[True, (xs[1:] != xs[:-1]) | (gs[1:] != gs[:-1])]
    return np.bincount(gs[new], minlength=n_groups)


def _group_kendall(m, h, sizes, variant, epsilon):
    i, j, g = _pairs(sizes)
    ng = len(sizes)
    sh = _sign_cmp(h[i], h[j])
    sm = np.where(np.abs(m[i] - m[j]) <= epsilon, 0, _sign_cmp(m[i], m[j])).astype(np.int8)
    count = lambda mask: np.bincount(g, weights=mask, minlength=ng)  # noqa: E731
    con, dis = count(sh * sm == 1), count(sh * sm == -1)
    t_h, t_m, t_b = count((sh == 0) & (sm != 0)), count((sh != 0) & (sm == 0)), count((sh == 0) & (sm == 0))
    tot = con + dis + t_h + t_m + t_b
    if variant == "acc23":
        return (con + t_b) / tot
    if variant == "23":
        return (con + t_b - dis - t_h - t_m) / tot
    m_tie, h_tie = t_m + t_b, t_h + t_b
    undefined = (m_tie == tot) | (h_tie == tot)
    with np.errstate(invalid="ignore", divide="ignore"):
        if variant == "b":
            tau = (con - dis) / np.sqrt(tot - m_tie) / np.sqrt(tot - h_tie)
        else:  # "c"
            grp = np.repeat(np.arange(ng), sizes)
            k = np.minimum(_group_distinct(m, grp, ng), _group_distinct(h, grp, ng)).astype(float)
            tau = 2 * (con - dis) / (sizes.astype(float) ** 2 * (k - 1) / k)
    tau = np.clip(tau, -1.0, 1.0)
    tau[undefined] = np.nan
    return tau


def item_grouped_correlation(metric, human, items, method: str = "pearson", *, variant: str = "b",
                             epsilon: float = 0.0, replace_nans_with_zeros: bool = False) -> ItemCorrelation:
    """Correlation within each item (source segment), averaged over items: mtme's ``average_by="item"``.

    Variant: mtme ``Correlation(num_sys, gold, metric).Pearson("item")`` / ``.Spearman("item")`` /
    ``.Kendall("item", variant)`` (scipy's ``pearsonr``, ``spearmanr``, ``kendalltau``) and, for
    ``variant="23"``/``"acc23"`` or ``epsilon`` > 0, ``.KendallVariants("item", variant, epsilon)`` (Deutsch et al.
    2023), all through
    ``AverageCorrelation`` with its defaults (``macro=True``). The rule, exactly as mtme:

    * human NaN (mtme ``None``) entries are dropped; items left with fewer than 2 entries are skipped (not counted);
    * an item's correlation is NaN when it is undefined: for Pearson/Spearman a constant human or metric vector
      (mtme's own constant check never fires on its filtered tuples, but scipy returns NaN there); for Kendall b/c
      when every pair is tied in human or in metric; 23/acc23 are always defined;
    * the result is the plain mean of the non-NaN item correlations (``replace_nans_with_zeros=True``: NaN counts
      as 0 in the mean instead); ``num_items`` is the number averaged. If no item has a defined correlation, mtme
      returns 0.0 (not NaN): so does this function, with a ``RuntimeWarning``.

    ``method``: ``"pearson"``, ``"spearman"`` or ``"kendall"`` (``variant``: ``"b"``, ``"c"``, ``"23"``,
    ``"acc23"``; ``epsilon`` >= 0 is the metric tie threshold ``|diff| <= epsilon``, as mtme's
    ``KendallVariants``: allowed with b, 23 and acc23, not with c (mtme raises) nor Pearson/Spearman).
    mtme also averages the items' p-values; an average of p-values is not a p-value and is not returned here.
    Kendall enumerates the pairs of each item: memory grows with the square of the largest item.

    >>> items = ["a", "a", "a", "b", "b", "b"]
    >>> human = [3, 2, 1, 1, 1, 2]
    >>> metric = [9, 5, 6, 2, 3, 7]
    >>> r = item_grouped_correlation(metric, human, items, "pearson")  # (3/sqrt(52/3) + 3/sqrt(28/3)) / 2
    >>> round(r.corr, 6), r.num_items
    (0.851279, 2)
    >>> round(item_grouped_correlation(metric, human, items, "kendall").corr, 6)  # (1/3 + 2/sqrt(6)) / 2
    0.574915
    """
    if method not in METHODS:
        raise ValueError(f"method: must be one of {METHODS}, got {method!r}")
    if variant not in KENDALL_VARIANTS:
        raise ValueError(f"variant: must be one of {KENDALL_VARIANTS}, got {variant!r}")
    if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real) or not math.isfinite(epsilon) \
            or epsilon < 0:
        raise ValueError(f"epsilon: must be a finite number >= 0, got {epsilon!r}")
    if epsilon > 0 and not (method == "kendall" and variant != "c"):
        raise ValueError("epsilon: a tie threshold > 0 is defined only for method='kendall' with variant "
                         "'b', '23' or 'acc23'")
    m, h, codes = _long_format(metric, human, items)
    _, starts, sizes = _groups(codes)
    keep = sizes >= 2
    if not keep.any():
        raise ValueError("items: no item has 2 or more scored translations (non-NaN human)")
    if not keep.all():  # drop the single-entry items
        sel = np.repeat(keep, sizes)
        m, h = m[sel], h[sel]
        sizes = sizes[keep]
        starts = np.cumsum(sizes) - sizes
    grp = np.repeat(np.arange(len(sizes)), sizes)

    if method == "kendall":
        corr = _group_kendall(m, h, sizes, variant, float(epsilon))
    else:
        x, y = (m, h) if method == "pearson" else (_group_average_ranks(m, grp, starts),
                                                    _group_average_ranks(h, grp, starts))
        corr = _group_pearson(x, y, grp, len(sizes))
        corr[_group_constant(m, starts) | _group_constant(h, starts)] = np.nan

    if replace_nans_with_zeros:
        corr = np.nan_to_num(corr, nan=0.0)
    corr = corr[~np.isnan(corr)]
    if len(corr) == 0:
        warnings.warn("no item has a defined correlation (constant vectors); returning 0.0 as mt-metrics-eval "
                      "does", RuntimeWarning, stacklevel=2)
        return ItemCorrelation(0.0, 0)
    return ItemCorrelation(float(np.mean(corr)), len(corr))


# ----------------------------------------------------------------------------------------------------------------
# Soft pairwise accuracy (system level)
# ----------------------------------------------------------------------------------------------------------------

def _sign_matrix(num_permutations: int, num_segments: int, seed) -> np.ndarray:
    """mtme pce's random +-1 matrix: default_rng(seed) float32 uniforms, +1 where > 0.5 (rint rounds 0.5 to 0)."""
    u = np.random.default_rng(seed).random(size=(num_permutations, num_segments), dtype=np.float32)
    return np.where(u > np.float32(0.5), np.float32(1.0), np.float32(-1.0))


def _p_values(seg_scores: np.ndarray, signs: np.ndarray) -> np.ndarray:
    x = np.asarray(seg_scores, dtype=np.float32).astype(np.float64)
    num_sys = x.shape[0]
    totals, scale = np.sum(x, axis=1), np.sum(np.abs(x), axis=1)
    null = np.matmul(signs.astype(np.float64), x.T)  # (permutations, systems)
    p = np.full((num_sys, num_sys), np.nan)
    for a in range(num_sys - 1):  # a tie: within 1e-9 of the summed |scores| (float64 rounding is ~1e-13)
        reach = totals[a] - totals[a + 1:] - 1e-9 * (scale[a] + scale[a + 1:])
        hits = np.count_nonzero((null[:, [a]] - null[:, a + 1:]) >= reach, axis=0)
        p[a, a + 1:] = hits / signs.shape[0]
    return p


def pairwise_permutation_p_values(seg_scores, *, num_permutations: int = 1000, seed=4) -> np.ndarray:
    """Paired permutation p-values for every system pair, as mtme ``pce.compute_pairwise_p_values`` (Thompson 2024).

    ``seg_scores``: (systems x segments). ``p[i, j]`` (upper triangle, ``i < j``; NaN elsewhere) is the fraction of
    ``num_permutations`` random sign flips (one swap decision per segment, shared by all pairs) under which the
    summed difference ``sum(x_i - x_j)`` is at least the observed one: the p-value for "system i > system j".
    mtme's sign flips (``numpy.random.default_rng(seed)``; its default 4) and float32-rounded scores, summed in
    float64 with exact ties counted as ties (within 1e-9 of the summed |scores|). mtme's float32 sums let the BLAS
    kernel's rounding decide exact ties: on raw MQM its p-values change with the kernel, and two de-en systems that
    differ on one segment get p = 0 where half the flips reach the observed difference exactly (here 0.524).

    >>> base = np.arange(30) % 7
    >>> p = pairwise_permutation_p_values([base + 2, base + 1, base], num_permutations=100)
    >>> p[0, 1].item(), p[0, 2].item(), p[1, 2].item()  # 0 > 1 > 2 everywhere: no flip reaches the gap
    (0.0, 0.0, 0.0)
    >>> pairwise_permutation_p_values([base, base + 1], num_permutations=100)[0, 1].item()  # 0 < 1 everywhere
    1.0
    """
    x = _matrix(seg_scores, "seg_scores")
    num_permutations = _check_positive_int(num_permutations, "num_permutations")
    return _p_values(x, _sign_matrix(num_permutations, x.shape[1], seed))


def spa_from_p_values(human_p_values, metric_p_values) -> float:
    """1 - PCE: one minus the mean |p_human - p_metric| over the upper triangle (mtme ``pce.compute_one_minus_pce``).

    >>> nan = float("nan")
    >>> h = [[nan, 0.01, 0.2], [nan, nan, 0.5], [nan, nan, nan]]
    >>> m = [[nan, 0.05, 0.1], [nan, nan, 0.9], [nan, nan, nan]]
    >>> round(spa_from_p_values(h, m), 12)  # 1 - (0.04 + 0.1 + 0.4) / 3
    0.82
    """
    hp = np.asarray(human_p_values, dtype=float)
    mp = np.asarray(metric_p_values, dtype=float)
    for name, a in (("human_p_values", hp), ("metric_p_values", mp)):
        if a.ndim != 2 or a.shape[0] != a.shape[1] or a.shape[0] < 2:
            raise ValueError(f"{name}: expected a square (systems x systems) matrix with >= 2 systems, "
                             f"got shape {a.shape}")
    if hp.shape != mp.shape:
        raise ValueError(f"human_p_values and metric_p_values differ in shape: {hp.shape} vs {mp.shape}")
    upper = np.triu_indices(hp.shape[0], 1)
    diffs = np.abs(hp - mp)[upper]
    if np.isnan(diffs).any():
        raise ValueError("human_p_values/metric_p_values: NaN in the upper triangle (i < j)")
    return float(1.0 - np.mean(diffs))


def soft_pairwise_accuracy(metric_seg_scores, human_seg_scores, *, num_permutations: int = 1000, seed=4) -> float:
    """System-level soft pairwise accuracy, SPA = 1 - PCE (Thompson, Mathur, Deutsch & Khayrallah 2024).

    Variant: mtme ``stats.PairwiseConfidenceError`` =
    ``pce.compute_one_minus_pce(compute_pairwise_p_values(human), compute_pairwise_p_values(metric))``: the
    permutation p-value of "system i > system j" (:func:`pairwise_permutation_p_values`) from the human segment
    scores and from the metric segment scores, the same ``seed`` (so the same sign flips) for both, then
    ``1 - mean_{i<j} |p_h[i, j] - p_m[i, j]|``. Inputs: (systems x segments) matrices in the same system and
    segment order, complete (no NaN: mtme's None filter would misalign a packed matrix, so keep only segments
    scored for every system). SPA is 1 when the metric reproduces the human p-values exactly.

    >>> base = np.arange(30) % 7
    >>> human = [base + 2, base + 1, base]       # p_h = 0, 0, 0 for (0,1), (0,2), (1,2)
    >>> metric = [base, base + 2, base + 1]      # p_m = 1, 1, 0
    >>> soft_pairwise_accuracy(metric, human, num_permutations=100)  # 1 - (1 + 1 + 0) / 3
    0.33333333333333337
    """
    m = _matrix(metric_seg_scores, "metric_seg_scores")
    h = _matrix(human_seg_scores, "human_seg_scores")
    if m.shape != h.shape:
        raise ValueError(f"metric_seg_scores and human_seg_scores differ in shape: {m.shape} vs {h.shape}")
    num_permutations = _check_positive_int(num_permutations, "num_permutations")
    signs = _sign_matrix(num_permutations, m.shape[1], seed)
    return spa_from_p_values(_p_values(h, signs), _p_values(m, signs))


def pairwise_accuracy(metric_sys_scores, human_sys_scores) -> tuple[float, int]:
    """System-level pairwise accuracy (Kocmi et al. 2021; mtme ``stats.Agreement``): the share of system pairs
    whose metric difference has the same sign as their human difference (a pair tied by both counts as agreeing).
    Returns ``(accuracy, number of pairs)``; NaN with fewer than two systems. Systems with a NaN score (human or
    metric) are left out, as mtme leaves out ``None``.

    >>> pairwise_accuracy([0.3, 0.2, 0.1], [3.0, 1.0, 2.0])  # (0,1) and (0,2) agree, (1,2) does not
    (0.6666666666666666, 3)
    """
    m = _vector(metric_sys_scores, "metric_sys_scores", allow_nan=True)
    h = _vector(human_sys_scores, "human_sys_scores", allow_nan=True)
    if len(m) != len(h):
        raise ValueError(f"metric_sys_scores and human_sys_scores differ in length: {len(m)} vs {len(h)}")
    keep = ~np.isnan(h) & ~np.isnan(m)
    m, h = m[keep], h[keep]
    if len(m) < 2:
        return float("nan"), 0
    i, j = np.triu_indices(len(m), 1)
    agree = np.sign(h[i] - h[j]) == np.sign(m[i] - m[j])
    return float(agree.mean()), int(len(i))


# ----------------------------------------------------------------------------------------------------------------
# Permutation tests between two metrics (mtme PermutationSigDiff)
# ----------------------------------------------------------------------------------------------------------------

def _permutation_loop(stat, z1, z2, k, rs, block_size, early_min, early_max):
    stat2, stat1 = stat(z2), stat(z1)  # mtme evaluates metric2 first (matters when the statistic samples)
    delta = stat2 - stat1
    resampled, count, i = [], 0, 1
    for i in range(1, k + 1):
        w1 = rs.binomial(1, 0.5, len(z1))
        w2 = 1 - w1
        c1 = stat(w1 * z1 + w2 * z2)
        c2 = stat(w2 * z1 + w1 * z2)
        resampled.append((c2, c1))
        if c2 - c1 >= delta:
            count += 1
        if i % block_size == 0:
            p = count / i
            if p < early_min or p > early_max:
                break
    return PermutationTestResult(count / i, delta, i, stat1, stat2, np.asarray(resampled, dtype=float))


def _check_early(block_size, early_min, early_max):
    block_size = _check_positive_int(block_size, "block_size")
    for name, v in (("early_min", early_min), ("early_max", early_max)):
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not 0 <= v <= 1:
            raise ValueError(f"{name}: must be a number in [0, 1], got {v!r}")
    return block_size


def permutation_test_acc_eq(metric1, metric2, human, items, *, k: int = 1000, sample_rate: float = 1.0,
                            random_state=None, block_size: int = 1000, early_min: float = 0.02,
                            early_max: float = 0.5) -> PermutationTestResult:
    """Is metric2's tie-calibrated acc_eq higher than metric1's? mtme ``PermutationSigDiff`` with acc_eq.

    Variant: mtme ``PermutationSigDiff(corr1, corr2, KendallWithTiesOpt, "item", k, variant="acc23",
    sample_rate=...)``, the PERM-BOTH test (Deutsch, Dror & Roth 2021) on the statistic of
    :func:`pairwise_accuracy_tie_calibrated` (Deutsch et al. 2023). Both metrics are z-scored over all entries
    (``scipy.stats.zscore``, unrated ones included), ``delta = acc_eq(metric2) - acc_eq(metric1)``; each of the
    ``k`` resamples swaps the two metrics' scores of every entry with probability 1/2
    (``binomial(1, 0.5, n)``), re-optimises epsilon for both hybrids, and counts ``c2 - c1 >= delta``.
    p-value = count / resamples, for "metric2 > metric1". Every ``block_size`` resamples the test stops early if
    the p-value is below ``early_min`` or above ``early_max`` (mtme's defaults 1000, 0.02, 0.5).

    Draws (swaps, and pair sampling when ``sample_rate`` < 1) come from ``random_state``: None = numpy's global
    legacy generator in mtme's order, so ``np.random.seed(s)`` before both gives mtme's result; an int seed or
    ``RandomState`` for a private stream. The swaps follow the input order: pass entries system-major (mtme's
    packed order) to reproduce mtme. Each resample costs two tie calibrations.

    >>> items = ["a"] * 3 + ["b"] * 3
    >>> human = [3, 2, 1, 1, 1, 2]
    >>> r = permutation_test_acc_eq([9, 5, 6, 2, 3, 7], [9, 5, 6, 2, 3, 7], human, items, k=20, random_state=1)
    >>> r.delta, r.p_value  # identical metrics: every resample ties the observed delta of 0
    (0.0, 1.0)
    """
    k = _check_positive_int(k, "k")
    block_size = _check_early(block_size, early_min, early_max)
    m1 = _vector(metric1, "metric1", allow_nan=False)
    m2 = _vector(metric2, "metric2", allow_nan=False)
    if len(m1) != len(m2):
        raise ValueError(f"metric1 and metric2 differ in length: {len(m1)} vs {len(m2)}")
    for name, v in (("metric1", m1), ("metric2", m2)):
        if len(v) >= 2 and np.all(v == v[0]):
            raise ValueError(f"{name}: constant scores cannot be z-scored")
    pairwise_accuracy_tie_calibrated(m1, human, items, epsilon=0.0)  # checks human/items once, up front
    rs = _random_source(random_state)

    def stat(scores):
        return pairwise_accuracy_tie_calibrated(scores, human, items, sample_rate=sample_rate,
                                                random_state=rs).acc_eq

    from scipy.stats import zscore  # at first use: `score` and `report` start without scipy.stats
    return _permutation_loop(stat, zscore(m1), zscore(m2), k, rs, block_size,
                             early_min, early_max)


def permutation_test_spa(metric1_seg_scores, metric2_seg_scores, human_seg_scores, *, k: int = 1000,
                         num_permutations: int = 1000, seed=4, random_state=None, block_size: int = 1000,
                         early_min: float = 0.02, early_max: float = 0.5) -> PermutationTestResult:
    """Is metric2's soft pairwise accuracy higher than metric1's? mtme ``PermutationSigDiff`` with SPA.

    Variant: mtme ``PermutationSigDiff(corr1, corr2, PairwiseConfidenceError, "none", k, num_sys=...,
    num_permutations=...)``, the PERM-BOTH test (Deutsch, Dror & Roth 2021) on :func:`soft_pairwise_accuracy`
    (Thompson et al. 2024). The (systems x segments) metric matrices are z-scored over all their cells
    (``scipy.stats.zscore`` of the system-major flattening), ``delta = SPA(metric2) - SPA(metric1)``; each
    resample swaps the two metrics' scores cell by cell with probability 1/2 (``binomial(1, 0.5, cells)``,
    system-major) and counts ``SPA(hybrid2) - SPA(hybrid1) >= delta``. p-value for "metric2 > metric1", early
    stopping as in :func:`permutation_test_acc_eq`. ``seed`` fixes the p-value sign flips (mtme: always 4);
    ``random_state`` the swaps (None: numpy's global legacy generator, as mtme).

    >>> base = np.arange(30) % 7
    >>> human = [base + 2, base + 1, base]
    >>> metric = [base + 2, base, base + 1]
    >>> r = permutation_test_spa(metric, metric, human, k=10, num_permutations=50, random_state=0)
    >>> r.delta, r.p_value  # identical metrics
    (0.0, 1.0)
    """
    k = _check_positive_int(k, "k")
    block_size = _check_early(block_size, early_min, early_max)
    num_permutations = _check_positive_int(num_permutations, "num_permutations")
    a = _matrix(metric1_seg_scores, "metric1_seg_scores")
    b = _matrix(metric2_seg_scores, "metric2_seg_scores")
    hum = _matrix(human_seg_scores, "human_seg_scores")
    if a.shape != hum.shape or b.shape != hum.shape:
        raise ValueError(f"metric1_seg_scores {a.shape}, metric2_seg_scores {b.shape} and human_seg_scores "
                         f"{hum.shape} must have the same shape")
    for name, v in (("metric1_seg_scores", a), ("metric2_seg_scores", b)):
        if np.all(v == v.flat[0]):
            raise ValueError(f"{name}: constant scores cannot be z-scored")
    shape = hum.shape
    signs = _sign_matrix(num_permutations, shape[1], seed)
    human_p = _p_values(hum, signs)
    rs = _random_source(random_state)

    def stat(flat):
        return spa_from_p_values(human_p, _p_values(flat.reshape(shape), signs))

    from scipy.stats import zscore  # at first use, as above
    return _permutation_loop(stat, zscore(a.reshape(-1)), zscore(b.reshape(-1)), k, rs,
                             block_size, early_min, early_max)
