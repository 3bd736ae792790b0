"""How often does a primary claim "hold" when the human scores are shuffled? (issue 35: "with permute_human, no
verdict holds in any chapter").

With ``permute_human=seed`` every human score a chapter uses is shuffled, so every primary claim's null is true and
Holm over a chapter's primary claims keeps the chance that *any* of them holds at or below alpha (0.05) per
chapter and seed. A single seed with one claim holding (05, seed 1, Holm p 0.048) is that 5% at work, not a bug;
the kit's check is a rate over seeds. This benchmark measures it cheaply for chapter 02: the metric scores do not
depend on the human scores, so they are computed once, and per seed only the primary claims' two tables (Pearson
and beyond length, MQM z, source segments resampled) and their Holm family are recomputed, exactly as the chapter
does (the chapter's own claim declarations, decided by ``stats.decide_claims``).

    PYTHONPATH=. .venv/bin/python benchmarks/permuted_rate.py --seeds 1-20 [--sample N] [--data-dir DIR]

Prints, per seed, the number of primary claims that hold and the smallest Holm p; then the share of seeds with any
hold, with its exact (Clopper-Pearson) 95% interval.
"""
from __future__ import annotations

import argparse
import dataclasses
import time

from scipy.stats import beta

from syneval_nb import stats
from syneval_nb.studies import common, lexical_metrics as study


def primary_verdicts(ls: study.LexicalScores, n_resamples: int, seed: int = 0) -> dict:
    """Chapter 02's primary claims (its own declarations, ``lexical_metrics.claims``), Holm over them (the chapter's
    family), decided by the one engine on the two tables they read."""
    kw = dict(humans={"MQM z": "mqm_z"}, n_resamples=n_resamples, seed=seed)
    tables = {"MQM z": study.segment_tables(ls, **kw), "beyond length": study.segment_tables(ls, beyond_length=True,
                                                                                             **kw)}
    return stats.decide_claims([c for c in study.claims(list(ls.scores), system=False) if c.primary], tables)


def _seeds(text: str) -> list[int]:
    a, _, b = text.partition("-")
    return list(range(int(a), int(b or a) + 1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", default="1-20", help="permutation seeds, e.g. 1-20")
    ap.add_argument("--sample", type=int, default=None, help="source segments (default: all)")
    ap.add_argument("--n-resamples", type=int, default=1000)
    ap.add_argument("--data-dir", default=None)
    a = ap.parse_args()
    t0 = time.time()
    ted = common.load_ted(a.data_dir, a.sample)
    ls = study.score(ted, progress=False)
    ls = dataclasses.replace(ls, scores={m: ls.scores[m] for m in ("BLEU-4", "METEOR", "chrF")})
    print(f"chapter 02, {ted['seg_id'].nunique()} source segments, {a.n_resamples} resamples; scored in "
          f"{time.time() - t0:.0f} s")
    held = []
    for s in _seeds(a.seeds):
        perm = common.load_ted(a.data_dir, a.sample, permute_human=s)
        assert (perm["target"].to_numpy() == ted["target"].to_numpy()).all()  # same rows, shuffled humans
        v = primary_verdicts(dataclasses.replace(ls, frame=perm), a.n_resamples)
        n = len(common.no_holds(v))
        held.append(n > 0)
        print(f"seed {s:3d}: {n} of {len(v)} primary claims hold; smallest Holm p "
              f"{min(x['p_holm'] for x in v.values()):.3f}")
    k, n = sum(held), len(held)
    lo = beta.ppf(0.025, k, n - k + 1) if k else 0.0
    hi = beta.ppf(0.975, k + 1, n - k) if k < n else 1.0
    print(f"seeds with any primary claim holding: {k} of {n} ({k / n:.1%}, 95% interval [{lo:.1%}, {hi:.1%}]); "
          f"Holm over the primary claims promises at most 5% per chapter ({time.time() - t0:.0f} s)")


if __name__ == "__main__":
    main()
