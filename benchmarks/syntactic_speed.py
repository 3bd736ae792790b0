"""Speed of the syntactic metrics against sacrebleu sentence BLEU, measured in the same run.

One WMT21 de-en system (1,000 segments) with its two references (A and B), from the shipped Stanford parse strings.
For each metric (STM, HWCM, DSTM with depths 1..9 in one pass; TKM; DTKM) it reports segments/s and the ratio to
sacrebleu's sentence BLEU (2 references, ``effective_order=True``) in two settings:

- ``cold``: everything inside the timing, the reference trees read, converted and counted too;
- ``warm``: a :class:`~syneval_nb.syntactic.References` prepared beforehand (the multi-system case, where the
  references are read once), hypothesis tree reading still inside the timing.

Both wall-clock and process CPU time are shown, each the best of ``--repeat`` runs (CPU time is steadier on a
shared machine; the ``x BLEU`` ratios compare like with like). Then the wall time of
all five metrics for all 19 systems with the references read once. Targets (issue 5): STM, HWCM, DSTM >= 1.0x
sacrebleu; TKM, DTKM >= 0.5x.

    .venv/bin/python benchmarks/syntactic_speed.py [--system Facebook-AI] [--segments 1000] [--no-all]
"""
from __future__ import annotations

import argparse
import gc
import time
from typing import Callable

import sacrebleu

from syneval_nb.data import load_wmt21_deen
from syneval_nb.syntactic import References

TARGETS = {"stm": 1.0, "hwcm": 1.0, "dstm": 1.0, "tkm": 0.5, "dtkm": 0.5}


def timed(fn: Callable[[], object], repeat: int) -> tuple[float, float]:
    """Best (wall seconds, CPU seconds) of ``repeat`` runs, each after a full garbage collection."""
    best_w = best_c = float("inf")
    for _ in range(repeat):
        gc.collect()
        w0, c0 = time.perf_counter(), time.process_time()
        fn()
        best_w = min(best_w, time.perf_counter() - w0)
        best_c = min(best_c, time.process_time() - c0)
    return best_w, best_c


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--system", default="Facebook-AI")
    ap.add_argument("--segments", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-all", action="store_true", help="skip the 19-system wall time")
    args = ap.parse_args(argv)

    data = load_wmt21_deen()
    seg = data.segments
    one = seg[seg["system"] == args.system].sort_values("seg_id").head(args.segments)
    n = len(one)
    hyps, refs_a, refs_b = one["target"].tolist(), one["ref_A"].tolist(), one["ref_B"].tolist()
    hyp_ptb = one["ptb"].tolist()
    ref_ptb = [[a, b] for a, b in zip(one["ptb_ref_A"], one["ptb_ref_B"])]
    print(f"WMT21 de-en, system {args.system}: {n} segments, 2 references")

    bleu = sacrebleu.metrics.BLEU(effective_order=True)
    w_bleu, c_bleu = timed(lambda: [bleu.sentence_score(h, [a, b]) for h, a, b in zip(hyps, refs_a, refs_b)],
                           args.repeat)
    print(f"sacrebleu sentence BLEU: {n / w_bleu:8.0f} seg/s wall, {n / c_bleu:8.0f} seg/s CPU")
    print(f"{'metric':6s} {'setting':5s} {'seg/s wall':>10s} {'x BLEU':>7s} {'seg/s CPU':>10s} {'x BLEU':>7s} "
          f"{'target':>7s}")
    for m, target in TARGETS.items():
        for setting in ("cold", "warm"):
            if setting == "cold":
                fn = lambda: References(ref_ptb, 9).score(hyp_ptb, metrics=(m,))  # noqa: E731
            else:
                prepared = References(ref_ptb, 9)
                prepared.score(hyp_ptb, metrics=(m,))  # computes and keeps the reference-side statistics
                fn = lambda: prepared.score(hyp_ptb, metrics=(m,))  # noqa: E731
            w, c = timed(fn, args.repeat)
            fn = prepared = None  # free the reference statistics before the next measurement
            rw, rc = w_bleu / w, c_bleu / c
            flag = "ok" if rc >= target else "BELOW"
            print(f"{m:6s} {setting:5s} {n / w:10.0f} {rw:7.2f} {n / c:10.0f} {rc:7.2f} {target:5.1f}x {flag}")

    if not args.no_all:
        t0 = time.perf_counter()
        all_ref = seg[seg["system"] == seg["system"].iloc[0]].sort_values("seg_id")
        prepared = References([[a, b] for a, b in zip(all_ref["ptb_ref_A"], all_ref["ptb_ref_B"])], 9)
        n_sys = 0
        for system, g in seg.groupby("system", sort=True):
            prepared.score(g.sort_values("seg_id")["ptb"].tolist())
            n_sys += 1
        print(f"all five metrics, depths 1..9, {n_sys} systems x {len(all_ref)} segments, references read once: "
              f"{time.perf_counter() - t0:.1f} s wall")


if __name__ == "__main__":
    main()
