"""Speed of the lexical metrics on one WMT21 de-en system (1,000 segments, references A and B), and on long segments.

Prints segments/second of each metric's batch path ``sentence_scores`` (and of ``BLEU.sentence_score`` called
segment by segment) as a ratio to ``sacrebleu.sentence_bleu`` measured in the same run. Every timed call starts
from cold caches (the kit's tokenization and TER edit caches are cleared and a fresh metric object is built), as
sacrebleu's ``sentence_bleu`` builds a fresh ``BLEU`` object per call.

Targets (issue 4): BLEU >= 0.8x sacrebleu sentence BLEU; every other metric >= 0.3x except TER and METEOR
(reported only).

Long segments (issue 24, item 5): METEOR, GTM and TER on one paragraph of 337 words and on one line of 100,000
characters, both made of real lines joined (the system's lines from segment 0 on against the same lines of
reference A, the hypothesis cut to 337 words / 100,000 characters). "before" is the code of commit
``BEFORE_COMMIT`` (read with ``git show``: the enumerating METEOR search, GTM's rescan of all hits per run,
sacrebleu's TER), "after" the working tree; each run is a fresh process with a time limit (``--before-timeout``,
before only) and an address-space limit (``--memory-gb``), and prints seconds, peak memory and the score.
Targets: each metric scores the paragraph in under 2 s and the 100,000-character line without hitting either
limit.

Run: ``.venv/bin/python benchmarks/lexical_speed.py [--system UEdin] [--repeats 3] [--before-timeout 60]``
(``--long-only``: only the long segments; ``--no-before``: no "before" runs). Exit status 1 if a target is
missed.
"""
from __future__ import annotations

import argparse
import json
import logging
import resource
import subprocess
import sys
import time
import types
from pathlib import Path
from typing import Callable

import sacrebleu

from syneval_nb.metrics import lexical
from syneval_nb.data import load_wmt21_deen

TARGETS = {"BLEU": 0.8, "BLEU (one by one)": 0.8, "NIST": 0.3, "WER": 0.3, "PER": 0.3, "F-measure": 0.3,
           "GTM": 0.3, "ROUGE-S": 0.3, "METEOR": None, "TER": None}


