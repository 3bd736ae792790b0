"""Correlations of metric and human scores, and the tests that assume independent rows.

Conventions (:mod:`syneval_nb.stats`): ``metric`` and ``human`` are 1-D arrays of the same length, one value per
scored item (a segment translation, or a system); higher is better for both (negate error rates and MQM penalties
first). Non-finite values are an error, never silently dropped. ``segments`` labels the source segment of each item
(all systems' translations of one source share a label).

* the input checks every module of :mod:`syneval_nb.stats` uses (``as_vector``, ``as_pair``, ``dense_labels``);
* correlations (:func:`correlation`, ``method`` in :data:`METHODS`): ``pearson``, ``spearman``, ``kendall``
  (tau-b) from scipy; ``within`` (:func:`within_segment`: Pearson after centering each source segment, which
  removes source difficulty); ``darr`` (:func:`wmt_darr_tau`: the WMT DARR pair tau within segments);
  :func:`system_level` (mean per system, then correlate); :func:`partial_correlation`;
* WMT segment-level Kendall-like taus over pairs of translations of the same source: :func:`wmt_darr_tau`
  and :func:`wmt12_tau` (relative rankings, WMT12 / Guzman et al. 2014), built on :func:`better_worse_pairs` and
  :func:`concordance_counts`;
* :func:`fisher_ci` and the Williams test (:func:`williams_test`, :func:`williams_from_scores`), which assume
  independent rows and are kept for that case only (system level, or one row per source segment).
"""
from __future__ import annotations

import warnings
from functools import lru_cache
from typing import Callable, Sequence

import numpy as np

__all__ = ["pearson", "spearman", "correlation", "fisher_ci", "williams_test", "METHODS", "system_level",
           "partial_correlation", "wmt12_tau", "wmt_darr_tau", "kendall_tau_b"]
# helpers of the other stats modules (not in __all__): the input checks ``as_vector``, ``as_pair``, ``dense_labels``;
# ``BASIC_METHODS``, ``multi_item_mask``, ``pair_outcomes``, ``pair_tau``

ArrayLike = Sequence[float] | np.ndarray

METHODS = ("pearson", "spearman", "kendall", "within", "darr")
"""The correlation methods of :func:`correlation` and :func:`correlation_table`."""


# ----------------------------------------------------------------------------------------------------------------
# input checks
# ----------------------------------------------------------------------------------------------------------------

def as_vector(x: ArrayLike, name: str) -> np.ndarray:
    a = np.asarray(x, dtype=float)
    if a.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {a.shape}")
    bad = ~np.isfinite(a)
    if bad.any():
        raise ValueError(f"{name} has {int(bad.sum())} non-finite value(s), first at index {int(np.argmax(bad))}")
    return a


def as_pair(x: ArrayLike, y: ArrayLike, min_n: int = 2, names: tuple[str, str] = ("x", "y")) -> tuple[np.ndarray, np.ndarray]:
    a, b = as_vector(x, names[0]), as_vector(y, names[1])
    if len(a) != len(b):
        raise ValueError(f"{names[0]} has {len(a)} values but {names[1]} has {len(b)}")
    if len(a) < min_n:
        raise ValueError(f"need at least {min_n} paired values, got {len(a)}")
    return a, b


def dense_labels(labels: Sequence | None, n: int, name: str) -> np.ndarray | None:
    """Labels as dense ints 0..G-1 (``None`` stays ``None``)."""
    if labels is None:
        return None
    g = np.asarray(labels)
    if g.ndim != 1 or len(g) != n:
        raise ValueError(f"{name} has {g.size} labels but there are {n} items")
    return np.unique(g, return_inverse=True)[1].reshape(-1)


# ----------------------------------------------------------------------------------------------------------------
# correlations
# ----------------------------------------------------------------------------------------------------------------

def _scipy_stats():  # imported at first use: `score` and `report` start without it (~1.5 s of CPU a run)
    import scipy.stats
    return scipy.stats


def _quiet(fn: Callable, a: np.ndarray, b: np.ndarray) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns on constant input and returns NaN: NaN is our answer too
        v = float(fn(a, b)[0])
    return v


def pearson(x: ArrayLike, y: ArrayLike) -> float:
    r"""Pearson's r = \sum (x-\bar x)(y-\bar y) / \sqrt{\sum (x-\bar x)^2 \sum (y-\bar y)^2}
    (``scipy.stats.pearsonr``); NaN if either is constant."""
    a, b = as_pair(x, y)
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return float("nan")
    return _quiet(_scipy_stats().pearsonr, a, b)


