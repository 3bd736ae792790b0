"""DR and DR-lex (Guzman, Joty, Marquez & Nakov 2014): the normalized all-subtree kernel over RST trees.

RST trees and their DR / DR-lex representations are in :mod:`syneval_nb.trees.rst`; parsing new text in
:mod:`syneval_nb.parsers.feng_hirst` and :func:`syneval_nb.parsers.frontend.parse_rst`.
"""
from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from syneval_nb.trees import kernels
from syneval_nb.trees.ptb import Interner
from syneval_nb.trees.rst import DEFAULT_LAM, _check, dr_lex_tree, dr_tree




# --------------------------------------------------------------------------------------------------------------
# Similarity
# --------------------------------------------------------------------------------------------------------------

def _kernels():

    return kernels


def dr(hyp_rst: Mapping, ref_rst: Mapping, lam: float = DEFAULT_LAM) -> float:
    """DR similarity: normalized all-subtree kernel between :func:`dr_tree` of hypothesis and reference.

    ``K(h, r) / sqrt(K(h, h) K(r, r))`` with the Collins & Duffy kernel of :mod:`syneval_nb.kernels` (``lam`` its
    decay: 1.0 counts common subtrees, the default :data:`DEFAULT_LAM` down-weights large ones). Identical trees
    give 1.0; void vs void gives 1.0
    and void vs a relational tree 0.0 (see :func:`dr_tree`). ``None`` (failed parse) raises ``ValueError``.
    """
    return _kernels().normalized_tree_kernel(dr_tree(hyp_rst), dr_tree(ref_rst), lam=lam)


def dr_lex(hyp_rst: Mapping, ref_rst: Mapping, lam: float = DEFAULT_LAM, lowercase: bool = False) -> float:
    """DR-lex similarity: normalized all-subtree kernel between :func:`dr_lex_tree` of hypothesis and reference.

    Identical trees give 1.0. Two single-EDU texts are compared by their words (DR-lex is never void).
    """
    return _kernels().normalized_tree_kernel(dr_lex_tree(hyp_rst, lowercase), dr_lex_tree(ref_rst, lowercase),
                                             lam=lam)


@dataclass(frozen=True)
class DiscourseStats:
    """Sufficient statistics of one (hypothesis, reference) pair: ``K(h,r)``, ``K(h,h)``, ``K(r,r)``."""

    k_hr: float
    k_hh: float
    k_rr: float

    @property
    def score(self) -> float:
        denom = math.sqrt(self.k_hh * self.k_rr)
        return min(1.0, self.k_hr / denom) if denom > 0 and self.k_hr > 0 else 0.0


class DiscourseSimilarity:
    """DR (``lexicalized=False``) or DR-lex (``lexicalized=True``) as a metric object over RST trees.

    ``sentence_score(hyp, refs)`` is the normalized kernel against each reference, the **maximum** over references
    (Asiya's convention for several references; the paper had one). ``corpus_score(hyps, refs)`` is the mean of
    the sentence scores (the system-level DR of the paper aggregates segment scores; a kernel has no corpus-level
    sufficient statistics beyond these). Trees are converted once and self-kernels cached by the tree's JSON, so
    scoring many systems against the same references is cheap. ``None`` trees raise ``ValueError``; use
    :meth:`score_many` with ``missing="nan"`` to get NaN instead.
    """

    def __init__(self, lexicalized: bool = False, lam: float = DEFAULT_LAM, lowercase: bool = False) -> None:
        if not 0 < lam <= 1:
            raise ValueError(f"lam must be in (0, 1], got {lam}")
        self.lexicalized, self.lam, self.lowercase = lexicalized, lam, lowercase

        self._interner = Interner()
        self._trees: dict[str, Any] = {}

    @property
    def name(self) -> str:
        return "DR-lex" if self.lexicalized else "DR"

    def signature(self) -> str:
        lc = "|lc:yes" if self.lowercase else ""
        return f"{self.name}|kernel:collins-duffy|lam:{self.lam:g}|norm:cosine|refs:max{lc}|parser:feng-hirst-0.1.4"

    def kernel_tree(self, rst: Mapping):
        """The :class:`syneval_nb.kernels.KernelTree` of a tree's DR / DR-lex representation (cached by JSON)."""
        key = json.dumps(_check(rst), sort_keys=True)
        kt = self._trees.get(key)
        if kt is None:
            k = _kernels()
            t = dr_lex_tree(rst, self.lowercase) if self.lexicalized else dr_tree(rst)
            kt = self._trees[key] = k.KernelTree.from_tree(t, self._interner)
        return kt

    def stats(self, hyp: Mapping, ref: Mapping) -> DiscourseStats:
        th, tr = self.kernel_tree(hyp), self.kernel_tree(ref)
        return DiscourseStats(_kernels().kernel(th, tr, self.lam), th.self_kernel(self.lam), tr.self_kernel(self.lam))

    def sentence_score(self, hyp: Mapping, refs: Sequence[Mapping] | Mapping) -> float:
        if isinstance(refs, Mapping):
            refs = [refs]
        if not refs:
            raise ValueError("no reference tree")
        return max(self.stats(hyp, r).score for r in refs)

    def score_many(self, hyps: Sequence[Mapping | None], refs: Sequence[Sequence[Mapping | None] | Mapping | None],
                   missing: str = "raise", progress: bool = False) -> list[float]:
        """Sentence scores of aligned lists; ``refs[i]`` is one tree or a list of trees. ``missing="nan"`` gives
        NaN where the hypothesis or every reference is ``None``."""
        if len(hyps) != len(refs):
            raise ValueError(f"{len(hyps)} hypotheses but {len(refs)} reference entries")
        from tqdm.auto import tqdm

        out = []
        for h, r in tqdm(list(zip(hyps, refs)), desc=self.name, disable=not progress, leave=False):
            rs = [r] if isinstance(r, Mapping) or r is None else list(r)
            rs = [x for x in rs if x is not None]
            if h is None or not rs:
                if missing != "nan":
                    raise ValueError("missing discourse tree (None); pass missing='nan' to score it as NaN")
                out.append(float("nan"))
            else:
                out.append(self.sentence_score(h, rs))
        return out

    def corpus_score(self, hyps: Sequence[Mapping], refs: Sequence[Sequence[Mapping] | Mapping]) -> float:
        scores = self.score_many(hyps, refs)
        if not scores:
            raise ValueError("empty corpus")
        return sum(scores) / len(scores)

