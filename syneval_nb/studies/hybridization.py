"""Study code of notebook 06 (syntactic hybridization of references, Wang et al.): what the chapter computes.

The hybridization itself (equivalent pairs, :func:`syneval_nb.metrics.hybrid.hybridize`, the cap, the text of the
hybrids) is in :mod:`syneval_nb.metrics.hybrid`; this module holds what the chapter does with it (its displays,
plots, notes and the paper's worked examples are in the notebook):

* the chapter's data and their extended reference sets (:func:`prepare` -> :class:`HybridChapter`, with the cap
  report :attr:`HybridChapter.cap`), real hybrids and the share of segments that get one (:func:`hybrid_examples`,
  :func:`coverage_table`), plain detokenization against the raw text (:func:`detokenization_table`);
* Table 5 and Figures 2-5 (:func:`table5_table`, :func:`length_distributions`);
* every metric scored with every reference set (:func:`ted_scores`: the lexical metrics of :func:`make_metrics`
  on the texts, STM / HWCM on the hybrids' trees), what a reference set gains over the two human references
  (:func:`gain_tables`: paired bootstrap over source segments, plain or beyond length; the placebo's random
  splices, :func:`placebo_sets`), chrF, the baseline (:func:`baseline_table`), the Table 6 comparison in both
  framings (:func:`table6`), the system level (:func:`system_scores` in :func:`reference_gain_table`, Williams
  test: independent systems), the ``"seams"`` check (:func:`well_formed_check`);
* the chapter's claims as data (:func:`claims`, decided by :func:`syneval_nb.stats.decide_claims` on
  :func:`tables`) and the results file (:func:`results`).
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd
from nltk import Tree
from tqdm.auto import tqdm
from syneval_nb import stats
from syneval_nb.metrics import get as _get_metric, lexical
from syneval_nb.data import load_ted_zhen_mqm, load_wmt21_deen, sample_segments
from syneval_nb.metrics.hybrid import (DEFAULT_MAX_REFS, HybridSet, align_leaves, detokenize, equivalent_nodes,
                                       hybridize_corpus, seams_attested)
from syneval_nb.metrics.lexical import edit_distance, tokenize
from syneval_nb.corpus import Corpus
from syneval_nb.metrics.base import score_rows, score_systems
from syneval_nb.metrics.syntactic import depth_metrics
from syneval_nb.studies.common import headline_verdicts
from syneval_nb.textio import to_json
from syneval_nb.trees.ptb import EmptyParseError, TreeFormatError, read_ptb, spans

__all__ = ["EXTENDED", "ORIGINAL", "prepare", "hybrid_examples", "coverage_table", "detokenization_table",
           "table5_table", "length_distributions", "make_metrics", "ted_scores", "gain_tables", "baseline_table",
           "table6", "reference_gain_table", "system_scores", "well_formed_check", "tables", "claims", "results"]

_PRIMARY = ("hybrids help BLEU (2 manual + hybrid beats 2 manual, TED MQM z)",
            "hybrids help BLEU beyond length (2 manual + hybrid beats 2 manual, TED MQM z)",
            "BLEU with hybrids beats chrF (2 manual + hybrid vs chrF with 2 manual, TED MQM z)",
            "BLEU with hybrids beats chrF beyond length (2 manual + hybrid vs chrF with 2 manual, TED MQM z)",
            "two human references beat one, average of single references (BLEU, TED MQM z)",
            "two human references beat one beyond length, average of single references (BLEU, TED MQM z)")
"""The chapter's primary claims, also its headline verdicts: Holm runs over these; the rest are exploratory."""


# ---------------------------------------------------------------------------------------------------------------
# extended sets of the chapter's tables, cap and detokenization reports, Table 5 and Figures 2-5 (trees)
# ---------------------------------------------------------------------------------------------------------------


def cap_report(sets: Sequence[HybridSet]) -> dict[str, float]:
    """How often the cap was reached, and the size of the extended sets (:attr:`HybridChapter.cap`, the
    benchmark)."""
    sizes = np.array([len(s) for s in sets], dtype=float)
    capped = np.array([s.capped for s in sets], dtype=bool)
    return {
        "n_segments": len(sets),
        "n_capped": int(capped.sum()),
        "capped_rate": float(capped.mean()) if len(sets) else 0.0,
        "refs_per_segment": float(sizes.mean()) if len(sets) else 0.0,
        "new_refs_per_segment": float(np.mean([sum(not h.is_original for h in s.hybrids) for s in sets]))
        if len(sets) else 0.0,
        "max_refs_per_segment": int(sizes.max()) if len(sets) else 0,
        "derivations_per_segment_median": float(np.median([s.n_derivations for s in sets])) if len(sets) else 0.0,
    }


def detokenization_agreement(trees: Sequence[Tree | None], texts: Sequence[str],
                             tokenizer: str = "13a") -> pd.DataFrame:
    """How close ``tokenize(detokenize(tree words))`` is to ``tokenize(raw text)`` (the metrics' view of a
    detokenized reference vs. of the original text), one row per reference with a tree: ``n_raw``, ``n_detok``
    (token counts), ``edit_distance`` (word-level Levenshtein, :func:`lexical.edit_distance`), ``identical``, and
    ``aligned`` (:func:`align_leaves` found every token, so hybrids use the raw characters instead)."""

    if len(trees) != len(texts):
        raise ValueError(f"{len(trees)} trees for {len(texts)} texts")
    rows = []
    for k, (t, raw) in enumerate(zip(trees, texts)):
        if t is None:
            continue
        a = tokenize(raw, tokenizer)
        b = tokenize(detokenize(t.leaves()), tokenizer)
        rows.append((k, len(a), len(b), edit_distance(a, b), a == b, align_leaves(t.leaves(), raw) is not None))
    return pd.DataFrame(rows, columns=["ref", "n_raw", "n_detok", "edit_distance", "identical", "aligned"])


# ------------------------------------------------------------------------- Table 5, Figures 2-5


def _segments_with_trees(segments: Sequence[Sequence[Tree | None]]) -> Iterator[tuple[int, list[Tree]]]:
    for s, trees in enumerate(segments):
        got = [t for t in trees if t is not None]
        if got:
            yield s, got


