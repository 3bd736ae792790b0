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
from pathlib import Path
from typing import Any

import numpy as np
from syneval_nb.evaluate import Evaluation, ScoreInputError, evaluate, find_parse_file, load_files, system_names  # noqa: F401
from syneval_nb.app.files import OutputPathError, check_output_path, write_output
from syneval_nb.parsers.cache import CacheError, ParseCache
from syneval_nb.parsers.stanford import ParserSetupError, find_java
from syneval_nb.textio import InputEncodingError
from syneval_nb.metrics import registry as M


__all__ = ["Evaluation", "evaluate", "load_files", "find_parse_file", "cli"]


def _fmt(v: float) -> str:
    return f"{v:.4f}" if isinstance(v, (int, float)) and math.isfinite(v) else "-"


def _records(ev: Evaluation, segment_level: bool) -> dict:
    scores = []
    for r in ev.table.to_dict("records"):
        sc = ev.scores[(r["system"], r["metric"])]
        rec = {"system": r["system"], **sc.to_dict(), "n_empty": r["n_empty"], "n_unparsed": r["n_unparsed"],
               "ci": [r["ci_low"], r["ci_high"]],
               "higher_is_better": bool(r["higher_is_better"])}
        if ev.baseline is not None:
            rec.update(baseline=ev.baseline, delta=r["delta"], delta_ci=[r["delta_low"], r["delta_high"]], p=r["p"])
        scores.append(rec)
    out = {"scores": scores, "signatures": ev.signatures, "n_segments": int(ev.table["n"].iloc[0]),
           "bootstrap": {"n_resamples": ev.n_resamples, "seed": ev.seed, "unit": "segment", "ci": 0.95},
           "unparsed": {s: {k: [i + 1 for i in v] for k, v in f.items()} for s, f in ev.failures.items() if f},
           "line_numbers": "1-based"}
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
    cols = ["system", "metric", "score", "ci_low", "ci_high", "n", "n_missing", "n_empty", "n_unparsed"]
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
    head = (f"{'metric':{wm}s}  {'system':{wsys}s}  {'score':>7s}  {'95% CI':>17s}  {'missing':>7s}  "
            f"{'empty':>5s}  {'unparsed':>8s}")
    if ev.baseline is not None:
        head += f"  {'delta':>8s}  {'95% CI of delta':>19s}  {'p':>6s}"
    lines = [f"{t['n'].iloc[0]} segments, {len(ev.scores) // max(1, len(ev.metrics))} systems; 95% intervals from "
             f"{ev.n_resamples} bootstrap resamples of segments (seed {ev.seed})"
             + (f"; paired against {ev.baseline!r} (p: one-sided, system not better)" if ev.baseline else ""),
             "", head]
    for r in t.to_dict("records"):
        line = (f"{r['metric']:{wm}s}  {r['system']:{wsys}s}  {_fmt(r['score']):>7s}  "
                f"[{_fmt(r['ci_low'])}, {_fmt(r['ci_high'])}]  {r['n_missing']:>7d}  {r['n_empty']:>5d}  "
                f"{r['n_unparsed']:>8d}")
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
        lines += ["", "sentences without a parse (1-based lines; a hypothesis gets the worst value of the metrics "
                      "that need the parse, a segment without any parsed reference is left out):"]
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
        if args.n_bootstrap < 0 or 0 < args.n_bootstrap < 100:
            return _error(f"--n-bootstrap {args.n_bootstrap}: give 0 (no intervals) or at least 100 resamples "
                          "(fewer cannot give a 95% interval)")
        if args.paired_bootstrap and len(args.input) < 2:
            return _error("--paired-bootstrap compares systems with a baseline: give at least two -i files")
        for p in args.refs + args.input if args.output else ():
            check_output_path(args.output, p)  # before any work: not an input, a folder or an unwritable place
        if cache not in (None, True):
            with ParseCache(cache):  # a folder, a damaged or foreign file, or an unreadable one: refused now
                pass
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
    except (M.UnknownMetricError, OutputPathError, CacheError) as e:
        return _error(str(e).splitlines()[0])
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
                  f"{', '.join(str(i + 1) for i in idx[:10])}{' ...' if len(idx) > 10 else ''}); "
                  + ("scored with the worst value" if what.endswith(" hyp") else "left out if no reference of the "
                     "segment is parsed"),
                  file=sys.stderr)
    text = render(ev, args.format, args.segment_level)
    if args.output:
        write_output(args.output, lambda tmp: tmp.write_text(text, encoding="utf-8"))
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(cli())
