"""Study code of ``notebooks/09_evaluate_your_system.ipynb`` (``syneval-nb report``): evaluate your own systems.

The chapter takes plain-text system outputs and references (one segment per line), scores them with the
registry's metrics (:mod:`syneval_nb.metrics`) through :func:`syneval_nb.app.score.evaluate` (the engine of
``syneval-nb score``: 95% intervals and paired tests from resampling segments), and builds one table or figure per
function (the notebook draws and prints them): per-depth curves, the agreement between metrics, the segments where
syntactic and lexical metrics disagree most (with the syntactic metric's explanation), the lengths and, with human
scores, the humans' ranking of the systems, the metrics' agreement with it and their correlations with the scores
(:func:`syneval_nb.stats.correlation_table`: intervals from resampling source segments, the length-only control and
the placebo as rows, every metric against chrF or the lexical one with Holm). The report's claims are data
(:func:`claims`, :class:`syneval_nb.stats.Claim`) on the tables of :func:`claim_tables`, decided by
:func:`syneval_nb.stats.decide_claims` and the report's guards (:func:`decide_report`).
With no files it runs on the hand-made example in ``data/examples/your_system`` (its README says what it is).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd
from syneval_nb import stats
from syneval_nb.data import read_mtme_documents, read_score_table, sample_segment_ids
from syneval_nb.evaluate import evaluate, file_aliases, load_files
from syneval_nb.metrics import registry as M
from syneval_nb.metrics.base import score_systems
from syneval_nb.metrics.lexical import tokenize
from syneval_nb.paths import KIT_DATA_DIR
from syneval_nb.studies.common import check_permute, verdicts_json


__all__ = ["example_files", "load_study", "line_faults", "depth_curves", "metric_agreement", "unscorable",
           "pick_metric", "disagreements", "explain_segment", "length_table", "human_ranking", "system_agreement",
           "human_tables", "claim_tables", "claims", "decide_report", "headline"]

_EXAMPLE_DIR = KIT_DATA_DIR / "examples" / "your_system"


def example_files() -> dict:
    """The embedded example: three hand-made systems, two references, a hand-made toy rating and the kit's parses."""
    return {"hyp_files": [str(_EXAMPLE_DIR / f"system_{s}.txt") for s in ("good", "literal", "scrambled")],
            "ref_files": [str(_EXAMPLE_DIR / f"ref.{k}.txt") for k in "AB"],
            "names": ["system_good", "system_literal", "system_scrambled"],
            "human_scores": str(_EXAMPLE_DIR / "human_scores.tsv"),
            "parses_dir": str(_EXAMPLE_DIR / "parses")}



@dataclass
class Study:
    """Everything the chapter shows, computed once: ``corpora`` ``{system: Corpus}``, ``evaluation`` (a
    :class:`syneval_nb.app.score.Evaluation`), ``seg_ids`` (the original 0-based line numbers kept by ``sample``),
    ``human`` (DataFrame ``system, seg_id, score`` or ``None``), ``baseline``."""

    corpora: dict
    evaluation: Any
    seg_ids: np.ndarray
    human: pd.DataFrame | None
    baseline: str
    files: dict = field(default_factory=dict)
    documents: np.ndarray | None = None  # the document of each kept segment (``documents=``), else None

    @property
    def units(self) -> np.ndarray:
        """The resampling unit of each kept segment: its document with ``documents=``, else its line."""
        return self.seg_ids if self.documents is None else self.documents

    @property
    def unit_name(self) -> str:
        return "segment" if self.documents is None else "document"

    @property
    def systems(self) -> list[str]:
        return list(self.corpora)

    @property
    def metric_names(self) -> list[str]:
        return [m.name for m in self.evaluation.metrics]

    def segments(self) -> pd.DataFrame:
        """Segment scores with the original line number ``seg_id`` (and ``human`` when given)."""
        seg = self.evaluation.segments.copy()
        seg["seg_id"] = self.seg_ids[seg["seg"].to_numpy()]
        if self.human is not None:
            seg = seg.merge(self.human.rename(columns={"score": "human"}), on=["system", "seg_id"], how="left")
        return seg


def read_human(path: str | Path, names: Sequence[str], n_segments: int,
               files: Sequence[str] = ()) -> pd.DataFrame:
    """The human scores of ``report --human-scores`` (TSV ``system, seg_id, score``), checked by the kit's one
    score-table reader (:func:`syneval_nb.data.read_score_table`: ids, names, numbers, duplicates) before any
    scoring; a system may be named by its system name, its file name or its file stem (as in WMT layouts;
    ``attrs["aliases_used"]`` lists the other spellings met, :func:`syneval_nb.evaluate.alias_note`)."""
    h = read_score_table(path, n_segments, list(names), aliases=file_aliases(names, files), required=("score",))
    attrs = {"aliases_used": dict(h.attrs.get("aliases_used", {})), "left_out_note": h.attrs.get("left_out_note")}
    if "system" not in h.columns:  # one system: the TSV may leave the column out
        h.insert(0, "system", names[0])
    h = h[["system", "seg_id", "score"]].copy()
    h.attrs.update(attrs)
    return h


