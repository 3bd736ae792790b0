"""Meta-evaluation statistics: plain functions over numpy arrays (mt-metrics-eval style).

Every function states its exact definition. Conventions: ``metric`` and ``human`` are 1-D arrays of the same
length, one value per scored item (a segment translation, or a system); higher is better for both (negate error
rates and MQM penalties first). Non-finite values are an error, never silently dropped.

* correlations: :func:`pearson`, :func:`spearman`, :func:`kendall_tau_b`, :func:`correlation`;
  :func:`system_level` (mean per system, then correlate);
* WMT segment-level Kendall-like taus over pairs of translations of the same source: :func:`wmt_darr_tau`
  (DA pairs more than 25 raw points apart) and :func:`wmt12_tau` (relative rankings, WMT12 / Guzman et al. 2014),
  built on :func:`better_worse_pairs` and :func:`concordance_counts`;
* significance: :func:`fisher_ci`, :func:`williams_test`, :func:`bootstrap_ci`, :func:`paired_bootstrap`
  (vectorised: resampling weights times sufficient statistics, see :func:`bootstrap_pearson_samples`).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Mapping, Sequence

import numpy as np
from scipy import stats as _sps

ArrayLike = Sequence[float] | np.ndarray


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


# ----------------------------------------------------------------------------------------------------------------
# correlations
# ----------------------------------------------------------------------------------------------------------------

def pearson(x: ArrayLike, y: ArrayLike) -> float:
    r"""Pearson's r = \sum (x-\bar x)(y-\bar y) / \sqrt{\sum (x-\bar x)^2 \sum (y-\bar y)^2}; NaN if either is constant."""
    a, b = _pair(x, y)
    a, b = a - a.mean(), b - b.mean()
    den = np.sqrt((a @ a) * (b @ b))
    return float(np.clip((a @ b) / den, -1.0, 1.0)) if den > 0 else float("nan")


def average_ranks(x: ArrayLike) -> np.ndarray:
    """Ranks 1..n, tied values getting the mean of the ranks they span (the 'average' method)."""
    a = _vec(x, "x")
    order = np.argsort(a, kind="mergesort")
    s = a[order]
    starts = np.r_[0, np.flatnonzero(s[1:] != s[:-1]) + 1]
    ends = np.r_[starts[1:], len(s)]
    mean_rank = (starts + ends + 1) / 2.0  # ranks start+1 .. end, averaged
    ranks = np.empty(len(a))
    ranks[order] = np.repeat(mean_rank, ends - starts)
    return ranks


def spearman(x: ArrayLike, y: ArrayLike) -> float:
    """Spearman's rho: Pearson's r of the average ranks (ties share the mean rank)."""
    a, b = _pair(x, y)
    return pearson(average_ranks(a), average_ranks(b))


def _count_inversions(y: np.ndarray) -> int:
    """Number of pairs i < j with y[i] > y[j] (strict), by a Fenwick tree over dense ranks: O(n log n)."""
    _, dense = np.unique(y, return_inverse=True)
    m = int(dense.max()) + 1 if len(dense) else 0
    tree = [0] * (m + 1)
    inv = 0
    for seen, v in enumerate(dense.tolist()):
        # count earlier elements with rank <= v, then the rest are > v
        i, le = v + 1, 0
        while i > 0:
            le += tree[i]
            i -= i & -i
        inv += seen - le
        i = v + 1
        while i <= m:
            tree[i] += 1
            i += i & -i
    return inv


