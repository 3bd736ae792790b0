"""Verdicts computed from the numbers of a correlation table (its resamples), never picked by hand.

Every verdict names exactly the test it decided (``"test"``), and one rule decides them all (:func:`decide`):

* **beats** (:func:`verdict_beats`): r(A) - r(B) on the table's paired resamples;
* **beats beyond length** (:func:`verdict_beats` on a table built with ``given=length_covariates(...)``): the
  same difference of partial correlations given the length model;
* **correlates** / **correlates beyond length** (:func:`verdict_correlates`): r (or the partial r) itself;
* **beats the placebo** (:func:`verdict_beats_placebo`): r minus the 95th percentile of the table's placebo
  distribution (N random columns), or at system level of the metric's permutation distribution;
* a difference of such statistics (:func:`verdict_from_samples`, e.g. a contrast between two human scores).

The rule: **holds** iff the statistic's percentile interval (level 1 - alpha) lies above 0 **and** its one-sided
Monte-Carlo p, (k + 1) / (B + 1) (:func:`syneval_nb.stats.monte_carlo_p`, never 0), is below alpha after Holm over
the chapter's family (:func:`holm_verdicts`: every verdict of a chapter, one family); **does not hold** iff the
interval lies below 0; otherwise **cannot tell**. So no verdict can say "does not hold" while its own interval is
above 0. A verdict resampling fewer than :data:`MIN_UNITS` (20) units, or not among a chapter's primary claims,
is **exploratory** (shown, out of the Holm family, never "holds"); a verdict with ``requires`` (a contrast of edges
needs the metric's own edge) holds only if that interval lies above 0 too.

Each verdict carries its statistic, interval, p, the Holm p, the rule and the computed ``reason`` (which names the
test and the condition that decided).
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from syneval_nb.stats.resampling import holm, monte_carlo_p, null_p, percentile_ci
from syneval_nb.stats.tables import PLACEBO, TableBootstrap, given_text, metric_name

__all__ = ["decide", "verdict_sentence", "verdict_beats", "verdict_correlates", "verdict_contrast"]
# ``unit_text`` is a helper of the claim engine and the chapters' own verdicts (not in __all__)

MIN_UNITS = 20
"""The cluster floor: a verdict resampling fewer units than this is exploratory (never "holds")."""

TESTS = ("beats", "beats beyond length", "correlates", "correlates beyond length", "beats the placebo",
         "beats the placebo beyond length", "beats permuted human scores", "difference")
"""The test names a verdict can carry (``verdict["test"]``)."""


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
    if not np.isfinite(d).any():  # no resample could be estimated: no interval (the verdict says so)
        return [float("nan"), float("nan")]
    lo, hi = percentile_ci(d, alpha)
    return [float(lo), float(hi)]


def unit_text(b: TableBootstrap) -> str:
    return {"cluster": "clusters", "segment": "source segments", "item": "rows"}.get(b.unit, b.unit)


def decide(ci: Sequence[float], p: float, alpha: float, requires: Sequence[float] | None = None,
           n_units: int | None = None) -> str:
    """The one rule: ``"exploratory"`` iff ``n_units`` < :data:`MIN_UNITS`; ``"holds"`` iff ci[0] > 0, p < alpha
    and the ``requires`` interval (when given) lies above 0; ``"does not hold"`` iff ci[1] < 0; else ``"cannot
    tell"`` (an interval above 0 is never "does not hold")."""
    if n_units is not None and n_units < MIN_UNITS:
        return "exploratory"
    if ci[0] > 0 and p < alpha and (requires is None or requires[0] > 0):
        return "holds"
    if ci[1] < 0:
        return "does not hold"
    return "cannot tell"


def _decide(v: Mapping, p: float) -> str:
    req = v.get("requires")
    return decide(v["ci"], p, v["alpha"], req["ci"] if req else None, v.get("n_units"))


_P_FLOOR = 0.001
"""p-values below this print as ``"p < 0.001"``."""


def format_p(p: float) -> str:
    """The one way a p prints: ``"p < 0.001"`` below :data:`_P_FLOOR`, else ``"p = 0.012"`` (two significant
    digits).

    >>> format_p(0.0123), format_p(1 / 1001)
    ('p = 0.012', 'p < 0.001')
    """
    p = float(p)
    return f"p < {_P_FLOOR:g}" if p < _P_FLOOR else f"p = {p:.2g}"


