"""Study code of notebook 05 (Kulesza & Shieber's human-vs-machine SVM as a metric): the data with the
``permute_human`` switch, the training pools and experiments (:func:`run_chapter` -> :class:`LearnedChapter`: every
score and table of the chapter, computed once), the premise (:func:`premises`: are human translations rated better
than MT?), the human ceiling (:func:`human_ceiling`), the claims (:func:`claims`, decided on :func:`tables` by
:func:`syneval_nb.stats.decide_claims`) and the results JSON (:func:`results`). The notebook draws the figures and
writes the display tables and the sentences from these (d2l style).
Issue 22: the rater check (:func:`rater_check`: raters who scored a single system), why the TED pool does not score
against refB (:func:`reference_choice`, computed), and the diagnosis of the negative result from the features
(:func:`feature_separability`, :func:`svm_direction`).

The metric itself (features, :class:`~syneval_nb.metrics.learned.LearnedMetric`, the grid search, the pools and
source splits, :func:`~syneval_nb.metrics.learned.run_experiment`) is in :mod:`syneval_nb.metrics.learned`; the
baselines are the registry's metrics, scored by the one loop (:func:`syneval_nb.metrics.score_rows`).

**Human scores.** Verdicts use rater-normalized MQM (``mqm_z``, :func:`syneval_nb.data.load_ted_zhen_mqm`):
every TED row is scored by one rater and the raters' means differ by several MQM points. Segment tables are shown
for raw MQM too. Intervals and paired differences come from :func:`syneval_nb.stats.correlation_table`: a paired
bootstrap resampling the held-out TED *source segments* (all systems' rows of a drawn segment together); system
level (WMT21 de-en, DA z) resamples systems.

**permute_human.** ``None``: unchanged. An integer shuffles, with that seed, every human score of the chapter
(:func:`syneval_nb.stats.permute_human`): the TED MQM columns across all rated rows (human translations included,
one permutation for all columns) and the WMT21 DA z across all systems. No "beats"/"correlates"/"helps"/"rated
better" claim may then hold.
"""
from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd
from syneval_nb import stats
from syneval_nb.data import load_ted_zhen_mqm, load_wmt21_deen, sample_segments, single_system_raters
from syneval_nb.metrics import get, learned, lexical, score_rows
from syneval_nb.metrics.learned import Experiment, FeatureConfig, LearnedMetric
from syneval_nb.textio import to_json
from syneval_nb.studies.common import MQM_COLUMNS, check_permute, headline_verdicts, verdicts_json

__all__ = ["SVM_DEEN", "BASELINES", "HUMANS", "VERDICT_HUMAN", "run_chapter", "accuracy_table", "premises",
           "deen_refB_rank", "human_ceiling", "reference_choice", "svm_direction", "syntax_table", "claims",
           "tables", "results"]

SVM_TED = "SVM (TED-trained)"
SVM_DEEN = "SVM (de-en-trained)"
SYN_TED = "SVM + syntax (TED-trained)"
SYN_DEEN = "SVM + syntax (de-en-trained)"
BASELINES = ("WER", "PER", "F-measure", "BLEU", "chrF")
"""The paper's comparison metrics (Table 1), by their registry names."""
COUNTS = ("WER count (K&S feature)", "PER count (K&S feature)")
HUMANS = {"MQM z": "mqm_z", "MQM": "mqm"}
"""Segment-level human scores of the tables; verdicts use ``"MQM z"``."""
VERDICT_HUMAN = "MQM z"
_PRIMARY = ("SVM (TED-trained) beats chrF (TED held-out segments, MQM z)",
           "SVM (TED-trained) beats chrF beyond length (TED held-out segments, MQM z)",
           "SVM (de-en-trained) beats chrF (TED held-out segments, MQM z)",
           "SVM (de-en-trained) beats chrF beyond length (TED held-out segments, MQM z)",
           "syntactic features help the SVM (TED-trained) (TED held-out segments, MQM z)",
           "syntactic features help the SVM (TED-trained) beyond length (TED held-out segments, MQM z)")
"""The chapter's primary claims, also its headline verdicts: Holm runs over these; the rest are exploratory."""
EVERY_RATER_Z = "mqm_z_every_rater"
"""Column of :attr:`Data.ted`: MQM z with an offset for every rater (``rater_offsets="every rater"`` of
:func:`syneval_nb.data.load_ted_zhen_mqm`), beside the loader's ``mqm_z`` (offsets only where rater and system are
not confounded); shown by the rater check only."""
FEATURE_DIRECTION = {"p1": 1, "p2": 1, "p3": 1, "p4": 1, "p5": 1, "wer": -1, "per": -1}
"""The direction in which a feature says "closer to the reference" (higher precision, fewer edits); the length
ratios have none."""


# ---------------------------------------------------------------------------------------------------------------
# scores
# ---------------------------------------------------------------------------------------------------------------


