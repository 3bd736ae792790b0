"""The depth-vs-baseline study of Liu & Gildea (2005) that notebooks 03, 04 and 08 repeat, once.

Every TED zh-en segment is scored by BLEU-n (n = 1..D), chrF, the syntactic metrics by depth, the four length-only
controls (-hyp length, -ref length, -|len diff|, len ratio) and the length covariates (:func:`depth_scores`), twice:
with the paper's literal mean over d = 1..D (the default, for BLEU and the syntactic metrics alike) and with
effective order (the named variant, both sides alike).

* **Headline** (fixed before looking at the data): each family at :data:`syneval_nb.metrics.syntactic.PRIMARY_DEPTH` (4)
  and the kernel metrics against **chrF** (the headline baseline) and BLEU-4, on rater-normalized MQM
  (``MQM z``): Pearson, its twin **beyond length** (partial r given the length model
  length, the regression refitted in every resample) and the within-segment Pearson, all on the same clustered
  bootstrap over source segments; the placebo as a distribution (N_NULL random columns, 95th percentile). Talks
  (``doc``) as the resampling unit: a variant (5 talks only).
* **Verdicts**: the chapter's claims are a list of records (:func:`claims`, :class:`syneval_nb.stats.Claim`),
  decided by the one engine :func:`syneval_nb.stats.decide_claims`; each names its test
  (:mod:`syneval_nb.stats.verdicts`); Holm over the primary claims (:func:`primary_claims`), the rest exploratory.
* **Curves**: every depth 1..D against BLEU of the same order, both definitions (marks: Holm within the table).
* **Fluency vs Accuracy**: a diagnostic contrast against chrF's: [r(m) - r(chrF)] on Fluency z minus the same on
  Accuracy z (:func:`syneval_nb.stats.verdict_contrast`).
* **System level**: corpus scores of the WMT21 de-en MT systems against DA z (reference A, see
  :mod:`syneval_nb.studies.common`), resampling systems; the null is a permutation test, not a placebo row.

:func:`run_chapter` computes all of it once (a :class:`DepthChapter`); :mod:`syneval_nb.studies.depth_display`
shows it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np
import pandas as pd
from syneval_nb import stats
from syneval_nb.metrics import chrf, lexical
from syneval_nb.metrics.base import score_rows
from syneval_nb.metrics.syntactic import PRIMARY_DEPTH, by_depth, depth_metrics
from syneval_nb.studies.common import (
    ASPECTS,
    HUMANS,
    MAX_HEADLINE_VERDICTS,
    META_K,
    headline_verdicts,
    load_deen,
    meta_json,
    meta_table,
    load_ted,
    verdicts_json,
)


__all__ = ["BASELINES", "depth_scores", "score", "system_scores", "claims", "run_chapter"]

KERNELS = ("TKM", "DTKM")
_LENGTH_KEY = (stats.LENGTH, None)
"""The -|len diff| control of :func:`depth_scores` (row ``"-|len diff|"``)."""
CHRF_KEY = ("chrF", None)
"""chrF's key in :func:`depth_scores`: the headline baseline (every "beats" is asked against chrF and BLEU-4)."""
BASELINES = ("chrF", "BLEU-4")
"""The baselines of every "beats" verdict, the headline one first."""
SYSTEM_LABEL = "WMT21 de-en DA z, ref A"
"""The human score of the system-level claims (WMT21 de-en, reference A)."""
_MOSCHITTI_LAM = 0.4
"""The tree-kernel decay of Moschitti (2006) (and of chapter 07's DR): the named variant of TKM/DTKM shown beside
the paper's plain count (lambda = 1, the default), as the rows :func:`kernel_name` ``"TKM λ=0.4"``."""
_TINY_SCORE = 1e-4
"""The length diagnosis counts the share of segments a kernel metric scores below this value."""


def kernel_name(family: str, lam: float) -> str:
    """The row name of a kernel metric at a decay other than the chapter's: ``("TKM", 0.4)`` -> ``"TKM λ=0.4"``
    (the paper's lambda = 1 row keeps the plain name ``"TKM"``)."""
    return f"{family} λ={float(lam):g}"


# ---------------------------------------------------------------------------------------------------------------
# scores indexed by max n / depth (Liu & Gildea 2005)
# ---------------------------------------------------------------------------------------------------------------

_DEPTH_METRICS = ("stm", "hwcm", "dstm", "tkm", "dtkm")
"""The syntactic metrics of Liu & Gildea (2005), as :func:`syneval_nb.metrics.syntactic.score_corpus` names them."""


