"""Study code of ``notebooks/10_syntax_beyond_chrf.ipynb`` (issue 36): does syntax add anything beyond chrF and length?

The ridge metric of :mod:`syneval_nb.metrics.learned` (:func:`~syneval_nb.metrics.learned.fit_ridge`: standardized
features, alpha chosen by its grouped internal cross-validation, the flexible length model with knots from the
training rows) is fitted with several feature sets (:data:`MODELS`) and tested out of sample on two expert-MQM sets:

* **within a set**, by cross-validation grouped by TED talk (TED zh-en, 5 talks: leave one talk out) or by source
  segment (newstest2021 zh-en, no document ids: 10 folds of segments, seeded); alpha is tuned inside each training
  part (nested: fit_ridge's own cross-validation, grouped the same way, sees only the training rows), and the
  length model's knots come from the training rows;
* **across sets**: trained on all of one set, applied unchanged (its knots included) to the other.

Each model's predictions are then fixed, and :func:`syneval_nb.stats.correlation_table` resamples the *test* set's
source segments (1,000 resamples by default, the same for every model) for the intervals of Pearson r, the
within-segment r and the partial r (:data:`MEASURES`); a claim "X adds to Y" is the paired difference r(Y + X) -
r(Y) (:data:`CLAIMS`), declared as :class:`syneval_nb.stats.Claim` records (:func:`claims`) and decided by the kit's
one engine (:func:`syneval_nb.stats.decide_claims`, Holm over the :data:`PRIMARY` claims). The placebo model adds as
many seeded random columns as there are syntactic features, learned the same way: it must not "add". Human scores:
TED's rater-normalized ``mqm_z`` against refB (the WMT21 reference of this set; acc_eq reads the raw ``mqm``, whose
ties are real, :func:`_acc_eq`); newstest2021's published MQM average against reference A (no rater ids: no z).
System level (:func:`syneval_nb.stats.system_table` over source segments, exploratory: 13 and 8 systems): the
systems' mean predictions against their mean human score, on the same segment resamples. ``permute_human``
shuffles both (nothing may hold then).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from syneval_nb import data, stats
from syneval_nb.metrics import learned, lexical, registry
from syneval_nb.studies import common, correlation_studies, depth_study

__all__ = ["MODELS", "SETTINGS", "claims", "run", "summary_table", "weights", "conclusion", "results"]

LEXICAL = ("BLEU", "NIST", "chrF", "WER", "PER", "F-measure", "GTM", "ROUGE-S")
"""The lexical features ("all lexical"): the registry's fast lexical metrics. TER and METEOR are left out of the
default for time (together 20x the cost of the rest; 3-4 minutes on the two sets): pass them by name to add them."""
SYNTACTIC = ("STM", "HWCM", "DSTM", "TKM", "TKM λ=0.4", "DTKM", "DTKM λ=0.4")
"""The syntactic features: STM/HWCM/DSTM at their default depth (4), TKM and DTKM at λ = 1 and 0.4."""
MODELS = {"length": (), "chrF + length": ("chrF",), "lexical + length": ("lexical",),
          "chrF + syntax + length": ("chrF", "syntax"), "all + length": ("lexical", "syntax"),
          "chrF + placebo + length": ("chrF", "placebo")}
"""The compared models: feature groups (``chrF``, ``lexical``, ``syntax``, ``placebo``) beside the length model,
which every model has."""
CLAIMS = {"syntax adds to chrF + length": ("chrF + syntax + length", "chrF + length"),
          "syntax adds to all lexical + length": ("all + length", "lexical + length"),
          "placebo adds to chrF + length": ("chrF + placebo + length", "chrF + length"),
          "chrF adds to length": ("chrF + length", "length")}
"""Claim -> (model, the model it improves on): the claim holds when r(model) - r(base) is above 0."""
TED, NEWS = "TED", "newstest2021"
SETTINGS = (f"{TED} (CV)", f"{NEWS} (CV)", f"{TED} → {NEWS}", f"{NEWS} → {TED}")
"""Where a model is tested: cross-validated within a set, or trained on one set and tested on the other."""
MEASURES = ("r", "within r", "partial r")
"""Pearson r of the predictions, the within-segment r (each source segment centred) and the partial r given the
test set's own flexible length model (knots from the test set: what a model adds beyond length where it is
applied; exploratory)."""
PRIMARY = tuple(f"{c} ({s}, r)" for c, ss in (("syntax adds to chrF + length", SETTINGS),
                                              ("syntax adds to all lexical + length", SETTINGS[:2])) for s in ss)
"""The chapter's six primary claims (Holm over these; the rest are exploratory)."""
REPLICATED = {"03": ("STM", "TKM"), "04": ("HWCM", "DSTM", "DTKM")}
"""The depth chapters whose headline claims are replicated, with the families they declare them for
(:func:`syneval_nb.studies.depth_study.primary_claims`)."""
STABLE = correlation_studies.PRIMARY_FAMILIES
"""Chapter 08's primary claims: each of these families loses less than BLEU from depth 1 to :data:`MAX_DEPTH`."""
MAX_DEPTH = 9