def deen_long(segments: pd.DataFrame) -> pd.DataFrame:
    """WMT21 de-en segments (``load_wmt21_deen().segments``) as one row per (system, seg_id) with the two
    references added as systems ``ref_A`` / ``ref_B``: columns ``system, seg_id, target, ptb, is_human``."""
    mt = segments[["system", "seg_id", "target", "ptb"]].assign(is_human=False)
    one = segments.drop_duplicates("seg_id")
    refs = [
        pd.DataFrame({"system": name, "seg_id": one["seg_id"].to_numpy(), "target": one[name].to_numpy(),
                      "ptb": one[f"ptb_{name}"].to_numpy(), "is_human": True})
        for name in ("ref_A", "ref_B")
    ]
    return pd.concat([mt, *refs], ignore_index=True)


def baseline_scores(rows: pd.DataFrame, *, progress: bool = True) -> pd.DataFrame:
    """The paper's comparison metrics (:data:`BASELINES`, the registry's) on a pool's rows under the same single
    reference, scored by :func:`syneval_nb.metrics.score_rows` and oriented so that higher = better (the error
    rates WER and PER negated, read from each metric's ``higher_is_better``); ``chrF`` is the headline baseline of
    every "beats"."""
    metrics = {name: get(name) for name in BASELINES}
    seg = score_rows(metrics, list(rows["hyp"]), [[r] for r in rows["ref"]], progress=progress).segment
    return pd.DataFrame({k: seg[k].to_numpy() * (1.0 if m.higher_is_better else -1.0) for k, m in metrics.items()},
                        index=rows.index)


def _scores(svms: Mapping[str, Any], rows: pd.DataFrame, X: pd.DataFrame | None = None,
            progress: bool = True) -> dict[str, np.ndarray]:
    """The scores of one test set's rows: the SVMs' (given), the baselines' and, with the feature frame ``X``, the
    raw WER/PER counts (the K&S features, negated)."""
    out = {**svms, **baseline_scores(rows, progress=progress).to_dict("series")}
    if X is not None:
        out[COUNTS[0]], out[COUNTS[1]] = -X["wer"], -X["per"]
    return {k: np.asarray(v, dtype=float) for k, v in out.items()}


def length_model(rows: pd.DataFrame) -> tuple[dict, dict]:
    """The length model of a pool's rows (13a tokens): the four length-only control rows
    (:func:`syneval_nb.stats.length_rows`) and the covariates of "beyond length"
    (:func:`syneval_nb.stats.length_covariates`)."""
    hl = [len(lexical.tokenize(h)) for h in rows["hyp"]]
    rl = [len(lexical.tokenize(r)) for r in rows["ref"]]
    return stats.length_rows(hl, rl), stats.length_covariates(hl, rl)


def system_means(rows: pd.DataFrame, scores: Mapping[str, Sequence[float]]) -> pd.DataFrame:
    """System-level scores: the mean sentence score of each system over ``rows`` (one column per metric,
    index = system, via :func:`syneval_nb.stats.system_means`)."""
    cols = {}
    names = None
    for k, v in scores.items():
        names, means = stats.system_means(np.asarray(v, float), rows["system"].to_numpy())
        cols[k] = means
    return pd.DataFrame(cols, index=pd.Index(names, name="system"))


def grid_meta_correlation(table: pd.DataFrame, best: LearnedMetric, alpha: float = 0.05) -> dict[str, float]:
    """Figure 2 summary of one grid (the grid table with each model's correlation ``r``, one row per (C, sigma)).

    ``meta_r``: Pearson r between validation accuracy and the correlation ``r`` over the grid points (the
    paper's meta-correlation, 0.855; NaN when either column is constant); ``ci_low``/``ci_high``: its Fisher-z
    interval (NaN with fewer than 4 points); ``n_grid``; ``r_selected``: ``r`` of the model chosen by accuracy
    (``best``); ``r_best_in_grid``: the highest ``r`` in the grid.
    """
    ok = table["acc"].nunique() > 1 and table["r"].nunique() > 1
    r_meta = stats.pearson(table["acc"], table["r"]) if ok else float("nan")
    lo, hi = stats.fisher_ci(r_meta, len(table), alpha) if ok and len(table) > 3 else (float("nan"), float("nan"))
    sel = table[(table["C"] == best.C) & (table["sigma"] == best.sigma)]
    if len(sel) != 1:
        raise ValueError(f"the selected model (C={best.C:g}, sigma={best.sigma:g}) is not a row of the grid table")
    return {"meta_r": r_meta, "ci_low": lo, "ci_high": hi, "n_grid": len(table),
            "r_selected": float(sel["r"].iloc[0]), "r_best_in_grid": float(table["r"].max())}


# ---------------------------------------------------------------------------------------------------------------
# data
# ---------------------------------------------------------------------------------------------------------------


@dataclass
class Data:
    """``ted``: every row of TED zh-en MQM (MT systems and the human translations ``ref``/``refB``);
    ``wmt``: :func:`syneval_nb.data.load_wmt21_deen`; ``da``: system DA z of every WMT21 de-en system (human
    references included), indexed by system; both shuffled with ``permute_human``."""

    ted: pd.DataFrame
    wmt: Any
    da: pd.Series
    permute_human: int | None = None