def reference_statistics(segments: Sequence[Sequence[Tree | None]]) -> pd.DataFrame:
    """One row per reference tree: ``seg, ref, n_words, n_nodes, n_equivalent_nodes`` (Table 5's inputs).

    Nodes are the non-leaf nodes (preterminals included); an equivalent node is a node in at least one equivalent
    pair with another reference of its segment (the roots always are, as soon as there are two references).
    References without a tree are skipped.
    """
    rows = []
    for s, trees in _segments_with_trees(segments):
        flags = equivalent_nodes(trees)
        for r, (t, f) in enumerate(zip(trees, flags)):
            rows.append((s, r, len(t.leaves()), len(f), sum(f)))
    return pd.DataFrame(rows, columns=["seg", "ref", "n_words", "n_nodes", "n_equivalent_nodes"])


def node_lengths(segments: Sequence[Sequence[Tree | None]]) -> pd.DataFrame:
    """One row per node of every reference tree: ``seg, ref, length`` (words covered), ``is_equivalent``."""
    seg_col, ref_col, len_col, eq_col = [], [], [], []
    for s, trees in _segments_with_trees(segments):
        flags = equivalent_nodes(trees)
        for r, (t, f) in enumerate(zip(trees, flags)):
            lengths = [e - b for _, b, e in spans(t)]
            seg_col += [s] * len(lengths)
            ref_col += [r] * len(lengths)
            len_col += lengths
            eq_col += f
    return pd.DataFrame({"seg": seg_col, "ref": ref_col, "length": len_col, "is_equivalent": eq_col})


def length_distribution(lengths: pd.DataFrame, max_length: int = 50) -> pd.DataFrame:
    """Figures 2-5: per node length 1..max_length, the counts of tree nodes and of equivalent nodes, and
    ``proportion`` = equivalent nodes / tree nodes (NaN where there is no node of that length)."""
    lengths = lengths[lengths["length"] <= max_length]
    idx = pd.RangeIndex(1, max_length + 1, name="length")
    tree_nodes = lengths.groupby("length").size().reindex(idx, fill_value=0)
    eq_nodes = lengths[lengths["is_equivalent"]].groupby("length").size().reindex(idx, fill_value=0)
    out = pd.DataFrame({"tree_nodes": tree_nodes, "equivalent_nodes": eq_nodes})
    out["proportion"] = out["equivalent_nodes"] / out["tree_nodes"].where(out["tree_nodes"] > 0)
    return out.reset_index()


def table5(ref_stats: pd.DataFrame, sets: Sequence[HybridSet] | None = None) -> pd.Series:
    """Table 5 of the paper (plus references per segment after hybridization when ``sets`` is given)."""
    out = {
        "Average length of reference": ref_stats["n_words"].mean(),
        "Total tree nodes": int(ref_stats["n_nodes"].sum()),
        "Total equivalent nodes": int(ref_stats["n_equivalent_nodes"].sum()),
        "Average tree nodes": ref_stats["n_nodes"].mean(),
        "Average equivalent nodes": ref_stats["n_equivalent_nodes"].mean(),
    }
    if sets is not None:
        out["References per segment after hybridization"] = float(np.mean([len(s) for s in sets]))
    return pd.Series(out)



def _read_parse(p: str | None, where: str) -> Tree | None:
    """A tree, or ``None`` for a missing value (None, NaN, empty) and the parser's ``(())``."""
    if p is None or (isinstance(p, float) and np.isnan(p)) or not str(p).strip():
        return None
    try:
        return read_ptb(p)
    except EmptyParseError:
        return None
    except TreeFormatError as exc:
        raise TreeFormatError(f"{where}: {exc}") from None


def reference_trees(df: pd.DataFrame, ptb_cols: Sequence[str], seg_col: str = "seg_id") -> list[list[Tree | None]]:
    """The reference trees of every segment of a (system, segment) table, in order of first appearance
    (``None`` for a missing or failed parse; a malformed one raises :class:`trees.TreeFormatError` naming the
    segment and the column)."""
    missing = [c for c in [seg_col, *ptb_cols] if c not in df.columns]
    if missing:
        raise ValueError(f"columns {missing} not in the table")
    seg = df.drop_duplicates(seg_col)
    return [[_read_parse(p, f"{seg_col} {s!r}, column {c!r}") for c, p in zip(ptb_cols, row)]
            for s, row in zip(seg[seg_col], seg[list(ptb_cols)].itertuples(index=False))]


def hybridize_frame(df: pd.DataFrame, text_cols: Sequence[str], ptb_cols: Sequence[str], seg_col: str = "seg_id",
                    max_refs: int | None = DEFAULT_MAX_REFS, progress: bool = True,
                    well_formed: str | None = None) -> dict:
    """Extended reference sets of every segment of a (system, segment) table, e.g. ``load_ted_zhen_mqm()`` with
    ``text_cols=("ref", "refB")``, ``ptb_cols=("ptb_ref", "ptb_refB")``: ``{seg_id: HybridSet}``; ``well_formed``:
    the check of :data:`syneval_nb.metrics.hybrid.WELL_FORMED` (``None``, the paper: none)."""
    if len(text_cols) != len(ptb_cols):
        raise ValueError(f"{len(text_cols)} text columns for {len(ptb_cols)} parse columns")
    missing = [c for c in [seg_col, *text_cols] if c not in df.columns]
    if missing:
        raise ValueError(f"columns {missing} not in the table")
    seg = df.drop_duplicates(seg_col)
    trees = reference_trees(df, ptb_cols, seg_col)
    texts = [[row[c] for c in text_cols] for _, row in seg.iterrows()]
    sets = hybridize_corpus(trees, texts=texts, max_refs=max_refs, progress=progress, well_formed=well_formed)
    return dict(zip(seg[seg_col], sets))


# ---------------------------------------------------------------------------------------------------------------
# scores with every reference set, gain tables, system level
# ---------------------------------------------------------------------------------------------------------------


def _lexical_scores(metrics: Mapping[str, Any], hyps: Sequence[str], ref_sets: Mapping[str, Sequence[Sequence[str]]],
                   progress: bool = True) -> pd.DataFrame:
    """Segment scores of every metric with every reference set: columns ``(metric, reference set)``.

    ``metrics``: name -> a :mod:`syneval_nb.metrics.lexical` metric object; ``ref_sets``: name -> ``refs[i]``, the
    references of row ``i``. Scored by :func:`syneval_nb.metrics.base.score_rows`, one call per reference set."""
    seg = {r: score_rows(metrics, hyps, ref_sets[r]).segment for r in tqdm(ref_sets, "lexical", disable=not progress)}
    out = pd.DataFrame({(m, r): seg[r][m].to_numpy() for m in metrics for r in ref_sets})
    out.columns = pd.MultiIndex.from_tuples(out.columns, names=["metric", "references"])
    return out