def average_ranks(x: ArrayLike) -> np.ndarray:
    """Ranks 1..n, tied values getting the mean of the ranks they span (``scipy.stats.rankdata``, 'average')."""
    return _scipy_stats().rankdata(as_vector(x, "x"), method="average").astype(float)


def spearman(x: ArrayLike, y: ArrayLike) -> float:
    """Spearman's rho: Pearson's r of the average ranks (``scipy.stats.spearmanr``); NaN if either is constant."""
    a, b = as_pair(x, y)
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return float("nan")
    return _quiet(_scipy_stats().spearmanr, a, b)


def kendall_tau_b(x: ArrayLike, y: ArrayLike) -> float:
    r"""Kendall's tau-b = (C - D) / \sqrt{(n_0 - n_1)(n_0 - n_2)} (``scipy.stats.kendalltau(variant="b")``).

    n_0 = n(n-1)/2 pairs, n_1 / n_2 pairs tied in x / y, C / D concordant / discordant pairs (pairs tied in either
    are neither). NaN when x or y is constant."""
    a, b = as_pair(x, y)
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return float("nan")
    return _quiet(lambda u, v: _scipy_stats().kendalltau(u, v, variant="b"), a, b)


def center_within(values: ArrayLike, segments: Sequence) -> np.ndarray:
    """``values`` minus the mean of its segment (each source segment's scores centred at 0)."""
    v = as_vector(values, "values")
    inv = dense_labels(segments, len(v), "segments")
    means = np.bincount(inv, weights=v) / np.bincount(inv)
    return v - means[inv]


def multi_item_mask(segments: Sequence, n: int) -> np.ndarray:
    """Mask of the items whose segment has at least two items (a lone item has nothing to be compared with)."""
    inv = dense_labels(segments, n, "segments")
    return np.bincount(inv)[inv] >= 2


def within_segment(metric: ArrayLike, human: ArrayLike, segments: Sequence, method: str = "pearson") -> float:
    r"""Within-segment correlation: ``method`` (pearson, spearman or kendall) of the metric and human scores after
    centring each source segment's scores on their segment mean:

        r_within = corr(m_i - \bar m_{s(i)}, h_i - \bar h_{s(i)})

    so only the differences between translations of the same source count (source difficulty, which moves every
    translation of a segment together, is removed). Segments with a single item are left out (centred, they are a
    0 that carries no comparison). With Pearson this is the pooled within-group correlation of an ANOVA layout."""
    m, h = as_pair(metric, human, names=("metric", "human"))
    if method not in ("pearson", "spearman", "kendall"):
        raise ValueError(f"within_segment: method must be pearson, spearman or kendall, got {method!r}")
    keep = multi_item_mask(segments, len(m))
    if keep.sum() < 3:
        raise ValueError(f"within_segment needs at least 3 items in segments of two or more, got {int(keep.sum())}")
    mc, hc = center_within(m, segments)[keep], center_within(h, segments)[keep]
    return BASIC_METHODS[method](mc, hc)


BASIC_METHODS: dict[str, Callable[[ArrayLike, ArrayLike], float]] = {
    "pearson": pearson, "spearman": spearman, "kendall": kendall_tau_b,
}


def correlation(x: ArrayLike, y: ArrayLike, method: str = "pearson", segments: Sequence | None = None, *,
                threshold: float = 0.0, metric_ties: str = "discordant") -> float:
    """The correlation of metric ``x`` with human ``y``; ``method`` in :data:`METHODS`:

    * ``pearson``, ``spearman``, ``kendall`` (tau-b): over all items (``segments`` unused);
    * ``within``: :func:`within_segment` (Pearson after centring each source segment; needs ``segments``);
    * ``darr``: :func:`wmt_darr_tau` over the pairs of the same segment whose human scores differ by more than
      ``threshold`` (0: every pair the humans did not tie; 25 on raw DA: WMT's DARR pairs); a metric tie counts as
      discordant (WMT), or is dropped with ``metric_ties="exclude"`` (the tau without the tie penalty).
    """
    if method in BASIC_METHODS:
        return BASIC_METHODS[method](x, y)
    if method in ("within", "darr") and segments is None:
        raise ValueError(f"method {method!r} compares translations of the same source: pass segments=")
    if method == "within":
        return within_segment(x, y, segments)
    if method == "darr":
        return wmt_darr_tau(x, y, segments, threshold, metric_ties)
    raise ValueError(f"unknown correlation method {method!r}; use one of {list(METHODS)}")


