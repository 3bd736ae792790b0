"""The one correlation table: every metric (then every control row) on the same bootstrap resamples.

:func:`correlation_table` (columns :data:`TABLE_COLUMNS`; its resamples kept as a :class:`TableBootstrap` in
``attrs["bootstrap"]`` for the verdicts), :func:`correlation_tables` (stacked per human score), :func:`table_row`,
the one system-level table :func:`system_table` (systems resampled, or source segments),
the row-name scheme :func:`metric_name` (``"STM-4"``) with :func:`depth_baselines`, and the control rows' names
:data:`PLACEBO` and :data:`LENGTH` (:func:`length_controls`: length-only control "metrics").
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from syneval_nb.stats.correlation import (ArrayLike, as_pair, as_vector, dense_labels, partial_correlation, pearson,
                                         system_level, system_means, williams_test)
from syneval_nb.stats.meta import pairwise_accuracy
from syneval_nb.stats.resampling import (
    N_NULL,
    boot_matrix,
    estimate_row,
    holm_adjust,
    p_one_sided,
    resampling_units,
    bootstrap_partial_samples,
    bootstrap_weights,
    percentile_ci,
    permutation_distribution,
    placebo_distribution,
)

__all__ = ["LENGTH", "PLACEBO", "system_table", "table_row", "correlation_table", "correlation_tables",
           "metric_name", "length_controls"]


PLACEBO = "placebo"
"""Row name of the placebo in :func:`correlation_table`: the 95th percentile of the placebo distribution
(:func:`syneval_nb.stats.placebo_distribution`, N_NULL random columns), its central 95% as ``low, high``."""
LENGTH_ROWS = {"neg_hyp_len": "-hyp length", "neg_ref_len": "-ref length", "neg_abs_len_diff": "-|len diff|",
               "len_ratio": "len ratio"}
"""Row names of the length-only controls of :func:`length_controls` (the same names in every chapter)."""
LENGTH = LENGTH_ROWS["neg_abs_len_diff"]
"""Row name of the -|len diff| control (the kit's former single length control)."""
LENGTH_GIVEN = ("log hyp length", "log ref length")
"""The covariates of "beyond length" (:func:`length_covariates`): the partial correlation given both."""


# ----------------------------------------------------------------------------------------------------------------
# controls
# ----------------------------------------------------------------------------------------------------------------

def _ref_lists(ref_lens, n: int) -> list[list[float]]:
    flat = (isinstance(ref_lens, np.ndarray) and ref_lens.ndim == 1) or (len(ref_lens) > 0 and np.isscalar(ref_lens[0]))
    rl = [[float(r)] for r in ref_lens] if flat else [[float(x) for x in rs] for rs in ref_lens]
    if len(rl) != n:
        raise ValueError(f"hyp_len has {n} values but ref_lens has {len(rl)}")
    return rl


def length_controls(hyp_len: ArrayLike, ref_lens: Sequence[Sequence[float]] | ArrayLike) -> dict[str, np.ndarray]:
    """Length-only control "metrics", so a correlation can be read against what length alone explains.

    ``hyp_len[i]``: hypothesis length in tokens; ``ref_lens[i]``: the lengths of segment i's references (or one
    number per segment). With r_i the reference length closest to the hypothesis length (ties: the shorter, as
    in BLEU's brevity penalty) and rbar_i the mean reference length:

    * ``neg_hyp_len`` = -c_i and ``neg_ref_len`` = -rbar_i (MQM sums error weights, so longer segments score
      lower: raw length is a strong predictor on its own);
    * ``neg_abs_len_diff`` = -|c_i - r_i| (higher = closer in length, so it is oriented like a quality metric);
    * ``len_ratio`` = c_i / r_i (as is; values above 1 mean a longer hypothesis).

    Row names: :data:`LENGTH_ROWS`.
    """
    c = as_vector(hyp_len, "hyp_len")
    rl = _ref_lists(ref_lens, len(c))
    closest = np.empty(len(c))
    for i, (ci, rs) in enumerate(zip(c, rl)):
        if not rs or min(rs) <= 0:
            raise ValueError(f"segment {i} has no reference or a reference of length 0")
        closest[i] = min(rs, key=lambda r: (abs(r - ci), r))
    return {"neg_hyp_len": -c, "neg_ref_len": -np.array([np.mean(r) for r in rl]),
            "neg_abs_len_diff": -np.abs(c - closest), "len_ratio": c / closest}


def length_rows(hyp_len: ArrayLike, ref_lens) -> dict[str, np.ndarray]:
    """:func:`length_controls` keyed by their row names (:data:`LENGTH_ROWS`), ready for ``controls=``."""
    return {LENGTH_ROWS[k]: v for k, v in length_controls(hyp_len, ref_lens).items()}


def _spline(x: np.ndarray, name: str, knots=None) -> dict[str, np.ndarray]:
    """``x`` and the non-linear terms of its restricted cubic spline (Harrell 2015, sec. 2.4.5) with ``knots``
    (default: the 5th, 35th, 65th and 95th percentiles of ``x``, fewer where they coincide; no term below three
    distinct knots), each term divided by the squared knot range (Harrell's normalisation, for a well-conditioned
    fit)."""
    out = {name: x}
    k = np.unique(np.quantile(x, [0.05, 0.35, 0.65, 0.95])) if knots is None else np.asarray(knots, dtype=float)
    if len(k) < 3:
        return out
    cube = lambda u: np.maximum(u, 0.0) ** 3  # noqa: E731
    last, prev, scale = k[-1], k[-2], (k[-1] - k[0]) ** 2
    for j in range(len(k) - 2):
        out[f"{name} s{j + 1}"] = (cube(x - k[j]) - cube(x - prev) * (last - k[j]) / (last - prev)
                                   + cube(x - last) * (prev - k[j]) / (last - prev)) / scale
    return out


def given_text(names) -> str:
    """How a partial correlation names what it removes: ``"the length model"`` for the covariates of
    :func:`length_covariates` (flexible), else the names (``"log hyp length, log ref length"``: its linear
    model)."""
    names = tuple(names)
    if "log hyp x ref length" in names and set(LENGTH_GIVEN) <= set(names):
        return "the length model"
    return ", ".join(names)


def length_covariates(hyp_len: ArrayLike, ref_lens, model: str = "flexible",
                      knots: Mapping[str, Sequence[float]] | None = None) -> dict[str, np.ndarray]:
    """The covariates of "beyond length": the length model a partial correlation removes. With h = log(1 +
    hypothesis length) and r = log(1 + mean reference length) in tokens (1 + so that an empty hypothesis stays
    finite):

    * ``model="flexible"`` (default): h and r, each with its restricted cubic spline terms, those of h - r (4 knots at
      the 5/35/65/95th percentiles: a smooth non-linear curve in each, :func:`_spline`), and the product h r:
      MQM sums error weights, so quality falls with length, and a hypothesis much shorter or longer than its
      reference loses more than the linear terms say. On TED zh-en MQM z its length-only r is 0.371 (10-fold
      out of segment 0.356) against the linear model's 0.330 (0.325);
    * ``model="linear"``: h and r only (:data:`LENGTH_GIVEN`, the kit's model before issue 35).

    Pass as ``correlation_table(..., given=length_covariates(...))``; the fit is refitted in every resample.
    ``knots``: the spline knots of each of h, r and h - r (``{"log hyp length": [...], "log ref length": [...],
    "log length ratio": [...]}``, :func:`length_knots`), fixed so that a model fitted on one data set applies the
    same terms to another (the learned metric); default: the percentiles of these lengths."""
    c = as_vector(hyp_len, "hyp_len")
    rl = _ref_lists(ref_lens, len(c))
    h, r = np.log1p(c), np.log1p(np.array([np.mean(x) for x in rl]))
    if model == "linear":
        return {LENGTH_GIVEN[0]: h, LENGTH_GIVEN[1]: r}
    if model != "flexible":
        raise ValueError(f"model must be 'flexible' or 'linear', got {model!r}")
    k = knots or _knots(h, r)
    ratio = _spline(h - r, "log length ratio", k["log length ratio"])
    ratio.pop("log length ratio")  # linear in h and r already
    return {**_spline(h, LENGTH_GIVEN[0], k[LENGTH_GIVEN[0]]), **_spline(r, LENGTH_GIVEN[1], k[LENGTH_GIVEN[1]]),
            **ratio, "log hyp x ref length": h * r}


def length_knots(hyp_len: ArrayLike, ref_lens) -> dict[str, list[float]]:
    """The knots of :func:`length_covariates`' flexible model on these lengths: the distinct 5th, 35th, 65th and
    95th percentiles of h, r and h - r (h, r: log(1 + hypothesis / mean reference length))."""
    c = as_vector(hyp_len, "hyp_len")
    return _knots(np.log1p(c), np.log1p(np.array([np.mean(x) for x in _ref_lists(ref_lens, len(c))])))


def _knots(h: np.ndarray, r: np.ndarray) -> dict[str, list[float]]:
    q = [0.05, 0.35, 0.65, 0.95]
    return {name: np.unique(np.quantile(x, q)).tolist()
            for name, x in ((LENGTH_GIVEN[0], h), (LENGTH_GIVEN[1], r), ("log length ratio", h - r))}


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
    null: np.ndarray | None = None
    null_kind: str | None = None
    given: tuple = ()

    @property
    def beyond_length(self) -> bool:
        """True when the table's statistic is the partial r given the covariates ``given``."""
        return bool(self.given)

    def null_of(self, name: str | tuple) -> np.ndarray:
        """The null distribution a row must beat: the placebo distribution (the same for every row) or the row's
        own permutation distribution (system level)."""
        if self.null is None:
            raise KeyError("this table has no null distribution (placebo_column=False and null=None)")
        return self.null if self.null.ndim == 1 else self.null[:, self.index(name)]

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
                      williams: bool = False, given: Mapping[str, ArrayLike] | None = None,
                      null: str | None = None, n_null: int = N_NULL):
    """The one correlation table: one row per metric (then per control), all on the same bootstrap resamples.

    ``scores``: ``{name or (name, depth): values}`` (rows named by :func:`metric_name`, e.g. ``"STM-4"``);
    ``human``: the human scores; ``segments``: the source segment of each row (resampled as units, all systems'
    rows of a drawn segment together; ``None``: rows are independent units, e.g. systems at system level);
    ``clusters``: resample these instead (talks/documents; for ``within``/``darr`` each must hold whole
    segments). ``method`` in :data:`METHODS` (``threshold``/``metric_ties`` for ``darr``). ``controls``: extra
    rows (the length controls :func:`length_rows`). ``baseline``: a row name (or key) every other row is compared
    with, a mapping ``{row: baseline row}`` (see :func:`depth_baselines`), or ``None`` (no comparisons).

    **Beyond length** (``given={name: covariate}``, e.g. :func:`length_covariates`): the statistic becomes the
    partial Pearson r given the covariates (:func:`syneval_nb.stats.partial_correlation`; the regression refitted
    in every resample, :func:`syneval_nb.stats.bootstrap_partial_samples`), on the same resamples (same ``seed``
    and units) as the plain table; ``method`` must be ``"pearson"`` and the column ``method`` reads ``"partial
    pearson | the length model"`` (:func:`given_text`).

    **Null distribution** (``null``): ``"placebo"`` (the default when ``placebo_column``): ``n_null`` seeded random
    columns (:func:`syneval_nb.stats.placebo_distribution`, same statistic as the table), shown as the row
    :data:`PLACEBO` with ``r`` = its 95th percentile and ``low, high`` its central 95%; ``"permutation"`` (system
    level, few independent rows): ``n_null`` permutations of ``human`` per row
    (:func:`syneval_nb.stats.permutation_distribution`, Pearson only), no row shown. The verdict
    :func:`syneval_nb.stats.verdict_beats_placebo` reads it (``attrs["bootstrap"].null``).

    Columns (:data:`TABLE_COLUMNS`): ``metric``; ``method``; ``r`` the statistic on all rows; ``low, high`` its
    percentile interval at level 1 - ``alpha``; ``n`` rows; ``n_clusters`` resampling units; ``baseline`` the
    row compared with (``""`` when none); ``delta`` = r(metric) - r(baseline); ``delta_low, delta_high`` the
    percentile interval of the difference on the same resamples; ``p_better`` the one-sided bootstrap p that the
    row's metric beats the baseline ((k + 1) / (B + 1), k resamples with a difference <= 0), ``p_worse`` that
    the baseline beats it (k resamples >= 0); ``p_better_holm, p_worse_holm`` the same adjusted by :func:`holm` over every compared
    row of the table (``holm=False``: unadjusted; the chapters' verdicts use Holm over the whole chapter
    instead, :func:`syneval_nb.stats.holm_verdicts`); ``mark`` ``"+"`` if ``p_better_holm < alpha``, ``"-"`` if
    ``p_worse_holm < alpha``, else ``""``. ``williams=True`` adds ``williams_t, williams_p`` (:func:`williams_test`
    of row > baseline, Pearson only, n = rows: valid only when rows are independent, i.e. system level or one row
    per segment). With one resampling unit the intervals and p-values are NaN (not estimated; ``delta`` is
    kept). ``attrs["bootstrap"]``: the :class:`TableBootstrap` (for the verdicts).
    """
    import pandas as pd

    h = as_vector(human, "human")
    rows: dict[str, np.ndarray] = {}
    for k, v in scores.items():
        name = metric_name(k)
        if name in rows:
            raise ValueError(f"two scores are named {name!r}")
        rows[name] = as_pair(v, h, min_n=4, names=(name, "human"))[0]
    for name, v in (controls or {}).items():
        if name in rows:
            raise ValueError(f"control {name!r} has the name of a metric")
        rows[name] = as_pair(v, h, min_n=4, names=(name, "human"))[0]
    if PLACEBO in rows:
        raise ValueError(f"a score is named {PLACEBO!r}, the name of the placebo row")
    null = null if null is not None else ("placebo" if placebo_column else None)
    if null not in (None, "placebo", "permutation"):
        raise ValueError(f"null must be None, 'placebo' or 'permutation', got {null!r}")
    z = None
    if given:
        if method != "pearson" or williams:
            raise ValueError("given= (beyond length) is the partial Pearson r: use method='pearson', williams=False")
        z = np.column_stack([as_pair(v, h, min_n=4, names=(nm, "human"))[0] for nm, v in given.items()])
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
    if z is not None:
        est = np.array([partial_correlation(row, h, z) for row in mat])
        units = resampling_units(len(h), "pearson", dense_labels(segments, len(h), "segments"), clusters)
        samples, n_units = bootstrap_partial_samples(mat, h, z, n_resamples, seed, units), int(units.max()) + 1
        method_label = "partial pearson | " + given_text(given)
    else:
        est = np.array([estimate_row(row, h, method, segments, threshold, metric_ties) for row in mat])
        samples, n_units = boot_matrix(mat, h, method, segments, clusters, n_resamples, seed, threshold, metric_ties)
        method_label = method if isinstance(method, str) else "custom"
    lo, hi = percentile_ci(samples, alpha) if n_units > 1 else (np.full(len(names), np.nan),) * 2
    out = pd.DataFrame({"metric": names, "method": method_label, "r": est,
                        "low": lo, "high": hi, "n": len(h), "n_clusters": n_units,
                        "baseline": [base.get(nm, "") for nm in names]})
    delta, dlo, dhi, pb, pw = (np.full(len(names), np.nan) for _ in range(5))
    for i, nm in enumerate(names):
        if nm in base and base[nm] != nm:
            j = names.index(base[nm])
            delta[i] = est[i] - est[j]
            if n_units > 1:  # one unit: every resample is the data, nothing to test
                d = samples[:, i] - samples[:, j]
                dlo[i], dhi[i] = percentile_ci(d, alpha)
                pb[i], pw[i] = p_one_sided(d)
    pbh, pwh = (holm_adjust(pb), holm_adjust(pw)) if holm else (pb.copy(), pw.copy())
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
    null_values = None
    if null == "placebo":
        if callable(method):
            raise ValueError("a placebo distribution needs a named method; pass placebo_column=False")
        null_values = placebo_distribution(h, n_null, seed, method, segments, z)
        q = (np.nanquantile(null_values, [0.95, alpha / 2, 1 - alpha / 2]) if np.isfinite(null_values).any()
             else np.full(3, np.nan))  # constant scores: no placebo r can be estimated
        prow = {c: np.nan for c in out.columns}
        prow.update({"metric": PLACEBO, "method": method_label, "r": q[0], "low": q[1], "high": q[2], "n": len(h),
                     "n_clusters": n_units, "baseline": "", "mark": ""})
        out = pd.concat([out, pd.DataFrame([prow])], ignore_index=True)
    elif null == "permutation":
        if method != "pearson" or z is not None:
            raise ValueError("the permutation null is defined for the plain Pearson r")
        null_values = permutation_distribution(mat, h, n_null, seed)
    unit = "cluster" if clusters is not None else "segment" if segments is not None else "item"
    out.attrs["bootstrap"] = TableBootstrap(tuple(names), est, samples, base,
                                            {nm: float(pbh[i]) for i, nm in enumerate(names)}, alpha,
                                            method_label, unit, n_units, holm, null_values, null,
                                            tuple(given) if given else ())
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
# the system-level table
# ----------------------------------------------------------------------------------------------------------------

