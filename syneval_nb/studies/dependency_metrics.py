"""Study code of ``notebooks/04_dependency_metrics.ipynb``: HWCM, DSTM and DTKM (Liu & Gildea 2005) against BLEU.

The paper's worked example (:func:`worked_example`), the shared depth study
(:mod:`syneval_nb.studies.depth_study`) for the dependency families (:func:`run`) and the Table-7-like example
segment picked by a fixed rule (:func:`table7_example`); "does the parser matter?" (issue 26: the same metrics on
spaCy's dependency parses against Collins heads on the Stanford parses, :func:`parser_study`)."""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from syneval_nb import stats
from syneval_nb.metrics import lexical, syntactic
from syneval_nb.metrics import registry as metrics
from syneval_nb.studies import depth_study
from syneval_nb.studies.common import holm_chapter, plot_ci
from syneval_nb.trees import heads
from syneval_nb.trees.ptb import read_ptb


__all__ = ["FAMILIES", "worked_example", "run", "table7_example", "results", "parser_study", "parser_display",
           "plot_parsers", "timing_sentence", "parser_summary", "parser_results"]

FAMILIES = ("HWCM", "DSTM", "DTKM")
_PEN_REF = "(S (NP (PRP I)) (VP (VBP have) (NP (DT a) (JJ red) (NN pen))))"
_PEN_HYP = "(S (NP (PRP I)) (VP (VBP have) (NP (DT a) (JJ blue) (NN pen))))"


def worked_example(lam: float = 1.0) -> dict:
    """Section 2.1: the dependency tree of "I have a red pen", its 2-word chains, and HWCM/DSTM (D = 3) and DTKM of
    "I have a blue pen" against it (by hand: HWCM (0.8 + 0.75 + 0.5)/3, DSTM (0.8 + 0.5 + 0)/3)."""
    ref, hyp = read_ptb(_PEN_REF), read_ptb(_PEN_HYP)
    dep = heads.to_dependencies(ref)
    return {"dep_ref": dep, "two_word": [c for c in heads.headword_chains(dep, 2) if len(c) == 2],
            "hwcm": syntactic.hwcm(hyp, [ref], length=3), "dstm": syntactic.dstm(hyp, [ref], depth=3),
            "dtkm": syntactic.dtkm(hyp, [ref], lam=lam)}


def run(data_dir=None, sample=None, seed: int = 0, max_depth: int = 9, lam: float = 1.0, permute_human=None,
        n_resamples: int = 1000, alpha: float = 0.05, progress: bool = True) -> depth_study.DepthChapter:
    """:func:`syneval_nb.studies.depth_study.run_chapter` for HWCM, DSTM and DTKM; DTKM also at Moschitti's decay
    (``"DTKM λ=0.4"``, a named variant in the tables and the length diagnosis, without verdicts of its own: the
    chapter's verdict family is unchanged)."""
    return depth_study.run_chapter(FAMILIES, data_dir, sample, seed, max_depth, lam, permute_human, n_resamples,
                                   alpha, progress, kernel_verdicts=False)


def rank_gap(a: stats.ArrayLike, b: stats.ArrayLike, eligible: stats.ArrayLike | None = None,
             tiebreak: stats.ArrayLike | None = None) -> tuple[int, float, float]:
    """The item that metric ``a`` ranks highest relative to metric ``b`` (for examples like Liu & Gildea's Table 7:
    a hypothesis HWCM rates high and BLEU low).

    Percentile ranks are taken over all items (``pandas.Series.rank(pct=True)``: ties get their average rank).
    Among the ``eligible`` items (a boolean mask; all items when ``None`` or when none is eligible) the one with
    the largest ``pct_a - pct_b`` is chosen; ties go to the larger ``tiebreak`` value (e.g. the human score), then
    to the smaller index. Returns ``(index, pct_a, pct_b)``.
    """
    x, y = stats.as_vector(a, "a"), stats.as_vector(b, "b")
    if len(x) != len(y) or not len(x):
        raise ValueError(f"a and b need the same, non-zero length, got {len(x)} and {len(y)}")
    ok = np.ones(len(x), dtype=bool)
    if eligible is not None:
        e = np.asarray(eligible, dtype=bool)
        if e.shape != x.shape:
            raise ValueError(f"eligible has {e.size} entries for {len(x)} items")
        if e.any():
            ok = e
    tb = np.zeros(len(x)) if tiebreak is None else stats.as_vector(tiebreak, "tiebreak")
    if tb.shape != x.shape:
        raise ValueError(f"tiebreak has {tb.size} entries for {len(x)} items")
    pa, pb = pd.Series(x).rank(pct=True).to_numpy(), pd.Series(y).rank(pct=True).to_numpy()
    frame = pd.DataFrame({"gap": pa - pb, "tb": tb, "i": np.arange(len(x))})[ok]
    i = int(frame.sort_values(["gap", "tb", "i"], ascending=[False, False, True])["i"].iloc[0])
    return i, float(pa[i]), float(pb[i])


