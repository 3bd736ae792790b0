"""Kulesza & Shieber (2004): a learned sentence-level MT metric from a human-vs-machine SVM classifier.

Paper 002 in ``../shared/papers``. An SVM with a Gaussian kernel is trained to tell human translations from
machine translations (section 2); the *signed distance* of a hypothesis to the separator is its score, higher
meaning more human-like (section 3.1). No human quality judgments are used for training or model selection:
the hyper-parameters C and sigma come from a grid search on validation *classification accuracy* (section 4.2).

Features (section 3.2), computed from a hypothesis and its references, in this order (:data:`FEATURE_NAMES`):

``p1 .. p5``
    unmodified n-gram precision, n = 1..5: the fraction of hypothesis n-grams found in *any* reference, each
    reference n-gram occurrence matching at most one hypothesis n-gram. With the references' n-gram occurrences
    pooled, the matched count of an n-gram g is ``min(c_hyp(g), sum_r c_r(g))`` (BLEU instead clips by the
    *maximum* count in a single reference; with one reference the two coincide).
``len_ratio_min``, ``len_ratio_max``
    the minimum and the maximum of ``|hyp| / |ref|`` over the references.
``wer``
    the minimum over the references of the word edit distance (insertions, deletions, substitutions):
    a **raw count**, as the paper defines it ("the minimum edit distance"), not divided by the reference length.
``per``
    "removing the words in the shorter translation from those in the longer translation and returning the
    minimum size of the remaining set (over all references)": ``min_r (max(|h|,|r|) - |h ∩ r|)`` with a
    multiset intersection, again a **raw count**.

Both counts are the ``errors`` statistic of :mod:`syneval_nb.metrics.lexical`'s ``WER`` / ``PER`` (whose docstrings
cite this paper); those metrics' *scores* divide the count by the chosen reference's length (an error rate, as
in Tillmann et al. 1997). The features keep the undivided counts, as the paper words them; the learner sees
the lengths through the length ratios. The Table 1 baselines of notebook 05 are the lexical metrics (rates),
the standard WER/PER the paper compares against.

Other choices the paper leaves open (stated here and in the notebook):

* tokenization: ``lexical.tokenize`` (sacrebleu 13a, case-sensitive by default); recorded in the signature;
* a hypothesis shorter than n words has no n-grams; its ``p_n`` is 0 (the paper does not say);
* the features are standardized (``StandardScaler``, fitted on the training set) before the SVM. The paper used
  Torch3 on raw features, so its optimum sigma = 10 is in *raw* feature units and is not directly comparable to
  sigma on the standardized scale; the default grid still contains (C=50, sigma=10). ``standardize=False``
  trains on the raw features instead, the paper's setting, where sigma = 10 means what it meant there;
* score = ``decision_function / ||w||``, the geometric signed distance; ``decision_function`` alone is the same
  up to a positive per-model constant (identical correlations and rankings) and is available too.

Beyond the paper (its section 5.1 suggests syntax-aware features): ``FeatureConfig(syntax=True)`` appends
STM and HWCM for each maximum depth 1..D and TKM (Liu & Gildea 2005), from :func:`syneval_nb.metrics.syntactic.score_corpus`
on parse strings (``stm_1..stm_D, hwcm_1..hwcm_D, tkm``).

Training data without human judgments (section 2, adapted): :func:`build_pool` scores one human translation
against another as the single reference (label 1) and every MT output against the same reference (label 0);
:func:`split_sources` partitions the *source segments* into train / validation / test, so no source sentence is
in two parts; :func:`balance` keeps every human hypothesis and draws one MT output of the same source (seeded),
giving balanced classes with the same source mix. The test part keeps every MT output of its sources (human
translations excluded) for the correlation with human scores.

The public names are in ``__all__``; notebook 05's study (baselines, correlation tables, Figure 2's
meta-correlation, verdicts) is in :mod:`syneval_nb.studies.learned_metric`. The ridge metric of chapter 10
(:class:`RidgeMetric`, :func:`fit_ridge`) is fitted to human scores; both families are saved and read by one
mechanism (:func:`load_model`, ``syneval-nb score -m FILE``).
"""
from __future__ import annotations

import math
import time
import warnings
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd
from tqdm.auto import tqdm
from syneval_nb.metrics import syntactic
from syneval_nb.metrics.base import Corpus, Metric, depth_scores, mean_rows
from syneval_nb.metrics.lexical import ngram_counts, tokenize
from syneval_nb.metrics import lexical
from syneval_nb.stats import length_covariates, length_knots

__all__ = ["features", "FULL_GRID", "LearnedMetric", "RidgeMetric", "load_model", "fit_ridge", "run_experiment"]


#: Bump when the features or the saved-model layout change; :meth:`LearnedMetric.load` refuses other versions.
FORMAT_VERSION = 1

MAX_N = 5
FEATURE_NAMES: tuple[str, ...] = tuple(f"p{n}" for n in range(1, MAX_N + 1)) + (
    "len_ratio_min", "len_ratio_max", "wer", "per")

#: Small grid for CI / quick runs and the default full grid (sigma in standardized units; both hold C=50, sigma=10).
SMALL_GRID: dict[str, tuple[float, ...]] = {"C": (1.0, 50.0), "sigma": (1.0, 10.0)}
FULL_GRID: dict[str, tuple[float, ...]] = {
    "C": (0.1, 0.5, 1.0, 5.0, 10.0, 50.0, 100.0, 500.0),
    "sigma": (0.5, 1.0, 2.0, 3.0, 5.0, 10.0, 20.0),
}

Tokens = Sequence[str]


# ---------------------------------------------------------------------------------------------------------------
# features (section 3.2)
# ---------------------------------------------------------------------------------------------------------------