def _reason(v: Mapping) -> str:
    """Why the verdict came out as it did, naming the test, its statistic, interval and (Holm) p."""
    lo, hi = v["ci"]
    if not (np.isfinite(lo) and np.isfinite(v["statistic"])):
        return (f"{v['test']}: {v['statistic_text']} cannot be estimated (constant or identical scores, or too "
                f"few units: no finite statistic in any resample)")
    side = "above 0" if lo > 0 else "below 0" if hi < 0 else "includes 0"
    text = f"{v['test']}: {v['statistic_text']} = {v['statistic']:+.3f}, interval [{lo:+.3f}, {hi:+.3f}] {side}"
    if v["verdict"] == "exploratory":
        why = v.get("exploratory_because") or f"it resamples {v['n_units']} units, fewer than {MIN_UNITS}"
        return (text + f"; one-sided {format_p(v['p'])} (unadjusted); exploratory: {why}, so it is shown but never "
                "holds and is not in the Holm family")
    holm_p = v.get("p_holm")
    if holm_p is None or not np.isfinite(holm_p):
        ptxt = f"one-sided {format_p(v['p'])} (no Holm adjustment yet)"
    else:
        ptxt = f"one-sided {format_p(v['p'])}, Holm over the chapter's {v['family_size']} verdicts {format_p(holm_p)}"
    text = f"{text}; {ptxt}"
    req = v.get("requires")
    if req and not req["ci"][0] > 0 and lo > 0:
        return (text + f"; but {req['text']} has the interval [{req['ci'][0]:+.3f}, {req['ci'][1]:+.3f}], not above "
                "0: without that edge the claim cannot hold")
    if v["verdict"] == "holds":
        return text + f" < {v['alpha']:g}" + (f"; and {req['text']} is above 0" if req else "")
    if v["verdict"] == "does not hold":
        return text + " (the interval below 0 decides)"
    if lo > 0:
        return text + f" is not below {v['alpha']:g}"
    return text + " (the interval includes 0)"


def make_verdict(test: str, statistic_text: str, statistic: float, ci: Sequence[float], p: float, alpha: float,
                 rule: str, **extra) -> dict:
    """A verdict dict (JSON-ready): ``verdict, test, statistic_text, statistic, ci, p, alpha, rule, reason`` and
    ``extra`` (e.g. ``n_resamples``; ``n_units``, the number of resampled units, for the cluster floor;
    ``requires={"text": ..., "ci": [lo, hi]}``, a condition that must hold too), decided by :func:`decide` on the
    unadjusted p until :func:`holm_verdicts` adjusts it over the chapter."""
    if test not in TESTS:
        raise ValueError(f"unknown test {test!r}; tests: {TESTS}")
    if "requires" in extra and extra["requires"] is not None:
        extra["requires"] = {"text": str(extra["requires"]["text"]),
                             "ci": [float(extra["requires"]["ci"][0]), float(extra["requires"]["ci"][1])]}
    v = {"test": test, "statistic_text": statistic_text, "statistic": float(statistic),
         "ci": [float(ci[0]), float(ci[1])], "p": float(p), "alpha": float(alpha), "rule": rule, **extra}
    if v.get("n_units") is not None and v["n_units"] < MIN_UNITS:
        v["rule"] += f"; a verdict resampling fewer than {MIN_UNITS} units is exploratory"
    if v.get("requires"):
        v["rule"] += f"; it also needs {v['requires']['text']} above 0"
    v["verdict"] = _decide(v, v["p"])
    v["reason"] = _reason(v)
    return v


def _rule(what: str, b_or_unit, n: int, alpha: float, p_kind: str) -> str:
    unit = b_or_unit if isinstance(b_or_unit, str) else unit_text(b_or_unit)
    return (f"holds iff {what} has a {1 - alpha:.0%} percentile interval (paired bootstrap resampling {unit}, "
            f"{n} resamples) above 0 and a one-sided p ({p_kind}) below {alpha:g} after Holm over every verdict of "
            "the chapter; does not hold iff the interval is below 0; otherwise cannot tell")


def _r_text(b: TableBootstrap, m: str) -> str:
    """The statistic's name: ``pearson r(m)``, ``partial r(m | ...)``, or for a tau table ``wmt12 tau(m)`` /
    ``tau(m, metric ties excluded)``."""
    if b.beyond_length:
        return f"partial r({m} | {given_text(b.given)})"
    if "tau" in b.method:
        name, _, rest = b.method.partition(", ")
        return f"{name}({m}{', ' + rest if rest else ''})"
    return f"{b.method} r({m})"


