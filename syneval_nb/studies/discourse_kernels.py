"""Study code of notebook 07 (discourse structure in MT evaluation: DR and DR-lex, Guzman et al. 2014).

The combination methods (min-max normalization, uniform interpolation, the PRO-like tuned combination and its
cross-validation, the WMT12 tau, the controls) are concepts and live in :mod:`syneval_nb.metrics.combine`; this module
holds what the chapter does with them: the two data sets scored (:func:`ted_scores`, :func:`score`), the
combinations with their placebo distribution (:func:`placebo_matrix`, :func:`uniform_scores`,
:func:`tuned_scores`), the one combination table with clustered intervals (:func:`combination_table`: WMT12 tau at
segment level, Spearman at system level; :func:`partial_table` beyond length), the chapter's tables
(:func:`table2`, :func:`table3`, :func:`table4`, :func:`beyond_length_tables`, :func:`controls`) and its claims as
data (:func:`claims` on :func:`tables`, decided by :func:`syneval_nb.stats.decide_claims`). The notebook holds
the presentation (plots, display tables, the worked example, the Figure 4 analog).

Inference: every interval comes from one paired bootstrap that resamples source segments (all systems' rows of a
drawn segment together; ``clusters=`` talks as the variant) and evaluates every column on the same resamples,
so differences (a combination vs the metric alone, vs the same metric combined with the length column) have
intervals. Tuned combinations are fitted once per cross-validation fold; the bootstrap resamples the evaluated
rows' source segments of the out-of-fold predictions (the fit is not repeated per resample).

The placebo is a distribution: every base metric combined (uniformly, or tuned exactly like DR) with each of
``n_placebo`` (>= 100) random columns; "X helps" must beat the 95th percentile of the K averages over the base
metrics and the metrics alone (:func:`tables`); beyond length it is partial r (:func:`partial_table`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from scipy.stats import rankdata
from syneval_nb import stats
from syneval_nb.metrics import get as _get_metric, score_rows as _score_rows
from syneval_nb.data import load_ted_zhen_mqm, load_wmt21_deen, sample_segment_ids, ted_rst, wmt21_rst
from syneval_nb.metrics.combine import BASE_METRICS, DEFAULT_THRESHOLD, base_scores, higher_is_better, human_pair_ties, length_control, normalize, partial_correlation, segment_tau, system_base_scores, tuned_cv, tuned_half, uniform
from syneval_nb.metrics.discourse import DiscourseSimilarity
from syneval_nb.metrics.learned import LearnedMetric, balance, build_pool, feature_frame
from syneval_nb.metrics.lexical import tokenize
from syneval_nb.stats.resampling import pair_tau_samples
from syneval_nb.studies.common import MAX_HEADLINE_VERDICTS, headline_verdicts
from syneval_nb.studies.learned_metric import deen_long
from syneval_nb.trees.rst import DEFAULT_LAM, n_edus

__all__ = ["Settings", "score", "ted_scores", "discourse_columns", "table2", "table3", "table4",
           "beyond_length_tables", "controls", "judged_tables", "tables", "claims", "results", "PLACEBO_COL",
           "MAIN_HUMAN"]


EXTRAS = ("DR", "DR-lex", stats.LENGTH)
"""The columns combined with each base metric: the two discourse measures and the length-only control
``-|len(h) - len(r)|`` (the placebo is a distribution of columns, :func:`placebo_matrix`)."""
COMBOS = {"DR": "+dr", "DR-lex": "+dr-lex", stats.LENGTH: "+length"}
"""Table column of the combination with each extra (``Orig.`` is the metric alone)."""
PLACEBO_COL = "+placebo (p95)"
"""Table column of the placebo combinations: the 95th percentile of the metric combined with each of the K random
columns (:func:`placebo_matrix`; the ``average`` row: the 95th percentile of the K averages, the null of
:func:`helps_verdict`)."""
N_PLACEBO = 100
"""Default number K of placebo columns (at least 100)."""
_BASELINE = "chrF"
"""The headline baseline of every chapter: the first base metric of every combination table."""
THRESHOLD_Z = 0.2
"""Pair threshold on rater-normalized MQM (``mqm_z``): 0.5 MQM points (:data:`combine.DEFAULT_THRESHOLD`) over
the median rater's standard deviation (about 2.4 points on TED zh-en) is 0.2."""

# ---------------------------------------------------------------------------------------------------------------
# the two data sets, scored
# ---------------------------------------------------------------------------------------------------------------


def train_learned(folder=None, n_sources: int | None = None, seed: int = 0, C: float = 50.0, sigma: float = 10.0):
    """The Kulesza & Shieber learned metric (:class:`syneval_nb.metrics.learned.LearnedMetric`) for the combinations:
    trained on WMT21 de-en to tell reference B (human) from the 19 MT systems, all scored against reference A,
    with balanced classes (:func:`syneval_nb.metrics.learned.balance`) over ``n_sources`` source lines (all by default),
    at the paper's optimum ``C = 50, sigma = 10``. No human quality judgment is used, so scoring TED with it
    leaks nothing; on de-en the same lines' MT outputs are later scored (their DA never enters training)."""

    pool = build_pool(deen_long(load_wmt21_deen(folder).segments), human="ref_B", reference="ref_A")
    bal = balance(pool, seed=seed)
    ids = sample_segment_ids(bal["seg_id"], n_sources, seed)
    bal = bal[bal["seg_id"].isin(ids)].reset_index(drop=True)
    X = feature_frame(list(bal["hyp"]), [[r] for r in bal["ref"]], progress=False)
    return LearnedMetric(C=C, sigma=sigma, seed=seed).fit(X, bal["label"].to_numpy())


def discourse_columns(hyp_rst: Sequence[Mapping | None], ref_rst: Sequence[Mapping | None],
                      lam: float | None = None, progress: bool = True) -> pd.DataFrame:
    """``DR``, ``DR-lex`` (NaN where a tree is missing; kernel decay ``lam``, default
    :data:`syneval_nb.trees.rst.DEFAULT_LAM`) and the EDU counts ``edus_hyp``, ``edus_ref``."""

    out = {}
    for lex, name in ((False, "DR"), (True, "DR-lex")):
        sim = DiscourseSimilarity(lexicalized=lex, lam=DEFAULT_LAM if lam is None else lam)
        out[name] = sim.score_many(hyp_rst, ref_rst, missing="nan", progress=progress)
    out["edus_hyp"] = [np.nan if t is None else n_edus(t) for t in hyp_rst]
    out["edus_ref"] = [np.nan if t is None else n_edus(t) for t in ref_rst]
    return pd.DataFrame(out)