def _tokens(text: str | Tokens, tokenizer: str, lowercase: bool) -> list[str]:
    if isinstance(text, str):
        return tokenize(text, tokenizer=tokenizer, lowercase=lowercase)
    if not isinstance(text, Sequence) or not all(isinstance(t, str) for t in text):
        raise TypeError(f"a hypothesis or reference must be a string or a sequence of token strings, "
                        f"got {type(text).__name__}")
    return [t.lower() for t in text] if lowercase else list(text)


def _pooled_counts(refs: Sequence[Tokens], max_n: int) -> list[Counter]:
    """Per order n = 1..max_n, the n-gram counts summed over all references (each occurrence matchable once)."""
    pooled = [Counter() for _ in range(max_n)]
    for ref in refs:
        for acc, counts in zip(pooled, ngram_counts(ref, max_n)):
            acc.update(counts)
    return pooled


def unmodified_precisions(hyp: Tokens, refs: Sequence[Tokens], max_n: int = MAX_N) -> list[float]:
    """Section 3.2: for n = 1..max_n, the fraction of hypothesis n-grams matched in the pooled reference n-gram
    occurrences, ``sum_g min(c_hyp(g), sum_r c_r(g)) / sum_g c_hyp(g)``; 0.0 when the hypothesis has fewer
    than n words. (n-gram counting: ``lexical.ngram_counts``, the kit's one n-gram counter.)"""
    out = []
    for hyp_counts, pool in zip(ngram_counts(hyp, max_n), _pooled_counts(refs, max_n)):
        total = sum(hyp_counts.values())
        out.append(sum(min(c, pool[g]) for g, c in hyp_counts.items()) / total if total else 0.0)
    return out


# the raw error counts come from lexical's WER/PER statistics (the errors of the best reference), computed on
# the tokens as they are
_WER_COUNTS = lexical.WER(tokenizer="none")
_PER_COUNTS = lexical.PER(tokenizer="none")


def _check_inputs(hyp: Tokens, refs: Sequence[Tokens]) -> None:
    if len(refs) == 0:
        raise ValueError("features() needs at least one reference")
    if len(hyp) == 0:
        raise ValueError("empty hypothesis: the length ratios and precisions are undefined")
    for i, r in enumerate(refs):
        if len(r) == 0:
            raise ValueError(f"reference {i} is empty: the length ratio |hyp|/|ref| is undefined")


def features(hyp: str | Tokens, refs: Sequence[str | Tokens], *, tokenizer: str = "13a",
             lowercase: bool = False) -> dict[str, float]:
    """The nine features of section 3.2 for one hypothesis: ``p1..p5, len_ratio_min, len_ratio_max, wer, per``.

    ``hyp`` and each reference are raw strings (tokenized with ``lexical.tokenize``) or token lists (used as is,
    apart from ``lowercase``). ``wer`` and ``per`` are raw counts minimized over the references (module docstring).
    """
    if isinstance(refs, str):
        raise TypeError("refs must be a sequence of references, not a single string")
    h = _tokens(hyp, tokenizer, lowercase)
    rs = [_tokens(r, tokenizer, lowercase) for r in refs]
    _check_inputs(h, rs)
    out = {f"p{n}": p for n, p in enumerate(unmodified_precisions(h, rs, MAX_N), start=1)}
    ratios = [len(h) / len(r) for r in rs]
    out["len_ratio_min"] = min(ratios)
    out["len_ratio_max"] = max(ratios)
    out["wer"] = float(_WER_COUNTS.min_errors(h, rs))
    out["per"] = float(_PER_COUNTS.min_errors(h, rs))
    return out


# ---------------------------------------------------------------------------------------------------------------
# optional syntactic features (beyond the paper)
# ---------------------------------------------------------------------------------------------------------------


def syntactic_feature_names(depth: int) -> list[str]:
    """Names of the syntactic extension: ``stm_1..stm_D``, ``hwcm_1..hwcm_D``, ``tkm``."""
    return [f"stm_{d}" for d in range(1, depth + 1)] + [f"hwcm_{d}" for d in range(1, depth + 1)] + ["tkm"]


def syntactic_frame(hyp_parses: Sequence[str | None], ref_parses: Sequence[Sequence[str | None]], depth: int = 3,
                    *, progress: bool = False) -> pd.DataFrame:
    """The syntactic extension's columns (:func:`syntactic_feature_names`) for aligned PTB parse strings.

    Computed by the registry's metrics (:func:`syneval_nb.metrics.get`, default options: Liu & Gildea 2005's
    literal mean over d = 1..D, HWCM epsilon 1e-3, TKM lambda 1): ``stm_d`` / ``hwcm_d`` are STM / HWCM with
    maximum depth (chain length) ``d``, from one pass of ``STM-D`` / ``HWCM-D`` (the matches and totals of
    depths 1..d are those of depth d's metric); ``tkm`` the best kernel cosine. An unparsed hypothesis gets each
    metric's worst value (0; HWCM epsilon), as everywhere in the kit; a segment without a parsed reference raises
    ``ValueError``.
    """
    names = syntactic_feature_names(depth)
    if len(hyp_parses) == 0:
        return pd.DataFrame(columns=names, dtype=float)
    refs = [list(r) for r in ref_parses]
    # the syntactic metrics read only the parses: the texts are placeholders of the right shape
    corpus = Corpus([""] * len(refs), [[""] * len(r) for r in refs], hyp_ptb=list(hyp_parses), ref_ptb=refs,
                    ref_layout="segments", check_words=False)
    cols: dict[str, np.ndarray] = {}
    for fam in tqdm(("STM", "HWCM", "TKM"), desc="syntactic features", disable=not progress, leave=False):
        if fam == "TKM":
            cols["tkm"] = syntactic.TKM().sentence_scores(corpus)
            continue
        m = getattr(syntactic, fam)(depth=depth)
        S = m.segment_stats(corpus)
        bad_rows = np.isnan(S).any(axis=1)
        for d in range(1, depth + 1):
            v = depth_scores(S[:, :d], S[:, depth:depth + d], m.effective_order, m.epsilon)
            cols[f"{fam.lower()}_{d}"] = np.where(bad_rows, np.nan, v)
    df = pd.DataFrame(cols)[names].astype(float)
    bad = np.flatnonzero(df.isna().any(axis=1).to_numpy())
    if len(bad):
        raise ValueError(f"{len(bad)} hypotheses have no syntactic features (unparsed hypothesis or reference), "
                         f"first at row {bad[0]}")
    return df


