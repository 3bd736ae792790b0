"""Combining DR / DR-lex with other metrics (Guzman et al. 2014, sections 4.2 and 5) and the controls of issue 9.

* **Uniform** (section 4.2, "uniform linear interpolation"): every metric is oriented so that higher is better
  (TER, an error rate, is negated), min-max normalized over the data set being evaluated (:func:`minmax`: over all
  segments for segment-level results, over the systems for system-level results), and the combination of a base
  metric with DR (or DR-lex) is the mean of the two normalized scores (:func:`uniform`).
* **Tuned** (section 4.2, PRO-like): a pairwise-ranking logistic regression (MaxEnt) on *all* human pairs: for each
  pair of translations of the same segment where the humans prefer ``a`` to ``b``, the feature difference
  ``f(a) - f(b)`` is a positive example and ``f(b) - f(a)`` a negative one; no intercept; the learned weight
  vector ``w`` gives the combined score ``w . f`` (:func:`fit_pro`). Trained by cross-validation over whole
  documents (:func:`tuned_cv`) and on one half of the documents, tested on the other (:func:`tuned_half`).
* **Evaluation**: segment level, the WMT12 Kendall tau of :func:`syneval_nb.stats.wmt12_tau` (metric ties are
  discordant); system level, Spearman (:func:`syneval_nb.stats.spearman`) of system scores with human ones.
* **Controls** (:func:`single_edu_ties`, :func:`length_control`, :func:`partial_correlation`): single-EDU ties,
  the length-difference baseline, and correlations with length partialled out.

* **Scores by depth** (BLEU_n, the syntactic metrics by depth and the length controls of notebooks 03, 04 and 08)
  are chapter code: :func:`syneval_nb.studies.depth_study.depth_scores`.

Base metrics (:data:`BASE_METRICS`) are the registry's (:func:`syneval_nb.metrics.get`), scored by the kit's one
scoring loop (:func:`syneval_nb.metrics.score_rows`). Notebook 07's study code (the data sets scored, the combination tables with
placebo and length columns, the verdicts) is in :mod:`syneval_nb.studies.discourse_kernels`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy.optimize import minimize
from sklearn._loss.loss import HalfBinomialLoss
from sklearn.preprocessing import minmax_scale
from threadpoolctl import threadpool_limits
from syneval_nb import stats
from syneval_nb.metrics import registry as metrics
from syneval_nb.metrics.base import score_rows
from syneval_nb.trees.rst import is_void
from syneval_nb.metrics.lexical import tokenize


__all__ = ["BASE_METRICS", "normalize", "segment_tau", "single_edu_ties", "uniform", "tuned_cv"]


DEFAULT_THRESHOLD = 0.5
"""Minimum MQM difference for a human pair (``|mqm_a - mqm_b| > 0.5``): at least one minor error's worth
(1 point), so differences made only of minor punctuation errors (0.1 each, up to five of them) do not count."""

# ---------------------------------------------------------------------------------------------------------------
# base metrics
# ---------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MetricSpec:
    """One base metric: its registry ``name`` (:func:`syneval_nb.metrics.get`: the one place a metric is defined,
    default options). Its input kind (``"text"`` or ``"ptb"``) and orientation come from the registry's object."""

    name: str

    def make(self):
        """The registry's metric object (:class:`syneval_nb.metrics.Metric`)."""

        return metrics.get(self.name)

    @property
    def kind(self) -> str:
        return "ptb" if "ptb" in self.make().inputs else "text"

    @property
    def higher_is_better(self) -> bool:
        return self.make().higher_is_better