def score_frame(hyps: Sequence[str], refs: Sequence[str], hyp_rst: Sequence, ref_rst: Sequence,
                ptb_hyps: Sequence | None = None, ptb_refs: Sequence | None = None, systems: Sequence | None = None,
                metrics: Sequence[str] | None = None, lam: float | None = None, learned=None,
                progress: bool = True, seed: int = 0) -> pd.DataFrame:
    """All segment scores against one reference: chrF (:data:`_BASELINE`), the base metrics (and ``learned``, a fitted
    :class:`~syneval_nb.metrics.learned.LearnedMetric`, when given), DR, DR-lex, EDU counts, the ``length`` control and
    the ``placebo`` column (:func:`syneval_nb.stats.placebo` with ``seed``). ``attrs["corpus"]`` holds the base
    metrics' corpus scores per system."""
    names = [m for m in (metrics or BASE_METRICS) if m != _BASELINE]
    base, corpus = base_scores(hyps, [[r] for r in refs], ptb_hyps,
                               None if ptb_refs is None else [[p] for p in ptb_refs], names, systems, progress)
    chrf = _score_rows({_BASELINE: _get_metric(_BASELINE)}, list(hyps), [[r] for r in refs], systems)
    base, corpus = pd.concat([chrf.segment, base], axis=1), pd.concat([chrf.corpus, corpus], axis=1)
    if learned is not None:
        base["learned"] = learned.sentence_scores(list(hyps), [[r] for r in refs])
    disc = discourse_columns(hyp_rst, ref_rst, lam, progress)
    out = pd.concat([base, disc], axis=1)
    out[stats.LENGTH] = length_control(hyps, refs)
    out[stats.PLACEBO] = stats.placebo(len(out), seed)
    out.attrs["corpus"] = corpus
    return out


def ted_scores(folder=None, reference: str = "refB", sample: int | None = None, seed: int = 0,
               include_human: bool = False, metrics: Sequence[str] | None = None, lam: float | None = None,
               learned=None, progress: bool = True, permute_human: int | None = None) -> pd.DataFrame:
    """TED zh-en, scored: one row per (system, segment) of the MT systems (and the other human translation with
    ``include_human``), against ``reference`` (``"refB"``, WMT21's choice, or ``"ref"``). ``sample`` = number of
    segments drawn with ``seed`` (all systems of each drawn segment kept). Columns: ``system, doc, seg_id, mqm,
    mqm_z``, the base metrics, ``DR, DR-lex, edus_hyp, edus_ref, length, placebo``. ``permute_human``: an integer
    shuffles ``mqm`` and ``mqm_z`` across all rows with :func:`syneval_nb.stats.permute_human` (the placebo
    switch; None: unchanged)."""

    if reference not in ("ref", "refB"):
        raise ValueError(f"reference must be 'ref' or 'refB', got {reference!r}")
    ted = load_ted_zhen_mqm(folder)
    rst = ted_rst(ted, folder)
    for k, v in rst.items():
        ted[k] = pd.Series(v, index=ted.index, dtype=object)
    keep = (ted["system"] != reference) & (include_human | ~ted["is_human"])
    keep &= ted["seg_id"].isin(sample_segment_ids(ted["seg_id"], sample, seed)) & ted["mqm"].notna()
    d = ted[keep].reset_index(drop=True)
    scores = score_frame(list(d["target"]), list(d[reference]), list(d["rst"]), list(d[f"rst_{reference}"]),
                         list(d["ptb"]), list(d[f"ptb_{reference}"]), list(d["system"]), metrics, lam, learned,
                         progress, seed)
    meta = d[["system", "doc", "seg_id", "mqm", "mqm_z", "target", reference, "rst", f"rst_{reference}"]].rename(
        columns={reference: "reference", f"rst_{reference}": "rst_reference"})
    for col in ("mqm", "mqm_z"):
        meta[col] = stats.permute_human(meta[col].to_numpy(dtype=float), permute_human)
    out = pd.concat([meta, scores], axis=1)
    out.attrs["corpus"] = scores.attrs["corpus"]
    return out


