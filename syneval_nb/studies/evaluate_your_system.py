"""Study code of ``notebooks/09_evaluate_your_system.ipynb`` (``syneval-nb report``): evaluate your own systems.

The chapter takes plain-text system outputs and references (one segment per line), scores them with the
registry's metrics (:mod:`syneval_nb.metrics`) through :func:`syneval_nb.score.evaluate` (the engine of
``syneval-nb score``: 95% intervals and paired tests from resampling segments), and builds one table or figure per
function: the system table, per-depth curves, the agreement between metrics, the segments where syntactic and
lexical metrics disagree most (with the syntactic metric's explanation and the matched subtrees drawn), the length
distributions and, with human scores, the metrics' correlations with them (intervals from resampling segments).
With no files it runs on the hand-made example in ``data/examples/your_system`` (its README says what it is).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from .. import metrics as M
from ..paths import KIT_DATA_DIR

__all__ = [
    "EXAMPLE_DIR", "DEFAULT_METRICS", "example_files", "example_reference", "Study", "load_study", "system_table", "depth_curves",
    "plot_depth_curves", "metric_agreement", "plot_agreement", "disagreements", "explain_segment",
    "length_table", "plot_lengths", "human_correlations", "verdicts", "verdict_sentences", "headline",
]

EXAMPLE_DIR = KIT_DATA_DIR / "examples" / "your_system"
DEFAULT_METRICS = ["bleu", "ter", "meteor", "stm", "hwcm", "dstm", "tkm", "dtkm"]


def example_files() -> dict:
    """The embedded example: three hand-made systems, two references, a hand-made toy rating and the kit's parses."""
    return {"hyp_files": [str(EXAMPLE_DIR / f"system_{s}.txt") for s in ("good", "literal", "scrambled")],
            "ref_files": [str(EXAMPLE_DIR / f"ref.{k}.txt") for k in "AB"],
            "names": ["system_good", "system_literal", "system_scrambled"],
            "human_scores": str(EXAMPLE_DIR / "human_scores.tsv"),
            "parses_dir": str(EXAMPLE_DIR / "parses")}


def example_reference(i: int = 0) -> tuple[str, str]:
    """Line ``i`` (0-based) of the example's reference A and its shipped parse: ``(text, ptb)``."""
    from ..textio import read_lines

    return (read_lines(EXAMPLE_DIR / "ref.A.txt")[i], read_lines(EXAMPLE_DIR / "parses" / "ref.A.txt.ptb")[i])


@dataclass
class Study:
    """Everything the chapter shows, computed once: ``corpora`` ``{system: Corpus}``, ``evaluation`` (a
    :class:`syneval_nb.score.Evaluation`), ``seg_ids`` (the original 0-based line numbers kept by ``sample``),
    ``human`` (DataFrame ``system, seg_id, score`` or ``None``), ``baseline``."""

    corpora: dict
    evaluation: Any
    seg_ids: np.ndarray
    human: pd.DataFrame | None
    baseline: str
    files: dict = field(default_factory=dict)

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


def _read_human(path: str | Path, names: Sequence[str]) -> pd.DataFrame:
    h = pd.read_csv(path, sep="\t", comment="#")
    missing = {"system", "seg_id", "score"} - set(h.columns)
    if missing:
        raise ValueError(f"{path}: human scores need the columns system, seg_id, score (missing {sorted(missing)})")
    h = h[["system", "seg_id", "score"]].astype({"system": str, "seg_id": int, "score": float})
    unknown = sorted(set(h["system"]) - set(names))
    if unknown:
        raise ValueError(f"{path}: systems {unknown} are not among the scored systems {list(names)}")
    if h.duplicated(["system", "seg_id"]).any():
        raise ValueError(f"{path}: a (system, seg_id) pair is rated twice")
    return h


