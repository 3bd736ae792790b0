"""``syneval-nb score``: score one or more systems' plain-text output against references, sacrebleu style.

::

    syneval-nb score -r ref.A.txt [ref.B.txt ...] -i sysA.txt [sysB.txt ...] -m bleu,ter,stm,hwcm,dr
                     [--format text|json|tsv] [--segment-level] [--paired-bootstrap --baseline sysA]
                     [--parses DIR] [--workers N] [--cache PATH | --no-cache] [-o FILE]

One segment per line (read with :func:`syneval_nb.textio.read_lines`). Metric names are the registry's
(:mod:`syneval_nb.metrics`, any spelling: ``hwcm``, ``HWCM-4``, ``stm_9``, ``dr-lex``). Constituency parses are made
only when a syntactic metric is asked for, RST trees only for ``dr``/``dr-lex``: all sentences at once, ``--workers``
parser processes, through the persistent parse cache; ``--parses DIR`` reads ready parses instead
(``DIR/<file name>.ptb`` and ``DIR/<file name>.jsonl``, also one folder below ``DIR`` as the shipped data are laid
out). Every hypothesis line counts: an empty one, or one the parser could not parse, gets the metric's worst
value (reported by line number; the output gives the counts per system and metric, ``empty`` and ``unparsed``);
only a segment without any parsed reference is left out, for every system alike (``missing``).

**No gain from deleting or truncating lines.** STM, DSTM, HWCM, TKM and DTKM are scored as their ``-BP``
variants (``-m stm`` gives ``STM-BP-4``, ``-m tkm`` ``TKM-BP``): the paper's corpus scores are precisions, which a system raises by emptying or
cutting its hard lines; BLEU's brevity penalty removes that gain (``--no-brevity-penalty``: the paper's
precision-only definitions, with a warning). Statistics that cannot be estimated (one segment or document, fewer
than three systems for a system-level r) are printed as ``-`` with the reason, never as a point interval or p 0.

Output: every system's corpus score (the Python API's ``corpus_score``; 0-1 scale, NIST in bits) with a 95%
percentile interval from resampling segments (``--n-bootstrap`` resamples, ``--seed``), and each metric's
signature. ``--paired-bootstrap`` compares every system with ``--baseline`` (default: the first ``-i`` file) on the
same resamples: ``delta`` = system - baseline (so for TER, WER and PER, where lower is better, a negative delta is an
improvement) and ``p`` = ``(k + 1) / (B + 1)``, ``k`` the resamples in which the system is not better than the
baseline, out of ``B`` (one-sided; never 0).
The BLEU named ``BLEU`` is sacrebleu's ``corpus_bleu`` (13a tokens, exp smoothing) divided by 100.

**The WMT metrics-task layout** (google-research/mt-metrics-eval): ``--mtme DIR --lp zh-en [--ref refA]`` scores
every system of ``DIR/system-outputs/zh-en/`` (except the references used) against ``DIR/references/zh-en.refA.txt``
(default: every reference there); ``--human-scores NAME`` (or a ``LP.NAME.seg.score`` file) adds each metric's
Pearson r with those human scores, at segment and system level; ``--documents`` resamples whole documents
(``DIR/documents/LP.docs``, or a ``.docs`` file given) instead of segments; ``--write-mtme OUT`` writes every
metric as ``OUT/<metric>-<ref>.seg.score`` and ``.sys.score``, the format in which the task takes metric scores.

Errors (mismatched line counts, an empty or missing file, non-UTF-8 input, an unknown metric, no Java when parses
must be made) print one line and exit with code 2.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from syneval_nb import data as D
from syneval_nb.evaluate import Evaluation, ScoreInputError, alias_note, comparison_metrics, evaluate, file_aliases, find_parse_file, load_files, system_names  # noqa: F401
from syneval_nb.app.files import OutputPathError, check_output_path, write_output
from syneval_nb.stats.verdicts import format_p
from syneval_nb.parsers.cache import CacheError, ParseCache, read_only_note
from syneval_nb.parsers.stanford import ParserSetupError, find_java
from syneval_nb.stats import bootstrap_ci, pearson
from syneval_nb.textio import InputEncodingError, to_json
from syneval_nb.metrics import lexical
from syneval_nb.metrics import registry as M


__all__ = ["evaluate"]


WIDTH = 4  # decimal places of the text output (--width)


def _fmt(v: float, width: int = WIDTH) -> str:
    return f"{v:.{width}f}" if isinstance(v, (int, float)) and math.isfinite(v) else "-"


def _sfmt(v: float, width: int = WIDTH) -> str:
    return f"{v:+.{width}f}" if isinstance(v, (int, float)) and math.isfinite(v) else "-"


def _pfmt(v: float) -> str:
    """A p-value as the chapters print it (``p < 0.001``, ``p = 0.012``: :func:`format_p`); ``-`` when there is
    none."""
    return format_p(v) if isinstance(v, (int, float)) and math.isfinite(v) else "-"


def segment_bleu_note(ev: Evaluation) -> str | None:
    """The one line ``--segment-level`` prints when BLEU is scored: which segment BLEU it is, against
    sacrebleu's ``sentence_bleu`` (exp smoothing with effective order)."""
    bleus = [m for m in ev.metrics if isinstance(m, lexical.BLEU)]
    if not bleus:
        return None
    m = bleus[0]
    if m.effective_order:
        return (f"segment-level {m.name}: {m.smooth} smoothing with effective order (eff:yes), as sacrebleu's "
                f"sentence_bleu")
    return (f"segment-level {m.name}: {m.smooth} smoothing over all {m.max_n} n-gram orders (eff:no, as corpus BLEU), "
            f"so a line of fewer than {m.max_n} tokens scores 0; sacrebleu's sentence_bleu uses {m.smooth} smoothing "
            f"with effective order (eff:yes): --sentence-bleu sacrebleu gives its values")