def _syntactic_by_system(hyps: Sequence[str], txt_refs: Sequence[Sequence[str]],
                         ptb_hyps: Sequence[str | None], ptb_refs: Sequence[Sequence[str | None]],
                         systems: Sequence[str], metrics: Sequence[str], max_depth: int,
                         progress: bool = False, lam: float = 1.0, effective_order: bool = False,
                         scheduler=None) -> tuple[dict[str, np.ndarray], dict[str, dict[str, float]]]:
    """The syntactic metrics by depth (:func:`syneval_nb.metrics.syntactic.depth_metrics`), each system scored by
    :func:`syneval_nb.metrics.score_rows` (``scheduler``: one task per system on a Dask cluster, same numbers): each
    column of :func:`syneval_nb.metrics.syntactic.score_corpus` (:func:`~syneval_nb.metrics.syntactic.by_depth`)
    aligned with the input, and each system's corpus scores. The texts count an unparsed hypothesis's tokens."""
    sys_arr = np.asarray(list(systems), dtype=object)
    objs = depth_metrics(metrics, max_depth, lam, effective_order)
    rows = score_rows(objs, hyps, txt_refs, sys_arr, progress=progress, scheduler=scheduler, hyp_ptb=ptb_hyps,
                      ref_ptb=ptb_refs)
    seg: dict[str, np.ndarray] = {}
    corpus: dict[str, dict[str, float]] = {s: {} for s in rows.corpus.index}
    for key, m in objs.items():
        for s in rows.corpus.index:
            cols, totals = by_depth(key, m, rows.stats[key][s])
            for c, v in cols.items():
                seg.setdefault(c, np.full(len(sys_arr), np.nan))[sys_arr == s] = v
            corpus[s].update(totals)
    return seg, corpus


def _metric_key(column: str) -> tuple[str, int | None]:
    """``"stm_3"`` -> ``("STM", 3)``, ``"tkm"`` -> ``("TKM", None)`` (the keys of :func:`depth_scores`)."""
    name, _, depth = column.partition("_")
    return name.upper(), int(depth) if depth else None


