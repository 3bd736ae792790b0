"""HWCM-4 end to end on WMT21 de-en, Collins heads on Stanford PCFG parses against spaCy's dependency parses
(issue 26).

On the first ``--n`` lines (default 1,000) of two WMT21 de-en systems (``--systems``; default the first two in
name order) with reference A, each path starts from an **empty** parse cache (a new temporary SQLite file) and
times, in one run on the same machine:

1. ``HWCM-4`` (the paper's default): :func:`syneval_nb.metrics.prepare` makes the Stanford PCFG parses of the
   distinct hypothesis and reference lines (``--workers`` JVMs, default 2), then the corpus score of each system;
2. ``HWCM@spacy-4`` (the named variant): the same with spaCy's dependency parser (one process) instead.

It prints the seconds of each part (parse, score), the lines per second end to end and the ratio
stanford / spacy (issue 26's target: at least 30x). The two metrics' corpus scores are printed too (they are
different metrics; the chapter 04 section "does the parser matter?" compares them against human scores).

    PYTHONPATH=. .venv/bin/python benchmarks/dependency_speed.py [--n 1000] [--workers 2] [--json out.json]
"""
from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from syneval_nb.data import load_wmt21_deen
from syneval_nb.metrics import registry as M
from syneval_nb.metrics.base import Corpus, prepare
from syneval_nb.parsers.cache import ParseCache


def corpora(n: int, systems: list[str] | None) -> dict[str, tuple[list[str], list[list[str]]]]:
    """``{system: (hypotheses, references)}``: the first ``n`` lines of each system, reference A."""
    seg = load_wmt21_deen().segments
    names = systems or sorted(seg["system"].unique())[:2]
    out = {}
    for s in names:
        g = seg[seg["system"] == s].sort_values("seg_id").head(n)
        if len(g) < n:
            raise SystemExit(f"system {s!r} has only {len(g)} lines, fewer than --n {n}")
        out[s] = (g["target"].tolist(), [[r] for r in g["ref_A"]])
    return out


def run_path(metric: str, data: dict, workers: int) -> dict:
    """Parse (empty cache) and score one metric over the systems; seconds of each part."""
    m = M.get(metric)
    with tempfile.TemporaryDirectory() as tmp:
        cache = ParseCache(Path(tmp) / "parses.sqlite")
        cs = {s: Corpus(h, r, cache=cache, workers=workers) for s, (h, r) in data.items()}
        t0 = time.perf_counter()
        prepare(list(cs.values()), [i for i in m.inputs if i != "text"], workers=workers, cache=cache,
                progress=False)
        t1 = time.perf_counter()
        scores = {s: m.corpus_score(c).score for s, c in cs.items()}
        t2 = time.perf_counter()
        n_parsed = cache.count()
        cache.close()
    return {"metric": metric, "signature": m.signature(), "parse_s": t1 - t0, "score_s": t2 - t1,
            "total_s": t2 - t0, "sentences_parsed": n_parsed, "scores": scores}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=1000, help="lines per system (default 1000)")
    ap.add_argument("--systems", nargs="*", default=None, help="WMT21 de-en systems (default: the first two)")
    ap.add_argument("--workers", type=int, default=2, help="Stanford JVM workers (default 2)")
    ap.add_argument("--json", default=None, help="also write the figures to this JSON file")
    args = ap.parse_args(argv)
    data = corpora(args.n, args.systems)
    n_lines = sum(len(h) for h, _ in data.values())
    print(f"{len(data)} systems x {args.n} lines ({', '.join(data)}), reference A; empty cache per path")
    rows = [run_path("HWCM-4", data, args.workers), run_path("HWCM@spacy-4", data, args.workers)]
    for r in rows:
        print(f"{r['metric']:14s} parse {r['parse_s']:8.1f} s  score {r['score_s']:6.2f} s  total "
              f"{r['total_s']:8.1f} s  ({r['sentences_parsed']} distinct sentences parsed; "
              f"{n_lines / r['total_s']:.1f} system lines/s)  corpus scores "
              + ", ".join(f"{s} {v:.4f}" for s, v in r["scores"].items()))
    ratio = rows[0]["total_s"] / rows[1]["total_s"]
    print(f"end to end, stanford / spacy: {ratio:.1f}x (parse only {rows[0]['parse_s'] / rows[1]['parse_s']:.1f}x); "
          f"target >= 30x: {'met' if ratio >= 30 else 'NOT met'}")
    if args.json:
        Path(args.json).write_text(json.dumps({"n": args.n, "systems": list(data), "workers": args.workers,
                                               "paths": rows, "ratio": ratio}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
