"""Every verdict of a report folder, one line each: chapter, claim, verdict, statistic, interval, p, reason.

Reads every ``DIR/<chapter>/<chapter>.json`` written by ``syneval-nb run -o DIR`` and prints the verdicts found
anywhere in it (any mapping with ``verdict`` and ``ci``). With two folders, prints the verdicts of the first, then
those of the second (before -> after), and per chapter the counts of holds / does not hold / cannot tell.

Usage::

    .venv/bin/python benchmarks/verdict_table.py reports                # one run
    .venv/bin/python benchmarks/verdict_table.py before/ after/         # before -> after
"""
from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path


def verdicts(obj, path: str = ""):
    """``(path, verdict dict)`` for every verdict in a results JSON tree."""
    if isinstance(obj, dict):
        if "verdict" in obj and "ci" in obj:
            yield path, obj
            return
        for k, v in obj.items():
            yield from verdicts(v, f"{path}/{k}")
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from verdicts(v, f"{path}[{i}]")


def _num(x) -> str:
    return "nan" if x is None or x != x else f"{x:+.3f}"


def table(folder: Path) -> dict[str, list[tuple[str, dict]]]:
    out = {}
    for f in sorted(folder.glob("*/*.json")):
        out[f.stem] = list(verdicts(json.loads(f.read_text())))
    return out


def show(name: str, rows: dict[str, list[tuple[str, dict]]]) -> None:
    print(f"== {name}")
    for chapter, vs in rows.items():
        if not vs:
            continue
        counts = Counter(v["verdict"] for _, v in vs)
        print(f"-- {chapter}: {len(vs)} verdicts: " + ", ".join(f"{k} {n}" for k, n in sorted(counts.items())))
        for path, v in vs:
            p = v.get("p_holm", v.get("p"))
            lo, hi = v["ci"] if v.get("ci") else (None, None)
            print(f"   {path}: {v['verdict']} | {_num(v.get('statistic'))} [{_num(lo)}, {_num(hi)}] | p {_num(p)}"
                  + (f" | {v['reason']}" if v.get("reason") else ""))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folders", nargs="+", type=Path)
    args = ap.parse_args(argv)
    for folder in args.folders:
        show(str(folder), table(folder))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