def syntactic_scores(df: pd.DataFrame, ref_parse_sets: Mapping[str, Mapping[Any, Sequence[str | None]]],
                     metrics: Sequence[str] = ("stm", "hwcm"), depth: int = 4, hyp_col: str = "ptb",
                     seg_col: str = "seg_id", system_col: str = "system", progress: bool = True) -> pd.DataFrame:
    """Segment scores of syntactic metrics (:mod:`syneval_nb.metrics.syntactic`, ``<metric>_<depth>``) of every row of
    ``df`` with every reference set: columns ``(metric, reference set)``, rows aligned with ``df``.

    ``ref_parse_sets``: name -> ``{seg_id: [bracketed parse or tree of each reference]}`` (the trees of
    :attr:`HybridSet.trees` go in as they are; :attr:`HybridSet.ptbs` gives the same as strings).
    ``attrs["corpus"]``: corpus scores, one row per system (both by :func:`syneval_nb.metrics.base.score_systems`)."""
    segs = list(dict.fromkeys(df[seg_col]))
    pos = {s: k for k, s in enumerate(segs)}
    cols = {(m, r): np.full(len(df), np.nan) for m in metrics for r in ref_parse_sets}
    corpus: dict[tuple[str, str], dict[Any, float]] = {(m, r): {} for m in metrics for r in ref_parse_sets}
    groups = list(df.reset_index(drop=True).groupby(system_col, sort=True))
    hyps: dict[Any, list[str | None]] = {system: [None] * len(segs) for system, _ in groups}
    for system, g in groups:
        for s, h in zip(g[seg_col], g[hyp_col]):
            hyps[system][pos[s]] = h if isinstance(h, str) else None  # pandas writes a missing parse as NaN
    objs = depth_metrics(metrics, depth)
    for r, sets in tqdm(list(ref_parse_sets.items()), desc="syntactic scores", disable=not progress):
        refs = [list(sets[s]) for s in segs]
        corpora = {system: Corpus([""] * len(segs), [[""] * len(x) for x in refs], hyp_ptb=hyps[system], ref_ptb=refs,
                                  ref_layout="segments", parse_source="given", check_words=False) for system in hyps}
        for m, by_sys in zip(objs, score_systems(list(objs.values()), corpora)):
            for system, g in groups:
                cols[(m, r)][g.index.to_numpy()] = objs[m].segment_scores(by_sys[system])[g[seg_col].map(pos)]
                corpus[(m, r)][system] = objs[m].corpus_from_stats(by_sys[system]).score
    out = pd.DataFrame(cols, index=df.index)
    out.columns = pd.MultiIndex.from_tuples(out.columns, names=["metric", "references"])
    out.attrs["corpus"] = _by_system(corpus)
    return out


def _by_system(scores: Mapping[tuple[str, str], Mapping[Any, float]]) -> pd.DataFrame:
    out = pd.DataFrame({k: pd.Series(v) for k, v in scores.items()})
    out.columns = pd.MultiIndex.from_tuples(out.columns, names=["metric", "references"])
    return out


def reference_gain_table(scores: pd.DataFrame, human: Sequence[float] | Mapping[Any, float], baseline: str,
                         segments: Sequence | None = None, *, method: str = "pearson",
                         clusters: Sequence | None = None, n_resamples: int = 1000, alpha: float = 0.05,
                         seed: int = 0, holm: bool = True, given: Mapping[str, Sequence] | None = None
                         ) -> pd.DataFrame:
    """What a reference set gains over ``baseline``: for each metric of ``scores`` (columns ``(metric, reference
    set)``), :func:`syneval_nb.stats.correlation_table` of its reference sets against the human scores, every set
    compared with the ``baseline`` set on the same resamples of source segments (``segments``; ``clusters`` for
    talks). Neither: the rows are systems (e.g. :func:`system_scores`; ``human`` may then be ``{system: score}``),
    and each metric's table is the system-level table :func:`syneval_nb.stats.system_table` (the systems
    resampled, Williams' test of each set against ``baseline``: ``williams_t, williams_p``; Pearson only).

    Columns: ``metric`` (the metric), ``references`` (the reference set), then the columns of
    :data:`syneval_nb.stats.TABLE_COLUMNS` after ``metric`` (``baseline`` is the baseline set; ``delta`` the gain;
    ``p_better`` the one-sided bootstrap p that the set beats the baseline set; Holm over one metric's sets).
    Rows where any of a metric's sets is NaN are left out of that metric's table (``n`` says how many are used).
    No placebo row: a random "reference set" is not a meaningful control here. ``given`` (e.g. the
    length model of the TED rows): beyond length, the partial r given these covariates (same resamples).
    ``attrs["bootstrap"]``: each metric's :class:`syneval_nb.stats.TableBootstrap` (for the verdicts)."""

    systems = segments is None and clusters is None
    if systems and (method != "pearson" or given is not None):
        raise ValueError("the system-level gain table (neither segments nor clusters) is Pearson's r, without given=")
    if isinstance(human, Mapping):
        missing = [s for s in scores.index if s not in human]
        if missing:
            raise ValueError(f"no human score for the systems {missing}")
        human = [human[s] for s in scores.index]
    h = np.asarray(human, dtype=float)
    seg = None if segments is None else np.asarray(segments)
    cl = None if clusters is None else np.asarray(clusters)
    tables, boots = [], {}
    for metric in dict.fromkeys(scores.columns.get_level_values(0)):
        block = scores[metric]
        if baseline not in block.columns:
            raise ValueError(f"baseline reference set {baseline!r} not among {list(block.columns)}")
        ok = np.isfinite(block.to_numpy(dtype=float)).all(axis=1) & np.isfinite(h)
        sets = {str(r): block[r].to_numpy(dtype=float)[ok] for r in block.columns}
        t = stats.system_table(sets, h[ok], baseline=str(baseline), n_resamples=n_resamples, seed=seed,
                               alpha=alpha, holm=holm) if systems else \
            stats.correlation_table(sets, h[ok], None if seg is None else seg[ok], baseline=str(baseline),
                                    method=method, clusters=None if cl is None else cl[ok], placebo_column=False,
                                    n_resamples=n_resamples, seed=seed, alpha=alpha, holm=holm,
                                    given=None if given is None else
                                    {k: np.asarray(v, dtype=float)[ok] for k, v in given.items()})
        boots[metric] = t.attrs["bootstrap"]
        t = t.rename(columns={"metric": "references"})
        t.insert(0, "metric", metric)
        tables.append(t)
    out = pd.concat(tables, ignore_index=True)
    out.attrs["bootstrap"] = boots
    return out