BASE_METRICS: dict[str, MetricSpec] = {
    "BLEU": MetricSpec("BLEU"),
    "NIST": MetricSpec("NIST"),
    "TER": MetricSpec("TER"),
    "ROUGE-S": MetricSpec("ROUGE-S"),
    "METEOR-ex": MetricSpec("METEOR"),
    "GTM": MetricSpec("GTM"),
    "STM": MetricSpec("STM-4"),
    "HWCM": MetricSpec("HWCM-4"),
    "TKM": MetricSpec("TKM"),
}
"""The kit's base metrics combined with DR / DR-lex (the paper's groups II/III analogs): column name -> registry
name, default options. STM and HWCM with maximum depth / chain length 4 (Asiya's ``CP-STM-4`` and ``DP-HWCM-4``
in the paper's Asiya-syn), TKM with lambda = 1, on the shipped PTB parses; METEOR-ex is the registry's METEOR
(exact module)."""


def base_scores(hyps: Sequence[str], refs: Sequence[Sequence[str]], ptb_hyps: Sequence[str | None] | None = None,
                ptb_refs: Sequence[Sequence[str | None]] | None = None, metrics: Sequence[str] | None = None,
                systems: Sequence[str] | None = None, progress: bool = True) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Segment scores of the base metrics, one column per metric (raw scale and orientation), and each metric's
    corpus score per system (index system, from summed sufficient statistics; TKM: mean), by
    :func:`syneval_nb.metrics.score_rows` (each system scored alone: NIST's information weights from that system's
    references).

    ``refs[i]`` / ``ptb_refs[i]`` are the references (strings / PTB strings) of segment ``i``; ``systems[i]`` names
    the system of segment ``i`` (default: one system ``"all"``). Syntactic metrics are left out when no parses are
    given.
    """
    names = list(metrics or BASE_METRICS)
    unknown = [n for n in names if n not in BASE_METRICS]
    if unknown:
        raise ValueError(f"unknown base metrics {unknown}; choose from {list(BASE_METRICS)}")
    parsed = ptb_hyps is not None and ptb_refs is not None
    keep = [n for n in names if parsed or BASE_METRICS[n].kind == "text"]
    rows = score_rows({n: BASE_METRICS[n].make() for n in keep}, list(hyps), [list(r) for r in refs], systems,
                      progress=progress, hyp_ptb=list(ptb_hyps) if parsed else None,
                      ref_ptb=[list(r) for r in ptb_refs] if parsed else None)
    return rows.segment, rows.corpus


def system_base_scores(segment_scores: pd.DataFrame, systems: Sequence[str],
                       corpus: pd.DataFrame | None = None) -> pd.DataFrame:
    """System-level scores: a column of ``corpus`` (corpus scores per system from :func:`base_scores`) as given;
    any other column (DR, DR-lex, learned, ...) the mean of its segment scores. Index: system (sorted)."""
    means = segment_scores.groupby(np.asarray(systems)).mean()
    if corpus is not None and not corpus.empty:
        for c in corpus.columns:
            if c in means.columns:
                means[c] = corpus[c].reindex(means.index).to_numpy(dtype=float)
    return means.sort_index()


# ---------------------------------------------------------------------------------------------------------------
# normalization and uniform combination
# ---------------------------------------------------------------------------------------------------------------

def higher_is_better(name: str) -> bool:
    """Orientation of a combination column: its registry metric's ``higher_is_better`` (the one source of a metric's
    direction) for a base metric, else True (DR, DR-lex, the controls)."""
    spec = BASE_METRICS.get(name)
    return True if spec is None else spec.higher_is_better


def minmax(x: Sequence[float]) -> np.ndarray:
    """Min-max normalization to [0, 1]: ``(x - min) / (max - min)``, by :func:`sklearn.preprocessing.minmax_scale`
    (NaN kept and ignored for min/max; a constant column maps to 0). An infinite value has no min-max scale: it
    raises.

    >>> minmax([1, 3, 2]).tolist()
    [0.0, 1.0, 0.5]
    """
    a = np.asarray(x, dtype=float)
    if np.isinf(a).any():
        raise ValueError("min-max normalization needs finite scores; got an infinite value")
    if np.isnan(a).all():
        return a.copy()
    return minmax_scale(a)


def normalize(scores: pd.DataFrame) -> pd.DataFrame:
    """Orient every column higher-is-better (error rates negated) and min-max normalize it (Guzman et al. 2014,
    section 4.2: "a min-max normalization, for each metric, and for each language pair")."""
    out = {}
    for c in scores.columns:
        v = scores[c].to_numpy(dtype=float)
        out[c] = minmax(v if higher_is_better(c) else -v)
    return pd.DataFrame(out, index=scores.index)


def uniform(normalized: pd.DataFrame, names: Sequence[str]) -> np.ndarray:
    """Uniform linear interpolation: the mean of the normalized columns ``names``."""
    return normalized[list(names)].to_numpy(dtype=float).mean(axis=1)


# ---------------------------------------------------------------------------------------------------------------
# tuned combination: PRO-like pairwise logistic regression
# ---------------------------------------------------------------------------------------------------------------

def pairwise_examples(features: np.ndarray, better: np.ndarray, worse: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """PRO training set from human pairs: ``f(better) - f(worse)`` labelled 1 and its negation labelled 0."""
    f = np.asarray(features, dtype=float)
    d = f[better] - f[worse]
    return np.vstack([d, -d]), np.concatenate([np.ones(len(d)), np.zeros(len(d))])


def fit_pro(features: np.ndarray, better: np.ndarray, worse: np.ndarray, C: float = 1.0) -> np.ndarray:
    """Weights of the linear combination from all human pairs (MaxEnt = L2-regularized logistic regression,
    scikit-learn ``lbfgs``, no intercept: a pairwise difference has no offset). ``C`` is the inverse
    regularization strength (the paper does not give one; 1.0 is scikit-learn's default)."""
    from sklearn.linear_model import LogisticRegression

    if len(better) == 0:
        raise ValueError("no human pairs to train on")
    X, y = pairwise_examples(features, better, worse)
    ok = np.isfinite(X).all(axis=1)
    w = _lbfgs_logistic(X[ok], y[ok], C) if ok.any() else None
    if w is None:  # no pairs left, or no convergence: scikit-learn's own error or warning
        w = LogisticRegression(C=C, fit_intercept=False, max_iter=1000).fit(X[ok], y[ok]).coef_.ravel()
    return w


def _lbfgs_logistic(X: np.ndarray, y: np.ndarray, C: float) -> np.ndarray | None:
    """``LogisticRegression(C=C, fit_intercept=False, max_iter=1000).fit(X, y).coef_.ravel()`` bit for bit (its
    objective, ``LinearModelLoss.loss_gradient``, written out with the same operations, and the same L-BFGS call)
    without the estimator's per-fit checks, most of a fit's time (the tuned placebo makes thousands); None when
    L-BFGS does not converge."""
    pointwise, n, l2 = HalfBinomialLoss().loss_gradient, len(y), 1.0 / (C * len(y))

    def loss_gradient(w: np.ndarray) -> tuple[float, np.ndarray]:
        loss, grad = pointwise(y_true=y, raw_prediction=X @ w + 0.0, sample_weight=None, n_threads=1)
        grad /= n
        return float(np.sum(loss) / n) + float(0.5 * l2 * (w @ w)), X.T @ grad + l2 * w

    res = minimize(loss_gradient, np.zeros(X.shape[1]), method="L-BFGS-B", jac=True,
                   options={"maxiter": 1000, "maxls": 50, "gtol": 1e-4, "ftol": 64 * np.finfo(float).eps})
    return res.x if res.status == 0 else None


def _pairs_within(mask: np.ndarray, human: np.ndarray, segments: np.ndarray, threshold: float):
    idx = np.flatnonzero(mask)
    b, w = stats.better_worse_pairs(human[idx], segments[idx], threshold)
    return idx[b], idx[w]


def document_folds(groups: Sequence, n_folds: int = 10) -> list[np.ndarray]:
    """Fold id lists over whole documents: documents are assigned largest first to the currently smallest fold
    (folds of about equal size, a document never split, as in the paper's section 5.4). With fewer documents
    than ``n_folds`` there are as many folds as documents (leave-one-document-out)."""
    g = np.asarray(groups)
    docs, sizes = np.unique(g, return_counts=True)
    k = min(n_folds, len(docs))
    if k < 2:
        raise ValueError(f"cross-validation over documents needs at least 2 documents, got {len(docs)}")
    load = np.zeros(k)
    members: list[list] = [[] for _ in range(k)]
    for d, s in sorted(zip(docs, sizes), key=lambda x: (-x[1], str(x[0]))):
        f = int(np.argmin(load))
        load[f] += s
        members[f].append(d)
    return [np.flatnonzero(np.isin(g, m)) for m in members]


def tuned_cv(features: np.ndarray, human: Sequence[float], segments: Sequence, groups: Sequence, n_folds: int = 10,
             threshold: float = DEFAULT_THRESHOLD, C: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Out-of-fold combined scores: for each fold of :func:`document_folds`, train :func:`fit_pro` on the human
    pairs of the other folds and score the fold. Returns ``(scores, weights)`` with one weight row per fold.
    Pairs never cross segments, so the WMT12 tau of the pooled out-of-fold scores equals the tau of the pooled
    per-fold concordance counts. ``features`` (n, p), or a stack (k, n, p) of k feature sets on the same rows
    (fitted one by one on the same fold pairs, which are built once): scores (k, n), weights (k, folds, p)."""
    f = np.asarray(features, dtype=float)
    stack = f if f.ndim == 3 else f[None]
    h = np.asarray(human, dtype=float)
    seg = np.asarray(segments)
    out = np.full(stack.shape[:2], np.nan)
    folds = document_folds(groups, n_folds)
    weights = np.empty((len(stack), len(folds), stack.shape[2]))
    with threadpool_limits(1, user_api="blas"):  # tiny BLAS calls in L-BFGS: one thread is 2-3 times faster
        for i, test in enumerate(folds):
            train = np.ones(stack.shape[1], dtype=bool)
            train[test] = False
            b, w = _pairs_within(train, h, seg, threshold)
            for j, fj in enumerate(stack):
                weights[j, i] = fit_pro(fj, b, w, C)
                out[j, test] = fj[test] @ weights[j, i]
    return (out, weights) if f.ndim == 3 else (out[0], weights[0])


def half_split(groups: Sequence, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Two halves of the documents (shuffled with ``seed``, then assigned to the smaller half): boolean masks
    ``(tune, test)`` -- the analog of the paper's tune-on-WMT12 / test-on-WMT11 experiment."""
    g = np.asarray(groups)
    docs, sizes = np.unique(g, return_counts=True)
    if len(docs) < 2:
        raise ValueError("a half/half split needs at least 2 documents")
    order = np.random.default_rng(seed).permutation(len(docs))
    halves: list[list] = [[], []]
    load = [0, 0]
    for i in sorted(order, key=lambda i: -sizes[i]):
        k = 0 if load[0] <= load[1] else 1
        halves[k].append(docs[i])
        load[k] += sizes[i]
    tune = np.isin(g, halves[0])
    return tune, ~tune


def tuned_half(features: np.ndarray, human: Sequence[float], segments: Sequence, groups: Sequence, seed: int = 0,
               threshold: float = DEFAULT_THRESHOLD, C: float = 1.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Tune on one half of the documents, score the other: ``(scores on the test half, NaN elsewhere; weights;
    test mask)``. ``features`` may be a stack (k, n, p) as in :func:`tuned_cv` (scores (k, n), weights (k, p))."""
    f = np.asarray(features, dtype=float)
    stack = f if f.ndim == 3 else f[None]
    tune, test = half_split(groups, seed)
    b, w = _pairs_within(tune, np.asarray(human, dtype=float), np.asarray(segments), threshold)
    with threadpool_limits(1, user_api="blas"):
        wt = np.array([fit_pro(fj, b, w, C) for fj in stack])
    out = np.full(stack.shape[:2], np.nan)
    for j, fj in enumerate(stack):
        out[j, test] = fj[test] @ wt[j]
    return (out, wt, test) if f.ndim == 3 else (out[0], wt[0], test)


# ---------------------------------------------------------------------------------------------------------------
# evaluation: the WMT12 tau
# ---------------------------------------------------------------------------------------------------------------

def segment_tau(metric: Sequence[float], human: Sequence[float], segments: Sequence,
                threshold: float = DEFAULT_THRESHOLD, mask: np.ndarray | None = None,
                texts: Sequence[str] | None = None) -> float:
    """WMT12 Kendall tau (:func:`syneval_nb.stats.wmt12_tau`: pairs of the same segment whose human scores differ
    by more than ``threshold``; metric ties discordant; tau = (C - D) / (C + D)) over the rows in ``mask`` (all by
    default); rows with a NaN metric score are dropped.

    With ``texts`` (the hypotheses), pairs of *identical* translations are dropped as well: every metric ties them
    (a forced discordance), and their human difference is rater noise (TED MQM has one rater per system and
    segment): ``wmt12_tau(..., distinct=texts)``.
    """
    m = np.asarray(metric, dtype=float)
    keep = np.isfinite(m) if mask is None else (np.isfinite(m) & mask)
    t = None if texts is None else np.asarray(texts, dtype=object)[keep]
    return stats.wmt12_tau(m[keep], np.asarray(human, dtype=float)[keep], np.asarray(segments)[keep], threshold,
                           distinct=t)


# ---------------------------------------------------------------------------------------------------------------
# controls (issue 9, section 4)
# ---------------------------------------------------------------------------------------------------------------

def single_edu_ties(hyp_rst: Sequence[Mapping | None], ref_rst: Sequence[Mapping | None]) -> dict[str, int]:
    """Count (hypothesis, reference) pairs by voidness: ``both_void`` pairs score DR = 1.0 whatever their words,
    ``one_void`` pairs score DR = 0.0; ``neither_void`` pairs are compared on structure; ``missing`` has a None."""

    out = {"both_void": 0, "one_void": 0, "neither_void": 0, "missing": 0}
    for h, r in zip(hyp_rst, ref_rst):
        if h is None or r is None:
            out["missing"] += 1
            continue
        v = is_void(h) + is_void(r)
        out[("neither_void", "one_void", "both_void")[v]] += 1
    return out


def human_pair_ties(metric: Sequence[float], human: Sequence[float], segments: Sequence,
                    threshold: float = DEFAULT_THRESHOLD, texts: Sequence[str] | None = None) -> dict[str, float]:
    """How many human pairs (:func:`syneval_nb.stats.better_worse_pairs`) the metric ties (counted as discordant
    by the WMT12 tau): ``pairs``, ``ties``, ``tie_rate``; with ``texts``, also ``identical`` (pairs of identical
    translations, which every metric ties)."""
    b, w = stats.better_worse_pairs(np.asarray(human, dtype=float), np.asarray(segments), threshold)
    c, d, t = stats.concordance_counts(np.asarray(metric, dtype=float), b, w)
    n = c + d + t
    out = {"pairs": n, "ties": t, "tie_rate": t / n if n else float("nan")}
    if texts is not None:
        tx = np.asarray(texts, dtype=object)
        out["identical"] = int((tx[b] == tx[w]).sum())
    return out


def length_control(hyps: Sequence[str], refs: Sequence[str], tokenizer: str = "13a") -> np.ndarray:
    """The length-difference control baseline ``-|len(hyp) - len(ref)|`` in tokens (higher = closer in length):
    :func:`syneval_nb.stats.length_controls` on :func:`syneval_nb.metrics.lexical.tokenize` lengths."""

    return stats.length_controls([len(tokenize(h, tokenizer)) for h in hyps],
                                 np.array([len(tokenize(r, tokenizer)) for r in refs], dtype=float))["neg_abs_len_diff"]


def partial_correlation(x: Sequence[float], y: Sequence[float], z: np.ndarray | Sequence[float]) -> float:
    """:func:`syneval_nb.stats.partial_correlation` dropping rows with a missing value (NaN metric scores)."""
    return stats.partial_correlation(x, y, z, nan_policy="omit")

