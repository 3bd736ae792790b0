"""What notebooks 02, 03, 04 and 08 share: the data with the one reference choice, the ``permute_human`` switch,
the human scores the tables use, the Fluency-vs-Accuracy contrast verdict and the score plots (who rated what:
:mod:`syneval_nb.studies.raters`).

**References (one choice, every chapter).**

* TED zh-en: ``refB`` (:data:`TED_REFERENCE`), the reference of the WMT21 metrics task. The other human
  translation, ``ref`` (ref A), is rated by MQM below every MT system, so scoring against it would reward systems
  for resembling the worst translation of the set.
* WMT21 de-en: reference A (:data:`DEEN_REFERENCES`). The DA system ``HUMAN`` is reference B (it is a rated
  "system" of the DA campaign), so ref A keeps the references apart from what the humans rated; notebook 07 uses
  ref A too. Notebook 08 shows B and A+B as variants next to it. So BLEU-4's system-level r on de-en is the same
  number in every chapter.

**Human scores.** Verdicts use rater-normalized MQM (``mqm_z``: each rater's scores standardized within the
rater, then averaged over the segment's raters; :func:`syneval_nb.data.load_ted_zhen_mqm`), because every TED row
is scored by one rater and the raters' means differ by up to 4 MQM points. Tables are shown for raw MQM as well.

**permute_human.** ``None`` leaves the human scores alone; an integer shuffles, with that seed, every human score a
chapter uses (:func:`syneval_nb.stats.permute_human`): the segment scores across all rows (one permutation for all
MQM columns, so the rows stay consistent with each other) and the system-level scores across systems. With it
set, no "X beats Y" or "X correlates with humans" verdict may hold (a sanity check of the verdict rules).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import pandas as pd
from syneval_nb import stats
from syneval_nb.data import load_ted_zhen_mqm, load_wmt21_deen, sample_segments
from syneval_nb.textio import to_json


__all__ = ["HUMANS", "ASPECTS", "load_ted", "load_deen", "verdict_lines", "verdict_table", "plot_distributions",
           "plot_scatter", "plot_ci", "family_note", "meta_table"]

MAX_HEADLINE_VERDICTS = 6
"""At most this many headline verdicts per chapter (the index card shows them; the rest fold away): a chapter's
primary claims, three claims with their beyond-length twins."""

TED_REFERENCE = "refB"
"""The TED zh-en reference of every chapter (see the module docstring)."""
DEEN_REFERENCES = ("ref_A",)
"""The WMT21 de-en reference(s) of every chapter's headline numbers (see the module docstring)."""
MQM_COLUMNS = ("mqm", "mqm_fluency", "mqm_accuracy", "mqm_z", "mqm_fluency_z", "mqm_accuracy_z")
HUMANS = {"MQM": "mqm", "MQM z": "mqm_z"}
"""The segment-level human scores of every table: raw MQM and rater-normalized MQM (verdicts use ``"MQM z"``)."""
ASPECTS = {"Fluency z": "mqm_fluency_z", "Accuracy z": "mqm_accuracy_z"}
"""Liu & Gildea's fluency-vs-adequacy contrast on rater-normalized MQM parts."""


def check_permute(permute_human) -> int | None:
    """``permute_human`` checked before any work: None, or an integer seed (not a bool); a clear error otherwise."""
    if permute_human is None:
        return None
    if isinstance(permute_human, bool) or not isinstance(permute_human, (int, np.integer)):
        raise ValueError(f"permute_human must be None or an integer seed, got {permute_human!r}")
    return int(permute_human)


def load_ted(data_dir=None, sample: int | None = None, seed: int = 0, permute_human: int | None = None,
             reference: str = TED_REFERENCE) -> pd.DataFrame:
    """The 13 MT systems of TED zh-en (human translations left out), ``sample`` source segments drawn with
    ``seed`` (:func:`syneval_nb.data.sample_segments`: every system's row of a drawn segment), rows with an MQM
    score only, index reset. Adds ``reference`` / ``ptb_reference`` (the chosen reference's text and parse).
    With ``permute_human`` every column of :data:`MQM_COLUMNS` is shuffled across all rows by one permutation."""

    if reference not in ("ref", "refB"):
        raise ValueError(f"reference must be 'refB' (the chapters' choice) or 'ref', got {reference!r}")
    seed_p = check_permute(permute_human)
    ted = load_ted_zhen_mqm(data_dir)
    mt = sample_segments(ted[~ted["is_human"] & ted["mqm"].notna()], sample, seed).reset_index(drop=True)
    mt = mt.assign(reference=mt[reference], ptb_reference=mt[f"ptb_{reference}"])
    for c in MQM_COLUMNS:
        mt[c] = stats.permute_human(mt[c].to_numpy(dtype=float), seed_p)
    mt.attrs["reference"] = reference
    mt.attrs["permute_human"] = seed_p
    return mt


