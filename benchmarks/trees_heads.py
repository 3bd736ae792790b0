"""Throughput of the tree and head-rule building blocks on every shipped parse (28,935 Stanford parses).

Prints trees/second (CPU time, ``time.process_time``, best of ``--repeat``; wall time alongside) of:

- ``read_ptb``: bracketed string -> ``nltk.Tree`` (:func:`syneval_nb.trees.read_ptb`);
- ``read_ptb_flat``: bracketed string -> :class:`~syneval_nb.trees.FlatTree` (the same reader, no ``nltk.Tree``;
  what :mod:`syneval_nb.metrics.syntactic` uses), and its paths on their own: the general reader (tokenizer regex) on
  every parse, and the ASCII fast path on the parses it accepts, in pure Python (``str.split`` tokens) and compiled
  (:mod:`syneval_nb._speedups`, when built; ``read_ptb_flat`` uses it then);
- ``encode``: integer encoding (:func:`syneval_nb.trees.encoding.encode`) of the ``nltk.Tree`` and of the ``FlatTree``;
- ``to_dependencies``: Collins (1999) heads (:func:`syneval_nb.trees.heads.to_dependencies`) from the ``nltk.Tree`` and
  from the ``FlatTree``;
- ``headword_chains``: all chains of 1..9 words (:func:`syneval_nb.trees.heads.headword_chains`), and their counts
  (:func:`syneval_nb.trees.heads.chain_counts`, compiled when built);
- ``to_nltk``: the word-labelled dependency tree (:meth:`~syneval_nb.trees.heads.DependencyTree.to_nltk`).

A full collection runs before each repeat; the cyclic garbage collector stays on during the timing, as in normal
use (``--pause-gc`` pauses it: the functions make no reference cycles, so the difference is the collector's
scanning of the objects that are kept).

    .venv/bin/python benchmarks/trees_heads.py [--repeat 3] [--pause-gc] [--data-dir PATH]
"""
from __future__ import annotations

import argparse
import gc
import time
from typing import Callable

from syneval_nb import _accel
from syneval_nb.trees.heads import chain_counts, headword_chains, to_dependencies
from syneval_nb.paths import data_dir
from syneval_nb.trees import _parse_fast, _parse_general, _read_fast, read_ptb, read_ptb_flat
from syneval_nb.trees.encoding import Interner, encode


def timed(fn: Callable[[], object], repeat: int, pause_gc: bool = False) -> tuple[float, float]:
    """Best (wall seconds, CPU seconds) of ``repeat`` runs (the cyclic collector paused during each if asked)."""
    best_w = best_c = float("inf")
    for _ in range(repeat):
        gc.collect()
        if pause_gc:
            gc.disable()
        try:
            w0, c0 = time.perf_counter(), time.process_time()
            fn()
            best_w = min(best_w, time.perf_counter() - w0)
            best_c = min(best_c, time.process_time() - c0)
        finally:
            gc.enable()
    return best_w, best_c


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--pause-gc", action="store_true", help="pause the cyclic garbage collector while timing")
    ap.add_argument("--data-dir", default=None)
    args = ap.parse_args(argv)

    files = sorted(data_dir(args.data_dir).glob("*/parses/stanford-pcfg-3.3.1/*.ptb"))
    texts = [line for f in files for line in f.read_text(encoding="utf-8").split("\n") if line.strip()]
    texts = [t for t in texts if t.strip() != "(())"]
    n = len(texts)
    trees = [read_ptb(t) for t in texts]
    flats = [read_ptb_flat(t) for t in texts]
    deps = [to_dependencies(f) for f in flats]
    n_nodes = sum(len(f) for f in flats)
    n_words = sum(len(d) for d in deps)
    fast = [t for t in texts if _parse_fast(t) is not None]
    print(f"syneval_nb hot loops: {_accel.STATUS}")
    print(f"{n} parses from {len(files)} files: {n_nodes / n:.1f} nodes, {n_words / n:.1f} words per tree; "
          f"best of {args.repeat}; garbage collector {'paused' if args.pause_gc else 'on'}; the fast path reads "
          f"{len(fast)} of them (the others hold non-ASCII characters)")

    runs: dict[str, Callable[[], object]] = {
        "read_ptb (-> nltk.Tree)": lambda: [read_ptb(t) for t in texts],
        "read_ptb_flat (-> FlatTree)": lambda: [read_ptb_flat(t) for t in texts],
        "  general reader only": lambda: [_parse_general(t, None) for t in texts],
        "  fast path only (its parses)": lambda: [_parse_fast(t) for t in fast],
        **({"  compiled fast path (its parses)": lambda: [_read_fast(t) for t in fast]} if _accel.compiled() else {}),
        "encode (nltk.Tree)": lambda: [encode(t, interner) for t in trees],
        "encode (FlatTree)": lambda: [encode(f, interner) for f in flats],
        "to_dependencies (nltk.Tree)": lambda: [to_dependencies(t) for t in trees],
        "to_dependencies (FlatTree)": lambda: [to_dependencies(f) for f in flats],
        "headword_chains (1..9)": lambda: [headword_chains(d, 9) for d in deps],
        "chain_counts (1..9)": lambda: [chain_counts(d, 9) for d in deps],
        "DependencyTree.to_nltk": lambda: [d.to_nltk() for d in deps],
    }
    interner = Interner()
    print(f"{'step':30s} {'trees/s CPU':>12s} {'us/tree CPU':>12s} {'trees/s wall':>13s}")
    for name, fn in runs.items():
        m = len(fast) if "fast path" in name else n
        w, c = timed(fn, args.repeat, args.pause_gc)
        print(f"{name:30s} {m / c:12.0f} {c / m * 1e6:12.1f} {m / w:13.0f}")


if __name__ == "__main__":
    main()