def depth_scores(hyps: Sequence[str], txt_refs: Sequence[Sequence[str]], ptb_hyps: Sequence[str | None],
                 ptb_refs: Sequence[Sequence[str | None]], systems: Sequence[str], max_depth: int = 9,
                 syntactic_metrics: Sequence[str] = _DEPTH_METRICS, progress: bool = True, lam: float = 1.0,
                 effective_order: bool = False, scheduler=None, kernel_lams: Sequence[float] = ()
                 ) -> tuple[dict[tuple[str, int | None], np.ndarray], pd.DataFrame]:
    """Every segment scored by BLEU_n (n = 1..``max_depth``, epsilon smoothing as in Liu & Gildea, Sec. 3), the
    syntactic metrics by depth, chrF (the headline baseline), the four length controls (:func:`syneval_nb.stats.
    length_rows`) and the length covariates (:func:`syneval_nb.stats.length_covariates`); each system's corpus
    scores from the same pass.

    ``txt_refs[i]`` / ``ptb_refs[i]``: the references (text / PTB) of segment ``i``; ``systems[i]`` its system.
    Returns ``(segment, corpus)``: ``segment`` maps ``(metric, depth)`` (depth ``None`` for TKM, DTKM, chrF, the
    controls and the covariates) to scores aligned with ``hyps``; ``corpus`` has one row per system
    (sorted) and the same keys as columns: corpus BLEU_n (:func:`syneval_nb.metrics.score_rows`), the syntactic
    corpus scores (:func:`syneval_nb.metrics.syntactic.score_corpus`, one call per system; TKM/DTKM: mean) and the mean
    of each control (:func:`syneval_nb.stats.length_controls` on 13a token counts). ``lam``: the tree-kernel
    decay of TKM/DTKM (1.0, the paper's plain count). ``kernel_lams``: further decays of the kernel metrics among
    ``syntactic_metrics`` (the named variant, e.g. :data:`_MOSCHITTI_LAM`), under the keys
    ``(kernel_name(family, lam), None)``; a decay equal to ``lam`` is skipped. Notebooks 03, 04 and 08 score with it.

    ``effective_order`` applies to both sides alike, so BLEU and the syntactic metrics treat the orders/depths a
    hypothesis does not have in the same way: ``False`` (default, the papers' definitions) averages over every order
    1..n (BLEU: an absent order is a zero precision, hence epsilon; STM/DSTM: a zero fraction; HWCM: epsilon);
    ``True`` (the variant) averages over the orders the hypothesis has (:class:`syneval_nb.metrics.lexical.BLEU` and
    :func:`syneval_nb.metrics.syntactic.score_corpus` ``effective_order``).

    ``scheduler`` (a Dask scheduler address or ``distributed.Client``): the lexical statistics and the syntactic
    scores (one task per system each) run on that cluster, with numbers identical to the local
    run; without it Dask is not imported.

    Corpus BLEU_n uses the same epsilon smoothing as the segments; that only matters when a system has no matching
    n-gram of some order in the whole corpus (plain BLEU would then be 0)."""

    hyps, ptb_hyps = list(hyps), list(ptb_hyps)
    txt_refs, ptb_refs = [list(r) for r in txt_refs], [list(r) for r in ptb_refs]
    sys_arr = np.asarray(list(systems), dtype=object)
    if not len(hyps) == len(txt_refs) == len(ptb_hyps) == len(ptb_refs) == len(sys_arr):
        raise ValueError(f"hyps, txt_refs, ptb_hyps, ptb_refs, systems have {len(hyps)}, {len(txt_refs)}, "
                         f"{len(ptb_hyps)}, {len(ptb_refs)}, {len(sys_arr)} entries")
    bleu = {n: lexical.BLEU(max_ngram_order=n, smooth="epsilon", effective_order=effective_order)
            for n in range(1, max_depth + 1)}
    seg_lex, corpus_lex, lex = score_rows({"BLEU": bleu[max_depth], "chrF": chrf.CHRF()}, hyps, txt_refs, sys_arr,
                                          progress=progress, scheduler=scheduler)
    names = sorted(set(sys_arr))
    segment, corpus = {("BLEU", n): np.full(len(sys_arr), np.nan) for n in bleu}, {s: {} for s in names}
    for n, m in bleu.items():  # BLEU_n's statistics are a prefix of BLEU_max_depth's: the n-grams counted once
        for s in names:
            cut = bleu[max_depth].stats_up_to(lex["BLEU"][s], n)
            segment[("BLEU", n)][sys_arr == s] = m.segment_scores(cut)
            corpus[s][("BLEU", n)] = float(m.corpus_from_stats(cut).score)
    segment[CHRF_KEY] = seg_lex["chrF"].to_numpy()
    for s in names:
        corpus[s][CHRF_KEY] = float(corpus_lex.loc[s, "chrF"])
    syn, syn_corpus = _syntactic_by_system(hyps, txt_refs, ptb_hyps, ptb_refs, sys_arr, syntactic_metrics, max_depth,
                                           progress, lam, effective_order, scheduler)
    segment.update({_metric_key(c): v for c, v in syn.items()})
    for s in names:
        corpus[s].update({_metric_key(c): v for c, v in syn_corpus[s].items()})
    kernels = tuple(m for m in syntactic_metrics if m.upper() in KERNELS)
    for extra in (x for x in dict.fromkeys(float(x) for x in kernel_lams) if x != float(lam)):
        if not kernels:
            break
        ksyn, kcorpus = _syntactic_by_system(hyps, txt_refs, ptb_hyps, ptb_refs, sys_arr, kernels, max_depth,
                                             progress, extra, effective_order, scheduler)
        segment.update({(kernel_name(_metric_key(c)[0], extra), None): v for c, v in ksyn.items()})
        for s in names:
            corpus[s].update({(kernel_name(_metric_key(c)[0], extra), None): v for c, v in kcorpus[s].items()})
    hyp_lens = [len(lexical.tokenize(h)) for h in hyps]
    ref_lens = [[len(lexical.tokenize(r)) for r in rs] for rs in txt_refs]
    lens = {**stats.length_rows(hyp_lens, ref_lens), **stats.length_covariates(hyp_lens, ref_lens, model="linear")}
    for name, values in lens.items():
        segment[(name, None)] = values
        for s in names:
            corpus[s][(name, None)] = float(values[sys_arr == s].mean())
    return segment, pd.DataFrame.from_dict(corpus, orient="index")


@dataclass
class DepthScores:
    """Scores of one definition: ``segment`` ``{(metric, depth): values}`` aligned with ``frame`` (rows with an
    unparsed sentence dropped), ``corpus`` (one row per system), ``effective_order``, ``dropped`` rows."""

    frame: pd.DataFrame
    segment: dict
    corpus: pd.DataFrame
    effective_order: bool
    families: tuple
    max_depth: int
    dropped: int = 0
    kernel_lams: tuple = ()

    @property
    def kernel_variants(self) -> list[tuple[str, None]]:
        """The keys of the kernel rows at the further decays (``("TKM λ=0.4", None)``), in scoring order."""
        return [k for k in self.segment if k[1] is None and k[0].split(" λ=")[0] in KERNELS and " λ=" in k[0]]

    @property
    def label(self) -> str:
        return "effective order" if self.effective_order else "literal mean"