# ---------------------------------------------------------------------------------------------------------------
# Table 6 in both framings, chrF
# ---------------------------------------------------------------------------------------------------------------

_SINGLE = ("1 manual (ref)", "1 manual (refB)")
"""The single-reference sets of the TED comparison (``ref`` is rated below every MT system, ``refB`` best)."""


def reference_value(scores: pd.DataFrame, metric: str, human: Sequence[float], segments: Sequence, *,
                    single: Sequence[str] = _SINGLE, two: str = "2 manual", extended: str = "2 manual + hybrid",
                    best: str = "1 manual (refB)", n_resamples: int = 1000, seed: int = 0,
                    alpha: float = 0.05, given: Mapping[str, Sequence] | None = None) -> pd.DataFrame:
    """Table 6 analog with intervals: r of ``metric`` with each reference set (columns ``(metric, set)`` of
    ``scores``) on the same resamples of source segments, plus the row ``"1 manual (average)"`` (the mean of the
    single-reference r's, resample by resample: the paper's framing) and the gains in both framings:
    ``"second reference (vs average)"`` = r(two) - mean r(single), ``"second reference (vs best)"`` = r(two) -
    r(best), ``"hybrids"`` = r(extended) - r(two). ``attrs["bootstrap"]``: a :class:`syneval_nb.stats.TableBootstrap`
    over all these rows, for the claims. Columns ``r, low, high``. ``given``: beyond
    length (partial r given these covariates, e.g. the length model of the TED rows)."""
    block = scores[metric]
    h = np.asarray(human, dtype=float)
    ok = np.isfinite(block.to_numpy(dtype=float)).all(axis=1) & np.isfinite(h)
    t = stats.correlation_table({str(r): block[r].to_numpy(dtype=float)[ok] for r in block.columns}, h[ok],
                                np.asarray(segments)[ok], placebo_column=False, n_resamples=n_resamples,
                                seed=seed, alpha=alpha,
                                given=None if given is None else
                                {k: np.asarray(v, dtype=float)[ok] for k, v in given.items()})
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
                                                  b.method, b.unit, b.n_clusters, False, given=b.given)
    return out


def baseline_table(scores: pd.DataFrame, ted: pd.DataFrame, *, n_resamples: int = 1000, seed: int = 0,
                   beyond_length: bool = False) -> pd.DataFrame:
    """Every metric with both human references and with the hybrids against chrF with both (MQM z, the same
    resamples of source segments; ``beyond_length``: partial r given the length model)."""
    cols = {f"{m} ({r})": scores[(m, r)].to_numpy(dtype=float)
            for m in dict.fromkeys(scores.columns.get_level_values(0)) for r in (ORIGINAL, EXTENDED)}
    h = ted["mqm_z"].to_numpy(dtype=float)
    ok = np.isfinite(np.column_stack(list(cols.values()))).all(axis=1) & np.isfinite(h)
    given = _length_given(ted) if beyond_length else {}
    return stats.correlation_table({k: v[ok] for k, v in cols.items()}, h[ok], ted["seg_id"].to_numpy()[ok],
                                   baseline=f"{_BASELINE} ({ORIGINAL})", placebo_column=False,
                                   n_resamples=n_resamples, seed=seed,
                                   given={k: v[ok] for k, v in given.items()} or None)


# ---------------------------------------------------------------------------------------------------------------
# the chapter, table by table (notebook 06)
# ---------------------------------------------------------------------------------------------------------------

_PAPER_TABLE5 = {"paper LDC2006T04": [31.52, 211231, 21807, 57.46, 5.93, 31],
                 "paper LDC2008E43": [34.43, 62569, 10073, 62.82, 10.11, 66]}
"""Table 5 of the paper, in the row order of :func:`table5` (with references per segment after hybridization)."""
_HUMAN_COLUMNS = {"MQM z": "mqm_z", "MQM": "mqm"}
"""The TED human scores of the tables: rater-normalized MQM (the verdicts) and raw MQM."""
EXTENDED = "2 manual + hybrid"
ORIGINAL = "2 manual"
PLACEBO_SET = "2 manual + random splices"
"""The placebo reference set (:func:`placebo_sets`): what any mixing of the two references adds."""
_BASELINE = "chrF"


@dataclass
class HybridChapter:
    """The chapter's data: ``ted`` (TED zh-en MT rows, MQM columns permuted with ``permute_human``), ``seg``
    (WMT21 de-en rows sorted by system and line), ``da`` (system DA z of the MT systems, ``{system: da_z}``,
    permuted the same way), their extended reference sets ``ted_sets`` / ``deen_sets`` (``{seg_id: HybridSet}``)
    and the reference ``trees`` of each data set (``{"TED zh-en": ..., "WMT21 de-en": ...}``)."""

    ted: pd.DataFrame
    seg: pd.DataFrame
    da: dict
    ted_sets: dict
    deen_sets: dict
    trees: dict = field(default_factory=dict)

    @property
    def cap(self) -> pd.DataFrame:
        """:func:`cap_report` of both data sets, one column each."""
        return pd.DataFrame({name: cap_report(list(sets.values())) for name, sets in _sets(self).items()})


def prepare(data_dir=None, sample: int | None = None, seed: int = 0, permute_human: int | None = None,
            max_refs: int | None = DEFAULT_MAX_REFS, progress: bool = True) -> HybridChapter:
    """Load both data sets (``sample`` source segments of each, the same for every system), apply the
    ``permute_human`` switch (:func:`syneval_nb.stats.permute_human`: MQM across rows, DA across systems) and
    hybridize both references of every segment (:func:`hybridize_frame`, at most ``max_refs`` per segment)."""
    ted = load_ted_zhen_mqm(data_dir)
    ted = ted[~ted["is_human"]].reset_index(drop=True)
    for col in ("mqm", "mqm_z"):
        ted[col] = stats.permute_human(ted[col].to_numpy(dtype=float), permute_human)
    deen = load_wmt21_deen(data_dir)
    ted = sample_segments(ted, sample, seed)  # the same source segments for every system
    seg = sample_segments(deen.segments, sample, seed)
    seg = seg.sort_values(["system", "seg_id"]).reset_index(drop=True)
    da = deen.system_da[~deen.system_da["is_human"]].set_index("system")["da_z"]
    da = pd.Series(stats.permute_human(da.to_numpy(dtype=float), permute_human), index=da.index).to_dict()
    ted_sets = hybridize_frame(ted, ("ref", "refB"), ("ptb_ref", "ptb_refB"), max_refs=max_refs, progress=progress)
    deen_sets = hybridize_frame(seg, ("ref_A", "ref_B"), ("ptb_ref_A", "ptb_ref_B"), max_refs=max_refs,
                                progress=progress)
    trees = {"TED zh-en": reference_trees(ted, ("ptb_ref", "ptb_refB")),
             "WMT21 de-en": reference_trees(seg, ("ptb_ref_A", "ptb_ref_B"))}
    return HybridChapter(ted, seg, da, ted_sets, deen_sets, trees)