def load_study(hyp_files: Sequence[str] | None = None, ref_files: Sequence[str] | None = None,
               names: Sequence[str] | None = None, human_scores: str | None = None,
               metrics: Sequence[str] | None = None, *, parses_dir: str | None = None, sample: int | None = None,
               seed: int = 0, baseline: str | None = None, n_resamples: int = 1000, workers: int = 1,
               cache: Any = True, progress: bool = True, permute_human: int | None = None,
               documents: str | Sequence[str] | None = None, max_length: int | None = None,
               split: str | None = None) -> Study:
    """Read the files (the embedded example when ``hyp_files`` is ``None``), keep ``sample`` segments
    (:func:`syneval_nb.data.sample_segment_ids`, the same for every system) and score every system.
    ``metrics``: registry names, ``None`` for the kit's one default list (:data:`syneval_nb.metrics.DEFAULT_METRICS`, with chrF).
    ``permute_human``: ``None`` leaves the human scores alone; an integer shuffles them across all rated rows with
    that seed (:func:`syneval_nb.stats.permute_human`), the chapters' sanity check: then no "beats" or
    "correlates" verdict may hold. ``documents``: a ``.docs`` file of the WMT metrics-task layout (``DOMAIN
    DOCNAME`` per line) or one label per line: intervals, paired tests and the human tables then resample whole
    documents instead of segments (as ``syneval-nb score --documents``). ``max_length`` / ``split``: the Stanford
    parse's length limit and mode when parses are made (``None``: the kit's defaults, README "Parsing")."""

    metrics = list(M.DEFAULT_METRICS if metrics is None else metrics)
    if hyp_files is None:
        ex = example_files()
        hyp_files, ref_files, names = ex["hyp_files"], ex["ref_files"], ex["names"]
        human_scores = ex["human_scores"] if human_scores is None else human_scores
        parses_dir = ex["parses_dir"] if parses_dir is None else parses_dir
    if not ref_files:
        raise ValueError("ref_files: at least one reference file is needed")
    need = {i for s in metrics for i in M.get(s).inputs} - {"text"}
    full = load_files(ref_files, hyp_files, names=names, parses_dir=parses_dir, need=need, workers=workers,
                      cache=cache, progress=progress)
    n = len(next(iter(full.values())))
    docs = _document_labels(documents, n)
    keep = sample_segment_ids(np.arange(n), sample, seed)
    corpora = {s: _subset(c, keep) for s, c in full.items()}
    systems = list(corpora)
    baseline = _system_name(baseline, systems, hyp_files) if baseline else systems[0]
    human = None
    if human_scores:  # checked before any parsing or scoring
        human = read_human(human_scores, systems, n, hyp_files)
        human = human[human["seg_id"].isin(keep)].reset_index(drop=True)
    kept_docs = None if docs is None else np.asarray(docs, dtype=object)[keep]
    ev = evaluate(corpora, list(metrics), n_resamples=n_resamples, seed=seed, baseline=baseline, progress=progress,
                  workers=workers, cache=cache, groups=None if kept_docs is None else list(kept_docs),
                  unit=None if kept_docs is None else "document",
                  **({"max_length": max_length, "split": split} if "ptb" in need else {}))
    if human is not None:
        if permute_human is not None:

            human["score"] = stats.permute_human(human["score"].to_numpy(float), check_permute(permute_human))
    files = {"hyp_files": list(hyp_files), "ref_files": list(ref_files), "human_scores": human_scores}
    return Study(corpora, ev, np.asarray(keep), human, baseline, files, kept_docs)


def _system_name(name: str, systems: Sequence[str], files: Sequence[str]) -> str:
    """A system given by its name, its file name or its file stem (as ``syneval-nb score --baseline``)."""
    if name in systems:
        return name
    alias = file_aliases(systems, files)
    if name in alias:
        return alias[name]
    raise ValueError(f"baseline {name!r} is not one of the systems {list(systems)} (nor one of their files)")


def _document_labels(documents: str | Sequence[str] | None, n: int) -> list[str] | None:
    """The document of each of the ``n`` lines: from a ``.docs`` file (``DOMAIN DOCNAME`` per line), or given."""
    if documents is None:
        return None
    if isinstance(documents, (str, Path)):
        if not Path(documents).is_file():
            raise ValueError(f"documents {documents}: no such file")
        _, labels = read_mtme_documents(documents)
    else:
        labels = [str(d) for d in documents]
    if len(labels) != n:
        raise ValueError(f"documents: {len(labels)} labels for {n} segments (one document name per line)")
    return labels


def _subset(c: M.Corpus, keep: np.ndarray) -> M.Corpus:
    pick = lambda xs: None if xs is None else [xs[i] for i in keep]  # noqa: E731
    return M.Corpus(pick(c.hyps), pick(c.refs), hyp_ptb=pick(c.hyp_ptb), ref_ptb=pick(c.ref_ptb),
                    hyp_rst=pick(c.hyp_rst), ref_rst=pick(c.ref_rst), workers=c.workers, cache=c.cache,
                    progress=c.progress, parse_source=c.parse_source, ref_layout="segments",
                    hyp_dep=pick(c.hyp_dep), ref_dep=pick(c.ref_dep), dep_source=c.dep_source)


# ============================================================================================== tables / figures