def score(frame: pd.DataFrame, families: Sequence[str], max_depth: int = 9, lam: float = 1.0,
          effective_order: bool = False, ref_cols: Sequence[str] = ("reference",), progress: bool = True,
          scheduler=None, kernel_lams: Sequence[float] = ()) -> DepthScores:
    """Score ``frame`` (columns ``target, ptb, system`` and, for each reference column ``c`` of ``ref_cols``,
    ``c`` and ``ptb_c``) with :func:`depth_scores` for the metric ``families`` (e.g.
    ``("STM", "TKM")``); rows where a metric is NaN (an unparsed sentence) are dropped and counted.
    ``scheduler``: a Dask scheduler address or ``distributed.Client`` to score the systems on (same numbers).
    ``kernel_lams``: further decays of TKM/DTKM (:func:`depth_scores`), rows ``"TKM λ=0.4"``."""

    fams = tuple(f.upper() for f in families)
    seg, corpus = depth_scores(frame["target"], frame[list(ref_cols)].values.tolist(), frame["ptb"],
                               frame[[f"ptb_{c}" for c in ref_cols]].values.tolist(), frame["system"], max_depth,
                               syntactic_metrics=tuple(f.lower() for f in fams), progress=progress, lam=lam,
                               effective_order=effective_order, scheduler=scheduler, kernel_lams=kernel_lams)
    ok = np.isfinite(np.vstack(list(seg.values()))).all(axis=0)
    kept = frame[ok].reset_index(drop=True)
    return DepthScores(kept, {k: v[ok] for k, v in seg.items()}, corpus, effective_order, fams, max_depth,
                       int((~ok).sum()), tuple(kernel_lams))


def _metric_rows(ds: DepthScores, depths: Sequence[int] | None = None, kernel_variants: bool = True) -> dict:
    """``{(metric, depth): values}``: BLEU and the depth families at ``depths`` (default 1..max_depth), chrF and
    the kernel metrics of ``ds.families`` (no depth), each followed by its further decays (``"TKM λ=0.4"``) unless
    ``kernel_variants=False``."""
    depths = range(1, ds.max_depth + 1) if depths is None else depths
    out = {("BLEU", d): ds.segment[("BLEU", d)] for d in depths}
    out[CHRF_KEY] = ds.segment[CHRF_KEY]
    for f in ds.families:
        if f in KERNELS:
            out[(f, None)] = ds.segment[(f, None)]
            if kernel_variants:
                out.update({k: ds.segment[k] for k in ds.kernel_variants if k[0].split(" λ=")[0] == f})
        else:
            out.update({(f, d): ds.segment[(f, d)] for d in depths})
    return out


def length_rows(ds: DepthScores, corpus=None) -> dict:
    """The four length-only control rows (segment scores, or per system from ``corpus``)."""
    if corpus is not None:
        return {nm: corpus[(nm, None)].to_numpy(dtype=float) for nm in stats.LENGTH_ROWS.values()}
    return {nm: ds.segment[(nm, None)] for nm in stats.LENGTH_ROWS.values()}


def length_given(ds: DepthScores) -> dict:
    """The covariates of "beyond length" per row: the length model (:func:`syneval_nb.stats.length_covariates`)
    of the hypothesis and mean reference lengths."""
    return stats.length_covariates(-ds.segment[("-hyp length", None)], -ds.segment[("-ref length", None)])


def _humans(ds: DepthScores, humans: Mapping[str, str]) -> dict:
    return {name: ds.frame[col].to_numpy(dtype=float) for name, col in humans.items()}


def curve_tables(ds: DepthScores, humans: Mapping[str, str] = HUMANS, n_resamples: int = 1000, seed: int = 0,
                 alpha: float = 0.05, beyond_length: bool = False) -> pd.DataFrame:
    """Every depth against BLEU of the same order (kernels against BLEU-4), Pearson, Holm over all comparisons
    of each table; stacked per human score (:func:`syneval_nb.stats.correlation_tables`), length control and
    placebo rows included; ``definition`` column says which definition. ``beyond_length``: the partial r given
    the length model (:func:`length_given`), on the same resamples, without the length rows."""
    rows = _metric_rows(ds)
    t = stats.correlation_tables(rows, _humans(ds, humans), ds.frame["seg_id"].to_numpy(),
                                 baseline=stats.depth_baselines(list(rows), "BLEU", PRIMARY_DEPTH),
                                 controls=None if beyond_length else length_rows(ds), n_resamples=n_resamples,
                                 seed=seed, alpha=alpha, given=length_given(ds) if beyond_length else None)
    t.insert(1, "definition", ds.label)
    t.insert(3, "family", [m.split("-")[0] if m[-1].isdigit() else m for m in t["metric"]])
    t.insert(4, "depth", [int(m.rsplit("-", 1)[1]) if m[-1].isdigit() and "-" in m else np.nan for m in t["metric"]])
    return t