def table7_example(ch: depth_study.DepthChapter, order: int = 4, min_words: int = 10) -> dict:
    """The Table-7-like segment by a fixed rule (:func:`rank_gap`): among segments without any
    MQM Fluency error and with at least ``min_words`` hypothesis words, the largest gap between the HWCM-``order``
    percentile rank and the BLEU-``order`` one, ties broken by the lower MQM penalty. Returns the row, the HWCM
    result (with ``explain()``), BLEU, the percentiles and a display ``table``. (With ``permute_human`` the MQM
    columns are shuffled, so the pick changes: the example is about the metrics, not the humans.)"""
    lit = ch.literal
    f = lit.frame
    n_words = f["target"].str.split().str.len().to_numpy()
    i, pct_h, pct_b = rank_gap(lit.segment[("HWCM", order)], lit.segment[("BLEU", order)],
                               eligible=(f["mqm_fluency"].to_numpy() == 0) & (n_words >= min_words),
                               tiebreak=f["mqm"].to_numpy())
    row = f.iloc[i]
    hw = syntactic.hwcm(read_ptb(row["ptb"]), [read_ptb(row["ptb_reference"])], length=order)
    bleu = float(lexical.BLEU(max_ngram_order=order, smooth="epsilon").sentence_score(
        row["target"], [row["reference"]]).score)
    table = pd.DataFrame({"": ["system", "hypothesis", "reference", f"HWCM (D={order})", f"BLEU-{order}",
                               "HWCM percentile", "BLEU percentile", "MQM", "MQM Fluency"],
                          "value": [row["system"], row["target"], row["reference"], round(hw.score, 3),
                                    round(bleu, 3), round(pct_h, 3), round(pct_b, 3), row["mqm"],
                                    row["mqm_fluency"]]})
    return {"row": row, "hwcm": hw, "bleu": bleu, "hwcm_pct": float(pct_h), "bleu_pct": float(pct_b),
            "table": table}


def results(ch: depth_study.DepthChapter, example: dict, t7: dict) -> dict:
    """The results file: the worked example, :func:`syneval_nb.studies.depth_study.chapter_results`, the
    Table-7-like example, signatures."""
    out = {"worked_example_hwcm": example["hwcm"].score, "worked_example_dstm": example["dstm"].score,
           "worked_example_dtkm": example["dtkm"].score,
           "worked_example_two_word_chains": [" ".join(c) for c in example["two_word"]]}
    out.update(depth_study.chapter_results(ch))
    row = t7["row"]
    out["table7_example"] = {"system": str(row["system"]), "seg_id": int(row["seg_id"]), "hwcm": t7["hwcm"].score,
                             "bleu": t7["bleu"], "hwcm_pct": t7["hwcm_pct"], "bleu_pct": t7["bleu_pct"],
                             "mqm": float(row["mqm"])}
    md = ch.params["max_depth"]
    out["signatures"] = {"hwcm": syntactic.HWCM(md).signature(), "dstm": syntactic.DSTM(md).signature(),
                         "dtkm": syntactic.DTKM(ch.params["lam"]).signature(),
                         **{depth_study.kernel_name("dtkm", x): syntactic.DTKM(x).signature()
                            for x in ch.params["kernel_lams"] if x != ch.params["lam"]},
                         "bleu": lexical.BLEU(max_ngram_order=4, smooth="epsilon").signature()}
    return out


# ------------------------------------------------------------------------------------------------------------------
# Does the parser matter? Collins heads on Stanford PCFG parses against spaCy's dependency parses (issue 26)
# ------------------------------------------------------------------------------------------------------------------

DEEN_LABEL = depth_study.SYSTEM_LABEL