@dataclass(frozen=True)
class FeatureConfig:
    """Everything that changes the feature vector; stored with a trained model and checked on load."""

    tokenizer: str = "13a"
    lowercase: bool = False
    syntax: bool = False
    syntax_depth: int = 3

    def names(self) -> list[str]:
        names = list(FEATURE_NAMES)
        if self.syntax:
            names += syntactic_feature_names(self.syntax_depth)
        return names

    def signature(self) -> str:
        s = f"ks04|tok:{self.tokenizer}|lc:{'yes' if self.lowercase else 'no'}"
        if self.syntax:
            s += f"|syntax:stm+hwcm+tkm|depth:{self.syntax_depth}"
        return s


def feature_frame(hyps: Sequence[str], refs: Sequence[Sequence[str]], config: FeatureConfig = FeatureConfig(), *,
                  hyp_trees: Sequence[Any] | None = None, ref_trees: Sequence[Sequence[Any]] | None = None,
                  progress: bool = True) -> pd.DataFrame:
    """Feature matrix (one row per hypothesis, columns ``config.names()``); ``refs[i]`` are segment i's refs.

    With ``config.syntax`` the PTB parse strings (``hyp_trees[i]``, ``ref_trees[i]`` = list) are required.
    """
    if len(hyps) != len(refs):
        raise ValueError(f"{len(hyps)} hypotheses but {len(refs)} reference lists")
    if config.syntax and (hyp_trees is None or ref_trees is None):
        raise ValueError("FeatureConfig(syntax=True) needs hyp_trees and ref_trees")
    if config.syntax and (len(hyp_trees) != len(hyps) or len(ref_trees) != len(hyps)):  # type: ignore[arg-type]
        raise ValueError("hyp_trees/ref_trees must be aligned with the hypotheses")
    rows = []
    for i, (h, r) in enumerate(tqdm(list(zip(hyps, refs)), desc="features", disable=not progress, leave=False)):
        try:
            rows.append(features(h, r, tokenizer=config.tokenizer, lowercase=config.lowercase))
        except (TypeError, ValueError) as err:
            raise type(err)(f"segment {i}: {err}") from err
    frame = pd.DataFrame(rows, columns=list(FEATURE_NAMES), dtype=float)
    if config.syntax:
        syn = syntactic_frame(hyp_trees, ref_trees, config.syntax_depth, progress=progress)  # type: ignore[arg-type]
        frame = pd.concat([frame, syn], axis=1)
    return frame[config.names()]


# ---------------------------------------------------------------------------------------------------------------
# the classifier (sections 3.1, 4.2)
# ---------------------------------------------------------------------------------------------------------------


def make_pipeline(C: float = 50.0, sigma: float = 10.0, standardize: bool = True):
    """``StandardScaler`` (or ``"passthrough"`` when not ``standardize``) + ``SVC(kernel='rbf', C=C,
    gamma=1/(2 sigma^2))``: the Gaussian kernel ``exp(-||x-x'||^2 / (2 sigma^2))`` with sigma its standard
    deviation, as the paper parametrizes it."""
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC

    if C <= 0 or sigma <= 0:
        raise ValueError(f"C and sigma must be positive, got C={C}, sigma={sigma}")
    svc = SVC(kernel="rbf", C=C, gamma=1.0 / (2.0 * sigma**2), cache_size=500)
    return Pipeline([("scale", StandardScaler() if standardize else "passthrough"), ("svm", svc)])


def _weight_norm(pipe) -> float:
    """``||w||`` in the kernel feature space: ``sqrt(a^T K a)`` over the support vectors (``a = y_i alpha_i``)."""
    from sklearn.metrics.pairwise import rbf_kernel

    svm = pipe.named_steps["svm"]
    a = svm.dual_coef_[0]
    sv = svm.support_vectors_
    total = 0.0
    for start in range(0, len(sv), 2000):
        block = rbf_kernel(sv[start : start + 2000], sv, gamma=svm.gamma)
        total += float(a[start : start + 2000] @ (block @ a))
    return math.sqrt(max(total, 0.0))