def load(data_dir=None, permute_human: int | None = None) -> Data:
    """Load both data sets; ``permute_human`` (an int seed) shuffles every MQM column of the rated TED rows by one
    permutation and the DA z across all WMT21 de-en systems (:func:`syneval_nb.stats.permute_human`)."""

    seed_p = check_permute(permute_human)
    ted = load_ted_zhen_mqm(data_dir).copy()
    every = load_ted_zhen_mqm(data_dir, rater_offsets="every rater")
    if not ted[["system", "seg_id"]].equals(every[["system", "seg_id"]]):
        raise ValueError("the two TED loads differ in their rows")
    ted[EVERY_RATER_Z] = every["mqm_z"].to_numpy()
    rated = ted["mqm"].notna().to_numpy()
    for c in (*MQM_COLUMNS, EVERY_RATER_Z):
        col = ted[c].to_numpy(dtype=float).copy()
        col[rated] = stats.permute_human(col[rated], seed_p)
        ted[c] = col
    wmt = load_wmt21_deen(data_dir)
    da = wmt.system_da.set_index("system")["da_z"].astype(float)
    da = pd.Series(stats.permute_human(da.to_numpy(), seed_p), index=da.index, name="da_z")
    return Data(ted, wmt, da, seed_p)


def build_pools(d: Data, sample: int | None = None, seed: int = 0, ted_human: str = "refB",
                ted_reference: str = "ref") -> dict[str, pd.DataFrame]:
    """The two training pools (:func:`syneval_nb.metrics.learned.build_pool`, ``sample`` source segments each):
    ``"de-en"`` (ref B as the human hypothesis against ref A) and ``"TED"`` (``ted_human`` against
    ``ted_reference``), carrying ``mqm``, ``mqm_z`` and ``rater``."""
    keep = ("mqm", "mqm_z", "rater")
    return {
        "de-en": sample_segments(learned.build_pool(deen_long(d.wmt.segments), human="ref_B",
                                                   reference="ref_A"), sample, seed=seed),
        "TED": sample_segments(learned.build_pool(d.ted, human=ted_human, reference=ted_reference, keep=keep),
                              sample, seed=seed),
    }


# ---------------------------------------------------------------------------------------------------------------
# the chapter run
# ---------------------------------------------------------------------------------------------------------------


@dataclass
class LearnedChapter:
    """Everything notebook 05 shows: the data, pools, experiments (plain features, ``syn`` with the syntactic
    extension, ``swap`` the swapped TED roles), the TED test scores and the correlation tables."""

    data: Data
    params: dict
    pools: dict[str, pd.DataFrame]
    exps: dict[str, Experiment]
    syn: dict[str, Experiment] = field(default_factory=dict)
    swap: Experiment | None = None
    seg_scores: dict[str, np.ndarray] = field(default_factory=dict)
    seg_table: pd.DataFrame | None = None
    seg_partial: pd.DataFrame | None = None
    sys_scores: pd.DataFrame | None = None
    sys_table: pd.DataFrame | None = None
    swap_table: pd.DataFrame | None = None
    fig2: pd.DataFrame | None = None
    meta: pd.DataFrame | None = None
    separability: pd.DataFrame | None = None
    raters: dict | None = None
    seconds: float = 0.0

    @property
    def ted_test(self) -> pd.DataFrame:
        return self.exps["TED"].sets["test"]

    @property
    def deen_test(self) -> pd.DataFrame:
        return self.exps["de-en"].sets["test"]


