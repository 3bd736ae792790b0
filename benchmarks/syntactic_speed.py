"""Speed of the syntactic metrics against sacrebleu sentence BLEU, measured in the same run.

One WMT21 de-en system (1,000 segments) with its two references (A and B), from the shipped Stanford parse strings.
For each metric (STM, HWCM, DSTM with depths 1..9 in one pass; TKM; DTKM; and all five together) it reports
segments/s and the ratio to two sacrebleu baselines:

- ``sentence_bleu``: ``sacrebleu.sentence_bleu(hyp, refs)`` called per segment, the public one-call API, as in
  ``benchmarks/lexical_speed.py`` (it builds a fresh ``BLEU`` object, hence a cold tokenizer, per call);
- ``BLEU obj``: one reused ``sacrebleu.metrics.BLEU(effective_order=True)`` whose ``sentence_score`` is called per
  segment, measured on its *first* pass over the data (a fresh object per repeat: sacrebleu's 13a tokenizer caches
  its results on the instance, so a second pass would time a cache, not a tokenizer).

Our metrics are timed in two settings:

- ``cold``: the one-system case the issue asks for: everything inside the timing, hypothesis AND reference trees read
  from the parse strings, converted, counted (:func:`~syneval_nb.metrics.syntactic.score_corpus` after
  :func:`~syneval_nb.metrics.syntactic.clear_caches`: the kept references and the head-rule and label caches are
  emptied before every repeat);
- ``warm``: the many-systems case: the references read once and their reference-side statistics computed and kept,
  so only the hypothesis side (tree reading included) is timed.

CPU time (``time.process_time``, best of ``--repeat``) is the headline, since the machine is shared; wall time is
shown too. Then the wall time of all five metrics for all 19 systems with the references read once, in one process.
Targets (issue 5), cold CPU against ``sentence_bleu``: STM, HWCM, DSTM >= 1.0x; TKM, DTKM >= 0.5x. Exit status 1
if a target is missed.

The first line says which implementation of the hot loops runs (:mod:`syneval_nb._accel`): the compiled extension
that ``bash setup.sh`` builds, or pure Python. Both give identical numbers (``tests/test_speedups.py``); to time
the pure-Python path, run with ``SYNEVAL_NB_PURE_PYTHON=1``.

    .venv/bin/python benchmarks/syntactic_speed.py [--system UEdin] [--segments 1000] [--repeat 3]
                                                   [--no-all]
"""
from __future__ import annotations

import argparse
import gc
import logging
import sys
import time
from typing import Callable

import sacrebleu

from syneval_nb import _accel
from syneval_nb.metrics import syntactic
from syneval_nb.data import load_wmt21_deen
from syneval_nb.metrics.syntactic import _references, score_corpus

TARGETS = {"stm": 1.0, "hwcm": 1.0, "dstm": 1.0, "tkm": 0.5, "dtkm": 0.5}


def timed(fn: Callable[[], object], repeat: int, setup: Callable[[], object] | None = None) -> tuple[float, float]:
    """Best (wall seconds, CPU seconds) of ``repeat`` runs; ``setup`` (untimed) and a full collection before each."""
    best_w = best_c = float("inf")
    for _ in range(repeat):
        if setup is not None:
            setup()
        gc.collect()
        w0, c0 = time.perf_counter(), time.process_time()
        fn()
        best_w = min(best_w, time.perf_counter() - w0)
        best_c = min(best_c, time.process_time() - c0)
    return best_w, best_c


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--system", default="UEdin", help="the system (default UEdin, as benchmarks/lexical_speed.py)")
    ap.add_argument("--segments", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-all", action="store_true", help="skip the 19-system wall time")
    args = ap.parse_args(argv)
    logging.getLogger("sacrebleu").setLevel(logging.ERROR)

    data = load_wmt21_deen()
    seg = data.segments
    one = seg[seg["system"] == args.system].sort_values("seg_id").head(args.segments)
    n = len(one)
    hyps = one["target"].tolist()
    refs = [[a, b] for a, b in zip(one["ref_A"], one["ref_B"])]
    hyp_ptb = one["ptb"].tolist()
    ref_ptb = [[a, b] for a, b in zip(one["ptb_ref_A"], one["ptb_ref_B"])]
    print(f"syneval_nb hot loops: {_accel.STATUS}")
    print(f"WMT21 de-en, system {args.system}: {n} segments, 2 references; best of {args.repeat}")

    base: dict[str, tuple[float, float]] = {}
    base["sentence_bleu"] = timed(lambda: [sacrebleu.sentence_bleu(h, r) for h, r in zip(hyps, refs)], args.repeat)
    holder: list = []
    base["BLEU obj"] = timed(lambda: [holder[-1].sentence_score(h, r) for h, r in zip(hyps, refs)], args.repeat,
                             setup=lambda: holder.append(sacrebleu.metrics.BLEU(effective_order=True)))
    holder.clear()
    for name, (w, c) in base.items():
        print(f"sacrebleu {name:14s}: {n / c:7.0f} seg/s CPU, {n / w:7.0f} seg/s wall")
    bw, bc = base["sentence_bleu"]
    ow, oc = base["BLEU obj"]
    print()
    print(f"{'metric':9s} {'setting':7s} {'seg/s CPU':>9s} {'x s_bleu':>8s} {'x obj':>6s} {'seg/s wall':>10s} "
          f"{'x s_bleu':>8s} {'x obj':>6s}  target (CPU, cold, x sentence_bleu)")
    missed = []
    for m in (*TARGETS, "all five"):
        metrics = syntactic.METRICS if m == "all five" else (m,)
        for setting in ("cold", "warm"):
            prepared = None
            fn = lambda: score_corpus(hyp_ptb, ref_ptb, metrics, 9)  # noqa: E731
            if setting == "cold":
                w, c = timed(fn, args.repeat, setup=syntactic.clear_caches)
            else:
                syntactic.clear_caches()
                fn()  # computes and keeps the reference-side statistics
                prepared = _references(ref_ptb)
                w, c = timed(fn, args.repeat, setup=lambda: setattr(prepared, "_hyps", None))  # hypotheses re-read
            prepared = None  # free the reference statistics before the next measurement
            syntactic.clear_caches()
            target = TARGETS.get(m)
            verdict = ""
            if target is not None and setting == "cold":
                ok = bc / c >= target
                verdict = f"{target:.1f}x {'ok' if ok else 'MISSED'}"
                if not ok:
                    missed.append(m)
            print(f"{m:9s} {setting:7s} {n / c:9.0f} {bc / c:8.2f} {oc / c:6.2f} {n / w:10.0f} {bw / w:8.2f} "
                  f"{ow / w:6.2f}  {verdict}")

    if not args.no_all:
        by_system = {s: g.sort_values("seg_id")["ptb"].tolist() for s, g in seg.groupby("system", sort=True)}
        first = seg[seg["system"] == next(iter(by_system))].sort_values("seg_id")
        all_refs = [[a, b] for a, b in zip(first["ptb_ref_A"], first["ptb_ref_B"])]
        n_seg = len(all_refs)
        syntactic.clear_caches()
        w0, c0 = time.perf_counter(), time.process_time()
        for hyps_s in by_system.values():
            score_corpus(hyps_s, all_refs, syntactic.METRICS, 9)
        w, c = time.perf_counter() - w0, time.process_time() - c0
        print(f"all five metrics, depths 1..9, {len(by_system)} systems x {n_seg} segments, references read once: "
              f"{w:.1f} s wall ({c:.1f} s CPU)")
    if missed:
        print(f"targets missed: {', '.join(missed)}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