def score_only(ev: Evaluation, width: int = WIDTH) -> str:
    """``--score-only``: one number per line, every system's corpus score for every metric (as sacrebleu's ``-b``),
    in the order of the table: the metrics as given with ``-m``, each for the systems as given with ``-i``."""
    return "".join(_fmt(float(v), width) + "\n" for v in ev.table["score"])


def _lines(idx, k: int) -> str:
    return ", ".join(str(i + 1) for i in idx[:k]) + (" ..." if len(idx) > k else "")


def failure_lists(ev: Evaluation) -> tuple[list, list]:
    """The sentences without a parse: ``[(system, "ptb hyp", [0-based lines])]`` for non-empty hypotheses (an
    empty line is counted as empty, not as unparsed), and ``[("ptb ref k", [lines])]`` for the references, once
    (the references are the same for every system)."""
    hyp, ref = [], {}
    for s, f in ev.failures.items():
        blank = set(ev.empty.get(s, ()))
        for what, idx in f.items():
            if what.endswith(" hyp"):
                idx = [i for i in idx if i not in blank]
                if idx:
                    hyp.append((s, what, idx))
            elif idx:
                ref.setdefault(what, idx)
    return hyp, list(ref.items())


def _records(ev: Evaluation, segment_level: bool) -> dict:
    scores = []
    for r in ev.table.to_dict("records"):
        sc = ev.scores[(r["system"], r["metric"])]
        rec = {"system": r["system"], **sc.to_dict(), "n_empty": r["n_empty"], "n_unparsed": r["n_unparsed"],
               "ci": [r["ci_low"], r["ci_high"]],
               "higher_is_better": bool(r["higher_is_better"])}
        if ev.baseline is not None:
            rec.update(baseline=ev.baseline, delta=r["delta"], delta_ci=[r["delta_low"], r["delta_high"]], p=r["p"])
        if r.get("note"):
            rec["note"] = r["note"]
        scores.append(rec)
    out = {"scores": scores, "signatures": ev.signatures, "n_segments": int(ev.table["n"].iloc[0]),
           "bootstrap": {"n_resamples": ev.n_resamples, "seed": ev.seed, "unit": ev.unit, "ci": 0.95},
           "unparsed": {s: {k: [i + 1 for i in v] for k, v in f.items()} for s, f in ev.failures.items() if f},
           "line_numbers": "1-based"}
    if ev.human:
        out["human"] = ev.human
    if ev.brevity_penalty:
        out["brevity_penalty"] = ev.brevity_penalty
    if segment_level:
        out["segments"] = {s: {m.name: g[m.name].tolist() for m in ev.metrics}
                           for s, g in ev.segments.groupby("system", sort=False)}
    return out