def run_chapter(data_dir=None, *, sample: int | None = None, seed: int = 0, grid: str = "full",
                val_frac: float = 0.25, test_frac: float = 0.3, ted_human: str = "refB", ted_reference: str = "ref",
                run_swapped: bool = True, syntax: bool = True, syntax_depth: int = 3, standardize: bool = True,
                n_resamples: int = 1000, permute_human: int | None = None, progress: bool = True) -> LearnedChapter:
    """Load, build the pools, train (grid search on validation accuracy only), score the held-out segments and
    compute every table of the chapter (see :class:`LearnedChapter`). ``grid``: ``"full"`` (8 C x 7 sigma) or
    ``"small"`` (2 x 2)."""
    if grid not in ("full", "small"):
        raise ValueError(f"grid must be 'full' or 'small', got {grid!r}")
    t0 = time.perf_counter()
    g = learned.FULL_GRID if grid == "full" else learned.SMALL_GRID
    params = dict(sample=sample, seed=seed, grid=grid, val_frac=val_frac, test_frac=test_frac, ted_human=ted_human,
                  ted_reference=ted_reference, run_swapped=run_swapped, syntax=syntax, syntax_depth=syntax_depth,
                  standardize=standardize, n_resamples=n_resamples, permute_human=permute_human)
    d = load(data_dir, permute_human)
    pools = build_pools(d, sample, seed, ted_human, ted_reference)
    kw = dict(Cs=g["C"], sigmas=g["sigma"], seed=seed, standardize=standardize, progress=progress)
    exps = {name: learned.run_experiment(name, pool, val_frac=val_frac, test_frac=test_frac, **kw)
            for name, pool in pools.items()}
    ch = LearnedChapter(d, params, pools, exps)
    if syntax:
        cfg = FeatureConfig(syntax=True, syntax_depth=syntax_depth)
        ch.syn = {name: learned.run_experiment(f"{name} + syntax", pools[name], config=cfg,
                                               splits=exps[name].splits, **kw) for name in exps}
    ted, deen = ch.exps["TED"].X["test"], ch.exps["de-en"].X["test"]
    svms = {SVM_TED: exps["TED"].best.score_features(ted), SVM_DEEN: exps["de-en"].best.score_features(ted)}
    if syntax:
        if not ch.syn["TED"].sets["test"][["seg_id", "system"]].equals(ch.ted_test[["seg_id", "system"]]):
            raise ValueError("the syntax experiment's test rows differ from the plain experiment's")
        svms[SYN_TED] = ch.syn["TED"].best.score_features(ch.syn["TED"].X["test"])
        svms[SYN_DEEN] = ch.syn["de-en"].best.score_features(ch.syn["TED"].X["test"])
    ch.seg_scores = _scores(svms, ch.ted_test, ted, progress)
    ch.seg_table = segment_table(ch.seg_scores, ch.ted_test, n_resamples=n_resamples, seed=seed)
    ch.seg_partial = segment_table(ch.seg_scores, ch.ted_test, n_resamples=n_resamples, seed=seed, beyond_length=True)
    # WMT21 de-en system level: each MT system's mean sentence score over the held-out sources, Pearson r with DA z
    # (stats.system_table: systems resampled, Williams' test against the baseline, the null permutations of DA z)
    svms = {SVM_DEEN: exps["de-en"].best.score_features(deen), SVM_TED: exps["TED"].best.score_features(deen)}
    if syntax:
        svms[SYN_DEEN] = ch.syn["de-en"].best.score_features(ch.syn["de-en"].X["test"])
    ch.sys_scores = system_means(ch.deen_test, _scores(svms, ch.deen_test, deen, progress))
    missing = [s for s in ch.sys_scores.index if s not in d.da.index]
    if missing:
        raise ValueError(f"systems without DA z: {missing}")
    ch.sys_table = stats.system_table(
        ch.sys_scores.to_dict("series"), d.da.loc[ch.sys_scores.index].to_numpy(dtype=float),
        baseline={a: b for a, b in _baselines(list(ch.sys_scores)).items() if a in (SVM_DEEN, SYN_DEEN)},
        n_resamples=n_resamples, seed=seed)
    ch.fig2, ch.meta = figure2(ch)
    ch.separability = feature_separability(ch)
    ch.raters = rater_check(ch)
    if run_swapped:
        swap_pool = sample_segments(learned.build_pool(d.ted, human=ted_reference, reference=ted_human,
                                                       keep=("mqm", "mqm_z")), sample, seed=seed)
        ch.swap = learned.run_experiment("TED swapped", swap_pool, splits=exps["TED"].splits, **kw)
        rows = ch.swap.sets["test"]
        ch.swap_table = segment_table(
            _scores({"SVM (swapped, TED-trained)": ch.swap.best.score_features(ch.swap.X["test"])}, rows,
                    progress=progress), rows, baseline={"SVM (swapped, TED-trained)": "BLEU"},
            n_resamples=n_resamples, seed=seed)
    ch.seconds = time.perf_counter() - t0
    return ch


def _baselines(names: Sequence[str]) -> dict[str, str]:
    base = {SVM_TED: "BLEU", SVM_DEEN: "BLEU", SYN_TED: SVM_TED, SYN_DEEN: SVM_DEEN}
    return {a: b for a, b in base.items() if a in names and b in names}


def segment_table(scores: Mapping[str, np.ndarray], rows: pd.DataFrame, *, baseline: Mapping[str, str] | None = None,
                  n_resamples: int = 1000, seed: int = 0, alpha: float = 0.05,
                  beyond_length: bool = False) -> pd.DataFrame:
    """Table 1 analog on held-out TED segments, stacked for ``MQM z`` and raw ``MQM``
    (:func:`syneval_nb.stats.correlation_tables`): Pearson r with its interval, paired bootstrap over source
    segments, the placebo distribution and the four length rows; ``baseline`` (default: the SVMs compared with BLEU
    and each syntax SVM with its plain SVM; marks: Holm over these comparisons). ``beyond_length``: the partial r
    given the length model (:func:`syneval_nb.stats.length_covariates`, same resamples)."""
    humans = {h: rows[c].to_numpy(dtype=float) for h, c in HUMANS.items()}
    controls, given = length_model(rows)
    return stats.correlation_tables(dict(scores), humans, rows["seg_id"].to_numpy(),
                                    baseline=_baselines(list(scores)) if baseline is None else baseline,
                                    controls=controls, n_resamples=n_resamples, seed=seed, alpha=alpha,
                                    given=given if beyond_length else None)


