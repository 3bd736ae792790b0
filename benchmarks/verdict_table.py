"""Every verdict of a report folder, one line each: chapter, claim, verdict, statistic, interval, p, reason.

Reads every ``DIR/<chapter>/<chapter>.json`` written by ``syneval-nb run -o DIR`` and prints the verdicts found
anywhere in it (any mapping with ``verdict`` and ``ci``). With two folders, prints the verdicts of the first, then
those of the second (before -> after), and per chapter the counts of holds / does not hold / cannot tell.

Usage::

    .venv/bin/python benchmarks/verdict_table.py reports                # one run
    .venv/bin/python benchmarks/verdict_table.py before/ after/         # before -> after
    .venv/bin/python benchmarks/verdict_table.py --changes before/ after/   # one Markdown table per chapter

``--changes`` prints, per chapter, the verdict counts before and after, and one row per claim that held before, holds
after, or is one of the after run's primary claims (the claims matched by their text): the verdict, statistic,
interval and p (Holm p where the claim was in a Holm family) before and after, why the after verdict is
exploratory where it is, and each verdict's own computed reason.
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


def _cell(v: dict | None) -> str:
    if v is None:
        return "not declared"
    p = v.get("p_holm") if v.get("p_holm") is not None else v.get("p")
    lo, hi = v["ci"] if v.get("ci") else (None, None)
    ptxt = "" if p is None or p != p else (", p < 0.001" if p < 0.001 else f", p {p:.3g}")
    return f"{v['verdict']} {_num(v.get('statistic'))} [{_num(lo)}, {_num(hi)}]{ptxt}"


def _why(v: dict | None) -> str:
    if v is None:
        return ""
    reason = v.get("reason") or ""
    if v["verdict"] == "exploratory" and "exploratory: " in reason:
        return reason.split("exploratory: ", 1)[1].split(",")[0]
    if _primary(v):
        return f"primary (Holm over {v['family_size']})"
    return ""


def _reason(v: dict | None) -> str:
    """The verdict's own computed reason, for a Markdown cell."""
    return "" if v is None else (v.get("reason") or "").replace("|", "\\|").replace("\n", " ")


def _primary(v: dict) -> bool:
    return bool(v.get("family_size")) and v["verdict"] != "exploratory"


def changes(before: Path, after: Path) -> None:
    """One Markdown table per chapter: the claims that held before, hold after or are primary after."""
    b, a = table(before), table(after)
    for chapter in sorted(set(b) | set(a)):
        bv = {path.rsplit("/", 1)[-1]: v for path, v in b.get(chapter, []) if path.startswith("/verdicts/")}
        av = {path.rsplit("/", 1)[-1]: v for path, v in a.get(chapter, []) if path.startswith("/verdicts/")}
        count = lambda vs: ", ".join(f"{k} {n}" for k, n in sorted(Counter(v["verdict"] for v in vs.values()).items()))
        print(f"\n### {chapter}\n\nbefore: {len(bv)} verdicts ({count(bv) or 'none'}); "
              f"after: {len(av)} verdicts ({count(av) or 'none'})\n")
        keys = [k for k in bv if bv[k]["verdict"] == "holds"]
        keys += [k for k in av if k not in keys and (av[k]["verdict"] == "holds" or _primary(av[k]))]
        if not keys:
            continue
        print("| claim | before | after | after: why | before: reason | after: reason |\n|---|---|---|---|---|---|")
        for k in keys:
            print(f"| {k} | {_cell(bv.get(k))} | {_cell(av.get(k))} | {_why(av.get(k))} | {_reason(bv.get(k))} | "
                  f"{_reason(av.get(k))} |")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folders", nargs="+", type=Path)
    ap.add_argument("--changes", action="store_true", help="before/ after/: one Markdown table per chapter")
    args = ap.parse_args(argv)
    if args.changes:
        if len(args.folders) != 2:
            ap.error("--changes takes two folders: before/ after/")
        changes(*args.folders)
        return 0
    for folder in args.folders:
        show(str(folder), table(folder))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
