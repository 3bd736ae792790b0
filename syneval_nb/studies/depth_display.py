"""What the depth chapters (03, 04 and 08) show of :mod:`syneval_nb.studies.depth_study`: display tables, the
depth-curve plot, the segment scores the distribution and scatter plots take, and the sentences of the kernels'
length diagnosis, all formatted from the study's tables (presentation only: no number is computed here)."""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd
from syneval_nb import stats
from syneval_nb.metrics.syntactic import PRIMARY_DEPTH
from syneval_nb.studies.depth_study import BASELINES, KERNELS, DepthChapter


__all__ = ["score_samples", "headline_display", "curve_display", "aspect_display", "system_display",
           "plot_curves", "length_diagnosis_display", "length_diagnosis_text"]

_LENGTH_TAU = 0.5
"""A kernel row is called "largely an inverse-length score" when its Kendall tau with hypothesis or reference
length is at or below -_LENGTH_TAU."""


def _ci(x: float, low: float, high: float) -> str:
    """``+0.123 [+0.100, +0.150]``: a statistic and its interval."""
    return f"{x:+.3f} [{low:+.3f}, {high:+.3f}]"


def _ci_col(r, col: str) -> str:
    """:func:`_ci` of column ``col`` of a length-diagnosis row (``col``, ``col_low``, ``col_high``)."""
    return _ci(r[col], r[col + "_low"], r[col + "_high"])


def score_samples(ch: DepthChapter) -> dict:
    """The segment scores the distribution and scatter plots show: BLEU-4, each family at PRIMARY_DEPTH, kernels."""
    keys = [("BLEU", PRIMARY_DEPTH)] + [(f, None if f in KERNELS else PRIMARY_DEPTH) for f in ch.families]
    return {stats.metric_name(k): ch.literal.segment[k] for k in keys}


def headline_display(tables: Mapping, humans: Sequence[str] = ("MQM", "MQM z", "Fluency z", "Accuracy z")
                     ) -> pd.DataFrame:
    """One display frame of the headline tables (``ch.heads``): per metric, Pearson r [interval], its difference
    from chrF [interval] and mark, then the partial r given the length model ("beyond length") and the
    within-segment r next to it (where computed), per human score."""
    parts = []
    for h in humans:
        for method in ("pearson", "partial", "within"):
            t = tables.get((h, method))
            if t is None:
                continue
            p = t.set_index("metric")
            parts.append(pd.DataFrame({
                (h, method, "r"): p["r"], (h, method, "interval"): [f"[{a:.3f}, {b:.3f}]" for a, b in
                                                                   zip(p["low"], p["high"])],
                (h, method, f"vs {BASELINES[0]}"): ["" if not np.isfinite(d) else _ci(d, lo, hi) + mk
                                                    for d, lo, hi, mk in zip(p["delta"], p["delta_low"],
                                                                             p["delta_high"], p["mark"])]}))
    out = pd.concat(parts, axis=1)
    out.columns = pd.MultiIndex.from_tuples(out.columns, names=["human", "method", ""])
    return out


def _by_depth(t: pd.DataFrame, index: list[str]) -> pd.DataFrame:
    """A curve table's depth rows as ``r`` + mark cells, one column per depth."""
    t = t[t["depth"].notna()]
    out = t.assign(cell=[f"{r:.3f}{m}" for r, m in zip(t["r"], t["mark"])]).pivot(index=index, columns="depth",
                                                                                  values="cell")
    out.columns = [int(c) for c in out.columns]
    return out


def curve_display(ch: DepthChapter, human: str = "MQM z") -> pd.DataFrame:
    """Pearson r by depth (columns) per family and definition (rows), ``+``/``-`` where the row beats / loses to
    BLEU of the same order (Holm over the table)."""
    return pd.concat([_by_depth(t[t["human"] == human].assign(definition=label), ["definition", "family"])
                      for label, t in ch.curves.items()])


def aspect_display(ch: DepthChapter) -> pd.DataFrame:
    """Literal-mean Pearson r by depth against Fluency z and Accuracy z (rows: human part, family)."""
    return _by_depth(ch.aspects, ["human", "family"])


def system_display(ch: DepthChapter) -> pd.DataFrame:
    """System-level Pearson r [interval] with DA z by depth (rows: metric), kernels, length."""
    t = ch.system_curves
    return t.set_index("metric")[["r", "low", "high", "delta", "delta_low", "delta_high", "mark", "williams_p", "n"]]