def wmt21_scores(folder=None, reference: str = "A", sample: int | None = None, seed: int = 0,
                 metrics: Sequence[str] | None = None, lam: float | None = None, learned=None,
                 progress: bool = True, permute_human: int | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """WMT21 de-en, scored against reference ``A`` (the primary one; ``HUMAN`` in the DA is ref-B): segment frame
    (``system, seg_id, target, reference, rst, rst_reference``, metrics, ``DR, DR-lex``, EDU counts, ``length``,
    ``placebo``) of the 19 MT systems on ``sample`` lines, and the system DA (``system, da_z, da_raw``) of those
    systems (``permute_human``: an integer shuffles both across the systems)."""

    if reference not in ("A", "B"):
        raise ValueError(f"reference must be 'A' or 'B', got {reference!r}")
    w = load_wmt21_deen(folder)
    seg = w.segments
    rst = wmt21_rst(seg, folder)
    seg = seg.assign(**{k: pd.Series(v, index=seg.index, dtype=object) for k, v in rst.items()})
    seg = seg[seg["seg_id"].isin(sample_segment_ids(seg["seg_id"], sample, seed))].reset_index(drop=True)
    scores = score_frame(list(seg["target"]), list(seg[f"ref_{reference}"]), list(seg["rst"]),
                         list(seg[f"rst_ref_{reference}"]), list(seg["ptb"]), list(seg[f"ptb_ref_{reference}"]),
                         list(seg["system"]), metrics, lam, learned, progress, seed)
    da = w.system_da[~w.system_da["is_human"]][["system", "da_z", "da_raw"]].reset_index(drop=True)
    for col in ("da_z", "da_raw"):
        da[col] = stats.permute_human(da[col].to_numpy(dtype=float), permute_human)
    meta = seg[["system", "seg_id", "target", f"ref_{reference}", "rst", f"rst_ref_{reference}"]].rename(
        columns={f"ref_{reference}": "reference", f"rst_ref_{reference}": "rst_reference"})
    out = pd.concat([meta, scores], axis=1)
    out.attrs["corpus"] = scores.attrs["corpus"]
    return out, da


# ---------------------------------------------------------------------------------------------------------------
# combinations: the score vectors
# ---------------------------------------------------------------------------------------------------------------


def placebo_matrix(n: int, n_columns: int = N_PLACEBO, seed: int = 0) -> np.ndarray:
    """The placebo distribution's columns, min-max normalized: the first ``n_columns`` (K >= 100) random columns
    of length ``n`` of :func:`syneval_nb.stats.placebo_columns` (the generator of the correlation tables' placebo
    distribution, seed ``seed``), each scaled to [0, 1] like every combined column; ``(K, n)``."""
    if int(n_columns) < 100:
        raise ValueError(f"the placebo distribution needs at least 100 columns, got n_placebo={n_columns}")
    x = stats.placebo_columns(int(n), int(n_columns), int(seed))
    lo, hi = x.min(axis=1, keepdims=True), x.max(axis=1, keepdims=True)
    return (x - lo) / (hi - lo)


def uniform_scores(normalized: pd.DataFrame, base: Sequence[str], extras: Sequence[str] = EXTRAS,
                   placebo: np.ndarray | None = None) -> dict[tuple[str, str], np.ndarray]:
    """Uniform combinations (Guzman et al. section 4.2): ``{(row, column): scores}`` with ``(m, "Orig.")`` the
    normalized metric ``m`` alone and ``(m, COMBOS[e])`` the mean of ``m`` and the extra ``e`` (DR, DR-lex, the
    length control) for every base metric ``m``; rows ``DR`` and ``DR-lex`` alone (``Orig.``). With ``placebo``
    (:func:`placebo_matrix`, (K, n)), ``(m, PLACEBO_COL)`` is the (K, n) matrix of ``m`` combined with each
    random column."""
    out = {(e, "Orig."): normalized[e].to_numpy(dtype=float) for e in ("DR", "DR-lex")}
    for m in base:
        out[(m, "Orig.")] = normalized[m].to_numpy(dtype=float)
        for e in extras:
            out[(m, COMBOS[e])] = uniform(normalized, [m, e])
        if placebo is not None:
            out[(m, PLACEBO_COL)] = (out[(m, "Orig.")] + placebo) / 2
    return out


def _tuned(f: np.ndarray, columns: np.ndarray | None, h, seg, groups, mode, n_folds, seed, threshold, C):
    """Scores of the features ``f`` (n, p) tuned by ``mode``; with ``columns`` (k, n), of ``f`` plus each column
    ((k, n): one stack, so the fold pairs are built once)."""
    if columns is not None:
        f = np.concatenate([np.broadcast_to(f, (len(columns), *f.shape)), columns[:, :, None]], axis=2)
    if mode == "cv":
        return tuned_cv(f, h, seg, groups, n_folds, threshold, C)[0]
    return tuned_half(f, h, seg, groups, seed, threshold, C)[0]


def tuned_scores(normalized: pd.DataFrame, human: Sequence[float], segments: Sequence, groups: Sequence,
                 base: Sequence[str], mode: str = "cv", n_folds: int = 10, seed: int = 0,
                 threshold: float = DEFAULT_THRESHOLD, C: float = 1.0, extras: Sequence[str] = EXTRAS,
                 placebo: np.ndarray | None = None, n_jobs: int = 1) -> dict[tuple[str, str], np.ndarray]:
    """Tuned combinations (the paper's Table 4 with ``mode="cv"``, Table 5 with ``mode="half"``): the
    out-of-fold scores of :func:`syneval_nb.metrics.combine.tuned_cv` (fitted once per fold over whole documents
    ``groups``) or the test-half scores of :func:`syneval_nb.metrics.combine.tuned_half`, NaN on rows not evaluated.
    Keys as :func:`uniform_scores`: ``(m, "Orig.")`` the metric alone on the evaluated rows, ``(m, "+dr")`` ...
    ``(m, "+length")``, and the row ``"Tuned all"`` (every base metric tuned together, ``Orig.``, and with each
    extra). With ``placebo`` (:func:`placebo_matrix`, (K, n)), ``(m, PLACEBO_COL)`` is the (K, n) matrix of the
    metric tuned with each random column, exactly like DR (the same folds and fold pairs, built once per chunk of
    columns), the K columns split over ``n_jobs`` joblib processes (the scores do not depend on ``n_jobs``). NaN
    features are 0."""
    if mode not in ("cv", "half"):
        raise ValueError(f"mode must be 'cv' or 'half', got {mode!r}")
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or n_jobs < 1:
        raise ValueError(f"n_jobs must be a whole number >= 1, got {n_jobs!r}")
    args = (np.asarray(human, dtype=float), np.asarray(segments), groups, mode, n_folds, seed, threshold, C)

    def run(cols: Sequence[str], columns: np.ndarray | None = None) -> np.ndarray:
        f = normalized[list(cols)].to_numpy(dtype=float)
        f = np.where(np.isnan(f), 0.0, f)
        if columns is None:
            return _tuned(f, None, *args)
        chunks = np.array_split(columns, min(int(n_jobs), len(columns)))
        if len(chunks) == 1:
            return _tuned(f, columns, *args)
        return np.vstack(Parallel(n_jobs=len(chunks))(delayed(_tuned)(f, c, *args) for c in chunks))

    evaluated = np.isfinite(run([base[0]]))

    def alone(col: str) -> np.ndarray:
        return np.where(evaluated, normalized[col].to_numpy(dtype=float), np.nan)

    out = {(e, "Orig."): alone(e) for e in ("DR", "DR-lex")}
    for m in list(base) + ["Tuned all"]:
        cols = list(base) if m == "Tuned all" else [m]
        out[(m, "Orig.")] = run(cols) if m == "Tuned all" else alone(m)
        for e in extras:
            out[(m, COMBOS[e])] = run(cols + [e])
        if placebo is not None:
            out[(m, PLACEBO_COL)] = run(cols, placebo)
    return out


# ---------------------------------------------------------------------------------------------------------------
# evaluation with clustered intervals
# ---------------------------------------------------------------------------------------------------------------


def _is_base(row: str) -> bool:
    return row not in ("DR", "DR-lex")


def _summarize(keys: Sequence[tuple[str, str]], est: np.ndarray, samples: np.ndarray, *, method: str, unit: str,
               n_units: int, alpha: float, null: Mapping[str, np.ndarray] | None = None, given: tuple = ()
               ) -> pd.DataFrame:
    """Wide table (rows, combination columns) of the estimates, its interval columns, the ``average`` row over
    the base metrics (DR / DR-lex alone left out, as the paper's Tables 2-4) and the ``diff.`` row (average of a
    combination minus average of ``Orig.``); ``attrs["bootstrap"]``: a :class:`syneval_nb.stats.TableBootstrap`
    whose rows are the averages per column (``Orig.``, ``+dr``, ``+dr-lex``, ``+length``), for
    :func:`syneval_nb.stats.verdict_beats`. ``null`` (``{row: the statistic of its K placebo combinations}``)
    adds the column :data:`PLACEBO_COL`: each row's 95th percentile (``low, high``: the central 1 - alpha of its K
    values), the ``average`` row the 95th percentile of the K averages over the base metrics, which are the
    bootstrap's ``null`` (:func:`helps_verdict`); ``given``: the covariates of a partial table (beyond length).
    ``attrs["effects"]``: each
    combination's average change against ``Orig.`` and against that 95th percentile (held fixed), with
    intervals."""
    rows = list(dict.fromkeys(r for r, _ in keys))
    cols = list(dict.fromkeys(c for _, c in keys))
    idx = {k: i for i, k in enumerate(keys)}
    lo, hi = stats.percentile_ci(samples, alpha)
    wide = pd.DataFrame(np.nan, index=rows, columns=cols)
    low, high = wide.copy(), wide.copy()
    for k, i in idx.items():
        wide.loc[k[0], k[1]], low.loc[k[0], k[1]], high.loc[k[0], k[1]] = est[i], lo[i], hi[i]
    avg_est, avg_samples = {}, {}
    for c in cols:
        members = [idx[(r, c)] for r in rows if _is_base(r) and (r, c) in idx]
        with np.errstate(invalid="ignore"):
            avg_est[c] = float(np.mean(est[members]))
            avg_samples[c] = np.nanmean(samples[:, members], axis=1) if len(samples) else np.empty(0)
    names = tuple(cols)
    avg_null = None
    if null:
        avg_null = np.mean([null[r] for r in rows if _is_base(r) and r in null], axis=0)
        wide[PLACEBO_COL] = low[PLACEBO_COL] = high[PLACEBO_COL] = np.nan
        for r, v in null.items():
            wide.loc[r, PLACEBO_COL] = np.nanquantile(v, 0.95)
            low.loc[r, PLACEBO_COL], high.loc[r, PLACEBO_COL] = np.nanquantile(v, [alpha / 2, 1 - alpha / 2])
        cols.append(PLACEBO_COL)
        avg_est[PLACEBO_COL] = float(np.nanquantile(avg_null, 0.95))
        avg_samples[PLACEBO_COL] = np.full(len(samples), avg_est[PLACEBO_COL])  # the fixed percentile
    table = pd.concat([wide, pd.Series(avg_est).to_frame("average").T,
                       pd.Series({c: avg_est[c] - avg_est["Orig."] if c != "Orig." else np.nan for c in cols})
                       .to_frame("diff.").T])
    boot = stats.TableBootstrap(names, np.array([avg_est[c] for c in names]),
                                np.column_stack([avg_samples[c] for c in names]), {}, {}, alpha, method, unit,
                                n_units, False, avg_null, "placebo" if null else None, given=tuple(given))
    eff = []
    for c in cols:
        if c == "Orig.":
            continue
        row = {"combination": c, "average": avg_est[c]}
        for ref in ("Orig.", PLACEBO_COL):
            if ref == c or ref not in avg_samples:
                continue
            d = avg_samples[c] - avg_samples[ref]
            row[f"vs {ref}"] = avg_est[c] - avg_est[ref]
            row[f"vs {ref} low"], row[f"vs {ref} high"] = (float(v) for v in stats.percentile_ci(d, alpha))
        eff.append(row)
    table.attrs["bootstrap"] = boot
    table.attrs["low"], table.attrs["high"] = low, high
    table.attrs["effects"] = pd.DataFrame(eff).set_index("combination")
    return table


def _spearman_rows(rows: np.ndarray, h: np.ndarray) -> np.ndarray:
    """``[stats.spearman(x, h) for x in rows]`` bit for bit: ``scipy.stats.spearmanr``'s ``np.corrcoef`` of the
    ranks, ranking ``h`` once and the rows in one call (NaN or constant input: :func:`syneval_nb.stats.spearman`)."""
    ranks, h_ranks, plain = rankdata(rows, axis=1), rankdata(h), np.isfinite(h).all() and np.ptp(h) > 0
    return np.array([np.corrcoef(np.column_stack((r, h_ranks)), rowvar=False)[1, 0]
                     if plain and np.isfinite(x).all() and np.ptp(x) > 0 else stats.spearman(x, h)
                     for x, r in zip(rows, ranks)])


def combination_table(scores: Mapping[tuple[str, str], Sequence[float]], human: Sequence[float],
                      segments: Sequence | None, *, threshold: float = DEFAULT_THRESHOLD,
                      texts: Sequence[str] | None = None, metric_ties: str = "discordant",
                      clusters: Sequence | None = None, n_resamples: int = 1000, seed: int = 0,
                      alpha: float = 0.05) -> pd.DataFrame:
    """The chapter's one table of combinations (:func:`uniform_scores` / :func:`tuned_scores`), with the
    ``average`` and ``diff.`` rows, the intervals and the bootstrap of the averages in ``attrs``.

    Segment level (``segments`` given): the WMT12 tau of each ``(row, column)`` (``metric_ties="exclude"``:
    without the tie penalty), bootstrap over source segments or ``clusters`` by
    :func:`syneval_nb.stats.resampling.pair_tau_samples`; the (K, n) placebo entries ``(m, PLACEBO_COL)`` give
    each row's K taus (no resampling: the null distribution). System level (``segments=None``, the rows are
    systems): Spearman by :func:`syneval_nb.stats.system_table` resampling the systems (few: wide
    intervals), the placebo entries' K Spearman values the null. Layout: see :func:`_summarize`."""
    keys = [k for k in scores if np.ndim(scores[k]) == 1]
    h = np.asarray(human, dtype=float)
    if segments is None:
        names = {f"{r} {c}": (r, c) for r, c in keys}
        t = stats.system_table({n: scores[k] for n, k in names.items()}, h, method="spearman", holm=False,
                               n_resamples=n_resamples, seed=seed, alpha=alpha)
        boot = t.attrs["bootstrap"]
        null = {r: _spearman_rows(np.asarray(v, dtype=float), h) for (r, _), v in scores.items() if np.ndim(v) == 2}
        return _summarize(keys, np.asarray(boot.estimates), boot.samples, method="spearman", unit="item",
                          n_units=len(h), alpha=alpha, null=null)
    kw = dict(threshold=threshold, distinct=texts, metric_ties=metric_ties, clusters=clusters)
    mat = np.vstack([np.asarray(scores[k], dtype=float) for k in keys])
    est, samples, n_units = pair_tau_samples(mat, human, segments, n_resamples=n_resamples, seed=seed, **kw)
    null = {r: pair_tau_samples(v, human, segments, n_resamples=0, **kw)[0] for (r, _), v in scores.items()
            if np.ndim(v) == 2}
    method = "wmt12 tau" if metric_ties == "discordant" else "tau, metric ties excluded"
    return _summarize(keys, est, samples, method=method, unit="cluster" if clusters is not None else "segment",
                      n_units=n_units, alpha=alpha, null=null)


def partial_table(scores: Mapping[tuple[str, str], Sequence[float]], frame: pd.DataFrame, human: str, *,
                  clusters: Sequence | None = None, n_resamples: int = 1000, seed: int = 0,
                  alpha: float = 0.05) -> pd.DataFrame:
    """The base metrics' combinations beyond length: partial r with ``frame[human]`` given the flexible length
    model (13a lengths of ``target``, ``reference``; refitted per resample of source segments or ``clusters``), on
    rows where all have a score, laid out as :func:`combination_table`."""
    keys = [k for k in scores if np.ndim(scores[k]) == 1 and _is_base(k[0])]
    cols = {f"{r} {c}": np.asarray(scores[k], dtype=float) for k in keys for r, c in [k]}
    h = frame[human].to_numpy(dtype=float)
    ok = np.logical_and.reduce([np.isfinite(v) for v in cols.values()]) & np.isfinite(h)
    f = frame[ok]
    given = stats.length_covariates([len(tokenize(t)) for t in f["target"]],
                                    [len(tokenize(t)) for t in f["reference"]])
    t = stats.correlation_table({n: v[ok] for n, v in cols.items()}, h[ok], f["seg_id"].to_numpy(),
                                clusters=None if clusters is None else np.asarray(clusters)[ok], placebo_column=False,
                                holm=False, n_resamples=n_resamples, seed=seed, alpha=alpha, given=given)
    b = t.attrs["bootstrap"]
    i = [b.index(n) for n in cols]
    return _summarize(keys, b.estimates[i], b.samples[:, i], method=b.method, unit=b.unit, n_units=b.n_clusters,
                      alpha=alpha, given=b.given)


# ---------------------------------------------------------------------------------------------------------------
# controls
# ---------------------------------------------------------------------------------------------------------------


def control_table(frame: pd.DataFrame, metrics: Sequence[str], human: str = "mqm",
                  threshold: float = DEFAULT_THRESHOLD) -> pd.DataFrame:
    """Segment-level controls on a :func:`ted_scores` frame, one row per metric (plus the ``length`` and
    ``placebo`` rows): ``tau`` (WMT12, identical-translation pairs dropped), ``tau_no_tie_penalty`` (the same
    with metric ties left out), ``tie_rate`` (share of human pairs the metric ties, pairs of identical
    translations included), ``pearson`` with the human score (rows with a NaN score dropped, as for the tau),
    ``partial_length`` (the partial r given the flexible length model, :func:`syneval_nb.stats.length_covariates`
    of the 13a lengths of ``target`` and ``reference``) and ``partial_length_edus`` (also ``|edus_hyp -
    edus_ref|`` partialled out)."""
    h = frame[human].to_numpy(dtype=float)
    seg, texts = frame["seg_id"].to_numpy(), frame["target"].to_numpy(dtype=object)
    z1 = np.column_stack(list(stats.length_covariates([len(tokenize(t)) for t in frame["target"]],
                                                      [len(tokenize(t)) for t in frame["reference"]]).values()))
    edu_diff = np.abs(frame["edus_hyp"].to_numpy(dtype=float) - frame["edus_ref"].to_numpy(dtype=float))
    z2 = np.column_stack([z1, edu_diff])
    rows = {}
    for m in list(metrics) + [stats.LENGTH, stats.PLACEBO]:
        x = frame[m].to_numpy(dtype=float)
        if not higher_is_better(m):
            x = -x
        ties = human_pair_ties(x, h, seg, threshold, texts)
        ok = np.isfinite(x)
        b, w = stats.better_worse_pairs(h[ok], seg[ok], threshold, texts[ok])
        c, d, _ = stats.concordance_counts(x[ok], b, w)
        rows[m] = {"tau": segment_tau(x, h, seg, threshold, texts=texts),
                   "tau_no_tie_penalty": (c - d) / (c + d) if c + d else np.nan, "tie_rate": ties["tie_rate"],
                   "pearson": stats.pearson(x[ok], h[ok]),
                   "partial_length": np.nan if m == stats.LENGTH else partial_correlation(x, h, z1),
                   "partial_length_edus": np.nan if m == stats.LENGTH else partial_correlation(x, h, z2)}
    return pd.DataFrame.from_dict(rows, orient="index")


def correlation_table(frame: pd.DataFrame, metrics: Sequence[str], human: str = "mqm_z", *,
                      clusters: str | None = None, n_resamples: int = 1000, seed: int = 0,
                      method: str = "pearson", beyond_length: bool = False) -> pd.DataFrame:
    """:func:`syneval_nb.stats.correlation_table` of ``metrics`` (oriented higher-is-better) with the human score
    column ``human`` on the rows where every metric has a score, resampling source segments (``clusters``: a
    column such as ``"doc"``, the talks), with the placebo distribution and the four length controls (13a tokens
    of ``target`` and ``reference``); no baseline. ``beyond_length``: the partial r given the length model
    (:func:`syneval_nb.stats.length_covariates`, same resamples)."""
    x = {m: frame[m].to_numpy(dtype=float) * (1 if higher_is_better(m) else -1) for m in metrics}
    ok = np.logical_and.reduce([np.isfinite(v) for v in x.values()])
    f = frame[ok]
    hl = [len(tokenize(t)) for t in f["target"]]
    rl = [len(tokenize(t)) for t in f["reference"]]
    return stats.correlation_table({m: v[ok] for m, v in x.items()}, f[human].to_numpy(dtype=float),
                                   f["seg_id"].to_numpy(), method=method,
                                   clusters=None if clusters is None else f[clusters].to_numpy(),
                                   controls=stats.length_rows(hl, rl), n_resamples=n_resamples, seed=seed,
                                   given=stats.length_covariates(hl, rl) if beyond_length else None)


# ---------------------------------------------------------------------------------------------------------------
# claims
# ---------------------------------------------------------------------------------------------------------------

JUDGED_EXTRAS = ("DR", "DR-lex")
"""The discourse measures the claims are about."""


def _helps(table: pd.DataFrame, extra: str) -> dict:
    """The verdict "``extra`` helps" on a tau / Spearman combination table (test ``beats the placebo``): the
    average over the base metrics of the combination with ``extra`` minus q, the 95th percentile of the K placebo
    averages (:data:`PLACEBO_COL`); interval and p = (k + 1) / (B + 1) from the same B resamples (q fixed); it
    also needs its edge over the metrics alone (``Orig.``) above 0 (``requires``), so it never holds where the
    metrics alone do better. No existing :class:`syneval_nb.stats.Claim` test takes its p from the resamples of
    a difference to a fixed percentile, so :func:`tables` computes it and the claim reads it (test ``given``)."""
    col, b = COMBOS[extra], table.attrs["bootstrap"]
    edge = b.column(col) - b.column("Orig.")
    edge = {"text": f"{col}'s edge over the metrics alone (average {col} - average Orig.)",
            "ci": stats.percentile_ci(edge[np.isfinite(edge)], b.alpha)}
    null = b.null_of(col)
    q = float(np.nanquantile(null, 0.95))
    name, _, rest = b.method.partition(", ")
    text = f"{name}({col}{', ' + rest if rest else ''}) - 95% percentile of {len(null)} placebo combinations"
    return stats.verdict_from_samples("beats the placebo", text, b.estimate(col) - q, b.column(col) - q, b.alpha,
                                      stats.unit_text(b), n_units=b.n_clusters, requires=edge, n_null=len(null),
                                      null_quantile=q)


def judged_tables(t2: Mapping[str, pd.DataFrame], t3: Mapping, t4: Mapping,
                  bl: Mapping[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """The combination tables the claims judge (MQM z), by the words of their claims: uniform and tuned
    (cross-validated) at segment level with and without the tie penalty and beyond length (``bl``,
    :func:`beyond_length_tables`), uniform at system level on both data sets (:func:`table2`)."""
    return {"uniform, segment level, WMT12 tau": t3[(MAIN_HUMAN, "discordant")],
            "uniform, segment level, partial r given the length model": bl["uniform"],
            "uniform, segment level, tau without tie penalty": t3[(MAIN_HUMAN, "exclude")],
            "tuned cross-validated, segment level, WMT12 tau": t4[(MAIN_HUMAN, "cv", "discordant")],
            "tuned cross-validated, segment level, partial r given the length model": bl["tuned cross-validated"],
            "tuned cross-validated, segment level, tau without tie penalty": t4[(MAIN_HUMAN, "cv", "exclude")],
            "uniform, system level, WMT21 de-en DA": t2["WMT21 de-en DA"],
            "uniform, system level, TED MQM z": t2["TED zh-en MQM z"]}


def tables(judged: Mapping[str, pd.DataFrame], correlations: pd.DataFrame | None = None,
           partial: pd.DataFrame | None = None) -> dict:
    """What the :func:`claims` read (:func:`syneval_nb.stats.decide_claims`): each judged table beyond length
    (:func:`partial_table`) under its label; for every other judged table (tau or Spearman with a placebo
    distribution) and each discourse measure, ``(label, measure)``: the precomputed "helps" verdict
    (:func:`_helps`); ``"correlations"`` (a :func:`correlation_table`) and ``"beyond length"`` (the same,
    ``beyond_length``) when given."""
    out: dict = {}
    for what, t in judged.items():
        if t.attrs["bootstrap"].beyond_length:
            out[what] = t
        else:
            out.update({(what, e): _helps(t, e) for e in JUDGED_EXTRAS})
    if correlations is not None:
        out["correlations"] = correlations
    if partial is not None:
        out["beyond length"] = partial
    return out


def claims(tables_: Mapping) -> list[stats.Claim]:
    """The chapter's claims on :func:`tables`, in order: per judged table and discourse measure X, "X helps
    (what)" (test ``given``: the verdict :func:`tables` computed) or, beyond length, "X helps beyond length
    (what)" (``beats``: the average partial r of the combinations with X minus the metrics alone's); then per
    measure "X correlates with MQM z", "X beats the placebo" and "X correlates with MQM z beyond length". Primary
    (Holm runs over these; the rest exploratory; also the headline verdicts): for each measure the first "helps"
    and the first "helps beyond length", then each one's "correlates with MQM z beyond length"."""
    out: list[stats.Claim] = []
    for key in tables_:
        if isinstance(key, tuple):
            what, e = key
            out.append(stats.Claim(f"{e} helps ({what}): {COMBOS[e]} beats {PLACEBO_COL}", "given", on=key))
        elif key not in ("correlations", "beyond length"):
            out += [stats.Claim(f"{e} helps beyond length ({key}): {COMBOS[e]} beats Orig.", "beats", COMBOS[e],
                                "Orig.", on=key) for e in JUDGED_EXTRAS]
    for e in JUDGED_EXTRAS if "correlations" in tables_ else ():
        out += [stats.Claim(f"{e} correlates with MQM z (segment level, Pearson)", "correlates", e,
                            on="correlations"),
                stats.Claim(f"{e} beats the placebo (MQM z, segment level, Pearson)", "beats the placebo", e,
                            on="correlations")]
        if "beyond length" in tables_:
            out.append(stats.Claim(f"{e} correlates with MQM z beyond length (segment level, partial r given the "
                                   "length model)", "correlates", e, on="beyond length"))
    primary = set(_headline([c.claim for c in out]))
    return [stats.Claim(c.claim, c.test, c.metric, c.baseline, on=c.on, primary=c.claim in primary) for c in out]


def _headline(names: Sequence[str]) -> list[str]:
    """The primary claims among ``names``, in the headline's order (:func:`claims`)."""
    first, corr = [], []
    for e in JUDGED_EXTRAS:
        first += [c for c in names if c.startswith(f"{e} helps (")][:1]
        first += [c for c in names if c.startswith(f"{e} helps beyond length (")][:1]
        corr.append(f"{e} correlates with MQM z beyond length (segment level, partial r given the length model)")
    return [c for c in (first + corr)[:MAX_HEADLINE_VERDICTS] if c in names]


def _table_dict(table: pd.DataFrame) -> dict:
    """A combination table for the results JSON: the estimates (6 decimals), their intervals and the average
    effects."""
    return {"tau": table.round(6).to_dict(orient="index"),
            "low": table.attrs["low"].round(6).to_dict(orient="index"),
            "high": table.attrs["high"].round(6).to_dict(orient="index"),
            "effects": table.attrs["effects"].round(6).to_dict(orient="index")}


# ---------------------------------------------------------------------------------------------------------------
# the chapter, table by table (notebook 07)
# ---------------------------------------------------------------------------------------------------------------

MAIN_HUMAN = "MQM z (verdicts)"
"""The human score the claims are decided on (its label in :meth:`Settings.humans`)."""


@dataclass
class Settings:
    """The chapter's parameters (the notebook's ``parameters`` cell); :meth:`params` is what the results file
    records of them."""

    sample: int | None = None
    seed: int = 0
    ted_reference: str = "refB"
    deen_reference: str = "A"
    threshold: float = DEFAULT_THRESHOLD
    threshold_z: float = THRESHOLD_Z
    n_folds: int = 10
    C: float = 1.0
    lam: float = DEFAULT_LAM
    with_learned: bool = True
    n_resamples: int = 1000
    resample: str = "segment"
    permute_human: int | None = None
    metrics: Sequence[str] | None = None
    n_placebo: int = N_PLACEBO
    n_jobs: int = 2

    def params(self) -> dict[str, Any]:
        return {"sample": self.sample, "seed": self.seed, "ted_reference": self.ted_reference,
                "deen_reference": self.deen_reference, "threshold": self.threshold, "threshold_z": self.threshold_z,
                "n_folds": self.n_folds, "C": self.C, "lam": self.lam, "with_learned": self.with_learned,
                "n_resamples": self.n_resamples, "resample": self.resample, "permute_human": self.permute_human,
                "n_placebo": self.n_placebo}

    def humans(self) -> dict[str, tuple[str, float]]:
        """``{table label: (human score column, pair threshold)}``: MQM z (the verdicts) and raw MQM."""
        return {MAIN_HUMAN: ("mqm_z", self.threshold_z), "MQM (raw)": ("mqm", self.threshold)}


@dataclass
class DiscourseChapter:
    """Both data sets scored (:func:`score`): ``ted`` (:func:`ted_scores`), ``deen`` and ``da``
    (:func:`wmt21_scores`), the base metrics ``base`` (with ``learned`` when trained) and ``norm``, the TED
    base metrics and extras min-max normalized (:func:`syneval_nb.metrics.combine.normalize`)."""

    settings: Settings
    ted: pd.DataFrame
    deen: pd.DataFrame
    da: pd.DataFrame
    base: list
    norm: pd.DataFrame
    learned: Any = field(default=None, repr=False)
    tuned: dict = field(default_factory=dict, repr=False)  # table4's tuned_scores by (human, mode), reused

    @property
    def segs(self) -> np.ndarray:
        return self.ted["seg_id"].to_numpy()

    @property
    def texts(self) -> np.ndarray:
        return self.ted["target"].to_numpy(dtype=object)

    @property
    def talks(self) -> np.ndarray:
        return self.ted["doc"].to_numpy()

    @property
    def placebo(self) -> np.ndarray:
        """The ``settings.n_placebo`` placebo columns of the TED rows (:func:`placebo_matrix`), (K, rows)."""
        return placebo_matrix(len(self.ted), self.settings.n_placebo, self.settings.seed)

    @property
    def clusters(self) -> np.ndarray | None:
        """The resampling clusters of the segment-level tables: the talks with ``resample="talk"``, else None
        (source segments)."""
        return self.talks if self.settings.resample == "talk" else None


def score(folder, settings: Settings, progress: bool = True) -> DiscourseChapter:
    """Train the learned metric (``with_learned``, :func:`train_learned`) and score both data sets with the base
    metrics (chrF and ``settings.metrics``, default every :data:`syneval_nb.metrics.combine.BASE_METRICS`), DR and
    DR-lex."""
    s = settings
    base = list(s.metrics or BASE_METRICS)
    model = train_learned(folder, seed=s.seed) if s.with_learned else None
    ted = ted_scores(folder, reference=s.ted_reference, sample=s.sample, seed=s.seed, metrics=base, lam=s.lam,
                     learned=model, progress=progress, permute_human=s.permute_human)
    deen, da = wmt21_scores(folder, reference=s.deen_reference, sample=s.sample, seed=s.seed, metrics=base,
                            lam=s.lam, learned=model, progress=progress, permute_human=s.permute_human)
    base = [m for m in dict.fromkeys([_BASELINE, *base, "learned"]) if m in ted.columns]
    return DiscourseChapter(s, ted, deen, da, base, normalize(ted[base + list(EXTRAS)]), model)


def _system_level(frame: pd.DataFrame, human: pd.Series, base: Sequence[str], s: Settings) -> pd.DataFrame:
    """Table 2's system level: system scores (:func:`syneval_nb.metrics.combine.system_base_scores`: corpus
    scores of the base metrics, mean segment scores of DR / DR-lex / learned / length) min-max normalized over
    the systems, combined uniformly with each extra and with each of ``n_placebo`` random columns over the
    systems (:func:`placebo_matrix`), Spearman with ``human`` (indexed by system): :func:`combination_table` at
    system level."""
    sys_scores = system_base_scores(frame[list(base) + list(EXTRAS)], list(frame["system"]),
                                    frame.attrs.get("corpus"))
    h = human.reindex(sys_scores.index).to_numpy(dtype=float)
    scores = uniform_scores(normalize(sys_scores), base, placebo=placebo_matrix(len(h), s.n_placebo, s.seed))
    return combination_table(scores, h, None, n_resamples=s.n_resamples, seed=s.seed)


def table2(ch: DiscourseChapter) -> dict[str, pd.DataFrame]:
    """Table 2 analog (system level, uniform combinations): WMT21 de-en against DA z, TED against the systems'
    mean MQM z and mean raw MQM."""
    return {"WMT21 de-en DA": _system_level(ch.deen, ch.da.set_index("system")["da_z"], ch.base, ch.settings),
            "TED zh-en MQM z": _system_level(ch.ted, ch.ted.groupby("system")["mqm_z"].mean(), ch.base, ch.settings),
            "TED zh-en MQM (raw)": _system_level(ch.ted, ch.ted.groupby("system")["mqm"].mean(), ch.base,
                                                 ch.settings)}


def table3(ch: DiscourseChapter) -> dict[tuple[str, str], pd.DataFrame]:
    """Table 3 analog: :func:`combination_table` of the uniform combinations for each human score and both tie
    treatments (``"discordant"``: WMT12; ``"exclude"``: without the tie penalty)."""
    s = ch.settings
    uniform_ = uniform_scores(ch.norm, ch.base, placebo=ch.placebo)
    return {(human, ties): combination_table(uniform_, ch.ted[col], ch.segs, threshold=thr, texts=ch.texts,
                                             metric_ties=ties, clusters=ch.clusters, n_resamples=s.n_resamples,
                                             seed=s.seed)
            for human, (col, thr) in s.humans().items() for ties in ("discordant", "exclude")}


def table4(ch: DiscourseChapter) -> dict[tuple[str, str, str], pd.DataFrame]:
    """Table 4 / 5 analogs: :func:`tuned_scores` cross-validated over whole talks (``"cv"``) and tuned on one half
    of the talks (``"half"``), for each human score; :func:`combination_table` with both tie treatments. The
    placebo distribution (``settings.n_placebo`` columns, each tuned like DR: K times the fits, over
    ``settings.n_jobs`` processes) is computed for the tuned table the verdicts read (:data:`MAIN_HUMAN`,
    cross-validated) only: the half/half and raw-MQM tuned tables have no :data:`PLACEBO_COL` column."""
    s = ch.settings
    out = {}
    for human, (col, thr) in s.humans().items():
        for mode in ("cv", "half"):
            tuned = tuned_scores(ch.norm, ch.ted[col], ch.segs, ch.talks, ch.base, mode=mode, n_folds=s.n_folds,
                                 seed=s.seed, threshold=thr, C=s.C,
                                 placebo=ch.placebo if (human, mode) == (MAIN_HUMAN, "cv") else None,
                                 n_jobs=s.n_jobs)
            ch.tuned[(human, mode)] = tuned
            for ties in ("discordant", "exclude"):
                out[(human, mode, ties)] = combination_table(tuned, ch.ted[col], ch.segs, threshold=thr,
                                                             texts=ch.texts, metric_ties=ties, clusters=ch.clusters,
                                                             n_resamples=s.n_resamples, seed=s.seed)
    return out


def controls(ch: DiscourseChapter) -> tuple[dict[str, pd.DataFrame], pd.DataFrame, pd.DataFrame]:
    """``(control tables, correlations, partial correlations)``: :func:`control_table` of DR, DR-lex and the base
    metrics for each human score, and :func:`correlation_table` of the same with MQM z (talks as clusters with
    ``resample="talk"``), plain and beyond length (partial r given the length model, same resamples)."""
    s, cols = ch.settings, ["DR", "DR-lex", *ch.base]
    ctl = {human: control_table(ch.ted, cols, human=col, threshold=thr) for human, (col, thr) in s.humans().items()}
    corr = [correlation_table(ch.ted, cols, "mqm_z", n_resamples=s.n_resamples, seed=s.seed,
                              clusters="doc" if s.resample == "talk" else None, beyond_length=bl)
            for bl in (False, True)]
    return ctl, corr[0], corr[1]


def beyond_length_tables(ch: DiscourseChapter) -> dict[str, pd.DataFrame]:
    """:func:`partial_table` (MQM z) of the uniform and the tuned cross-validated combinations (no placebo)."""
    s = ch.settings
    col, thr = s.humans()[MAIN_HUMAN]
    tuned = ch.tuned.get((MAIN_HUMAN, "cv")) or tuned_scores(  # table4's when computed (its placebo not read here)
        ch.norm, ch.ted[col], ch.segs, ch.talks, ch.base, mode="cv", n_folds=s.n_folds, seed=s.seed, threshold=thr,
        C=s.C)
    return {what: partial_table(sc, ch.ted, col, clusters=ch.clusters, n_resamples=s.n_resamples, seed=s.seed)
            for what, sc in (("uniform", uniform_scores(ch.norm, ch.base)), ("tuned cross-validated", tuned))}


def results(ch: DiscourseChapter, worked: Mapping[str, float], non_void: Mapping[str, int], figure4: Mapping,
            t2: Mapping[str, pd.DataFrame], t3: Mapping, t4: Mapping, voids: pd.DataFrame,
            controls_: Mapping[str, pd.DataFrame], corr: pd.DataFrame, lam_table: pd.DataFrame,
            verdicts_: Mapping[str, dict], seconds: float, bl: Mapping[str, pd.DataFrame] | None = None) -> dict:
    """The results file (JSON-ready); ``verdicts_``: :func:`claims` decided on :func:`tables`; ``bl``:
    :func:`beyond_length_tables`."""
    return {
        "params": ch.settings.params(),
        "worked_example": dict(worked),
        "non_void": dict(non_void),
        "base_metrics": ch.base,
        "n_ted_rows": len(ch.ted), "n_ted_segments": int(ch.ted["seg_id"].nunique()),
        "n_deen_rows": len(ch.deen), "n_deen_segments": int(ch.deen["seg_id"].nunique()),
        "figure4": dict(figure4),
        "table2": {k: _table_dict(v) for k, v in t2.items()},
        "table3": {f"{h} | ties {t}": _table_dict(v) for (h, t), v in t3.items()},
        "table4": {f"{h} | {m} | ties {t}": _table_dict(v) for (h, m, t), v in t4.items()},
        "beyond_length": {k: _table_dict(v) for k, v in (bl or {}).items()},
        "voids": voids.to_dict(orient="index"),
        "controls": {h: c.round(6).to_dict(orient="index") for h, c in controls_.items()},
        "correlations_mqm_z": corr.set_index("metric")[["r", "low", "high"]].round(6).to_dict(orient="index"),
        "lambda": lam_table.round(6).to_dict(orient="records"),
        "verdicts": dict(verdicts_),
        "headline_verdicts": headline_verdicts(verdicts_, *_headline(list(verdicts_))),
        "verdict": "\n".join(stats.verdict_sentence(c, v) for c, v in verdicts_.items()),
        "seconds": seconds,
    }