@dataclass
class ParserStudy:
    """The parser comparison of chapter 04 (:func:`parser_study`): ``ted`` (Pearson with MQM z, chrF baseline),
    ``ted_partial`` (beyond length: partial r given the length model), ``system`` (WMT21 de-en DA z, systems resampled),
    ``verdicts`` (Holm-adjusted with the whole chapter), ``pairs`` (family row -> spaCy row), ``timing`` (spaCy
    parse seconds, sentences parsed and read from the cache)."""

    ted: pd.DataFrame
    ted_partial: pd.DataFrame
    system: pd.DataFrame
    verdicts: dict
    pairs: dict
    timing: dict = field(default_factory=dict)


def _family_keys(lam: float) -> list[tuple[str, int | None, str]]:
    """``(family, depth, registry name of the spaCy variant)`` of the comparison: HWCM-4, DSTM-4, DTKM."""
    D = syntactic.PRIMARY_DEPTH
    return [("HWCM", D, f"HWCM@spacy-{D}"), ("DSTM", D, f"DSTM@spacy-{D}"), ("DTKM", None, "DTKM@spacy")]


def _spacy_stats(frame: pd.DataFrame, ref_cols, lam: float = 1.0, cache=True, progress: bool = True
                 ) -> tuple[dict, dict]:
    """HWCM-4, DSTM-4 and DTKM on spaCy's dependency parses of every row of ``frame`` (``target`` against the
    ``ref_cols`` texts): ``({registry name: per-row statistics}, timing)``. The parses are made once for all
    distinct sentences through the persistent cache (:func:`syneval_nb.metrics.prepare`, ``cache`` as
    :func:`syneval_nb.parsers.cache.open_cache` reads it); ``timing`` has the parse seconds and how many
    sentences were parsed / read from the cache."""
    corpus = metrics.Corpus(frame["target"].tolist(), frame[list(ref_cols)].values.tolist(), ref_layout="segments",
                            cache=cache)
    t0 = time.perf_counter()
    metrics.prepare([corpus], ("dep",), cache=cache, progress=progress)
    seconds = time.perf_counter() - t0
    out = {}
    for fam, depth, name in _family_keys(lam):
        m = metrics.get(name, lam=lam) if depth is None else metrics.get(name)
        out[name] = (m, m.segment_stats(corpus))
    n = len(dict.fromkeys([*corpus.hyps, *(r for rs in corpus.refs for r in rs)]))
    return out, {"parse_seconds": seconds, "distinct_sentences": n, "source": corpus.dep_source}


def _system_scores(stats_by_name: dict, systems: pd.Series) -> dict:
    """Each system's corpus score from its summed statistics rows (TKM/DTKM: the mean), as ``corpus_score``."""
    idx = systems.groupby(systems).indices
    return {name: pd.Series({s: m.corpus_from_stats(st[i]).score for s, i in sorted(idx.items())})
            for name, (m, st) in stats_by_name.items()}