def verdict_from_samples(test: str, statistic_text: str, estimate: float, samples: np.ndarray, alpha: float,
                         unit: str, **extra) -> dict:
    """Verdict on ``statistic > 0`` from its bootstrap resamples (``samples``; p = (k + 1) / (B + 1), k of the B
    resamples <= 0), e.g. a difference of differences across two human scores. ``extra``: see
    :func:`make_verdict` (``n_units`` for the cluster floor, ``requires``)."""
    d = np.asarray(samples, dtype=float)
    ok = np.isfinite(d)
    p = monte_carlo_p(d)
    return make_verdict(test, statistic_text, estimate, _ci(d[ok], alpha), p, alpha,
                        _rule(statistic_text, unit, int(ok.sum()), alpha, "(k + 1) / (B + 1), k resamples <= 0"),
                        n_resamples=int(ok.sum()), **extra)


def verdict_beats(table_or_results, metric: str | tuple, baseline: str | tuple, *, alpha: float | None = None,
                  human: str | None = None, requires: tuple | None = None) -> dict:
    """Verdict on "``metric`` beats ``baseline``" (test ``beats``), or "... beats ... beyond length" (test ``beats
    beyond length``) when the table holds partial correlations given the length covariates
    (``correlation_table(given=length_covariates(...))``): the statistic is r(metric) - r(baseline) (partial r's
    beyond length) on the table's paired resamples, p the share of resamples with a difference <= 0, decided by
    :func:`decide` (Holm over the chapter by :func:`holm_verdicts`). Nothing but this difference decides it: the
    placebo and the length model are verdicts of their own. ``requires=(row, text)``: the claim also needs
    ``metric``'s edge over another ``row`` of the table, r(metric) - r(row) (its interval above 0 on the same
    resamples; ``text`` names it), e.g. "hybrids help" needs the hybrids' edge over random splices."""
    b = _boot_of(table_or_results, human)
    a = alpha if alpha is not None else b.alpha
    m, base = metric_name(metric), metric_name(baseline)
    i, j = b.index(m), b.index(base)
    d = b.samples[:, i] - b.samples[:, j]
    text = f"{_r_text(b, m)} - {_r_text(b, base)}"
    extra = {}
    if requires is not None:
        edge = b.samples[:, i] - b.column(requires[0])
        extra["requires"] = {"text": requires[1], "ci": _ci(edge[np.isfinite(edge)], a)}
    return verdict_from_samples("beats beyond length" if b.beyond_length else "beats", text,
                                b.estimates[i] - b.estimates[j], d, a, unit_text(b), n_units=b.n_clusters, **extra)


def verdict_correlates(table_or_results, metric: str | tuple, *, alpha: float | None = None,
                       human: str | None = None) -> dict:
    """Verdict on "``metric`` correlates with the human scores" (test ``correlates``; ``correlates beyond
    length`` on a table of partial correlations given the length covariates): the statistic is r itself, p the
    share of resamples with r <= 0, decided by :func:`decide`. Whether it beats chance columns is the separate
    verdict :func:`verdict_beats_placebo`."""
    b = _boot_of(table_or_results, human)
    a = alpha if alpha is not None else b.alpha
    m = metric_name(metric)
    i = b.index(m)
    return verdict_from_samples("correlates beyond length" if b.beyond_length else "correlates", _r_text(b, m),
                                b.estimates[i], b.samples[:, i], a, unit_text(b), n_units=b.n_clusters)