def load_study(hyp_files: Sequence[str] | None = None, ref_files: Sequence[str] | None = None,
               names: Sequence[str] | None = None, human_scores: str | None = None,
               metrics: Sequence[str] = DEFAULT_METRICS, *, parses_dir: str | None = None, sample: int | None = None,
               seed: int = 0, baseline: str | None = None, n_resamples: int = 1000, workers: int = 1,
               cache: Any = True, progress: bool = True) -> Study:
    """Read the files (the embedded example when ``hyp_files`` is ``None``), keep ``sample`` segments
    (:func:`syneval_nb.data.sample_segment_ids`, the same for every system) and score every system."""
    from ..data import sample_segment_ids
    from ..score import evaluate, load_files

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
    keep = sample_segment_ids(np.arange(n), sample, seed)
    corpora = {s: _subset(c, keep) for s, c in full.items()}
    systems = list(corpora)
    baseline = baseline or systems[0]
    ev = evaluate(corpora, list(metrics), n_resamples=n_resamples, seed=seed, baseline=baseline, progress=progress,
                  workers=workers, cache=cache)
    human = None
    if human_scores:
        human = _read_human(human_scores, systems)
        human = human[human["seg_id"].isin(keep)].reset_index(drop=True)
    files = {"hyp_files": list(hyp_files), "ref_files": list(ref_files), "human_scores": human_scores}
    return Study(corpora, ev, np.asarray(keep), human, baseline, files)


def _subset(c: M.Corpus, keep: np.ndarray) -> M.Corpus:
    pick = lambda xs: None if xs is None else [xs[i] for i in keep]  # noqa: E731
    return M.Corpus(pick(c.hyps), pick(c.refs), hyp_ptb=pick(c.hyp_ptb), ref_ptb=pick(c.ref_ptb),
                    hyp_rst=pick(c.hyp_rst), ref_rst=pick(c.ref_rst), workers=c.workers, cache=c.cache,
                    progress=c.progress, parse_source=c.parse_source)


# ============================================================================================== tables / figures


def system_table(study: Study, alpha: float = 0.05) -> pd.DataFrame:
    """One row per system, per metric: ``score [low, high]``, and against the baseline the difference with ``*``
    when the one-sided paired bootstrap p-value is below ``alpha`` in the metric's better direction
    (``+`` better, ``-`` worse)."""
    t = study.evaluation.table
    cells = {}
    for r in t.to_dict("records"):
        txt = f"{r['score']:.4f} [{r['ci_low']:.4f}, {r['ci_high']:.4f}]"
        if r["system"] != study.baseline and np.isfinite(r["p"]):
            mark = " +*" if r["p"] < alpha else (" -*" if r["p_worse"] < alpha else "")
            txt += f" Δ{r['delta']:+.4f}{mark}"
        cells.setdefault(r["system"], {})[r["metric"]] = txt
    out = pd.DataFrame(cells).T.loc[study.systems, study.metric_names]
    out.index.name = "system"
    return out


def depth_curves(study: Study, max_depth: int = 9, families: Sequence[str] = ("STM", "DSTM", "HWCM")) -> pd.DataFrame:
    """Corpus score of each depth metric with maximum depth ``D = 1..max_depth`` per system (one pass each:
    the family's ``scores_by_depth`` of the depth-``max_depth`` result). Columns ``system, metric, depth, score``."""
    asked = {M.parse_name(n)[0] for n in study.metric_names}
    rows = []
    for fam in [f for f in families if f in asked]:
        m = M.get(fam, depth=max_depth)
        for s, c in study.corpora.items():
            res = m.corpus_score(c)
            for d, v in enumerate(res.parts["scores_by_depth"], 1):
                rows.append({"system": s, "metric": fam, "depth": d, "score": v})
    return pd.DataFrame(rows, columns=["system", "metric", "depth", "score"])


