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
out). A line the parser could not parse is reported by line number and left out of the syntactic averages; the
output gives the count per system and metric (``missing``).

Output: every system's corpus score (the Python API's ``corpus_score``; 0-1 scale, NIST in bits) with a 95%
percentile interval from resampling segments (``--n-bootstrap`` resamples, ``--seed``), and each metric's
signature. ``--paired-bootstrap`` compares every system with ``--baseline`` (default: the first ``-i`` file) on the
same resamples: ``delta`` = system - baseline (so for TER, WER and PER, where lower is better, a negative delta is an
improvement) and ``p`` = the share of resamples in which the system is not better than the baseline (one-sided).
The BLEU named ``BLEU`` is sacrebleu's ``corpus_bleu`` (13a tokens, exp smoothing) divided by 100.

Errors (mismatched line counts, an empty or missing file, non-UTF-8 input, an unknown metric, no Java when parses
must be made) print one line and exit with code 2.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from . import metrics as M

__all__ = ["Evaluation", "evaluate", "load_files", "find_parse_file", "cli"]


class ScoreInputError(ValueError):
    """Bad input files (the message is the one line the CLI prints)."""


# ============================================================================================== engine


@dataclass
class Evaluation:
    """Scores of several systems by several metrics on the same segments.

    ``table``: one row per (system, metric): ``system, metric, score, ci_low, ci_high, n, n_missing,
    higher_is_better, signature`` and, with a baseline, ``delta, delta_low, delta_high, p`` (share of resamples
    where the system is not better than the baseline) and ``p_worse`` (share where it is not worse).
    ``segments``: one row per (system, segment) with ``system, seg`` (0-based line) and one column per metric.
    ``scores``: ``{(system, metric): Score}``; ``stats``: ``{(system, metric): statistics matrix}``;
    ``metrics``: the metric objects in order; ``failures``: ``{system: Corpus.failures}``."""

    table: Any
    segments: Any
    scores: dict
    stats: dict
    metrics: list
    failures: dict
    baseline: str | None = None
    n_resamples: int = 0
    seed: int = 0
    signatures: dict = field(default_factory=dict)


