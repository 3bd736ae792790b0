"""One face for every metric of the kit (lexical, syntactic, discourse, learned) and a registry.

Every metric is reached through :func:`get` and has the same shape, sacrebleu's:

* ``sentence_score(hyp, refs) -> Score``, ``corpus_score(hyps, refs) -> Score``, batch
  ``sentence_scores(hyps, refs) -> np.ndarray`` (NaN only where a segment has no usable reference, e.g. none of
  its references could be parsed;
  equal to ``sentence_score`` segment by segment, except NIST, whose information weights come from all the
  references scored together, as in :class:`syneval_nb.metrics.lexical.NIST`);
* ``signature() -> str``, built for every metric by the one function :func:`make_signature`;
* ``inputs``: what it consumes, among ``"text"``, ``"ptb"`` (constituency parses), ``"dep"`` (spaCy dependency
  parses, the ``@spacy`` variants of HWCM, DSTM and DTKM) and ``"rst"`` (RST trees);
* the statistics protocol behind the scores (used for bootstrap resampling by ``syneval-nb score`` and the report):
  ``segment_stats(corpus) -> (n, k)`` array whose rows, summed (or weighted and summed), give a corpus score through
  ``score_from_stats(sums)``; an unscorable segment (no usable reference: the same for every system) is a row of
  NaN, adds nothing and is counted in ``Score.n_missing``.

**Every segment counts** (issue 24). An empty hypothesis, or one without the parse or RST tree a metric needs,
gets that metric's worst value in every family, at sentence and corpus level (signature ``hypfault:worst`` for
the parse-based metrics): 0 for BLEU, chrF, STM, DSTM, TKM, DTKM, DR, DR-lex and the other scores, HWCM's
``epsilon``, 1.0 for WER and PER (every reference word deleted), the closest reference length over the average one
for TER. So a system cannot raise its score by emptying its worst lines or making them unparseable.

**Name scheme** (stated once): a metric's name is its family name in the papers' spelling, followed for the depth
metrics by ``-D``, the maximum depth (chain length): ``BLEU``, ``NIST``, ``WER``, ``PER``, ``F-measure``, ``GTM``,
``ROUGE-S``, ``METEOR``, ``TER``, ``STM-4``, ``DSTM-4``, ``HWCM-4``, ``TKM``, ``DTKM``, ``DR``, ``DR-lex``,
``Learned``. :func:`parse_name` maps every other spelling onto it: case and ``_``/``-`` are ignored (``stm_4``,
``stm-4``, ``STM4``), a tuple ``("STM", 4)`` works, and a depth metric named without a depth (``"stm"``) takes its
family's default depth (:data:`syneval_nb.metrics.syntactic.DEFAULT_DEPTH`).

**Defaults** are the family modules' own (constructor defaults of :mod:`syneval_nb.metrics.lexical`,
:mod:`syneval_nb.metrics.syntactic`, :mod:`syneval_nb.discourse`); options passed to :func:`get` go to the family
constructor unchanged (``get("hwcm", depth=4, epsilon=1e-3)``, ``get("bleu", smooth="epsilon")``). The BLEU of
``get("bleu")`` is sacrebleu's ``corpus_bleu`` at corpus level (13a, exp smoothing), on the 0-1 scale.

**Inputs.** Plain strings are texts, or a :class:`~syneval_nb.corpus.Corpus` (or ``Segment``) with the parses it has:
a metric sees trees and text; :mod:`syneval_nb.corpus` makes the missing parses (``metrics/`` imports no parser).
"""
from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field
from typing import Any, Mapping, NamedTuple, Sequence

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from syneval_nb import __version__
from syneval_nb.corpus import (Corpus, ParseMismatchError, ReferenceLayoutError, Segment,  # noqa: F401 (their
                               check_parse_words, map_on_cluster, normalize_refs, prepare)  # former home)
from syneval_nb.textio import to_json
from syneval_nb.trees.ptb import FlatTree, nltk_tree_class


__all__ = ["depth_scores", "score_rows", "Metric", "Score", "score_systems"]