@dataclass
class LearnedMetric(Metric):
    """The Kulesza & Shieber metric: an SVM trained to recognise human translations; score = signed distance.

    Labels: 1 = human, 0 = machine, so a positive score is on the human side and higher is better.
    Use :meth:`fit` on a feature frame, then :meth:`sentence_scores` / :meth:`corpus_score` on raw text,
    :meth:`save` / :meth:`load` to keep it. The SVC fit itself is deterministic; ``seed`` records the seed of the
    data sampling/balancing that produced the training set.
    """

    config: FeatureConfig = field(default_factory=FeatureConfig)
    C: float = 50.0
    sigma: float = 10.0
    seed: int = 0
    standardize: bool = True
    pipeline: Any = None
    w_norm: float = float("nan")
    train_info: dict = field(default_factory=dict)

    name = "Learned"

    def __post_init__(self) -> None:
        Metric.__init__(self)

    @property
    def inputs(self) -> tuple[str, ...]:  # type: ignore[override]
        return ("text", "ptb") if self.config.syntax else ("text",)

    # -- training -------------------------------------------------------------------------------------------
    def fit(self, X: pd.DataFrame, y: Sequence[int]) -> "LearnedMetric":
        """Train on a feature frame (columns ``config.names()``) with labels 1 = human, 0 = machine."""
        X = self._check_frame(X)
        y = np.asarray(y, dtype=int)
        if set(np.unique(y)) != {0, 1}:
            raise ValueError("labels must contain both classes, 1 = human and 0 = machine")
        self.pipeline = make_pipeline(self.C, self.sigma, self.standardize)
        t0 = time.perf_counter()
        self.pipeline.fit(X.to_numpy(), y)
        self.w_norm = _weight_norm(self.pipeline)
        self.train_info = {
            "n_train": int(len(y)),
            "n_human": int(y.sum()),
            "n_support": int(self.pipeline.named_steps["svm"].support_.size),
            "fit_seconds": time.perf_counter() - t0,
        }
        return self

    def _check_frame(self, X: pd.DataFrame) -> pd.DataFrame:
        names = self.config.names()
        missing = [c for c in names if c not in X.columns]
        if missing:
            raise ValueError(f"feature frame lacks columns {missing} (config {self.config.signature()})")
        X = X[names]
        if not np.isfinite(X.to_numpy()).all():
            raise ValueError("feature frame contains NaN or infinite values")
        return X

    def _require_fitted(self) -> None:
        if self.pipeline is None:
            raise RuntimeError("LearnedMetric is not trained: call fit() or load()")

    # -- scoring --------------------------------------------------------------------------------------------
    def decision_function(self, X: pd.DataFrame) -> np.ndarray:
        """``<w, phi(x)> + b`` (sklearn's functional margin), positive on the human side."""
        self._require_fitted()
        return self.pipeline.decision_function(self._check_frame(X).to_numpy())

    def score_features(self, X: pd.DataFrame) -> np.ndarray:
        """Signed geometric distance to the separator, ``decision_function / ||w||`` (section 3.1)."""
        return self.decision_function(X) / self.w_norm

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        """1 = human, 0 = machine."""
        self._require_fitted()
        return self.pipeline.predict(self._check_frame(X).to_numpy())

    def _corpus_stats(self, corpus: Corpus) -> np.ndarray:
        """``[score, 1]`` per segment: features with the stored :class:`FeatureConfig`, then the signed distance
        (:meth:`score_features`); the corpus score is the mean (the paper is sentence-level only)."""
        self._require_fitted()
        kw = {}
        if self.config.syntax:
            kw["hyp_trees"], kw["ref_trees"] = corpus.ptb()
        X = feature_frame(corpus.hyps, corpus.refs, self.config, progress=corpus.progress, **kw)
        s = self.score_features(X)
        return np.column_stack([s, np.ones(len(s))]) if len(s) else np.zeros((0, 2))

    def score_from_stats(self, sums: np.ndarray) -> np.ndarray:
        return mean_rows(sums)

    def _parts(self, sums: np.ndarray) -> dict:
        return {"n_scored": int(sums[1])}

    def sentence_scores(self, hyps: Any, refs: Any = None, *, hyp_trees: Sequence[Any] | None = None,
                        ref_trees: Sequence[Sequence[Any]] | None = None, progress: bool = False,
                        ref_layout: str | None = None) -> np.ndarray:
        """Score new data (texts, or a :class:`~syneval_nb.metrics.base.Corpus`); a model with syntax features reads
        ``hyp_trees`` / ``ref_trees`` (PTB strings, ``ref_trees[i]`` = segment ``i``'s) or parses the texts."""
        if not isinstance(hyps, Corpus):
            hyps = Corpus(hyps, refs, hyp_ptb=hyp_trees, ref_ptb=ref_trees, ref_layout=ref_layout, progress=progress)
            refs = None
        return super().sentence_scores(hyps, refs)

    def _options(self) -> dict[str, Any]:
        model, *rest = self.config.signature().split("|")
        opts: dict[str, Any] = {"model": model, **dict(tok.split(":", 1) for tok in rest)}
        return {**opts, "svm": "rbf", "C": f"{self.C:g}", "sigma": f"{self.sigma:g}",
                "scale": "std" if self.standardize else "raw", "format": f"v{FORMAT_VERSION}"}

    # -- persistence ----------------------------------------------------------------------------------------
    def save(self, path: str | Path) -> Path:
        """joblib file with the fitted pipeline, the feature config, the format and sklearn versions."""
        self._require_fitted()
        return _dump(path, {"model": "svm", "feature_names": self.config.names(), "config": asdict(self.config),
                            "C": self.C, "sigma": self.sigma, "seed": self.seed, "standardize": self.standardize,
                            "w_norm": self.w_norm, "train_info": self.train_info, "pipeline": self.pipeline})

    @classmethod
    def load(cls, path: str | Path) -> "LearnedMetric":
        """Load a model written by :meth:`save` (:func:`load_model`, checked to be an SVM model)."""
        m = load_model(path)
        if not isinstance(m, cls):
            raise ValueError(f"{path}: a {m.name} model, not a Kulesza & Shieber SVM")
        return m

    @classmethod
    def _from_payload(cls, payload: dict, path: str | Path) -> "LearnedMetric":
        config = FeatureConfig(**payload["config"])
        if config.names() != list(payload["feature_names"]):
            raise ValueError(f"{path}: stored feature names do not match this code's features for {config}")
        return cls(config=config, C=payload["C"], sigma=payload["sigma"], seed=payload["seed"],
                   standardize=payload["standardize"], pipeline=payload["pipeline"], w_norm=payload["w_norm"],
                   train_info=payload["train_info"])