def parser_study(ch: depth_study.DepthChapter, cache=True, progress: bool = True) -> ParserStudy:
    """Chapter 04's "does the parser matter?": HWCM-4, DSTM-4 and DTKM with Collins heads on the Stanford PCFG
    parses (the paper's trees, ``ch``'s scores) and on spaCy's dependency parses (``HWCM@spacy-4``, ...), on the
    same TED rows (MQM z, source segments resampled, the chapter's seed and resamples) and WMT21 de-en systems
    (DA z, systems resampled, permutation null), chrF the headline baseline and the length model (partial r given
    log hypothesis / reference length) as in the chapter's verdicts.

    Verdicts (test ``beats`` / ``beats beyond length``), per family F: "F on spaCy beats F on Collins heads"
    (segment and system level: does not hold = Collins is better, cannot tell = the parser makes no difference we
    can see), "F on spaCy beats chrF" (segment, beyond length, system). They join the chapter's Holm family: the
    chapter's verdicts are adjusted again over all of them and stored back into ``ch.verdicts`` / ``ch.variants``
    (so the chapter's verdict list and results file hold one family)."""
    p = ch.params
    kw = dict(n_resamples=p["n_resamples"], seed=p["seed"], alpha=p["alpha"])
    lit = ch.literal
    ted_stats, timing = _spacy_stats(lit.frame, ("reference",), p["lam"], cache, progress)
    dd = ch.deen_scores
    deen_stats, t2 = _spacy_stats(dd.frame, ch.deen.references, p["lam"], cache, progress)
    timing = {k: timing[k] + t2[k] for k in ("parse_seconds", "distinct_sentences")} | {"source": timing["source"]}
    seg = {name: m.segment_scores(st) for name, (m, st) in ted_stats.items()}
    rows, pairs = {}, {}
    for fam, depth, name in _family_keys(p["lam"]):
        collins = stats.metric_name(fam, depth)
        rows[collins] = lit.segment[(fam, depth)]
        rows[name] = seg[name]
        pairs[collins] = name
    rows["BLEU-4"] = lit.segment[("BLEU", syntactic.PRIMARY_DEPTH)]
    rows["chrF"] = lit.segment[depth_study.CHRF_KEY]
    if not all(np.isfinite(v).all() for v in rows.values()):
        raise ValueError("a spaCy score is NaN on a row the chapter scored (a segment without a parsed reference)")
    human, units = lit.frame["mqm_z"].to_numpy(dtype=float), lit.frame["seg_id"].to_numpy()
    ted = stats.correlation_table(rows, human, units, baseline="chrF", controls=depth_study.length_rows(lit), **kw)
    partial = stats.correlation_table(rows, human, units, baseline="chrF", controls=depth_study.length_rows(lit),
                                      given=depth_study.length_given(lit), **kw)
    da = ch.deen.da
    c = dd.corpus.loc[da.index]
    sys_spacy = _system_scores(deen_stats, dd.frame["system"])
    srows = {}
    for fam, depth, name in _family_keys(p["lam"]):
        srows[stats.metric_name(fam, depth)] = c[(fam, depth)].to_numpy(dtype=float)
        srows[name] = sys_spacy[name].loc[da.index].to_numpy(dtype=float)
    srows["BLEU-4"] = c[("BLEU", syntactic.PRIMARY_DEPTH)].to_numpy(dtype=float)
    srows["chrF"] = c[depth_study.CHRF_KEY].to_numpy(dtype=float)
    system = stats.system_table(srows, da.to_numpy(dtype=float), baseline="chrF",
                                controls=depth_study.length_rows(dd, c), **kw)
    claims = []
    for collins, name in pairs.items():
        for base in (collins, "chrF"):
            claims += [stats.Claim(depth_study.beats_claim(name, base), "beats", name, base, on="ted"),
                       stats.Claim(depth_study.beats_claim(name, base, beyond_length=True), "beats", name, base,
                                   on="ted beyond length")]
        claims += [stats.Claim(f"{name} beats {base} at system level ({DEEN_LABEL})", "beats", name, base, on="system")
                   for base in (collins, "chrF")]
    v = stats.decide_claims(claims, {"ted": ted, "ted beyond length": partial, "system": system}, holm=False)
    own = [c for c in v if c in ch.verdicts]
    if own:
        raise ValueError(f"the parser verdicts are already in the chapter: {own[:3]}")
    merged, ch.variants = holm_chapter({**ch.verdicts, **v}, ch.variants,
                                       primary=depth_study.primary_claims(ch.families))
    ch.verdicts = merged
    return ParserStudy(ted, partial, system, {c: merged[c] for c in v}, pairs, timing)


def parser_display(ps: ParserStudy) -> pd.DataFrame:
    """Side by side: for each family, r [interval] with Collins heads and with spaCy, on TED MQM z (Pearson and
    beyond length) and at system level on WMT21 de-en DA z, and the difference spaCy - Collins with its interval
    (the paired resamples of the verdicts)."""
    out = []
    for collins, name in ps.pairs.items():
        row = {"family": collins}
        for label, t in (("MQM z", ps.ted), ("MQM z beyond length", ps.ted_partial), ("DA z (system)", ps.system)):
            b = t.attrs["bootstrap"]
            for parser, m in (("Collins", collins), ("spaCy", name)):
                r = stats.table_row(t, m)
                row[(label, parser)] = f"{float(r['r']):.3f} [{float(r['low']):.3f}, {float(r['high']):.3f}]"
            d = b.column(name) - b.column(collins)
            lo, hi = np.quantile(d, [0.025, 0.975])
            row[(label, "spaCy - Collins")] = f"{b.estimate(name) - b.estimate(collins):+.3f} [{lo:+.3f}, {hi:+.3f}]"
        out.append(row)
    df = pd.DataFrame(out).set_index("family")
    df.columns = pd.MultiIndex.from_tuples(df.columns)
    return df


