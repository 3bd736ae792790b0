"""Sentence mode vs line mode (issue 33), and the time and memory of long sentences.

1. Throughput: ``--n`` two-sentence lines (default 30), each two consecutive one-sentence lines of
   ``newstest2021.de-en.ref.A.en`` joined by a space (pairs the kit's splitter splits back into the two lines), parsed
   by :func:`syneval_nb.parsers.frontend.parse_strings` with ``split="lines"`` (each line as one sentence) and with
   ``split="sentences"``, each from an empty cache with a fresh one-worker parser whose start-up is not timed. Prints
   wall seconds and the JVM's CPU seconds (``/proc/PID/stat``; it does not depend on what else runs on the machine)
   and their ratios (target: sentence mode >= 2x faster). Check: every sentence-mode tree is the join of the two
   lines' shipped parses (line mode, ``parses/stanford-pcfg-3.3.1``).
2. Long sentences: one correct sentence of about 150, 200, 250 and 300 PTB tokens (clauses of the same file joined
   by ", and"; the exact count is the tree's), each parsed alone by a fresh JVM with ``-Xmx`` from ``--heaps``
   (default ``2g``, the kit's default), ``max_length`` 400 and a time limit of 1 hour: tokens, wall and CPU seconds,
   peak resident memory of the JVM (``VmHWM``), and whether it parsed (an ``OutOfMemoryError`` twice is a failure
   with that cause).

    .venv/bin/python benchmarks/sentence_mode.py [--n 30] [--lengths 150,200,250,300] [--heaps 2g] [--json out.json]
"""
from __future__ import annotations

import argparse
import json
import re
import tempfile
import time
import warnings
from pathlib import Path

from syneval_nb.parsers.cache import ParseCache
from syneval_nb.parsers.frontend import parse_strings
from syneval_nb.parsers.sentences import join_trees, split_sentences
from syneval_nb.parsers.stanford import ParseWarning, StanfordParser
from syneval_nb.paths import data_dir
from syneval_nb.textio import read_lines
from syneval_nb.trees.ptb import read_ptb_flat

REF = "newstest2021.de-en.ref.A.en"
PTB = "parses/stanford-pcfg-3.3.1"
_TOKEN = re.compile(r"\w+(?:[-']\w+)*|[^\w\s]")
_FIRST_WORDS = {"the", "a", "an", "in", "it", "this", "there", "he", "she", "they", "we", "on", "at", "for", "after",
                "his", "her", "their", "its", "that", "these", "many", "some", "one"}