def plot_curves(curves: Mapping[str, pd.DataFrame], human: str, families: Sequence[str]):
    """Depth curves with their bootstrap bands (percentile intervals of the table's resamples) for each
    definition (``ch.curves``: ``{"literal mean": table, "effective order": table}``), BLEU and the non-kernel
    ``families``; the length control and the placebo as horizontal lines. The title states each family's r at
    depth 1 and at the maximum depth under both definitions."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    fams = ["BLEU"] + [f for f in families if f not in KERNELS]
    fig, axes = plt.subplots(1, len(curves), figsize=(6.5 * len(curves), 4.2), sharey=True, squeeze=False)
    colors = dict(zip(fams, sns.color_palette(n_colors=len(fams))))
    summary = []
    for ax, (label, t) in zip(axes[0], curves.items()):
        t = t[t["human"] == human]
        for f in fams:
            g = t[t["family"] == f].sort_values("depth")
            ax.plot(g["depth"], g["r"], marker="o", color=colors[f], label=f)
            ax.fill_between(g["depth"].astype(float), g["low"], g["high"], color=colors[f], alpha=0.15)
            if f != "BLEU":
                summary.append(f"{f} {g['r'].iloc[0]:.3f}->{g['r'].iloc[-1]:.3f} ({label})")
        for ctl, ls in ((stats.LENGTH, "--"), (stats.PLACEBO, ":")):
            r = float(stats.table_row(t, ctl)["r"])
            ax.axhline(r, color="grey", ls=ls, lw=1)
            ax.annotate(f"{ctl} {r:.3f}", (1, r), fontsize=8, color="grey", va="bottom")
        ax.set(title=f"{label}", xlabel="maximum depth D / n-gram order", ylabel=f"Pearson r with {human}")
        ax.legend(fontsize=8)
    fig.suptitle("r from depth 1 to max: " + "; ".join(summary), fontsize=9)
    fig.tight_layout()
    return fig


def length_diagnosis_display(diag: pd.DataFrame) -> pd.DataFrame:
    """The kernels' length diagnosis (``ch.length``) as a display frame: each statistic with its interval in one
    cell."""
    cols = {"tau_hyp": "τ with hyp length", "tau_ref": "τ with ref length", "r": "r with MQM z",
            "partial": "partial r | length model", "fluency": "Fluency contrast vs chrF",
            "fluency_beyond": "Fluency contrast, beyond length"}
    out = pd.DataFrame({"median score": [f"{x:.2g}" for x in diag["median"]],
                        f"share < {diag.attrs['tiny_score']:g}": [f"{x:.0%}" for x in diag["share_tiny"]]},
                       index=diag.index)
    for c, label in cols.items():
        out[label] = ["" if not np.isfinite(r[c]) else _ci_col(r, c) for _, r in diag.iterrows()]
    return out


def length_diagnosis_text(diag: pd.DataFrame, lam: float = 1.0) -> str:
    """Markdown sentences from the kernels' length diagnosis (``ch.length``; ``lam``: the decay of the plain-named
    kernel rows, the chapter's): a lead naming the rows, then one paragraph per kernel row: how strongly it follows
    length (tau with both lengths, "largely an inverse-length score" when a tau is at or below -0.5; median, share
    of tiny scores), how much of its r with MQM z is left given the length model, and whether its Fluency contrast
    against chrF survives removing length (decided on the interval of the beyond-length contrast: above 0 =
    survives; below 0 = reverses; including 0 = not distinguishable from 0)."""
    kern = [m for m in diag.index if m.split(" λ=")[0] in KERNELS]
    variants = [m for m in kern if " λ=" in m]
    tiny = diag.attrs["tiny_score"]
    paper = "the paper's plain count" if float(lam) == 1.0 else "the chapter's `lam`"
    lead = (f"Length diagnosis of the tree-kernel rows ({', '.join(kern)}; the plain name is λ = {float(lam):g}, "
            f"{paper}" + (f"; {', '.join(variants)}: Moschitti's decay, a named variant" if variants else "")
            + "), beside chrF and BLEU-4; intervals resample source segments.")
    paras = [lead]
    for m, r in diag.iterrows():
        if m not in kern:
            continue
        lam_text = f"λ = {m.split(' λ=')[1]}" if " λ=" in m else f"λ = {float(lam):g}"
        strong = min(r["tau_hyp"], r["tau_ref"]) <= -_LENGTH_TAU
        share = r["partial"] / r["r"] if r["r"] else np.nan
        text = (f"**{m}** ({lam_text}) {'is largely an inverse-length score' if strong and r['tau_hyp'] < 0 else 'follows length'}"
                f": Kendall τ with hypothesis length {_ci_col(r, 'tau_hyp')}, with reference length "
                f"{_ci_col(r, 'tau_ref')}; median score {r['median']:.2g}, {r['share_tiny']:.0%} of segments below "
                f"{tiny:g}. Pearson r with MQM z {_ci_col(r, 'r')}; given the length model the partial r is "
                f"{_ci_col(r, 'partial')}"
                + (f" ({share:.0%} of the raw r)." if np.isfinite(share) and r["r"] > 0 else "."))
        lo, hi = r["fluency_beyond_low"], r["fluency_beyond_high"]
        verdict = ("survives removing length" if lo > 0 else "reverses when length is removed" if hi < 0
                   else "is not distinguishable from 0 once length is removed")
        text += (f" Its Fluency contrast against chrF ([r - r(chrF)] on Fluency z minus on Accuracy z) is "
                 f"{_ci_col(r, 'fluency')} raw and {_ci_col(r, 'fluency_beyond')} beyond length: it {verdict} "
                 "(unadjusted 95% intervals: a diagnosis, not a verdict).")
        paras.append(text)
    return "\n\n".join(paras)
