"""Study code of notebook 06 (syntactic hybridization of references, Wang et al.): every metric scored with every
reference set (:func:`lexical_scores`, :func:`syntactic_scores`), what a reference set gains over another
(:func:`reference_gain_table`, on :func:`syneval_nb.stats.correlation_table`: paired bootstrap over source
segments), the system level (:func:`system_table`, Williams test: independent systems), the Table 6 comparison in
both framings (:func:`reference_value`) and the verdicts (:func:`verdicts`). The hybridization itself (equivalent
pairs, :func:`syneval_nb.hybrid.hybridize`, the Table 5 statistics of the trees) stays in :mod:`syneval_nb.hybrid`.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd
from tqdm.auto import tqdm
from syneval_nb import stats
from syneval_nb.metrics.syntactic import References
from syneval_nb.stats import pearson, williams_from_scores


def lexical_scores(metrics: Mapping[str, Any], hyps: Sequence[str], ref_sets: Mapping[str, Sequence[Sequence[str]]],
                   progress: bool = True) -> pd.DataFrame:
    """Segment scores of every metric with every reference set: columns ``(metric, reference set)``.

    ``metrics``: name -> a :mod:`syneval_nb.lexical` metric object; ``ref_sets``: name -> ``refs[i]``, the
    references of row ``i`` (as in ``Metric.sentence_scores``)."""
    cols = {}
    todo = [(m, r) for m in metrics for r in ref_sets]
    for m, r in tqdm(todo, desc="lexical scores", disable=not progress):
        cols[(m, r)] = metrics[m].sentence_scores(list(hyps), ref_sets[r])
    out = pd.DataFrame(cols)
    out.columns = pd.MultiIndex.from_tuples(out.columns, names=["metric", "references"])
    return out


def syntactic_scores(df: pd.DataFrame, ref_parse_sets: Mapping[str, Mapping[Any, Sequence[str | None]]],
                     metrics: Sequence[str] = ("stm", "hwcm"), depth: int = 4, hyp_col: str = "ptb",
                     seg_col: str = "seg_id", system_col: str = "system", progress: bool = True) -> pd.DataFrame:
    """Segment scores of syntactic metrics (:mod:`syneval_nb.syntactic`, ``<metric>_<depth>``) of every row of
    ``df`` with every reference set: columns ``(metric, reference set)``, rows aligned with ``df``.

    ``ref_parse_sets``: name -> ``{seg_id: [bracketed parse or tree of each reference]}`` (the trees of
    :attr:`HybridSet.trees` go in as they are; :attr:`HybridSet.ptbs` gives the same as strings).
    ``attrs["corpus"]``: the corpus-level scores (summed statistics), one row per system, same columns."""
    import warnings


    segs = list(dict.fromkeys(df[seg_col]))
    pos = {s: k for k, s in enumerate(segs)}
    cols = {(m, r): np.full(len(df), np.nan) for m in metrics for r in ref_parse_sets}
    corpus: dict[tuple[str, str], dict[Any, float]] = {(m, r): {} for m in metrics for r in ref_parse_sets}
    groups = list(df.reset_index(drop=True).groupby(system_col, sort=True))
    for r, sets in tqdm(list(ref_parse_sets.items()), desc="syntactic scores", disable=not progress):
        refs = References([list(sets[s]) for s in segs], max_depth=depth)
        for system, g in groups:
            hyps: list[str | None] = [None] * len(segs)
            for s, h in zip(g[seg_col], g[hyp_col]):
                hyps[pos[s]] = h if isinstance(h, str) else None  # pandas writes a missing parse as NaN
            with warnings.catch_warnings():  # the per-system "unparsed hypotheses" count: NaN rows show it
                warnings.filterwarnings("ignore", message=r".*unparsed hypotheses")
                sc = refs.score(hyps, metrics)
            rows = np.array([pos[s] for s in g[seg_col]])
            for m in metrics:
                cols[(m, r)][g.index.to_numpy()] = sc[f"{m}_{depth}"].to_numpy()[rows]
                corpus[(m, r)][system] = sc.attrs["corpus"][f"{m}_{depth}"]
    out = pd.DataFrame(cols, index=df.index)
    out.columns = pd.MultiIndex.from_tuples(out.columns, names=["metric", "references"])
    out.attrs["corpus"] = _by_system(corpus)
    return out


def _by_system(scores: Mapping[tuple[str, str], Mapping[Any, float]]) -> pd.DataFrame:
    out = pd.DataFrame({k: pd.Series(v) for k, v in scores.items()})
    out.columns = pd.MultiIndex.from_tuples(out.columns, names=["metric", "references"])
    return out


def reference_gain_table(scores: pd.DataFrame, human: Sequence[float], baseline: str,
                         segments: Sequence | None = None, *, method: str = "pearson",
                         clusters: Sequence | None = None, n_resamples: int = 1000, alpha: float = 0.05,
                         seed: int = 0, holm: bool = True) -> pd.DataFrame:
    """What a reference set gains over ``baseline``: for each metric of ``scores`` (columns ``(metric, reference
    set)``), :func:`syneval_nb.stats.correlation_table` of its reference sets against the human scores, every set
    compared with the ``baseline`` set on the same resamples of source segments (``segments``; ``clusters`` for
    talks; neither: rows).

    Columns: ``metric`` (the metric), ``references`` (the reference set), then the columns of
    :data:`syneval_nb.stats.TABLE_COLUMNS` after ``metric`` (``baseline`` is the baseline set; ``delta`` the gain;
    ``p_better`` the one-sided bootstrap p that the set beats the baseline set; Holm over one metric's sets).
    Rows where any of a metric's sets is NaN are left out of that metric's table (``n`` says how many are used).
    No placebo row: a random "reference set" is not a meaningful control here. ``attrs["bootstrap"]``: each
    metric's :class:`syneval_nb.stats.TableBootstrap` (for the verdicts)."""

    h = np.asarray(human, dtype=float)
    seg = None if segments is None else np.asarray(segments)
    cl = None if clusters is None else np.asarray(clusters)
    tables, boots = [], {}
    for metric in dict.fromkeys(scores.columns.get_level_values(0)):
        block = scores[metric]
        if baseline not in block.columns:
            raise ValueError(f"baseline reference set {baseline!r} not among {list(block.columns)}")
        ok = np.isfinite(block.to_numpy(dtype=float)).all(axis=1) & np.isfinite(h)
        t = stats.correlation_table({str(r): block[r].to_numpy(dtype=float)[ok] for r in block.columns}, h[ok],
                                    None if seg is None else seg[ok], baseline=str(baseline), method=method,
                                    clusters=None if cl is None else cl[ok], placebo_column=False,
                                    n_resamples=n_resamples, seed=seed, alpha=alpha, holm=holm)
        boots[metric] = t.attrs["bootstrap"]
        t = t.rename(columns={"metric": "references"})
        t.insert(0, "metric", metric)
        tables.append(t)
    out = pd.concat(tables, ignore_index=True)
    out.attrs["bootstrap"] = boots
    return out


def system_correlations(scores: pd.DataFrame, human: Mapping[Any, float], baseline: str) -> pd.DataFrame:
    """System level: Pearson r with ``human`` of every ``(metric, reference set)`` column of ``scores`` (one row
    per system; systems without a human score are left out) and, against ``baseline``, the Williams (1959) test
    of r(set) > r(baseline) (:func:`stats.williams_from_scores`, n = number of systems)."""

    systems = [s for s in scores.index if s in human]
    if len(systems) < 4:
        raise ValueError(f"only {len(systems)} systems have a human score; need at least 4")
    hv = np.array([human[s] for s in systems], dtype=float)
    sc = scores.loc[systems]
    rows = []
    for m in dict.fromkeys(sc.columns.get_level_values(0)):
        if (m, baseline) not in sc.columns:
            raise ValueError(f"baseline reference set {baseline!r} not among {list(sc[m].columns)}")
        base = sc[(m, baseline)].to_numpy(dtype=float)
        r_base = pearson(base, hv)
        for r in sc[m].columns:
            x = sc[(m, r)].to_numpy(dtype=float)
            rx = pearson(x, hv)
            t, p = (np.nan, np.nan) if r == baseline else williams_from_scores(hv, x, base)
            rows.append({"metric": m, "references": r, "r": rx, "delta": rx - r_base, "williams_t": t,
                         "p_value": p, "n_systems": len(systems)})
    return pd.DataFrame(rows)


def system_table(metrics: Mapping[str, Any], hyps: Mapping[str, Sequence[str]],
                 ref_sets: Mapping[str, Sequence[Sequence[str]]], human: Mapping[str, float], baseline: str,
                 progress: bool = True) -> pd.DataFrame:
    """:func:`system_correlations` of the lexical metrics' corpus scores (summed statistics,
    ``Metric.corpus_score``) of every system (``hyps[system]`` aligned with ``ref_sets[name]``).
    ``attrs["scores"]`` holds the corpus scores, one row per system, columns ``(metric, reference set)``."""
    systems = [s for s in hyps if s in human]
    sc: dict[tuple[str, str], dict[str, float]] = {}
    for m, r in tqdm([(m, r) for m in metrics for r in ref_sets], desc="corpus scores", disable=not progress):
        sc[(m, r)] = {s: metrics[m].corpus_score(list(hyps[s]), ref_sets[r]).score for s in systems}
    scores = _by_system(sc)
    out = system_correlations(scores, human, baseline)
    out.attrs["scores"] = scores
    return out


# ---------------------------------------------------------------------------------------------------------------
# Table 6 in both framings, and the verdicts
# ---------------------------------------------------------------------------------------------------------------

SINGLE = ("1 manual (ref)", "1 manual (refB)")
"""The single-reference sets of the TED comparison (``ref`` is rated below every MT system, ``refB`` best)."""


def reference_value(scores: pd.DataFrame, metric: str, human: Sequence[float], segments: Sequence, *,
                    single: Sequence[str] = SINGLE, two: str = "2 manual", extended: str = "2 manual + hybrid",
                    best: str = "1 manual (refB)", n_resamples: int = 1000, seed: int = 0,
                    alpha: float = 0.05) -> pd.DataFrame:
    """Table 6 analog with intervals: r of ``metric`` with each reference set (columns ``(metric, set)`` of
    ``scores``) on the same resamples of source segments, plus the row ``"1 manual (average)"`` (the mean of the
    single-reference r's, resample by resample: the paper's framing) and the gains in both framings:
    ``"second reference (vs average)"`` = r(two) - mean r(single), ``"second reference (vs best)"`` = r(two) -
    r(best), ``"hybrids"`` = r(extended) - r(two). ``attrs["bootstrap"]``: a :class:`syneval_nb.stats.TableBootstrap`
    over all these rows, for :func:`syneval_nb.stats.verdict_beats`. Columns ``r, low, high``."""
    block = scores[metric]
    h = np.asarray(human, dtype=float)
    ok = np.isfinite(block.to_numpy(dtype=float)).all(axis=1) & np.isfinite(h)
    t = stats.correlation_table({str(r): block[r].to_numpy(dtype=float)[ok] for r in block.columns}, h[ok],
                                np.asarray(segments)[ok], placebo_column=False, n_resamples=n_resamples,
                                seed=seed, alpha=alpha)
    b = t.attrs["bootstrap"]
    est = {n: b.estimate(n) for n in b.names}
    smp = {n: b.column(n) for n in b.names}
    est["1 manual (average)"] = float(np.mean([est[s] for s in single]))
    smp["1 manual (average)"] = np.mean([smp[s] for s in single], axis=0)
    gains = {"second reference (vs average)": (two, "1 manual (average)"),
             "second reference (vs best)": (two, best), "hybrids": (extended, two)}
    for g, (a, c) in gains.items():
        est[g], smp[g] = est[a] - est[c], smp[a] - smp[c]
    names = tuple(est)
    samples = np.column_stack([smp[n] for n in names])
    lo, hi = stats.percentile_ci(samples, alpha)
    out = pd.DataFrame({"r": [est[n] for n in names], "low": lo, "high": hi}, index=pd.Index(names, name="row"))
    out.attrs["bootstrap"] = stats.TableBootstrap(names, np.array([est[n] for n in names]), samples, {}, {}, alpha,
                                                  b.method, b.unit, b.n_clusters, False)
    return out


def verdicts(gains: pd.DataFrame, value: pd.DataFrame, metric: str = "BLEU", *, baseline: str = "2 manual",
             extended: str = "2 manual + hybrid", what: str = "TED MQM z") -> dict[str, dict]:
    """The chapter's claims with their verdicts (:func:`syneval_nb.stats.verdict_beats`, no control rows: a
    random reference set is not a meaningful control, and every set is scored on the same hypotheses):
    "hybrids help <metric>" for every metric of ``gains`` (a :func:`reference_gain_table`, kept per metric in
    ``gains.attrs["bootstrap"]``), "two human references beat one" in both framings, and "a second human reference
    is worth more than the hybrids" in both framings (``value``, a :func:`reference_value`)."""
    out = {}
    for m, boot in gains.attrs["bootstrap"].items():
        out[f"hybrids help {m} ({extended} beats {baseline}, {what})"] = stats.verdict_beats(
            boot, extended, baseline, controls=())
    out[f"two human references beat one, average of single references ({metric}, {what})"] = stats.verdict_beats(
        value, "2 manual", "1 manual (average)", controls=())
    out[f"two human references beat one, best single reference refB ({metric}, {what})"] = stats.verdict_beats(
        value, "2 manual", "1 manual (refB)", controls=())
    for framing in ("average", "best"):
        out[f"a second human reference is worth more than the hybrids, vs {framing} single reference "
            f"({metric}, {what})"] = stats.verdict_beats(value, f"second reference (vs {framing})", "hybrids",
                                                        controls=())
    return out


def verdict_text(verdicts_: Mapping[str, dict]) -> str:
    """The verdict sentences (:func:`syneval_nb.stats.verdict_sentence`), one per line."""
    return "\n".join(stats.verdict_sentence(c, v) for c, v in verdicts_.items())