@dataclass
class MQMSet:
    """One MQM set, one row per MT translation: ``rows`` (``system, seg_id, group, human``, and ``tie human``: the
    score acc_eq reads, :func:`prepare`), the feature columns
    ``X`` (registry metrics' sentence scores and the placebo columns), the 13a token lengths of hypothesis and
    reference, and ``groups`` (the feature groups' column names)."""

    name: str
    rows: pd.DataFrame
    X: pd.DataFrame
    hyp_len: np.ndarray
    ref_len: np.ndarray
    groups: dict = field(default_factory=dict)
    depth: dict = field(default_factory=dict)
    """``{row name: scores}`` of chapter 08's stability claim (BLEU and STM/HWCM/DSTM at depth 1 and
    :data:`MAX_DEPTH`, literal mean, :func:`syneval_nb.studies.depth_study.depth_scores`); empty unless asked."""

    def columns(self, model: str) -> list[str]:
        if model not in MODELS:
            raise KeyError(f"unknown model {model!r}; models: {list(MODELS)}")
        return [c for g in MODELS[model] for c in self.groups[g]]


def _lengths(texts: Sequence[str]) -> np.ndarray:
    return np.array([len(lexical.tokenize(t)) for t in texts], dtype=float)


def prepare(frame: pd.DataFrame, name: str, *, human: str, group: str, reference: str = "ref",
            tie_human: str | None = None, lexical_metrics: Sequence[str] = LEXICAL,
            syntactic_metrics: Sequence[str] = SYNTACTIC, seed: int = 0, permute_human: int | None = None,
            depth_curves: bool = False) -> MQMSet:
    """An :class:`MQMSet` from a loader's MT rows (``target``, ``reference`` and their ``ptb`` columns, ``seg_id``,
    ``human``, ``group``: the cross-validation unit; ``tie_human``: the score acc_eq reads, one whose ties are
    real, e.g. the raw MQM where ``human`` is rater-normalized; default ``human``): the metrics scored through
    :func:`syneval_nb.metrics.learned.ridge_frame` (the registry's scoring loop) against ``reference``, and
    ``len(syntactic_metrics)`` placebo columns (standard normal, seeded with ``seed``). ``permute_human``: shuffle
    the human scores with that seed (:func:`syneval_nb.stats.permute_human`). ``depth_curves``: also score the rows
    of chapter 08's stability claim (``MQMSet.depth``)."""
    tie_human = human if tie_human is None else tie_human
    need = list(dict.fromkeys(["system", "seg_id", "target", reference, human, tie_human, group]))
    missing = [c for c in need if c not in frame.columns]
    if missing:
        raise ValueError(f"{name}: the frame lacks the columns {missing}")
    for col in dict.fromkeys((human, tie_human)):
        if frame[col].isna().any():
            raise ValueError(f"{name}: {int(frame[col].isna().sum())} rows without a human score ({col!r})")
    if "chrF" not in lexical_metrics:
        raise ValueError("chrF must be among the lexical metrics: it is the baseline of every claim")
    frame = frame.reset_index(drop=True)
    metrics = [registry.get(m) for m in (*lexical_metrics, *syntactic_metrics)]
    t = frame.rename(columns={reference: "_ref", f"ptb_{reference}": "ptb__ref"})
    scores = learned.ridge_frame(t, metrics, refs=("_ref",))[[m.name for m in metrics]]
    lex = [m.name for m in metrics[:len(lexical_metrics)]]
    syn = [m.name for m in metrics[len(lexical_metrics):]]
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), 0x706C6163]))
    placebo = [f"placebo {i + 1}" for i in range(len(syn))]
    X = pd.concat([scores, pd.DataFrame(rng.standard_normal((len(frame), len(placebo))), columns=placebo)], axis=1)
    rows = pd.DataFrame({"system": frame["system"], "seg_id": frame["seg_id"], "group": frame[group],
                         "human": stats.permute_human(frame[human].to_numpy(dtype=float), permute_human),
                         "tie human": stats.permute_human(frame[tie_human].to_numpy(dtype=float), permute_human)})
    depth = {}
    if depth_curves:
        seg, _ = depth_study.depth_scores(frame["target"], [[r] for r in frame[reference]], frame["ptb"],
                                          [[r] for r in frame[f"ptb_{reference}"]], frame["system"], MAX_DEPTH,
                                          tuple(f.lower() for f in STABLE), progress=False)
        depth = {stats.metric_name(f, d): seg[(f, d)] for f in ("BLEU", *STABLE) for d in (1, MAX_DEPTH)}
    return MQMSet(name, rows, X, _lengths(frame["target"]), _lengths(frame[reference]),
                  {"chrF": ["chrF"], "lexical": lex, "syntax": syn, "placebo": placebo}, depth)