def line_faults(study: Study) -> pd.DataFrame:
    """Per system, how many of its lines were empty (``empty``) and how many non-empty lines had no parse for a
    metric that needs one (``unparsed``: the most over the scored metrics, from the evaluation's ``n_unparsed``).
    Every such line is scored (the metric's worst value, ``hypfault:worst`` in the signatures), never left out."""
    t = study.evaluation.table
    g = t.groupby("system", sort=False)
    return pd.DataFrame({"empty": g["n_empty"].max().astype(int), "unparsed": g["n_unparsed"].max().astype(int)}
                        ).loc[study.systems]


def depth_curves(study: Study, max_depth: int = 9, families: Sequence[str] = ("STM", "DSTM", "HWCM")) -> pd.DataFrame:
    """Corpus score of each depth metric with maximum depth ``D = 1..max_depth`` per system (one ``score_systems``
    pass each: ``scores_by_depth`` of the depth-``max_depth`` result). Columns ``system, metric, depth, score``."""
    rows = []
    for scored in study.evaluation.metrics:
        fam = getattr(scored, "family", None)
        if fam not in families or not hasattr(scored, "variant"):
            continue
        m = scored.variant(depth=max_depth)  # the scored metric's options (e.g. -BP) at depth max_depth
        label = scored.name.rsplit("-", 1)[0]
        for s, st in score_systems([m], study.corpora)[0].items():
            res = m.corpus_from_stats(st)
            for d, v in enumerate(res.parts["scores_by_depth"], 1):
                rows.append({"system": s, "metric": label, "depth": d, "score": v})
    return pd.DataFrame(rows, columns=["system", "metric", "depth", "score"])


def metric_agreement(study: Study, method: str = "kendall") -> pd.DataFrame:
    """Segment-level correlation between every pair of metrics, all systems' segments pooled (error rates are
    negated first so that every metric points the same way)."""
    seg = study.segments()
    cols = study.metric_names
    X = seg[cols].astype(float).copy()
    for m in study.evaluation.metrics:
        if not m.higher_is_better:
            X[m.name] = -X[m.name]
    X = X.rename(columns={m.name: (m.name if m.higher_is_better else f"-{m.name}") for m in study.evaluation.metrics})
    return X.corr(method=method)



def unscorable(study: Study) -> pd.DataFrame:
    """The (system, line) pairs that some scored metric could not really score: an empty hypothesis, or a
    hypothesis or reference without the parse / RST tree a metric needs (scored with the metric's worst value or
    left out, never shown as a finding). Columns ``system, seg_id, line, cause, metrics`` (``line`` 1-based in
    the files; ``cause`` says what is missing and, where the parser said why, why)."""
    rows = []
    need = {k for m in study.evaluation.metrics for k in m.inputs} - {"text"}
    for s, c in study.corpora.items():
        causes: dict[int, list[str]] = {}
        kinds: dict[int, set] = {}
        for i, h in enumerate(c.hyps):
            if not h.strip():
                causes.setdefault(i, []).append("empty hypothesis")
                kinds.setdefault(i, set()).add("text")
        reasons = getattr(c, "failure_reasons", None) or {}
        for (kind, side), idx in c.failures.items():
            if kind not in need:
                continue
            why = reasons.get((kind, side), {})
            for i in idx:
                if side == "hyp" and not c.hyps[i].strip():
                    continue
                whose = "hypothesis" if side == "hyp" else f"reference {chr(65 + int(side.split()[1]))}"
                causes.setdefault(i, []).append(f"no {_KIND_NAMES.get(kind, kind)} of the {whose}"
                                                + (f" ({why[i]})" if i in why else ""))
                kinds.setdefault(i, set()).add(kind)
        for i in sorted(causes):
            hit = [m.name for m in study.evaluation.metrics if "text" in kinds[i] or set(m.inputs) & kinds[i]]
            rows.append({"system": s, "seg_id": int(study.seg_ids[i]), "line": int(study.seg_ids[i]) + 1,
                         "cause": "; ".join(causes[i]), "metrics": ", ".join(hit)})
    return pd.DataFrame(rows, columns=["system", "seg_id", "line", "cause", "metrics"])


_KIND_NAMES = {"ptb": "constituency parse", "dep": "dependency parse", "rst": "RST tree"}


def _scorable(study: Study) -> pd.Series:
    """Per row of :meth:`Study.segments`: True where every scored metric could score the line."""
    seg = study.segments()
    bad = unscorable(study)
    bad_keys = set(zip(bad["system"], bad["seg_id"]))
    return pd.Series([(a, b) not in bad_keys for a, b in zip(seg["system"], seg["seg_id"])], index=seg.index)


def _scored_name(study: Study, wanted: str) -> str:
    """The name under which ``wanted`` was scored: its canonical name, or the ``-BP`` variant the comparison
    scored instead (``Evaluation.brevity_penalty``, :func:`syneval_nb.evaluate.comparison_metrics`)."""
    name = M.canonical_name(wanted)
    return getattr(study.evaluation, "brevity_penalty", {}).get(name, name)