# ============================================================================================== results


@dataclass
class Score:
    """One metric value, the only result type of every metric: ``name`` (the canonical name), ``score``, ``parts``
    (the family's parts: precisions and brevity penalty, matches/totals/fractions per depth, cosines, ...; readable
    as attributes, ``s.precisions``, ``s.fractions``), ``signature``, ``n`` (segments) and ``n_missing`` (segments
    that could not be scored and are left out, e.g. unparsed). Sentence-level syntactic scores :meth:`explain`
    themselves, and STM/DSTM :meth:`draw` the matched subtrees."""

    name: str
    score: float
    parts: dict = field(default_factory=dict)
    signature: str = ""
    n: int = 1
    n_missing: int = 0
    explain_fn: Any = field(default=None, repr=False, compare=False)
    draw_fn: Any = field(default=None, repr=False, compare=False)

    def __getattr__(self, name: str) -> Any:
        parts = self.__dict__.get("parts", {})
        if name in parts:
            return parts[name]
        raise AttributeError(f"{self.__dict__.get('name', 'score')} has no part {name!r}; parts: {sorted(parts)}")

    def __float__(self) -> float:
        return float(self.score)

    def explain(self):
        """The metric's own account of this score (a DataFrame; sentence-level STM, DSTM, HWCM, TKM, DTKM)."""
        if self.explain_fn is None:
            raise ValueError(f"{self.name}: this result has no explanation (sentence-level syntactic results do)")
        return self.explain_fn()

    def draw(self, depth: int = 2):
        """STM/DSTM of one sentence: the hypothesis tree with its matched depth-``depth`` subtrees coloured."""
        if self.draw_fn is None:
            raise ValueError(f"{self.name}: nothing to draw (only sentence-level STM and DSTM results draw)")
        return self.draw_fn(depth)

    def to_dict(self) -> dict:
        """JSON-ready, sacrebleu-shaped: ``name``, ``score``, ``signature``, ``n``, ``n_missing`` and the parts."""
        return {"name": self.name, "score": self.score, "signature": self.signature, "n": self.n,
                "n_missing": self.n_missing, **{k: to_json(v, finite=False) for k, v in self.parts.items()}}


def make_signature(name: str, options: Mapping[str, Any]) -> str:
    """The one signature format of every metric: ``name|key:value|...|version:syneval-nb-X`` (the options in the
    order given; every option that changes the number is one of them)."""
    parts = [name] + [f"{k}:{v}" for k, v in options.items() if k != "version"]
    return "|".join(parts + [f"version:syneval-nb-{__version__}"])


# ============================================================================================== metrics