def system_means(values: ArrayLike, systems: Sequence) -> tuple[np.ndarray, np.ndarray]:
    """(sorted unique system names, mean of ``values`` per system)."""
    v = as_vector(values, "values")
    s = np.asarray(systems)
    if len(s) != len(v):
        raise ValueError(f"systems has {len(s)} labels but values has {len(v)}")
    names, inv = np.unique(s, return_inverse=True)
    sums = np.bincount(inv, weights=v)
    return names, sums / np.bincount(inv)


def system_level(metric: ArrayLike, human: ArrayLike, systems: Sequence, method: str = "pearson") -> float:
    """System-level correlation from segment scores: average ``metric`` and ``human`` per system over that
    system's segments, then correlate the per-system means (``method`` as in :func:`correlation`).

    (A corpus-level metric such as corpus BLEU is not a mean of segment scores: correlate its per-system values
    with :func:`correlation` directly.)"""
    m, h = as_pair(metric, human, names=("metric", "human"))
    _, mm = system_means(m, systems)
    _, hm = system_means(h, systems)
    if len(mm) < 3:
        raise ValueError(f"system-level correlation needs at least 3 systems, got {len(mm)}")
    return correlation(mm, hm, method)


# ----------------------------------------------------------------------------------------------------------------
# WMT Kendall-like taus over pairs of translations of the same source
# ----------------------------------------------------------------------------------------------------------------

@lru_cache(maxsize=256)
def _triu(k: int) -> tuple[np.ndarray, np.ndarray]:
    return np.triu_indices(k, 1)


def better_worse_pairs(human: ArrayLike, segment_ids: Sequence, threshold: float = 0.0,
                       distinct: Sequence | None = None) -> tuple[np.ndarray, np.ndarray]:
    """All pairs of items of the same segment whose human scores differ by more than ``threshold``.

    Returns index arrays ``(better, worse)`` with ``human[better] - human[worse] > threshold`` and
    ``segment_ids[better] == segment_ids[worse]``. ``threshold=0`` keeps every pair the humans did not tie
    (relative ranking); ``threshold=25`` on raw DA gives the WMT DARR pairs; on TED MQM, ``threshold=t`` keeps
    pairs whose MQM differs by more than t points. With ``distinct`` (one label per item, e.g. the translation
    text), pairs whose two items have equal labels are left out as well (identical translations: every metric
    ties them, so their human difference is rater noise).
    """
    h = as_vector(human, "human")
    seg = np.asarray(segment_ids)
    if len(seg) != len(h):
        raise ValueError(f"segment_ids has {len(seg)} labels but human has {len(h)}")
    if threshold < 0:
        raise ValueError(f"threshold must be >= 0, got {threshold}")
    _, inv = np.unique(seg, return_inverse=True)
    order = np.argsort(inv, kind="stable")
    bounds = np.flatnonzero(np.diff(inv[order])) + 1
    better, worse = [], []
    for grp in np.split(order, bounds):
        if len(grp) < 2:
            continue
        i, j = _triu(len(grp))
        a, b = grp[i], grp[j]
        diff = h[a] - h[b]
        keep = np.abs(diff) > threshold
        a, b, diff = a[keep], b[keep], diff[keep]
        better.append(np.where(diff > 0, a, b))
        worse.append(np.where(diff > 0, b, a))
    if not better:
        return np.empty(0, dtype=int), np.empty(0, dtype=int)
    b, w = np.concatenate(better), np.concatenate(worse)
    if distinct is not None:
        lab = np.asarray(distinct, dtype=object)
        if len(lab) != len(h):
            raise ValueError(f"distinct has {len(lab)} labels but human has {len(h)}")
        keep = lab[b] != lab[w]
        b, w = b[keep], w[keep]
    return b, w


def pair_outcomes(metric: np.ndarray, better: np.ndarray, worse: np.ndarray) -> tuple[np.ndarray, ...]:
    """(concordant, discordant, tied) masks of the pairs (last axis; ``metric`` 1-D, or k x n for k metrics):
    metric[better] > metric[worse] / < / ==. A pair with a NaN score is none of the three (left out)."""
    mb, mw = metric[..., better], metric[..., worse]
    return mb > mw, mb < mw, mb == mw