def pick_metric(study: Study, wanted: str, kind: str = "syntactic") -> str | None:
    """``wanted`` (any registry name) when it was scored, else the first scored metric of its ``kind``
    (``"syntactic"``: one that needs a parse or RST tree; ``"lexical"``: one that reads text only), else
    ``None``."""
    name = _scored_name(study, wanted)
    if name in study.metric_names:
        return name
    for m in study.evaluation.metrics:
        if (set(m.inputs) - {"text"}) if kind == "syntactic" else not (set(m.inputs) - {"text"}):
            return m.name
    return None


def disagreements(study: Study, syntactic: str = "STM-4", lexical: str = "BLEU", k: int = 3) -> pd.DataFrame:
    """The ``k`` segments (system, line) where the two metrics disagree most: the largest absolute difference
    between the segment's percentile rank under each metric (all systems pooled), among the segments every scored
    metric could score (:func:`unscorable` lists the others: a missing parse is a limit of the parser, not a
    finding). Columns ``system, seg_id, seg, hypothesis, reference, <syntactic>, <lexical>, rank_<syntactic>,
    rank_<lexical>, gap``; ``gap > 0``: the syntactic metric likes the segment better than the lexical one does."""
    syntactic, lexical = _scored_name(study, syntactic), _scored_name(study, lexical)
    seg = study.segments()
    for name in (syntactic, lexical):
        if name not in seg:
            raise ValueError(f"{name} was not scored; metrics: {study.metric_names}")
    sign = {m.name: 1.0 if m.higher_is_better else -1.0 for m in study.evaluation.metrics}
    ok = seg[[syntactic, lexical]].notna().all(axis=1) & _scorable(study)
    s = seg[ok].copy()
    s[f"rank_{syntactic}"] = (sign[syntactic] * s[syntactic]).rank(pct=True)
    s[f"rank_{lexical}"] = (sign[lexical] * s[lexical]).rank(pct=True)
    s["gap"] = s[f"rank_{syntactic}"] - s[f"rank_{lexical}"]
    s = s.reindex(s["gap"].abs().sort_values(ascending=False, kind="mergesort").index).head(k)
    s["hypothesis"] = [study.corpora[a].hyps[b] for a, b in zip(s["system"], s["seg"])]
    s["reference"] = [study.corpora[a].refs[b][0] for a, b in zip(s["system"], s["seg"])]
    cols = ["system", "seg_id", "seg", "hypothesis", "reference", syntactic, lexical, f"rank_{syntactic}",
            f"rank_{lexical}", "gap"]
    return s[cols].reset_index(drop=True)


def explain_segment(study: Study, system: str, seg: int, metric: str = "STM-4") -> M.Score:
    """The sentence-level :class:`~syneval_nb.metrics.Score` of one segment (``seg`` = position in the
    study), with ``.explain()`` and, for STM/DSTM, ``.draw(depth)``."""
    c = study.corpora[system]
    one = M.Corpus([c.hyps[seg]], [c.refs[seg]], hyp_ptb=None if c.hyp_ptb is None else [c.hyp_ptb[seg]],
                   ref_ptb=None if c.ref_ptb is None else [c.ref_ptb[seg]],
                   hyp_rst=None if c.hyp_rst is None else [c.hyp_rst[seg]],
                   ref_rst=None if c.ref_rst is None else [c.ref_rst[seg]], cache=c.cache)
    return M.get(metric).sentence_score(one)


def length_table(study: Study) -> pd.DataFrame:
    """Token counts (sacrebleu's 13a tokens) of every segment of every system and reference: ``text, seg_id,
    tokens``."""

    rows = []
    first = next(iter(study.corpora.values()))
    for k in range(max(len(r) for r in first.refs)):
        rows += [{"text": f"reference {chr(65 + k)}", "seg_id": int(i), "tokens": len(tokenize(r[k]))}
                 for i, r in zip(study.seg_ids, first.refs) if k < len(r)]
    for s, c in study.corpora.items():
        rows += [{"text": s, "seg_id": int(i), "tokens": len(tokenize(h))} for i, h in zip(study.seg_ids, c.hyps)]
    return pd.DataFrame(rows)



# ============================================================================================== the humans first


def _human_matrix(study: Study) -> np.ndarray:
    """(systems x kept segments) human scores in the study's order, NaN where a translation was not rated."""
    pos = {int(i): k for k, i in enumerate(study.seg_ids)}
    H = np.full((len(study.systems), len(study.seg_ids)), np.nan)
    row = {s: k for k, s in enumerate(study.systems)}
    for s, i, v in zip(study.human["system"], study.human["seg_id"], study.human["score"]):
        if int(i) in pos:
            H[row[s], pos[int(i)]] = float(v)
    return H


def _human_samples(study: Study, H: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    """(resamples x systems) mean human score of each system in each bootstrap resample of the study's units
    (segments, or documents): the same resamples for every system, so differences are paired."""
    mask = ~np.isnan(H)
    X = np.where(mask, H, 0.0)
    out = []
    for w in stats.bootstrap_weights(H.shape[1], n_resamples, seed, groups=study.units):
        num, den = w @ X.T, w @ mask.T.astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            out.append(np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan))
    return np.concatenate(out) if out else np.zeros((0, H.shape[0]))


