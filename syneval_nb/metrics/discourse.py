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

import numpy as np
from tqdm.auto import tqdm

from syneval_nb.metrics.base import Corpus, Metric, mean_rows
from syneval_nb.trees import kernels
from syneval_nb.trees.encoding import Interner
from syneval_nb.trees.rst import DEFAULT_LAM, check_rst, dr_lex_tree, dr_tree

__all__ = ["dr", "dr_lex", "DiscourseSimilarity"]


# --------------------------------------------------------------------------------------------------------------
# Similarity
# --------------------------------------------------------------------------------------------------------------

def dr(hyp_rst: Mapping, ref_rst: Mapping, lam: float = DEFAULT_LAM) -> float:
    """DR similarity: normalized all-subtree kernel between :func:`dr_tree` of hypothesis and reference.

    ``K(h, r) / sqrt(K(h, h) K(r, r))`` with the Collins & Duffy kernel of :mod:`syneval_nb.trees.kernels` (``lam`` its
    decay: 1.0 counts common subtrees, the default :data:`DEFAULT_LAM` down-weights large ones). Identical trees
    give 1.0; void vs void gives 1.0
    and void vs a relational tree 0.0 (see :func:`dr_tree`). ``None`` (failed parse) raises ``ValueError``.
    """
    return kernels.normalized_tree_kernel(dr_tree(hyp_rst), dr_tree(ref_rst), lam=lam)


def dr_lex(hyp_rst: Mapping, ref_rst: Mapping, lam: float = DEFAULT_LAM, lowercase: bool = False) -> float:
    """DR-lex similarity: normalized all-subtree kernel between :func:`dr_lex_tree` of hypothesis and reference.

    Identical trees give 1.0. Two single-EDU texts are compared by their words (DR-lex is never void).
    """
    return kernels.normalized_tree_kernel(dr_lex_tree(hyp_rst, lowercase), dr_lex_tree(ref_rst, lowercase),
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


class DiscourseSimilarity(Metric):
    """DR (``lexicalized=False``) or DR-lex (``lexicalized=True``) as a metric over RST trees.

    A sentence score is the normalized kernel against each reference, the **maximum** over references (Asiya's
    convention for several references; the paper had one). Statistics ``[score, 1]``: the corpus score is the mean
    of the sentence scores (the system-level DR of the paper aggregates segment scores; a kernel has no corpus-level
    sufficient statistics beyond these). Give texts (parsed through the cache when scored), a
    :class:`~syneval_nb.metrics.base.Corpus` with RST trees, or the trees themselves (dicts). Every segment counts
    (signature ``hypfault:worst``): an empty hypothesis or one whose RST parse failed (``None``) scores 0, the
    worst value; only a segment without any reference tree is left out (NaN, counted in ``n_missing``), for every
    system alike. Trees are converted once
    and self-kernels cached by the tree's JSON, so scoring many systems against the same references is cheap.
    """

    inputs = ("rst",)

    def __init__(self, lexicalized: bool = False, lam: float = DEFAULT_LAM, lowercase: bool = False) -> None:
        super().__init__()
        if not 0 < lam <= 1:
            raise ValueError(f"lam must be in (0, 1], got {lam}")
        self.lexicalized, self.lam, self.lowercase = lexicalized, lam, lowercase
        family = "DR-lex" if lexicalized else "DR"  # at another decay than the default: "DR λ=1" (as TKM's variants)
        self.name = family if float(lam) == float(DEFAULT_LAM) else f"{family} λ={float(lam):g}"
        self._interner = Interner()
        self._trees: dict[str, Any] = {}

    def _options(self) -> dict[str, Any]:
        opts = {"kernel": "collins-duffy", "lam": f"{self.lam:g}", "norm": "cosine", "refs": "max"}
        if self.lowercase:
            opts["lc"] = "yes"
        return {**opts, "parser": "feng-hirst-0.1.4", "hypfault": "worst"}

    def kernel_tree(self, rst: Mapping):
        """The :class:`syneval_nb.trees.kernels.KernelTree` of a tree's DR / DR-lex representation (cached by JSON)."""
        key = json.dumps(check_rst(rst), sort_keys=True)
        kt = self._trees.get(key)
        if kt is None:
            t = dr_lex_tree(rst, self.lowercase) if self.lexicalized else dr_tree(rst)
            kt = self._trees[key] = kernels.KernelTree.from_tree(t, self._interner)
        return kt

    def stats(self, hyp: Mapping, ref: Mapping) -> DiscourseStats:
        th, tr = self.kernel_tree(hyp), self.kernel_tree(ref)
        return DiscourseStats(kernels.kernel(th, tr, self.lam), th.self_kernel(self.lam), tr.self_kernel(self.lam))

    def similarity(self, hyp: Mapping, refs: Sequence[Mapping] | Mapping) -> float:
        """The kernel similarity of one hypothesis tree: the maximum over its reference trees."""
        if isinstance(refs, Mapping):
            refs = [refs]
        if not refs:
            raise ValueError("no reference tree")
        return max(self.stats(hyp, r).score for r in refs)

    def score_many(self, hyps: Sequence[Mapping | None], refs: Sequence[Sequence[Mapping | None] | Mapping | None],
                   missing: str = "raise", progress: bool = False) -> list[float]:
        """Sentence scores of aligned lists of trees; ``refs[i]`` is one tree or a list of trees. ``missing="nan"``
        gives NaN where the hypothesis or every reference is ``None``; ``missing="worst"`` (the metric protocol's
        rule) gives NaN where every reference is ``None`` and 0.0, the worst value, where only the hypothesis is."""
        if missing not in ("raise", "nan", "worst"):
            raise ValueError(f"missing must be 'raise', 'nan' or 'worst', got {missing!r}")
        if len(hyps) != len(refs):
            raise ValueError(f"{len(hyps)} hypotheses but {len(refs)} reference entries")
        out = []
        for h, r in tqdm(list(zip(hyps, refs)), desc=self.name, disable=not progress, leave=False):
            rs = [r] if isinstance(r, Mapping) or r is None else list(r)
            rs = [x for x in rs if x is not None]
            if missing == "worst" and h is None and rs:
                out.append(0.0)
            elif h is None or not rs:
                if missing == "raise":
                    raise ValueError("missing discourse tree (None); pass missing='nan' to score it as NaN")
                out.append(float("nan"))
            else:
                out.append(self.similarity(h, rs))
        return out

    def _corpus_stats(self, corpus: Corpus) -> np.ndarray:
        hyp, ref = corpus.rst()
        scores = self.score_many(hyp, ref, missing="worst")
        return np.array([[s, 1.0] if not math.isnan(s) else [np.nan, np.nan] for s in scores]).reshape(-1, 2)

    def score_from_stats(self, sums: np.ndarray) -> np.ndarray:
        return mean_rows(sums)

    def _parts(self, sums: np.ndarray) -> dict:
        return {"n_scored": int(sums[1])}