def system_table(scores: Mapping[Any, ArrayLike], human: ArrayLike, systems: Sequence | None = None, *,
                 segments: Sequence | None = None, baseline: str | tuple | Mapping | None = None,
                 controls: Mapping[str, ArrayLike] | None = None, n_resamples: int = 1000, seed: int = 0,
                 alpha: float = 0.05, holm: bool = True, n_null: int = N_NULL, method: str = "pearson"):
    """The one system-level table: each metric's per-system scores against the systems' human scores, Pearson r.

    **Systems resampled** (default): ``scores`` ``{name or (name, depth): one value per system}`` (e.g. corpus
    BLEU), ``human`` one value per system, in the same order. The systems are the independent units:
    :func:`correlation_table` without segments, each row compared with ``baseline`` on the same resamples and by
    Williams' test (valid here), the null ``n_null`` permutations of ``human`` per row (no placebo row: too few
    systems); ``controls``: extra rows. Columns :data:`TABLE_COLUMNS` and ``williams_t, williams_p``;
    ``attrs["bootstrap"]`` for the verdicts. ``method="spearman"`` (or another of :data:`METHODS` that needs no
    segments): that statistic on the same resamples, without Williams' test and the null (both are Pearson's).

    **Source segments resampled** (``systems`` and ``segments``, one label each per row; chapter 10):
    ``scores`` and ``human`` one value per row, a system's score the mean of its rows; the systems are fixed and
    the source segments resampled (:func:`bootstrap_weights`, the resamples of a segment-level table with the same
    ``seed``; the means weighted by the draws). Per metric the r of the system means
    (:func:`syneval_nb.stats.system_level`) and their pairwise accuracy
    (:func:`syneval_nb.stats.meta.pairwise_accuracy`, mt-metrics-eval's ``Agreement``: a pair tied in both
    agrees), each with its ``1 - alpha`` percentile interval. Columns ``metric, r, low, high, accuracy, acc low,
    acc high, systems, pairs``; no ``baseline``/``controls``."""
    import pandas as pd

    if (systems is None) != (segments is None):
        raise ValueError("system_table: give both systems= and segments= (one label per row: the source segments "
                         "are resampled) or neither (one value per system: the systems are resampled)")
    if systems is None:
        return correlation_table(scores, human, None, baseline=baseline, controls=controls, method=method,
                                 null="permutation" if method == "pearson" else None, n_null=n_null, alpha=alpha,
                                 placebo_column=False, n_resamples=n_resamples, seed=seed, holm=holm,
                                 williams=method == "pearson")
    if baseline is not None or controls or method != "pearson":
        raise ValueError("system_table over source segments makes no comparisons and is Pearson's: baseline=, "
                         "controls= and method= are for the table over systems (systems=None, segments=None)")
    h = as_vector(human, "human")
    sysl, seg = np.asarray(systems), np.asarray(segments)
    if len(sysl) != len(h) or len(seg) != len(h):
        raise ValueError(f"human has {len(h)} rows but systems has {len(sysl)} labels and segments {len(seg)}")
    names, inv = np.unique(sysl, return_inverse=True)
    if len(names) < 3:
        raise ValueError(f"a system-level table needs at least 3 systems, got {len(names)}")
    segs, sinv = np.unique(seg, return_inverse=True)
    covered = np.zeros((len(names), len(segs)), dtype=bool)
    covered[inv, sinv] = True
    if not covered.all():
        k = int(np.argmin(covered.sum(axis=1)))
        raise ValueError(f"system_table over source segments needs every system scored on the same source segments "
                         f"(a system's mean is otherwise over other sentences, and a resample can draw none of its "
                         f"rows): {names[k].item()!r} has rows on {int(covered[k].sum())} of the {len(segs)} segments")
    rows = {metric_name(k): as_pair(v, h, min_n=4, names=(metric_name(k), "human"))[0] for k, v in scores.items()}
    if len(rows) != len(scores):
        raise ValueError("two scores have the same row name")
    onehot = np.zeros((len(h), len(names)))
    onehot[np.arange(len(h)), inv] = 1.0
    out = []
    for name, p in rows.items():
        r_s, acc_s = [], []
        for w in bootstrap_weights(len(h), n_resamples, seed, groups=seg):
            n = w @ onehot
            pm, hm = (w * p) @ onehot / n, (w * h) @ onehot / n
            pc, hc = pm - pm.mean(axis=1, keepdims=True), hm - hm.mean(axis=1, keepdims=True)
            with np.errstate(invalid="ignore", divide="ignore"):
                r_s.append((pc * hc).sum(axis=1) / np.sqrt((pc * pc).sum(axis=1) * (hc * hc).sum(axis=1)))
            acc_s.append([pairwise_accuracy(a, b)[0] for a, b in zip(pm, hm)])  # the one accuracy rule, per resample
        (lo, hi), (alo, ahi) = (percentile_ci(np.concatenate(x), alpha) for x in (r_s, acc_s))
        acc, pairs = pairwise_accuracy(system_means(p, sysl)[1], system_means(h, sysl)[1])
        out.append({"metric": name, "r": system_level(p, h, sysl), "low": float(lo), "high": float(hi),
                    "accuracy": acc, "acc low": float(alo), "acc high": float(ahi), "systems": len(names),
                    "pairs": pairs})
    return pd.DataFrame(out)