def headline_table(ds: DepthScores, human: str = "mqm_z", method: str = "pearson", clusters: str | None = None,
                   n_resamples: int = 1000, seed: int = 0, alpha: float = 0.05, beyond_length: bool = False):
    """The pre-registered comparison: each family at PRIMARY_DEPTH, each kernel and BLEU-4 against chrF (the
    headline baseline; the verdicts also compare with BLEU-4 on the same resamples), with the four length
    controls and the placebo distribution, on one human column; ``clusters="doc"`` resamples talks instead of
    source segments (the variant); ``beyond_length``: partial r given the length model
    (:func:`syneval_nb.stats.length_covariates`), on the same resamples. The table's marks use Holm within the
    table; the verdicts use Holm over the whole chapter."""
    rows = _metric_rows(ds, [PRIMARY_DEPTH])
    return stats.correlation_table(rows, ds.frame[human].to_numpy(dtype=float), ds.frame["seg_id"].to_numpy(),
                                   baseline=BASELINES[0], method=method,
                                   clusters=None if clusters is None else ds.frame[clusters].to_numpy(),
                                   controls=length_rows(ds), n_resamples=n_resamples, seed=seed, alpha=alpha,
                                   given=length_given(ds) if beyond_length else None)


def _headline_tables(ds: DepthScores, n_resamples: int = 1000, seed: int = 0, alpha: float = 0.05,
                     talks: bool = True) -> dict:
    """The headline tables the verdicts read: ``{(human name, method[, "talks"]): table}`` for raw MQM and MQM z
    (Pearson, beyond length = ``"partial"`` and within-segment), the Fluency z / Accuracy z parts (Pearson and
    beyond length: the Fluency contrast with length removed, :func:`_length_diagnosis`), and MQM z with talks
    resampled."""
    out = {}
    for name, col in {**HUMANS, **ASPECTS}.items():
        methods = ("pearson", "partial", "within") if name in HUMANS else ("pearson", "partial")
        for m in methods:
            out[(name, m)] = headline_table(ds, col, "pearson" if m == "partial" else m, None, n_resamples, seed,
                                            alpha, beyond_length=m == "partial")
    if talks:
        out[("MQM z", "pearson", "talks")] = headline_table(ds, "mqm_z", "pearson", "doc", n_resamples, seed, alpha)
    return out


def system_scores(ds: DepthScores, human: pd.Series, depths: Sequence[int] | None = None) -> dict:
    """The arguments of the system-level table (:func:`syneval_nb.stats.system_table`: the systems resampled, as
    independent units, Williams' test, ``n_null`` permutations of the human scores as the null: at system level a
    single random column is meaningless, one draw over 19 systems can have r = +0.26) for the systems of ``human``
    (indexed by system, in its order): ``scores`` each system's corpus score (``ds.corpus``) of BLEU and the depth
    families at ``depths`` (default all), chrF, the kernels and their variants; ``controls`` the four length
    controls (mean per system); ``baseline`` BLEU at the same depth (:func:`syneval_nb.stats.depth_baselines`).
    Use: ``stats.system_table(**system_scores(ds, human), n_resamples=...)``."""
    c = ds.corpus.loc[human.index]
    depths = range(1, ds.max_depth + 1) if depths is None else depths
    keys = [("BLEU", d) for d in depths] + [CHRF_KEY] + \
           [(f, d) for f in ds.families if f not in KERNELS for d in depths] + \
           [(f, None) for f in ds.families if f in KERNELS] + ds.kernel_variants
    return {"scores": {k: c[k].to_numpy(dtype=float) for k in keys}, "human": human.to_numpy(dtype=float),
            "baseline": stats.depth_baselines(keys, "BLEU", PRIMARY_DEPTH), "controls": length_rows(ds, c)}


def within_system_table(ds: DepthScores, human: str = "mqm_z", n_resamples: int = 1000, seed: int = 0,
                        alpha: float = 0.05) -> pd.DataFrame:
    """Liu & Gildea correlate within each system: per MT system, Pearson r of each headline metric (PRIMARY_DEPTH,
    kernels, BLEU-4, length controls, placebo) with ``human`` over that system's segments, with the difference from chrF marked
    (Holm over that system's comparisons; one row per segment, so segments are the resampled units).
    Columns: ``system, metric, r, low, high, delta, mark``."""
    out = []
    for s, idx in ds.frame.groupby("system").indices.items():
        sub = DepthScores(ds.frame.iloc[idx].reset_index(drop=True), {k: v[idx] for k, v in ds.segment.items()},
                          ds.corpus, ds.effective_order, ds.families, ds.max_depth)
        t = headline_table(sub, human, "pearson", None, n_resamples, seed, alpha)
        out.append(t.assign(system=s)[["system", "metric", "r", "low", "high", "delta", "mark", "n"]])
    return pd.concat(out, ignore_index=True)