def detokenization_table(seg: pd.DataFrame) -> pd.DataFrame:
    """:func:`detokenization_agreement` of WMT21 de-en references A and B (one column each): the share of
    references with identical 13a tokens, the token edit rate, the share aligned to their raw text, ``n``."""
    deen_refs = seg.drop_duplicates("seg_id")
    detok = {}
    for name in ("A", "B"):
        agree = detokenization_agreement([t for (t,) in reference_trees(deen_refs, [f"ptb_ref_{name}"])],
                                         list(deen_refs[f"ref_{name}"]))
        detok[f"reference {name}"] = {"identical 13a tokens": agree["identical"].mean(),
                                      "token edit rate": agree["edit_distance"].sum() / agree["n_raw"].sum(),
                                      "aligned": agree["aligned"].mean(), "n": len(agree)}
    return pd.DataFrame(detok)


def table5_table(ch: HybridChapter) -> pd.DataFrame:
    """Table 5 analog: :func:`table5` of both data sets (with references per segment after hybridization) next
    to the paper's two columns."""
    return pd.DataFrame({"TED zh-en": table5(reference_statistics(ch.trees["TED zh-en"]), list(ch.ted_sets.values())),
                         "WMT21 de-en": table5(reference_statistics(ch.trees["WMT21 de-en"]),
                                               list(ch.deen_sets.values())),
                         **_PAPER_TABLE5})


def length_distributions(trees: Mapping[str, Sequence], max_length: int = 50) -> pd.DataFrame:
    """Figures 2-5 data: :func:`length_distribution` of every data set's trees (``{name: trees}``), column ``data``."""
    return pd.concat([length_distribution(node_lengths(t), max_length).assign(data=name) for name, t in trees.items()])


def make_metrics() -> dict[str, Any]:
    """chrF (the registry's, every chapter's headline baseline) and the paper's lexical metrics and settings: BLEU
    n=4 (sacrebleu's ``exp`` smoothing, effective order), GTM e=2, ROUGE-S window 9, METEOR exact module."""
    return {_BASELINE: _get_metric(_BASELINE),
            "BLEU": lexical.BLEU(max_ngram_order=4, smooth="exp", effective_order=True),
            "GTM": lexical.GTM(exponent=2), "ROUGE-S": lexical.RougeS(window=9), "METEOR": lexical.MeteorExact()}


def _ted_reference_sets(ch: HybridChapter, seed: int = 0) -> dict[str, list[list[str]]]:
    """The TED reference sets of every row: each human reference alone, both, both plus their hybrids, both plus
    the placebo's random splices (:func:`placebo_sets` with ``seed``)."""
    ted, placebo = ch.ted, placebo_sets(ch.ted_sets, seed)
    return {"1 manual (ref)": [[r] for r in ted["ref"]], "1 manual (refB)": [[r] for r in ted["refB"]],
            ORIGINAL: [[a, b] for a, b in zip(ted["ref"], ted["refB"])],
            EXTENDED: [ch.ted_sets[s].texts for s in ted["seg_id"]], PLACEBO_SET: [placebo[s] for s in ted["seg_id"]]}


def ted_scores(ch: HybridChapter, metrics: Mapping[str, Any] | Sequence[str], *, depth: int = 4, seed: int = 0,
               progress: bool = True) -> pd.DataFrame:
    """Segment scores of the TED MT rows with every reference set: columns ``(metric, reference set)``.

    ``metrics``: lexical metric objects by name (:func:`make_metrics`; :func:`_lexical_scores` of the texts, with
    each human reference alone, both, both plus their hybrids, both plus the placebo's random splices of
    :func:`placebo_sets` with ``seed``), or names of syntactic metrics (``("stm", "hwcm")``: :func:`syntactic_scores`
    at ``depth``, the hypotheses' shipped parses, with both references' trees and with the extended sets' trees)."""
    if isinstance(metrics, Mapping):
        return _lexical_scores(metrics, list(ch.ted["target"]), _ted_reference_sets(ch, seed), progress)
    if isinstance(metrics, str) or not all(isinstance(m, str) for m in metrics):
        raise TypeError(f"metrics: lexical metric objects by name, or a sequence of syntactic metric names; got "
                        f"{metrics!r}")
    return syntactic_scores(ch.ted, _parse_sets(ch.ted, ch.ted_sets, ("ptb_ref", "ptb_refB")), metrics=tuple(metrics),
                            depth=depth, progress=progress)


def _length_given(ted: pd.DataFrame) -> dict[str, np.ndarray]:
    """The covariates of "beyond length" for the TED rows (:func:`syneval_nb.stats.length_covariates`): log(1 +
    hypothesis length) and log(1 + mean length of the two human references), 13a tokens; the same for every
    reference set, so a set's gain is read on the same length model."""
    return stats.length_covariates([len(tokenize(t)) for t in ted["target"]],
                                   [[len(tokenize(a)), len(tokenize(b))] for a, b in zip(ted["ref"], ted["refB"])])


def gain_tables(scores: pd.DataFrame, ted: pd.DataFrame, *, n_resamples: int = 1000,
                seed: int = 0, beyond_length: bool = False) -> dict[str, pd.DataFrame]:
    """:func:`reference_gain_table` against the two human references (``"2 manual"``) for each human score of
    :data:`_HUMAN_COLUMNS`, resampling TED source segments; ``beyond_length``: partial r given
    the length model (hypothesis and mean reference length, :func:`syneval_nb.stats.length_covariates`)."""
    given = _length_given(ted) if beyond_length else None
    return {human: reference_gain_table(scores, ted[col], baseline=ORIGINAL, segments=ted["seg_id"],
                                        n_resamples=n_resamples, seed=seed, given=given)
            for human, col in _HUMAN_COLUMNS.items()}