def figure2(ch: LearnedChapter, human: str = VERDICT_HUMAN) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Figure 2 analog: every grid model's validation accuracy and r with ``human`` on the TED test segments (the
    grid table plus column ``r``), and per training pool the meta-correlation (:func:`grid_meta_correlation`)."""
    h = ch.ted_test[HUMANS[human]].to_numpy(dtype=float)
    X = ch.exps["TED"].X["test"]
    fig2 = pd.concat([e.grid.table.assign(r=[stats.pearson(e.grid.models[(c, s)].score_features(X), h)
                                             for c, s in zip(e.grid.table["C"], e.grid.table["sigma"])],
                                          trained_on=name) for name, e in ch.exps.items()], ignore_index=True)
    meta = pd.DataFrame({name: grid_meta_correlation(g, ch.exps[name].best)
                         for name, g in fig2.groupby("trained_on")}).T
    return fig2, meta


# ---------------------------------------------------------------------------------------------------------------
# tables
# ---------------------------------------------------------------------------------------------------------------


def deen_refB_rank(ch: LearnedChapter) -> tuple[int, int]:
    """(rank of reference B, number of systems) in WMT21 de-en system DA z (1 = best; ``ref-B`` in the DA)."""
    order = ch.data.da.sort_values(ascending=False)
    return int(list(order.index).index("ref-B")) + 1, len(order)


def _all_exps(ch: LearnedChapter) -> dict[str, Experiment]:
    return {**ch.exps, **{f"{k} + syntax": e for k, e in ch.syn.items()}}


def accuracy_table(ch: LearnedChapter) -> pd.DataFrame:
    """Validation classification accuracy (overall, human, machine) of each selected SVM, with C and sigma; the
    syntax SVMs when run."""
    return pd.DataFrame({name: {**e.validation_accuracy(), "C": e.best.C, "sigma": e.best.sigma,
                                "n_val": len(e.sets["val"])} for name, e in _all_exps(ch).items()}).T


def syntax_table(ch: LearnedChapter) -> pd.DataFrame:
    """The syntax SVMs against the plain SVMs: r (MQM z) of each, the difference and its interval (segment level,
    TED) and the system-level r on de-en."""
    if not ch.syn:
        return pd.DataFrame()
    t = ch.seg_table[ch.seg_table["human"] == VERDICT_HUMAN].set_index("metric")
    s = ch.sys_table.set_index("metric")
    rows = []
    for syn, plain in ((SYN_TED, SVM_TED), (SYN_DEEN, SVM_DEEN)):
        rows.append({"model": syn, "r plain": t.loc[plain, "r"], "r + syntax": t.loc[syn, "r"],
                     "delta": t.loc[syn, "delta"], "delta_low": t.loc[syn, "delta_low"],
                     "delta_high": t.loc[syn, "delta_high"], "p_better_holm": t.loc[syn, "p_better_holm"],
                     "system r plain (de-en)": s.loc[plain, "r"] if plain in s.index else np.nan,
                     "system r + syntax (de-en)": s.loc[syn, "r"] if syn in s.index else np.nan})
    return pd.DataFrame(rows).set_index("model")


# ---------------------------------------------------------------------------------------------------------------
# premise, human ceiling, claims
# ---------------------------------------------------------------------------------------------------------------


def premise(ted: pd.DataFrame, human: str, *, column: str = "mqm_z", n_resamples: int = 1000, seed: int = 0,
            alpha: float = 0.05, segments: Sequence | None = None) -> dict:
    """Verdict on "human translation ``human`` is rated better than MT": per source segment,
    ``d_s = score(human) - mean score(MT systems)`` (``column``, MQM z by default); statistic = mean d_s; percentile
    interval from resampling the source segments (``n_resamples``, ``seed``); p = share of resamples <= 0.
    **holds** iff the interval is above 0 and p < alpha; **does not hold** iff it is below 0; else **cannot tell**.
    ``segments``: restrict to these source segments (e.g. the chapter's sample)."""
    t = ted[ted[column].notna()]
    if segments is not None:
        t = t[t["seg_id"].isin(set(segments))]
    h = t[t["system"] == human].groupby("seg_id")[column].mean()
    if h.empty:
        raise ValueError(f"no rated rows of human translation {human!r}")
    mt = t[~t["is_human"].astype(bool)].groupby("seg_id")[column].mean()
    both = h.index.intersection(mt.index)
    d = (h.loc[both] - mt.loc[both]).to_numpy(dtype=float)
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), 0x7072656D]))
    idx = rng.integers(0, len(d), size=(n_resamples, len(d)))
    samples = d[idx].mean(axis=1)
    return stats.verdict_from_samples(
        "difference", f"mean over source segments of {column}({human}) - mean {column}(MT systems)", float(d.mean()),
        samples, alpha, f"{len(d)} source segments", n_segments=int(len(d)),
        share_segments_human_better=float((d > 0).mean()))


def premises(ch: LearnedChapter) -> dict[str, dict]:
    """:func:`premise` for both TED human translations (``ted_human``, then ``ted_reference``) on the pool's
    source segments, with the chapter's resamples and seed."""
    p = ch.params
    sources = ch.pools["TED"]["seg_id"].unique()
    return {who: premise(ch.data.ted, who, n_resamples=p["n_resamples"], seed=p["seed"], segments=sources)
            for who in (p["ted_human"], p["ted_reference"])}