def render(ev: Evaluation, fmt: str = "text", segment_level: bool = False, width: int = WIDTH) -> str:
    """The output of ``syneval-nb score`` in ``text``, ``json`` or ``tsv`` (``width``: decimal places of the text
    output; json and tsv carry every digit). p-values print as the chapters print them (``p < 0.001``)."""
    if fmt == "json":
        return json.dumps(to_json(_records(ev, segment_level)), indent=1, ensure_ascii=False) + "\n"
    t = ev.table
    cols = ["system", "metric", "score", "ci_low", "ci_high", "n", "n_missing", "n_empty", "n_unparsed"]
    if ev.baseline is not None:
        cols += ["delta", "delta_low", "delta_high", "p"]
    if fmt == "tsv":
        lines = ["\t".join(cols + ["signature", "note"])]
        for r in t.to_dict("records"):
            lines.append("\t".join(repr(float(r[c])) if isinstance(r[c], float) else str(r[c])
                                   for c in cols + ["signature"]) + "\t" + str(r.get("note", "")))
        if segment_level:
            lines.append("")
            lines.append(ev.segments.to_csv(sep="\t", index=False, float_format="%.17g").rstrip("\n"))
        return "\n".join(lines) + "\n"
    if fmt != "text":
        raise ValueError(f"unknown format {fmt!r}")
    wsys = max(6, *(len(s) for s in t["system"]))
    wm = max(6, *(len(s) for s in t["metric"]))
    wv, wci = max(7, width + 3), max(17, 2 * (width + 2) + 5)  # a value ("10.1234"), an interval
    wd, wdci = max(8, width + 4), max(19, 2 * (width + 3) + 4)
    fmt_, sfmt_ = (lambda v: _fmt(v, width)), (lambda v: _sfmt(v, width))
    head = (f"{'metric':{wm}s}  {'system':{wsys}s}  {'score':>{wv}s}  {'95% CI':>{wci}s}  {'missing':>7s}  "
            f"{'empty':>5s}  {'unparsed':>8s}")
    if ev.baseline is not None:
        head += f"  {'delta':>{wd}s}  {'95% CI of delta':>{wdci}s}  {'p':>10s}"
    lines = [f"{t['n'].iloc[0]} segments, {len(ev.scores) // max(1, len(ev.metrics))} systems; 95% intervals from "
             f"{ev.n_resamples} bootstrap resamples of {ev.unit}s (seed {ev.seed})"
             + (f"; paired against {ev.baseline!r} (p: one-sided, system not better)" if ev.baseline else "")]
    if ev.brevity_penalty:
        lines.append("with BLEU's brevity penalty, so that no system gains by deleting or truncating lines: "
                     + ", ".join(f"{a} scored as {b}" for a, b in ev.brevity_penalty.items()))
    if segment_level and segment_bleu_note(ev):
        lines.append(segment_bleu_note(ev))
    lines += ["", head]
    for r in t.to_dict("records"):
        ci = f"[{fmt_(r['ci_low'])}, {fmt_(r['ci_high'])}]"
        line = (f"{r['metric']:{wm}s}  {r['system']:{wsys}s}  {fmt_(r['score']):>{wv}s}  "
                f"{ci:>{wci}s}  {r['n_missing']:>7d}  {r['n_empty']:>5d}  "
                f"{r['n_unparsed']:>8d}")
        if ev.baseline is not None:
            if r["system"] == ev.baseline:
                line += f"  {'baseline':>{wd}s}"
            else:
                dci = f"[{sfmt_(r['delta_low'])}, {sfmt_(r['delta_high'])}]"
                line += f"  {sfmt_(r['delta']):>{wd}s}  {dci:>{wdci}s}  {_pfmt(r['p']):>10s}"
        lines.append(line)
    notes = list(dict.fromkeys(r["note"] for r in t.to_dict("records") if r.get("note")))
    if notes:
        lines += [""] + [f"not estimated ({note}): shown as -" for note in notes]
    if ev.human:
        cis = {k: f"[{sfmt_(v['seg_ci'][0])}, {sfmt_(v['seg_ci'][1])}]" for k, v in ev.human.items()}
        wh = max(map(len, cis.values()))
        lines += ["", "Pearson r with the human scores" + (f" (segments: 95% CI from {ev.n_resamples} resamples of "
                  f"{ev.unit}s)" if ev.n_resamples else "") + ":", f"{'metric':{wm}s}  {'segments':>8s}  "
                  f"{'95% CI':>{wh}s}  {'n':>6s}  {'systems':>8s}  {'n':>3s}"]
        lines += [f"{k:{wm}s}  {fmt_(v['seg_pearson']):>8s}  {cis[k]:>{wh}s}  {v['n_seg']:>6d}  "
                  f"{fmt_(v['sys_pearson']):>8s}  {v['n_sys']:>3d}" for k, v in ev.human.items()]
        hnotes = list(dict.fromkeys(n for v in ev.human.values() for n in (v.get("seg_note"), v.get("sys_note"))
                                    if n))
        lines += [f"note: {n}" for n in hnotes]
    lines += ["", "signatures:"] + [f"  {k}: {v}" for k, v in ev.signatures.items()]
    hyp_f, ref_f = failure_lists(ev)
    if hyp_f or ref_f:
        lines += ["", "sentences without a parse (1-based lines; an unparsed hypothesis gets the worst value of the "
                      "metrics that need the parse; a segment none of whose references is parsed is left out, for "
                      "every system):"]
        for s, what, idx in hyp_f:
            lines.append(f"  {s}: {what}: {len(idx)} ({_lines(idx, 20)})")
        for what, idx in ref_f:
            lines.append(f"  {what}: {len(idx)} ({_lines(idx, 20)})")
    if segment_level:
        lines += ["", ev.segments.to_string(index=False, float_format=lambda v: f"{v:.{width}f}")]
    return "\n".join(lines) + "\n"


# ============================================================================================== WMT layout, human scores


def write_mtme(ev: Evaluation, out: str | Path, ref_names: list[str]) -> dict:
    """Write every metric of ``ev`` in the metrics task's format: ``OUT/<metric>-<refs>.seg.score`` (each system's
    segment scores in segment order, ``system<TAB>score``) and ``.sys.score`` (its corpus score). ``<refs>`` is the
    reference names joined by ``.`` (``refA.refB``). A segment without a parse (no score) is written as 0: the
    task allows no missing metric score; the counts are returned under ``"zeros"``."""
    out = Path(out)
    systems = list(dict.fromkeys(ev.segments["system"]))
    check_mtme_output(out, systems, [m.name for m in ev.metrics])
    tag = ".".join(ref_names)
    files, zeros = [], {}
    for m in ev.metrics:
        seg = {}
        zeros[m.name] = 0
        for s in systems:
            col = ev.segments.loc[ev.segments["system"] == s, m.name].to_numpy(dtype=float)
            zeros[m.name] += int(np.isnan(col).sum())
            seg[s] = np.nan_to_num(col, nan=0.0).tolist()
        files.append(D.write_mtme_scores(out / f"{mtme_metric_name(m.name)}-{tag}.seg.score", seg))
        files.append(D.write_mtme_scores(out / f"{mtme_metric_name(m.name)}-{tag}.sys.score",
                                         {s: [float(ev.scores[(s, m.name)].score)] for s in systems}))
    return {"files": files, "zeros": zeros}


