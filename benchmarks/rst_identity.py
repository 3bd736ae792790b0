"""The in-process CRF path of the Feng-Hirst parser gives the shipped trees (issue 16: at least 300 + 300 texts).

    .venv/bin/python benchmarks/rst_identity.py                 # 300 TED + 300 de-en texts, in-process CRF
    .venv/bin/python benchmarks/rst_identity.py --n 50 --classifier subprocess

Draws ``--n`` distinct texts (seed ``--seed``) from the TED zh-en ``texts.tsv`` rows and ``--n`` from the lines of
the WMT21 de-en files (every system and both references), parses them with one :class:`FengHirstParser`
(``classifier=...``, no cache) and prints, per data set, how many trees equal the shipped
``parses/feng-hirst-0.1.4`` trees, overall and among the multi-EDU ones. Exit code 1 if any differs.
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from rst_throughput import deen_items, ted_items  # noqa: E402

from syneval_nb.parsers import feng_hirst
from syneval_nb.trees import rst


def draw(items: list[tuple[str, dict | None]], n: int, seed: int) -> list[tuple[str, dict | None]]:
    """``n`` distinct non-empty texts with their shipped trees (the first occurrence's tree)."""
    unique: dict[str, dict | None] = {}
    for t, tree in items:
        if t.strip() and t not in unique:
            unique[t] = tree
    texts = sorted(unique)
    return [(t, unique[t]) for t in random.Random(seed).sample(texts, min(n, len(texts)))]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=300, help="texts per data set (default 300)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--classifier", choices=feng_hirst.FengHirstParser.CLASSIFIERS, default="inprocess")
    ap.add_argument("--data-dir", default=None)
    args = ap.parse_args(argv)

    from tqdm.auto import tqdm

    bad = 0
    with feng_hirst.FengHirstParser(classifier=args.classifier) as parser:
        for name, loader in (("ted-zhen-mqm", ted_items), ("wmt21-deen", deen_items)):
            sample = draw(loader(args.data_dir), args.n, args.seed)
            same = multi = multi_same = failed = 0
            t0 = time.perf_counter()
            for text, shipped in tqdm(sample, desc=name, unit="seg"):
                try:
                    got = parser.parse(text)
                except Exception:  # noqa: BLE001 - a failure is compared like any result
                    got, failed = None, failed + 1
                ok = got == shipped
                same += ok
                if shipped is not None and not rst.is_void(shipped):
                    multi += 1
                    multi_same += ok
                if not ok:
                    print(f"  differs: {text[:90]!r}")
            dt = time.perf_counter() - t0
            bad += len(sample) - same
            print(f"{name:13s} classifier={args.classifier}: {same} / {len(sample)} trees equal to the shipped ones; "
                  f"multi-EDU {multi_same} / {multi}; failed {failed}; {len(sample) / dt:.2f} segments/s")
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
