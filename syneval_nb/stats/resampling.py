"""The bootstrap and the controls: one protocol for every interval and every paired difference.

Every interval and every paired difference comes from a **paired percentile bootstrap that resamples source
segments** (``segments``; talks/documents as the variant ``clusters=``), all metrics of a table on the same
resamples: :func:`bootstrap_ci`, :func:`paired_bootstrap`, :func:`holm` (the table itself is
:func:`syneval_nb.stats.tables.correlation_table`). Pearson and ``within`` are vectorised (resampling weights times
sufficient statistics, :func:`bootstrap_pearson_samples`), ``darr`` too (per-segment pair counts), Spearman too
(ranks from the draw counts, :func:`bootstrap_spearman_samples`); Kendall recomputes scipy's statistic on each
resample.

Controls: :func:`placebo` (a random column) and :func:`permute_human` (the ``permute_human`` switch: shuffled human
scores, under which no "beats" or "correlates" claim may hold).
"""
from __future__ import annotations

import functools
import warnings
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from syneval_nb.stats.correlation import (
    BASIC_METHODS,
    METHODS,
    ArrayLike,
    dense_labels,
    multi_item_mask,
    as_pair,
    pair_outcomes,
    pair_tau,
    as_vector,
    better_worse_pairs,
    center_within,
    correlation,
)

__all__ = ["placebo", "permute_human", "placebo_columns", "bootstrap_ci", "paired_bootstrap", "holm", "monte_carlo_p"]
# helpers of stats.tables (not in __all__): ``boot_matrix``, ``estimate_row``, ``holm_adjust``, ``p_one_sided``,
# ``resampling_units``

# ----------------------------------------------------------------------------------------------------------------
# bootstrap
# ----------------------------------------------------------------------------------------------------------------

def _group_index(n: int, groups: Sequence | None) -> tuple[np.ndarray, int]:
    if groups is None:
        return np.arange(n), n
    inv = dense_labels(groups, n, "groups")
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
    h = as_vector(human, "human")
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