def plot_parsers(ps: ParserStudy):
    """Pearson r with its interval per family and parser: TED MQM z (segments) and WMT21 de-en DA z (systems);
    chrF as a dashed line."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    recs = []
    for label, t in (("TED MQM z (segments)", ps.ted), (f"{DEEN_LABEL} (systems)", ps.system)):
        for collins, name in ps.pairs.items():
            for parser, m in (("Collins", collins), ("spaCy", name)):
                r = stats.table_row(t, m)
                recs.append({"panel": label, "family": collins, "parser": parser, "r": float(r["r"]),
                             "low": float(r["low"]), "high": float(r["high"])})
    df = pd.DataFrame(recs)
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
    for ax, (label, t) in zip(axes, (("TED MQM z (segments)", ps.ted), (f"{DEEN_LABEL} (systems)", ps.system))):
        g = df[df["panel"] == label]
        sns.pointplot(data=g, x="family", y="r", hue="parser", dodge=0.3, linestyle="none", ax=ax, errorbar=None)
        for k, (parser, sub) in enumerate(g.groupby("parser", sort=False)):
            x = np.arange(len(sub)) + (-0.15 if k == 0 else 0.15)
            plot_ci(ax, sub["r"], x, sub["low"], sub["high"], vertical=True, fmt="none", ecolor="grey", lw=1)
        chrf_r = float(stats.table_row(t, "chrF")["r"])
        ax.axhline(chrf_r, color="grey", ls="--", lw=1)
        ax.text(0.01, chrf_r, f"chrF {chrf_r:.3f}", fontsize=8, color="grey", va="bottom",
                transform=ax.get_yaxis_transform())
        ax.set(title=label, xlabel="", ylabel="Pearson r")
    fig.tight_layout()
    return fig


def timing_sentence(ps: ParserStudy) -> str:
    """The computed sentence on the spaCy parses' cost in this run."""
    t = ps.timing
    return (f"spaCy parses of {t['distinct_sentences']} distinct sentences (TED and de-en, hypotheses and "
            f"references) took {t['parse_seconds']:.1f} s in this run, cache included [{t['source']}].")


def parser_results(ps: ParserStudy) -> dict:
    """The results-file part of the parser comparison: r of each row (TED MQM z Pearson and beyond length, de-en
    system level), the spaCy - Collins differences, the timing (the verdicts are in the chapter's ``verdicts``)."""
    def rs(t):
        return {m: float(r) for m, r in zip(t["metric"], t["r"])}

    diffs = {}
    for label, t in (("ted", ps.ted), ("ted_partial", ps.ted_partial), ("deen_system", ps.system)):
        b = t.attrs["bootstrap"]
        diffs[label] = {c: float(b.estimate(n) - b.estimate(c)) for c, n in ps.pairs.items()}
    return {"parser": {"ted_r": rs(ps.ted), "ted_partial_r": rs(ps.ted_partial), "deen_system_r": rs(ps.system),
                       "spacy_minus_collins": diffs, "pairs": dict(ps.pairs), "claims": list(ps.verdicts),
                       "timing": dict(ps.timing)}}


def parser_summary(ps: ParserStudy) -> str:
    """Markdown computed from the tables and verdicts: per family, r with each parser on TED MQM z and the
    difference, then how many of the parser verdicts hold / do not hold / cannot tell."""
    b = ps.ted.attrs["bootstrap"]
    parts = []
    for collins, name in ps.pairs.items():
        v = ps.verdicts[f"{name} beats {collins} (MQM z, Pearson)"]
        lo, hi = v["ci"]
        parts.append(f"{collins}: r = {b.estimate(collins):.3f} with Collins heads, {b.estimate(name):.3f} with "
                     f"spaCy (difference {v['statistic']:+.3f} [{lo:+.3f}, {hi:+.3f}], {v['verdict']})")
    counts = pd.Series([v["verdict"] for v in ps.verdicts.values()]).value_counts()
    tally = ", ".join(f"{int(counts.get(k, 0))} {k}" for k in ("holds", "does not hold", "cannot tell"))
    return (f"On TED MQM z (Pearson, {b.n_clusters} source segments resampled): " + "; ".join(parts) +
            f". Of the {len(ps.verdicts)} parser verdicts (Holm over the chapter's "
            f"{next(iter(ps.verdicts.values()))['family_size']}): {tally}.")