def system_scores(ch: HybridChapter, metrics: Mapping[str, Any] | Sequence[str], *, depth: int = 4,
                  progress: bool = True) -> pd.DataFrame:
    """Table 4 analog's scores on WMT21 de-en: every system's corpus score (summed statistics) with both references
    and with the extended sets, one row per system with a DA z (in the order of ``ch.seg``), columns ``(metric,
    reference set)``; the table: ``reference_gain_table(system_scores(ch, metrics), ch.da, ORIGINAL)`` (the
    system-level table, Williams' test against both references). ``metrics``: lexical metric objects by name
    (:func:`syneval_nb.metrics.base.score_systems`, one ``Corpus`` per system; the same lines in the same order),
    or syntactic metric names (``("stm", "hwcm")`` at ``depth``: the corpus scores of :func:`syntactic_scores`)."""
    seg = ch.seg
    if isinstance(metrics, Mapping):
        order = seg[seg["system"] == seg["system"].iloc[0]]["seg_id"]
        if not all((g["seg_id"].to_numpy() == order.to_numpy()).all() for _, g in seg.groupby("system")):
            raise ValueError("the WMT21 de-en systems do not have the same lines in the same order")
        ref_sets = {ORIGINAL: [[a, b] for a, b in zip(*[seg.drop_duplicates("seg_id")[c] for c in ("ref_A", "ref_B")])],
                    EXTENDED: [ch.deen_sets[s].texts for s in order]}
        hyps = {s: list(g["target"]) for s, g in seg.groupby("system")}
        systems = [s for s in hyps if s in ch.da]
        sc: dict[tuple[str, str], dict[str, float]] = {}
        for r in tqdm(list(ref_sets), desc="corpus scores", disable=not progress):
            corpora = {s: Corpus(hyps[s], ref_sets[r], ref_layout="segments") for s in systems}
            for m, by_sys in zip(metrics, score_systems(list(metrics.values()), corpora)):
                sc[(m, r)] = {s: metrics[m].corpus_from_stats(by_sys[s]).score for s in systems}
        scores = _by_system(sc)
    elif isinstance(metrics, str) or not all(isinstance(m, str) for m in metrics):
        raise TypeError(f"metrics: lexical metric objects by name, or a sequence of syntactic metric names; got "
                        f"{metrics!r}")
    else:
        scores = syntactic_scores(seg, _parse_sets(seg, ch.deen_sets, ("ptb_ref_A", "ptb_ref_B")),
                                  metrics=tuple(metrics), depth=depth, progress=progress).attrs["corpus"]
    return scores.loc[[s for s in scores.index if s in ch.da]]


def table6(scores: pd.DataFrame, ted: pd.DataFrame, metric: str = "BLEU", *, n_resamples: int = 1000,
           seed: int = 0, beyond_length: bool = False) -> dict[str, pd.DataFrame]:
    """Table 6 analog: :func:`reference_value` of ``metric`` for each human score of :data:`_HUMAN_COLUMNS`
    (``beyond_length``: partial r given the length model)."""
    given = _length_given(ted) if beyond_length else None
    return {human: reference_value(scores, metric, ted[col], ted["seg_id"], n_resamples=n_resamples, seed=seed,
                                   given=given)
            for human, col in _HUMAN_COLUMNS.items()}


def _parse_sets(frame: pd.DataFrame, sets: Mapping[Any, HybridSet], ptb_cols: Sequence[str]) -> dict:
    first = frame.drop_duplicates("seg_id").set_index("seg_id")
    return {ORIGINAL: {s: [first.at[s, c] for c in ptb_cols] for s in first.index},
            EXTENDED: {s: sets[s].trees for s in first.index}}


# ---------------------------------------------------------------------------------------------------------------
# real hybrids, the share of segments that get one, the well-formedness check
# ---------------------------------------------------------------------------------------------------------------

_DATA_SETS = {"TED zh-en": ("ted", ("ref", "refB"), ("ptb_ref", "ptb_refB")),
             "WMT21 de-en": ("seg", ("ref_A", "ref_B"), ("ptb_ref_A", "ptb_ref_B"))}
"""Each data set's frame attribute of :class:`HybridChapter`, reference text columns and parse columns."""
_WELL_FORMED_SET = "2 manual + hybrids (seams checked)"


def _sets(ch: HybridChapter) -> dict[str, dict]:
    return {"TED zh-en": ch.ted_sets, "WMT21 de-en": ch.deen_sets}


def _originals(hs: HybridSet) -> list[tuple[str, ...]]:
    return [h.tokens for h in hs.originals]


def _swapped_words(hs: HybridSet, h) -> str:
    """What a hybrid swapped: ``host words -> words of the other reference`` for each substitution (``; ``-joined),
    read from its swaps and the originals' trees."""
    trees = {o.source: o.tree for o in hs.originals}
    parts = []
    for x, j, y in h.swaps:
        host, other = trees[h.source], trees[j]
        a = spans(host)[x]
        b = spans(other)[y]
        parts.append(f"{' '.join(host.leaves()[a[1]:a[2]])} -> {' '.join(other.leaves()[b[1]:b[2]])}")
    return "; ".join(parts)


def _placebo_set(hs: HybridSet, rng: np.random.Generator) -> list[str]:
    """The originals' texts and, per hybrid, a random splice of its host: each swap's span moved to a random
    position, filled with a random span of the other reference of the real length (PTB tokens,
    :func:`detokenize`): as many references and swapped words as the hybrids, no syntactic selection."""
    trees = {o.source: o.tree for o in hs.originals}
    out = [o.text for o in hs.originals]
    for h in hs.hybrids:
        if h.is_original:
            continue
        words = list(trees[h.source].leaves())
        for x, j, y in h.swaps:
            (_, a0, a1), (_, b0, b1) = spans(trees[h.source])[x], spans(trees[j])[y]
            other = trees[j].leaves()
            i = int(rng.integers(0, max(0, len(words) - (a1 - a0)) + 1))
            k = int(rng.integers(0, len(other) - (b1 - b0) + 1))
            words[i:i + a1 - a0] = other[k:k + b1 - b0]
        out.append(detokenize(words))
    return out


def placebo_sets(sets: Mapping[Any, HybridSet], seed: int = 0) -> dict[Any, list[str]]:
    """:func:`_placebo_set` of every segment (``{seg_id: texts}``), one seeded generator in segment order."""
    rng = np.random.default_rng([seed, 0x06])
    return {k: _placebo_set(hs, rng) for k, hs in sets.items()}