def _weighted_scores(metric: M.Metric, S: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    """The metric's corpus score in each bootstrap resample of segments (the same resamples for every call with
    the same ``seed`` and number of segments: :func:`syneval_nb.stats.bootstrap_weights`)."""
    from .stats import bootstrap_weights

    S0 = np.where(np.isnan(S).any(axis=1)[:, None], 0.0, S)
    out = [metric.score_from_stats(w @ S0) for w in bootstrap_weights(len(S0), n_resamples, seed)]
    return np.concatenate(out) if out else np.zeros(0)


def evaluate(corpora: Mapping[str, M.Corpus], metric_specs: Sequence[Any], *, n_resamples: int = 1000,
             seed: int = 0, baseline: str | None = None, alpha: float = 0.05, progress: bool = True,
             workers: int = 1, cache: Any = True, scheduler: Any = None) -> Evaluation:
    """Score every system (``{name: Corpus}``, same segments) with every metric; intervals and paired tests from
    resampling segments (``n_resamples = 0``: no intervals). Parses/RST trees the metrics need and the corpora
    lack are made first, all at once (:func:`syneval_nb.metrics.prepare`; on a Dask cluster with ``scheduler``)."""
    import pandas as pd
    from tqdm.auto import tqdm

    from .stats import percentile_ci

    objs = [M.get(s) for s in metric_specs]
    systems = list(corpora)
    if not systems:
        raise ValueError("no systems to score")
    n = {len(c) for c in corpora.values()}
    if len(n) != 1:
        raise ValueError(f"the systems have different numbers of segments: { {k: len(c) for k, c in corpora.items()} }")
    if baseline is not None and baseline not in corpora:
        raise ValueError(f"baseline {baseline!r} is not one of the systems {systems}")
    needs = {i for m in objs for i in m.inputs}
    M.prepare(list(corpora.values()), tuple(needs - {"text"}), workers=workers, cache=cache, progress=progress,
              scheduler=scheduler)
    scores, stats, boot, rows = {}, {}, {}, []
    seg = {s: {"system": [s] * len(c), "seg": list(range(len(c)))} for s, c in corpora.items()}
    todo = [(s, m) for m in objs for s in systems]
    for s, m in tqdm(todo, desc="scoring", disable=not progress, leave=False):
        S = m.segment_stats(corpora[s])
        stats[(s, m.name)] = S
        scores[(s, m.name)] = m.corpus_from_stats(S)
        ok = ~np.isnan(S).any(axis=1)
        col = np.full(len(S), np.nan)
        if ok.any():
            col[ok] = m.score_from_stats(S[ok])
        seg[s][m.name] = col
        if n_resamples:
            boot[(s, m.name)] = _weighted_scores(m, S, n_resamples, seed)
    for m in objs:
        for s in systems:
            sc = scores[(s, m.name)]
            row = {"system": s, "metric": m.name, "score": sc.score, "ci_low": math.nan, "ci_high": math.nan,
                   "n": sc.n, "n_missing": sc.n_missing, "higher_is_better": m.higher_is_better,
                   "signature": sc.signature}
            if n_resamples:
                lo, hi = percentile_ci(boot[(s, m.name)], alpha)
                row["ci_low"], row["ci_high"] = float(lo), float(hi)
            if baseline is not None:
                row.update(delta=sc.score - scores[(baseline, m.name)].score, delta_low=math.nan,
                           delta_high=math.nan, p=math.nan, p_worse=math.nan)
                if n_resamples and s != baseline:
                    d = boot[(s, m.name)] - boot[(baseline, m.name)]
                    lo, hi = percentile_ci(d, alpha)
                    better = d if m.higher_is_better else -d
                    ok = np.isfinite(better)
                    row.update(delta_low=float(lo), delta_high=float(hi),
                               p=float((better[ok] <= 0).mean()) if ok.any() else math.nan,
                               p_worse=float((better[ok] >= 0).mean()) if ok.any() else math.nan)
            rows.append(row)
    table = pd.DataFrame(rows)
    segments = pd.concat([pd.DataFrame(v) for v in seg.values()], ignore_index=True)
    failures = {s: {f"{k[0]} {k[1]}": v for k, v in c.failures.items() if v} for s, c in corpora.items()}
    return Evaluation(table, segments, scores, stats, objs, failures, baseline, n_resamples, seed,
                      {m.name: scores[(systems[0], m.name)].signature for m in objs})


# ============================================================================================== files


def _read(path: str | Path, what: str) -> list[str]:
    from .textio import read_lines

    p = Path(path)
    if not p.is_file():
        raise ScoreInputError(f"{what} {p}: no such file")
    lines = read_lines(p)
    if not lines:
        raise ScoreInputError(f"{what} {p} is empty")
    return lines


def find_parse_file(parses_dir: str | Path, text_file: str | Path, suffix: str) -> Path | None:
    """``DIR/<file name><suffix>``, else the one ``DIR/*/<file name><suffix>`` (the shipped data's layout)."""
    d = Path(parses_dir)
    name = Path(text_file).name + suffix
    if (d / name).is_file():
        return d / name
    hits = sorted(d.glob(f"*/{name}"))
    if len(hits) > 1:
        raise ScoreInputError(f"--parses {d}: several {name} ({', '.join(str(h) for h in hits)})")
    return hits[0] if hits else None


def _read_parses(parses_dir: str | Path | None, files: Sequence[str], n: int, need: set[str]):
    """Ready parses from ``--parses``: ``{file: (ptb lines or None, rst trees or None)}``."""
    from .discourse import load_rst_jsonl

    out = {}
    for f in files:
        ptb = rst = None
        if parses_dir is not None:
            if "ptb" in need and (p := find_parse_file(parses_dir, f, ".ptb")) is not None:
                ptb = _read(p, "parse file")
                if len(ptb) != n:
                    raise ScoreInputError(f"parse file {p} has {len(ptb)} lines but {f} has {n}")
            if "rst" in need and (p := find_parse_file(parses_dir, f, ".jsonl")) is not None:
                rst = load_rst_jsonl(p)
                if len(rst) != n:
                    raise ScoreInputError(f"RST file {p} has {len(rst)} lines but {f} has {n}")
        out[f] = (ptb, rst)
    return out


def system_names(files: Sequence[str]) -> list[str]:
    """File names as system names (the shortest distinct tail of the paths)."""
    names = [Path(f).name for f in files]
    if len(set(names)) == len(names):
        return names
    return [str(f) for f in files]


def load_files(ref_files: Sequence[str], hyp_files: Sequence[str], *, names: Sequence[str] | None = None,
               parses_dir: str | Path | None = None, need: set[str] = frozenset(), workers: int = 1,
               cache: Any = True, progress: bool = True) -> dict[str, M.Corpus]:
    """Read the files into ``{system: Corpus}`` (ready parses from ``parses_dir`` attached; the missing ones are
    made later, when a metric needs them). Raises :class:`ScoreInputError` with a one-line message."""
    refs = [_read(f, "reference file") for f in ref_files]
    hyps = [_read(f, "system file") for f in hyp_files]
    n = len(refs[0])
    for f, lines in list(zip(ref_files, refs)) + list(zip(hyp_files, hyps)):
        if len(lines) != n:
            raise ScoreInputError(f"{f} has {len(lines)} lines but {ref_files[0]} has {n}: the files must be "
                                  f"line-aligned (one segment per line)")
    names = list(names) if names else system_names(hyp_files)
    if len(names) != len(hyp_files) or len(set(names)) != len(names):
        raise ScoreInputError(f"need {len(hyp_files)} distinct system names, got {names}")
    ready = _read_parses(parses_dir, list(ref_files) + list(hyp_files), n, set(need))
    ref_ptb = [ready[f][0] for f in ref_files]
    ref_rst = [ready[f][1] for f in ref_files]
    out = {}
    for name, f, h in zip(names, hyp_files, hyps):
        hp, hr = ready[f]
        out[name] = M.Corpus(h, refs, ref_layout="streams",
                             hyp_ptb=hp if hp is not None and all(r is not None for r in ref_ptb) else None,
                             ref_ptb=ref_ptb if hp is not None and all(r is not None for r in ref_ptb) else None,
                             hyp_rst=hr if hr is not None and all(r is not None for r in ref_rst) else None,
                             ref_rst=ref_rst if hr is not None and all(r is not None for r in ref_rst) else None,
                             workers=workers, cache=cache, progress=progress,
                             parse_source="given" if parses_dir else None)
    return out


# ============================================================================================== output


def _fmt(v: float) -> str:
    return f"{v:.4f}" if isinstance(v, (int, float)) and math.isfinite(v) else "-"


def _records(ev: Evaluation, segment_level: bool) -> dict:
    scores = []
    for r in ev.table.to_dict("records"):
        sc = ev.scores[(r["system"], r["metric"])]
        rec = {"system": r["system"], **sc.to_dict(), "ci": [r["ci_low"], r["ci_high"]],
               "higher_is_better": bool(r["higher_is_better"])}
        if ev.baseline is not None:
            rec.update(baseline=ev.baseline, delta=r["delta"], delta_ci=[r["delta_low"], r["delta_high"]], p=r["p"])
        scores.append(rec)
    out = {"scores": scores, "signatures": ev.signatures, "n_segments": int(ev.table["n"].iloc[0]),
           "bootstrap": {"n_resamples": ev.n_resamples, "seed": ev.seed, "unit": "segment", "ci": 0.95},
           "unparsed": {s: f for s, f in ev.failures.items() if f}}
    if segment_level:
        out["segments"] = {s: {m.name: g[m.name].tolist() for m in ev.metrics}
                           for s, g in ev.segments.groupby("system", sort=False)}
    return out


def _json_safe(o: Any) -> Any:
    if isinstance(o, dict):
        return {k: _json_safe(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_json_safe(v) for v in o]
    if isinstance(o, np.generic):
        o = o.item()
    if isinstance(o, float) and not math.isfinite(o):
        return None
    return o


def render(ev: Evaluation, fmt: str = "text", segment_level: bool = False) -> str:
    """The output of ``syneval-nb score`` in ``text``, ``json`` or ``tsv``."""
    if fmt == "json":
        return json.dumps(_json_safe(_records(ev, segment_level)), indent=1, ensure_ascii=False) + "\n"
    t = ev.table
    cols = ["system", "metric", "score", "ci_low", "ci_high", "n", "n_missing"]
    if ev.baseline is not None:
        cols += ["delta", "delta_low", "delta_high", "p"]
    if fmt == "tsv":
        lines = ["\t".join(cols + ["signature"])]
        for r in t.to_dict("records"):
            lines.append("\t".join(repr(float(r[c])) if isinstance(r[c], float) else str(r[c])
                                   for c in cols + ["signature"]))
        if segment_level:
            lines.append("")
            lines.append(ev.segments.to_csv(sep="\t", index=False, float_format="%.17g").rstrip("\n"))
        return "\n".join(lines) + "\n"
    if fmt != "text":
        raise ValueError(f"unknown format {fmt!r}")
    wsys = max(6, *(len(s) for s in t["system"]))
    wm = max(6, *(len(s) for s in t["metric"]))
    head = f"{'metric':{wm}s}  {'system':{wsys}s}  {'score':>7s}  {'95% CI':>17s}  {'missing':>7s}"
    if ev.baseline is not None:
        head += f"  {'delta':>8s}  {'95% CI of delta':>19s}  {'p':>6s}"
    lines = [f"{t['n'].iloc[0]} segments, {len(ev.scores) // max(1, len(ev.metrics))} systems; 95% intervals from "
             f"{ev.n_resamples} bootstrap resamples of segments (seed {ev.seed})"
             + (f"; paired against {ev.baseline!r} (p: one-sided, system not better)" if ev.baseline else ""),
             "", head]
    for r in t.to_dict("records"):
        line = (f"{r['metric']:{wm}s}  {r['system']:{wsys}s}  {_fmt(r['score']):>7s}  "
                f"[{_fmt(r['ci_low'])}, {_fmt(r['ci_high'])}]  {r['n_missing']:>7d}")
        if ev.baseline is not None:
            if r["system"] == ev.baseline:
                line += f"  {'baseline':>8s}"
            else:
                line += (f"  {r['delta']:+8.4f}  [{r['delta_low']:+.4f}, {r['delta_high']:+.4f}]  "
                         f"{_fmt(r['p']):>6s}")
        lines.append(line)
    lines += ["", "signatures:"] + [f"  {k}: {v}" for k, v in ev.signatures.items()]
    unp = {s: f for s, f in ev.failures.items() if f}
    if unp:
        lines += ["", "sentences without a parse (1-based lines; left out of the metrics that need them):"]
        for s, f in unp.items():
            for what, idx in f.items():
                shown = ", ".join(str(i + 1) for i in idx[:20]) + (" ..." if len(idx) > 20 else "")
                lines.append(f"  {s}: {what}: {len(idx)} ({shown})")
    if segment_level:
        lines += ["", ev.segments.to_string(index=False, float_format=lambda v: f"{v:.4f}")]
    return "\n".join(lines) + "\n"


# ============================================================================================== CLI


def _argparser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="syneval-nb score", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-r", "--refs", nargs="+", required=True, metavar="FILE", help="reference files (line-aligned)")
    ap.add_argument("-i", "--input", nargs="+", required=True, metavar="FILE", help="system output files")
    ap.add_argument("-m", "--metrics", default="bleu,ter,stm,hwcm",
                    help="comma-separated metric names (default: bleu,ter,stm,hwcm); known: "
                         + ", ".join(M.names()))
    ap.add_argument("--names", default=None, help="comma-separated system names (default: the file names)")
    ap.add_argument("--format", choices=("text", "json", "tsv"), default="text")
    ap.add_argument("--segment-level", action="store_true", help="also print every segment's scores")
    ap.add_argument("--paired-bootstrap", action="store_true", help="test every system against --baseline")
    ap.add_argument("--baseline", default=None, help="baseline system (name or file; default: the first -i file)")
    ap.add_argument("--n-bootstrap", type=int, default=1000, help="bootstrap resamples (default 1000; 0: none)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--parses", default=None, metavar="DIR",
                    help="read ready parses: DIR/<file name>.ptb and .jsonl (also one folder below DIR)")
    ap.add_argument("--workers", type=int, default=1, help="parser processes (default 1)")
    ap.add_argument("--scheduler", default=None, metavar="tcp://HOST:PORT",
                    help="parse on this Dask cluster (see README: More than one machine)")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--cache", default=None, metavar="PATH", help="parse cache file (default: the kit's cache)")
    g.add_argument("--no-cache", action="store_true", help="parse everything again and store nothing")
    ap.add_argument("-o", "--output", default=None, metavar="FILE", help="write the output here (default: stdout)")
    ap.add_argument("-q", "--quiet", action="store_true", help="no progress bars")
    return ap


def _error(msg: str) -> int:
    print(f"syneval-nb score: error: {msg}", file=sys.stderr)
    return 2


def cli(argv: list[str] | None = None) -> int:
    """``syneval-nb score`` (see the module docstring)."""
    from .parsing import ParserSetupError, find_java
    from .textio import InputEncodingError

    args = _argparser().parse_args(argv)
    try:
        specs = [s.strip() for s in args.metrics.split(",") if s.strip()]
        if not specs:
            return _error("no metric given (-m)")
        objs = [M.get(s) for s in specs]
        canon = [m.name for m in objs]
        if len(set(canon)) != len(canon):
            return _error(f"a metric is named twice: {canon}")
        need = {i for m in objs for i in m.inputs} - {"text"}
        names = [s.strip() for s in args.names.split(",")] if args.names else None
        cache: Any = None if args.no_cache else (args.cache or True)
        inputs = {str(Path(p).resolve()) for p in args.refs + args.input}
        if args.output and str(Path(args.output).resolve()) in inputs:
            return _error(f"-o {args.output} is one of the input files; it would be overwritten")
        corpora = load_files(args.refs, args.input, names=names, parses_dir=args.parses, need=need,
                             workers=args.workers, cache=cache, progress=not args.quiet)
        if "ptb" in need and args.scheduler is None and any(c.hyp_ptb is None for c in corpora.values()):
            find_java()  # fail before any work when parses must be made and Java is missing
        baseline = None
        if args.paired_bootstrap or args.baseline:
            sysnames = list(corpora)
            b = args.baseline or sysnames[0]
            if b not in corpora:
                hits = [s for s, f in zip(sysnames, args.input) if Path(f) == Path(b) or Path(f).name == b]
                if not hits:
                    return _error(f"--baseline {b!r} is not one of the systems {sysnames}")
                b = hits[0]
            baseline = b
        ev = evaluate(corpora, objs, n_resamples=max(0, args.n_bootstrap), seed=args.seed, baseline=baseline,
                      progress=not args.quiet, workers=args.workers, cache=cache, scheduler=args.scheduler)
    except M.UnknownMetricError as e:
        return _error(str(e))
    except (ScoreInputError, InputEncodingError, M.ReferenceLayoutError) as e:
        return _error(str(e))
    except ParserSetupError as e:
        return _error(f"the syntactic metrics need parses and the parser cannot run: {str(e).splitlines()[0]} "
                      f"(or give ready parses with --parses DIR)")
    except ValueError as e:
        return _error(str(e).splitlines()[0] if str(e) else type(e).__name__)
    except RuntimeError as e:
        if type(e).__name__ != "ClusterError":  # syneval_nb.cluster (not imported without --scheduler)
            raise
        return _error(str(e).splitlines()[0])
    for s, f in ev.failures.items():
        for what, idx in f.items():
            print(f"syneval-nb score: {s}: {len(idx)} {what} sentences without a parse (lines "
                  f"{', '.join(str(i + 1) for i in idx[:10])}{' ...' if len(idx) > 10 else ''}); left out",
                  file=sys.stderr)
    text = render(ev, args.format, args.segment_level)
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(cli())