class _Column:
    """A feature column by name (:func:`~syneval_nb.metrics.learned.fit_ridge` reads only the metrics' names)."""

    inputs: tuple = ()

    def __init__(self, name: str) -> None:
        self.name = name


def _design(s: MQMSet, rows: np.ndarray, columns: Sequence[str], knots: Mapping) -> pd.DataFrame:
    length = stats.length_covariates(s.hyp_len[rows], s.ref_len[rows], knots=knots)
    out = pd.concat([s.X.loc[rows, list(columns)].reset_index(drop=True), pd.DataFrame(length)], axis=1)
    out.attrs["length_knots"] = dict(knots)
    return out


def fit(s: MQMSet, rows: np.ndarray, model: str, folds: int = 5) -> learned.RidgeMetric:
    """The ridge metric of ``model`` fitted on the ``rows`` (boolean mask) of ``s``: the length knots from those
    rows, alpha by fit_ridge's cross-validation grouped by ``s.rows["group"]`` (``folds`` folds) on those rows."""
    knots = stats.length_knots(s.hyp_len[rows], s.ref_len[rows])
    frame = _design(s, rows, s.columns(model), knots).assign(human=s.rows["human"].to_numpy()[rows])
    return learned.fit_ridge(frame, "human", [_Column(c) for c in s.columns(model)], folds=folds,
                             groups=s.rows["group"].to_numpy()[rows], training=s.name)


def predict(model: learned.RidgeMetric, s: MQMSet, rows: np.ndarray | None = None) -> np.ndarray:
    """``model``'s predictions for the ``rows`` of ``s`` (all rows by default), with the model's own knots."""
    rows = np.ones(len(s.rows), dtype=bool) if rows is None else rows
    return model.predict(_design(s, rows, model.features, model.length_knots))


def fold_ids(groups: Sequence, k: int, seed: int = 0) -> np.ndarray:
    """Each row's outer fold: the distinct ``groups`` in a seeded random order, dealt into ``min(k, #groups)`` folds
    (every row of a group in one fold)."""
    codes, uniq = pd.factorize(pd.Series(groups), sort=True)
    if len(uniq) < 2:
        raise ValueError(f"cross-validation needs at least 2 groups, got {len(uniq)}")
    k = min(int(k), len(uniq))
    order = np.random.default_rng(seed).permutation(len(uniq))
    fold_of = np.empty(len(uniq), dtype=int)
    fold_of[order] = np.arange(len(uniq)) % k
    return fold_of[codes]