def mtme_metric_name(name: str) -> str:
    """A metric's name in the layout's file names: the ASCII spelling of a decay variant (``"TKM λ=0.4"`` ->
    ``"TKM-lam0.4"``, which ``-m`` also reads)."""
    return name.replace(" λ=", "-lam")


def check_mtme_output(out: str | Path, systems: list[str], metrics: list[str]) -> None:
    """``--write-mtme OUT``, checked before any work: OUT is a folder (or can be made) that can be written, and
    every system and metric name can be a field and a file name of the layout (no white space, no ``/``).
    Raises :class:`ScoreInputError` with one line."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ScoreInputError(f"--write-mtme {out} is a file, not a folder")
    bad = [s for s in systems if not s or any(c.isspace() for c in s)]
    if bad:
        raise ScoreInputError(f"--write-mtme: system name {bad[0]!r} holds white space, which the layout's "
                              f"'SYSTEM SCORE' lines cannot hold; rename its file")
    for name in metrics:
        if any(c.isspace() or c in "/\\" for c in mtme_metric_name(name)):
            raise ScoreInputError(f"--write-mtme: metric name {name!r} cannot be a file name of the layout")
    probe = out
    while not probe.exists():
        if probe.parent == probe:
            break
        probe = probe.parent
    if not probe.is_dir():
        raise ScoreInputError(f"--write-mtme {out}: {probe} is a file, not a folder")
    try:
        with tempfile.TemporaryFile(dir=probe):
            pass
    except OSError as e:
        raise ScoreInputError(f"--write-mtme {out}: cannot write in {probe} ({e.strerror or type(e).__name__})") \
            from None


def _left_out(ev: Evaluation, n_refs: int) -> dict[str, set[int]]:
    """``{kind: segments none of whose ``n_refs`` references has a parse of that kind}`` (left out for every
    system)."""
    out: dict[str, set[int]] = {}
    f = next(iter(ev.failures.values()), {}) if ev.failures else {}
    for kind in {k.split()[0] for k in f if " ref " in k}:
        refs = [set(v) for k, v in f.items() if k.startswith(f"{kind} ref ")]
        out[kind] = set.intersection(*refs) if len(refs) == n_refs else set()
    return out


def read_documents(args: argparse.Namespace, n: int) -> list[str] | None:
    """The document of every segment (``--documents``), or None."""
    if args.documents is None:
        return None
    path = args.documents
    if path == "":
        if args.mtme is None:
            raise ScoreInputError("--documents without a file needs --mtme (its documents/LP.docs)")
        path = D.mtme_files(args.mtme, args.lp).documents
        if path is None:
            raise ScoreInputError(f"--documents: {args.mtme} has no documents/{args.lp}.docs")
    if not Path(path).is_file():
        raise ScoreInputError(f"--documents {path}: no such file")
    _, docs = D.read_mtme_documents(path)
    if len(docs) != n:
        raise ScoreInputError(f"--documents {path} has {len(docs)} lines, the systems have {n} segments")
    return docs


SEGMENT_FILES_ONLY = ("only segment-level human scores are read: a LP.NAME.seg.score file (one line per system and "
                      "segment) or a TSV with columns system, seg_id, score (the system-level r uses each system's "
                      "mean segment score)")


def read_human_scores(args: argparse.Namespace, systems: list[str], n: int) -> dict[str, np.ndarray]:
    """``--human-scores``: ``{system: n segment scores}`` (NaN where missing) from a ``.seg.score`` file of the
    layout (or its NAME with ``--mtme``) or a TSV ``system, seg_id, score``."""
    spec = args.human_scores
    path = Path(spec)
    if not path.is_file() and args.mtme is not None:
        files = D.mtme_files(args.mtme, args.lp)
        found = files.human.get((spec, "seg"))
        if found is None and (spec, "sys") in files.human:
            raise ScoreInputError(f"--human-scores {spec}: there is no {args.lp}.{spec}.seg.score, only the "
                                  f"system-level {files.human[(spec, 'sys')].name}; {SEGMENT_FILES_ONLY}")
        if found is None:
            raise ScoreInputError(f"--human-scores {spec}: neither a file nor {args.lp}.{spec}.seg.score in "
                                  f"{Path(args.mtme) / 'human-scores'}" + D.ignored_note(files))
        path = found
    if not path.is_file():
        raise ScoreInputError(f"--human-scores {spec}: no such file")
    if path.name.endswith(".sys.score"):
        raise ScoreInputError(f"--human-scores {path} is a system-level score file (.sys.score); "
                              f"{SEGMENT_FILES_ONLY}")
    if path.name.endswith(".score"):
        raw = D.read_mtme_scores(path)
        if n > 1 and raw and all(len(v) == 1 for v in raw.values()):
            raise ScoreInputError(f"--human-scores {path} holds one score per system (system-level scores); "
                                  f"{SEGMENT_FILES_ONLY}")
        scores = D.mtme_seg_scores(path, systems, n)
    else:  # the kit's one score-table reader (ids, names or file stems, numbers, duplicates checked)
        t = D.read_score_table(path, n, systems, aliases=file_aliases(systems, args.input), required=("score",))
        for note in (t.attrs.get("left_out_note"), alias_note(t.attrs.get("aliases_used"))):
            if note:
                print(f"syneval-nb score: note: {note}", file=sys.stderr)
        scores = {s: np.full(n, np.nan) for s in systems}
        for s, g in (t.groupby("system") if "system" in t.columns else [(systems[0], t)]):
            scores[s][g["seg_id"].to_numpy(dtype=int)] = g["score"].to_numpy(dtype=float)
    if all(np.isnan(v).all() for v in scores.values()):
        raise ScoreInputError(f"--human-scores {path}: no score for any of the systems {systems}")
    unrated = [s for s, v in scores.items() if np.isnan(v).all()]
    if unrated:
        print(f"syneval-nb score: note: --human-scores {path} has no score for {len(unrated)} of the "
              f"{len(systems)} systems ({', '.join(unrated[:5])}{', ...' if len(unrated) > 5 else ''}): the "
              f"correlations leave them out", file=sys.stderr)
    return scores


def human_correlations(ev: Evaluation, human: dict[str, np.ndarray], groups=None) -> dict[str, dict]:
    """Each metric's Pearson r with the human scores: over all (system, segment) pairs both score (``seg``), with a
    95% percentile interval from ``ev.n_resamples`` resamples (``ev.seed``) of source segments, or of whole
    documents when ``groups`` (each segment's document) is given (:func:`syneval_nb.stats.bootstrap_ci`), and over
    the systems' corpus scores against their mean human score (``sys``), by the kit's
    :func:`syneval_nb.stats.pearson`."""
    out = {}
    systems = list(dict.fromkeys(ev.segments["system"]))
    h = np.concatenate([human[s] for s in systems])
    seg = np.concatenate([ev.segments.loc[ev.segments["system"] == s, "seg"].to_numpy() for s in systems])
    docs = None if groups is None else np.asarray(groups, dtype=object)[seg]
    h_sys = np.array([np.nanmean(human[s]) if not np.isnan(human[s]).all() else np.nan for s in systems])
    for m in ev.metrics:
        x = np.concatenate([ev.segments.loc[ev.segments["system"] == s, m.name].to_numpy(dtype=float)
                            for s in systems])
        ok = np.isfinite(x) & np.isfinite(h)
        seg_r, seg_note = _r_or_reason(x[ok], h[ok], "segment", "(system, segment) pairs with both scores")
        ci = [math.nan, math.nan]
        if not seg_note and ev.n_resamples:  # one segment or document: no interval (bootstrap_ci gives NaN)
            b = bootstrap_ci(x[ok], h[ok], "pearson", seg[ok], None if docs is None else docs[ok], ev.n_resamples,
                             seed=ev.seed)
            ci = [b.low, b.high]
            if not np.isfinite(ci).any():
                seg_note = f"segment-level r: no interval from one {ev.unit} (every resample is the data)"
        xs = np.array([ev.scores[(s, m.name)].score for s in systems], dtype=float)
        oks = np.isfinite(xs) & np.isfinite(h_sys)
        sys_r, sys_note = _r_or_reason(xs[oks], h_sys[oks], "system", "rated systems")
        if not sys_note and oks.sum() == 3:
            sys_note = ("system-level r from only 3 rated systems: one degree of freedom, so |r| near 1 is likely by "
                        "chance")
        out[m.name] = {"seg_pearson": seg_r, "seg_ci": ci, "n_seg": int(ok.sum()), "sys_pearson": sys_r,
                       "n_sys": int(oks.sum()), "seg_note": seg_note, "sys_note": sys_note}
    return out


def _r_or_reason(x: np.ndarray, h: np.ndarray, level: str, what: str) -> tuple[float, str]:
    """Pearson r, or NaN and why it cannot be estimated (fewer than 3 items, constant scores)."""
    if len(x) < 3:
        return math.nan, f"{level}-level r not estimated: {len(x)} {what} (at least 3 are needed)"
    if np.ptp(h) == 0:
        return math.nan, f"{level}-level r not estimated: the human scores are constant"
    if np.ptp(x) == 0:
        return math.nan, f"{level}-level r not estimated: a metric's scores are constant"
    return float(pearson(x, h)), ""


# ============================================================================================== CLI


DESCRIPTION = """\
Score one or more systems' plain-text output against references, sacrebleu style:
one segment per line (UTF-8), every file line-aligned; -i - reads one system from stdin.

Output: every system's corpus score (0-1 scale, NIST in bits) with a 95% interval from
resampling segments (--n-bootstrap resamples, --seed), and each metric's signature.
BLEU is sacrebleu's corpus_bleu divided by 100. Parses are made (through the parse
cache) only when a syntactic metric is asked for, RST trees only for dr and dr-lex;
--parses DIR reads ready ones. An empty or unparsed hypothesis line gets the metric's
worst value. STM, DSTM, HWCM, TKM and DTKM are scored as their -BP variants (times
BLEU's brevity penalty), so that no system gains by deleting or truncating lines.

--paired-bootstrap compares every system with --baseline on the same resamples:
delta = system - baseline (for TER, WER and PER a negative delta is better) and
p = (k + 1) / (B + 1), k the resamples in which the system is not better, out of B
(one-sided, never 0; printed as "p < 0.001" below 0.001).

Errors print one line and exit with code 2."""

EPILOG = """\
examples:
  syneval-nb score -r ref.A.txt -i sysA.txt sysB.txt -m bleu,chrf,stm --paired-bootstrap
  cat sysA.txt | syneval-nb score -r ref.A.txt -i - -m bleu,chrf --score-only
  syneval-nb score --mtme DIR --lp zh-en --human-scores mqm --write-mtme OUT"""


def _argparser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="syneval-nb score", description=DESCRIPTION, epilog=EPILOG,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-r", "--refs", nargs="+", default=None, metavar="FILE", help="reference files (line-aligned)")
    ap.add_argument("-i", "--input", nargs="+", default=None, metavar="FILE",
                    help="system output files; - reads one system from stdin (named 'stdin')")
    ap.add_argument("--mtme", default=None, metavar="DIR",
                    help="a test set in the WMT metrics-task layout (instead of -r/-i): every system of "
                         "DIR/system-outputs/LP/ against DIR/references/LP.REF.txt")
    ap.add_argument("--lp", default=None, help="language pair of --mtme, e.g. zh-en")
    ap.add_argument("--ref", default=None, metavar="NAME[,NAME]",
                    help="reference(s) of --mtme to score against (default: all of them)")
    ap.add_argument("--human-scores", default=None, metavar="NAME|FILE",
                    help="segment-level human scores: a LP.NAME.seg.score file (or NAME with --mtme), or a TSV "
                         "with columns system, seg_id (0-based), score; adds each metric's Pearson r with them "
                         "(.sys.score files are not read: the system-level r uses the mean segment scores)")
    ap.add_argument("--documents", nargs="?", const="", default=None, metavar="FILE",
                    help="resample whole documents: a .docs file (DOMAIN DOCNAME per segment; without FILE: "
                         "the --mtme folder's documents/LP.docs)")
    ap.add_argument("--write-mtme", default=None, metavar="OUT",
                    help="write every metric as OUT/<metric>-<ref>.seg.score and .sys.score (needs --mtme)")
    ap.add_argument("-m", "--metrics", default=",".join(M.DEFAULT_METRICS),
                    help="comma-separated metric names (default: the kit's one list, " + ",".join(M.DEFAULT_METRICS)
                         + "); known: " + ", ".join(M.names()) + "; or a model file of syneval-nb fit")
    ap.add_argument("--names", default=None, help="comma-separated system names (default: the file stems, e.g. sysA for sysA.txt)")
    ap.add_argument("--format", choices=("text", "json", "tsv"), default="text",
                    help="text: a table for people (default); json: every number with the signatures; tsv: one "
                         "row per system and metric, full precision")
    ap.add_argument("-b", "--score-only", action="store_true",
                    help="print only the scores, one number per line: each metric of -m (in that order) for each "
                         "system of -i (in that order), as sacrebleu's -b; no intervals are computed")
    ap.add_argument("-w", "--width", type=int, default=WIDTH, metavar="N",
                    help=f"decimal places of the printed numbers (default {WIDTH}; json and tsv keep every digit)")
    ap.add_argument("--segment-level", action="store_true", help="also print every segment's scores")
    ap.add_argument("--sentence-bleu", choices=("papers", "sacrebleu"), default="papers",
                    help="BLEU: 'papers' (default): every order up to 4 counts, as in corpus BLEU (eff:no; a line of "
                         "fewer than 4 tokens scores 0); 'sacrebleu': effective order (eff:yes), so that segment "
                         "BLEU equals sacrebleu's sentence_bleu")
    ap.add_argument("--paired-bootstrap", action="store_true", help="test every system against --baseline")
    ap.add_argument("--no-brevity-penalty", action="store_true",
                    help="score STM, DSTM, HWCM, TKM and DTKM as the paper's definitions (default: their -BP "
                         "variants, so that no system gains by deleting or truncating lines)")
    ap.add_argument("--baseline", default=None, help="baseline system (name or file; default: the first -i file)")
    ap.add_argument("--n-bootstrap", type=int, default=1000, help="bootstrap resamples (default 1000; 0: none)")
    ap.add_argument("--seed", type=int, default=0,
                    help="seed of the bootstrap resamples (default 0; the same seed gives the same intervals)")
    ap.add_argument("--parses", default=None, metavar="DIR",
                    help="read ready parses: DIR/<file name>.ptb and .jsonl (also one folder below DIR)")
    ap.add_argument("--workers", type=int, default=1, help="parser processes (default 1)")
    ap.add_argument("--max-length", type=int, default=None, metavar="N",
                    help="longest sentence the Stanford parser parses, in tokens (default 200; README: Parsing)")
    ap.add_argument("--split", choices=("sentences", "lines"), default=None,
                    help="Stanford parses: each sentence of a line on its own, trees joined (default), or each line "
                         "as one sentence (the shipped parses)")
    ap.add_argument("--scheduler", default=None, metavar="tcp://HOST:PORT",
                    help="parse on this Dask cluster (see README: More than one machine)")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--cache", default=None, metavar="PATH", help="parse cache file (default: the kit's cache)")
    g.add_argument("--no-cache", action="store_true", help="parse everything again and store nothing")
    ap.add_argument("-o", "--output", default=None, metavar="FILE", help="write the output here (default: stdout)")
    ap.add_argument("-q", "--quiet", action="store_true", help="no progress bars")
    return ap


def _print_error(msg: str) -> int:
    print(f"syneval-nb score: error: {msg}", file=sys.stderr)
    return 2


_error = _print_error


STDIN_NAME = "stdin"  # the system read from stdin (-i -): its name and the file name of its temporary copy


def cli(argv: list[str] | None = None) -> int:
    """``syneval-nb score`` (see the module docstring). ``-i -`` reads one system from stdin (copied into a
    temporary file named ``stdin`` as it is, so the one line reader checks it as any file; removed at the end)."""
    args = _argparser().parse_args(argv)
    if args.refs and "-" in args.refs:
        return _error("-r -: stdin can be one system (-i -), not a reference")
    if args.input and args.input.count("-") > 1:
        return _error("-i: stdin (-) can be given once (it holds one system)")
    if args.input and "-" in args.input:
        tmp = tempfile.mkdtemp(prefix="syneval-nb-stdin-")
        path = Path(tmp) / STDIN_NAME
        path.write_bytes(sys.stdin.buffer.read())
        args.input = [str(path) if f == "-" else f for f in args.input]
        try:
            return _cli(args, str(path))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return _cli(args, None)


def _cli(args: argparse.Namespace, stdin_file: str | None) -> int:
    def _error(msg: str) -> int:  # a message names stdin, not its temporary copy
        return _print_error(msg.replace(stdin_file, "stdin (-i -)") if stdin_file else msg)

    if args.width < 0 or args.width > 17:
        return _error(f"--width {args.width}: give 0 to 17 decimal places")
    if args.score_only and (args.format != "text" or args.segment_level or args.paired_bootstrap):
        return _error("--score-only prints the corpus scores alone: give it without --format json/tsv, "
                      "--segment-level and --paired-bootstrap")
    try:
        specs = [s.strip() for s in args.metrics.split(",") if s.strip()]
        if not specs:
            return _error("no metric given (-m)")
        objs, bp_map = comparison_metrics(specs, brevity_penalty=not args.no_brevity_penalty)
        if args.sentence_bleu == "sacrebleu":
            for m in objs:
                if isinstance(m, lexical.BLEU):
                    m.effective_order = True  # sacrebleu's sentence_bleu (the signature says eff:yes)
        need = {i for m in objs for i in m.inputs} - {"text"}
        names = [s.strip() for s in args.names.split(",")] if args.names else None
        cache: Any = None if args.no_cache else (args.cache or True)
        frame = None
        if args.mtme is not None:
            if args.refs or args.input or names:
                return _error("--mtme reads the systems and references of the layout: give no -r, -i or --names")
            if not args.lp:
                return _error("--mtme needs --lp (the language pair, e.g. zh-en)")
            ref_names = [r.strip() for r in args.ref.split(",") if r.strip()] if args.ref else None
            frame = D.load_mtme(args.mtme, args.lp, refs=ref_names, human=[])
            args.refs = list(frame.attrs["ref_files"])
            args.input = list(frame.attrs["system_files"].values())
            names = list(frame.attrs["system_files"])
        elif not (args.refs and args.input):
            return _error("give -r (references) and -i (systems), or --mtme DIR --lp LP")
        elif args.lp or args.ref:
            return _error("--lp and --ref go with --mtme")
        if args.write_mtme is not None and frame is None:
            return _error("--write-mtme needs --mtme (the reference names of the file names come from the layout)")
        if args.write_mtme is not None:  # before any work: a folder that can be written, names the layout can hold
            check_mtme_output(args.write_mtme, names, [m.name for m in objs])
        if args.n_bootstrap < 0 or 0 < args.n_bootstrap < 100:
            return _error(f"--n-bootstrap {args.n_bootstrap}: give 0 (no intervals) or at least 100 resamples "
                          "(fewer cannot give a 95% interval)")
        if args.paired_bootstrap and len(args.input) < 2:
            return _error("--paired-bootstrap compares systems with a baseline: give at least two -i files")
        for p in args.refs + args.input if args.output else ():
            check_output_path(args.output, p)  # before any work: not an input, a folder or an unwritable place
        if cache not in (None, True):
            with ParseCache(cache) as c:  # a folder, a damaged or foreign file, or an unreadable one: refused now
                note = read_only_note(c)
            if note:
                print(f"syneval-nb score: note: {note}", file=sys.stderr)
        corpora = load_files(args.refs, args.input, names=names, parses_dir=args.parses, need=need,
                             workers=args.workers, cache=cache, progress=not args.quiet)
        n_seg = len(next(iter(corpora.values())))
        groups = read_documents(args, n_seg)
        human = read_human_scores(args, list(corpora), n_seg) if args.human_scores else None
        if "ptb" in need and args.scheduler is None and any(c.hyp_ptb is None for c in corpora.values()):
            find_java()  # fail before any work when parses must be made and Java is missing
        baseline = None
        if args.paired_bootstrap or args.baseline:
            sysnames = list(corpora)
            b = args.baseline or sysnames[0]
            if b not in corpora:
                hits = [s for s, f in zip(sysnames, args.input) if Path(f) == Path(b) or b in (Path(f).name, Path(f).stem)]
                if not hits:
                    return _error(f"--baseline {b!r} is not one of the systems {sysnames}")
                b = hits[0]
            baseline = b
        if args.no_brevity_penalty and any(getattr(m, "brevity_penalty", True) is False for m in objs):
            print("syneval-nb score: warning: --no-brevity-penalty: STM, DSTM, HWCM, TKM and DTKM without BLEU's "
                  "brevity penalty (the paper's definitions): a system can raise them by deleting or truncating "
                  "lines", file=sys.stderr)
        ev = evaluate(corpora, objs, n_resamples=0 if args.score_only else max(0, args.n_bootstrap),
                      seed=args.seed, baseline=baseline,
                      progress=not args.quiet, workers=args.workers, cache=cache, scheduler=args.scheduler,
                      groups=groups, brevity_penalty=False, unit=None if groups is None else "document",
                      max_length=args.max_length, split=args.split)
        ev.brevity_penalty = bp_map
        if groups is not None:
            ev.unit = "document"
        if human is not None:
            ev.human = human_correlations(ev, human, groups)
        if args.write_mtme is not None:
            written = write_mtme(ev, args.write_mtme, frame.attrs["ref_names"])
    except (M.UnknownMetricError, OutputPathError, CacheError) as e:
        return _error(str(e).splitlines()[0])
    except (ScoreInputError, InputEncodingError, M.ReferenceLayoutError, D.MtmeFormatError) as e:
        return _error(str(e))
    except ParserSetupError as e:
        return _error(f"the syntactic metrics need parses and the parser cannot run: {str(e).splitlines()[0]} "
                      f"(or give ready parses with --parses DIR)")
    except ValueError as e:
        return _error(str(e).splitlines()[0] if str(e) else type(e).__name__)
    except RuntimeError as e:
        if type(e).__name__ != "ClusterError":  # syneval_nb.parsers.dask (not imported without --scheduler)
            raise
        return _error(str(e).splitlines()[0])
    hyp_f, ref_f = failure_lists(ev)
    left = _left_out(ev, len(args.refs))
    for what, idx in ref_f:  # the references are the same for every system: said once
        kind = what.split()[0]
        out = sorted(set(idx) & left.get(kind, set()))
        print(f"syneval-nb score: {len(idx)} {what} sentences without a parse (lines {_lines(idx, 10)})"
              + (f"; {len(out)} segment(s) without any parsed reference are left out for every system (lines "
                 f"{_lines(out, 10)})" if out else "; their segments are scored against the other references"),
              file=sys.stderr)
    for s, what, idx in hyp_f:
        kind = what.split()[0]
        scored = [i for i in idx if i not in left.get(kind, set())]
        if scored:
            print(f"syneval-nb score: {s}: {len(scored)} {what} sentences without a parse (lines "
                  f"{_lines(scored, 10)}): scored with the worst value of the metrics that need it", file=sys.stderr)
    blanks = {s: v for s, v in ev.empty.items() if v}
    for s, idx in blanks.items():
        print(f"syneval-nb score: {s}: {len(idx)} empty lines ({_lines(idx, 10)}): scored with every metric's "
              f"worst value", file=sys.stderr)
    if args.write_mtme is not None:
        for metric, zeros in written["zeros"].items():
            if zeros:
                print(f"syneval-nb score: {metric}: {zeros} segment scores without a parse written as 0 in "
                      f"{args.write_mtme} (the metrics task allows no missing metric score)", file=sys.stderr)
        print(f"syneval-nb score: wrote {len(written['files'])} score files to {args.write_mtme}", file=sys.stderr)
    text = score_only(ev, args.width) if args.score_only else render(ev, args.format, args.segment_level,
                                                                     args.width)
    if args.output:
        write_output(args.output, lambda tmp: tmp.write_text(text, encoding="utf-8"))
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(cli())