def _dump(path: str | Path, payload: dict) -> Path:
    """The one writer of learned metrics (joblib): ``payload`` with the format and scikit-learn versions."""
    import joblib
    import sklearn

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    joblib.dump({"format_version": FORMAT_VERSION, "sklearn_version": sklearn.__version__, **payload}, path)
    return path


def load_model(path: str | Path) -> Metric:
    """The one reader of saved learned metrics (``get("learned", model=FILE)``, ``syneval-nb score -m FILE``): the
    SVM (:class:`LearnedMetric`) or the ridge model (:class:`RidgeMetric`), by the file's ``model`` field (a file
    without one is an SVM). Refuses another format version; warns when scikit-learn's version differs."""
    import joblib
    import sklearn

    try:
        payload = joblib.load(Path(path))
    except Exception as e:  # noqa: BLE001 - not a joblib file (or damaged): one line naming the file
        raise ValueError(f"{path}: not a saved learned metric ({type(e).__name__}: {e})") from None
    if not isinstance(payload, dict) or payload.get("format_version") != FORMAT_VERSION:
        found = payload.get("format_version") if isinstance(payload, dict) else type(payload).__name__
        raise ValueError(f"{path}: learned-metric format {found}, this code reads {FORMAT_VERSION}")
    if payload["sklearn_version"] != sklearn.__version__:
        warnings.warn(f"{path} was saved with scikit-learn {payload['sklearn_version']}, running "
                      f"{sklearn.__version__}", stacklevel=2)
    return {"svm": LearnedMetric, "ridge": RidgeMetric}[payload.get("model", "svm")]._from_payload(payload, path)


# ---------------------------------------------------------------------------------------------------------------
# a ridge regression on registry metrics and the length model, fitted to human scores (issue 36)
# ---------------------------------------------------------------------------------------------------------------

RIDGE_FEATURES = ("BLEU", "chrF", "TER", "METEOR", "STM", "HWCM", "DSTM", "TKM", "TKM λ=0.4", "DTKM", "DTKM λ=0.4")
"""The default features of ``syneval-nb fit`` (registry names): the lexical metrics of the default list,
STM/HWCM/DSTM at their default depths, TKM and DTKM at λ = 1 and 0.4. Add the spaCy variants (``HWCM@spacy``,
``DSTM@spacy``, ``DTKM@spacy``) and ``DR-lex`` (where RST trees exist) by name."""
RIDGE_ALPHAS = tuple(10.0 ** k for k in range(-3, 5))
"""The ridge penalties :func:`fit_ridge` chooses from by internal cross-validation."""


def _lengths(hyps: Sequence[str], refs: Sequence[Sequence[str]]) -> tuple[list[int], list[list[int]]]:
    return [len(tokenize(h)) for h in hyps], [[len(tokenize(r)) for r in rs] for rs in refs]


def ridge_knots(corpora: Iterable[Corpus]) -> dict[str, list[float]]:
    """The length model's spline knots (:func:`syneval_nb.stats.length_knots`, 13a tokens) over every segment of
    ``corpora``: one length model for all systems, fixed in the fitted model and applied unchanged to new data."""
    hl: list[int] = []
    rl: list[list[int]] = []
    for c in corpora:
        h, r = _lengths(c.hyps, c.refs)
        hl += h
        rl += r
    return length_knots(hl, rl)


def ridge_frame(data: Corpus | pd.DataFrame, metrics: Sequence[Metric], *, refs: Sequence[str] = ("ref",),
                knots: Mapping[str, Sequence[float]] | None = None) -> pd.DataFrame:
    """The ridge model's inputs, one row per segment: the sentence score of each metric (column: its name, e.g.
    ``STM-4``, ``TKM λ=0.4``; registry objects, ``[syneval_nb.metrics.get(n) for n in RIDGE_FEATURES]``) and the
    columns of :func:`syneval_nb.stats.length_covariates` with ``knots`` (default: those of these lengths,
    :func:`ridge_knots`; kept in ``attrs["length_knots"]`` for :func:`fit_ridge`). NaN where a metric cannot
    score.

    ``data``: a :class:`~syneval_nb.metrics.base.Corpus` (parses made when a metric needs them), or a frame laid out
    as the loaders' (``target``, the reference columns ``refs``; ``ptb`` and ``ptb_<ref>`` read when a metric needs
    constituency parses: without them a ``ValueError`` names the metric)."""
    if isinstance(data, pd.DataFrame):
        need = {i for m in metrics for i in m.inputs} - {"text"}
        ptb = ["ptb", *(f"ptb_{r}" for r in refs)]
        lacking = [c for c in ptb if c not in data.columns or data[c].isna().all()]
        if "ptb" in need and lacking:
            raise ValueError(f"feature {next(m.name for m in metrics if 'ptb' in m.inputs)} needs constituency "
                             f"parses and the frame has none in {lacking}: load the shipped parses or make them with "
                             f"`syneval-nb parse`")
        if need - {"ptb", "dep"}:
            raise ValueError(f"features on {sorted(need - {'ptb', 'dep'})} need a Corpus with those trees")
        kw = {"hyp_ptb": list(data["ptb"]), "ref_ptb": [list(t) for t in zip(*(data[c] for c in ptb[1:]))]} \
            if "ptb" in need else {}
        data = Corpus(list(data["target"]), [list(t) for t in zip(*(data[r] for r in refs))], ref_layout="segments",
                      check_words=False, **kw)
    out = pd.DataFrame({m.name: m.sentence_scores(data) for m in metrics})
    knots = dict(knots) if knots is not None else ridge_knots([data])
    for k, v in length_covariates(*_lengths(data.hyps, data.refs), knots=knots).items():
        out[k] = v
    out.attrs["length_knots"] = knots
    return out