def out_of_fold(s: MQMSet, k: int = 10, seed: int = 0, models: Sequence[str] = tuple(MODELS)) -> pd.DataFrame:
    """Nested cross-validation: each model's out-of-fold predictions (one column per model) and ``fold``; the
    outer folds by :func:`fold_ids` on ``s.rows["group"]``, each model fitted by :func:`fit` on the other folds.
    ``attrs["alphas"]``: the alpha chosen per model and fold."""
    fold = fold_ids(s.rows["group"], k, seed)
    out = pd.DataFrame({m: np.full(len(fold), np.nan) for m in models})
    alphas = {m: [] for m in models}
    for f in range(fold.max() + 1):
        test = fold == f
        for m in models:
            model = fit(s, ~test, m)
            out.loc[test, m] = predict(model, s, test)
            alphas[m].append(model.alpha)
    out["fold"] = fold
    out.attrs["alphas"] = alphas
    return out


def transfer(train: MQMSet, test: MQMSet, models: Sequence[str] = tuple(MODELS)) -> tuple[pd.DataFrame, dict]:
    """Each model fitted on all of ``train`` and applied to ``test``: (predictions, {model: fitted model})."""
    every = np.ones(len(train.rows), dtype=bool)
    fitted = {m: fit(train, every, m) for m in models}
    return pd.DataFrame({m: predict(fitted[m], test) for m in models}), fitted


# ------------------------------------------------------------------------------------------------ the chapter


@dataclass
class Chapter10:
    """Everything the notebook shows: the two sets, out-of-sample predictions and tables per setting, the fitted
    transfer models (feature weights), the verdicts and timings."""

    sets: dict
    predictions: dict
    tables: dict
    fitted: dict
    verdicts: dict
    params: dict
    seconds: dict
    replication: pd.DataFrame | None = None
    systems: dict = field(default_factory=dict)
    """``{setting: table}``: system-level r and pairwise accuracy of each model over the test set's source segments
    (:func:`syneval_nb.stats.system_table` with ``segments=``; the column ``metric`` named ``model``)."""


def load_sets(data_dir=None, sample: int | None = None, seed: int = 0, permute_human: int | None = None,
              lexical_metrics: Sequence[str] = LEXICAL,
              syntactic_metrics: Sequence[str] = SYNTACTIC, depth_curves: bool = True) -> dict[str, MQMSet]:
    """The two MQM sets (``sample`` source segments of each, seeded; None: all): TED zh-en MT rows against refB
    (human ``mqm_z``, grouped by talk; acc_eq on the raw ``mqm``) and newstest2021 zh-en against reference A (human
    ``mqm``, grouped by source segment); ``depth_curves``: with the rows of chapter 08's stability claim
    (:func:`prepare`)."""
    ted, news = data.load_ted_zhen_mqm(data_dir), data.load_newstest2021_zhen_mqm(data_dir)
    ted = data.sample_segments(ted[~ted["is_human"]], sample, seed)
    news = data.sample_segments(news, sample, seed)
    kw = dict(seed=seed, permute_human=permute_human, lexical_metrics=lexical_metrics,
              syntactic_metrics=syntactic_metrics, depth_curves=depth_curves)
    return {TED: prepare(ted, TED, human="mqm_z", group="doc", reference="refB", tie_human="mqm", **kw),
            NEWS: prepare(news.assign(group=news["seg_id"]), NEWS, human="mqm", group="group", reference="ref", **kw)}


