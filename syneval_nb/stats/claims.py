"""A chapter's claims are data (issue 34): each claim is a small record, and one engine decides them all.

A :class:`Claim` says who is compared with whom (``metric``, ``baseline``), by which test (:data:`CLAIM_TESTS`), on
which table (``on``: a key of the chapter's tables; the table fixes the human score, the level, the resampled unit
and raw or beyond the length model), and whether it is one of the chapter's primary claims. A chapter writes its
claims as a list, the way mt-metrics-eval writes a study as a list of tasks, and :func:`decide_claims` turns the
list and the chapter's tables into verdicts by the rules of :mod:`syneval_nb.stats.verdicts` (one rule,
:func:`~syneval_nb.stats.verdicts.decide`; Holm over the primary claims, :func:`~syneval_nb.stats.verdicts.
holm_verdicts`)::

    claims = [Claim("STM-4 beats chrF (MQM z, Pearson)", "beats", "STM-4", "chrF", on="MQM z", primary=True),
              Claim("STM-4 correlates with MQM z", "correlates", "STM-4", on="MQM z")]
    verdicts = decide_claims(claims, {"MQM z": table})   # {claim: verdict}
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Hashable, Mapping, Sequence

from syneval_nb.stats.verdicts import (holm_verdicts, verdict_beats, verdict_beats_placebo, verdict_contrast,
                                       verdict_correlates)

__all__ = ["decide_claims", "Claim"]

CLAIM_TESTS = ("beats", "correlates", "beats the placebo", "edge", "loses less", "given")
"""What a claim asks of its table(s):

* ``beats``: r(metric) - r(baseline) > 0 (:func:`~syneval_nb.stats.verdicts.verdict_beats`; beyond length on a
  table of partial r's);
* ``correlates``: r(metric) > 0 (:func:`~syneval_nb.stats.verdicts.verdict_correlates`);
* ``beats the placebo``: r(metric) above the 95th percentile of the table's null (placebo columns, or at system
  level permuted human scores; :func:`~syneval_nb.stats.verdicts.verdict_beats_placebo`);
* ``edge``: metric's edge over baseline is larger on table ``on`` than on table ``versus``, and the metric has its
  own edge on ``on`` (:func:`~syneval_nb.stats.verdicts.verdict_contrast`);
* ``loses less``: [r(metric) - r(baseline)] - [r(than[0]) - r(than[1])] > 0 on one table, e.g. STM-9 vs STM-1
  against BLEU-9 vs BLEU-1 (the depth stability claim);
* ``given``: the verdict the chapter computed itself, ``tables[on]`` (e.g. a premise on its own resamples); it
  joins the family like any other."""


@dataclass(frozen=True)
class Claim:
    """One claim of a chapter. ``claim``: its sentence (the verdict's key); ``test``: one of :data:`CLAIM_TESTS`;
    ``metric`` and ``baseline``: the rows compared; ``on``: the key of the table it is decided on (``human``: the
    human score of a stacked table); ``versus``: the second table of an ``edge`` (``labels``: how the statistic
    names the two; ``text``: the statistic's text when the claim writes the same quantity in another order);
    ``than``: the two rows an ``loses less`` claim is measured against; ``primary``: one of the
    chapter's declared primary claims (Holm runs over these, every other claim is exploratory); ``variant``: a
    variant of the protocol (e.g. talks resampled), shown apart but in the same family; ``requires``: ``(row,
    text)``, a ``beats`` claim that also needs the metric's edge over ``row`` of the same table (named ``text``)."""

    claim: str
    test: str
    metric: str = ""
    baseline: str | None = None
    on: Hashable = None
    human: str | None = None
    versus: Hashable = None
    labels: tuple = ("Fluency", "Accuracy")
    text: str | None = None
    than: tuple | None = None
    primary: bool = False
    variant: bool = False
    requires: tuple | None = None

    def __post_init__(self):
        if self.test not in CLAIM_TESTS:
            raise ValueError(f"unknown test {self.test!r} of claim {self.claim!r}; tests: {CLAIM_TESTS}")
        if self.test in ("beats", "edge", "loses less") and self.baseline is None:
            raise ValueError(f"claim {self.claim!r} ({self.test}) needs a baseline")
        if self.requires is not None and (self.test != "beats" or len(self.requires) != 2):
            raise ValueError(f"claim {self.claim!r}: requires= is a (row, text) pair of a 'beats' claim")

    def decide(self, tables: Mapping, alpha: float | None = None) -> dict:
        """This claim's verdict on ``tables`` (before Holm)."""
        if self.on not in tables:
            raise KeyError(f"claim {self.claim!r} reads table {self.on!r}; the tables are {list(tables)}")
        t = tables[self.on]
        if self.test == "beats":
            return verdict_beats(t, self.metric, self.baseline, alpha=alpha, human=self.human,
                                 requires=self.requires)
        if self.test == "correlates":
            return verdict_correlates(t, self.metric, alpha=alpha, human=self.human)
        if self.test == "beats the placebo":
            return verdict_beats_placebo(t, self.metric, alpha=alpha, human=self.human)
        if self.test == "edge":
            return verdict_contrast(t, tables[self.versus], self.metric, self.baseline, human_a=self.human,
                                    human_b=self.human, label_a=self.labels[0], label_b=self.labels[1], alpha=alpha,
                                    text=self.text)
        if self.test == "loses less":
            return verdict_contrast(t, t, self.metric, self.baseline, human_a=self.human, human_b=self.human,
                                    rows_b=self.than, label_a=None, label_b=None, alpha=alpha)
        return dict(t)  # "given"


def decide_claims(claims: Sequence[Claim], tables: Mapping, *, holm: bool = True,
                  alpha: float | None = None) -> dict[str, dict]:
    """``{claim: verdict}`` for every claim of ``claims`` (in their order) on the chapter's ``tables``
    (``alpha``: None = each table's own). ``holm``: Holm over the chapter, one family
    (:func:`~syneval_nb.stats.verdicts.holm_verdicts`): over the claims marked ``primary`` (the rest
    exploratory), or over every claim above the cluster floor when none is marked; ``holm=False`` leaves the
    verdicts unadjusted for a chapter that adds claims of its own."""
    names = [c.claim for c in claims]
    if len(set(names)) != len(names):
        raise ValueError(f"claims declared twice: {sorted({n for n in names if names.count(n) > 1})}")
    out = {c.claim: c.decide(tables, alpha) for c in claims}
    if not holm:
        return out
    return holm_verdicts(out, [c.claim for c in claims if c.primary] or None)
