"""Verdicts computed from the numbers of a correlation table (its resamples), never picked by hand.

:func:`verdict_beats` ("metric beats baseline"), :func:`verdict_correlates` ("metric correlates with the human
scores"), both with control rows that must be beaten too, and :func:`verdict_sentence` (one sentence with the
numbers and the rule).
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from syneval_nb.stats.resampling import _p_one_sided, percentile_ci
from syneval_nb.stats.tables import LENGTH, PLACEBO, TableBootstrap, metric_name

# ----------------------------------------------------------------------------------------------------------------
# verdicts computed from the numbers
# ----------------------------------------------------------------------------------------------------------------

def _boot_of(table_or_results, human: str | None) -> TableBootstrap:
    b = table_or_results if isinstance(table_or_results, TableBootstrap) else \
        getattr(table_or_results, "attrs", {}).get("bootstrap")
    if isinstance(b, dict):
        if human is None:
            raise ValueError(f"a stacked table: pass human= (one of {list(b)})")
        if human not in b:
            raise KeyError(f"no human score {human!r}; the table has {list(b)}")
        b = b[human]
    if not isinstance(b, TableBootstrap):
        raise TypeError("verdicts need a table from stats.correlation_table/correlation_tables (its "
                        "attrs['bootstrap']) or a TableBootstrap; this object has none")
    return b


def _ci(d: np.ndarray, alpha: float) -> list[float]:
    lo, hi = percentile_ci(d, alpha)
    return [float(lo), float(hi)]


def _unit_text(b: TableBootstrap) -> str:
    return {"cluster": "clusters", "segment": "source segments", "item": "rows"}.get(b.unit, b.unit)


def _control_deltas(b, i: int, m: str, controls: Sequence[str], alpha: float) -> dict:
    """``{control: {"delta", "ci"}}``: the row ``i`` (metric ``m``) minus each control row on the same resamples."""
    return {c: {"delta": float(b.estimates[i] - b.estimate(c)), "ci": _ci(b.samples[:, i] - b.column(c), alpha)}
            for c in controls if c != m}


def _three_way(ci: Sequence[float], ctl: Mapping, significant: bool = True) -> str:
    """The verdict rule shared by :func:`verdict_beats` and :func:`verdict_correlates`: holds iff the interval is
    above 0, ``significant`` and every control is beaten with an interval above 0; does not hold iff the interval
    is below 0 or a control is better with an interval below 0; else cannot tell."""
    if ci[0] > 0 and significant and all(v["ci"][0] > 0 for v in ctl.values()):
        return "holds"
    if ci[1] < 0 or any(v["ci"][1] < 0 for v in ctl.values()):
        return "does not hold"
    return "cannot tell"


def verdict_beats(table_or_results, metric: str | tuple, baseline: str | tuple, *,
                  controls: Sequence[str] = (PLACEBO, LENGTH), alpha: float | None = None, human: str | None = None,
                  rule_text: str | None = None) -> dict:
    """Verdict on the claim "``metric`` beats ``baseline``", from a :func:`correlation_table` (its resamples).

    Rule: **holds** iff r(metric) - r(baseline) has a percentile interval (level 1 - alpha, paired bootstrap over
    the table's units) above 0 **and** a one-sided p (Holm-adjusted over the table's comparisons when the table
    compared this metric with this baseline; otherwise the single comparison's bootstrap p) below alpha, **and**
    the metric beats every control row (``controls``, e.g. the placebo and the length-only control) with an
    interval above 0. **does not hold** iff the baseline or a control is better than the metric with an interval
    below 0. Otherwise **cannot tell**. A control missing from the table is an error (a verdict must not
    silently skip its controls; pass ``controls=()`` to state that there are none).

    Returns ``{"verdict", "statistic" (the difference), "ci" [low, high], "p", "rule", "controls": {control:
    {"delta", "ci"}}, "n_resamples"}`` (JSON-ready).
    """
    b = _boot_of(table_or_results, human)
    a = alpha if alpha is not None else b.alpha
    m, base = metric_name(metric), metric_name(baseline)
    i, j = b.index(m), b.index(base)
    missing = [c for c in controls if c not in b.names]
    if missing:
        raise KeyError(f"control rows {missing} are not in the table (rows: {', '.join(b.names)}); add them with "
                       f"correlation_table(controls=...) or pass controls=() to judge without controls")
    d = b.samples[:, i] - b.samples[:, j]
    ci = _ci(d, a)
    if b.baselines.get(m) == base:
        p, p_kind = b.p_better_holm[m], "Holm-adjusted over the table's comparisons" if b.holm else "unadjusted"
    else:
        p, p_kind = _p_one_sided(d)[0], "one comparison"
    ctl = _control_deltas(b, i, m, controls, a)
    verdict = _three_way(ci, ctl, p < a)
    rule = (f"holds iff {b.method} r({m}) - r({base}) has a {1 - a:.0%} paired-bootstrap interval (resampling "
            f"{_unit_text(b)}, {len(d)} resamples) above 0 and a one-sided p < {a:g} ({p_kind})"
            + (f", and {m} beats each control ({', '.join(ctl)}) with an interval above 0" if ctl else "")
            + f"; does not hold iff {base}" + (" or a control" if ctl else "")
            + " is better with an interval below 0; otherwise cannot tell")
    if rule_text:
        rule = f"{rule_text} ({rule})"
    return {"verdict": verdict, "statistic": float(b.estimates[i] - b.estimates[j]), "ci": ci, "p": float(p),
            "rule": rule, "controls": ctl, "n_resamples": len(d),
            "reason": _beats_reason(m, base, ci, float(p), a, ctl)}


def _beats_reason(m: str, base: str, ci: Sequence[float], p: float, alpha: float, ctl: Mapping) -> str:
    """Which condition of :func:`verdict_beats`' rule decided, in words (so a reader sees, e.g., that a metric
    beats the baseline but not the length-only control)."""
    better = [c for c, v in ctl.items() if v["ci"][1] < 0]
    not_beaten = [c for c, v in ctl.items() if v["ci"][0] <= 0 and c not in better]
    if ci[1] < 0:
        vs = f"{base} is better than {m}"
    elif ci[0] > 0 and p < alpha:
        vs = f"{m} beats {base}"
    elif ci[0] > 0:
        vs = f"{m} is ahead of {base} but p = {p:.2g} is not below {alpha:g}"
    else:
        vs = f"the interval of {m} - {base} includes 0"
    parts = [vs]
    if better:
        parts.append(f"{' and '.join(better)} {'is' if len(better) == 1 else 'are'} better than {m}")
    if not_beaten:
        parts.append(f"{m} does not beat {' or '.join(not_beaten)} with an interval above 0")
    if not better and not not_beaten and ctl:
        parts.append(f"{m} beats every control ({', '.join(ctl)})")
    return "; ".join(parts)


def verdict_correlates(table_or_results, metric: str | tuple, *, controls: Sequence[str] = (PLACEBO,),
                       alpha: float | None = None, human: str | None = None, rule_text: str | None = None) -> dict:
    """Verdict on the claim "``metric`` correlates with the human scores", from a :func:`correlation_table`.

    Rule: **holds** iff r(metric) has a percentile interval (level 1 - alpha, bootstrap over the table's units)
    above 0 and the metric beats every control row (default: the placebo) with an interval above 0 (on the same
    resamples). **does not hold** iff the interval of r lies below 0 or a control is better with an interval
    below 0. Otherwise **cannot tell**. ``p`` is the one-sided bootstrap p (share of resamples with r <= 0).
    Returns the dict of :func:`verdict_beats` with ``statistic`` = r."""
    b = _boot_of(table_or_results, human)
    a = alpha if alpha is not None else b.alpha
    m = metric_name(metric)
    i = b.index(m)
    missing = [c for c in controls if c not in b.names]
    if missing:
        raise KeyError(f"control rows {missing} are not in the table (rows: {', '.join(b.names)})")
    s = b.samples[:, i]
    ci = _ci(s, a)
    ok = np.isfinite(s)
    p = float((s[ok] <= 0).mean()) if ok.any() else float("nan")
    ctl = _control_deltas(b, i, m, controls, a)
    verdict = _three_way(ci, ctl)
    rule = (f"holds iff {b.method} r({m}) has a {1 - a:.0%} bootstrap interval (resampling {_unit_text(b)}, "
            f"{len(s)} resamples) above 0"
            + (f" and {m} beats each control ({', '.join(ctl)}) with an interval above 0" if ctl else "")
            + "; does not hold iff the interval lies below 0" + (" or a control is better" if ctl else "")
            + "; otherwise cannot tell")
    if rule_text:
        rule = f"{rule_text} ({rule})"
    return {"verdict": verdict, "statistic": float(b.estimates[i]), "ci": ci, "p": p, "rule": rule,
            "controls": ctl, "n_resamples": len(s)}


def verdict_sentence(claim: str, verdict: Mapping, digits: int = 3) -> str:
    """One sentence stating a verdict with its numbers, e.g. ``'"STM-4 beats BLEU-4": does not hold
    (statistic -0.012, 95% interval [-0.020, -0.004], p = 0.99).'`` The interval level is not in the verdict
    dict, so the sentence says "interval" and the rule (appended) says the level."""
    lo, hi = verdict["ci"]
    f = f"{{:+.{digits}f}}"
    p, b = verdict["p"], verdict.get("n_resamples")
    ptxt = f"p < {1 / b:.2g}" if p == 0 and b else f"p = {p:.2g}"  # no resample at or below 0: p < 1/B
    text = (f'"{claim}": {verdict["verdict"]} (statistic {f.format(verdict["statistic"])}, interval '
            f'[{f.format(lo)}, {f.format(hi)}], {ptxt}).')
    ctl = verdict.get("controls") or {}
    if ctl:
        text += " Against the controls: " + "; ".join(
            f"{c} {f.format(v['delta'])} [{f.format(v['ci'][0])}, {f.format(v['ci'][1])}]" for c, v in ctl.items()) + "."
    if verdict.get("reason"):
        text += f" Why: {verdict['reason']}."
    return text + f" Rule: {verdict['rule']}."