def hybrid_examples(ch: HybridChapter, n_per_set: int = 6, seed: int = 0) -> pd.DataFrame:
    """Real hybrids: ``n_per_set`` segments of each data set drawn (seeded) among those that get a hybrid, and of
    each the first hybrid of the enumeration (fewest swaps): its host reference, the hybrid's text, what was
    swapped, the number of swaps and whether its seams are attested (the ``"seams"`` check of
    :data:`syneval_nb.metrics.hybrid.WELL_FORMED`)."""
    rng = np.random.default_rng(seed)
    rows = []
    for name, sets in _sets(ch).items():
        segs = [k for k, hs in sets.items() if any(not h.is_original for h in hs.hybrids)]
        for k in sorted(rng.choice(len(segs), size=min(n_per_set, len(segs)), replace=False)):
            hs = sets[segs[k]]
            h = next(x for x in hs.hybrids if not x.is_original)
            host = next(o for o in hs.originals if o.source == h.source)
            rows.append({"data": name, "seg_id": segs[k], "host reference": host.text, "hybrid": h.text,
                         "swapped": _swapped_words(hs, h), "swaps": h.n_swaps,
                         "seams attested": seams_attested(h, _originals(hs))})
    return pd.DataFrame(rows)


def coverage_table(ch: HybridChapter, checked: Mapping[str, Mapping] | None = None) -> pd.DataFrame:
    """Per data set: segments, segments that get at least one hybrid and their share, hybrids, hybrids per segment
    that gets one; with ``checked`` (``{data set: {seg_id: HybridSet}}`` made with ``well_formed="seams"``) the
    same after the check and the hybrids it removed."""
    out = {}
    for name, sets in _sets(ch).items():
        n_h = [sum(not h.is_original for h in hs.hybrids) for hs in sets.values()]
        row = {"segments": len(n_h), "segments with a hybrid": sum(n > 0 for n in n_h),
               "share with a hybrid": float(np.mean([n > 0 for n in n_h])) if n_h else float("nan"),
               "hybrids": sum(n_h), "hybrids per segment with one": sum(n_h) / max(1, sum(n > 0 for n in n_h))}
        if checked is not None:
            c = [sum(not h.is_original for h in hs.hybrids) for hs in checked[name].values()]
            row.update({"segments with a hybrid (seams checked)": sum(n > 0 for n in c),
                        "share with a hybrid (seams checked)": float(np.mean([n > 0 for n in c])) if c else float("nan"),
                        "hybrids (seams checked)": sum(c),
                        "removed by the check": sum(hs.n_rejected for hs in checked[name].values())})
        out[name] = row
    return pd.DataFrame(out)


@dataclass
class WellFormedCheck:
    """The ``"seams"`` option's effect: ``sets`` (``{data set: {seg_id: HybridSet}}`` made with the check),
    ``coverage`` (:func:`coverage_table` before and after), ``gains`` (TED :func:`gain_tables` of the plain and
    the checked extended sets against the two human references, ``{human: table}``), ``table`` (their display)."""

    sets: dict
    coverage: pd.DataFrame
    gains: dict
    table: pd.DataFrame


def well_formed_check(ch: HybridChapter, ted_scores: pd.DataFrame, metrics: Mapping[str, Any], *,
                      max_refs: int | None = DEFAULT_MAX_REFS, n_resamples: int = 1000, seed: int = 0,
                      progress: bool = True) -> WellFormedCheck:
    """Hybridize both data sets again with ``well_formed="seams"`` (a named option; the paper and the chapter's
    main tables have no check), count what it removes, and score the TED MT rows with the checked extended set:
    Table 3's r and gain over the two human references for the plain (paper) and the checked extended set, on the
    same resamples of source segments (``ted_scores``: :func:`ted_scores` of the lexical ``metrics``)."""
    checked = {}
    for name, (attr, text_cols, ptb_cols) in _DATA_SETS.items():
        checked[name] = hybridize_frame(getattr(ch, attr), text_cols, ptb_cols, max_refs=max_refs,
                                        progress=progress, well_formed="seams")
    refs = [checked["TED zh-en"][s].texts for s in ch.ted["seg_id"]]
    extra = _lexical_scores(metrics, list(ch.ted["target"]), {_WELL_FORMED_SET: refs}, progress)
    keep = [c for c in ted_scores.columns if c[1] in (ORIGINAL, EXTENDED)]
    scores = pd.concat([ted_scores[keep], extra], axis=1)
    scores = scores[[c for m in metrics for c in scores.columns if c[0] == m]]
    gains = gain_tables(scores, ch.ted, n_resamples=n_resamples, seed=seed)
    rows = {}
    for human, t in gains.items():
        for m in metrics:
            tm = t[t["metric"] == m].set_index("references")
            rows[(human, m)] = {"r (2 manual)": tm.loc[ORIGINAL, "r"], **{
                f"{k} ({label})": tm.loc[ref, c] for ref, label in ((EXTENDED, "paper"), (_WELL_FORMED_SET, "seams"))
                for k, c in (("r", "r"), ("gain", "delta"), ("gain low", "delta_low"), ("gain high", "delta_high"))}}
    table = pd.DataFrame(rows).T
    table.index.names = ["human", "metric"]
    return WellFormedCheck(checked, coverage_table(ch, checked), gains, table)


# ---------------------------------------------------------------------------------------------------------------
# the claims, and the results file
# ---------------------------------------------------------------------------------------------------------------

_SPLICE_EDGE = f"the hybrids' edge over the random splices, r({EXTENDED}) - r({PLACEBO_SET})"


def tables(gains: Sequence[Mapping[str, pd.DataFrame]], value: Sequence[Mapping[str, pd.DataFrame]],
           chrf: Sequence[pd.DataFrame] = (), human: str = "MQM z") -> dict:
    """The tables the :func:`claims` read, on ``human``: each metric's reference sets (``"reference sets of
    <metric>"``, from every :func:`gain_tables` in ``gains``, lexical and syntactic), Table 6 (``"Table 6"``,
    every :func:`table6` in ``value``) and the comparison with chrF (``"vs chrF"``, every :func:`baseline_table` in
    ``chrf``); a table built beyond length goes under the same key followed by ``" beyond length"``."""
    out: dict = {}

    def put(name: str, table, boot: stats.TableBootstrap) -> None:
        key = name + (" beyond length" if boot.beyond_length else "")
        if key in out:
            raise ValueError(f"two tables for {key!r}")
        out[key] = table

    for g in gains:
        for m, boot in g[human].attrs["bootstrap"].items():
            put(f"reference sets of {m}", boot, boot)
    for v in value:
        put("Table 6", v[human], v[human].attrs["bootstrap"])
    for c in chrf:
        put("vs chrF", c, c.attrs["bootstrap"])
    return out