def _tables(pred: pd.DataFrame, s: MQMSet, n_resamples: int, seed: int, alpha: float) -> dict:
    models = [m for m in MODELS if m in pred]
    scores = {m: pred[m].to_numpy() for m in models}
    h, seg = s.rows["human"].to_numpy(), s.rows["seg_id"].to_numpy()
    kw = dict(placebo_column=False, n_resamples=n_resamples, seed=seed, alpha=alpha, holm=False)
    return {"r": stats.correlation_table(scores, h, seg, **kw),
            "within r": stats.correlation_table(scores, h, seg, method="within", **kw),
            "partial r": stats.correlation_table(scores, h, seg, given=stats.length_covariates(s.hyp_len, s.ref_len),
                                                 **kw)}


def _system(pred: pd.DataFrame, s: MQMSet, n_resamples: int, seed: int, alpha: float) -> pd.DataFrame:
    models = [m for m in MODELS if m in pred]
    return stats.system_table({m: pred[m].to_numpy(dtype=float) for m in models}, s.rows["human"].to_numpy(),
                              s.rows["system"].to_numpy(), segments=s.rows["seg_id"].to_numpy(),
                              n_resamples=n_resamples, seed=seed, alpha=alpha).rename(columns={"metric": "model"})


def run(data_dir=None, sample: int | None = None, seed: int = 0, permute_human: int | None = None,
        n_resamples: int = 1000, alpha: float = 0.05, folds: int = 10,
        lexical_metrics: Sequence[str] = LEXICAL, syntactic_metrics: Sequence[str] = SYNTACTIC) -> Chapter10:
    """The chapter: both sets, nested cross-validation in each (``folds`` outer folds; TED has 5 talks, so at
    most 5), both transfer directions, the tables and the verdicts (Holm over :data:`PRIMARY`)."""
    t0 = time.perf_counter()
    sets = load_sets(data_dir, sample, seed, permute_human, lexical_metrics, syntactic_metrics)
    t1 = time.perf_counter()
    ted, news = sets[TED], sets[NEWS]
    pred, fitted = {SETTINGS[0]: out_of_fold(ted, folds, seed), SETTINGS[1]: out_of_fold(news, folds, seed)}, {}
    pred[SETTINGS[2]], fitted[TED] = transfer(ted, news)
    pred[SETTINGS[3]], fitted[NEWS] = transfer(news, ted)
    tests = dict(zip(SETTINGS, (ted, news, news, ted)))
    t2 = time.perf_counter()
    tables = {st: _tables(pred[st], tests[st], n_resamples, seed, alpha) for st in SETTINGS}
    verdicts = stats.decide_claims(claims(), {(st, how): t for st in SETTINGS for how, t in tables[st].items()},
                                   alpha=alpha)
    systems = {st: _system(pred[st], tests[st], n_resamples, seed, alpha) for st in SETTINGS}
    rep = replication(sets, n_resamples, seed, alpha)
    t3 = time.perf_counter()
    params = {"sample": sample, "seed": seed, "permute_human": permute_human, "n_resamples": n_resamples,
              "alpha": alpha, "folds": folds, "lexical": list(lexical_metrics), "syntactic": list(syntactic_metrics)}
    seconds = {"features": t1 - t0, "fits": t2 - t1, "resampling": t3 - t2}
    return Chapter10(sets, pred, tables, fitted, verdicts, params, seconds, rep, systems)


def claims() -> list[stats.Claim]:
    """The chapter's claims: every claim of :data:`CLAIMS` in every setting (:data:`SETTINGS`) and on every measure
    (:data:`MEASURES`), a ``beats`` of the model over the model it extends on the table ``(setting, measure)``;
    the :data:`PRIMARY` ones are primary (Holm over those), the rest exploratory."""
    return [stats.Claim(name, "beats", *pair, on=(st, how), primary=name in PRIMARY)
            for st in SETTINGS for c, pair in CLAIMS.items() for how in MEASURES
            for name in [f"{c} ({st}, {how})"]]