def verdict_beats_placebo(table_or_results, metric: str | tuple, *, alpha: float | None = None,
                          human: str | None = None, quantile: float = 0.95, null_what: str | None = None) -> dict:
    """Verdict on "``metric`` beats the placebo" (test ``beats the placebo``, ``... beyond length`` on a partial
    table) or, for a table with ``null="permutation"`` (system level), "``metric`` beats permuted human scores"
    (test ``beats permuted human scores``). Statistic: r - q, q the ``quantile`` (95th percentile) of the table's
    null distribution (N placebo columns' r, or N permutations of the human scores); its interval is r's
    bootstrap interval minus q; p = (k + 1) / (N + 1), k of the N null values >= r (:func:`null_p`).
    ``null_what`` names the null's members in the reason (default ``"placebo columns"``; chapter 07: ``"placebo
    combinations"``, each a combination with one random column)."""
    b = _boot_of(table_or_results, human)
    a = alpha if alpha is not None else b.alpha
    m = metric_name(metric)
    i = b.index(m)
    null = b.null_of(m)
    q = float(np.nanquantile(null, quantile)) if np.isfinite(null).any() else float("nan")  # constant: no null
    perm = b.null_kind == "permutation"
    test = "beats permuted human scores" if perm else \
        ("beats the placebo beyond length" if b.beyond_length else "beats the placebo")
    what = f"{len(null)} permutations of the human scores" if perm else f"{len(null)} {null_what or 'placebo columns'}"
    stat = _r_text(b, m)
    text = f"{stat} - {quantile:.0%} percentile of {what}"
    s = b.samples[:, i] - q
    ok = np.isfinite(s)
    rule = (f"holds iff {text} has a {1 - a:.0%} bootstrap interval (resampling {unit_text(b)}, {int(ok.sum())} "
            f"resamples, the percentile fixed) above 0 and the Monte-Carlo p ((k + 1) / (N + 1), k of the {what} "
            f"with a value >= {stat}) is below {a:g} after Holm over every verdict of the chapter; does not hold iff the interval "
            "is below 0; otherwise cannot tell")
    return make_verdict(test, text, b.estimates[i] - q, _ci(s[ok], a), null_p(b.estimates[i], null), a, rule,
                        n_resamples=int(ok.sum()), n_null=int(np.isfinite(null).sum()), null_quantile=q,
                        n_units=b.n_clusters)


def verdict_contrast(table_a, table_b, metric: str | tuple, baseline: str | tuple, *, human_a: str | None = None,
                     human_b: str | None = None, label_a: str | None = "Fluency", label_b: str | None = "Accuracy",
                     alpha: float | None = None, rows_b: tuple | None = None, text: str | None = None) -> dict:
    """Verdict (test ``difference``) on "``metric``'s edge over ``baseline`` is larger on ``label_a`` than on
    ``label_b``": the difference of differences [r(metric, a) - r(baseline, a)] - [r(metric, b) - r(baseline, b)]
    on paired resamples, i.e. the metric's own a-vs-b contrast against the baseline's contrast (so a contrast every
    metric shows, such as tracking Accuracy better than Fluency, cancels out). The kit's one difference-of-differences
    verdict: ``rows_b`` (``(metric, baseline)`` rows of ``table_b``, default those of ``table_a``) compares other
    rows on the b side, e.g. the same table at depth 1 for the depth stability claim [r(F-D) - r(F-1)] - [r(BLEU-D)
    - r(BLEU-1)] (``label_a``/``label_b`` None: no "on ..." in the statistic's text); ``text``: the statistic's
    text when the claim writes the same quantity in another order.

    The two tables must come from the same rows, resampling units, ``seed`` and ``n_resamples``
    (:func:`syneval_nb.stats.correlation_table` draws the same resamples then; checked by the number of units and
    resamples). Decided by :func:`decide` (Holm over the chapter by :func:`holm_verdicts`); a
    contrast of edges (``rows_b`` None) holds only where ``metric`` has its own edge over ``baseline`` on
    ``label_a`` (that difference's interval above 0, on the same resamples): a contrast without an edge is at most
    "cannot tell"."""
    ba, bb = _boot_of(table_a, human_a), _boot_of(table_b, human_b)
    if ba.samples.shape != bb.samples.shape or ba.n_clusters != bb.n_clusters or ba.unit != bb.unit:
        raise ValueError("the two tables were not resampled alike (rows, units or resamples differ)")
    a = alpha if alpha is not None else ba.alpha
    m, base = metric_name(metric), metric_name(baseline)
    m_b, base_b = (m, base) if rows_b is None else (metric_name(rows_b[0]), metric_name(rows_b[1]))
    d = (ba.column(m) - ba.column(base)) - (bb.column(m_b) - bb.column(base_b))
    stat = (ba.estimate(m) - ba.estimate(base)) - (bb.estimate(m_b) - bb.estimate(base_b))
    on_a, on_b = (f" on {label_a}" if label_a else ""), (f" on {label_b}" if label_b else "")
    if text is None:
        text = f"[r({m}) - r({base})]{on_a} - [r({m_b}) - r({base_b})]{on_b}"
    requires = None
    if rows_b is None:  # "A's edge over B is larger on a": A needs its own edge over B on a
        edge = ba.column(m) - ba.column(base)
        ok = np.isfinite(edge)
        lo, hi = percentile_ci(edge[ok], a) if ok.any() else (np.nan, np.nan)
        requires = {"text": f"{m}'s own edge r({m}) - r({base}){on_a}", "ci": [lo, hi]}
    return verdict_from_samples("difference", text, stat, d, a, unit_text(ba), n_units=ba.n_clusters,
                                requires=requires)

