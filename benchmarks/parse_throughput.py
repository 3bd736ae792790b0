"""Parsing throughput: the plain Stanford CLI vs the kit's JVM workers vs a cached re-run.

On the same WMT21 reference lines (the first ``--n`` lines of ``newstest2021.de-en.ref.A.en``, default 500) this
prints sentences per second of

1. the plain Java CLI, ``LexicalizedParser -nthreads 2 -sentences newline -maxLength 150`` on the file;
2. the kit, :func:`syneval_nb.parsing.parse_strings` with 1 and with 2 JVM workers, no cache;
3. a fully cached re-run (every sentence in the SQLite cache; no JVM is started), raw strings and trees.

Rows 1-2 are end-to-end wall times, JVM start-up and model loading included in both (``warm`` adds the kit's rate
with its workers already running). It also checks that the outputs equal the shipped parses line for line.

Targets (issue 3): kit at equal parallelism >= 0.9x the CLI; 2 workers >= 1.6x 1 worker (2 cores);
cached >= 10,000 sentences/s.

    .venv/bin/python benchmarks/parse_throughput.py [--n 500] [--json out.json]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

from syneval_nb.cache import ParseCache
from syneval_nb.parsing import (
    LEXPARSER_CLASS,
    MODEL,
    StanfordParser,
    find_java,
    parse,
    parse_strings,
    read_sentences,
    stanford_jars,
)
from syneval_nb.paths import data_dir

REF = "newstest2021.de-en.ref.A.en"


def plain_cli(path: Path, threads: int) -> tuple[float, list[str]]:
    """Wall time and output lines of the Stanford CLI on ``path`` with ``-nthreads``."""
    cp = os.pathsep.join(str(j) for j in stanford_jars())
    cmd = [find_java(), "-Xmx2g", "-cp", cp, LEXPARSER_CLASS, "-nthreads", str(threads), "-encoding", "utf-8",
           "-sentences", "newline", "-maxLength", "150", "-outputFormat", "oneline", MODEL, str(path)]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return time.perf_counter() - t0, proc.stdout.splitlines()


def kit(sentences: list[str], workers: int, cache) -> tuple[float, float, list]:
    """(end-to-end seconds, warm seconds, results) of the kit with ``workers`` JVMs."""
    t0 = time.perf_counter()
    with StanfordParser(workers=workers) as p:
        res = parse_strings(sentences, parser=p, cache=cache, progress=False, warn=False)
        total = time.perf_counter() - t0
        t1 = time.perf_counter()  # again with the JVMs running (JIT warm): the steady-state rate
        parse_strings(sentences, parser=p, cache=None, progress=False, warn=False)
        warm = time.perf_counter() - t1
    return total, warm, res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=500)
    ap.add_argument("--json", default=None, help="also write the figures to this JSON file")
    args = ap.parse_args()
    deen = data_dir() / "wmt21-deen"
    sents = read_sentences(deen / REF)[: args.n]
    shipped = read_sentences(deen / "parses" / "stanford-pcfg-3.3.1" / f"{REF}.ptb")[: args.n]
    n = len(sents)
    load0 = os.getloadavg()
    print(f"{n} lines of {REF}; {os.cpu_count()} cores; load average at start {load0[0]:.2f} {load0[1]:.2f}")
    fig: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "ref.txt"
        src.write_text("".join(s + "\n" for s in sents), encoding="utf-8")

        t_cli, out_cli = plain_cli(src, 2)
        fig["cli_2threads"] = n / t_cli
        print(f"plain CLI, -nthreads 2     : {n / t_cli:8.2f} sent/s ({t_cli:.1f} s)   "
              f"identical to shipped: {sum(a == b for a, b in zip(out_cli, shipped))}/{n}")

        t1, w1, r1 = kit(sents, 1, None)
        fig["kit_1worker"], fig["kit_1worker_warm"] = n / t1, n / w1
        print(f"kit, 1 worker              : {n / t1:8.2f} sent/s ({t1:.1f} s; warm {n / w1:.2f} sent/s)   "
              f"identical to shipped: {sum(a == b for a, b in zip(r1, shipped))}/{n}")

        db = Path(tmp) / "cache.sqlite"
        with ParseCache(db) as cache:
            t2, w2, r2 = kit(sents, 2, cache)
        fig["kit_2workers"], fig["kit_2workers_warm"] = n / t2, n / w2
        print(f"kit, 2 workers (+ caching) : {n / t2:8.2f} sent/s ({t2:.1f} s; warm {n / w2:.2f} sent/s)   "
              f"identical to shipped: {sum(a == b for a, b in zip(r2, shipped))}/{n}")

        with ParseCache(db) as cache:
            p = StanfordParser(workers=2)
            t0 = time.perf_counter()
            rc = parse_strings(sents, parser=p, cache=cache, progress=False, warn=False)
            tc = time.perf_counter() - t0
            t0 = time.perf_counter()
            parse(sents, parser=p, cache=cache, progress=False, warn=False)
            tt = time.perf_counter() - t0
            assert rc.report.n_cached == n and p.pids() == [] and list(rc) == list(r2)
        fig["cached_strings"], fig["cached_trees"] = n / tc, n / tt
        print(f"cached re-run, strings     : {n / tc:8.0f} sent/s ({tc * 1000:.1f} ms; no JVM started)")
        print(f"cached re-run, nltk trees  : {n / tt:8.0f} sent/s ({tt * 1000:.1f} ms)")

    load1 = os.getloadavg()
    fig["load_start"], fig["load_end"] = load0[0], load1[0]
    r_cli = fig["kit_2workers"] / fig["cli_2threads"]
    r_par = fig["kit_2workers"] / fig["kit_1worker"]
    print(f"\nkit 2 workers / CLI 2 threads = {r_cli:.2f}  (target >= 0.9)  {'OK' if r_cli >= 0.9 else 'MISSED'}")
    print(f"kit 2 workers / 1 worker      = {r_par:.2f}  (target >= 1.6)  {'OK' if r_par >= 1.6 else 'MISSED'}"
          f"   [warm: {fig['kit_2workers_warm'] / fig['kit_1worker_warm']:.2f}]")
    print(f"cached re-run                 = {fig['cached_strings']:.0f} sent/s (target >= 10000)  "
          f"{'OK' if fig['cached_strings'] >= 10000 else 'MISSED'}")
    print(f"load average at end {load1[0]:.2f} (other processes share the cores: figures are noisy under load)")
    if args.json:
        Path(args.json).write_text(json.dumps(fig, indent=1))


if __name__ == "__main__":
    main()
