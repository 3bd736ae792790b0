"""Speed of the lexical metrics on one WMT21 de-en system (1,000 segments, references A and B).

Prints segments/second of each metric's batch path ``sentence_scores`` (and of ``BLEU.sentence_score`` called
segment by segment) as a ratio to ``sacrebleu.sentence_bleu`` measured in the same run. Every timed call starts
from cold caches (the kit's tokenization and TER edit caches are cleared and a fresh metric object is built), as
sacrebleu's ``sentence_bleu`` builds a fresh ``BLEU`` object per call.

Targets (issue 4): BLEU >= 0.8x sacrebleu sentence BLEU; every other metric >= 0.3x except TER and METEOR
(reported only). Run: ``.venv/bin/python benchmarks/lexical_speed.py [--system UEdin] [--repeats 3]``.
Exit status 1 if a target is missed.
"""
from __future__ import annotations

import argparse
import logging
import sys
import time
from typing import Callable

import sacrebleu

from syneval_nb import lexical
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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--system", default="UEdin")
    ap.add_argument("--repeats", type=int, default=3, help="best of N for all but TER/METEOR (run once)")
    ap.add_argument("--data-dir", default=None)
    args = ap.parse_args(argv)
    logging.getLogger("sacrebleu").setLevel(logging.ERROR)

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
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