def _jvm_stat(pid: int) -> tuple[float, float]:
    """(CPU seconds, peak resident MB) of a running process (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / 100.0  # utime + stime, clock ticks (100 per second)
    hwm = next(int(ln.split()[1]) for ln in Path(f"/proc/{pid}/status").read_text().splitlines()
               if ln.startswith("VmHWM"))
    return cpu, hwm / 1024.0


def _timed(texts: list[str], split: str, max_length: int = 200, memory: str = "2g",
           timeout: float = 60.0) -> dict:
    """Parse ``texts`` with a fresh one-worker parser and an empty cache; wall and JVM CPU seconds of the parse."""
    with tempfile.TemporaryDirectory() as tmp, StanfordParser(max_length=max_length, memory=memory,
                                                             timeout=timeout) as p:
        p.start()
        pid = p.pids()[0]
        cpu0, _ = _jvm_stat(pid)
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ParseWarning)
            res = parse_strings(texts, parser=p, cache=ParseCache(Path(tmp) / "c.sqlite"), progress=False,
                                warn=False, split=split)
        wall = time.perf_counter() - t0
        alive = p.pids()[0]
        cpu1, peak = _jvm_stat(alive) if alive == pid else (float("nan"), float("nan"))
    return {"results": list(res), "report": res.report, "wall": wall, "cpu": cpu1 - cpu0, "peak_mb": peak}


def pairs(n: int) -> tuple[list[str], list[str]]:
    """``n`` two-sentence lines (two consecutive one-sentence lines of the reference joined) and their expected
    sentence-mode trees (the join of the two lines' shipped parses)."""
    d = data_dir() / "wmt21-deen"
    ref, ptb = read_lines(d / REF), read_lines(d / PTB / f"{REF}.ptb")
    lines, trees = [], []
    i = 0
    while len(lines) < n and i + 1 < len(ref):
        a, b = ref[i].strip(), ref[i + 1].strip()
        joined = f"{a} {b}"
        if split_sentences(a) == [a] and split_sentences(b) == [b] and split_sentences(joined) == [a, b]:
            lines.append(joined)
            trees.append(join_trees([ptb[i], ptb[i + 1]]))
            i += 2
        else:
            i += 1
    return lines, trees


def long_sentence(target: int) -> str:
    """One sentence of about ``target`` PTB tokens: clauses of the reference (8-30 tokens, no quotes or brackets,
    starting with a common word) joined by ", and" (deterministic)."""
    ref = read_lines(data_dir() / "wmt21-deen" / REF)
    ntok = lambda s: len(_TOKEN.findall(s))  # noqa: E731 - a rough count to build the sentence; the tree counts
    pool = [r.strip() for r in ref if r.strip().endswith(".") and 8 <= ntok(r) <= 30
            and not re.search(r"[\"()\[\];:?!\u201c\u201d\u2018\u2019'/]", r) and r.split()[0].lower() in _FIRST_WORDS]
    parts: list[str] = []
    i = target
    while True:
        used = ntok(", and ".join(parts) + ".") if parts else 0
        left = target - used - (2 if parts else 0)
        fit = [c for c in pool[i:] + pool[:i] if c not in parts and ntok(c) - 1 <= left]
        if not fit:
            break
        c = fit[0][:-1] if left > 35 else max(fit, key=ntok)[:-1]
        parts.append(c if not parts else c[0].lower() + c[1:])
        i += 7
    return ", and ".join(parts) + "."


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=30, help="two-sentence lines for the throughput part")
    ap.add_argument("--lengths", default="150,200,250,300", help="target lengths in tokens ('' for none)")
    ap.add_argument("--heaps", default="2g", help="JVM heaps for the long sentences, comma-separated")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    out: dict = {}

    lines, expected = pairs(args.n)
    n_sent = sum(len(split_sentences(x)) for x in lines)
    print(f"throughput: {len(lines)} two-sentence lines ({n_sent} sentences) of {REF}, one worker, empty cache",
          flush=True)
    modes = {}
    for split in ("lines", "sentences"):
        r = _timed(lines, split)
        ok = sum(a == b for a, b in zip(r["results"], expected))
        modes[split] = r
        check = (f"equal to the join of the two lines' shipped parses: {ok}/{len(lines)}" if split == "sentences"
                 else "(one tree per line)")
        print(f"  split={split:9s}  wall {r['wall']:7.1f} s  JVM CPU {r['cpu']:7.1f} s  "
              f"{len(lines) / r['wall']:.2f} lines/s  failures {len(r['report'].failures)}  {check}", flush=True)
        out[f"throughput_{split}"] = {"wall": r["wall"], "cpu": r["cpu"], "equal_to_shipped_join": ok,
                                      "failures": len(r["report"].failures)}
    wall_ratio = modes["lines"]["wall"] / modes["sentences"]["wall"]
    cpu_ratio = modes["lines"]["cpu"] / modes["sentences"]["cpu"]
    print(f"  sentence mode is {wall_ratio:.2f}x faster (wall), {cpu_ratio:.2f}x (JVM CPU); target >= 2x: "
          f"{'met' if min(wall_ratio, cpu_ratio) >= 2 else 'NOT met'}", flush=True)
    out["ratio_wall"], out["ratio_cpu"] = wall_ratio, cpu_ratio

    lengths = [int(x) for x in args.lengths.split(",") if x.strip()]
    if lengths:
        print("long sentences: one sentence per fresh JVM, max_length 400", flush=True)
    for heap in [h.strip() for h in args.heaps.split(",") if h.strip()]:
        for target in lengths:
            s = long_sentence(target)
            r = _timed([s], "lines", max_length=400, memory=heap, timeout=3600.0 / max(1.0, len(s.split()) / 100) ** 3)
            tree = r["results"][0]
            n = sum(w is not None for w in read_ptb_flat(tree).words) if tree else None
            why = r["report"].failures.get(0, "")
            print(f"  -Xmx{heap:5s} target {target}: tokens {n if n is not None else '-':>3}  wall {r['wall']:7.1f} s  "
                  f"JVM CPU {r['cpu']:7.1f} s  peak RSS {r['peak_mb']:6.0f} MB  "
                  f"{'parsed' if tree else 'NO PARSE: ' + why[:90]}", flush=True)
            out[f"long_{heap}_{target}"] = {"tokens": n, "wall": r["wall"], "cpu": r["cpu"], "peak_mb": r["peak_mb"],
                                            "parsed": tree is not None, "why": why}
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