def claims(families: Sequence[str], kernel_variants: Sequence[str] = (), length_contrast: bool = False,
           talks: bool = True) -> list[stats.Claim]:
    """The claims of a depth chapter, on the tables ``{**ch.heads, "system": ch.system_head}`` (:func:`run_chapter`)
    (:func:`syneval_nb.stats.decide_claims`). For each family at PRIMARY_DEPTH, each kernel and each of
    ``kernel_variants`` (``"TKM λ=0.4"``): "beats" each baseline of :data:`BASELINES` on MQM z (Pearson, beyond
    length, within source segments), "correlates" (raw, beyond length), "beats the placebo", the contrast "its edge
    over chrF is larger on Fluency than on Accuracy" (against chrF's own contrast; for the kernels also beyond
    length when ``length_contrast``), at system level "beats" and "beats permuted human scores"; variants
    (``talks``): "beats" with talks resampled. Primary: :func:`primary_claims`; the rest are exploratory."""
    primary = set(primary_claims(families))
    out: list[stats.Claim] = []

    def add(text, test, m, base=None, on=("MQM z", "pearson"), **kw):
        out.append(stats.Claim(text, test, m, base, on=on, primary=text in primary, **kw))

    fz, az = ("Fluency z", "pearson"), ("Accuracy z", "pearson")
    for m in [stats.metric_name(f, None if f in KERNELS else PRIMARY_DEPTH) for f in families] + list(kernel_variants):
        for base in BASELINES:
            add(beats_claim(m, base), "beats", m, base)
            add(beats_claim(m, base, beyond_length=True), "beats", m, base, ("MQM z", "partial"))
            add(f"{m} beats {base} within source segments (MQM z)", "beats", m, base, ("MQM z", "within"))
        add(f"{m} correlates with MQM z", "correlates", m)
        add(f"{m} correlates with MQM z beyond length", "correlates", m, on=("MQM z", "partial"))
        add(f"{m} beats the placebo (MQM z)", "beats the placebo", m)
        add(f"{m}'s edge over chrF is larger on Fluency than on Accuracy (z)", "edge", m, "chrF", fz, versus=az)
        if length_contrast and m.split(" λ=")[0] in KERNELS:
            add(f"{m}'s edge over chrF is larger on Fluency than on Accuracy beyond length (z, partial r given the "
                "length model)", "edge", m, "chrF", ("Fluency z", "partial"), versus=("Accuracy z", "partial"))
        for base in BASELINES:
            add(f"{m} beats {base} at system level ({SYSTEM_LABEL})", "beats", m, base, "system")
        add(f"{m} beats permuted human scores at system level ({SYSTEM_LABEL})", "beats the placebo", m, on="system")
        if talks:
            for base in BASELINES:
                add(f"{m} beats {base} (MQM z, Pearson, talks resampled)", "beats", m, base,
                    ("MQM z", "pearson", "talks"), variant=True)
    return out


# ------------------------------------------------------------------------------------------------ TKM is length


def _length_diagnosis(ds: DepthScores, heads: Mapping, n_resamples: int = 1000, seed: int = 0,
                      alpha: float = 0.05) -> pd.DataFrame:
    """How much of the kernel metrics is length (issue 22): for each kernel row (TKM/DTKM at the chapter's decay,
    then at the further decays, e.g. ``"TKM λ=0.4"``) and, for comparison, chrF and BLEU-4:

    * ``median`` segment score and ``share_tiny`` (share of segments scoring below :data:`_TINY_SCORE`);
    * Kendall tau-b with hypothesis length (``tau_hyp``) and with reference length (``tau_ref``) (13a tokens; tau
      is the same on the log lengths), each with its percentile interval (``*_low``, ``*_high``) from
      :func:`syneval_nb.stats.correlation_table` (``method="kendall"``, source segments resampled, no placebo);
    * Pearson r with MQM z (``r``) and the partial r given the length model (``partial``),
      with their intervals, read from the chapter's headline tables (``heads``: :func:`_headline_tables`);
    * the Fluency contrast against chrF ([r(m) - r(chrF)] on Fluency z minus the same on Accuracy z,
      :func:`syneval_nb.stats.verdict_contrast`), raw (``fluency``) and beyond length
      (``fluency_beyond``, on the partial r's), with intervals (unadjusted: a diagnosis, not a verdict).

    One row per metric, indexed by the row name; ``attrs["tiny_score"]`` is :data:`_TINY_SCORE`."""
    keys = [(f, None) for f in ds.families if f in KERNELS]
    keys += [k for f, _ in keys for k in ds.kernel_variants if k[0].split(" λ=")[0] == f]
    keys += [CHRF_KEY, ("BLEU", PRIMARY_DEPTH)]
    rows = {stats.metric_name(k): ds.segment[k] for k in keys}
    seg = ds.frame["seg_id"].to_numpy()
    taus = {}
    for col, cov in zip(("tau_hyp", "tau_ref"), stats.LENGTH_GIVEN):
        taus[col] = stats.correlation_table(rows, ds.segment[(cov, None)], seg, method="kendall",
                                            placebo_column=False, n_resamples=n_resamples, seed=seed,
                                            alpha=alpha, holm=False).set_index("metric")
    pe, pa = heads[("MQM z", "pearson")].set_index("metric"), heads[("MQM z", "partial")].set_index("metric")
    out = []
    for m, values in rows.items():
        row = {"metric": m, "median": float(np.median(values)), "share_tiny": float(np.mean(values < _TINY_SCORE))}
        for col, t in (*taus.items(), ("r", pe), ("partial", pa)):
            row.update({col: float(t.loc[m, "r"]), f"{col}_low": float(t.loc[m, "low"]),
                        f"{col}_high": float(t.loc[m, "high"])})
        for col, method in (("fluency", "pearson"), ("fluency_beyond", "partial")):
            if m == BASELINES[0]:
                row.update({col: np.nan, f"{col}_low": np.nan, f"{col}_high": np.nan})
                continue
            c = stats.verdict_contrast(heads[("Fluency z", method)], heads[("Accuracy z", method)], m, BASELINES[0])
            row.update({col: c["statistic"], f"{col}_low": c["ci"][0], f"{col}_high": c["ci"][1]})
        out.append(row)
    out = pd.DataFrame(out).set_index("metric")
    out.attrs["tiny_score"] = _TINY_SCORE
    return out


