"""Meta-evaluation statistics: one protocol, plain functions over numpy arrays (mt-metrics-eval style).

Every function states its exact definition. Conventions: ``metric`` and ``human`` are 1-D arrays of the same
length, one value per scored item (a segment translation, or a system); higher is better for both (negate error
rates and MQM penalties first). Non-finite values are an error, never silently dropped. ``segments`` labels the
source segment of each item (all systems' translations of one source share a label).

* correlations (:func:`correlation`, ``method`` in :data:`METHODS`): ``pearson``, ``spearman``, ``kendall``
  (tau-b) from scipy; ``within`` (:func:`within_segment`: Pearson after centering each source segment, which
  removes source difficulty); ``darr`` (:func:`wmt_darr_tau`: the WMT DARR pair tau within segments);
  :func:`system_level` (mean per system, then correlate);
* WMT segment-level Kendall-like taus over pairs of translations of the same source: :func:`wmt_darr_tau`
  and :func:`wmt12_tau` (relative rankings, WMT12 / Guzman et al. 2014), built on :func:`better_worse_pairs` and
  :func:`concordance_counts`;
* inference, one protocol: every interval and every paired difference comes from a **paired percentile bootstrap
  that resamples source segments** (``segments``; talks/documents as the variant ``clusters=``), all metrics of a
  table on the same resamples: :func:`bootstrap_ci`, :func:`paired_bootstrap`, :func:`correlation_table` (one
  table, the same columns everywhere), :func:`holm`. Pearson and ``within`` are vectorised (resampling weights
  times sufficient statistics, :func:`bootstrap_pearson_samples`), ``darr`` too (per-segment pair counts);
  Spearman and Kendall recompute scipy's statistic on each resample. :func:`fisher_ci` and the Williams test
  (:func:`williams_test`) assume independent rows and are kept for that case only (system level, or one row per
  source segment);
* controls: :func:`placebo` (a random column), :func:`length_controls`, :func:`permute_human` (the
  ``permute_human`` switch: shuffled human scores, under which no "beats" or "correlates" claim may hold);
* verdicts computed from the numbers: :func:`verdict_beats`, :func:`verdict_correlates`, :func:`verdict_sentence`.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable, Mapping, Sequence

import numpy as np
from scipy import stats as _sps

ArrayLike = Sequence[float] | np.ndarray

METHODS = ("pearson", "spearman", "kendall", "within", "darr")
"""The correlation methods of :func:`correlation` and :func:`correlation_table`."""
PLACEBO = "placebo"
"""Row name of the random control column (:func:`placebo`) in :func:`correlation_table`."""
LENGTH = "length"
"""Row name verdicts expect for the length-only control (pass it in ``controls=``, e.g.
``{LENGTH: length_controls(...)["neg_abs_len_diff"]}``)."""


# ----------------------------------------------------------------------------------------------------------------
# input checks
# ----------------------------------------------------------------------------------------------------------------

def _vec(x: ArrayLike, name: str) -> np.ndarray:
    a = np.asarray(x, dtype=float)
    if a.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {a.shape}")
    bad = ~np.isfinite(a)
    if bad.any():
        raise ValueError(f"{name} has {int(bad.sum())} non-finite value(s), first at index {int(np.argmax(bad))}")
    return a


def _pair(x: ArrayLike, y: ArrayLike, min_n: int = 2, names: tuple[str, str] = ("x", "y")) -> tuple[np.ndarray, np.ndarray]:
    a, b = _vec(x, names[0]), _vec(y, names[1])
    if len(a) != len(b):
        raise ValueError(f"{names[0]} has {len(a)} values but {names[1]} has {len(b)}")
    if len(a) < min_n:
        raise ValueError(f"need at least {min_n} paired values, got {len(a)}")
    return a, b


def _labels(labels: Sequence | None, n: int, name: str) -> np.ndarray | None:
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

def _quiet(fn: Callable, a: np.ndarray, b: np.ndarray) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns on constant input and returns NaN: NaN is our answer too
        v = float(fn(a, b)[0])
    return v


def pearson(x: ArrayLike, y: ArrayLike) -> float:
    r"""Pearson's r = \sum (x-\bar x)(y-\bar y) / \sqrt{\sum (x-\bar x)^2 \sum (y-\bar y)^2}
    (``scipy.stats.pearsonr``); NaN if either is constant."""
    a, b = _pair(x, y)
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return float("nan")
    return _quiet(_sps.pearsonr, a, b)


def average_ranks(x: ArrayLike) -> np.ndarray:
    """Ranks 1..n, tied values getting the mean of the ranks they span (``scipy.stats.rankdata``, 'average')."""
    return _sps.rankdata(_vec(x, "x"), method="average").astype(float)


def spearman(x: ArrayLike, y: ArrayLike) -> float:
    """Spearman's rho: Pearson's r of the average ranks (``scipy.stats.spearmanr``); NaN if either is constant."""
    a, b = _pair(x, y)
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return float("nan")
    return _quiet(_sps.spearmanr, a, b)


def kendall_tau_b(x: ArrayLike, y: ArrayLike) -> float:
    r"""Kendall's tau-b = (C - D) / \sqrt{(n_0 - n_1)(n_0 - n_2)} (``scipy.stats.kendalltau(variant="b")``).

    n_0 = n(n-1)/2 pairs, n_1 / n_2 pairs tied in x / y, C / D concordant / discordant pairs (pairs tied in either
    are neither). NaN when x or y is constant."""
    a, b = _pair(x, y)
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return float("nan")
    return _quiet(lambda u, v: _sps.kendalltau(u, v, variant="b"), a, b)


def center_within(values: ArrayLike, segments: Sequence) -> np.ndarray:
    """``values`` minus the mean of its segment (each source segment's scores centred at 0)."""
    v = _vec(values, "values")
    inv = _labels(segments, len(v), "segments")
    means = np.bincount(inv, weights=v) / np.bincount(inv)
    return v - means[inv]


def _multi(segments: Sequence, n: int) -> np.ndarray:
    """Mask of the items whose segment has at least two items (a lone item has nothing to be compared with)."""
    inv = _labels(segments, n, "segments")
    return np.bincount(inv)[inv] >= 2


def within_segment(metric: ArrayLike, human: ArrayLike, segments: Sequence, method: str = "pearson") -> float:
    r"""Within-segment correlation: ``method`` (pearson, spearman or kendall) of the metric and human scores after
    centring each source segment's scores on their segment mean:

        r_within = corr(m_i - \bar m_{s(i)}, h_i - \bar h_{s(i)})

    so only the differences between translations of the same source count (source difficulty, which moves every
    translation of a segment together, is removed). Segments with a single item are left out (centred, they are a
    0 that carries no comparison). With Pearson this is the pooled within-group correlation of an ANOVA layout."""
    m, h = _pair(metric, human, names=("metric", "human"))
    if method not in ("pearson", "spearman", "kendall"):
        raise ValueError(f"within_segment: method must be pearson, spearman or kendall, got {method!r}")
    keep = _multi(segments, len(m))
    if keep.sum() < 3:
        raise ValueError(f"within_segment needs at least 3 items in segments of two or more, got {int(keep.sum())}")
    mc, hc = center_within(m, segments)[keep], center_within(h, segments)[keep]
    return _BASIC[method](mc, hc)


_BASIC: dict[str, Callable[[ArrayLike, ArrayLike], float]] = {
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
    if method in _BASIC:
        return _BASIC[method](x, y)
    if method in ("within", "darr") and segments is None:
        raise ValueError(f"method {method!r} compares translations of the same source: pass segments=")
    if method == "within":
        return within_segment(x, y, segments)
    if method == "darr":
        return wmt_darr_tau(x, y, segments, threshold, metric_ties)
    raise ValueError(f"unknown correlation method {method!r}; use one of {list(METHODS)}")


def system_means(values: ArrayLike, systems: Sequence) -> tuple[np.ndarray, np.ndarray]:
    """(sorted unique system names, mean of ``values`` per system)."""
    v = _vec(values, "values")
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
    m, h = _pair(metric, human, names=("metric", "human"))
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
    h = _vec(human, "human")
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


def concordance_counts(metric: ArrayLike, better: np.ndarray, worse: np.ndarray) -> tuple[int, int, int]:
    """(concordant, discordant, tied) over pairs: metric[better] > metric[worse] / < / ==."""
    m = _vec(metric, "metric")
    mb, mw = m[better], m[worse]
    return int((mb > mw).sum()), int((mb < mw).sum()), int((mb == mw).sum())


def _pair_tau(conc: int, disc: int, ties: int, metric_ties: str) -> float:
    if metric_ties == "discordant":
        disc += ties
    elif metric_ties != "exclude":
        raise ValueError(f"metric_ties must be 'discordant' or 'exclude', got {metric_ties!r}")
    tot = conc + disc
    return (conc - disc) / tot if tot else float("nan")


def wmt_darr_tau(metric: ArrayLike, human_raw: ArrayLike, segment_ids: Sequence, threshold: float = 25.0,
                 metric_ties: str = "discordant") -> float:
    r"""WMT DARR Kendall-like tau (WMT17-20 metrics tasks, segment level).

    Pairs: two translations of the same source (same ``segment_ids``) whose raw DA differs by more than
    ``threshold`` (25) points; the higher one is "better". A pair is concordant if the metric scores the better
    translation strictly higher, discordant otherwise; a metric tie counts as discordant (WMT18-19 findings,
    Table "DARR"; COMET's ``WMTKendall``: ``discordance = pos >= neg``), or is dropped with
    ``metric_ties="exclude"``. tau = (Concordant - Discordant) / (Concordant + Discordant).
    """
    m = _vec(metric, "metric")
    h = _vec(human_raw, "human_raw")
    if len(m) != len(h):
        raise ValueError(f"metric has {len(m)} values but human_raw has {len(h)}")
    b, w = better_worse_pairs(h, segment_ids, threshold)
    return _pair_tau(*concordance_counts(m, b, w), metric_ties)


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
    m = _vec(metric, "metric")
    h = _vec(human, "human")
    if len(m) != len(h):
        raise ValueError(f"metric has {len(m)} values but human has {len(h)}")
    b, w = better_worse_pairs(h, segment_ids, threshold, distinct)
    return _pair_tau(*concordance_counts(m, b, w), "discordant")


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
    half = _sps.norm.ppf(1 - alpha / 2) / np.sqrt(n - 3)
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
    return float(t), float(_sps.t.sf(t, n - 3))


def williams_from_scores(human: ArrayLike, metric_a: ArrayLike, metric_b: ArrayLike) -> tuple[float, float]:
    """:func:`williams_test` with r12 = r(human, a), r13 = r(human, b), r23 = r(a, b) (Pearson): is a better?
    Assumes independent rows (see :func:`williams_test`)."""
    h, a = _pair(human, metric_a, min_n=4, names=("human", "metric_a"))
    _, b = _pair(human, metric_b, min_n=4, names=("human", "metric_b"))
    return williams_test(pearson(h, a), pearson(h, b), pearson(a, b), len(h))


# ----------------------------------------------------------------------------------------------------------------
# bootstrap
# ----------------------------------------------------------------------------------------------------------------

def _group_index(n: int, groups: Sequence | None) -> tuple[np.ndarray, int]:
    if groups is None:
        return np.arange(n), n
    inv = _labels(groups, n, "groups")
    return inv, int(inv.max()) + 1 if n else 0


def _unit_weights(n_units: int, n_resamples: int, seed: int = 0, chunk: int = 100):
    """Yield (B_chunk, n_units) arrays: how often each resampling unit is drawn in each resample (G draws with
    replacement from G units, counted with one bincount per chunk)."""
    rng = np.random.default_rng(seed)
    done = 0
    while done < n_resamples:
        b = min(chunk, n_resamples - done)
        draws = rng.integers(0, n_units, size=(b, n_units)) + (np.arange(b) * n_units)[:, None]
        yield np.bincount(draws.ravel(), minlength=b * n_units).reshape(b, n_units).astype(np.float64)
        done += b


def bootstrap_weights(n_items: int, n_resamples: int, seed: int = 0, groups: Sequence | None = None,
                      chunk: int = 100):
    """Yield (B_chunk, n_items) float arrays: how often each item appears in each bootstrap resample.

    Resampling unit: the item, or the group (e.g. the source segment, so all systems' translations of a drawn
    segment enter together; or the talk) when ``groups`` is given. Each resample draws G units uniformly with
    replacement from the G units, so it has as many units as the data. The same seed and units give the same
    resamples to every call (every metric of a table, and both sides of a paired comparison, see the same ones).
    """
    inv, n_units = _group_index(n_items, groups)
    for w in _unit_weights(n_units, n_resamples, seed, chunk):
        yield w[:, inv]


def bootstrap_pearson_samples(metrics: np.ndarray, human: ArrayLike, n_resamples: int = 1000, seed: int = 0,
                              groups: Sequence | None = None) -> np.ndarray:
    r"""Pearson r of each metric (rows of ``metrics``, shape (k, n)) with ``human`` in each bootstrap resample.

    Vectorised: with resample weights W (B x n), the weighted sums S_x = W x, S_xx = W x^2, S_xy = W (x y), ...
    give r = (N S_xy - S_x S_y) / \sqrt{(N S_xx - S_x^2)(N S_yy - S_y^2)}, N = W 1 — one matrix product per
    chunk of resamples for all k metrics at once. This is an algebraic identity: the Pearson r of the resample
    written out item by item (``tests/test_stats.py`` checks it against ``scipy.stats.pearsonr`` on expanded
    resamples). Returns an array (n_resamples, k); NaN where a resample is constant. Values are centred first
    to keep the sums well conditioned.
    """
    h = _vec(human, "human")
    m = np.atleast_2d(np.asarray(metrics, dtype=float))
    if m.shape[1] != len(h):
        raise ValueError(f"metrics has {m.shape[1]} columns but human has {len(h)} values")
    if not np.isfinite(m).all():
        raise ValueError("metrics has non-finite values")
    h = h - h.mean()
    m = m - m.mean(axis=1, keepdims=True)
    cols = np.column_stack([np.ones_like(h), h, h * h, m.T, (m * m).T, (m * h).T])  # (n, 3 + 3k)
    k = m.shape[0]
    out = []
    for w in bootstrap_weights(len(h), n_resamples, seed, groups):
        out.append(_r_from_sums(w @ cols, k))
    return np.clip(np.concatenate(out), -1.0, 1.0)


def _r_from_sums(s: np.ndarray, k: int) -> np.ndarray:
    """Pearson r of k metrics from weighted sums ``[N, S_y, S_yy, S_x (k), S_xx (k), S_xy (k)]`` per resample.
    A resample in which a variable is constant (its variance at rounding level, e.g. one segment drawn every
    time) gives NaN, never a ratio of rounding errors."""
    n_, sy, syy = s[:, :1], s[:, 1:2], s[:, 2:3]
    sx, sxx, sxy = s[:, 3:3 + k], s[:, 3 + k:3 + 2 * k], s[:, 3 + 2 * k:]
    vx, vy = n_ * sxx - sx**2, n_ * syy - sy**2
    flat = (vx <= 1e-10 * n_ * sxx) | (vy <= 1e-10 * n_ * syy)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (n_ * sxy - sx * sy) / np.sqrt(np.where(flat, 1.0, vx * vy))
    return np.where(flat, np.nan, r)


def _resample_stat(statistic: Callable[[np.ndarray, np.ndarray], float], x: np.ndarray, y: np.ndarray,
                   n_resamples: int, seed: int, groups: Sequence | None) -> np.ndarray:
    """Any statistic, one resample at a time (the same resamples as the vectorised path)."""
    from tqdm.auto import tqdm

    vals = []
    with tqdm(total=n_resamples, desc="bootstrap", leave=False, disable=n_resamples < 200) as bar:
        for w in bootstrap_weights(len(x), n_resamples, seed, groups):
            for row in w:
                idx = np.repeat(np.arange(len(x)), row.astype(int))
                vals.append(statistic(x[idx], y[idx]))
            bar.update(len(w))
    return np.asarray(vals, dtype=float)


def _units(n: int, method: str, segments: np.ndarray | None, clusters: Sequence | None) -> np.ndarray:
    """The resampling unit of each item: ``clusters`` if given, else the segment, else the item itself. For the
    within-segment methods every segment must lie inside one cluster (a resample then draws whole segments)."""
    c = _labels(clusters, n, "clusters")
    if c is None:
        return segments if segments is not None else np.arange(n)
    if method in ("within", "darr") and segments is not None:
        per_seg = np.zeros(int(segments.max()) + 1, dtype=np.int64) - 1
        per_seg[segments] = c
        if (per_seg[segments] != c).any():
            raise ValueError("clusters must hold whole segments (every segment inside one cluster) for method "
                             f"{method!r}")
    return c


def _darr_samples(mat: np.ndarray, h: np.ndarray, segments: np.ndarray, units: np.ndarray, n_resamples: int,
                  seed: int, threshold: float, metric_ties: str) -> np.ndarray:
    """The DARR pair tau of every row of ``mat`` in each resample, vectorised: pair counts summed per unit,
    then weighted by how often the unit is drawn (a drawn segment brings all its pairs)."""
    if metric_ties not in ("discordant", "exclude"):
        raise ValueError(f"metric_ties must be 'discordant' or 'exclude', got {metric_ties!r}")
    b, w = better_worse_pairs(h, segments, threshold)
    n_units = int(units.max()) + 1
    pu = units[b]
    diff = mat[:, b] - mat[:, w]
    conc = np.stack([np.bincount(pu, weights=(d > 0).astype(float), minlength=n_units) for d in diff])
    disc_w = (diff < 0) | ((diff == 0) & (metric_ties == "discordant"))
    disc = np.stack([np.bincount(pu, weights=d.astype(float), minlength=n_units) for d in disc_w])
    out = []
    for wu in _unit_weights(n_units, n_resamples, seed):
        c, d = wu @ conc.T, wu @ disc.T
        with np.errstate(invalid="ignore", divide="ignore"):
            out.append(np.where(c + d > 0, (c - d) / (c + d), np.nan))
    return np.concatenate(out) if out else np.empty((0, len(mat)))


def _boot_matrix(mat: np.ndarray, h: np.ndarray, method: str | Callable, segments: Sequence | None,
                 clusters: Sequence | None, n_resamples: int, seed: int, threshold: float = 0.0,
                 metric_ties: str = "discordant") -> tuple[np.ndarray, int]:
    """(samples (B, k), number of resampling units): ``method`` of each row of ``mat`` with ``h`` on the same
    resamples of units (clusters, else segments, else items)."""
    n = len(h)
    seg = _labels(segments, n, "segments")
    if callable(method):
        units = _units(n, "pearson", seg, clusters)
        return (np.column_stack([_resample_stat(method, row, h, n_resamples, seed, units) for row in mat]),
                int(units.max()) + 1)
    if method not in METHODS:
        raise ValueError(f"unknown correlation method {method!r}; use one of {list(METHODS)}")
    if method in ("within", "darr") and seg is None:
        raise ValueError(f"method {method!r} compares translations of the same source: pass segments=")
    units = _units(n, method, seg, clusters)
    n_units = int(units.max()) + 1
    if method == "pearson":
        return bootstrap_pearson_samples(mat, h, n_resamples, seed, units), n_units
    if method == "within":
        keep = _multi(seg, n)
        mc = np.vstack([center_within(row, seg) for row in mat])[:, keep]
        # the units of the kept items, relabelled densely but drawn as the full set of units would be
        return _weighted_pearson(mc, center_within(h, seg)[keep], units[keep], n_units, n_resamples, seed), n_units
    if method == "darr":
        return _darr_samples(mat, h, seg, units, n_resamples, seed, threshold, metric_ties), n_units
    fn = _BASIC[method]
    return np.column_stack([_resample_stat(fn, row, h, n_resamples, seed, units) for row in mat]), n_units


def _weighted_pearson(m: np.ndarray, h: np.ndarray, units: np.ndarray, n_units: int, n_resamples: int,
                      seed: int) -> np.ndarray:
    """:func:`bootstrap_pearson_samples` for items that are a subset of the units' items: the unit draws are the
    ones of all ``n_units`` units (so they match the other methods' resamples), mapped to the items present."""
    hc = h - h.mean()
    mm = m - m.mean(axis=1, keepdims=True)
    cols = np.column_stack([np.ones_like(hc), hc, hc * hc, mm.T, (mm * mm).T, (mm * hc).T])
    # per-unit sums, then weighted by the unit draws: W_items @ cols == W_units @ (per-unit sums of cols)
    per_unit = np.zeros((n_units, cols.shape[1]))
    np.add.at(per_unit, units, cols)
    k = m.shape[0]
    out = []
    for wu in _unit_weights(n_units, n_resamples, seed):
        out.append(_r_from_sums(wu @ per_unit, k))
    return np.clip(np.concatenate(out), -1.0, 1.0)


@dataclass(frozen=True)
class BootstrapResult:
    """A statistic, its percentile bootstrap interval and the resampled values."""

    estimate: float
    low: float
    high: float
    samples: np.ndarray


def percentile_ci(samples: np.ndarray, alpha: float = 0.05, axis: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval (q_{alpha/2}, q_{1-alpha/2}) of bootstrap samples along ``axis`` (NaNs ignored)."""
    s = np.asarray(samples, dtype=float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN column gives NaN bounds
        lo, hi = np.nanquantile(s, [alpha / 2, 1 - alpha / 2], axis=axis)
    return lo, hi


def _estimate(row: np.ndarray, h: np.ndarray, method: str | Callable, segments, threshold: float,
              metric_ties: str) -> float:
    if callable(method):
        return float(method(row, h))
    return correlation(row, h, method, segments, threshold=threshold, metric_ties=metric_ties)


def _method_arg(method: str | Callable, statistic: str | Callable | None) -> str | Callable:
    return method if statistic is None else statistic


def bootstrap_ci(metric: ArrayLike, human: ArrayLike, method: str | Callable = "pearson",
                 segments: Sequence | None = None, clusters: Sequence | None = None, n_resamples: int = 1000,
                 alpha: float = 0.05, seed: int = 0, *, groups: Sequence | None = None,
                 threshold: float = 0.0, metric_ties: str = "discordant",
                 statistic: str | Callable | None = None) -> BootstrapResult:
    """Percentile bootstrap interval [q_{alpha/2}, q_{1-alpha/2}] of ``correlation(metric, human, method,
    segments)`` over resamples of source segments (``segments``; whole ``clusters`` such as talks when given;
    single items when neither is given, i.e. rows assumed independent). ``method`` in :data:`METHODS` or a
    callable ``f(metric, human) -> float`` (one resample at a time). ``groups`` is the former name of
    ``clusters`` and ``statistic`` of ``method``."""
    method = _method_arg(method, statistic)
    clusters = clusters if clusters is not None else groups
    m, h = _pair(metric, human, min_n=3, names=("metric", "human"))
    s = _boot_matrix(m[None, :], h, method, segments, clusters, n_resamples, seed, threshold, metric_ties)[0][:, 0]
    lo, hi = percentile_ci(s, alpha)
    return BootstrapResult(_estimate(m, h, method, segments, threshold, metric_ties), float(lo), float(hi), s)


def _p_one_sided(d: np.ndarray) -> tuple[float, float]:
    """(p_better, p_worse) of resampled differences a - b: the shares of resamples with d <= 0 and d >= 0."""
    ok = np.isfinite(d)
    if not ok.any():
        return float("nan"), float("nan")
    return float((d[ok] <= 0).mean()), float((d[ok] >= 0).mean())


def _p_two_sided(p_better: float, p_worse: float) -> float:
    return float(min(1.0, 2 * min(p_better, p_worse))) if np.isfinite(p_better) else float("nan")


@dataclass(frozen=True)
class PairedBootstrapResult:
    """Two metrics' statistic on the same resamples: each one's interval, the difference a - b with its interval,
    ``p_better`` = one-sided bootstrap p for "a is better than b" (the share of resamples with
    stat(a) - stat(b) <= 0), ``p_worse`` the same for "b is better" (share with the difference >= 0) and
    ``p_two_sided`` = min(1, 2 min(p_better, p_worse))."""

    a: BootstrapResult
    b: BootstrapResult
    delta: BootstrapResult
    p_better: float
    p_worse: float
    p_two_sided: float

    @property
    def p_value(self) -> float:
        """Former name of :attr:`p_better`."""
        return self.p_better


def paired_bootstrap(metric_a: ArrayLike, metric_b: ArrayLike, human: ArrayLike,
                     method: str | Callable = "pearson", segments: Sequence | None = None,
                     clusters: Sequence | None = None, n_resamples: int = 1000, alpha: float = 0.05,
                     seed: int = 0, *, groups: Sequence | None = None, threshold: float = 0.0,
                     metric_ties: str = "discordant", statistic: str | Callable | None = None
                     ) -> PairedBootstrapResult:
    """Paired bootstrap (Koehn 2004 style, applied to a correlation): both metrics are scored on the same
    resamples of source segments (whole ``clusters`` when given; items when neither is given), so the interval of
    the difference accounts for their correlation. See :class:`PairedBootstrapResult` for the p-values.
    ``groups`` / ``statistic``: former names of ``clusters`` / ``method``."""
    method = _method_arg(method, statistic)
    clusters = clusters if clusters is not None else groups
    a, h = _pair(metric_a, human, min_n=3, names=("metric_a", "human"))
    b, _ = _pair(metric_b, human, min_n=3, names=("metric_b", "human"))
    s = _boot_matrix(np.vstack([a, b]), h, method, segments, clusters, n_resamples, seed, threshold, metric_ties)[0]
    d = s[:, 0] - s[:, 1]

    def res(est: float, smp: np.ndarray) -> BootstrapResult:
        lo, hi = percentile_ci(smp, alpha)
        return BootstrapResult(float(est), float(lo), float(hi), smp)

    ea = _estimate(a, h, method, segments, threshold, metric_ties)
    eb = _estimate(b, h, method, segments, threshold, metric_ties)
    pb, pw = _p_one_sided(d)
    return PairedBootstrapResult(res(ea, s[:, 0]), res(eb, s[:, 1]), res(ea - eb, d), pb, pw, _p_two_sided(pb, pw))


def holm(pvalues: ArrayLike) -> np.ndarray:
    """Holm-Bonferroni adjusted p-values (Holm 1979), in the input order. With the m finite p-values sorted
    ascending, p_(1) <= ... <= p_(m): adj_(i) = max_{j <= i} min(1, (m - j + 1) p_(j)). Rejecting where
    adj < alpha controls the family-wise error rate at alpha. NaN entries (no test) stay NaN and do not count
    in m."""
    p = np.asarray(pvalues, dtype=float).reshape(-1)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(np.isfinite(p))
    if (p[ok] < 0).any() or (p[ok] > 1).any():
        raise ValueError("p-values must lie in [0, 1]")
    m = len(ok)
    if m:
        order = ok[np.argsort(p[ok], kind="stable")]
        adj = np.minimum(1.0, (m - np.arange(m)) * p[order])
        out[order] = np.maximum.accumulate(adj)
    return out


_holm_adjust = holm  # correlation_table's argument ``holm`` shadows the function's name there


# ----------------------------------------------------------------------------------------------------------------
# controls
# ----------------------------------------------------------------------------------------------------------------

def placebo(n: int, seed: int = 0) -> np.ndarray:
    """A placebo metric: ``n`` independent standard normal numbers (seeded; a stream of its own, so it is not
    tied to the bootstrap resamples drawn with the same ``seed``). A component that "helps" must beat it."""
    if int(n) < 1:
        raise ValueError(f"placebo needs n >= 1, got {n}")
    return np.random.default_rng(np.random.SeedSequence([int(seed), 0x706C6163])).standard_normal(int(n))


def permute_human(values: ArrayLike, seed: int | None, segments: Sequence | None = None) -> np.ndarray:
    """The ``permute_human`` switch: ``seed=None`` returns the scores unchanged (a copy); an integer shuffles them
    with that seed, across all rows (segment-level scores across all rows; pass system-level scores to shuffle
    them across systems). With ``segments``, the variant: shuffled within each source segment only (keeps each
    segment's mean, so source difficulty survives and only within-segment agreement is destroyed). A metric
    "beats" nothing and "correlates" with nothing on permuted scores; verdicts must then not come out "holds"."""
    v = np.array(_vec(values, "values"))
    if seed is None:
        return v
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), 0x7065726D]))
    if segments is None:
        return v[rng.permutation(len(v))]
    inv = _labels(segments, len(v), "segments")
    out = v.copy()
    order = np.argsort(inv, kind="stable")
    for grp in np.split(order, np.flatnonzero(np.diff(inv[order])) + 1):
        out[grp] = v[grp[rng.permutation(len(grp))]]
    return out


def length_controls(hyp_len: ArrayLike, ref_lens: Sequence[Sequence[float]] | ArrayLike) -> dict[str, np.ndarray]:
    """Length-only control "metrics", so a correlation can be read against what length alone explains.

    ``hyp_len[i]``: hypothesis length in tokens; ``ref_lens[i]``: the lengths of segment i's references (or one
    number per segment). With r_i the reference length closest to the hypothesis length (ties: the shorter, as
    in BLEU's brevity penalty):

    * ``neg_abs_len_diff`` = -|c_i - r_i| (higher = closer in length, so it is oriented like a quality metric);
    * ``len_ratio`` = c_i / r_i (as is; values above 1 mean a longer hypothesis).
    """
    c = _vec(hyp_len, "hyp_len")
    flat = (isinstance(ref_lens, np.ndarray) and ref_lens.ndim == 1) or (len(ref_lens) > 0 and np.isscalar(ref_lens[0]))
    if flat:
        rl = [[float(r)] for r in ref_lens]
    else:
        rl = [[float(x) for x in rs] for rs in ref_lens]
    if len(rl) != len(c):
        raise ValueError(f"hyp_len has {len(c)} values but ref_lens has {len(rl)}")
    closest = np.empty(len(c))
    for i, (ci, rs) in enumerate(zip(c, rl)):
        if not rs or min(rs) <= 0:
            raise ValueError(f"segment {i} has no reference or a reference of length 0")
        closest[i] = min(rs, key=lambda r: (abs(r - ci), r))
    return {"neg_abs_len_diff": -np.abs(c - closest), "len_ratio": c / closest}




# ----------------------------------------------------------------------------------------------------------------
# the correlation table
# ----------------------------------------------------------------------------------------------------------------

def metric_name(name: str | tuple, depth: int | None = None) -> str:
    """The one row-name scheme of the tables: ``("STM", 4)`` or ``("STM", 4)`` as a tuple -> ``"STM-4"``,
    ``("TKM", None)`` -> ``"TKM"``; a string without ``depth`` is returned as is. It agrees with
    :func:`syneval_nb.metrics.canonical_name` for registered metrics and also takes any other name (controls,
    learned metrics)."""
    if isinstance(name, tuple):
        if len(name) != 2 or depth is not None:
            raise ValueError(f"a metric key is a (name, depth) pair, got {name!r}")
        name, depth = name
    if not isinstance(name, str) or not name:
        raise ValueError(f"a metric name must be a non-empty string, got {name!r}")
    return name if depth is None else f"{name}-{int(depth)}"


def depth_baselines(keys: Sequence, baseline: str = "BLEU", default_depth: int = 4) -> dict[str, str]:
    """``{row name: baseline row name}`` comparing each depth metric with ``baseline`` at the same depth
    (``("STM", 3)`` -> ``"BLEU-3"``) when that row exists among ``keys``, otherwise (rows without a depth, or a
    depth the baseline lacks) with ``baseline`` at ``default_depth``; the baseline's own rows are left out.
    Pass it as ``correlation_table(..., baseline=depth_baselines(scores))``."""
    names = {metric_name(k): k for k in keys}
    out = {}
    for name, k in names.items():
        fam, depth = (k if isinstance(k, tuple) else (k, None))
        if fam == baseline:
            continue
        same = metric_name(baseline, depth) if depth is not None else None
        out[name] = same if same in names else metric_name(baseline, default_depth)
    return out


@dataclass(frozen=True, eq=False)
class TableBootstrap:
    """What a :func:`correlation_table` was computed from, kept in ``table.attrs["bootstrap"]`` so that verdicts
    can compare any two rows on the same resamples: row ``names``, ``estimates``, ``samples`` (n_resamples x rows),
    the ``baselines`` used ({row: baseline row}), ``p_better_holm`` ({row: adjusted p}), ``alpha``, ``method``,
    ``unit`` (what was resampled) and ``n_clusters``."""

    names: tuple[str, ...]
    estimates: np.ndarray
    samples: np.ndarray
    baselines: dict = field(default_factory=dict)
    p_better_holm: dict = field(default_factory=dict)
    alpha: float = 0.05
    method: str = "pearson"
    unit: str = "item"
    n_clusters: int = 0
    holm: bool = True

    def index(self, name: str | tuple) -> int:
        key = metric_name(name)
        if key not in self.names:
            raise KeyError(f"no row {key!r} in the table; rows: {', '.join(self.names)}")
        return self.names.index(key)

    def estimate(self, name: str | tuple) -> float:
        return float(self.estimates[self.index(name)])

    def column(self, name: str | tuple) -> np.ndarray:
        return self.samples[:, self.index(name)]


TABLE_COLUMNS = ("metric", "method", "r", "low", "high", "n", "n_clusters", "baseline", "delta", "delta_low",
                 "delta_high", "p_better", "p_worse", "p_better_holm", "p_worse_holm", "mark")
"""The columns of :func:`correlation_table`, in order (``williams=True`` adds ``williams_t, williams_p``)."""


def correlation_table(scores: Mapping[Any, ArrayLike], human: ArrayLike, segments: Sequence | None = None, *,
                      baseline: str | tuple | Mapping | None = None, method: str = "pearson",
                      clusters: Sequence | None = None, controls: Mapping[str, ArrayLike] | None = None,
                      placebo_column: bool = True, n_resamples: int = 1000, seed: int = 0, alpha: float = 0.05,
                      holm: bool = True, threshold: float = 0.0, metric_ties: str = "discordant",
                      williams: bool = False):
    """The one correlation table: one row per metric (then per control), all on the same bootstrap resamples.

    ``scores``: ``{name or (name, depth): values}`` (rows named by :func:`metric_name`, e.g. ``"STM-4"``);
    ``human``: the human scores; ``segments``: the source segment of each row (resampled as units, all systems'
    rows of a drawn segment together; ``None``: rows are independent units, e.g. systems at system level);
    ``clusters``: resample these instead (talks/documents; for ``within``/``darr`` each must hold whole
    segments). ``method`` in :data:`METHODS` (``threshold``/``metric_ties`` for ``darr``). ``controls``: extra
    rows (e.g. ``{"length": ...}``, see :data:`LENGTH`); ``placebo_column`` adds :func:`placebo` as the row
    :data:`PLACEBO` (seeded with ``seed``). ``baseline``: a row name (or key) every other row is compared with,
    a mapping ``{row: baseline row}`` (see :func:`depth_baselines`), or ``None`` (no comparisons).

    Columns (:data:`TABLE_COLUMNS`): ``metric``; ``method``; ``r`` the statistic on all rows; ``low, high`` its
    percentile interval at level 1 - ``alpha``; ``n`` rows; ``n_clusters`` resampling units; ``baseline`` the
    row compared with (``""`` when none); ``delta`` = r(metric) - r(baseline); ``delta_low, delta_high`` the
    percentile interval of the difference on the same resamples; ``p_better`` the one-sided bootstrap p that the
    row's metric beats the baseline (share of resamples with a difference <= 0), ``p_worse`` that the baseline
    beats it (share >= 0); ``p_better_holm, p_worse_holm`` the same adjusted by :func:`holm` over every compared
    row of the table (``holm=False``: unadjusted); ``mark`` ``"+"`` if ``p_better_holm < alpha``, ``"-"`` if
    ``p_worse_holm < alpha``, else ``""``. ``williams=True`` adds ``williams_t, williams_p`` (:func:`williams_test`
    of row > baseline, Pearson only, n = rows: valid only when rows are independent, i.e. system level or one row
    per segment). ``attrs["bootstrap"]``: the :class:`TableBootstrap` (for :func:`verdict_beats`).
    """
    import pandas as pd

    h = _vec(human, "human")
    rows: dict[str, np.ndarray] = {}
    for k, v in scores.items():
        name = metric_name(k)
        if name in rows:
            raise ValueError(f"two scores are named {name!r}")
        rows[name] = _pair(v, h, min_n=4, names=(name, "human"))[0]
    for name, v in (controls or {}).items():
        if name in rows:
            raise ValueError(f"control {name!r} has the name of a metric")
        rows[name] = _pair(v, h, min_n=4, names=(name, "human"))[0]
    if placebo_column:
        if PLACEBO in rows:
            raise ValueError(f"a score is named {PLACEBO!r}; pass placebo_column=False to use your own")
        rows[PLACEBO] = placebo(len(h), seed)
    names = list(rows)
    if isinstance(baseline, Mapping):
        base = {metric_name(a): metric_name(b) for a, b in baseline.items()}
    elif baseline is None:
        base = {}
    else:
        b = metric_name(baseline)
        base = {nm: b for nm in names if nm != b}
    missing = sorted({b for b in base.values() if b not in rows} | {a for a in base if a not in rows})
    if missing:
        raise ValueError(f"baseline rows {missing} are not in the table; rows: {', '.join(names)}")
    mat = np.vstack([rows[nm] for nm in names])
    est = np.array([_estimate(row, h, method, segments, threshold, metric_ties) for row in mat])
    samples, n_units = _boot_matrix(mat, h, method, segments, clusters, n_resamples, seed, threshold, metric_ties)
    lo, hi = percentile_ci(samples, alpha)
    out = pd.DataFrame({"metric": names, "method": method if isinstance(method, str) else "custom", "r": est,
                        "low": lo, "high": hi, "n": len(h), "n_clusters": n_units,
                        "baseline": [base.get(nm, "") for nm in names]})
    delta, dlo, dhi, pb, pw = (np.full(len(names), np.nan) for _ in range(5))
    for i, nm in enumerate(names):
        if nm in base and base[nm] != nm:
            j = names.index(base[nm])
            d = samples[:, i] - samples[:, j]
            delta[i] = est[i] - est[j]
            dlo[i], dhi[i] = percentile_ci(d, alpha)
            pb[i], pw[i] = _p_one_sided(d)
    pbh, pwh = (_holm_adjust(pb), _holm_adjust(pw)) if holm else (pb.copy(), pw.copy())
    out["delta"], out["delta_low"], out["delta_high"] = delta, dlo, dhi
    out["p_better"], out["p_worse"], out["p_better_holm"], out["p_worse_holm"] = pb, pw, pbh, pwh
    out["mark"] = np.where(pbh < alpha, "+", np.where(pwh < alpha, "-", ""))
    if williams:
        if method != "pearson":
            raise ValueError("the Williams test is defined for Pearson's r; use method='pearson'")
        wt, wp = np.full(len(names), np.nan), np.full(len(names), np.nan)
        for i, nm in enumerate(names):
            if nm in base and base[nm] != nm:
                j = names.index(base[nm])
                r23 = pearson(mat[i], mat[j])
                if np.isfinite(est[i]) and np.isfinite(est[j]) and np.isfinite(r23):
                    wt[i], wp[i] = williams_test(est[i], est[j], r23, len(h))
        out["williams_t"], out["williams_p"] = wt, wp
    unit = "cluster" if clusters is not None else "segment" if segments is not None else "item"
    out.attrs["bootstrap"] = TableBootstrap(tuple(names), est, samples, base,
                                            {nm: float(pbh[i]) for i, nm in enumerate(names)}, alpha,
                                            out["method"].iloc[0], unit, n_units, holm)
    return out


def correlation_tables(scores: Mapping[Any, ArrayLike], humans: Mapping[str, ArrayLike], segments=None, **kwargs):
    """:func:`correlation_table` of the same ``scores`` against each human score of ``humans`` (name -> scores),
    stacked, with the name in a first column ``human`` (e.g. MQM and rater-normalized MQM, or Fluency and
    Accuracy). ``attrs["bootstrap"]`` maps each human score's name to its :class:`TableBootstrap`."""
    import pandas as pd

    tables, boots = [], {}
    for name, human in humans.items():
        t = correlation_table(scores, human, segments, **kwargs)
        boots[name] = t.attrs.pop("bootstrap")
        t.insert(0, "human", name)
        tables.append(t)
    out = pd.concat(tables, ignore_index=True)
    out.attrs["bootstrap"] = boots
    return out


def table_row(table, metric: str | tuple, depth: int | None = None, **match):
    """The one row of a correlation table (:func:`correlation_table`, :func:`correlation_tables`) for ``metric``
    (a row name such as ``"STM-4"``, a ``(name, depth)`` key, or a name with ``depth``), among the rows whose
    other columns equal ``match`` (e.g. ``human="MQM z"``). Raises ``KeyError`` unless exactly one row matches."""
    name = metric_name(metric, depth)
    sel = np.array(table["metric"] == name, dtype=bool)  # a writable copy (pandas hands out read-only views)
    for col, value in match.items():
        sel &= np.array(table[col] == value, dtype=bool)
    if sel.sum() != 1:
        raise KeyError(f"{int(sel.sum())} rows for metric={name!r}, {match}")
    return table[sel].iloc[0]


# ----------------------------------------------------------------------------------------------------------------
# verdicts computed from the numbers
# ----------------------------------------------------------------------------------------------------------------

def _boot_of(table_or_results, human: str | None) -> TableBootstrap:
    b = table_or_results if isinstance(table_or_results, TableBootstrap) else \
        getattr(table_or_results, "attrs", {}).get("bootstrap")
    if isinstance(b, dict):
        if human is None:
            raise ValueError(f"a stacked table: pass human= (one of {list(b)})")
        if human not in b:
            raise KeyError(f"no human score {human!r}; the table has {list(b)}")
        b = b[human]
    if not isinstance(b, TableBootstrap):
        raise TypeError("verdicts need a table from stats.correlation_table/correlation_tables (its "
                        "attrs['bootstrap']) or a TableBootstrap; this object has none")
    return b


def _ci(d: np.ndarray, alpha: float) -> list[float]:
    lo, hi = percentile_ci(d, alpha)
    return [float(lo), float(hi)]


def _unit_text(b: TableBootstrap) -> str:
    return {"cluster": "clusters", "segment": "source segments", "item": "rows"}.get(b.unit, b.unit)


def _control_deltas(b, i: int, m: str, controls: Sequence[str], alpha: float) -> dict:
    """``{control: {"delta", "ci"}}``: the row ``i`` (metric ``m``) minus each control row on the same resamples."""
    return {c: {"delta": float(b.estimates[i] - b.estimate(c)), "ci": _ci(b.samples[:, i] - b.column(c), alpha)}
            for c in controls if c != m}


def _three_way(ci: Sequence[float], ctl: Mapping, significant: bool = True) -> str:
    """The verdict rule shared by :func:`verdict_beats` and :func:`verdict_correlates`: holds iff the interval is
    above 0, ``significant`` and every control is beaten with an interval above 0; does not hold iff the interval
    is below 0 or a control is better with an interval below 0; else cannot tell."""
    if ci[0] > 0 and significant and all(v["ci"][0] > 0 for v in ctl.values()):
        return "holds"
    if ci[1] < 0 or any(v["ci"][1] < 0 for v in ctl.values()):
        return "does not hold"
    return "cannot tell"


def verdict_beats(table_or_results, metric: str | tuple, baseline: str | tuple, *,
                  controls: Sequence[str] = (PLACEBO, LENGTH), alpha: float | None = None, human: str | None = None,
                  rule_text: str | None = None) -> dict:
    """Verdict on the claim "``metric`` beats ``baseline``", from a :func:`correlation_table` (its resamples).

    Rule: **holds** iff r(metric) - r(baseline) has a percentile interval (level 1 - alpha, paired bootstrap over
    the table's units) above 0 **and** a one-sided p (Holm-adjusted over the table's comparisons when the table
    compared this metric with this baseline; otherwise the single comparison's bootstrap p) below alpha, **and**
    the metric beats every control row (``controls``, e.g. the placebo and the length-only control) with an
    interval above 0. **does not hold** iff the baseline or a control is better than the metric with an interval
    below 0. Otherwise **cannot tell**. A control missing from the table is an error (a verdict must not
    silently skip its controls; pass ``controls=()`` to state that there are none).

    Returns ``{"verdict", "statistic" (the difference), "ci" [low, high], "p", "rule", "controls": {control:
    {"delta", "ci"}}, "n_resamples"}`` (JSON-ready).
    """
    b = _boot_of(table_or_results, human)
    a = alpha if alpha is not None else b.alpha
    m, base = metric_name(metric), metric_name(baseline)
    i, j = b.index(m), b.index(base)
    missing = [c for c in controls if c not in b.names]
    if missing:
        raise KeyError(f"control rows {missing} are not in the table (rows: {', '.join(b.names)}); add them with "
                       f"correlation_table(controls=...) or pass controls=() to judge without controls")
    d = b.samples[:, i] - b.samples[:, j]
    ci = _ci(d, a)
    if b.baselines.get(m) == base:
        p, p_kind = b.p_better_holm[m], "Holm-adjusted over the table's comparisons" if b.holm else "unadjusted"
    else:
        p, p_kind = _p_one_sided(d)[0], "one comparison"
    ctl = _control_deltas(b, i, m, controls, a)
    verdict = _three_way(ci, ctl, p < a)
    rule = (f"holds iff {b.method} r({m}) - r({base}) has a {1 - a:.0%} paired-bootstrap interval (resampling "
            f"{_unit_text(b)}, {len(d)} resamples) above 0 and a one-sided p < {a:g} ({p_kind})"
            + (f", and {m} beats each control ({', '.join(ctl)}) with an interval above 0" if ctl else "")
            + f"; does not hold iff {base}" + (" or a control" if ctl else "")
            + " is better with an interval below 0; otherwise cannot tell")
    if rule_text:
        rule = f"{rule_text} ({rule})"
    return {"verdict": verdict, "statistic": float(b.estimates[i] - b.estimates[j]), "ci": ci, "p": float(p),
            "rule": rule, "controls": ctl, "n_resamples": len(d),
            "reason": _beats_reason(m, base, ci, float(p), a, ctl)}


def _beats_reason(m: str, base: str, ci: Sequence[float], p: float, alpha: float, ctl: Mapping) -> str:
    """Which condition of :func:`verdict_beats`' rule decided, in words (so a reader sees, e.g., that a metric
    beats the baseline but not the length-only control)."""
    better = [c for c, v in ctl.items() if v["ci"][1] < 0]
    not_beaten = [c for c, v in ctl.items() if v["ci"][0] <= 0 and c not in better]
    if ci[1] < 0:
        vs = f"{base} is better than {m}"
    elif ci[0] > 0 and p < alpha:
        vs = f"{m} beats {base}"
    elif ci[0] > 0:
        vs = f"{m} is ahead of {base} but p = {p:.2g} is not below {alpha:g}"
    else:
        vs = f"the interval of {m} - {base} includes 0"
    parts = [vs]
    if better:
        parts.append(f"{' and '.join(better)} {'is' if len(better) == 1 else 'are'} better than {m}")
    if not_beaten:
        parts.append(f"{m} does not beat {' or '.join(not_beaten)} with an interval above 0")
    if not better and not not_beaten and ctl:
        parts.append(f"{m} beats every control ({', '.join(ctl)})")
    return "; ".join(parts)


def verdict_correlates(table_or_results, metric: str | tuple, *, controls: Sequence[str] = (PLACEBO,),
                       alpha: float | None = None, human: str | None = None, rule_text: str | None = None) -> dict:
    """Verdict on the claim "``metric`` correlates with the human scores", from a :func:`correlation_table`.

    Rule: **holds** iff r(metric) has a percentile interval (level 1 - alpha, bootstrap over the table's units)
    above 0 and the metric beats every control row (default: the placebo) with an interval above 0 (on the same
    resamples). **does not hold** iff the interval of r lies below 0 or a control is better with an interval
    below 0. Otherwise **cannot tell**. ``p`` is the one-sided bootstrap p (share of resamples with r <= 0).
    Returns the dict of :func:`verdict_beats` with ``statistic`` = r."""
    b = _boot_of(table_or_results, human)
    a = alpha if alpha is not None else b.alpha
    m = metric_name(metric)
    i = b.index(m)
    missing = [c for c in controls if c not in b.names]
    if missing:
        raise KeyError(f"control rows {missing} are not in the table (rows: {', '.join(b.names)})")
    s = b.samples[:, i]
    ci = _ci(s, a)
    ok = np.isfinite(s)
    p = float((s[ok] <= 0).mean()) if ok.any() else float("nan")
    ctl = _control_deltas(b, i, m, controls, a)
    verdict = _three_way(ci, ctl)
    rule = (f"holds iff {b.method} r({m}) has a {1 - a:.0%} bootstrap interval (resampling {_unit_text(b)}, "
            f"{len(s)} resamples) above 0"
            + (f" and {m} beats each control ({', '.join(ctl)}) with an interval above 0" if ctl else "")
            + "; does not hold iff the interval lies below 0" + (" or a control is better" if ctl else "")
            + "; otherwise cannot tell")
    if rule_text:
        rule = f"{rule_text} ({rule})"
    return {"verdict": verdict, "statistic": float(b.estimates[i]), "ci": ci, "p": p, "rule": rule,
            "controls": ctl, "n_resamples": len(s)}


def verdict_sentence(claim: str, verdict: Mapping, digits: int = 3) -> str:
    """One sentence stating a verdict with its numbers, e.g. ``'"STM-4 beats BLEU-4": does not hold
    (statistic -0.012, 95% interval [-0.020, -0.004], p = 0.99).'`` The interval level is not in the verdict
    dict, so the sentence says "interval" and the rule (appended) says the level."""
    lo, hi = verdict["ci"]
    f = f"{{:+.{digits}f}}"
    p, b = verdict["p"], verdict.get("n_resamples")
    ptxt = f"p < {1 / b:.2g}" if p == 0 and b else f"p = {p:.2g}"  # no resample at or below 0: p < 1/B
    text = (f'"{claim}": {verdict["verdict"]} (statistic {f.format(verdict["statistic"])}, interval '
            f'[{f.format(lo)}, {f.format(hi)}], {ptxt}).')
    ctl = verdict.get("controls") or {}
    if ctl:
        text += " Against the controls: " + "; ".join(
            f"{c} {f.format(v['delta'])} [{f.format(v['ci'][0])}, {f.format(v['ci'][1])}]" for c, v in ctl.items()) + "."
    if verdict.get("reason"):
        text += f" Why: {verdict['reason']}."
    return text + f" Rule: {verdict['rule']}."


def rank_gap(a: ArrayLike, b: ArrayLike, eligible: ArrayLike | None = None,
             tiebreak: ArrayLike | None = None) -> tuple[int, float, float]:
    """The item that metric ``a`` ranks highest relative to metric ``b`` (for examples like Liu & Gildea's Table 7:
    a hypothesis HWCM rates high and BLEU low).

    Percentile ranks are taken over all items (``pandas.Series.rank(pct=True)``: ties get their average rank).
    Among the ``eligible`` items (a boolean mask; all items when ``None`` or when none is eligible) the one with
    the largest ``pct_a - pct_b`` is chosen; ties go to the larger ``tiebreak`` value (e.g. the human score), then
    to the smaller index. Returns ``(index, pct_a, pct_b)``.
    """
    import pandas as pd

    x, y = _vec(a, "a"), _vec(b, "b")
    if len(x) != len(y) or not len(x):
        raise ValueError(f"a and b need the same, non-zero length, got {len(x)} and {len(y)}")
    ok = np.ones(len(x), dtype=bool)
    if eligible is not None:
        e = np.asarray(eligible, dtype=bool)
        if e.shape != x.shape:
            raise ValueError(f"eligible has {e.size} entries for {len(x)} items")
        if e.any():
            ok = e
    tb = np.zeros(len(x)) if tiebreak is None else _vec(tiebreak, "tiebreak")
    if tb.shape != x.shape:
        raise ValueError(f"tiebreak has {tb.size} entries for {len(x)} items")
    pa, pb = pd.Series(x).rank(pct=True).to_numpy(), pd.Series(y).rank(pct=True).to_numpy()
    frame = pd.DataFrame({"gap": pa - pb, "tb": tb, "i": np.arange(len(x))})[ok]
    i = int(frame.sort_values(["gap", "tb", "i"], ascending=[False, False, True])["i"].iloc[0])
    return i, float(pa[i]), float(pb[i])


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