@dataclass
class Deen:
    """WMT21 de-en: ``segments`` (the sampled lines of the 19 MT systems) and ``da`` (``da_z`` per MT system,
    indexed by system; shuffled across systems with ``permute_human``), ``comet`` (published COMET system scores)."""

    segments: pd.DataFrame
    da: pd.Series
    comet: pd.DataFrame
    references: tuple


def load_deen(data_dir=None, sample: int | None = None, seed: int = 0, permute_human: int | None = None,
              references: Sequence[str] = DEEN_REFERENCES) -> Deen:
    """WMT21 de-en at system level: the MT systems' segments (``sample`` lines drawn with ``seed``) and their DA z
    (the DA system ``HUMAN`` = ref B is left out); ``permute_human`` shuffles DA z across the systems."""

    seed_p = check_permute(permute_human)
    bad = [r for r in references if r not in ("ref_A", "ref_B")]
    if bad or not references:
        raise ValueError(f"references must be among 'ref_A', 'ref_B', got {list(references)!r}")
    w = load_wmt21_deen(data_dir)
    segs = sample_segments(w.segments, sample, seed).reset_index(drop=True)
    da = w.system_da[~w.system_da["is_human"]].set_index("system")["da_z"].astype(float).sort_index()
    da = pd.Series(stats.permute_human(da.to_numpy(), seed_p), index=da.index, name="da_z")
    return Deen(segs, da, w.comet, tuple(references))


# ------------------------------------------------------------------------------------------------ verdicts


verdict_contrast = stats.verdict_contrast
"""The kit's one difference-of-differences verdict, :func:`syneval_nb.stats.verdict_contrast` (the Fluency-vs-
Accuracy contrast, the depth stability claim)."""


def holm_chapter(*groups: Mapping[str, Mapping], primary: Sequence[str] | None = None) -> tuple[dict, ...]:
    """Holm over a chapter, one family (:func:`syneval_nb.stats.holm_verdicts` over the union of ``groups``, e.g.
    the verdicts and the variant verdicts), returned split back into the groups. ``primary``: the chapter's
    declared primary claims, the only ones Holm runs over and the only ones that can hold; every other verdict is
    exploratory (default: every verdict above the cluster floor)."""
    allv = {}
    for g in groups:
        dup = set(allv) & set(g)
        if dup:
            raise ValueError(f"claims in two groups: {sorted(dup)}")
        allv.update(g)
    adj = stats.holm_verdicts(allv, primary)
    return tuple({c: adj[c] for c in g} for g in groups)


def headline_verdicts(verdicts: Mapping[str, Mapping], *claims: str) -> list[str]:
    """The chapter's headline verdicts for the results file (``"headline_verdicts"``, read by the index page of
    ``syneval-nb run``): the declared ``claims`` that the chapter computed, in the declared order. More than
    :data:`MAX_HEADLINE_VERDICTS` declared is an error; a declared claim the chapter did not compute (e.g. a
    system-level claim without its data) is left out."""
    if len(claims) > MAX_HEADLINE_VERDICTS:
        raise ValueError(f"{len(claims)} headline verdicts declared; at most {MAX_HEADLINE_VERDICTS}")
    return [c for c in claims if c in verdicts]


verdicts_json = functools.partial(to_json, finite=False)
"""``verdicts_json(verdicts)``: ``{claim: {"verdict", "statistic", "ci", "p", "rule", ...}}`` as plain values (floats,
lists) by the one converter :func:`syneval_nb.textio.to_json`; NaN stays until the results file is written."""


def verdict_lines(verdicts: Mapping[str, Mapping]) -> str:
    """Markdown: one bullet per claim, the sentence of :func:`syneval_nb.stats.verdict_sentence`."""
    return "\n".join(f"* {stats.verdict_sentence(c, v)}" for c, v in verdicts.items())