# ------------------------------------------------------------------------------------------------ one chapter


@dataclass
class DepthChapter:
    """Everything a depth chapter (03, 04, 08) shows, computed once by :func:`run_chapter`."""

    families: tuple
    scores: dict                 # {"literal": DepthScores, "effective": DepthScores} (TED)
    curves: dict                 # {definition label: curve table (MQM, MQM z)}
    aspects: pd.DataFrame        # literal curves against Fluency z and Accuracy z
    heads: dict                  # headline tables (see _headline_tables)
    deen: object                 # common.Deen
    deen_scores: DepthScores     # literal, reference A
    system_curves: object        # system table, all depths
    system_head: object          # system table at PRIMARY_DEPTH (the verdicts read it)
    verdicts: dict
    variants: dict
    params: dict = field(default_factory=dict)
    meta: pd.DataFrame | None = None   # the WMT meta-evaluation beside Pearson (common.meta_table)
    length: pd.DataFrame | None = None  # the kernels' length diagnosis (_length_diagnosis)

    @property
    def ted(self) -> pd.DataFrame:
        return self.scores["literal"].frame

    @property
    def literal(self) -> DepthScores:
        return self.scores["literal"]


def run_chapter(families: Sequence[str], data_dir=None, sample: int | None = None, seed: int = 0,
                max_depth: int = 9, lam: float = 1.0, permute_human: int | None = None, n_resamples: int = 1000,
                alpha: float = 0.05, progress: bool = True, holm: bool = True,
                kernel_lams: Sequence[float] = (_MOSCHITTI_LAM,), kernel_verdicts: bool = True) -> DepthChapter:
    """Load TED zh-en (refB) and WMT21 de-en (ref A) (:mod:`syneval_nb.studies.common`, ``permute_human``
    applied to every human score), score both definitions, build every table and the verdicts, Holm over all
    of them and the variants (one family; ``holm=False`` leaves it to a chapter that adds verdicts, e.g. 08).

    ``kernel_lams``: the kernel metrics also at these decays (the named variant, default Moschitti's 0.4, rows
    ``"TKM λ=0.4"`` beside the paper's ``"TKM"``) in every table and the length diagnosis
    (``ch.length``); ``kernel_verdicts``: those rows also get the chapter's verdicts,
    and every kernel row the Fluency contrast beyond length (``False`` keeps the verdict family as it was)."""

    if max_depth < PRIMARY_DEPTH:
        raise ValueError(f"max_depth must be at least PRIMARY_DEPTH = {PRIMARY_DEPTH}, got {max_depth}")
    fams = tuple(f.upper() for f in families)
    ted = load_ted(data_dir, sample, seed, permute_human)
    # the literal mean (the default definition) and effective order (the variant), BLEU treated like the syntactic
    # metrics in each; the kernel variants with the literal mean only (the kernels have no depth to average over)
    both = {"literal": score(ted, fams, max_depth, lam, False, progress=progress, kernel_lams=kernel_lams),
            "effective": score(ted, fams, max_depth, lam, True, progress=progress)}
    kw = dict(n_resamples=n_resamples, seed=seed, alpha=alpha)
    curves = {d.label: curve_tables(d, **kw) for d in both.values()}
    aspects = curve_tables(both["literal"], ASPECTS, **kw)
    heads = _headline_tables(both["literal"], **kw)
    deen = load_deen(data_dir, sample, seed, permute_human)
    dd = score(deen.segments, fams, max_depth, lam, False, deen.references, progress, kernel_lams=kernel_lams)
    sys_curves = stats.system_table(**system_scores(dd, deen.da), **kw)
    sys_head = stats.system_table(**system_scores(dd, deen.da, [PRIMARY_DEPTH]), **kw)
    extra = dict(kernel_variants=[stats.metric_name(k) for k in both["literal"].kernel_variants],
                 length_contrast=True) if kernel_verdicts else {}
    cl = claims(fams, talks=("MQM z", "pearson", "talks") in heads, **extra)
    decided = stats.decide_claims(cl, {**heads, "system": sys_head}, holm=holm)
    v = {c.claim: decided[c.claim] for c in cl if not c.variant}
    var = {c.claim: decided[c.claim] for c in cl if c.variant}
    params = {"families": list(fams), "sample": sample, "seed": seed, "max_depth": max_depth, "lam": lam,
              "permute_human": permute_human, "n_resamples": n_resamples, "alpha": alpha,
              "ted_reference": ted.attrs.get("reference"), "deen_references": list(deen.references),
              "primary_depth": PRIMARY_DEPTH, "kernel_lams": [float(x) for x in kernel_lams]}
    meta = meta_table(_metric_rows(both["literal"], [PRIMARY_DEPTH], kernel_variants=False), both["literal"].frame,
                      "mqm_z", BASELINES[0], min(n_resamples, META_K), seed)
    length = _length_diagnosis(both["literal"], heads, **kw) if any(f in KERNELS for f in fams) else None
    return DepthChapter(fams, both, curves, aspects, heads, deen, dd, sys_curves, sys_head, v, var, params, meta,
                        length)