def _acc_eq(pred: pd.DataFrame, s: MQMSet) -> dict:
    """acc_eq of each model's predictions on ``s`` (:func:`syneval_nb.stats.meta.pairwise_accuracy_tie_calibrated`,
    mt-metrics-eval's ``KendallWithTiesOpt(..., "acc23", average_by="item")``): pairs within a source segment,
    against ``s.rows["tie human"]``, the score whose ties are real. On TED that is the raw MQM, not the
    rater-normalized MQM z: z gives two identical translations rated by different raters different scores (16% of
    TED's within-segment pairs are identical outputs; 68% of them are tied in raw MQM, 15% in z), so each such pair,
    rightly tied by any metric, counted as an error, and a model with random columns, which breaks those ties at
    random, scored higher than the model without them."""
    h, seg = s.rows["tie human"].to_numpy(), s.rows["seg_id"].to_numpy()
    return {m: stats.meta.pairwise_accuracy_tie_calibrated(pred[m].to_numpy(), h, seg) for m in MODELS if m in pred}


def summary_table(ch: Chapter10) -> pd.DataFrame:
    """One row per (setting, model): r, the within-segment r and the partial r with their intervals, acc_eq
    (mt-metrics-eval's tie-calibrated pairwise accuracy within source segments against the raw MQM, :func:`_acc_eq`;
    no interval) and, when computed, the system level (``ch.systems``: ``system r``, ``system low``,
    ``system high``, ``system acc``, ``system acc low``, ``system acc high``)."""
    rows = []
    tests = dict(zip(SETTINGS, (TED, NEWS, NEWS, TED)))
    for st in SETTINGS:
        acc = _acc_eq(ch.predictions[st], ch.sets[tests[st]])
        r, w, p = (ch.tables[st][k].set_index("metric") for k in MEASURES)
        sys_t = ch.systems[st].set_index("model") if st in ch.systems else None
        for m in r.index:
            row = {"setting": st, "model": m, "r": r.at[m, "r"], "low": r.at[m, "low"], "high": r.at[m, "high"],
                   "within r": w.at[m, "r"], "within low": w.at[m, "low"], "within high": w.at[m, "high"],
                   "partial r": p.at[m, "r"], "partial low": p.at[m, "low"], "partial high": p.at[m, "high"],
                   "acc_eq": acc[m].acc_eq}
            if sys_t is not None:
                row.update({f"system {k}": sys_t.at[m, c] for k, c in (("r", "r"), ("low", "low"), ("high", "high"),
                                                                      ("acc", "accuracy"), ("acc low", "acc low"),
                                                                      ("acc high", "acc high"))})
            rows.append(row)
    return pd.DataFrame(rows)


def weights(ch: Chapter10, model: str = "all + length") -> pd.DataFrame:
    """The standardized ridge coefficients of ``model`` fitted on all of each set (the transfer models): one
    column per training set, one row per feature, the length model's terms summed as ``|length model|``."""
    out = {}
    for name, fitted in ch.fitted.items():
        m = fitted[model]
        coef = pd.Series(m.pipeline.named_steps["ridge"].coef_, index=list(m.columns))
        feats = coef[list(m.features)]
        out[name] = pd.concat([feats, pd.Series({"|length model|": coef.drop(list(m.features)).abs().sum()})])
    return pd.DataFrame(out)