@dataclass
class RidgeMetric(Metric):
    """A learned metric fitted to human scores: ridge regression (scikit-learn ``RidgeCV`` on standardized
    features) on registry metrics' sentence scores and the kit's length model (:func:`ridge_frame`). Made by
    :func:`fit_ridge` (or ``syneval-nb fit``), kept with :meth:`save`, applied by ``syneval-nb score -m FILE``
    (:func:`load_model`). The signature names the features, the model (alpha, scaling) and the training data. A
    sentence score is the predicted human score; the corpus score their mean. The file keeps the features' names;
    :func:`syneval_nb.metrics.get` (``get(FILE)``, ``get("ridge", model=FILE)``) makes their ``metrics`` again."""

    features: tuple[str, ...] = ()
    metrics: tuple[Metric, ...] = field(default=(), repr=False)
    columns: tuple[str, ...] = ()
    pipeline: Any = None
    training: str = ""
    train_info: dict = field(default_factory=dict)
    length_knots: dict = field(default_factory=dict)

    name = "Ridge"

    def __post_init__(self) -> None:
        Metric.__init__(self)

    @property
    def inputs(self) -> tuple[str, ...]:  # type: ignore[override]
        return tuple(dict.fromkeys(["text", *(i for m in self.metrics for i in m.inputs)]))

    @property
    def alpha(self) -> float:
        return float(self.pipeline.named_steps["ridge"].alpha_)

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        """Predicted human scores of a :func:`ridge_frame` (NaN for a row with a NaN feature)."""
        if self.pipeline is None:
            raise RuntimeError("RidgeMetric is not fitted: call fit_ridge() or load_model()")
        missing = [c for c in self.columns if c not in X.columns]
        if missing:
            raise ValueError(f"the model's columns {missing} are not in the frame (columns {list(X.columns)}): "
                             f"the frame or the kit's length model differs from the training's; refit")
        Z = X[list(self.columns)].to_numpy(dtype=float)
        ok = np.isfinite(Z).all(axis=1)
        out = np.full(len(Z), np.nan)
        if ok.any():
            out[ok] = self.pipeline.predict(Z[ok])
        return out

    def _corpus_stats(self, corpus: Corpus) -> np.ndarray:
        if [m.name for m in self.metrics] != list(self.features):
            raise RuntimeError(f"the ridge model's feature metrics are not made ({', '.join(self.features)}): "
                               f"load it with syneval_nb.metrics.get(path)")
        s = self.predict(ridge_frame(corpus, self.metrics, knots=self.length_knots))
        return np.column_stack([s, np.where(np.isnan(s), np.nan, 1.0)]).reshape(-1, 2)

    def score_from_stats(self, sums: np.ndarray) -> np.ndarray:
        return mean_rows(sums)

    def _options(self) -> dict[str, Any]:
        return {"model": "ridge", "features": "+".join(self.features),
                "length": f"flexible:{len(self.columns) - len(self.features)} terms", "alpha": f"{self.alpha:g}",
                "scale": "std",
                "train": f"{self.training} (n={self.train_info.get('n_train')})", "format": f"v{FORMAT_VERSION}"}

    def save(self, path: str | Path) -> Path:
        """The joblib file ``score -m`` applies (the SVM's format, :func:`load_model`)."""
        return _dump(path, {"model": "ridge", "features": list(self.features), "columns": list(self.columns),
                            "training": self.training, "train_info": self.train_info, "pipeline": self.pipeline,
                            "length_knots": self.length_knots})

    @classmethod
    def _from_payload(cls, payload: dict, path: str | Path) -> "RidgeMetric":
        return cls(features=tuple(payload["features"]), columns=tuple(payload["columns"]),
                   pipeline=payload["pipeline"], training=payload["training"], train_info=payload["train_info"],
                   length_knots=payload["length_knots"])


def fit_ridge(frame: pd.DataFrame, human: str, metrics: Sequence[Metric], *, groups: Sequence[Any] | None = None,
              training: str = "", alphas: Sequence[float] = RIDGE_ALPHAS, folds: int = 5) -> RidgeMetric:
    """Fit :class:`RidgeMetric` to the human scores ``frame[human]`` from the columns of :func:`ridge_frame` (for
    the same ``metrics``) in ``frame``. Rows with a missing human score or feature are left out (counted in
    ``train_info``). ``StandardScaler`` then ``RidgeCV``: the alpha of ``alphas`` with the least mean squared
    error in ``folds``-fold cross-validation grouped by ``groups`` (source segments or documents: no group in two
    folds), or in RidgeCV's efficient leave-one-out without groups. ``training`` names the training data in the
    signature (e.g. ``"TED zh-en MQM"``)."""
    from sklearn.linear_model import RidgeCV
    from sklearn.model_selection import GroupKFold
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    features = tuple(m.name for m in metrics)
    knots = frame.attrs.get("length_knots")
    if knots is None:
        raise ValueError("the frame has no length model (attrs['length_knots']): make it with ridge_frame(data, "
                         "metrics, knots=...) and keep its attrs")
    columns = [*features, *length_covariates([1], [1], knots=knots)]
    missing = [c for c in [*columns, human] if c not in frame.columns]
    if missing:
        raise ValueError(f"the frame lacks the columns {missing}: make them with ridge_frame(data, metrics) and "
                         f"add the human scores")
    X, y = frame[columns].to_numpy(dtype=float), frame[human].to_numpy(dtype=float)
    ok = np.isfinite(X).all(axis=1) & np.isfinite(y)
    if ok.sum() < 3:
        raise ValueError(f"{int(ok.sum())} rows with every feature and a human score: too few to fit")
    if np.ptp(y[ok]) == 0:
        raise ValueError(f"the human scores {human!r} are constant ({y[ok][0]:g} in all {int(ok.sum())} rows): "
                         f"there is nothing to fit")
    g = None if groups is None else np.asarray(groups)[ok]
    cv = None if g is None or len(set(g)) < 2 else list(GroupKFold(min(folds, len(set(g)))).split(X[ok], y[ok], g))
    ridge = RidgeCV(alphas=tuple(alphas), cv=cv, scoring="neg_mean_squared_error")
    pipe = Pipeline([("scale", StandardScaler()), ("ridge", ridge)]).fit(X[ok], y[ok])
    info = {"n_train": int(ok.sum()), "n_left_out": int((~ok).sum()), "human": human,
            "cv": f"group {len(cv)}-fold" if cv else "leave-one-out"}
    return RidgeMetric(features=features, metrics=tuple(metrics), columns=tuple(columns), pipeline=pipe,
                       training=training, train_info=info, length_knots=dict(knots))