def human_ceiling(ted: pd.DataFrame) -> dict:
    """Kulesza & Shieber's "Human" row (a second judge's agreement with the first) needs two raters of the same
    (system, segment). Counts the raters per rated (system, segment) (``rater`` holds comma-joined ids when there
    are several) and says whether the row can be computed."""
    t = ted[ted["mqm"].notna()]
    n = t["rater"].astype(str).str.count(",") + 1
    counts = {int(k): int(v) for k, v in n.value_counts().sort_index().items()}
    avail = bool((n >= 2).any())
    text = (f"Raters per rated (system, segment): {', '.join(f'{k} rater(s) on {v} rows' for k, v in counts.items())}. "
            + ("The inter-judge row can be computed on the rows with two raters." if avail else
               "The human-ceiling row (inter-judge agreement) is unavailable: no (system, segment) has a second "
               "rater."))
    return {"raters_per_item": counts, "max_raters": int(n.max()), "available": avail, "text": text}


def tables(ch: LearnedChapter) -> dict:
    """The tables the chapter's claims (:func:`claims`) are decided on: ``"segments"`` and ``"segments beyond
    length"`` (TED held-out segments, MQM z and MQM stacked, source segments resampled; the partial r given the
    length model), ``"systems"`` (WMT21 de-en, DA z, systems resampled, permutation null) and the premise verdicts
    ``("premise", who)`` (:func:`premises`, on their own resamples of the source segments)."""
    return {"segments": ch.seg_table, "segments beyond length": ch.seg_partial, "systems": ch.sys_table,
            **{("premise", who): v for who, v in premises(ch).items()}}


def claims(ch: LearnedChapter) -> list[stats.Claim]:
    """The chapter's claims, decided by :func:`syneval_nb.stats.decide_claims` on :func:`tables` (Holm over the
    primary claims, :data:`_PRIMARY`; the rest exploratory). On MQM z (TED held-out segments) unless said:

    * premise: each TED human translation (the human class ``ted_human`` and the reference) is rated better than
      the MT systems (:func:`premise`);
    * each SVM "correlates", "correlates beyond length" and "beats the placebo";
    * each SVM "beats" chrF (the headline baseline) and BLEU, each with its twin "beats ... beyond length";
    * "syntactic features help" each SVM: the syntax SVM beats the plain one, and beyond length;
    * the de-en SVM correlates with DA z at system level and beats permuted DA z (permutation test)."""
    where, z = "TED held-out segments", VERDICT_HUMAN
    raw, beyond = dict(on="segments", human=z), dict(on="segments beyond length", human=z)
    out = [stats.Claim(f"human translation {who} is rated better than MT (TED, {z})", "given", on=("premise", who))
           for who in dict.fromkeys((ch.params["ted_human"], ch.params["ted_reference"]))]
    for svm in (SVM_TED, SVM_DEEN):
        out += [stats.Claim(f"{svm} correlates with {z} ({where})", "correlates", svm, **raw),
                stats.Claim(f"{svm} correlates with {z} beyond length ({where})", "correlates", svm, **beyond),
                stats.Claim(f"{svm} beats the placebo ({where}, {z})", "beats the placebo", svm, **raw)]
    for svm in (SVM_TED, SVM_DEEN):
        for base in ("chrF", "BLEU"):
            out += [stats.Claim(f"{svm} beats {base} ({where}, {z})", "beats", svm, base, **raw),
                    stats.Claim(f"{svm} beats {base} beyond length ({where}, {z})", "beats", svm, base, **beyond)]
    for syn, plain in ((SYN_TED, SVM_TED), (SYN_DEEN, SVM_DEEN)) if ch.syn else ():
        out += [stats.Claim(f"syntactic features help the {plain} ({where}, {z})", "beats", syn, plain, **raw),
                stats.Claim(f"syntactic features help the {plain} beyond length ({where}, {z})", "beats", syn,
                            plain, **beyond)]
    out += [stats.Claim(f"{SVM_DEEN} correlates with DA z (WMT21 de-en, system level)", "correlates", SVM_DEEN,
                        on="systems"),
            stats.Claim(f"{SVM_DEEN} beats permuted DA z (WMT21 de-en, system level)", "beats the placebo", SVM_DEEN,
                        on="systems")]
    return [dataclasses.replace(c, primary=c.claim in _PRIMARY) for c in out]