def verdict_table(verdicts: Mapping[str, Mapping]) -> pd.DataFrame:
    """The verdicts as a table: claim, test, verdict, statistic, interval, p, Holm p (over the chapter), reason."""
    return pd.DataFrame([{"claim": c, "test": v.get("test", ""), "verdict": v["verdict"], "statistic": v["statistic"],
                          "low": v["ci"][0], "high": v["ci"][1], "p": v["p"], "p Holm": v.get("p_holm", np.nan),
                          "reason": v.get("reason", "")} for c, v in verdicts.items()]).set_index("claim")


def family_note(verdicts: Mapping[str, Mapping]) -> str:
    """The sentence a notebook prints above its verdicts: the size of the Holm family and the rule, computed."""
    sizes = {v.get("family_size") for v in verdicts.values()}
    if not verdicts or None in sizes:
        return "These verdicts are not Holm-adjusted."
    tests = sorted({v["test"] for v in verdicts.values()})
    held = sum(v["verdict"] == "holds" for v in verdicts.values())
    expl = sum(v["verdict"] == "exploratory" for v in verdicts.values())
    return (f"Holm runs over the chapter's primary claims, one family of {max(sizes)} p-values (tests: "
            f"{', '.join(tests)}); each p is (k + 1) / (B + 1), never 0. A verdict holds iff its own interval lies "
            f"above 0 and its Holm p is below alpha; it does not hold iff the interval lies below 0; otherwise cannot "
            f"tell. {held} of {len(verdicts) - expl} hold." + (f" {expl} more are exploratory (not a primary claim, "
                                                               f"or fewer than {stats.MIN_UNITS} units resampled): "
                                                               "shown, never counted." if expl else ""))


def no_holds(verdicts: Mapping[str, Mapping]) -> list[str]:
    """The claims whose verdict is "holds" (for the permute_human sanity check: must be empty; an exploratory
    verdict never holds)."""
    return [c for c, v in verdicts.items() if v["verdict"] == "holds"]


# ------------------------------------------------------------------------------------------------ plots


def plot_distributions(scores: Mapping[str, np.ndarray], title_what: str = "segment scores"):
    """Score distribution of each metric (``{name or (name, depth): values}`` (one box+strip per metric, 0-1 scale where the metric has one), with
    each metric's median in the title: a degenerate metric (most scores at the floor, e.g. TKM) shows."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    long = pd.concat([pd.DataFrame({"metric": stats.metric_name(k), "score": np.asarray(v, dtype=float)})
                      for k, v in scores.items()],
                     ignore_index=True)
    med = long.groupby("metric", sort=False)["score"].median()
    fig, ax = plt.subplots(figsize=(1.4 + 1.1 * len(scores), 4))
    sns.violinplot(data=long, x="metric", y="score", cut=0, inner="quart", density_norm="width", ax=ax)
    ax.set(xlabel="metric", ylabel=title_what)
    low = med.idxmin()
    ax.set_title("Medians: " + ", ".join(f"{k} {v:.3g}" for k, v in med.items())
                 + f" (lowest: {low})", fontsize=9)
    fig.tight_layout()
    return fig


def plot_ci(ax, est, pos, low, high, *, vertical: bool = False, fmt: str = "o", **kw) -> None:
    """Each estimate at ``pos`` (a marker, ``fmt``; ``"none"`` for none) with its interval drawn from ``low`` to
    ``high``. A percentile interval need not contain its estimate, and matplotlib's ``errorbar`` refuses the
    negative error that then gives, so the bar is centred on the interval, not the estimate. ``kw`` go to
    ``errorbar`` (``color`` and ``label`` to the marker too)."""
    est, low, high = (np.asarray(v, dtype=float) for v in (est, low, high))
    xy = (lambda v: (pos, v)) if vertical else (lambda v: (v, pos))  # noqa: E731
    color, label = kw.pop("color", None), kw.pop("label", None)
    if fmt != "none":
        (point,) = ax.plot(*xy(est), fmt, color=color, label=label, linestyle="none")
        color, label = color or point.get_color(), None
    ax.errorbar(*xy((low + high) / 2), **{"yerr" if vertical else "xerr": (high - low) / 2}, fmt="none",
                ecolor=kw.pop("ecolor", color), label=label, **kw)


def plot_scatter(scores: Mapping[str, np.ndarray], human: np.ndarray, human_name: str = "MQM z"):
    """One scatter per metric against the human score (pooled rows), with Pearson r in each panel's title."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    n = len(scores)
    fig, axes = plt.subplots(1, n, figsize=(3.2 * n, 3.2), squeeze=False)
    h = np.asarray(human, dtype=float)
    for ax, (k, v) in zip(axes[0], scores.items()):
        v, k = np.asarray(v, dtype=float), stats.metric_name(k)
        sns.scatterplot(x=v, y=h, s=8, alpha=0.3, ax=ax, edgecolor=None)
        ax.set(xlabel=k, ylabel=human_name, title=f"{k}: r = {stats.pearson(v, h):.3f}")
    fig.tight_layout()
    return fig