def conclusion(ch: Chapter10, table: pd.DataFrame | None = None) -> str:
    """The chapter's conclusion, computed from the verdicts (Pearson r) and the weights (:func:`weights`)."""
    v = {c[:-len(", r)")] + ")": x for c, x in ch.verdicts.items() if c.endswith(", r)")}
    table = weights(ch) if table is None else table
    syn, lex = "syntax adds to chrF + length", "syntax adds to all lexical + length"

    def said(claim: str, settings: Sequence[str]) -> str:
        return "; ".join(f"{st} {x['statistic']:+.3f} [{x['ci'][0]:+.3f}, {x['ci'][1]:+.3f}], {x['verdict']}"
                         for st in settings for x in [v[f"{claim} ({st})"]])

    def where(claim: str, settings: Sequence[str], test) -> list[str]:
        return [st for st in settings if test(v[f"{claim} ({st})"])]

    holds = lambda x: x["verdict"] == "holds"  # noqa: E731
    above = lambda x: x["ci"][0] > 0  # noqa: E731
    held, held_lex = where(syn, SETTINGS, holds), where(lex, SETTINGS[:2], holds)
    rest = [st for st in SETTINGS if st not in held]
    out = [f"Beyond chrF and the flexible length model, syntax adds out of sample "
           + (f"on {', '.join(held)}" + (f", not on {', '.join(rest)}" if rest else "") if held else "in no setting")
           + f" (r difference: {said(syn, SETTINGS)})."]
    out.append("Beyond all lexical metrics and the length model, within a set it "
               + (f"adds on {', '.join(held_lex)}" if held_lex else "adds nothing that holds")
               + f" ({said(lex, SETTINGS[:2])})"
               + (f"; across sets (exploratory) its interval lies above 0 on {', '.join(x)}"
                  if (x := where(lex, SETTINGS[2:], above)) else "") + ".")
    part = {st: ch.verdicts[f"{syn} ({st}, partial r)"] for st in SETTINGS}
    out.append("Given each test set's own length model (partial r, exploratory) the difference is "
               + "; ".join(f"{st} {x['statistic']:+.3f} [{x['ci'][0]:+.3f}, {x['ci'][1]:+.3f}]"
                           for st, x in part.items()) + ".")
    weak = where("chrF adds to length", SETTINGS, lambda x: not above(x))
    if weak:
        out.append(f"chrF's own gain over length alone is not above 0 on {', '.join(weak)}: a weak baseline there.")
    feats = table.drop(index="|length model|")
    top = {n: ", ".join(f"{f} ({c:+.2f})" for f, c in col.reindex(col.abs().sort_values(ascending=False).index)
                        .head(3).items()) for n, col in feats.items()}
    out.append("Largest standardized weights of the full model: " + "; ".join(f"trained on {n}: {t}"
                                                                            for n, t in top.items())
               + "; the length model's terms, |weights| summed: "
               + ", ".join(f"{x:.2f} ({n})" for n, x in table.loc["|length model|"].items()) + ".")
    placebo = where("placebo adds to chrF + length", SETTINGS, above)
    out.append(f"The placebo's interval lies above 0 on {', '.join(placebo)}: read the gains with care." if placebo
               else "The placebo adds nothing (no interval above 0).")
    return " ".join(out)


def results(ch: Chapter10) -> dict:
    """The results file: the out-of-sample table, verdicts, headline verdicts, weights, alphas, sizes, timings, and
    the replication of chapters 03, 04 and 08's headline claims (:func:`replication`)."""
    table = summary_table(ch)
    w = weights(ch)
    out = {"table": {f"{r.pop('setting')}|{r.pop('model')}": r for r in table.to_dict("records")},
           "verdicts": common.verdicts_json(ch.verdicts),
           "headline_verdicts": common.headline_verdicts(ch.verdicts, *PRIMARY),
           "weights": {n: {f: float(x) for f, x in col.items()} for n, col in w.items()},
           "alphas": {st: p.attrs["alphas"] for st, p in ch.predictions.items() if "alphas" in p.attrs},
           "transfer_alphas": {n: {m: f.alpha for m, f in fm.items()} for n, fm in ch.fitted.items()},
           "sizes": {n: {"rows": len(s.rows), "segments": int(s.rows["seg_id"].nunique()),
                         "groups": int(s.rows["group"].nunique()), "systems": int(s.rows["system"].nunique())}
                     for n, s in ch.sets.items()},
           "conclusion": conclusion(ch, w), "seconds": ch.seconds, "params": ch.params}
    if ch.replication is not None:
        out["replication"] = ch.replication.to_dict("index")
        out["replication_text"] = replication_text(ch.replication)
    return out


# ------------------------------------------------------------------------------------------------ replication