def plot_depth_curves(curves: pd.DataFrame):
    import seaborn as sns

    g = sns.relplot(data=curves, x="depth", y="score", hue="system", col="metric", kind="line", marker="o",
                    height=3.2, aspect=1.1, facet_kws={"sharey": False})
    g.set_axis_labels("maximum depth D", "corpus score")
    g.figure.suptitle("Syntactic scores by maximum depth: do the systems keep their order as D grows?", y=1.04)
    return g.figure


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


def plot_agreement(corr: pd.DataFrame):
    import matplotlib.pyplot as plt
    import seaborn as sns

    fig, ax = plt.subplots(figsize=(1 + 0.7 * len(corr), 0.8 + 0.6 * len(corr)))
    sns.heatmap(corr, annot=True, fmt=".2f", vmin=-1, vmax=1, cmap="RdBu_r", ax=ax, square=True)
    ax.set_title("Agreement between metrics (segment-level Kendall tau, all systems)")
    return fig


def disagreements(study: Study, syntactic: str = "STM-4", lexical: str = "BLEU", k: int = 3) -> pd.DataFrame:
    """The ``k`` segments (system, line) where the two metrics disagree most: the largest absolute difference
    between the segment's percentile rank under each metric (all systems pooled). Columns ``system, seg_id,
    seg, hypothesis, reference, <syntactic>, <lexical>, rank_<syntactic>, rank_<lexical>, gap``; ``gap > 0``:
    the syntactic metric likes the segment better than the lexical one does."""
    syntactic, lexical = M.canonical_name(syntactic), M.canonical_name(lexical)
    seg = study.segments()
    for name in (syntactic, lexical):
        if name not in seg:
            raise ValueError(f"{name} was not scored; metrics: {study.metric_names}")
    sign = {m.name: 1.0 if m.higher_is_better else -1.0 for m in study.evaluation.metrics}
    ok = seg[[syntactic, lexical]].notna().all(axis=1)
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
    from ..lexical import tokenize

    rows = []
    first = next(iter(study.corpora.values()))
    for k in range(max(len(r) for r in first.refs)):
        rows += [{"text": f"reference {chr(65 + k)}", "seg_id": int(i), "tokens": len(tokenize(r[k]))}
                 for i, r in zip(study.seg_ids, first.refs) if k < len(r)]
    for s, c in study.corpora.items():
        rows += [{"text": s, "seg_id": int(i), "tokens": len(tokenize(h))} for i, h in zip(study.seg_ids, c.hyps)]
    return pd.DataFrame(rows)


def plot_lengths(lengths: pd.DataFrame):
    import matplotlib.pyplot as plt
    import seaborn as sns

    fig, ax = plt.subplots(figsize=(7, 0.6 + 0.45 * lengths["text"].nunique()))
    sns.boxplot(data=lengths, x="tokens", y="text", ax=ax, color="#9ecae1")
    ax.set_xlabel("segment length (13a tokens)")
    ax.set_ylabel("")
    means = lengths.groupby("text", sort=False)["tokens"].mean()
    ax.set_title(f"Segment lengths: mean {means.min():.1f}-{means.max():.1f} tokens per text")
    return fig


def human_correlations(study: Study, n_resamples: int = 1000, seed: int = 0, alpha: float = 0.05) -> pd.DataFrame:
    """Segment-level Pearson r of every metric with the human scores (all rated segments of all systems pooled;
    error rates negated), with the percentile interval from resampling source segments (all systems'
    translations of a drawn segment together: :func:`syneval_nb.stats.bootstrap_ci` with ``groups`` = segment id).
    Empty when no human scores were given."""
    from .. import stats

    if study.human is None:
        return pd.DataFrame(columns=["metric", "r", "ci_low", "ci_high", "n"])
    seg = study.segments()
    rows = []
    for m in study.evaluation.metrics:
        ok = seg[[m.name, "human"]].notna().all(axis=1)
        x = seg.loc[ok, m.name].to_numpy(float) * (1 if m.higher_is_better else -1)
        h = seg.loc[ok, "human"].to_numpy(float)
        b = stats.bootstrap_ci(x, h, "pearson", n_resamples=n_resamples, alpha=alpha, seed=seed,
                               groups=seg.loc[ok, "seg_id"].to_numpy())
        rows.append({"metric": m.name if m.higher_is_better else f"-{m.name}", "r": b.estimate, "ci_low": b.low,
                     "ci_high": b.high, "n": int(ok.sum())})
    return pd.DataFrame(rows)