def human_ranking(study: Study, n_resamples: int = 1000, seed: int = 0, alpha: float = 0.05) -> pd.DataFrame:
    """The systems ranked by the human scores (higher is better, as MQM with negative error weights, DA and MQM
    z): per system its mean score over its rated segments, the ``1 - alpha`` percentile interval from resampling
    the study's units (source segments, or documents; every system's translations of a drawn unit together),
    ``n`` rated segments and ``rank`` (1 = best; systems without a rating have none). The resamples are kept in
    ``attrs["samples"]`` (resamples x systems, for paired differences). With fewer than two units an interval
    cannot be estimated: ``low``/``high`` are NaN and ``attrs["note"]`` says why. Empty without human scores."""
    cols = ["rank", "system", "human", "low", "high", "n"]
    if study.human is None:
        return pd.DataFrame(columns=cols)
    H = _human_matrix(study)
    n_units = len(set(study.units.tolist()))
    with np.errstate(invalid="ignore"):
        mean = np.array([np.nanmean(r) if np.isfinite(r).any() else np.nan for r in H])
    samples = _human_samples(study, H, n_resamples, seed) if n_units >= 2 else np.full((0, len(H)), np.nan)
    lo, hi = stats.percentile_ci(samples, alpha) if len(samples) else (np.full(len(H), np.nan),) * 2
    t = pd.DataFrame({"system": study.systems, "human": mean, "low": lo, "high": hi,
                      "n": np.isfinite(H).sum(axis=1).astype(int)})
    t["rank"] = t["human"].rank(ascending=False, method="min")
    t = t.sort_values(["rank", "system"], na_position="last", kind="mergesort")[cols].reset_index(drop=True)
    t.attrs["samples"] = dict(zip(study.systems, samples.T))
    t.attrs["note"] = (None if n_units >= 2 else
                       f"one {study.unit_name} only: the intervals cannot be estimated")
    return t


def system_agreement(study: Study, n_permutations: int = 1000, seed: int = 4) -> pd.DataFrame:
    """Each metric's agreement with the human system ranking, as the chapters compute it
    (:mod:`syneval_nb.stats.meta`, mt-metrics-eval's definitions): ``pairwise_accuracy`` (share of system pairs
    the metric's corpus scores order as the human means do, over ``n_pairs`` pairs), ``spa`` (soft pairwise
    accuracy from the segment scores of the segments rated for every system) and ``r`` (Pearson r of the corpus
    scores with the human means over ``n_systems``; NaN below three systems). Error rates are negated first.
    ``note`` says what could not be estimated (fewer than two rated systems, constant human means)."""
    cols = ["metric", "pairwise_accuracy", "n_pairs", "spa", "r", "n_systems", "note"]
    if study.human is None:
        return pd.DataFrame(columns=cols)
    H = _human_matrix(study)
    with np.errstate(invalid="ignore"):
        hmean = np.array([np.nanmean(r) if np.isfinite(r).any() else np.nan for r in H])
    rated = np.isfinite(hmean)
    complete = np.isfinite(H[rated]).all(axis=0)
    names, sign = _oriented(study)
    t = study.evaluation.table
    seg = study.evaluation.segments
    rows = []
    for n in study.metric_names:
        corpus = np.array([float(t[(t["system"] == s) & (t["metric"] == n)]["score"].iloc[0]) for s in study.systems])
        corpus = sign[n] * corpus
        row = {"metric": names[n], "pairwise_accuracy": np.nan, "n_pairs": 0, "spa": np.nan, "r": np.nan,
               "n_systems": int(rated.sum()), "note": ""}
        if rated.sum() < 2:
            row["note"] = f"{int(rated.sum())} rated system(s): system-level agreement cannot be estimated"
            rows.append(row)
            continue
        row["pairwise_accuracy"], row["n_pairs"] = stats.meta.pairwise_accuracy(corpus, hmean)
        Ms = np.vstack([sign[n] * seg.loc[seg["system"] == s, n].to_numpy(float) for s in study.systems])
        Ms, Hs = Ms[rated][:, complete], H[rated][:, complete]
        ok = np.isfinite(Ms).all(axis=0)
        if ok.sum() >= 2:
            row["spa"] = stats.meta.soft_pairwise_accuracy(Ms[:, ok], Hs[:, ok], num_permutations=n_permutations,
                                                           seed=seed)
        notes = []
        if rated.sum() >= 3 and np.ptp(hmean[rated]) > 0 and np.ptp(corpus[rated]) > 0:
            row["r"] = stats.pearson(corpus[rated], hmean[rated])
        else:
            notes.append("r needs three rated systems with differing scores")
        if ok.sum() < 2:
            notes.append("SPA needs two segments rated for every system")
        row["note"] = "; ".join(notes)
        rows.append(row)
    return pd.DataFrame(rows, columns=cols)


def _human_comparison(ranking: pd.DataFrame, system: str, baseline: str, alpha: float) -> dict | None:
    """The human scores' view of "``system`` is better than ``baseline``": mean difference, its paired interval
    and one-sided p = (k+1)/(B+1) (k: resamples where the system is not better), and the two ranks."""
    r = ranking.set_index("system")
    if system not in r.index or baseline not in r.index or not np.isfinite(r.loc[[system, baseline], "human"]).all():
        return None
    d = float(r.loc[system, "human"] - r.loc[baseline, "human"])
    samp = ranking.attrs.get("samples", {})
    a, b = samp.get(system), samp.get(baseline)
    lo = hi = p = float("nan")
    if a is not None and b is not None and len(a):
        diff = a - b
        diff = diff[np.isfinite(diff)]
        if len(diff):
            lo, hi = (float(x) for x in stats.percentile_ci(diff, alpha))
            p = float(((diff <= 0).sum() + 1) / (len(diff) + 1))
    return {"delta": d, "ci": [lo, hi], "p": p, "system": float(r.loc[system, "human"]),
            "baseline": float(r.loc[baseline, "human"]), "rank": int(r.loc[system, "rank"]),
            "rank_baseline": int(r.loc[baseline, "rank"])}


