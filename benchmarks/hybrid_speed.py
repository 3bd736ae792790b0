"""Speed target of issue 7: hybridizing all 1,000 WMT21 de-en segments (references A and B) and scoring one
system's BLEU against the extended sets takes seconds, not minutes.

Run: ``.venv/bin/python benchmarks/hybrid_speed.py [--max-refs 64] [--system Facebook-AI]``
"""
from __future__ import annotations

import argparse
import time

from syneval_nb import data
from syneval_nb.metrics import hybrid
from syneval_nb.metrics import lexical
from syneval_nb.studies import hybridization


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--max-refs", type=int, default=hybrid.DEFAULT_MAX_REFS)
    ap.add_argument("--system", default="Facebook-AI")
    ap.add_argument("--data-dir", default=None)
    args = ap.parse_args()

    t0 = time.perf_counter()
    deen = data.load_wmt21_deen(args.data_dir)
    one = deen.segments[deen.segments["system"] == args.system].sort_values("seg_id")
    t_load = time.perf_counter() - t0

    t0 = time.perf_counter()
    trees = hybridization.reference_trees(one, ("ptb_ref_A", "ptb_ref_B"))
    t_read = time.perf_counter() - t0

    t0 = time.perf_counter()
    sets = hybrid.hybridize_corpus(trees, texts=list(zip(one["ref_A"], one["ref_B"])), max_refs=args.max_refs,
                                   progress=False)
    t_hyb = time.perf_counter() - t0
    report = hybridization.cap_report(sets)

    bleu = lexical.BLEU(max_ngram_order=4)
    t0 = time.perf_counter()
    ext = bleu.corpus_score(list(one["target"]), [s.texts for s in sets])
    t_ext = time.perf_counter() - t0
    t0 = time.perf_counter()
    orig = bleu.corpus_score(list(one["target"]), [[a, b] for a, b in zip(one["ref_A"], one["ref_B"])])
    t_orig = time.perf_counter() - t0

    print(f"segments                    {len(sets)}")
    print(f"load data                   {t_load:7.2f} s")
    print(f"read reference parses       {t_read:7.2f} s")
    print(f"{f'hybridize (max_refs={args.max_refs})':28s}{t_hyb:7.2f} s   "
          f"({report['refs_per_segment']:.2f} refs/segment, {report['n_capped']} segments capped)")
    print(f"{f'BLEU, extended sets':28s}{t_ext:7.2f} s   {args.system}: BLEU = {100 * ext.score:.2f}")
    print(f"{f'BLEU, original A+B':28s}{t_orig:7.2f} s   {args.system}: BLEU = {100 * orig.score:.2f}")
    print(f"total hybridize + score     {t_hyb + t_ext:7.2f} s")


if __name__ == "__main__":
    main()