def class_accuracy(y_true: Sequence[int], y_pred: Sequence[int]) -> dict[str, float]:
    """Section 4.2's three numbers: accuracy on human (label 1), on machine (label 0) and overall."""
    y_true = np.asarray(y_true)
    y_pred = np.asarray(y_pred)
    return {
        "acc_human": float(np.mean(y_pred[y_true == 1] == 1)),
        "acc_machine": float(np.mean(y_pred[y_true == 0] == 0)),
        "acc": float(np.mean(y_pred == y_true)),
    }


@dataclass
class GridResult:
    """Outcome of :func:`grid_search`: one row per (C, sigma) and the model chosen by validation accuracy."""

    table: pd.DataFrame
    models: dict[tuple[float, float], LearnedMetric]
    best: LearnedMetric

    @property
    def best_params(self) -> tuple[float, float]:
        return self.best.C, self.best.sigma


def grid_search(X_train: pd.DataFrame, y_train: Sequence[int], X_val: pd.DataFrame, y_val: Sequence[int], *,
                Cs: Iterable[float] = SMALL_GRID["C"], sigmas: Iterable[float] = SMALL_GRID["sigma"],
                config: FeatureConfig = FeatureConfig(), seed: int = 0, standardize: bool = True,
                progress: bool = True) -> GridResult:
    """Section 4.2: train one SVM per (C, sigma), measure validation classification accuracy, keep the best.

    Selection uses validation accuracy only (no human scores). Ties go to the smaller C, then the larger sigma
    (the smoother model). This is not :class:`sklearn.model_selection.GridSearchCV` with a ``PredefinedSplit``
    because the chapter needs every grid point's fitted model (Figure 2 correlates each one with human scores),
    which ``GridSearchCV`` does not keep, and the per-class accuracies of each point. The table has ``C, sigma, gamma, acc, acc_human, acc_machine, n_support, fit_seconds``.
    """
    grid = [(float(c), float(s)) for c in Cs for s in sigmas]
    if not grid:
        raise ValueError("empty grid")
    rows, models = [], {}
    for C, sigma in tqdm(grid, desc="grid (C, sigma)", disable=not progress, leave=False):
        m = LearnedMetric(config=config, C=C, sigma=sigma, seed=seed, standardize=standardize).fit(X_train, y_train)
        acc = class_accuracy(y_val, m.predict(X_val))
        rows.append({"C": C, "sigma": sigma, "gamma": 1 / (2 * sigma**2), **acc,
                     "n_support": m.train_info["n_support"], "fit_seconds": m.train_info["fit_seconds"]})
        models[(C, sigma)] = m
    table = pd.DataFrame(rows)
    order = table.sort_values(["acc", "C", "sigma"], ascending=[False, True, False], kind="mergesort")
    best = order.iloc[0]
    return GridResult(table=table, models=models, best=models[(best["C"], best["sigma"])])


# ---------------------------------------------------------------------------------------------------------------
# training data without human judgments (section 4.1 adapted to WMT21 de-en and TED zh-en)
# ---------------------------------------------------------------------------------------------------------------

POOL_COLUMNS = ["seg_id", "system", "hyp", "ref", "hyp_ptb", "ref_ptb", "label"]


def build_pool(long: pd.DataFrame, *, human: str, reference: str, keep: Sequence[str] = ("mqm",)) -> pd.DataFrame:
    """All candidate hypotheses scored against one reference translation (section 2's training data).

    ``long`` has one row per (system, seg_id) with ``target``, ``is_human`` and optionally ``ptb`` and ``mqm``.
    Human hypotheses: the rows of system ``human`` (label 1); machine hypotheses: every non-human system
    (label 0); the reference of segment s is the ``target`` of system ``reference`` for s. The columns named
    in ``keep`` (e.g. ``mqm``) are carried over when present. Columns: ``seg_id, system, hyp, ref, hyp_ptb,
    ref_ptb, label`` + ``keep``.
    """
    systems = set(long["system"])
    for name in (human, reference):
        if name not in systems:
            raise ValueError(f"system {name!r} not in the data (have {sorted(systems)[:20]}...)")
    if human == reference:
        raise ValueError("the human hypothesis and the reference must be different translations")
    ref = long[long["system"] == reference].set_index("seg_id")
    cand = long[(long["system"] == human) | ~long["is_human"].astype(bool)].copy()
    cand = cand[cand["seg_id"].isin(ref.index)]
    cand["label"] = (cand["system"] == human).astype(int)
    cand["hyp"] = cand["target"]
    cand["ref"] = ref.loc[cand["seg_id"], "target"].to_numpy()
    has_ptb = "ptb" in long.columns
    cand["hyp_ptb"] = cand["ptb"] if has_ptb else None
    cand["ref_ptb"] = ref.loc[cand["seg_id"], "ptb"].to_numpy() if has_ptb else None
    extra = [c for c in keep if c in long.columns and c not in POOL_COLUMNS]
    return cand[POOL_COLUMNS + extra].sort_values(["seg_id", "label", "system"]).reset_index(drop=True)