def replication_claims(stability: bool = True) -> list[stats.Claim]:
    """The headline claims of chapters 03 and 04 as they declare them (the primary claims of
    :func:`syneval_nb.studies.depth_study.claims`: each beats chrF, Pearson and beyond length) and, with
    ``stability``, chapter 08's (:data:`STABLE` loses less than BLEU from depth 1 to :data:`MAX_DEPTH`, raw and beyond
    length, the sentences of :func:`syneval_nb.studies.correlation_studies.stability_claim`)."""
    out = [c for fams in REPLICATED.values() for c in depth_study.claims(fams, talks=False) if c.primary]
    for f in STABLE if stability else ():
        for on in (("MQM z", "pearson"), ("MQM z", "partial")):
            out.append(stats.Claim(correlation_studies.stability_claim(f, MAX_DEPTH, on[1] == "partial"), "loses less",
                                   stats.metric_name(f, MAX_DEPTH), stats.metric_name(f, 1), on=on, primary=True,
                                   than=(stats.metric_name("BLEU", MAX_DEPTH), stats.metric_name("BLEU", 1))))
    return out


def _replication_tables(s: MQMSet, n_resamples: int, seed: int, alpha: float) -> dict:
    """The two tables the replicated claims read, under the chapters' keys: Pearson and the partial r given the
    flexible length model, source segments resampled, every row against chrF."""
    rows = {m: s.X[m].to_numpy() for m in ("chrF", *(stats.metric_name(f, None if f in depth_study.KERNELS else
                                                                       depth_study.PRIMARY_DEPTH)
                                                     for fams in REPLICATED.values() for f in fams))}
    rows.update(s.depth)
    h, seg = s.rows["human"].to_numpy(), s.rows["seg_id"].to_numpy()
    kw = dict(baseline="chrF", placebo_column=False, n_resamples=n_resamples, seed=seed, alpha=alpha, holm=False)
    return {("MQM z", "pearson"): stats.correlation_table(rows, h, seg, **kw),
            ("MQM z", "partial"): stats.correlation_table(rows, h, seg, given=stats.length_covariates(s.hyp_len,
                                                                                                     s.ref_len), **kw)}


def replication(sets: Mapping[str, MQMSet], n_resamples: int = 1000, seed: int = 0,
                alpha: float = 0.05) -> pd.DataFrame:
    """Chapters 03, 04 and 08's headline claims (:func:`replication_claims`; 08's only when the sets carry the depth
    rows) decided on each set by the kit's engine (:func:`syneval_nb.stats.decide_claims`) on the chapter-10 scores
    (the registry metrics against each set's reference and human score). Holm runs over the replicated claims within
    each set: one family per set, apart from the chapter's primary claims. One row per claim; per set the columns
    ``"<set> estimate"``, ``low``, ``high``, ``verdict``, ``p_holm``."""
    claims = replication_claims(all(s.depth for s in sets.values()))
    out = pd.DataFrame(index=pd.Index([c.claim for c in claims], name="claim"))
    out["chapter"] = [next((ch for ch, fams in REPLICATED.items() if c.metric.split("-")[0] in fams), "08")
                      if c.test == "beats" else "08" for c in claims]
    for name, s in sets.items():
        v = stats.decide_claims(claims, _replication_tables(s, n_resamples, seed, alpha))
        for col, get in (("estimate", lambda x: x["statistic"]), ("low", lambda x: x["ci"][0]),
                         ("high", lambda x: x["ci"][1]), ("verdict", lambda x: x["verdict"]),
                         ("p_holm", lambda x: x["p_holm"])):
            out[f"{name} {col}"] = [get(v[c.claim]) for c in claims]
    return out


def replication_text(rep: pd.DataFrame, base: str = TED, other: str = NEWS) -> str:
    """Which claims replicate on ``other``: a claim replicates when its verdict there is the one it has on ``base``;
    the claims grouped by their pair of verdicts."""
    pairs = rep.groupby([f"{base} verdict", f"{other} verdict"], sort=False).groups
    same = int((rep[f"{base} verdict"] == rep[f"{other} verdict"]).sum())
    groups = [f"{b} on {base}, {o} on {other}: {'; '.join(idx)}" for (b, o), idx in pairs.items()]
    return (f"{same} of the {len(rep)} headline claims of chapters {', '.join(sorted(set(rep['chapter'])))} replicate "
            f"on {other} (the same verdict as on {base}). " + ". ".join(groups) + ".")