def _best_time(fn: Callable[[], object], repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        lexical._tokenize_cached.cache_clear()
        lexical._ter_edits.cache_clear()
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


#: the code before issue 24's long-segment work (the "before" column)
BEFORE_COMMIT = "83f0af8"
LONG_METRICS = {"METEOR": "MeteorExact", "GTM": "GTM", "TER": "TER"}
ROOT = Path(__file__).resolve().parents[1]


def long_inputs(system: str = "UEdin", data_dir: str | None = None) -> dict[str, tuple[str, str]]:
    """{"337 words": (hyp, ref), "100k chars": (hyp, ref)}: the system's lines from segment 0 on, joined with
    spaces, cut to 337 words / 100,000 characters, against the same lines of reference A joined."""
    seg = load_wmt21_deen(data_dir).segments
    seg = seg[seg["system"] == system]
    hyps, refs = seg["target"].tolist(), seg["ref_A"].tolist()
    out = {}
    for name, enough, cut in (("337 words", lambda h: len(h.split()) >= 337, lambda h: " ".join(h.split()[:337])),
                              ("100k chars", lambda h: len(h) >= 100_000, lambda h: h[:100_000])):
        k = 0
        while not enough(" ".join(hyps[:k])):
            k += 1
        out[name] = (cut(" ".join(hyps[:k])), " ".join(refs[:k]))
    return out


def _lexical_module(impl: str) -> types.ModuleType:
    if impl == "after":
        return lexical
    src = subprocess.run(["git", "-C", str(ROOT), "show", f"{BEFORE_COMMIT}:syneval_nb/metrics/lexical.py"],
                         capture_output=True, text=True, check=True).stdout
    mod = types.ModuleType("lexical_before")
    sys.modules[mod.__name__] = mod   # dataclasses look their module up
    exec(compile(src, f"{BEFORE_COMMIT}:lexical.py", "exec"), mod.__dict__)
    return mod


def _time_one(impl: str, metric: str, which: str, system: str, data_dir: str | None) -> None:
    """Child process: score one long input, print {"seconds", "score", "peak_mb"} as JSON."""
    hyp, ref = long_inputs(system, data_dir)[which]
    m = getattr(_lexical_module(impl), LONG_METRICS[metric])()
    t0 = time.perf_counter()
    score = m.sentence_score(hyp, [ref]).score
    dt = time.perf_counter() - t0
    print(json.dumps({"seconds": dt, "score": score,
                      "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))


def _run_child(impl: str, metric: str, which: str, args: argparse.Namespace, timeout: float | None) -> dict:
    limit = int(args.memory_gb * 2**30)

    def set_limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    cmd = [sys.executable, __file__, "--_time-one", impl, metric, which, "--system", args.system]
    if args.data_dir:
        cmd += ["--data-dir", args.data_dir]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, preexec_fn=set_limit)
    except subprocess.TimeoutExpired:
        return {"failed": f"> {timeout:g} s (stopped)"}
    if p.returncode != 0:
        last = (p.stderr.strip().splitlines() or ["exit status %d" % p.returncode])[-1]
        return {"failed": "out of memory (%g GB limit)" % args.memory_gb if "MemoryError" in p.stderr else last}
    return json.loads(p.stdout.strip().splitlines()[-1])


def long_segments(args: argparse.Namespace) -> list[str]:
    """The before/after table of the long inputs; returns the names of missed targets."""
    inputs = long_inputs(args.system, args.data_dir)
    for name, (h, r) in inputs.items():
        print(f"{name}: hypothesis {len(h.split())} words / {len(h)} characters, reference {len(r.split())} words")
    print(f"{'metric':8s} {'input':11s} {'before':>24s} {'after':>18s} {'ratio':>8s}  score before -> after")
    missed = []
    for metric in LONG_METRICS:
        for which in inputs:
            before = ({"failed": "not run"} if args.no_before
                      else _run_child("before", metric, which, args, args.before_timeout))
            after = _run_child("after", metric, which, args, None)
            if "failed" in after or (which == "337 words" and after["seconds"] >= 2.0):
                missed.append(f"{metric} {which}")

            def cell(r: dict) -> str:
                return r["failed"] if "failed" in r else f"{r['seconds']:7.2f} s {r['peak_mb']:5.0f} MB"

            if "failed" in after:
                ratio = "-"
            elif "failed" in before:
                ratio = f">{args.before_timeout / after['seconds']:.0f}x" if before["failed"].startswith(">") else "-"
            else:
                ratio = f"{before['seconds'] / after['seconds']:.1f}x"
            scores = " -> ".join("-" if "failed" in r else f"{r['score']:.12f}" for r in (before, after))
            same = ("  (identical)" if "failed" not in before and "failed" not in after
                    and before["score"] == after["score"] else "")
            print(f"{metric:8s} {which:11s} {cell(before):>24s} {cell(after):>18s} {ratio:>8s}  {scores}{same}",
                  flush=True)
    return missed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--system", default="UEdin")
    ap.add_argument("--repeats", type=int, default=3, help="best of N for all but TER/METEOR (run once)")
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--long-only", action="store_true", help="only the long segments")
    ap.add_argument("--no-before", action="store_true", help="long segments: no runs of the code before")
    ap.add_argument("--before-timeout", type=float, default=60.0, help="seconds allowed to a 'before' run")
    ap.add_argument("--memory-gb", type=float, default=3.0, help="address-space limit of every long-segment run")
    ap.add_argument("--_time-one", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    logging.getLogger("sacrebleu").setLevel(logging.ERROR)
    if args._time_one:
        _time_one(*args._time_one, args.system, args.data_dir)
        return 0
    missed = [] if args.long_only else throughput(args)
    print(f"\nLong segments (before = commit {BEFORE_COMMIT}, after = this tree)")
    missed += long_segments(args)
    if missed:
        print("MISSED:", ", ".join(missed))
    return 1 if missed else 0


def throughput(args: argparse.Namespace) -> list[str]:
    """The 1,000-segment table of issue 4; returns the names of missed targets."""
    seg = load_wmt21_deen(args.data_dir).segments
    seg = seg[seg["system"] == args.system]
    hyps = seg["target"].tolist()
    refs = [[a, b] for a, b in zip(seg["ref_A"], seg["ref_B"])]
    n = len(hyps)

    base = _best_time(lambda: [sacrebleu.sentence_bleu(h, r) for h, r in zip(hyps, refs)], args.repeats)
    base_rate = n / base
    print(f"{n} segments of {args.system}, 2 references")
    print(f"{'sacrebleu.sentence_bleu':26s} {base_rate:10.0f} seg/s   1.00x (reference)")

    runs: dict[str, Callable[[], object]] = {
        "BLEU": lambda: lexical.BLEU(effective_order=True).sentence_scores(hyps, refs),
    }

    def one_by_one() -> list:
        bleu = lexical.BLEU(effective_order=True)  # fresh per timed run: its reference cache starts cold
        return [bleu.sentence_score(h, r) for h, r in zip(hyps, refs)]

    runs["BLEU (one by one)"] = one_by_one
    for name, cls in lexical.ALL_METRICS.items():
        if name != "BLEU":
            runs[name] = (lambda c=cls: c().sentence_scores(hyps, refs))
    missed = []
    for name, fn in runs.items():
        reps = 1 if name in ("TER", "METEOR") else args.repeats
        rate = n / _best_time(fn, reps)
        ratio = rate / base_rate
        target = TARGETS[name]
        verdict = "report only" if target is None else ("ok" if ratio >= target else f"MISSED target {target}x")
        if target is not None and ratio < target:
            missed.append(name)
        print(f"{name:26s} {rate:10.0f} seg/s {ratio:6.2f}x  {verdict}")
    return missed


if __name__ == "__main__":
    sys.exit(main())