def _weighted_ranks(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The average rank (``scipy.stats.rankdata``, 'average') of each item in each resample written out item by
    item: with weights ``w`` (B, n) = how often each item is drawn, an item's rank is the number of drawn values
    below it plus (the number of drawn values equal to it + 1) / 2. Items not drawn get a rank of no weight."""
    order = np.argsort(x, kind="stable")
    xs = x[order]
    cs = np.cumsum(w[:, order], axis=1)
    new = np.r_[True, xs[1:] != xs[:-1]]  # the first item of each group of tied values, in sorted order
    start = np.flatnonzero(new)
    first = start[np.cumsum(new) - 1]  # each sorted item's group start
    last = np.r_[start[1:], len(xs)][np.cumsum(new) - 1] - 1  # and end
    before = np.where(first > 0, cs[:, np.maximum(first - 1, 0)], 0.0)
    ranks = np.empty_like(cs)
    ranks[:, order] = before + (cs[:, last] - before + 1.0) / 2.0
    return ranks


def bootstrap_spearman_samples(metrics: np.ndarray, human: ArrayLike, n_resamples: int = 1000, seed: int = 0,
                               groups: Sequence | None = None) -> np.ndarray:
    """Spearman's rho of each metric (rows of ``metrics``, shape (k, n)) with ``human`` in each bootstrap resample
    (the resamples of :func:`bootstrap_weights`): the Pearson r of the average ranks of the resample written out
    item by item (a drawn item's copies tie), computed from the draw counts (:func:`_weighted_ranks`) without
    writing the resample out. Returns (n_resamples, k); NaN where a resample is constant (one distinct value).
    ``tests/test_stats.py`` checks it against ``scipy.stats.spearmanr`` on the expanded resamples."""
    h = as_vector(human, "human")
    m = np.atleast_2d(np.asarray(metrics, dtype=float))
    if m.shape[1] != len(h):
        raise ValueError(f"metrics has {m.shape[1]} columns but human has {len(h)} values")
    if not (np.isfinite(m).all() and np.isfinite(h).all()):
        raise ValueError("metrics and human must be finite")
    out = []
    for w in bootstrap_weights(len(h), n_resamples, seed, groups):
        n = w.sum(axis=1, keepdims=True)
        rh = _weighted_ranks(h, w)
        dh = rh - (w * rh).sum(axis=1, keepdims=True) / n
        vh = (w * dh * dh).sum(axis=1)
        cols = []
        for row in m:
            rm = _weighted_ranks(row, w)
            dm = rm - (w * rm).sum(axis=1, keepdims=True) / n
            vm = (w * dm * dm).sum(axis=1)
            with np.errstate(invalid="ignore", divide="ignore"):
                cols.append(np.where((vm > 0) & (vh > 0), (w * dm * dh).sum(axis=1) / np.sqrt(vm * vh), np.nan))
        out.append(np.column_stack(cols))
    return np.clip(np.concatenate(out), -1.0, 1.0) if out else np.empty((0, len(m)))


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


def resampling_units(n: int, method: str, segments: np.ndarray | None, clusters: Sequence | None) -> np.ndarray:
    """The resampling unit of each item: ``clusters`` if given, else the segment, else the item itself. For the
    within-segment methods every segment must lie inside one cluster (a resample then draws whole segments)."""
    c = dense_labels(clusters, n, "clusters")
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


def pair_tau_samples(mat: np.ndarray, human: ArrayLike, segments: Sequence, *, threshold: float = 0.0,
                     distinct: Sequence | None = None, metric_ties: str = "discordant",
                     clusters: Sequence | None = None, n_resamples: int = 1000,
                     seed: int = 0) -> tuple[np.ndarray, np.ndarray, int]:
    """The WMT12 pair tau of every row of ``mat`` (k x n) with ``human``, on all rows and on ``n_resamples``
    bootstrap resamples of source segments (``clusters``: of those instead, e.g. talks; each must hold whole
    segments). The pairs are :func:`~syneval_nb.stats.correlation.better_worse_pairs` (``threshold``,
    ``distinct``), counted as :func:`~syneval_nb.stats.correlation.concordance_counts` counts them, the tau that of
    :func:`~syneval_nb.stats.correlation.wmt12_tau` (``metric_ties="discordant"``) or without the tie penalty
    (``"exclude"``); a pair with a non-finite score is left out. Vectorised: pair counts summed per unit, then
    weighted by how often each unit is drawn (the draws of :func:`bootstrap_weights` with ``seed`` over the units,
    the same as the stats tables'). Returns ``(estimates (k,), samples (B, k), number of units)``."""
    if metric_ties not in ("discordant", "exclude"):
        raise ValueError(f"metric_ties must be 'discordant' or 'exclude', got {metric_ties!r}")
    m = np.atleast_2d(np.asarray(mat, dtype=float))
    m = np.where(np.isfinite(m), m, np.nan)
    b, w = better_worse_pairs(np.asarray(human, dtype=float), np.asarray(segments), threshold, distinct)
    units = dense_labels(segments if clusters is None else clusters, m.shape[1],
                    "segments" if clusters is None else "clusters")
    n_units = int(units.max()) + 1
    if clusters is not None and len(b) and (units[b] != units[w]).any():
        raise ValueError("clusters must hold whole segments")
    pu = units[b]
    counts = [np.stack([np.bincount(pu, weights=o.astype(float), minlength=n_units) for o in outcome])
              for outcome in pair_outcomes(m, b, w)]  # (concordant, discordant, tied), each (k, units)
    est = pair_tau(*(c.sum(axis=1) for c in counts), metric_ties)
    out = [pair_tau(*(wu @ c.T for c in counts), metric_ties) for wu in _unit_weights(n_units, n_resamples, seed)]
    return est, (np.concatenate(out) if out else np.empty((0, len(m)))), n_units


def _distinct_rows(mat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(distinct rows, index of each row's distinct row)``: identical rows (bit for bit) are resampled once, so
    their statistics are exactly equal and their difference exactly 0 whatever the BLAS kernel does with the
    column position of a matrix product (issue 37: under ``OPENBLAS_CORETYPE=Haswell`` two identical columns
    differed in the last bits, and a metric identical to its baseline got p_worse 0.99 instead of 1)."""
    mat = np.atleast_2d(mat)
    seen: dict[bytes, int] = {}
    idx = np.array([seen.setdefault(np.ascontiguousarray(row).tobytes(), len(seen)) for row in mat], dtype=int)
    firsts = np.array([int(np.flatnonzero(idx == k)[0]) for k in range(len(seen))], dtype=int)
    return mat[firsts], idx


def boot_matrix(mat: np.ndarray, h: np.ndarray, method: str | Callable, segments: Sequence | None,
                 clusters: Sequence | None, n_resamples: int, seed: int, threshold: float = 0.0,
                 metric_ties: str = "discordant") -> tuple[np.ndarray, int]:
    """(samples (B, k), number of resampling units): ``method`` of each row of ``mat`` with ``h`` on the same
    resamples of units (clusters, else segments, else items). Identical rows get identical samples
    (:func:`_distinct_rows`)."""
    uniq, idx = _distinct_rows(mat)
    if len(uniq) < len(idx):
        samples, n_units = boot_matrix(uniq, h, method, segments, clusters, n_resamples, seed, threshold,
                                        metric_ties)
        return samples[:, idx], n_units
    n = len(h)
    seg = dense_labels(segments, n, "segments")
    if callable(method):
        units = resampling_units(n, "pearson", seg, clusters)
        return (np.column_stack([_resample_stat(method, row, h, n_resamples, seed, units) for row in mat]),
                int(units.max()) + 1)
    if method not in METHODS:
        raise ValueError(f"unknown correlation method {method!r}; use one of {list(METHODS)}")
    if method in ("within", "darr") and seg is None:
        raise ValueError(f"method {method!r} compares translations of the same source: pass segments=")
    units = resampling_units(n, method, seg, clusters)
    n_units = int(units.max()) + 1
    if method == "pearson":
        return bootstrap_pearson_samples(mat, h, n_resamples, seed, units), n_units
    if method == "within":
        keep = multi_item_mask(seg, n)
        mc = np.vstack([center_within(row, seg) for row in mat])[:, keep]
        # the units of the kept items, relabelled densely but drawn as the full set of units would be
        return _weighted_pearson(mc, center_within(h, seg)[keep], units[keep], n_units, n_resamples, seed), n_units
    if method == "darr":
        return _darr_samples(mat, h, seg, units, n_resamples, seed, threshold, metric_ties), n_units
    if method == "spearman":
        return bootstrap_spearman_samples(mat, h, n_resamples, seed, units), n_units
    fn = BASIC_METHODS[method]
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


# a resampled statistic within 1e-12 of 0 is 0: two statistics equal in exact arithmetic (two metrics that agree on
# every segment a resample draws) differ in floating point by about +-1e-16, with a sign set by the BLAS kernel
_ZERO = 1e-12


def percentile_ci(samples: np.ndarray, alpha: float = 0.05, axis: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval (q_{alpha/2}, q_{1-alpha/2}) of bootstrap samples along ``axis`` (NaNs ignored; values
    within 1e-12 of 0 are 0, as ties)."""
    s = np.asarray(samples, dtype=float)
    s = np.where(np.abs(s) <= _ZERO, 0.0, s)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN column gives NaN bounds
        lo, hi = np.nanquantile(s, [alpha / 2, 1 - alpha / 2], axis=axis)
    return lo, hi


def estimate_row(row: np.ndarray, h: np.ndarray, method: str | Callable, segments, threshold: float,
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
    single items when neither is given, i.e. rows assumed independent; one unit: no interval, NaN). ``method``
    in :data:`METHODS` or a callable ``f(metric, human) -> float`` (one resample at a time). ``groups`` is the
    former name of ``clusters`` and ``statistic`` of ``method``."""
    method = _method_arg(method, statistic)
    clusters = clusters if clusters is not None else groups
    m, h = as_pair(metric, human, min_n=3, names=("metric", "human"))
    s, n_units = boot_matrix(m[None, :], h, method, segments, clusters, n_resamples, seed, threshold, metric_ties)
    lo, hi = percentile_ci(s[:, 0], alpha) if n_units > 1 else (np.nan, np.nan)  # one unit: resamples = the data
    return BootstrapResult(estimate_row(m, h, method, segments, threshold, metric_ties), float(lo), float(hi), s[:, 0])


def monte_carlo_p(stat: np.ndarray) -> float:
    """The one-sided Monte-Carlo p of a claim whose resampled (or null) statistic is ``stat`` (the claim fails in a
    draw where ``stat <= 0``): ``(k + 1) / (B + 1)`` with ``k`` such draws out of ``B`` finite ones, so never 0
    (Davison & Hinkley 1997, eq. 4.11; Phipson & Smyth 2010); NaN without a finite draw; a draw within 1e-12 of
    0 is a tie (float rounding must not decide it). Every p of the kit's resampling and null
    distributions is this one.

    >>> monte_carlo_p(np.array([0.2, 0.1, -0.1, 0.3]))
    0.4
    """
    stat = np.asarray(stat, dtype=float)
    ok = np.isfinite(stat)
    if not ok.any():
        return float("nan")
    return float((np.count_nonzero(stat[ok] <= _ZERO) + 1) / (ok.sum() + 1))


def p_one_sided(d: np.ndarray) -> tuple[float, float]:
    """(p_better, p_worse) of resampled differences a - b: :func:`monte_carlo_p` of d (draws with d <= 0 count
    against "a is better") and of -d."""
    return monte_carlo_p(d), monte_carlo_p(-np.asarray(d, dtype=float))


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
    a, h = as_pair(metric_a, human, min_n=3, names=("metric_a", "human"))
    b, _ = as_pair(metric_b, human, min_n=3, names=("metric_b", "human"))
    s, n_units = boot_matrix(np.vstack([a, b]), h, method, segments, clusters, n_resamples, seed, threshold,
                             metric_ties)
    d = s[:, 0] - s[:, 1]

    def res(est: float, smp: np.ndarray) -> BootstrapResult:  # one unit: every resample is the data, no interval
        lo, hi = percentile_ci(smp, alpha) if n_units > 1 else (np.nan, np.nan)
        return BootstrapResult(float(est), float(lo), float(hi), smp)

    ea = estimate_row(a, h, method, segments, threshold, metric_ties)
    eb = estimate_row(b, h, method, segments, threshold, metric_ties)
    pb, pw = p_one_sided(d) if n_units > 1 else (np.nan, np.nan)
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


holm_adjust = holm  # correlation_table's argument ``holm`` shadows the function's name there


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
    v = np.array(as_vector(values, "values"))
    if seed is None:
        return v
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), 0x7065726D]))
    if segments is None:
        return v[rng.permutation(len(v))]
    inv = dense_labels(segments, len(v), "segments")
    out = v.copy()
    order = np.argsort(inv, kind="stable")
    for grp in np.split(order, np.flatnonzero(np.diff(inv[order])) + 1):
        out[grp] = v[grp[rng.permutation(len(grp))]]
    return out


# ----------------------------------------------------------------------------------------------------------------
# beyond length: the partial correlation given the lengths, on the same resamples
# ----------------------------------------------------------------------------------------------------------------

def bootstrap_partial_samples(metrics: np.ndarray, human: ArrayLike, given: ArrayLike, n_resamples: int = 1000,
                              seed: int = 0, groups: Sequence | None = None) -> np.ndarray:
    r"""Partial Pearson r of each metric (rows of ``metrics``, (k, n)) with ``human`` given the covariates
    ``given`` ((n,) or (n, q)) in each bootstrap resample: the same resamples as :func:`bootstrap_pearson_samples`
    (same ``seed`` and ``groups``), so the partial r of a table lies on the Pearson table's resamples.

    Variant: the regression on [1, given] is **refitted in every resample** (weighted least squares with the
    resample counts as weights), not fitted once: with A = [1, z], the weighted moment matrices S_AA, S_Ax, S_Ah,
    ... give the residual cross-products res_xy = S_xy - S_xA S_AA^{-1} S_Ay and r = res_xh / sqrt(res_xx res_hh).
    This equals :func:`syneval_nb.stats.partial_correlation` of the expanded resample (tests/test_stats.py).
    Returns (n_resamples, k); NaN where a resample leaves a variable without residual variance."""
    h = as_vector(human, "human")
    m = np.atleast_2d(np.asarray(metrics, dtype=float))
    uniq, idx = _distinct_rows(m)
    if len(uniq) < len(idx):  # identical metrics: exactly identical samples (see _distinct_rows)
        return bootstrap_partial_samples(uniq, human, given, n_resamples, seed, groups)[:, idx]
    z = np.asarray(given, dtype=float).reshape(len(h), -1)
    if m.shape[1] != len(h):
        raise ValueError(f"metrics has {m.shape[1]} columns but human has {len(h)} values")
    if not (np.isfinite(m).all() and np.isfinite(z).all()):
        raise ValueError("metrics or given has non-finite values")
    h = h - h.mean()
    m = m - m.mean(axis=1, keepdims=True)
    a = np.column_stack([np.ones(len(h)), z - z.mean(axis=0)])
    q, k = a.shape[1], m.shape[0]
    cols = np.column_stack([(a[:, :, None] * a[:, None, :]).reshape(len(h), -1), a * h[:, None], h * h,
                            (a[:, :, None] * m.T[:, None, :]).reshape(len(h), -1), (m * m).T, (m * h).T])
    inv, n_units = _group_index(len(h), groups)
    per_unit = np.zeros((n_units, cols.shape[1]))
    np.add.at(per_unit, inv, cols)
    out = []
    for wu in _unit_weights(n_units, n_resamples, seed):
        s = wu @ per_unit
        o = 0
        saa = s[:, o:o + q * q].reshape(-1, q, q); o += q * q
        sah = s[:, o:o + q]; o += q
        shh = s[:, o]; o += 1
        sam = s[:, o:o + q * k].reshape(-1, q, k); o += q * k
        smm, smh = s[:, o:o + k], s[:, o + k:o + 2 * k]
        rhs = np.concatenate([sah[:, :, None], sam], axis=2)
        with np.errstate(invalid="ignore", divide="ignore"):
            sol = np.linalg.solve(saa + 1e-12 * np.eye(q), rhs)
            res_hh = shh - np.einsum("bq,bq->b", sah, sol[:, :, 0])
            res_mm = smm - np.einsum("bqk,bqk->bk", sam, sol[:, :, 1:])
            res_mh = smh - np.einsum("bqk,bq->bk", sam, sol[:, :, 0])
            flat = (res_mm <= 1e-10 * smm) | (res_hh <= 1e-10 * shh)[:, None]
            out.append(np.where(flat, np.nan, res_mh / np.sqrt(np.where(flat, 1.0, res_mm * res_hh[:, None]))))
    return np.clip(np.concatenate(out), -1.0, 1.0)


def residualize(values: np.ndarray, given: ArrayLike) -> np.ndarray:
    """The least-squares residuals of each row of ``values`` ((k, n) or (n,)) on [1, given] (one ``lstsq``)."""
    v = np.atleast_2d(np.asarray(values, dtype=float))
    z = np.asarray(given, dtype=float).reshape(v.shape[1], -1)
    a = np.column_stack([np.ones(v.shape[1]), z])
    return v - (a @ np.linalg.lstsq(a, v.T, rcond=None)[0]).T


# ----------------------------------------------------------------------------------------------------------------
# null distributions: many placebo columns, permutations of the human scores
# ----------------------------------------------------------------------------------------------------------------

N_NULL = 1000
"""Default number of placebo columns / permutations of a null distribution (at least 100 are required)."""


def _rows_r(x: np.ndarray, h: np.ndarray) -> np.ndarray:
    """Pearson r of every row of ``x`` (N, n) with ``h`` (n,)."""
    xc = x - x.mean(axis=1, keepdims=True)
    hc = h - h.mean()
    with np.errstate(invalid="ignore", divide="ignore"):
        return (xc @ hc) / np.sqrt((xc * xc).sum(axis=1) * (hc @ hc))


@functools.lru_cache(maxsize=2)
def placebo_columns(n: int, n_columns: int = N_NULL, seed: int = 0) -> np.ndarray:
    """The placebo distribution's ``n_columns`` random columns of length ``n``, ``(n_columns, n)`` independent
    standard normal numbers (seeded, a stream of their own; read-only and cached: every table of a chapter sees the
    same ones). :func:`placebo_distribution` correlates them with the human scores; chapter 07 combines each with
    every metric (:func:`syneval_nb.studies.discourse_kernels.placebo_matrix`)."""
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), 0x706C6163, 1]))
    x = rng.standard_normal((int(n_columns), int(n)))
    x.setflags(write=False)
    return x


def placebo_distribution(human: ArrayLike, n_columns: int = N_NULL, seed: int = 0, method: str = "pearson",
                         segments: Sequence | None = None, given: ArrayLike | None = None) -> np.ndarray:
    """The placebo as a distribution: the statistic of ``n_columns`` (>= 100) independent standard normal columns
    (seeded with ``seed``, a stream of their own) with ``human``: Pearson r, the ``within``-segment r (columns and
    ``human`` centred per source segment) or, with ``given``, the partial r given those covariates (the
    regression fitted once on all rows). A metric "beats the placebo" when it beats the distribution's 95th
    percentile (:func:`syneval_nb.stats.verdict_beats_placebo`). Other methods recompute :func:`correlation` per
    column (slow: pass a small ``n_columns``)."""
    h = as_vector(human, "human")
    if int(n_columns) < 100:
        raise ValueError(f"a placebo distribution needs at least 100 columns, got {n_columns}")
    x = placebo_columns(len(h), int(n_columns), int(seed))
    if given is not None:
        if method != "pearson":
            raise ValueError("the partial placebo is defined for method='pearson'")
        return _rows_r(residualize(x, given), residualize(h, given)[0])
    if method == "pearson":
        return _rows_r(x, h)
    if method == "within":
        seg = dense_labels(segments, len(h), "segments")
        keep = multi_item_mask(seg, len(h))
        onehot = np.zeros((len(h), int(seg.max()) + 1))
        onehot[np.arange(len(h)), seg] = 1.0
        means = (x @ onehot) / onehot.sum(axis=0)
        xc = (x - means @ onehot.T)[:, keep]
        return _rows_r(xc, center_within(h, seg)[keep])
    return np.array([correlation(row, h, method, segments) for row in x])


def permutation_distribution(metrics: np.ndarray, human: ArrayLike, n_permutations: int = N_NULL,
                             seed: int = 0) -> np.ndarray:
    """Pearson r of each metric (rows of ``metrics``) with ``n_permutations`` seeded permutations of ``human``
    ((n_permutations, k)): the null distribution of a system-level correlation (few independent rows, where a
    single placebo draw is meaningless: with 19 systems one draw can have r = +0.26)."""
    h = as_vector(human, "human")
    m = np.atleast_2d(np.asarray(metrics, dtype=float))
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), 0x7065726D, 1]))
    hp = np.vstack([h[rng.permutation(len(h))] for _ in range(int(n_permutations))])
    hc = hp - hp.mean(axis=1, keepdims=True)
    mc = m - m.mean(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (hc @ mc.T) / np.sqrt((hc * hc).sum(axis=1)[:, None] * (mc * mc).sum(axis=1)[None, :])


def null_p(observed: float, null: np.ndarray) -> float:
    """One-sided Monte-Carlo p of ``observed`` against a null distribution, ``(k + 1) / (N + 1)`` with ``k`` of
    the ``N`` finite null values >= ``observed`` (:func:`monte_carlo_p`: never 0)."""
    v = np.asarray(null, dtype=float)
    v = v[np.isfinite(v)]
    if not np.isfinite(observed) or not len(v):
        return float("nan")
    return monte_carlo_p(observed - v)