# ------------------------------------------------------------------------------------------------ meta-evaluation


META_K = 200
"""Resamples of the meta-evaluation's permutation tests in the chapters (each resample re-optimises acc_eq's tie
threshold or recomputes SPA's pairwise p-values: 200 keep a chapter within minutes; p resolution 0.005)."""


def meta_table(scores: Mapping, frame: pd.DataFrame, human: str = "mqm_z", baseline: str = "chrF",
               k: int = META_K, seed: int = 0) -> pd.DataFrame:
    """The WMT metrics-task meta-evaluation beside Pearson (:mod:`syneval_nb.stats.meta`, mt-metrics-eval's
    definitions, tested against its code): per metric (``{name or (name, depth): segment scores}`` aligned with
    ``frame``, which has ``system``, ``seg_id`` and ``human``),

    * ``acc_eq``: tie-calibrated pairwise accuracy over the translations of each source segment, averaged over
      segments (:func:`~syneval_nb.stats.meta.pairwise_accuracy_tie_calibrated`), with ``acc_eq_p``, the
      PERM-BOTH permutation p that the metric beats ``baseline`` (:func:`~syneval_nb.stats.meta.
      permutation_test_acc_eq`);
    * ``item_r``: Pearson within each source segment, averaged over segments
      (:func:`~syneval_nb.stats.meta.item_grouped_correlation`);
    * ``spa``: system-level soft pairwise accuracy from the (systems x segments) score matrices, segments scored
      for every system only (:func:`~syneval_nb.stats.meta.soft_pairwise_accuracy`), with ``spa_p``, the
      permutation p that the metric beats ``baseline`` (:func:`~syneval_nb.stats.meta.permutation_test_spa`).

    The tests draw ``k`` resamples (``random_state=seed``; mtme's early stop every 100); p = (m + 1) / (B + 1), m of
    the B drawn reaching the observed difference (mtme's m / B can be 0). Not part of the Holm family."""
    meta = stats.meta
    h = frame[human].to_numpy(dtype=float)
    items = frame["seg_id"].to_numpy()
    names = {stats.metric_name(key): np.asarray(v, dtype=float) for key, v in scores.items()}
    complete = frame.groupby("seg_id")["system"].transform("nunique") == frame["system"].nunique()

    def matrix(v):
        f = frame[complete].assign(_v=v[complete.to_numpy()])
        return f.pivot(index="system", columns="seg_id", values="_v").to_numpy(dtype=float)

    hm = matrix(h)
    base = names.get(baseline)
    rows = []
    for nm, v in names.items():
        row = {"metric": nm, "acc_eq": meta.pairwise_accuracy_tie_calibrated(v, h, items).acc_eq,
               "item_r": meta.item_grouped_correlation(v, h, items).corr,
               "spa": meta.soft_pairwise_accuracy(matrix(v), hm), "acc_eq_p": np.nan, "spa_p": np.nan}
        if base is not None and nm != baseline:
            kw = dict(k=k, random_state=seed, block_size=100)
            for col, r in (("acc_eq_p", meta.permutation_test_acc_eq(base, v, h, items, **kw)),
                           ("spa_p", meta.permutation_test_spa(matrix(base), matrix(v), hm, **kw))):
                row[col] = stats.monte_carlo_p(r.delta - (r.resampled[:, 0] - r.resampled[:, 1]))
        rows.append(row)
    out = pd.DataFrame(rows).set_index("metric")
    out.attrs["baseline"] = baseline
    return out


def meta_json(table: pd.DataFrame) -> dict:
    """:func:`meta_table` for the results file."""
    return {m: {c: (None if not np.isfinite(x) else float(x)) for c, x in r.items()}
            for m, r in table.to_dict("index").items()}