def verdicts(study: Study, alpha: float = 0.05, syntactic: str = "STM-4", lexical: str = "BLEU",
             n_resamples: int = 1000, seed: int = 0) -> dict:
    """The chapter's claims, ``{claim: {"verdict", "statistic", "ci", "p", "rule"}}``:

    * for each system other than the baseline, "<system> is better than <baseline>": judged over all metrics with
      :func:`syneval_nb.stats.claim_verdict` (one-sided paired bootstrap p-values each way, one per metric);
      statistic = the number of metrics significantly better, ``p`` = the smallest one-sided p;
    * with human scores, "<syntactic> tracks the human scores better than <lexical>": the paired bootstrap of the
      two Pearson correlations over source segments (:func:`syneval_nb.stats.paired_bootstrap`)."""
    from .. import stats

    t = study.evaluation.table
    out = {}
    for s in study.systems:
        if s == study.baseline:
            continue
        r = t[t["system"] == s]
        v = stats.claim_verdict(r["p"].to_numpy(float), r["p_worse"].to_numpy(float), alpha)
        b = int((r["p"] < alpha).sum())
        w = int((r["p_worse"] < alpha).sum())
        out[f"{s} is better than {study.baseline}"] = {
            "verdict": v, "statistic": b, "ci": None, "p": float(r["p"].min()),
            "rule": f"claim_verdict over {len(r)} metrics (paired bootstrap of segments, one-sided, alpha {alpha}): "
                    f"{b} significantly better, {w} significantly worse"}
    syntactic, lexical = M.canonical_name(syntactic), M.canonical_name(lexical)
    if study.human is not None and {syntactic, lexical} <= set(study.metric_names):
        seg = study.segments()
        sign = {m.name: 1.0 if m.higher_is_better else -1.0 for m in study.evaluation.metrics}
        ok = seg[[syntactic, lexical, "human"]].notna().all(axis=1)
        pb = stats.paired_bootstrap(sign[syntactic] * seg.loc[ok, syntactic].to_numpy(float),
                                    sign[lexical] * seg.loc[ok, lexical].to_numpy(float),
                                    seg.loc[ok, "human"].to_numpy(float), "pearson", n_resamples=n_resamples,
                                    alpha=alpha, seed=seed, groups=seg.loc[ok, "seg_id"].to_numpy())
        d = pb.delta
        verdict = "holds" if pb.p_value < alpha else ("does not hold" if 1 - pb.p_value < alpha else "cannot tell")
        out[f"{syntactic} tracks the human scores better than {lexical}"] = {
            "verdict": verdict, "statistic": d.estimate, "ci": [d.low, d.high], "p": pb.p_value,
            "rule": f"paired bootstrap of Pearson r over source segments ({n_resamples} resamples), one-sided "
                    f"p < {alpha} holds, 1 - p < {alpha} does not hold"}
    return out


def verdict_sentences(v: dict) -> list[str]:
    """One sentence per claim, written from the numbers."""
    out = []
    for claim, x in v.items():
        ci = f", 95% CI [{x['ci'][0]:+.3f}, {x['ci'][1]:+.3f}]" if x.get("ci") else ""
        stat = f"{x['statistic']:+.3f}" if isinstance(x["statistic"], float) else str(x["statistic"])
        out.append(f"“{claim}”: {x['verdict']} (statistic {stat}{ci}, p = {x['p']:.3f}; {x['rule']}).")
    return out


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
        "signatures": study.evaluation.signatures,
    }
