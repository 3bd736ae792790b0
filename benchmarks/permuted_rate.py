"""How often does a primary claim "hold" when the human scores are shuffled? (issue 35: "with permute_human, no
verdict holds in any chapter").

With ``permute_human=seed`` every human score a chapter uses is shuffled, so every primary claim's null is true and
Holm over a chapter's primary claims keeps the chance that *any* of them holds at or below alpha (0.05) per
chapter and seed. A single seed with one claim holding (05, seed 1, Holm p 0.048) is that 5% at work, not a bug;
the kit's check is a rate over seeds. This benchmark measures it cheaply for chapter 02: the metric scores do not
depend on the human scores, so they are computed once, and per seed only the primary claims' two tables (Pearson
and beyond length, MQM z, source segments resampled) and their Holm family are recomputed, exactly as the chapter
does (the chapter's own claim declarations, decided by ``stats.decide_claims``).

Chapter 05 (``--chapter 05``) likewise: its SVMs are trained on human-vs-machine labels with the grid chosen by
validation accuracy only, so no score depends on the MQM scores. The chapter runs once (``run_chapter`` with the
notebook's defaults), then per seed the data are loaded as the chapter loads them with ``permute_human=seed``
(``learned_metric.load``: one permutation of the MQM columns over the rated TED rows), the held-out test rows are
taken from the permuted pool on the chapter's own splits, and the two tables its primary claims read ("segments"
and "segments beyond length") and their Holm family are recomputed.

    PYTHONPATH=. .venv/bin/python benchmarks/permuted_rate.py --seeds 1-20 [--chapter 02|05] [--sample N]
        [--data-dir DIR] [--grid full|small]

Prints, per seed, the number of primary claims that hold and the smallest Holm p; then the share of seeds with any
hold, with its exact (Clopper-Pearson) 95% interval; then, per primary claim, the share of seeds whose one-sided
p (unadjusted, (k+1)/(B+1) over the resamples) is at most 0.05 and at most 0.01 (a calibrated test: 5% and 1%),
with their intervals: which claim, if any, is rejected more often than its level.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import math
import time

from scipy.stats import beta

from syneval_nb import stats
from syneval_nb.metrics import learned
from syneval_nb.studies import common, learned_metric, lexical_metrics as study


def primary_verdicts(ls: study.LexicalScores, n_resamples: int, seed: int = 0) -> dict:
    """Chapter 02's primary claims (its own declarations, ``lexical_metrics.claims``), Holm over them (the chapter's
    family), decided by the one engine on the two tables they read."""
    kw = dict(humans={"MQM z": "mqm_z"}, n_resamples=n_resamples, seed=seed)
    tables = {"MQM z": study.segment_tables(ls, **kw), "beyond length": study.segment_tables(ls, beyond_length=True,
                                                                                             **kw)}
    return stats.decide_claims([c for c in study.claims(list(ls.scores), system=False) if c.primary], tables)


def learned_verdicts(ch: learned_metric.LearnedChapter, permute_human: int, data_dir=None) -> dict:
    """Chapter 05's primary claims (``learned_metric.claims``) on the MQM columns shuffled as the chapter shuffles
    them with ``permute_human`` (``learned_metric.load``), the scores of the chapter run ``ch`` (they do not read
    the human scores); the two segment tables rebuilt as ``run_chapter`` builds them; Holm over the primary claims
    by ``stats.decide_claims``."""
    p = ch.params
    d = learned_metric.load(data_dir, permute_human)
    pool = learned_metric.build_pools(d, p["sample"], p["seed"], p["ted_human"], p["ted_reference"])["TED"]
    test = learned.training_sets(pool, ch.exps["TED"].splits, seed=p["seed"])["test"]
    key = ["seg_id", "system", "hyp", "ref"]
    if not test[key].equals(ch.ted_test[key]):
        raise ValueError("the permuted test rows differ from the chapter's")
    kw = dict(n_resamples=p["n_resamples"], seed=p["seed"])
    tables = {"segments": learned_metric.segment_table(ch.seg_scores, test, **kw),
              "segments beyond length": learned_metric.segment_table(ch.seg_scores, test, beyond_length=True, **kw)}
    return stats.decide_claims([c for c in learned_metric.claims(ch) if c.primary], tables)


def check_against(v: dict, path: str) -> str:
    """Compare ``v`` (one seed's primary verdicts) with those of a chapter results JSON written with that
    ``permute_human`` seed: same statistic, p and Holm p to 1e-9 and same verdict for every claim of ``v``; says
    which differ."""
    ref = json.load(open(path))["verdicts"]
    bad = []
    for claim, x in v.items():
        r = ref.get(claim)
        if r is None:
            bad.append(f"{claim}: not in the file")
            continue
        for key in ("statistic", "p", "p_holm"):
            a, b = float(x[key]), float("nan" if r[key] is None else r[key])
            if not (abs(a - b) <= 1e-9 or (math.isnan(a) and math.isnan(b))):
                bad.append(f"{claim}: {key} {a!r} here, {b!r} there")
        if x["verdict"] != r["verdict"]:
            bad.append(f"{claim}: verdict {x['verdict']!r} here, {r['verdict']!r} there")
    if bad:
        return f"DIFFERS from {path}: " + "; ".join(bad)
    return f"the {len(v)} primary verdicts equal those of {path} (statistic, p, Holm p to 1e-9; verdict)"


def _seeds(text: str) -> list[int]:
    a, _, b = text.partition("-")
    return list(range(int(a), int(b or a) + 1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", default="1-20", help="permutation seeds, e.g. 1-20")
    ap.add_argument("--sample", type=int, default=None, help="source segments (default: all)")
    ap.add_argument("--n-resamples", type=int, default=1000)
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--chapter", default="02", choices=("02", "05"))
    ap.add_argument("--grid", default="full", choices=("full", "small"), help="chapter 05's SVM grid")
    ap.add_argument("--check", default=None, metavar="JSON",
                    help="chapter 05: its results JSON of a permuted run; that seed's verdicts must equal it")
    a = ap.parse_args()
    t0 = time.time()
    if a.chapter == "05":
        runs = _run_05(a, t0)
    else:
        runs = _run_02(a, t0)
    k, n = sum(len(common.no_holds(v)) > 0 for v in runs), len(runs)
    print(f"seeds with any primary claim holding: {k} of {n} ({k / n:.1%}, 95% interval {_interval(k, n)}); "
          f"Holm over the primary claims promises at most 5% per chapter ({time.time() - t0:.0f} s)")
    for claim in runs[0]:
        ps = [v[claim]["p"] for v in runs]
        k5, k1 = sum(p <= 0.05 for p in ps), sum(p <= 0.01 for p in ps)
        print(f"  {claim}: unadjusted p <= 0.05 in {k5} of {n} ({k5 / n:.1%}, {_interval(k5, n)}), "
              f"<= 0.01 in {k1} ({k1 / n:.1%}, {_interval(k1, n)})")


def _interval(k: int, n: int) -> str:
    """The exact (Clopper-Pearson) 95% interval of a share ``k`` of ``n``."""
    lo = beta.ppf(0.025, k, n - k + 1) if k else 0.0
    hi = beta.ppf(0.975, k + 1, n - k) if k < n else 1.0
    return f"[{lo:.1%}, {hi:.1%}]"


def _report(s: int, v: dict, suffix: str = "") -> dict:
    n = len(common.no_holds(v))
    print(f"seed {s:3d}: {n} of {len(v)} primary claims hold; smallest Holm p "
          f"{min(x['p_holm'] for x in v.values()):.3f}{suffix}", flush=True)
    return v


def _run_05(a, t0: float) -> list[dict]:
    ch = learned_metric.run_chapter(a.data_dir, sample=a.sample, grid=a.grid, n_resamples=a.n_resamples,
                                    progress=False)
    print(f"chapter 05, {ch.ted_test['seg_id'].nunique()} held-out TED source segments ({len(ch.ted_test)} MT "
          f"rows), grid {a.grid}, {a.n_resamples} resamples; run in {time.time() - t0:.0f} s", flush=True)
    check = json.load(open(a.check))["params"]["permute_human"] if a.check else None
    held = []
    for s in _seeds(a.seeds):
        t1 = time.time()
        v = learned_verdicts(ch, s, a.data_dir)
        held.append(_report(s, v, f" ({time.time() - t1:.0f} s)"))
        if s == check:
            print(f"          seed {s}: {check_against(v, a.check)}", flush=True)
    return held


def _run_02(a, t0: float) -> list[dict]:
    ted = common.load_ted(a.data_dir, a.sample)
    ls = study.score(ted, progress=False)
    ls = dataclasses.replace(ls, scores={m: ls.scores[m] for m in ("BLEU-4", "METEOR", "chrF")})
    print(f"chapter 02, {ted['seg_id'].nunique()} source segments, {a.n_resamples} resamples; scored in "
          f"{time.time() - t0:.0f} s")
    held = []
    for s in _seeds(a.seeds):
        perm = common.load_ted(a.data_dir, a.sample, permute_human=s)
        assert (perm["target"].to_numpy() == ted["target"].to_numpy()).all()  # same rows, shuffled humans
        held.append(_report(s, primary_verdicts(dataclasses.replace(ls, frame=perm), a.n_resamples)))
    return held


if __name__ == "__main__":
    main()