def claims(metrics: Sequence[str], syntactic: Sequence[str] = (), human: str = "MQM z") -> list[stats.Claim]:
    """The chapter's claims on :func:`tables` (:func:`syneval_nb.stats.decide_claims`, Holm over :data:`_PRIMARY`;
    each claim plain and beyond length): per lexical metric of ``metrics`` (scored with the placebo set),
    "hybrids beat random splices" and "hybrids help", which also needs the hybrids' edge over the random splices;
    "<metric> with hybrids beats chrF" (when chrF is among ``metrics``); Table 6's "two human references beat one"
    and "a second human reference is worth more than the hybrids", against the average and the best single
    reference (BLEU); "hybrids help" for each ``syntactic`` metric (no placebo set)."""
    what = f"TED {human}"
    out: list[stats.Claim] = []

    def add(claim: str, metric: str, baseline: str, on: str, **kw) -> None:
        out.append(stats.Claim(claim, "beats", metric, baseline, on=on, primary=claim in _PRIMARY, **kw))

    for bl in ("", " beyond length"):
        for m in metrics:
            add(f"hybrids beat random splices for {m}{bl} ({EXTENDED} beats {PLACEBO_SET}, {what})", EXTENDED,
                PLACEBO_SET, f"reference sets of {m}{bl}")
            add(f"hybrids help {m}{bl} ({EXTENDED} beats {ORIGINAL}, {what})", EXTENDED, ORIGINAL,
                f"reference sets of {m}{bl}", requires=(PLACEBO_SET, _SPLICE_EDGE))
        for m in metrics if _BASELINE in metrics else ():
            if m != _BASELINE:
                add(f"{m} with hybrids beats chrF{bl} ({EXTENDED} vs chrF with {ORIGINAL}, {what})",
                    f"{m} ({EXTENDED})", f"{_BASELINE} ({ORIGINAL})", f"vs chrF{bl}")
        add(f"two human references beat one{bl}, average of single references (BLEU, {what})", ORIGINAL,
            "1 manual (average)", f"Table 6{bl}")
        add(f"two human references beat one{bl}, best single reference refB (BLEU, {what})", ORIGINAL,
            "1 manual (refB)", f"Table 6{bl}")
        for framing in ("average", "best"):
            add(f"a second human reference is worth more than the hybrids{bl}, vs {framing} single reference "
                f"(BLEU, {what})", f"second reference (vs {framing})", "hybrids", f"Table 6{bl}")
        for m in syntactic:
            add(f"hybrids help {m}{bl} ({EXTENDED} beats {ORIGINAL}, {what})", EXTENDED, ORIGINAL,
                f"reference sets of {m}{bl}")
    return out


def _set_rows(t: pd.DataFrame, refs: str, keys: Sequence[str] = ("r",)) -> pd.DataFrame:
    """The rows of reference set ``refs`` by metric, the ``keys`` the table has."""
    t = t[t["references"] == refs].set_index("metric")
    return t[[k for k in keys if k in t.columns]]


_GAIN = ("r", "delta", "delta_low", "delta_high", "p_better", "p_value")
"""What the results file keeps of a reference set's row of a gain table."""
_SYSTEM = ("r", "delta", "p_value")
"""What it keeps of a system-level gain table's row (``p_value``: the Williams p, ``williams_p``)."""


def _system_rows(t: pd.DataFrame, refs: str) -> pd.DataFrame:
    return _set_rows(t.rename(columns={"williams_p": "p_value"}), refs, _SYSTEM)


def results(worked: Mapping[str, int], ch: HybridChapter, detok: pd.DataFrame,
            corr: Mapping[str, pd.DataFrame], table4: pd.DataFrame, table5: pd.DataFrame,
            table6: Mapping[str, pd.DataFrame], syn_corr: Mapping[str, pd.DataFrame], syn_sys: pd.DataFrame,
            verdicts: Mapping[str, dict], metrics: Mapping[str, Any], max_refs: int | None, *,
            examples: pd.DataFrame | None = None, well_formed: WellFormedCheck | None = None,
            chrf: tuple = ()) -> dict:
    """The results file (JSON-ready, :func:`syneval_nb.textio.to_json`); ``worked``: the counts of the paper's
    worked examples (``figure1_n_pairs``, ``figure1_n_references``, ``alabama_n_additional``); ``examples``
    (:func:`hybrid_examples`) and ``well_formed`` (:func:`well_formed_check`) add the real hybrids, the coverage and
    the check's effect."""
    coverage = coverage_table(ch) if well_formed is None else well_formed.coverage
    extra: dict[str, Any] = {"chrf_table": [t.set_index("metric")[["r", "low", "high", "delta", "delta_low",
                                                                       "delta_high"]].to_dict("index") for t in chrf],
                             "coverage": coverage.to_dict()}
    if examples is not None:
        extra["hybrid_examples"] = examples
    if well_formed is not None:
        extra["well_formed"] = {h: well_formed.table.xs(h, level="human").to_dict("index") for h in _HUMAN_COLUMNS}
    return to_json({**extra, **worked,
        "ted_n_segments": int(ch.ted["seg_id"].nunique()),
        "ted_n_rows": len(ch.ted),
        "deen_n_segments": int(ch.seg["seg_id"].nunique()),
        "cap": ch.cap.to_dict(),
        "detokenization": detok.to_dict(),
        "table3_original_r": {h: _set_rows(t, ORIGINAL)["r"].to_dict() for h, t in corr.items()},
        "table3_extended": {h: _set_rows(t, EXTENDED, _GAIN).to_dict("index") for h, t in corr.items()},
        "table4_original_r": _set_rows(table4, ORIGINAL)["r"].to_dict(),
        "table4_extended": _system_rows(table4, EXTENDED).to_dict("index"),
        "table5": table5.to_dict(),
        "table6": {h: t.to_dict("index") for h, t in table6.items()},
        "syntactic_original_r": {h: _set_rows(t, ORIGINAL)["r"].to_dict() for h, t in syn_corr.items()},
        "syntactic_extended": {h: _set_rows(t, EXTENDED, _GAIN).to_dict("index") for h, t in syn_corr.items()},
        "syntactic_system_original_r": _set_rows(syn_sys, ORIGINAL)["r"].to_dict(),
        "syntactic_system_extended": _system_rows(syn_sys, EXTENDED).to_dict("index"),
        "verdicts": verdicts,
        "headline_verdicts": headline_verdicts(verdicts, *_PRIMARY),
        "verdict": "\n".join(stats.verdict_sentence(c, v) for c, v in verdicts.items()),
        "signatures": {m: obj.signature() for m, obj in metrics.items()},
        "max_refs": max_refs,
    }, finite=False)