def _human_view(verdict: str, h: dict | None) -> str:
    """How the human scores stand to a system claim of the metrics. A decided claim: ``agree``, ``disagree`` (they
    order the two systems the other way) or ``cannot tell`` (their interval spans 0); a claim the metrics cannot
    tell: ``better`` / ``worse`` (the humans find the system better / worse: their interval excludes 0) or
    ``cannot tell``; ``not rated`` when the human scores do not rate both systems."""
    if h is None:
        return "not rated"
    lo, hi = h["ci"]
    if verdict == "holds":
        if h["delta"] < 0:
            return "disagree"
        return "agree" if np.isfinite(lo) and lo > 0 else "cannot tell"
    if verdict == "does not hold":
        if h["delta"] > 0:
            return "disagree"
        return "agree" if np.isfinite(hi) and hi < 0 else "cannot tell"
    # the metrics cannot tell: say whether the humans can ("better" / "worse": their interval excludes 0)
    return "cannot tell" if not np.isfinite(lo) or lo <= 0 <= hi else ("better" if lo > 0 else "worse")


def _oriented(study: Study) -> tuple[dict, dict]:
    """``{metric name: display name}`` (error rates negated: ``-TER``) and ``{metric name: sign}``."""
    sign = {m.name: 1.0 if m.higher_is_better else -1.0 for m in study.evaluation.metrics}
    return {n: (n if sign[n] > 0 else f"-{n}") for n in study.metric_names}, sign


def _human_rows(study: Study) -> pd.DataFrame:
    """The rated (system, segment) rows on which every metric has a score (an unparsed sentence drops its row),
    with the oriented metric columns (``-TER``), ``human``, ``seg_id`` and the length-only control
    ``length`` = -|c - r| (:func:`syneval_nb.stats.length_controls` on 13a token counts, r the reference length
    closest to the hypothesis length c). Empty without human scores."""

    if study.human is None:
        return pd.DataFrame()
    seg = study.segments()
    names, sign = _oriented(study)
    ok = seg[study.metric_names + ["human"]].notna().all(axis=1)
    seg = seg[ok].reset_index(drop=True)
    out = pd.DataFrame({"system": seg["system"], "seg_id": seg["seg_id"], "seg": seg["seg"],
                        "human": seg["human"].astype(float)})
    for n in study.metric_names:
        out[names[n]] = sign[n] * seg[n].to_numpy(float)
    hyp_len = [len(tokenize(study.corpora[a].hyps[b])) for a, b in zip(seg["system"], seg["seg"])]
    ref_lens = [[len(tokenize(r)) for r in study.corpora[a].refs[b]] for a, b in zip(seg["system"], seg["seg"])]
    if len(out):
        for k, v in stats.length_rows(hyp_len, ref_lens).items():
            out[k] = v
    return out


def human_tables(study: Study, lexical: str = "BLEU", methods: Sequence[str] = ("pearson", "partial", "within"),
                 n_resamples: int = 1000, seed: int = 0, alpha: float = 0.05) -> dict:
    """``{method: table}``: :func:`syneval_nb.stats.correlation_table` of every metric (error rates negated)
    with the human scores on :func:`_human_rows`, every metric compared with chrF when it was scored, else with
    ``lexical`` (marks: Holm over the table's comparisons), the four length-only controls and the placebo
    distribution; resampling source segments (``seg_id``: every system's translation of a drawn segment
    together). ``"partial"``: beyond length, the partial r given the length model (:func:`syneval_nb.stats.length_covariates`) (same
    resamples); ``"within"``: Pearson after centring each source segment (left out when no source segment has two
    rated translations: then it cannot be estimated). Empty dict without human scores."""

    rows = _human_rows(study)
    if rows.empty:
        return {}
    names, _ = _oriented(study)
    base = _baselines(study, lexical)
    scores = {names[n]: rows[names[n]].to_numpy(float) for n in study.metric_names}
    controls = {k: rows[k].to_numpy(float) for k in stats.LENGTH_ROWS.values()}
    given = stats.length_covariates(-rows["-hyp length"].to_numpy(float), -rows["-ref length"].to_numpy(float))
    if rows.groupby("seg_id")["system"].nunique().max() < 2:  # one rated system: nothing to compare within
        methods = [m for m in methods if m != "within"]
    clusters = None  # resample source segments, or with documents= whole documents
    if study.documents is not None:
        doc_of = dict(zip(study.seg_ids.tolist(), study.documents.tolist()))
        clusters = [doc_of[i] for i in rows["seg_id"]]
    return {m: stats.correlation_table(scores, rows["human"].to_numpy(float), rows["seg_id"].to_numpy(),
                                       clusters=clusters,
                                       baseline=base[0] if base else None, method="pearson" if m == "partial" else m,
                                       controls=controls, n_resamples=n_resamples, seed=seed, alpha=alpha,
                                       given=given if m == "partial" else None)
            for m in methods}