def concordance_counts(metric: ArrayLike, better: np.ndarray, worse: np.ndarray) -> tuple[int, int, int]:
    """(concordant, discordant, tied) over pairs: metric[better] > metric[worse] / < / ==."""
    conc, disc, ties = pair_outcomes(as_vector(metric, "metric"), better, worse)
    return int(conc.sum()), int(disc.sum()), int(ties.sum())


def pair_tau(conc, disc, ties, metric_ties: str):
    """(C - D) / (C + D) from the pair counts, metric ties counted as discordant (``"discordant"``, WMT12) or
    left out (``"exclude"``); NaN without pairs. Counts are ints, or arrays of counts (then an array of taus)."""
    if metric_ties == "discordant":
        disc = disc + ties
    elif metric_ties != "exclude":
        raise ValueError(f"metric_ties must be 'discordant' or 'exclude', got {metric_ties!r}")
    tot = conc + disc
    if np.ndim(tot) == 0:
        return (conc - disc) / tot if tot else float("nan")
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(tot > 0, (conc - disc) / tot, np.nan)


def wmt_darr_tau(metric: ArrayLike, human_raw: ArrayLike, segment_ids: Sequence, threshold: float = 25.0,
                 metric_ties: str = "discordant") -> float:
    r"""WMT DARR Kendall-like tau (WMT17-20 metrics tasks, segment level).

    Pairs: two translations of the same source (same ``segment_ids``) whose raw DA differs by more than
    ``threshold`` (25) points; the higher one is "better". A pair is concordant if the metric scores the better
    translation strictly higher, discordant otherwise; a metric tie counts as discordant (WMT18-19 findings,
    Table "DARR"; COMET's ``WMTKendall``: ``discordance = pos >= neg``), or is dropped with
    ``metric_ties="exclude"``. tau = (Concordant - Discordant) / (Concordant + Discordant).
    """
    m = as_vector(metric, "metric")
    h = as_vector(human_raw, "human_raw")
    if len(m) != len(h):
        raise ValueError(f"metric has {len(m)} values but human_raw has {len(h)}")
    b, w = better_worse_pairs(h, segment_ids, threshold)
    return pair_tau(*concordance_counts(m, b, w), metric_ties)


def wmt12_tau(metric: ArrayLike, human: ArrayLike, segment_ids: Sequence, threshold: float = 0.0,
              distinct: Sequence | None = None) -> float:
    r"""WMT12 segment-level Kendall's tau (Callison-Burch et al. 2012, Sec. 4.2), as used by Guzman et al. (2014).

    From relative rankings: every pair of translations of the same source that the humans ranked differently
    (human ties excluded; ``human`` higher = better, so pass ``-rank`` for WMT ranks where 1 is best, or a score
    such as MQM with ``threshold`` > 0 to keep only clear differences). Concordant if the metric agrees strictly;
    **ties in the metric count as discordant** ("harshly penalized", Guzman et al. 2014, Sec. 5.3).
    tau = (Concordant - Discordant) / (Concordant + Discordant). ``distinct``: see :func:`better_worse_pairs`
    (drop pairs of items with equal labels, e.g. identical translations).
    """
    m = as_vector(metric, "metric")
    h = as_vector(human, "human")
    if len(m) != len(h):
        raise ValueError(f"metric has {len(m)} values but human has {len(h)}")
    b, w = better_worse_pairs(h, segment_ids, threshold, distinct)
    return pair_tau(*concordance_counts(m, b, w), "discordant")


# ----------------------------------------------------------------------------------------------------------------
# confidence intervals and significance
# ----------------------------------------------------------------------------------------------------------------

