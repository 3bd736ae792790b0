"""Numbers unchanged? Compare two sets of results JSON, number by number.

A restructuring must leave every figure the kit prints as it was. This script compares

- two report folders written by ``syneval-nb run -o DIR`` (every ``DIR/<chapter>/<chapter>.json``), or
- two JSON files (for example two ``syneval-nb score --format json`` outputs),

walking both JSON trees together: numbers must agree to ``--tol`` (absolute and relative, 1e-9 by default),
everything else exactly. Keys that record the run rather than its results (durations: ``seconds``, ``*_seconds``,
``timings``; paths of the run's own folders) are ignored; ``--ignore KEY`` adds more.

Usage::

    .venv/bin/syneval-nb run -o /tmp/before        # on the old tree
    .venv/bin/syneval-nb run -o /tmp/after         # on the new tree
    .venv/bin/python benchmarks/compare_results.py /tmp/before /tmp/after
    .venv/bin/python benchmarks/compare_results.py before-score.json after-score.json

It prints one line per compared file (``same``, or the number of differences and the first few) and a last line
``N files compared, N equal, N differ``; the exit code is 1 when anything differs or is missing.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

# Keys that describe the run, not its results.
IGNORED_KEYS = {"seconds", "elapsed", "elapsed_seconds", "time", "wall_time", "output_dir", "started", "finished",
                "timings"}


def _ignored(key, ignore: frozenset[str]) -> bool:
    """A key that records the run: listed, or a duration (``..._seconds``, ``seconds_...``)."""
    k = str(key)
    return k in ignore or k.endswith("seconds") or k.startswith("seconds")


def compare(a, b, path: str = "$", *, tol: float = 1e-9, ignore: frozenset[str] = frozenset()) -> list[str]:
    """Every difference between two JSON values, as ``path: a != b`` lines (numbers within ``tol`` are equal).

    >>> compare({"r": 0.1, "n": 3}, {"r": 0.1 + 1e-12, "n": 3})
    []
    >>> compare({"r": [0.1, None]}, {"r": [0.2, None]})
    ['$.r[0]: 0.1 != 0.2']
    >>> compare({"a": 1}, {"b": 1})
    ['$.a: only in the first', '$.b: only in the second']
    """
    if isinstance(a, bool) or isinstance(b, bool):
        return [] if a == b else [f"{path}: {a!r} != {b!r}"]
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if math.isnan(a) and math.isnan(b):
            return []
        if a == b or math.isclose(a, b, rel_tol=tol, abs_tol=tol):
            return []
        return [f"{path}: {a!r} != {b!r}"]
    if isinstance(a, dict) and isinstance(b, dict):
        out: list[str] = []
        for key in sorted(set(a) | set(b), key=str):
            if _ignored(key, ignore):
                continue
            where = f"{path}.{key}"
            if key not in b:
                out.append(f"{where}: only in the first")
            elif key not in a:
                out.append(f"{where}: only in the second")
            else:
                out.extend(compare(a[key], b[key], where, tol=tol, ignore=ignore))
        return out
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{path}: {len(a)} items != {len(b)} items"]
        out = []
        for i, (x, y) in enumerate(zip(a, b)):
            out.extend(compare(x, y, f"{path}[{i}]", tol=tol, ignore=ignore))
        return out
    return [] if a == b else [f"{path}: {a!r} != {b!r}"]


def _pairs(first: Path, second: Path) -> list[tuple[str, Path | None, Path | None]]:
    if first.is_file() and second.is_file():
        return [(first.name, first, second)]
    names = {p.relative_to(first).as_posix() for p in first.glob("*/*.json")}
    names |= {p.relative_to(second).as_posix() for p in second.glob("*/*.json")}
    return [(n, first / n if (first / n).is_file() else None, second / n if (second / n).is_file() else None)
            for n in sorted(names)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("first", type=Path, help="report folder or JSON file (before)")
    ap.add_argument("second", type=Path, help="report folder or JSON file (after)")
    ap.add_argument("--tol", type=float, default=1e-9, help="absolute and relative tolerance (default 1e-9)")
    ap.add_argument("--ignore", action="append", default=[], help="another key to ignore (repeatable)")
    ap.add_argument("--show", type=int, default=5, help="differences shown per file (default 5)")
    args = ap.parse_args(argv)
    for p in (args.first, args.second):
        if not p.exists():
            print(f"compare_results: {p} does not exist", file=sys.stderr)
            return 2
    ignore = frozenset(IGNORED_KEYS | set(args.ignore))
    n_equal = n_differ = 0
    pairs = _pairs(args.first, args.second)
    for name, a, b in pairs:
        if a is None or b is None:
            print(f"{name}: only in {'the second' if a is None else 'the first'}")
            n_differ += 1
            continue
        diffs = compare(json.loads(a.read_text()), json.loads(b.read_text()), tol=args.tol, ignore=ignore)
        if diffs:
            n_differ += 1
            print(f"{name}: {len(diffs)} differences")
            for line in diffs[: args.show]:
                print(f"    {line}")
        else:
            n_equal += 1
            print(f"{name}: same")
    print(f"{len(pairs)} files compared, {n_equal} equal, {n_differ} differ (tolerance {args.tol:g})")
    return 1 if n_differ or not pairs else 0


if __name__ == "__main__":
    sys.exit(main())
