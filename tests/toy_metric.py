"""A toy metric, not shipped: how a student adds a metric to the kit (issue 34). The whole metric is this file, on
the hooks of :class:`syneval_nb.metrics.base.Metric` that every family uses, plus one registry line:

    registry.register("Unigram-Recall", UnigramRecall, aliases=("unigram recall",))

(in ``syneval_nb.metrics.registry._register_defaults`` for a shipped metric; ``tests/test_metrics.py`` registers
it for one test). The registry-wide tests of ``tests/test_metrics.py`` then check it with no test edit."""
from __future__ import annotations

from collections import Counter

import numpy as np
from syneval_nb.metrics.base import Metric


class UnigramRecall(Metric):
    """Clipped unigram recall: the share of the reference's words the hypothesis has (whitespace words), against
    the reference with the most matches (ties: the shorter one); corpus: summed matches / summed lengths."""

    name = "Unigram-Recall"
    inputs = ("text",)
    higher_is_better = True

    def __init__(self, lowercase: bool = False) -> None:
        super().__init__()
        self.lowercase = bool(lowercase)

    def _options(self) -> dict:  # every option that changes the number, for the signature
        return {"case": "lc" if self.lowercase else "mixed"}

    def _words(self, text: str) -> list[str]:
        return (text.lower() if self.lowercase else text).split()

    def _corpus_stats(self, corpus) -> np.ndarray:  # one row [matches, reference length] per segment
        rows = []
        for hyp, refs in zip(corpus.hyps, corpus.refs):
            h = Counter(self._words(hyp))
            pairs = [(sum((h & Counter(w)).values()), len(w)) for w in map(self._words, refs)]
            rows.append(max(pairs, key=lambda p: (p[0], -p[1])))
        return np.asarray(rows, dtype=float).reshape(-1, 2)

    def score_from_stats(self, sums: np.ndarray) -> np.ndarray:  # (B, 2) -> (B,)
        sums = np.atleast_2d(sums)
        return np.divide(sums[:, 0], sums[:, 1], out=np.zeros(len(sums)), where=sums[:, 1] > 0)

    def _parts(self, sums: np.ndarray) -> dict:
        return {"matches": int(sums[0]), "ref_words": int(sums[1])}


def unigram_recall_by_hand(hyps, refs) -> float:
    """The corpus score written out plainly, for the test."""
    matched = total = 0
    for hyp, rs in zip(hyps, refs):
        best = max(((sum((Counter(hyp.split()) & Counter(r.split())).values()), len(r.split())) for r in rs),
                   key=lambda p: (p[0], -p[1]))
        matched, total = matched + best[0], total + best[1]
    return matched / total
