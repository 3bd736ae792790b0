"""Syntax and discourse metrics together from an empty cache: the RST syntax step before and after issue 23.

    .venv/bin/python benchmarks/combined_score.py                 # 200 de-en segments x 2 systems, both refs
    .venv/bin/python benchmarks/combined_score.py --n 20 --workers 1

What ``syneval-nb score -m stm,hwcm,dr,dr-lex --workers 2`` does from an empty cache, timed for two paths on the
same segments: ``--n`` WMT21 de-en segments (seed ``--seed``) of the first two systems of
:data:`syneval_nb.data.WMT21_SYSTEMS`, with references A and B, scored by
:func:`syneval_nb.evaluate.evaluate` (``n_resamples=1000``, as ``score``) with

- ``package`` (the path before issue 23): the lines for STM/HWCM parsed by the kit's command-line parser, the
  RST parser's sentences by the package's own ``ParserDemo`` JVM in each RST worker (``rst_syntax="package"``);
- ``kit``: one parse per line for both families (``rst_syntax="kit"``: the kit's ``SynevalParser`` in long-lived
  workers prints the one-line tree and ``ParserDemo``'s record, both cached; the RST step finds the records of
  one-sentence lines in the cache; see :mod:`syneval_nb.parsers.stanford`, "records").

Each path starts from its own empty temporary cache and its own JVMs (``SynevalParser`` compiled beforehand).
Prints the seconds of each, the ratio, the cache rows each wrote, and whether every corpus score is equal. Under a
shared machine the absolute times vary; the ratio of one run is what counts.
"""
from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

from syneval_nb.data import WMT21_SYSTEMS, dataset_dir, read_lines
from syneval_nb.evaluate import evaluate
from syneval_nb.metrics.base import Corpus
from syneval_nb.parsers.cache import ParseCache
from syneval_nb.parsers.stanford import close_shared_parsers, compiled_classes, deps_backend_key, find_java

METRICS = ["stm", "hwcm", "dr", "dr-lex"]


def corpora(n: int, seed: int, folder=None) -> dict[str, Corpus]:
    d = dataset_dir("wmt21-deen", folder)
    refs = [read_lines(d / f"newstest2021.de-en.ref.{r}.en") for r in ("A", "B")]
    systems = WMT21_SYSTEMS[:2]
    hyps = {s: read_lines(d / f"system-outputs/newstest2021.de-en.hyp.{s}.en") for s in systems}
    ok = [i for i in range(len(refs[0])) if all(x[i].strip() for x in [*refs, *hyps.values()])]
    idx = sorted(random.Random(seed).sample(ok, min(n, len(ok))))
    return {s: Corpus([hyps[s][i] for i in idx], [[r[i] for r in refs] for i in idx]) for s in systems}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--order", default="package,kit", choices=["package,kit", "kit,package"],
                    help="which path runs first (run both orders: a change of machine load between them biases a ratio)")
    ap.add_argument("--data-dir", default=None)
    args = ap.parse_args(argv)

    seconds, scores, jvm = {}, {}, {}
    if compiled_classes(find_java()) is None:
        print("no javac: the kit path would run the two programs")
        return 1
    for path in args.order.split(","):
        corp = corpora(args.n, args.seed, args.data_dir)
        with tempfile.TemporaryDirectory() as tmp:
            store = ParseCache(Path(tmp) / "parses.sqlite")
            try:
                t0 = time.perf_counter()
                ev = evaluate(corp, METRICS, workers=args.workers, cache=store, progress=False, rst_syntax=path)
                seconds[path] = time.perf_counter() - t0
                keys = store.backend_keys()
            finally:
                store.close()
        close_shared_parsers()  # the next path starts its own JVMs
        scores[path] = ev.table if hasattr(ev, "table") else ev
        lines = sum(v for k, v in keys.items() if k.startswith("stanford-lexparser"))
        sents = keys.get(deps_backend_key(), 0)
        jvm[path] = keys
        print(f"{path:8s} {seconds[path]:7.1f} s  (cache rows: {lines} one-line trees, {sents} records with "
              f"dependencies, {sum(v for k, v in keys.items() if k.startswith('rst:'))} RST trees)")
    n_lines = sum(len(c) * 3 for c in corpora(args.n, args.seed, args.data_dir).values())
    print(f"{args.n} segments x 2 systems + 2 references ({n_lines} lines with repeats), -m {','.join(METRICS)}, "
          f"--workers {args.workers}, empty cache")
    print(f"ratio package / kit: {seconds['package'] / seconds['kit']:.2f}x faster (issue 23's target: 1.6x)")
    same = _same(scores["package"], scores["kit"])
    print(f"corpus scores equal: {same}")
    return 0 if same else 1


def _same(a, b) -> bool:
    import pandas as pd

    if isinstance(a, pd.DataFrame):
        return a.equals(b)
    return repr(a) == repr(b)


if __name__ == "__main__":
    sys.exit(main())