class Metric:
    """The one base of every metric of the kit (see the module docstring), sacrebleu's shape. A family defines

    * ``name``, ``inputs`` (among ``"text"``, ``"ptb"``, ``"rst"``) and ``higher_is_better``;
    * ``_options() -> dict``: every option that changes the number, in signature order;
    * ``_corpus_stats(corpus) -> (n, k) array``: one statistics row per segment, a row of NaN where the segment
      cannot be scored (e.g. unparsed);
    * ``score_from_stats(sums) -> scores``: the score of summed rows, vectorised over rows (``(B, k) -> (B,)``);
    * optionally ``_parts(sums) -> dict`` (the parts of a corpus score), ``_check_sentence(corpus)`` and
      ``_sentence_extras(corpus, score)`` (what a sentence-level :class:`Score` adds: explain, draw, parts).

    Everything else -- ``segment_stats``, ``sentence_scores``, ``sentence_score``, ``corpus_score``,
    ``corpus_from_stats`` and ``signature`` -- is defined here once."""

    name = ""
    inputs: tuple[str, ...] = ("text",)
    higher_is_better = True

    def __init__(self) -> None:
        self._nrefs: set[int] = set()
        self._parse_source: str | None = None

    # -- signature ------------------------------------------------------------------------------------------
    def _options(self) -> dict[str, Any]:
        return {}

    def signature(self) -> str:
        """``name|option:value|...|nrefs:N|version:syneval-nb-X``: every option that changes the number; ``nrefs``
        (``var`` if it varied) and, for parse-based metrics, ``parses`` (the parser) after the first scoring call."""
        opts = dict(self._options())
        if self._nrefs:
            nr = sorted(self._nrefs)
            opts["nrefs"] = str(nr[0]) if len(nr) == 1 else "var"
        if self._parse_source and ("ptb" in self.inputs or
                                   ("dep" in self.inputs and self._parse_source != opts.get("deps"))):
            opts["parses"] = self._parse_source  # (spaCy parses made by the kit: the ``deps`` field names them)
        # a decay variant ("TKM λ=0.4") signs with its family name: the lam field tells the variants apart
        return make_signature(self.name.split(" λ=")[0], opts)

    # -- the statistics protocol ----------------------------------------------------------------------------
    def _corpus_stats(self, corpus: Corpus) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def segment_stats(self, hyps: Any, refs: Any = None, *, ref_layout: str | None = None) -> np.ndarray:
        """Sufficient statistics, one row per segment; an unscorable segment is a row of NaN."""
        corpus = self._as_corpus(hyps, refs, ref_layout)
        stats = np.asarray(self._corpus_stats(corpus), dtype=float)
        self._nrefs = corpus.n_refs
        self._parse_source = corpus.dep_source if "dep" in self.inputs else corpus.parse_source
        return stats

    def score_from_stats(self, sums: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        """Scores of summed statistics rows (shape (B, k) -> (B,)), e.g. bootstrap resamples."""
        raise NotImplementedError

    def _parts(self, sums: np.ndarray) -> dict:
        return {}

    def _corpus_detail(self, sums: np.ndarray) -> tuple[float, dict]:
        """Score and parts of one summed statistics row."""
        return float(self.score_from_stats(sums[None, :])[0]), self._parts(sums)

    def corpus_from_stats(self, stats: np.ndarray) -> Score:
        """The corpus :class:`Score` of a statistics matrix (NaN rows are left out and counted as missing)."""
        stats = np.atleast_2d(np.asarray(stats, dtype=float))
        bad = np.isnan(stats).any(axis=1)
        sums = np.where(bad[:, None], 0.0, stats).sum(axis=0)
        score, parts = self._corpus_detail(sums)
        if len(stats) and bad.all():
            score = math.nan
        return Score(self.name, score, parts, self.signature(), len(stats), int(bad.sum()))

    # -- public API ---------------------------------------------------------------------------------------------
    def corpus_score(self, hyps: Any, refs: Any = None, *, ref_layout: str | None = None) -> Score:
        """Corpus score (summed statistics, or the mean sentence score for kernel metrics)."""
        stats = self.segment_stats(hyps, refs, ref_layout=ref_layout)
        if len(stats) == 0:
            raise ValueError(f"{self.name}: no segments to score")
        return self.corpus_from_stats(stats)

    def segment_scores(self, stats: np.ndarray) -> np.ndarray:
        """Each segment's score from its own statistics row (NaN where the row is NaN: unscorable)."""
        stats = np.asarray(stats, dtype=float)
        out = np.full(len(stats), np.nan)
        ok = ~np.isnan(stats).any(axis=1) if stats.ndim == 2 else np.zeros(0, bool)
        if ok.any():
            out[ok] = self.score_from_stats(stats[ok])
        return out

    def sentence_scores(self, hyps: Any, refs: Any = None, *, ref_layout: str | None = None) -> np.ndarray:
        """Every segment's score at once (NaN where unscorable)."""
        return self.segment_scores(self.segment_stats(hyps, refs, ref_layout=ref_layout))

    def sentence_score(self, hyp: Any, refs: Any = None) -> Score:
        """One segment's :class:`Score` (``hyp`` with ``refs`` its references, or a :class:`Segment`)."""
        if isinstance(hyp, Corpus):
            corpus = self._as_corpus(hyp, refs, "segments")
        else:
            if refs is None:
                raise TypeError("refs are missing (pass hyp and its references, or a Segment)")
            if isinstance(refs, (nltk_tree_class(), FlatTree)):
                raise TypeError("refs must be a list of trees (one per reference), not a single tree")
            if isinstance(refs, (str, Mapping)) or not hasattr(refs, "__len__"):
                refs = [refs]
            elif len(refs) == 0:
                raise ValueError(f"{self.name}: no references given")
            corpus = self._as_corpus([hyp], [list(refs)], "segments")
        if len(corpus) != 1:
            raise ValueError(f"sentence_score takes one segment, got {len(corpus)}")
        self._check_sentence(corpus)
        s = self.corpus_from_stats(self.segment_stats(corpus))
        self._sentence_extras(corpus, s)
        return s

    def _check_sentence(self, corpus: Corpus) -> None:
        pass

    def _sentence_extras(self, corpus: Corpus, score: Score) -> None:
        pass

    def _as_corpus(self, hyps: Any, refs: Any, ref_layout: str | None) -> Corpus:
        if isinstance(hyps, Corpus):
            if refs is not None:
                raise TypeError("pass either a Corpus or (hyps, refs), not both")
            return hyps
        if refs is None:
            raise TypeError("refs are missing (pass hyps and refs, or a Corpus)")
        return Corpus.of(hyps, refs, ref_layout=ref_layout, kind=self.inputs[-1])

    def __repr__(self) -> str:
        return f"<metric {self.name}: {self.signature()}>"


# ============================================================================================== scoring


_SCRATCH = {"_info"}  # NIST's information weights: recomputed by every segment_stats call, not sent back


def _system_stats(item: tuple, metrics: Sequence[Metric]) -> tuple:
    """One system's statistics by every metric (a task of the Dask path of :func:`score_systems`), with the state
    each call leaves on its metric object (``signature()``'s reference count, METEOR's ``last_inexact``). The
    worker's tasks share the scattered metric objects, so each task scores with its own copies."""
    system, corpus = item
    metrics = copy.deepcopy(list(metrics))
    out = [(m.segment_stats(corpus), {k: v for k, v in vars(m).items() if k not in _SCRATCH}) for m in metrics]
    return system, out


def score_systems(metrics: Sequence[Metric], corpora: Mapping[str, Corpus], *, progress: bool = False,
                  scheduler: Any = None) -> list[dict[str, np.ndarray]]:
    """The kit's one scoring loop: every metric's statistics on every system, one ``{system: (n, k) matrix}`` per
    metric, in the order of ``metrics`` (:meth:`Metric.segment_stats`). Segment scores come from a matrix by
    :meth:`Metric.segment_scores`, corpus scores by :meth:`Metric.corpus_from_stats`, bootstrap resamples by
    weighting its rows. :func:`syneval_nb.evaluate.evaluate` and :func:`score_rows` (the chapters, the
    combinations) call it.

    ``scheduler`` (a Dask scheduler address or ``distributed.Client``): one task per system on that cluster
    (:func:`syneval_nb.parsers.dask.map_tasks`), the metric objects sent to each worker once; the numbers are the
    local run's.

    >>> from syneval_nb.metrics import get
    >>> bleu = get("BLEU")
    >>> stats = score_systems([bleu], {"A": Corpus(["the cat sat on the mat"], [["the cat sat on the mat"]])})
    >>> bleu.corpus_from_stats(stats[0]["A"]).score
    1.0
    """
    metrics = list(metrics)
    out: list[dict[str, np.ndarray]] = [{} for _ in metrics]
    if scheduler is not None:
        for system, results in map_on_cluster(scheduler, _system_stats, list(corpora.items()), shared=[metrics],
                                              what="scores"):
            for k, (m, (stats, state)) in enumerate(zip(metrics, results)):
                vars(m).update(state)  # the state a call leaves on a metric object, as after a local call
                out[k][system] = stats
        return out
    todo = [(k, s) for k in range(len(metrics)) for s in corpora]
    for k, s in tqdm(todo, desc="scoring", disable=not progress, leave=False):
        out[k][s] = np.asarray(metrics[k].segment_stats(corpora[s]), dtype=float)
    return out


class RowScores(NamedTuple):
    """What :func:`score_rows` returns: ``segment`` (one column per metric key, aligned with the rows; NaN where
    unscorable), ``corpus`` (one row per system, in order of appearance: each metric's corpus score of that
    system's rows, from summed statistics; kernel metrics: the mean) and ``stats`` (``{metric key: {system:
    statistics matrix}}``, for resampling or the counts a family keeps in its statistics)."""

    segment: pd.DataFrame
    corpus: pd.DataFrame
    stats: dict


def score_rows(metrics: Mapping[str, Metric], hyps: Sequence[str], refs: Sequence[Sequence[str]],
               systems: Sequence[str] | None = None, *, progress: bool = False, scheduler: Any = None,
               **parses: Any) -> RowScores:
    """Rows of several systems, scored by :func:`score_systems`: ``systems[i]`` names the system of row ``i``
    (default: one system ``"all"``), ``refs[i]`` its references; ``parses``: ``hyp_ptb``, ``ref_ptb``, ``hyp_rst``,
    ... aligned with the rows, as :class:`Corpus` takes them (a single string in ``refs`` is one reference). Each
    system is scored alone (NIST's information
    weights from that system's references). Returns a :class:`RowScores` ``(segment, corpus, stats)``."""
    if isinstance(systems, (str, bytes)):
        raise TypeError(f"systems must hold one label per row, got the single string {systems!r} (for one system: "
                        f"[{systems!r}] * len(hyps), or systems=None)")
    labels = np.asarray(["all"] * len(hyps) if systems is None else list(systems), dtype=object)
    if len(labels) != len(hyps):
        raise ValueError(f"systems has {len(labels)} labels for {len(hyps)} hypotheses")
    index = {s: np.flatnonzero(labels == s) for s in pd.unique(labels)}
    corpora = {s: Corpus([hyps[i] for i in idx], [refs[i] for i in idx], ref_layout="segments",
                         **{k: None if v is None else [v[i] for i in idx] for k, v in parses.items()})
               for s, idx in index.items()}
    stats = dict(zip(metrics, score_systems(list(metrics.values()), corpora, progress=progress,
                                            scheduler=scheduler)))
    segment = {k: np.full(len(labels), np.nan) for k in metrics}
    corpus: dict[str, dict[str, float]] = {}
    for s, idx in index.items():
        corpus[s] = {}
        for k, m in metrics.items():
            segment[k][idx] = m.segment_scores(stats[k][s])
            corpus[s][k] = m.corpus_from_stats(stats[k][s]).score
    frame = pd.DataFrame.from_dict(corpus, orient="index", columns=list(metrics))
    frame.index.name = "system"
    return RowScores(pd.DataFrame(segment, index=range(len(labels))), frame, stats)


def depth_scores(M: np.ndarray, T: np.ndarray, effective_order: bool, epsilon: float | None) -> np.ndarray:
    """:func:`syneval_nb.metrics.syntactic.depth_score` over rows (matches and totals per depth, shape (B, D))."""
    M, T = np.atleast_2d(M).astype(float), np.atleast_2d(T).astype(float)
    pos = T > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.where(pos, M / np.where(pos, T, 1.0), 0.0)
    use = pos if effective_order else np.ones_like(pos)
    if epsilon is not None:
        p = np.where(p == 0.0, epsilon, p)
    cnt = use.sum(axis=1)
    num = np.where(use, p, 0.0).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(cnt > 0, num / np.maximum(cnt, 1), np.nan)


def mean_rows(sums: np.ndarray) -> np.ndarray:
    """Scores of ``[sum of scores, count]`` rows: the mean (the corpus score of the kernel metrics)."""
    sums = np.atleast_2d(sums)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(sums[:, 1] > 0, sums[:, 0] / np.where(sums[:, 1] > 0, sums[:, 1], 1.0), np.nan)