def fisher_ci(r: float, n: int, alpha: float = 0.05) -> tuple[float, float]:
    r"""Fisher z interval for a correlation: tanh(atanh(r) -+ z_{1-alpha/2} / \sqrt{n-3}). Assumes n independent
    rows (too narrow on segment rows of several systems: ``tests/test_stats.py`` measures its coverage)."""
    if not -1.0 <= r <= 1.0:
        raise ValueError(f"correlation must be in [-1, 1], got {r}")
    if n <= 3:
        raise ValueError(f"Fisher z needs n > 3, got {n}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    z = np.arctanh(np.clip(r, -1 + 1e-15, 1 - 1e-15))
    half = _scipy_stats().norm.ppf(1 - alpha / 2) / np.sqrt(n - 3)
    return float(np.tanh(z - half)), float(np.tanh(z + half))


def williams_test(r12: float, r13: float, r23: float, n: int) -> tuple[float, float]:
    r"""Williams (1959) test that r12 > r13 for correlations sharing variable 1 (one-sided, Graham & Baldwin 2014).

    Variable 1 is the human score, 2 and 3 the two metrics, r23 their correlation with each other::

        |R| = 1 - r12^2 - r13^2 - r23^2 + 2 r12 r13 r23
        t   = (r12 - r13) sqrt((n-1)(1+r23)) / sqrt(2 |R| (n-1)/(n-3) + (r12+r13)^2/4 (1-r23)^3)

    t follows Student's t with n-3 degrees of freedom; p = P(T >= t) (small p: metric 2 significantly better).
    For "metric 3 better", swap r12 and r13.

    **Assumes independent rows.** Valid at system level or with one row per source segment; on segment rows of
    several systems (rows of one source are correlated) it is anti-conservative: use :func:`paired_bootstrap` /
    :func:`correlation_table`, which resample source segments.
    """
    for name, r in (("r12", r12), ("r13", r13), ("r23", r23)):
        if not -1.0 <= r <= 1.0:
            raise ValueError(f"{name} must be in [-1, 1], got {r}")
    if n <= 3:
        raise ValueError(f"the Williams test needs n > 3, got {n}")
    det = 1 - r12**2 - r13**2 - r23**2 + 2 * r12 * r13 * r23
    den = 2 * det * (n - 1) / (n - 3) + (r12 + r13) ** 2 / 4 * (1 - r23) ** 3
    if den <= 0:
        return (0.0, 0.5) if r12 == r13 else (float(np.sign(r12 - r13) * np.inf), float(r12 < r13))
    t = (r12 - r13) * np.sqrt((n - 1) * (1 + r23)) / np.sqrt(den)
    return float(t), float(_scipy_stats().t.sf(t, n - 3))


def williams_from_scores(human: ArrayLike, metric_a: ArrayLike, metric_b: ArrayLike) -> tuple[float, float]:
    """:func:`williams_test` with r12 = r(human, a), r13 = r(human, b), r23 = r(a, b) (Pearson): is a better?
    Assumes independent rows (see :func:`williams_test`)."""
    h, a = as_pair(human, metric_a, min_n=4, names=("human", "metric_a"))
    _, b = as_pair(human, metric_b, min_n=4, names=("human", "metric_b"))
    return williams_test(pearson(h, a), pearson(h, b), pearson(a, b), len(h))


# ----------------------------------------------------------------------------------------------------------------
# partial correlation
# ----------------------------------------------------------------------------------------------------------------

def partial_correlation(x: ArrayLike, y: ArrayLike, z: ArrayLike, nan_policy: str = "raise") -> float:
    r"""Pearson partial correlation of x and y controlling for z (one column or several, shape (n,) or (n, k)):
    the Pearson r of the least-squares residuals of x and of y on [1, z]. For one control variable this equals
    (r_xy - r_xz r_yz) / \sqrt{(1 - r_xz^2)(1 - r_yz^2)}. ``nan_policy="omit"`` drops rows with a non-finite value
    (default: raise)."""
    xa, ya = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    za = np.asarray(z, dtype=float).reshape(len(xa), -1) if len(xa) else np.zeros((0, 1))
    if len(ya) != len(xa) or len(za) != len(xa):
        raise ValueError(f"x, y, z have {len(xa)}, {len(ya)}, {len(za)} rows")
    keep = np.isfinite(xa) & np.isfinite(ya) & np.isfinite(za).all(axis=1)
    if not keep.all():
        if nan_policy != "omit":
            raise ValueError(f"{int((~keep).sum())} row(s) with non-finite values; pass nan_policy='omit' to drop them")
        xa, ya, za = xa[keep], ya[keep], za[keep]
    if len(xa) < za.shape[1] + 3:
        raise ValueError(f"need at least {za.shape[1] + 3} rows, got {len(xa)}")
    a = np.column_stack([np.ones(len(xa)), za])
    rx = xa - a @ np.linalg.lstsq(a, xa, rcond=None)[0]
    ry = ya - a @ np.linalg.lstsq(a, ya, rcond=None)[0]
    for res, orig in ((rx, xa), (ry, ya)):
        if np.abs(res).max() <= 1e-9 * max(1.0, np.abs(orig).max()):
            return float("nan")  # x or y is fully explained by z (e.g. z = x): no partial correlation
    return pearson(rx, ry)