def _exploratory(verdict: Mapping, why: str) -> dict:
    """``verdict`` made exploratory (shown with its interval and unadjusted p, never "holds", not in the Holm
    family) because of ``why``."""
    v = dict(verdict)
    v["verdict"] = "exploratory"
    v["exploratory_because"] = why
    v["reason"] = _reason(v)
    return v


def holm_verdicts(verdicts: Mapping[str, Mapping], primary: Sequence[str] | None = None) -> dict:
    """Holm over every verdict of a chapter (one family) but the exploratory ones (below the cluster floor, or
    not among the ``primary`` claims when the chapter declares them; they stay exploratory with ``p_holm`` NaN):
    each verdict's one-sided p is adjusted
    (:func:`syneval_nb.stats.holm` over all verdicts with a finite p), stored as ``p_holm`` with ``family_size``,
    and the verdict is decided again by :func:`decide` on the adjusted p (its reason rewritten). Returns a new
    dict in the same order.

    A verdict made of several tests (``"tests"``: ``{test name: one-sided p}``, e.g. a system claim judged over
    several metrics each way) brings each of its tests into the family instead of one p; it gets
    ``"tests_holm"`` (the adjusted p of each) and ``family_size``, and its own rule decides it again on those
    (its caller's: :func:`decide` needs one interval)."""
    if primary is not None:
        unknown = [c for c in primary if c not in verdicts]
        if unknown:
            raise KeyError(f"primary claims without a verdict: {unknown}")
        n = len(primary)
        verdicts = {c: v if c in primary or v.get("verdict") == "exploratory" else
                    _exploratory(v, f"not one of the chapter's {n} primary claims (Holm runs over those)")
                    for c, v in verdicts.items()}
    keys: list = []
    ps: list[float] = []
    for c, v in verdicts.items():
        if v.get("verdict") == "exploratory":
            continue  # below the cluster floor: not in the family
        if v.get("tests") is not None:
            for t, p in v["tests"].items():
                keys.append((c, t))
                ps.append(float(p))
        else:
            keys.append((c, None))
            ps.append(float(v["p"]))
    arr = np.array(ps, dtype=float)
    adj = dict(zip(keys, holm(arr))) if len(arr) else {}
    m = int(np.isfinite(arr).sum())
    out = {}
    for c, v0 in verdicts.items():
        v = dict(v0)
        v["family_size"] = m
        if v.get("verdict") == "exploratory":
            v["p_holm"] = float("nan")
        elif v.get("tests") is not None:
            v["tests_holm"] = {t: float(adj[(c, t)]) for t in v["tests"]}
        else:
            pa = adj[(c, None)]
            v["p_holm"] = float(pa)
            v["verdict"] = _decide(v, pa if np.isfinite(pa) else 1.0)
            v["reason"] = _reason(v)
        out[c] = v
    return out


def verdict_sentence(claim: str, verdict: Mapping, digits: int = 3) -> str:
    """One sentence stating a verdict with its numbers, e.g. ``'"STM-4 beats BLEU-4": holds (beats: pearson
    r(STM-4) - pearson r(BLEU-4) = +0.050, interval [+0.017, +0.083], p = 0.001, Holm p = 0.03).'`` followed by the
    computed reason and the rule."""
    lo, hi = verdict["ci"]
    f = f"{{:+.{digits}f}}"
    ptxt = format_p(verdict["p"])
    if verdict.get("p_holm") is not None and np.isfinite(verdict["p_holm"]):
        ptxt += f", Holm {format_p(verdict['p_holm'])} (family of {verdict['family_size']})"
    text = (f'"{claim}": {verdict["verdict"]} ({verdict.get("test", "")}: statistic {f.format(verdict["statistic"])}, '
            f'interval [{f.format(lo)}, {f.format(hi)}], {ptxt}).')
    if verdict.get("reason"):
        text += f" Why: {verdict['reason']}."
    return text + f" Rule: {verdict['rule']}."
