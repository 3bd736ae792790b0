"""Raters in the open (issue 35, item 8): who scored what in TED zh-en MQM, and the headline segment claims
re-checked on pairs of outputs scored by the same rater (chapters 02 and 08).

Within one TED source segment the 13 MT outputs are scored by 3 to 8 raters, and the raters' raw means differ by up
to 4 MQM points, so a within-segment statistic compares across raters. :func:`rater_allocation` counts the
allocation; :func:`same_rater_recheck` decides the same claims on all pairs of a segment's outputs and on the pairs
scored by one rater (secondary: outside the chapter's Holm family, never counted); :func:`recheck_lines` says it.
"""
from __future__ import annotations

import dataclasses
import functools
from typing import Mapping

import pandas as pd
from syneval_nb import stats

__all__ = ["rater_allocation", "same_rater_recheck", "recheck_lines"]


def rater_allocation(frame: pd.DataFrame, human: str = "mqm") -> dict:
    """Who scored what, counted from ``frame``'s rows: ``segments by raters`` (raters -> source segments), ``rows``
    (rater x system), ``raters`` (rows, segments, systems, mean ``human``; mildest first) and ``text``."""
    r = frame[frame["rater"].notna()]
    segs = r.groupby("seg_id")["rater"].nunique().value_counts().sort_index().rename_axis("raters")
    rows = pd.crosstab(r["rater"], r["system"])
    raters = r.groupby("rater").agg(rows=("system", "size"), segments=("seg_id", "nunique"),
                                    systems=("system", "nunique"), mean=(human, "mean")).sort_values("mean")[::-1]
    top, m = rows.loc[raters["rows"].idxmax()], raters["mean"]
    text = (f"Source segments by number of raters: {', '.join(f'{k}: {v}' for k, v in segs.items())} (one rater "
            f"per row). {top.name} scored {top.max()} {top.idxmax()} rows but {top.min()} {top.idxmin()} rows. Raw "
            f"rater means ({human}) run from {m.iloc[0]:.2f} ({m.index[0]}) to {m.iloc[-1]:.2f} ({m.index[-1]}).")
    return {"segments by raters": segs.rename("segments"), "rows": rows, "raters": raters, "text": text}


def same_rater_recheck(scores: Mapping, frame: pd.DataFrame, claims: Mapping[str, tuple], given=None,
                       human: str = "mqm_z", n_resamples: int = 1000, seed: int = 0, alpha: float = 0.05) -> dict:
    """``claims`` (``{claim: (verdict function of a table, beyond length)}``) within source segments, on all pairs
    of a segment's outputs and on pairs scored by the same rater: Pearson tables of the scores centred per segment
    (:func:`syneval_nb.stats.within_segment`) or per (segment, rater) cell (a cell's centred cross-product sums its
    pairs), ``given`` centred alike, on the same resamples of source segments. Per set of pairs, Holm over the
    claims and :func:`syneval_nb.stats.decide` (the floor counts segments with a pair); secondary, outside the
    chapter's family. ``{"all pairs" / "same rater": {claim: verdict}, "n_pairs", "n_segments", "survives"}``."""
    h, seg = frame[human].to_numpy(dtype=float), frame["seg_id"].to_numpy()
    out = {"n_pairs": {}, "n_segments": {}}
    for name, cells in {"all pairs": seg.astype(str),
                        "same rater": seg.astype(str) + "|" + frame["rater"].astype(str).to_numpy()}.items():
        size = pd.Series(cells).value_counts()
        out["n_pairs"][name] = int((size * (size - 1) // 2).sum())
        out["n_segments"][name] = n = int(pd.Series(seg[size[cells].to_numpy() >= 2]).nunique())
        c = functools.partial(stats.center_within, segments=cells)
        tables = {b: dataclasses.replace(stats.correlation_table(
            {k: c(v) for k, v in scores.items()}, c(h), seg, placebo_column=False, n_resamples=n_resamples, seed=seed,
            alpha=alpha, given={k: c(v) for k, v in given.items()} if b else None).attrs["bootstrap"],
            method=f"within-segment ({name})", n_clusters=n) for b in {b for _, b in claims.values()}}
        out[name] = stats.holm_verdicts({cl: fn(tables[b]) for cl, (fn, b) in claims.items()})
    out["survives"] = {cl: out["all pairs"][cl]["verdict"] == out["same rater"][cl]["verdict"] for cl in claims}
    return out


def recheck_lines(rc: Mapping, headline: Mapping[str, Mapping]) -> str:
    """Markdown: per claim of :func:`same_rater_recheck` (and its ``headline`` verdict) the estimate, interval and
    outcome on all pairs and on same-rater pairs, and whether it survives."""
    n, s = rc["n_pairs"], rc["n_segments"]
    lines = [f"All pairs of a source segment's outputs ({n['all pairs']} pairs, {s['all pairs']} segments) vs "
             f"same-rater pairs ({n['same rater']} pairs, {s['same rater']} segments)."]
    for cl, ok in rc["survives"].items():
        a, b = (f"{v['statistic']:+.3f} [{v['ci'][0]:+.3f}, {v['ci'][1]:+.3f}], {v['verdict']}"
                for v in (rc["all pairs"][cl], rc["same rater"][cl]))
        lines.append(f"* \"{cl}\" ({headline[cl]['verdict']}), within source segments: all pairs {a}; same rater "
                     f"{b}: **{'survives' if ok else 'does not survive'}**.")
    return "\n".join(lines)