def _tie_pairs(a: np.ndarray) -> int:
    _, counts = np.unique(a, return_counts=True)
    return int((counts * (counts - 1) // 2).sum())


def kendall_tau_b(x: ArrayLike, y: ArrayLike) -> float:
    r"""Kendall's tau-b = (C - D) / \sqrt{(n_0 - n_1)(n_0 - n_2)}.

    n_0 = n(n-1)/2 pairs, n_1 / n_2 pairs tied in x / y, C / D concordant / discordant pairs (pairs tied in either
    are neither). Knight's (1966) O(n log n) algorithm: sort by (x, y); D = strict inversions of y in that order;
    C = n_0 - n_1 - n_2 + n_3 - D with n_3 the pairs tied in both. NaN when x or y is constant.
    """
    a, b = _pair(x, y)
    n = len(a)
    order = np.lexsort((b, a))
    a, b = a[order], b[order]
    n0 = n * (n - 1) // 2
    n1, n2 = _tie_pairs(a), _tie_pairs(b)
    both = np.stack([a, b], axis=1)
    _, joint = np.unique(both, axis=0, return_counts=True)
    n3 = int((joint * (joint - 1) // 2).sum())
    d = _count_inversions(b)
    c = n0 - n1 - n2 + n3 - d
    den = np.sqrt(float(n0 - n1) * float(n0 - n2))
    return float((c - d) / den) if den > 0 else float("nan")


_METHODS: dict[str, Callable[[ArrayLike, ArrayLike], float]] = {
    "pearson": pearson, "spearman": spearman, "kendall": kendall_tau_b,
}


def correlation(x: ArrayLike, y: ArrayLike, method: str = "pearson") -> float:
    """``method`` in ``pearson``, ``spearman``, ``kendall`` (tau-b)."""
    if method not in _METHODS:
        raise ValueError(f"unknown correlation method {method!r}; use one of {sorted(_METHODS)}")
    return _METHODS[method](x, y)


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
    r"""Fisher z interval for a correlation: tanh(atanh(r) -+ z_{1-alpha/2} / \sqrt{n-3})."""
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
    """:func:`williams_test` with r12 = r(human, a), r13 = r(human, b), r23 = r(a, b) (Pearson): is a better?"""
    h, a = _pair(human, metric_a, min_n=4, names=("human", "metric_a"))
    _, b = _pair(human, metric_b, min_n=4, names=("human", "metric_b"))
    return williams_test(pearson(h, a), pearson(h, b), pearson(a, b), len(h))


# ----------------------------------------------------------------------------------------------------------------
# bootstrap
# ----------------------------------------------------------------------------------------------------------------

def _group_index(n: int, groups: Sequence | None) -> tuple[np.ndarray, int]:
    if groups is None:
        return np.arange(n), n
    g = np.asarray(groups)
    if len(g) != n:
        raise ValueError(f"groups has {len(g)} labels but there are {n} items")
    _, inv = np.unique(g, return_inverse=True)
    return inv, int(inv.max()) + 1


def bootstrap_weights(n_items: int, n_resamples: int, seed: int = 0, groups: Sequence | None = None,
                      chunk: int = 100):
    """Yield (B_chunk, n_items) float arrays: how often each item appears in each bootstrap resample.

    Resampling unit: the item, or the group (e.g. the source segment, so all systems' translations of a drawn
    segment enter together) when ``groups`` is given. Each resample draws G units uniformly with replacement
    from the G units (counted with one bincount per chunk), so it has as many units as the data. The same seed gives the same resamples to every call.
    """
    inv, n_units = _group_index(n_items, groups)
    rng = np.random.default_rng(seed)
    done = 0
    while done < n_resamples:
        b = min(chunk, n_resamples - done)
        draws = rng.integers(0, n_units, size=(b, n_units)) + (np.arange(b) * n_units)[:, None]
        w = np.bincount(draws.ravel(), minlength=b * n_units).reshape(b, n_units).astype(np.float64)
        yield w[:, inv]
        done += b


def bootstrap_pearson_samples(metrics: np.ndarray, human: ArrayLike, n_resamples: int = 1000, seed: int = 0,
                              groups: Sequence | None = None) -> np.ndarray:
    r"""Pearson r of each metric (rows of ``metrics``, shape (k, n)) with ``human`` in each bootstrap resample.

    Vectorised: with resample weights W (B x n), the weighted sums S_x = W x, S_xx = W x^2, S_xy = W (x y), ...
    give r = (N S_xy - S_x S_y) / \sqrt{(N S_xx - S_x^2)(N S_yy - S_y^2)}, N = W 1 — one matrix product per
    chunk of resamples for all k metrics at once. Returns an array (n_resamples, k); NaN where a resample is
    constant. Values are centred first to keep the sums well conditioned.
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
        s = w @ cols
        n_, sy, syy = s[:, :1], s[:, 1:2], s[:, 2:3]
        sx, sxx, sxy = s[:, 3:3 + k], s[:, 3 + k:3 + 2 * k], s[:, 3 + 2 * k:]
        num = n_ * sxy - sx * sy
        den = np.sqrt(np.clip(n_ * sxx - sx**2, 0, None) * np.clip(n_ * syy - sy**2, 0, None))
        with np.errstate(invalid="ignore", divide="ignore"):
            out.append(np.where(den > 0, num / den, np.nan))
    return np.clip(np.concatenate(out), -1.0, 1.0)


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


@dataclass(frozen=True)
class BootstrapResult:
    """A statistic, its percentile bootstrap interval and the resampled values."""

    estimate: float
    low: float
    high: float
    samples: np.ndarray


def percentile_ci(samples: np.ndarray, alpha: float = 0.05, axis: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval (q_{alpha/2}, q_{1-alpha/2}) of bootstrap samples along ``axis`` (NaNs ignored)."""
    lo, hi = np.nanquantile(np.asarray(samples, dtype=float), [alpha / 2, 1 - alpha / 2], axis=axis)
    return lo, hi


def _stat_fn(statistic: str | Callable) -> Callable[[np.ndarray, np.ndarray], float]:
    if callable(statistic):
        return statistic
    if statistic not in _METHODS:
        raise ValueError(f"unknown statistic {statistic!r}; use one of {sorted(_METHODS)} or a callable")
    return _METHODS[statistic]


def _samples(metrics: np.ndarray, human: np.ndarray, statistic, n_resamples, seed, groups) -> np.ndarray:
    if statistic == "pearson":
        return bootstrap_pearson_samples(metrics, human, n_resamples, seed, groups)
    fn = _stat_fn(statistic)
    return np.column_stack([_resample_stat(fn, row, human, n_resamples, seed, groups) for row in metrics])


def bootstrap_ci(metric: ArrayLike, human: ArrayLike, statistic: str | Callable = "pearson",
                 n_resamples: int = 1000, alpha: float = 0.05, seed: int = 0,
                 groups: Sequence | None = None) -> BootstrapResult:
    """Percentile bootstrap interval [q_{alpha/2}, q_{1-alpha/2}] of ``statistic(metric, human)`` over resampled
    items (or ``groups``). ``statistic``: ``"pearson"`` (vectorised), ``"spearman"``, ``"kendall"`` or any
    callable ``f(metric, human) -> float`` (one resample at a time)."""
    m, h = _pair(metric, human, min_n=3, names=("metric", "human"))
    s = _samples(m[None, :], h, statistic, n_resamples, seed, groups)[:, 0]
    lo, hi = np.nanquantile(s, [alpha / 2, 1 - alpha / 2])
    return BootstrapResult(_stat_fn(statistic)(m, h), float(lo), float(hi), s)


@dataclass(frozen=True)
class PairedBootstrapResult:
    """Two metrics' statistic on the same resamples: each one's interval, the difference a - b with its interval,
    and ``p_value`` = share of resamples where the difference is <= 0 (one-sided: "is a better than b?")."""

    a: BootstrapResult
    b: BootstrapResult
    delta: BootstrapResult
    p_value: float


def paired_bootstrap(metric_a: ArrayLike, metric_b: ArrayLike, human: ArrayLike,
                     statistic: str | Callable = "pearson", n_resamples: int = 1000, alpha: float = 0.05,
                     seed: int = 0, groups: Sequence | None = None) -> PairedBootstrapResult:
    """Paired bootstrap over segments (Koehn 2004 style, applied to a correlation): both metrics are scored on the
    same resamples, so the interval of the difference accounts for their correlation.
    ``p_value`` = fraction of resamples with stat(a) - stat(b) <= 0."""
    a, h = _pair(metric_a, human, min_n=3, names=("metric_a", "human"))
    b, _ = _pair(metric_b, human, min_n=3, names=("metric_b", "human"))
    fn = _stat_fn(statistic)
    s = _samples(np.vstack([a, b]), h, statistic, n_resamples, seed, groups)
    d = s[:, 0] - s[:, 1]
    q = [alpha / 2, 1 - alpha / 2]

    def res(est: float, smp: np.ndarray) -> BootstrapResult:
        lo, hi = np.nanquantile(smp, q)
        return BootstrapResult(float(est), float(lo), float(hi), smp)

    ea, eb = fn(a, h), fn(b, h)
    ok = np.isfinite(d)
    p = float((d[ok] <= 0).mean()) if ok.any() else float("nan")
    return PairedBootstrapResult(res(ea, s[:, 0]), res(eb, s[:, 1]), res(ea - eb, d), p)


# ----------------------------------------------------------------------------------------------------------------
# control baselines and comparison tables
# ----------------------------------------------------------------------------------------------------------------

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


def correlation_table(scores: dict[tuple[str, int | None], ArrayLike], human: ArrayLike,
                      baseline: str = "BLEU", baseline_depth: int = 4, method: str = "pearson",
                      ci: str = "fisher", n_resamples: int = 1000, alpha: float = 0.05, seed: int = 0,
                      groups: Sequence | None = None):
    """One row per (metric, depth): correlation with ``human``, its interval and a Williams test against the
    baseline metric at the same depth (``baseline_depth`` for rows without a depth, e.g. kernels and controls).

    Columns: ``metric, depth, r, low, high, n, t_vs_base, p_better, p_worse, mark``. ``p_better`` is the one-sided
    Williams p that the row's metric correlates more strongly than the baseline, ``p_worse`` the reverse;
    ``mark`` is ``"+"`` / ``"-"`` when the respective p < ``alpha`` (``""`` otherwise, and for the baseline).
    ``ci="fisher"``: :func:`fisher_ci` (Pearson only); ``ci="bootstrap"``: percentile intervals from one shared
    set of resamples (:func:`bootstrap_pearson_samples`, optionally resampling ``groups``). The Williams test is
    defined for Pearson's r; with ``method`` other than pearson ``t_vs_base``/``p_*`` are NaN.
    """
    import pandas as pd

    h = _vec(human, "human")
    keys = list(scores)
    mat = np.vstack([_pair(scores[k], h, min_n=4, names=(f"{k[0]}@{k[1]}", "human"))[0] for k in keys])
    rs = np.array([correlation(row, h, method) for row in mat])
    if ci == "bootstrap":
        if method != "pearson":
            raise ValueError("bootstrap intervals here are for Pearson; use bootstrap_ci for other statistics")
        lo, hi = percentile_ci(bootstrap_pearson_samples(mat, h, n_resamples, seed, groups), alpha)
    elif ci == "fisher":
        lo, hi = (np.array(v) for v in zip(*[fisher_ci(r, len(h), alpha) if np.isfinite(r) else (np.nan, np.nan)
                                             for r in rs]))
    else:
        raise ValueError(f"ci must be 'fisher' or 'bootstrap', got {ci!r}")
    rows = []
    for i, (name, depth) in enumerate(keys):
        bkey = (baseline, depth) if (baseline, depth) in scores else (baseline, baseline_depth)
        t = pb = pw = np.nan
        mark = ""
        if name != baseline and bkey in scores and method == "pearson" and np.isfinite(rs[i]):
            j = keys.index(bkey)
            r23 = pearson(mat[i], mat[j])
            if np.isfinite(r23) and np.isfinite(rs[j]):
                t, pb = williams_test(rs[i], rs[j], r23, len(h))
                pw = williams_test(rs[j], rs[i], r23, len(h))[1]
                mark = "+" if pb < alpha else "-" if pw < alpha else ""
        rows.append({"metric": name, "depth": depth, "r": rs[i], "low": lo[i], "high": hi[i], "n": len(h),
                     "t_vs_base": t, "p_better": pb, "p_worse": pw, "mark": mark})
    out = pd.DataFrame(rows)
    out["depth"] = pd.array([d for _, d in keys], dtype="Int64")
    return out


def correlation_tables(scores: dict[tuple[str, int | None], ArrayLike], humans: Mapping[str, ArrayLike],
                       **kwargs):
    """:func:`correlation_table` of the same ``scores`` against each human score of ``humans`` (name -> scores),
    stacked, with the name in a first column ``human`` (e.g. MQM total and MQM Fluency)."""
    import pandas as pd

    tables = []
    for name, human in humans.items():
        t = correlation_table(scores, human, **kwargs)
        t.insert(0, "human", name)
        tables.append(t)
    return pd.concat(tables, ignore_index=True)



def table_row(table, metric: str, depth: int | None = None, **match):
    """The one row of a correlation table (:func:`correlation_table`, :func:`correlation_tables`) for ``metric`` at
    ``depth`` (``None``: its row without a depth, e.g. a kernel), among the rows whose other columns equal
    ``match`` (e.g. ``human="MQM Fluency"``). Raises ``KeyError`` unless exactly one row matches."""
    sel = np.array(table["metric"] == metric, dtype=bool)  # a writable copy (pandas hands out read-only views)
    sel &= np.array(table["depth"].isna() if depth is None else (table["depth"] == depth).fillna(False), dtype=bool)
    for col, value in match.items():
        sel &= np.array(table[col] == value, dtype=bool)
    if sel.sum() != 1:
        raise KeyError(f"{int(sel.sum())} rows for metric={metric!r}, depth={depth!r}, {match}")
    return table[sel].iloc[0]

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


def claim_verdict(p_better: ArrayLike, p_worse: ArrayLike, alpha: float = 0.05) -> str:
    """A claim "metric beats the baseline", judged over k comparisons (e.g. depths x systems) with one-sided
    p-values each way (NaN = not tested). With b / w the numbers of comparisons where the metric is significantly
    better / worse at level ``alpha``:

    ``"holds"`` if b >= k/2 and w = 0; ``"does not hold"`` if w >= k/2 and b = 0; ``"mixed"`` if b > 0 and w > 0;
    ``"cannot tell"`` otherwise (too few significant differences either way).
    """
    pb, pw = np.asarray(p_better, dtype=float), np.asarray(p_worse, dtype=float)
    if pb.shape != pw.shape:
        raise ValueError(f"p_better has shape {pb.shape} but p_worse has {pw.shape}")
    ok = np.isfinite(pb) & np.isfinite(pw)
    k = int(ok.sum())
    if k == 0:
        return "cannot tell"
    b, w = int((pb[ok] < alpha).sum()), int((pw[ok] < alpha).sum())
    if b and w:
        return "mixed"
    if b >= k / 2:
        return "holds"
    if w >= k / 2:
        return "does not hold"
    return "cannot tell"



def table_verdict(table, metrics: Sequence[str], alpha: float = 0.05,
                  worse: bool = False) -> tuple[str, int, int, int]:
    """:func:`claim_verdict` over the rows of a correlation table (:func:`correlation_table`) whose metric is in
    ``metrics``: the claim "these metrics beat the baseline" (``worse=True``: "they do worse than it"), judged
    over every (metric, depth, ...) cell. Returns ``(verdict, cells significantly for, cells significantly
    against, cells)``; cells without a test (NaN p) count in the last number only."""
    t = table[table["metric"].isin(list(metrics))]
    pb, pw = (t["p_worse"], t["p_better"]) if worse else (t["p_better"], t["p_worse"])
    pb, pw = pb.to_numpy(dtype=float), pw.to_numpy(dtype=float)
    return claim_verdict(pb, pw, alpha), int((pb < alpha).sum()), int((pw < alpha).sum()), len(t)

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