def split_sources(seg_ids: Iterable[Any], *, val_frac: float = 0.25, test_frac: float = 0.3,
                  seed: int = 0) -> dict[str, np.ndarray]:
    """Partition the source segments into ``train`` / ``val`` / ``test`` (disjoint, seeded, deterministic).

    Every hypothesis of a source segment lands in the same part, so no source sentence is in two parts.
    """
    ids = np.array(sorted(set(seg_ids)))
    if not (0 <= val_frac < 1 and 0 <= test_frac < 1 and val_frac + test_frac < 1):
        raise ValueError(f"bad fractions val={val_frac}, test={test_frac}")
    perm = np.random.default_rng(seed).permutation(ids)
    n_test = int(round(test_frac * len(ids)))
    n_val = int(round(val_frac * len(ids)))
    return {
        "test": np.sort(perm[:n_test]),
        "val": np.sort(perm[n_test : n_test + n_val]),
        "train": np.sort(perm[n_test + n_val :]),
    }


def balance(pool: pd.DataFrame, *, seed: int = 0) -> pd.DataFrame:
    """Balanced classes: every human hypothesis plus one machine hypothesis of the same source, drawn
    uniformly (seeded) from that source's MT outputs. Same source mix in both classes."""
    rng = np.random.default_rng(seed)
    human = pool[pool["label"] == 1]
    machine = pool[pool["label"] == 0]
    human_ids = set(human["seg_id"])
    picks = []
    for seg, group in machine.groupby("seg_id", sort=True):
        if seg in human_ids:
            picks.append(group.index[rng.integers(len(group))])
    out = pd.concat([human, machine.loc[picks]])
    return out.sort_values(["seg_id", "label", "system"]).reset_index(drop=True)


def training_sets(pool: pd.DataFrame, splits: Mapping[str, np.ndarray], *, seed: int = 0) -> dict[str, pd.DataFrame]:
    """``train`` and ``val``: balanced human/machine sets on their sources; ``test``: every MT hypothesis of the
    test sources (human translations excluded, as the evaluation is on MT output only)."""
    bal = balance(pool, seed=seed)
    return {
        "train": bal[bal["seg_id"].isin(splits["train"])].reset_index(drop=True),
        "val": bal[bal["seg_id"].isin(splits["val"])].reset_index(drop=True),
        "test": pool[(pool["label"] == 0) & pool["seg_id"].isin(splits["test"])].reset_index(drop=True),
    }


def pool_features(pool: pd.DataFrame, config: FeatureConfig = FeatureConfig(), *, progress: bool = True) -> pd.DataFrame:
    """:func:`feature_frame` for a pool (single reference per hypothesis), row-aligned with ``pool``."""
    trees = {}
    if config.syntax:
        trees = {"hyp_trees": list(pool["hyp_ptb"]), "ref_trees": [[t] for t in pool["ref_ptb"]]}
    return feature_frame(list(pool["hyp"]), [[r] for r in pool["ref"]], config, progress=progress, **trees)


# ---------------------------------------------------------------------------------------------------------------
# experiments (one training run)
# ---------------------------------------------------------------------------------------------------------------


@dataclass
class Experiment:
    """One training run: pool -> source split -> balanced train/val -> features -> grid search.

    ``sets`` holds the ``train``/``val``/``test`` rows (:func:`training_sets`), ``X`` their feature frames
    (row-aligned), ``grid`` the :class:`GridResult`; ``timings`` the seconds spent on features and on the grid.
    """

    name: str
    config: FeatureConfig
    splits: dict[str, np.ndarray]
    sets: dict[str, pd.DataFrame]
    X: dict[str, pd.DataFrame]
    grid: GridResult
    timings: dict[str, float]

    @property
    def best(self) -> LearnedMetric:
        return self.grid.best

    def sizes(self) -> pd.DataFrame:
        """Split sizes: sources, human and machine hypotheses per part."""
        rows = []
        for part in ("train", "val", "test"):
            s = self.sets[part]
            rows.append({"part": part, "sources": len(self.splits[part]), "human": int((s.label == 1).sum()),
                         "machine": int((s.label == 0).sum())})
        return pd.DataFrame(rows)

    def validation_accuracy(self) -> dict[str, float]:
        """Section 4.2 numbers for the selected model."""
        return class_accuracy(self.sets["val"]["label"], self.best.predict(self.X["val"]))


def run_experiment(name: str, pool: pd.DataFrame, *, config: FeatureConfig = FeatureConfig(),
                   Cs: Iterable[float] = SMALL_GRID["C"], sigmas: Iterable[float] = SMALL_GRID["sigma"],
                   val_frac: float = 0.25, test_frac: float = 0.3, seed: int = 0,
                   splits: Mapping[str, np.ndarray] | None = None, standardize: bool = True,
                   progress: bool = True) -> Experiment:
    """Split ``pool`` by source (or use ``splits``), balance, compute features, grid-search (C, sigma)."""
    splits = dict(splits) if splits is not None else split_sources(
        pool["seg_id"], val_frac=val_frac, test_frac=test_frac, seed=seed)
    sets = training_sets(pool, splits, seed=seed)
    t0 = time.perf_counter()
    X = {part: pool_features(rows, config, progress=progress) for part, rows in sets.items()}
    t1 = time.perf_counter()
    grid = grid_search(X["train"], sets["train"]["label"], X["val"], sets["val"]["label"],
                       Cs=Cs, sigmas=sigmas, config=config, seed=seed, standardize=standardize, progress=progress)
    t2 = time.perf_counter()
    return Experiment(name, config, splits, sets, X, grid,
                      {"features_seconds": t1 - t0, "grid_seconds": t2 - t1, "n_grid": len(grid.table)})