def rater_check(ch: LearnedChapter) -> dict:
    """The rater check on the pool's TED source segments: the raters who scored a single system, and the premise of
    ``ted_human`` (:func:`premise`) on the segments such a rater scored and on the others, with MQM z as loaded
    (offsets only where rater and system are not confounded), with an offset for every rater, and with raw MQM.
    Keys: ``single_system`` (rater -> system), ``rows`` (their rows), ``premise`` ({rule: {part: verdict}})."""
    p = ch.params
    ted = ch.data.ted
    sources = set(ch.pools["TED"]["seg_id"])
    alone = single_system_raters(ted[ted["mqm"].notna()])
    who = p["ted_human"]
    h = ted[(ted["system"] == who) & ted["seg_id"].isin(sources)]
    on = set(h.loc[h["rater"].isin(alone.index), "seg_id"])
    parts = {"segments of single-system raters": sorted(on), "other segments": sorted(sources - on),
             "all": sorted(sources)}
    rules = {"MQM z (offsets where not confounded)": "mqm_z", "MQM z (offset of every rater)": EVERY_RATER_Z,
             "raw MQM": "mqm"}
    prem = {rule: {part: (premise(ted, who, column=col, n_resamples=p["n_resamples"], seed=p["seed"], segments=seg)
                          if seg else None) for part, seg in parts.items()} for rule, col in rules.items()}
    return {"human": who, "single_system": alone.to_dict(),
            "rows": {r: int((ted["rater"] == r).sum()) for r in alone.index},
            "n_segments": {part: len(seg) for part, seg in parts.items()}, "premise": prem}


def reference_choice(ch: LearnedChapter) -> str:
    """Why the TED pool scores against ``ted_reference`` and not the README's one reference (refB), from the
    premise numbers: the human class must be a human translation other than the reference, rated better than MT."""
    p = ch.params
    pr = premises(ch)
    hum, ref = pr[p["ted_human"]], pr[p["ted_reference"]]
    if p["ted_reference"] == "refB":
        return (f"The TED pool scores against refB, the README's one reference; the human class is "
                f"{p['ted_human']} ({hum['statistic']:+.3f} MQM z against MT: the premise {hum['verdict']}).")
    return (f"Every other chapter scores TED against refB. Kulesza & Shieber's classifier needs, besides the "
            f"reference, a second human translation as its \"human\" class, and the method rests on that class being "
            f"better than MT. With refB as the reference the class would be {p['ted_reference']}: its MQM z is "
            f"{ref['statistic']:+.3f} [{ref['ci'][0]:+.3f}, {ref['ci'][1]:+.3f}] against the MT mean (the premise "
            f"{ref['verdict']}), while {p['ted_human']} is {hum['statistic']:+.3f} [{hum['ci'][0]:+.3f}, "
            f"{hum['ci'][1]:+.3f}] ({hum['verdict']}). So the TED pool uses {p['ted_human']} as the human class "
            f"against {p['ted_reference']}; the refB-as-reference pool is the swapped variant below.")