def _baselines(study: Study, lexical: str) -> list[str]:
    """The baselines of the "beats" claims among the scored metrics: chrF (the headline) and ``lexical``."""
    names, _ = _oriented(study)
    return list(dict.fromkeys(names[c] for c in (M.canonical_name("chrf"), M.canonical_name(lexical)) if c in names))


def claim_tables(study: Study, human: dict | None = None, alpha: float = 0.05) -> dict:
    """The tables the chapter's claims read (:func:`claims`): the human-score tables of :func:`human_tables`
    (``"pearson"``, ``"partial"``, ``"within"``; pass them as ``human``) and, for each system but the baseline,
    ``("metrics", system)``: its claim "better than the baseline by the metrics" judged over all scored metrics
    from the paired bootstrap of segments of :func:`syneval_nb.evaluate.evaluate` (``p``: share of resamples where
    the system is not better, ``p_worse``: not worse). Each carries its tests (``"tests"``: ``"<metric> better"``
    and ``"<metric> worse"``, one-sided p each), which join the chapter's one Holm family
    (:func:`syneval_nb.stats.decide_claims`, a ``given`` claim), and is decided here on the tests adjusted over its
    own metrics, each way; :func:`decide_report` decides it again on the family's adjusted p.

    Rule: with b / w the numbers of metrics on which the system is significantly better / worse (Holm-adjusted
    one-sided p < alpha): **holds** iff w = 0 and b >= half the metrics; **does not hold** iff b = 0 and w >= half
    the metrics; otherwise **cannot tell** (too few significant differences, or metrics that disagree); never
    decided on fewer than :data:`syneval_nb.stats.MIN_UNITS` resampled units. ``statistic`` = b, ``ci`` = ``None``
    (several metrics: no one interval; the system table gives each metric's difference and interval), ``p`` = the
    smallest one-sided p of "better", ``p_holm`` its adjusted value."""
    out = dict(human or {})
    t = study.evaluation.table
    for s in study.systems:
        if s == study.baseline:
            continue
        r = t[t["system"] == s]
        ok = np.isfinite(r["p"].to_numpy(float)) & np.isfinite(r["p_worse"].to_numpy(float))
        r = r[ok]
        tests = {**{f"{m} better": float(p) for m, p in zip(r["metric"], r["p"])},
                 **{f"{m} worse": float(p) for m, p in zip(r["metric"], r["p_worse"])}}
        v = {"test": "better than the baseline (paired bootstrap of segments, each metric each way)",
             "statistic": 0, "ci": None, "p": float(r["p"].min()) if len(r) else float("nan"), "alpha": alpha,
             "n_resamples": int(study.evaluation.n_resamples), "n_metrics": int(len(r)), "tests": tests}
        own = {**dict(zip([f"{m} better" for m in r["metric"]], stats.holm(r["p"].to_numpy(float)))),
               **dict(zip([f"{m} worse" for m in r["metric"]], stats.holm(r["p_worse"].to_numpy(float))))}
        v["n_units"] = int(len(set(study.units.tolist())))
        v["unit"] = study.unit_name
        out[("metrics", s)] = _decide_system({**v, "tests_holm": own}, "over its metrics, each way")
    return out


def claims(study: Study, tables: dict, syntactic: str = "STM-4", lexical: str = "BLEU") -> list[stats.Claim]:
    """The report's claims as data (:class:`syneval_nb.stats.Claim`), on ``tables`` (:func:`claim_tables`), in
    the order the report prints them:

    * per system but the baseline, "<system> is better than <baseline> by the metrics" (test ``given``: the
      system's verdict over every metric, table ``("metrics", system)``);
    * with human scores, for ``syntactic`` against each baseline (chrF when scored, the headline, and
      ``lexical``): "beats" on the Pearson table, "beats ... beyond length" on the partial r given the length model
      and "beats ... within source segments" (when those tables were estimated); then "correlates" (Pearson, and
      beyond length) and "beats the placebo".

    No claim is primary: Holm runs over every claim the report prints, one family."""
    out = [stats.Claim(f"{k[1]} is better than {study.baseline} by the metrics", "given", on=k)
           for k in tables if isinstance(k, tuple) and k[0] == "metrics"]
    names, _ = _oriented(study)
    syn = _scored_name(study, syntactic)
    bases = [b for b in _baselines(study, lexical) if b != names.get(syn)]
    if study.human is None or syn not in names or not bases or "pearson" not in tables:
        return out
    a = names[syn]
    for b in bases:
        out.append(stats.Claim(f"{a} beats {b} (human scores, Pearson)", "beats", a, b, on="pearson"))
        if "partial" in tables:
            out.append(stats.Claim(f"{a} beats {b} beyond length (human scores, partial r given the length model)",
                                   "beats", a, b, on="partial"))
        if "within" in tables:
            out.append(stats.Claim(f"{a} beats {b} within source segments (human scores)", "beats", a, b,
                                   on="within"))
    out.append(stats.Claim(f"{a} correlates with the human scores", "correlates", a, on="pearson"))
    if "partial" in tables:
        out.append(stats.Claim(f"{a} correlates with the human scores beyond length", "correlates", a, on="partial"))
    out.append(stats.Claim(f"{a} beats the placebo (human scores)", "beats the placebo", a, on="pearson"))
    return out