def beats_claim(metric: str, baseline: str = BASELINES[0], beyond_length: bool = False) -> str:
    """The claim "``metric`` beats ``baseline``" on MQM z, Pearson or beyond length."""
    if beyond_length:
        return f"{metric} beats {baseline} beyond length (MQM z, partial r given the length model)"
    return f"{metric} beats {baseline} (MQM z, Pearson)"


def primary_claims(families: Sequence[str]) -> list[str]:
    """The primary claims of a depth chapter, also its headline verdicts: "beats chrF" (Pearson) and its
    beyond-length twin for the first two non-kernel families at PRIMARY_DEPTH and the first kernel (03: STM-4,
    TKM; 04: HWCM-4, DSTM-4, DTKM). Holm runs over these; every other verdict of the chapter is exploratory."""
    depth = [stats.metric_name(f, PRIMARY_DEPTH) for f in families if f not in KERNELS][:2]
    kern = [f for f in families if f in KERNELS][:1]
    return [beats_claim(m, beyond_length=b) for m in depth + kern for b in (False, True)][:MAX_HEADLINE_VERDICTS]


def chapter_results(ch: DepthChapter) -> dict:
    """The results-file part every depth chapter writes: parameters, sizes, headline r, curves, system level,
    verdicts and variants (JSON-ready)."""

    lit = ch.literal
    ted = lit.frame
    length = lit.segment[_LENGTH_KEY]
    curves = {}
    for label, t in ch.curves.items():
        curves[label] = {f"{h}|{m}": float(r) for h, m, r in zip(t["human"], t["metric"], t["r"])}
    return {
        "study": ch.params,
        "n_ted_segments": int(len(ted)), "n_ted_sources": int(ted["seg_id"].nunique()),
        "n_ted_dropped": lit.dropped, "n_deen_systems": int(len(ch.deen.da)),
        "headline": {"|".join(key): {m: float(r) for m, r in zip(t["metric"], t["r"])} for key, t in ch.heads.items()},
        "curves": curves,
        "aspects": {f"{h}|{m}": float(r) for h, m, r in zip(ch.aspects["human"], ch.aspects["metric"],
                                                            ch.aspects["r"])},
        "length_r_mqm": stats.pearson(length, ted["mqm"]),
        "length_r_fluency": stats.pearson(length, ted["mqm_fluency"]),
        "length_r_mqm_z": stats.pearson(length, ted["mqm_z"]),
        "bleu4_r_fluency": stats.pearson(lit.segment[("BLEU", 4)], ted["mqm_fluency"]),
        "deen_system_r": {m: float(r) for m, r in zip(ch.system_curves["metric"], ch.system_curves["r"])},
        "meta_evaluation": meta_json(ch.meta) if ch.meta is not None else None,
        "length_diagnosis": None if ch.length is None else {
            m: {c: (None if not np.isfinite(v) else float(v)) for c, v in r.items()} for m, r in ch.length.iterrows()},
        "verdicts": verdicts_json(ch.verdicts),
        "variant_verdicts": verdicts_json(ch.variants),
        "headline_verdicts": headline_verdicts(ch.verdicts, *primary_claims(ch.families)),
    }