def weighted_auc(x: Sequence[float], labels: Sequence[int], weights: np.ndarray | None = None) -> np.ndarray:
    """AUC ``P(x of a label-1 row > x of a label-0 row)`` (ties count one half), each row counted ``weights``
    times: ``weights`` (R, n) gives R values at once (bootstrap resamples as counts,
    :func:`syneval_nb.stats.bootstrap_weights`), ``None`` one value with every row once. Equal to sklearn's
    ``roc_auc_score(labels, x, sample_weight=w)`` row by row (``tests/test_studies_learned_metric.py``); sorted
    once, so a thousand resamples cost one pass each."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(labels)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"x and labels must be 1-d of one length, got {x.shape} and {y.shape}")
    if not set(np.unique(y)) <= {0, 1} or len(np.unique(y)) < 2:
        raise ValueError("labels must hold both classes, 0 and 1")
    w = np.ones((1, len(x))) if weights is None else np.atleast_2d(np.asarray(weights, dtype=float))
    order = np.argsort(x, kind="stable")
    xs, ys, w = x[order], y[order], w[:, order]
    start = np.flatnonzero(np.r_[True, xs[1:] != xs[:-1]])  # tie groups of equal x
    wh = np.add.reduceat(w * (ys == 1), start, axis=1)
    wm = np.add.reduceat(w * (ys == 0), start, axis=1)
    below = np.cumsum(wm, axis=1) - wm  # label-0 weight strictly below each tie group
    with np.errstate(invalid="ignore", divide="ignore"):
        return (wh * (below + 0.5 * wm)).sum(axis=1) / (wh.sum(axis=1) * wm.sum(axis=1))


def feature_separability(ch: LearnedChapter, *, alpha: float = 0.05) -> pd.DataFrame:
    """How well each of the nine features separates the human class from MT in what the SVM learns from (the
    balanced training and validation rows of each pool): class means, the standardized difference
    ``(mean human - mean MT) / pooled sd`` (ddof=1), and the AUC ``P(feature of a human row > feature of an MT
    row)`` (:func:`weighted_auc`, ties count one half) with a percentile interval from resampling source segments
    (each source's human and MT rows together; the chapter's ``n_resamples`` and seed).
    ``human closer to reference``: the AUC turned so that > 0.5 means the human class is closer to the reference
    (:data:`FEATURE_DIRECTION`; empty for the length ratios)."""
    rows = []
    names = learned.FeatureConfig().names()
    for pool, e in ch.exps.items():
        X = pd.concat([e.X["train"], e.X["val"]], ignore_index=True)
        sets = pd.concat([e.sets["train"], e.sets["val"]], ignore_index=True)
        y = sets["label"].to_numpy(dtype=int)
        W = np.vstack(list(stats.bootstrap_weights(len(y), ch.params["n_resamples"], ch.params["seed"],
                                                   groups=sets["seg_id"].to_numpy())))
        for f in names:
            x = X[f].to_numpy(dtype=float)
            xh, xm = x[y == 1], x[y == 0]
            sd = np.sqrt(((len(xh) - 1) * xh.var(ddof=1) + (len(xm) - 1) * xm.var(ddof=1)) / (len(x) - 2))
            est = float(weighted_auc(x, y)[0])
            lo, hi = (float(v) for v in stats.percentile_ci(weighted_auc(x, y, W), alpha))
            sign = FEATURE_DIRECTION.get(f, 0)
            closer = {1: (est, lo, hi), -1: (1 - est, 1 - hi, 1 - lo)}.get(sign, (np.nan, np.nan, np.nan))
            rows.append({"pool": pool, "feature": f, "mean human": xh.mean(), "mean MT": xm.mean(),
                         "std. difference": (xh.mean() - xm.mean()) / sd if sd > 0 else np.nan,
                         "AUC": est, "AUC low": lo, "AUC high": hi,
                         "human closer to reference": closer[0], "closer low": closer[1], "closer high": closer[2],
                         "n human": int(len(xh)), "n MT": int(len(xm))})
    return pd.DataFrame(rows)


def svm_direction(ch: LearnedChapter) -> pd.DataFrame:
    """What each SVM's score rewards on the held-out TED MT rows: Pearson r of the score with the negated WER count
    (the K&S feature: fewer edits from the reference) and with BLEU."""
    s = ch.seg_scores
    return pd.DataFrame({svm: {"r with -WER count": stats.pearson(s[svm], s[COUNTS[0]]),
                               "r with BLEU": stats.pearson(s[svm], s["BLEU"])}
                         for svm in s if svm.startswith("SVM")}).T


# ---------------------------------------------------------------------------------------------------------------
# results JSON
# ---------------------------------------------------------------------------------------------------------------


def _table_json(table: pd.DataFrame, cols=("r", "low", "high", "baseline", "delta", "delta_low", "delta_high",
                                           "p_better", "p_better_holm", "mark", "n", "n_clusters")) -> dict:
    """``{metric: {column: value}}`` of a correlation table, by the one converter (NaN stays until written)."""
    return to_json({r["metric"]: {c: r[c] for c in cols} for _, r in table.iterrows()}, finite=False)


def results(ch: LearnedChapter, verdicts_: Mapping[str, Mapping], worked_example: Mapping | None = None) -> dict:
    """The chapter's results JSON: params, sizes, accuracies, the segment tables (both human scores), the system
    table, Figure 2, the swapped and syntax results, the human ceiling and ``"verdicts"``."""
    rank, n_sys = deen_refB_rank(ch)
    out = {
        "params": ch.params,
        "human_for_verdicts": VERDICT_HUMAN,
        "pool_sizes": {k: {"human": int((p.label == 1).sum()), "machine": int((p.label == 0).sum())}
                       for k, p in ch.pools.items()},
        "split_sizes": {k: e.sizes().set_index("part").to_dict("index") for k, e in ch.exps.items()},
        "timings": {k: e.timings for k, e in _all_exps(ch).items()},
        "deen_refB_da_rank": rank,
        "deen_n_da_systems": n_sys,
        "validation_accuracy": accuracy_table(ch).to_dict("index"),
        "table1_n": int(len(ch.ted_test)),
        "table1_n_sources": int(ch.ted_test["seg_id"].nunique()),
        "table1_ted": {h: _table_json(ch.seg_table[ch.seg_table["human"] == h]) for h in HUMANS},
        "system_level_n": int(len(ch.sys_scores)),
        "system_level_deen": _table_json(ch.sys_table),
        "figure2": ch.meta.to_dict("index"),
        "human_ceiling": human_ceiling(ch.data.ted),
        "seconds_total": ch.seconds,
        "headline_verdicts": headline_verdicts(verdicts_, *_PRIMARY),
    }
    if ch.swap is not None:
        out["swapped"] = {"validation_accuracy": ch.swap.validation_accuracy(), "C": ch.swap.best.C,
                          "sigma": ch.swap.best.sigma,
                          "table": {h: _table_json(ch.swap_table[ch.swap_table["human"] == h]) for h in HUMANS}}
    if ch.syn:
        out["syntax"] = syntax_table(ch).to_dict("index")
    out["feature_separability"] = {pool: t.drop(columns="pool").set_index("feature").to_dict("index")
                                   for pool, t in ch.separability.groupby("pool")}
    out["svm_direction"] = svm_direction(ch).to_dict("index")
    rc = ch.raters
    out["rater_check"] = {"single_system": rc["single_system"], "rows": rc["rows"], "n_segments": rc["n_segments"],
                          "premise": {rule: {part: (None if v is None else {"statistic": v["statistic"],
                                                                             "ci": list(v["ci"])})
                                             for part, v in parts.items()} for rule, parts in rc["premise"].items()}}
    out["reference_choice"] = reference_choice(ch)
    if worked_example is not None:
        out["worked_example"] = dict(worked_example)
    out["verdicts"] = verdicts_json(verdicts_)
    return out