def decide_report(study: Study, claim_list: Sequence[stats.Claim], tables: dict, alpha: float = 0.05,
                  ranking: pd.DataFrame | None = None, n_resamples: int = 1000, seed: int = 0) -> dict:
    """The report's verdicts, ``{claim: {"verdict", "statistic", "ci", "p", "rule", ...}}`` (JSON-ready):
    ``claim_list`` (:func:`claims`) decided on ``tables`` by :func:`syneval_nb.stats.decide_claims`, Holm over
    every claim as one family (each human-score verdict's p, and each system claim's tests: every metric, better
    and worse). Then the report's guards: a system claim is decided again on its adjusted tests (rule in
    :func:`claim_tables`); below the cluster floor (:data:`syneval_nb.stats.MIN_UNITS` resampled units) every
    human-score claim is "cannot tell" and says so; with human scores each system claim carries the humans' view
    (``human``: the mean difference, its paired interval, p and the two ranks of :func:`human_ranking`;
    ``human_view``: agree / disagree / cannot tell, or better / worse / cannot tell when the metrics cannot tell,
    or not rated), so a system the metrics find better but the humans rank lower always says so."""
    out = stats.decide_claims(claim_list, tables, alpha=alpha)
    n_units = len(set(study.units.tolist()))
    for c in claim_list:
        v = out[c.claim]
        if c.test == "given":
            out[c.claim] = _decide_system(v, f"over every verdict of the report (one family of {v['family_size']} "
                                             "p-values)")
        elif n_units < stats.MIN_UNITS:  # the kit's cluster floor: shown, never decided
            v["verdict"] = "cannot tell"
            v["rule"] = (f"{v.get('rule', '')}; never decided on fewer than {stats.MIN_UNITS} resampled "
                         f"{study.unit_name}s (here {n_units})").lstrip("; ")
    if study.human is not None:  # the humans' view of every claim the metrics make about two systems
        if ranking is None:
            ranking = human_ranking(study, n_resamples, seed, alpha)
        for c in claim_list:
            if c.test == "given":
                v = out[c.claim]
                v["human"] = h = _human_comparison(ranking, c.on[1], study.baseline, alpha)
                v["human_view"] = _human_view(v["verdict"], h)
    return verdicts_json(out)


def _decide_system(v: dict, family: str) -> dict:
    """A system claim of :func:`claim_tables` decided on its adjusted tests (``tests_holm``; ``family`` says
    over what Holm ran): verdict, ``statistic`` b, ``p_holm`` and the rule, written from the numbers."""
    v = dict(v)
    alpha, k = v["alpha"], v["n_metrics"]
    adj = v["tests_holm"]
    b = sum(1 for t, p in adj.items() if t.endswith(" better") and p < alpha)
    w = sum(1 for t, p in adj.items() if t.endswith(" worse") and p < alpha)
    units = v.get("n_units", stats.MIN_UNITS)
    if units < stats.MIN_UNITS:
        verdict = "cannot tell"
    elif k and w == 0 and b >= k / 2:
        verdict = "holds"
    elif k and b == 0 and w >= k / 2:
        verdict = "does not hold"
    else:
        verdict = "cannot tell"
    better = [p for t, p in adj.items() if t.endswith(" better")]
    v.update(verdict=verdict, statistic=b, p_holm=float(min(better)) if better else float("nan"),
             rule=f"over {k} metrics, paired bootstrap of segments ({v['n_resamples']} resamples), one-sided p "
                  f"Holm-adjusted {family}, alpha {alpha:g}: {b} significantly better, {w} significantly worse; "
                  f"holds iff none worse and at least half better, does not hold iff none better and at least half "
                  f"worse, otherwise cannot tell; never decided on fewer than {stats.MIN_UNITS} resampled "
                  f"{v.get('unit', 'segment')}s (here {units})")
    return v


def headline(study: Study) -> dict:
    """The numbers the results file keeps: corpus scores and intervals per system and metric, signatures, the
    segment count and the unparsed counts."""
    t = study.evaluation.table
    return {
        "n_segments": int(len(study.seg_ids)), "systems": study.systems, "baseline": study.baseline,
        "metrics": study.metric_names,
        "scores": {s: {r["metric"]: r["score"] for r in t[t["system"] == s].to_dict("records")}
                   for s in study.systems},
        "ci": {s: {r["metric"]: [r["ci_low"], r["ci_high"]] for r in t[t["system"] == s].to_dict("records")}
               for s in study.systems},
        "p_vs_baseline": {s: {r["metric"]: r["p"] for r in t[t["system"] == s].to_dict("records")}
                          for s in study.systems if s != study.baseline},
        "n_missing": {s: {r["metric"]: r["n_missing"] for r in t[t["system"] == s].to_dict("records")}
                      for s in study.systems},
        "line_faults": {s: {k: int(v) for k, v in r.items()} for s, r in line_faults(study).to_dict("index").items()},
        "signatures": study.evaluation.signatures,
    }
