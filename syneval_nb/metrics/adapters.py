"""The metric families behind the one :class:`~syneval_nb.metrics.base.Metric` face: each adapter wraps one
family object of :mod:`.lexical`, :mod:`.syntactic` or :mod:`.discourse` (``self.family``)."""
from __future__ import annotations

import math
from typing import Any

import numpy as np
from syneval_nb.metrics.base import Corpus, Metric, Score, _family_options, _missing, depth_scores
from syneval_nb.metrics.lexical import LOWER_IS_BETTER
from syneval_nb.metrics.syntactic import DepthResult, Parse, _references
from syneval_nb.trees.ptb import read_ptb



# -- lexical -----------------------------------------------------------------------------------------------------


class LexicalMetric(Metric):
    inputs = ("text",)

    def __init__(self, family: Any) -> None:

        super().__init__(family)
        self.name = family.name
        self.higher_is_better = family.name not in LOWER_IS_BETTER

    def _options(self) -> dict[str, Any]:
        opts = _family_options(self.family.signature())
        opts.pop("nrefs", None)
        return opts

    def _stats(self, corpus: Corpus) -> np.ndarray:
        return self.family.segment_stats(corpus.hyps, corpus.refs)

    def score_from_stats(self, sums: np.ndarray) -> np.ndarray:
        return np.asarray(self.family._score_rows(np.atleast_2d(sums)), dtype=float)

    def _corpus_detail(self, sums: np.ndarray) -> tuple[float, dict, Any]:
        r = self.family.corpus_score_from_stats(sums[None, :])
        return float(r.score), dict(r.parts), r

    def _sentence(self, corpus: Corpus) -> Score:
        self.family._check_sentence(corpus.hyps[0], corpus.refs[0])
        return super()._sentence(corpus)


# -- syntactic ---------------------------------------------------------------------------------------------------


def _read_tree(s: Any):

    return None if _missing(s) else (read_ptb(s) if isinstance(s, str) else s)



class _SyntacticMetric(Metric):
    inputs = ("ptb",)

    def _refset_iter(self, corpus: Corpus):

        hyp_ptb, ref_ptb = corpus.ptb()
        R = _references(ref_ptb, getattr(self.family, "depth", 1))
        for i, h in enumerate(hyp_ptb):
            yield Parse.from_ptb(h, R.space, where=f"segment {i}, hypothesis"), R.segments[i]


class DepthMetric(_SyntacticMetric):
    """STM / DSTM / HWCM: statistics ``[m_1..m_D, t_1..t_D]`` (clipped matches and totals per depth)."""

    def __init__(self, family: Any) -> None:
        super().__init__(family)
        self.name = f"{family.name}-{family.depth}"

    def _stats(self, corpus: Corpus) -> np.ndarray:
        D = self.family.depth
        out = np.full((len(corpus), 2 * D), np.nan)
        for i, (h, rs) in enumerate(self._refset_iter(corpus)):
            st = self.family.sentence_stats(h, rs)
            if st is not None:
                out[i, :D], out[i, D:] = st
        return out

    def score_from_stats(self, sums: np.ndarray) -> np.ndarray:
        D = self.family.depth
        sums = np.atleast_2d(sums)
        return depth_scores(sums[:, :D], sums[:, D:], self.family.effective_order, self.family.epsilon)

    def _result(self, sums: np.ndarray):

        D = self.family.depth
        f = self.family
        return DepthResult(f.name, tuple(int(round(x)) for x in sums[:D]), tuple(int(round(x)) for x in sums[D:]),
                           f.effective_order, f.epsilon, f.signature())

    def _corpus_detail(self, sums: np.ndarray) -> tuple[float, dict, Any]:
        r = self._result(sums)
        parts = {"fractions": list(r.fractions), "scores_by_depth": list(r.scores_by_depth),
                 "matches": list(r.matches), "totals": list(r.totals)}
        return float(r.score), parts, r

    def _sentence(self, corpus: Corpus) -> Score:
        s = super()._sentence(corpus)
        hyp_ptb, ref_ptb = corpus.ptb()
        if s.n_missing == 0:  # the family's own result: explain() and draw()
            s.detail = self.family.sentence_score(_read_tree(hyp_ptb[0]), [_read_tree(r) for r in ref_ptb[0]])
        return s


class KernelMetric(_SyntacticMetric):
    """TKM / DTKM: statistics ``[score, 1]`` (a cosine has no additive statistic: the corpus score is the mean)."""

    def __init__(self, family: Any) -> None:
        super().__init__(family)
        self.name = family.name

    def _stats(self, corpus: Corpus) -> np.ndarray:
        out = np.full((len(corpus), 2), np.nan)
        for i, (h, rs) in enumerate(self._refset_iter(corpus)):
            st = self.family.sentence_stats(h, rs)
            if st:
                out[i] = (max(st), 1.0)
        return out

    def score_from_stats(self, sums: np.ndarray) -> np.ndarray:
        return _mean_rows(sums)

    def _corpus_detail(self, sums: np.ndarray) -> tuple[float, dict, Any]:
        return float(_mean_rows(sums)[0]), {"n_scored": int(sums[1])}, None

    def _sentence(self, corpus: Corpus) -> Score:
        s = super()._sentence(corpus)
        hyp_ptb, ref_ptb = corpus.ptb()
        if s.n_missing == 0:
            r = self.family.sentence_score(_read_tree(hyp_ptb[0]), [_read_tree(x) for x in ref_ptb[0]])
            s.detail, s.parts = r, {"cosines": list(r.cosines), "best_ref": r.best_ref}
        return s


def _mean_rows(sums: np.ndarray) -> np.ndarray:
    sums = np.atleast_2d(sums)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(sums[:, 1] > 0, sums[:, 0] / np.where(sums[:, 1] > 0, sums[:, 1], 1.0), np.nan)


# -- discourse ---------------------------------------------------------------------------------------------------


class DiscourseMetric(Metric):
    """DR / DR-lex: statistics ``[score, 1]``; the corpus score is the mean (as the family's ``corpus_score``)."""

    inputs = ("rst",)

    def __init__(self, family: Any) -> None:
        super().__init__(family)
        self.name = family.name

    def _options(self) -> dict[str, Any]:
        return _family_options(self.family.signature())

    def _stats(self, corpus: Corpus) -> np.ndarray:
        hyp, ref = corpus.rst()
        scores = self.family.score_many(hyp, ref, missing="nan")
        return np.array([[s, 1.0] if not math.isnan(s) else [np.nan, np.nan] for s in scores]).reshape(-1, 2)

    score_from_stats = KernelMetric.score_from_stats
    _corpus_detail = KernelMetric._corpus_detail


