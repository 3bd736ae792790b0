"""The kit at WMT scale (issue 38): the 19 newstest2021 de-en systems x 1,000 segments, from an empty cache.

    .venv/bin/python benchmarks/wmt_scale.py                      # 19 systems x 1,000 segments, reference A
    .venv/bin/python benchmarks/wmt_scale.py --segments 100       # smaller
    .venv/bin/python benchmarks/wmt_scale.py --parts a,c --stanford-sample 50

Three stages, each timed (wall seconds) and printed with its rate, through the kit's public functions
(:func:`syneval_nb.data.load_wmt21_deen`, :class:`~syneval_nb.metrics.Corpus`,
:func:`~syneval_nb.metrics.prepare`, :func:`~syneval_nb.metrics.score_systems`), every parse through a new
temporary cache file:

(a) the lexical metrics of the default list (BLEU, chrF, TER, METEOR) and HWCM/DSTM/DTKM on spaCy dependency
    trees (``@spacy``) end to end: the spaCy parse of every distinct line (each once, through the cache), then each
    metric on the 19 systems (issue 38's target: at most 5 minutes for 19,000 lines);
(b) the Stanford path, timed on a small sample (``--stanford-sample`` distinct hypothesis lines, seed 0) in line
    mode and in sentence mode (one worker, a new JVM, started before the clock, and an empty cache each; the kit's
    shared parser, which keeps the RST step's records too), extrapolated to 1,000 distinct lines; and the share of lines that repeat across systems (each distinct line is parsed once);
(c) all five syntactic metrics (STM, HWCM, DSTM, TKM, DTKM, Collins heads) on the 19 systems with the shipped
    Stanford parses (``parses/stanford-pcfg-3.3.1``, line mode) given, so no parse is made.

``--segments N`` scores the first N segments of every system. Reference A only (the de-en primary reference,
see :func:`~syneval_nb.data.load_wmt21_deen`).
"""
from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path

from syneval_nb.data import WMT21_SYSTEMS, load_wmt21_deen
from syneval_nb.metrics import Corpus, get, prepare, score_systems
from syneval_nb.parsers.cache import ParseCache
from syneval_nb.parsers.frontend import parse_strings
from syneval_nb.parsers.stanford import close_shared_parsers, get_stanford_parser

LEXICAL = ["BLEU", "chrF", "TER", "METEOR"]
SPACY = ["HWCM@spacy", "DSTM@spacy", "DTKM@spacy"]
SYNTACTIC = ["STM", "HWCM", "DSTM", "TKM", "DTKM"]


def corpora(frame, systems, n: int, parses: bool = False) -> dict[str, Corpus]:
    out = {}
    for s in systems:
        rows = frame[frame["system"] == s].sort_values("seg_id").head(n)
        extra = {"hyp_ptb": rows["ptb"].tolist(), "ref_ptb": [[p] for p in rows["ptb_ref_A"]]} if parses else {}
        out[s] = Corpus(rows["target"].tolist(), [[r] for r in rows["ref_A"]], **extra)
    return out


def score(names: list[str], corp: dict[str, Corpus], label: str, n_lines: int) -> float:
    total = 0.0
    for name in names:
        metric = get(name)
        t0 = time.perf_counter()
        stats = score_systems([metric], corp)[0]
        dt = time.perf_counter() - t0
        total += dt
        best = max(corp, key=lambda s: metric.corpus_from_stats(stats[s]).score * (1 if metric.higher_is_better
                                                                                    else -1))
        print(f"  {label} {name:12s} {dt:7.1f} s  {n_lines / dt:8.0f} lines/s  (best system: {best})")
    return total


def part_a(frame, systems, n: int, tmp: Path) -> None:
    corp = corpora(frame, systems, n)
    n_lines = sum(len(c) for c in corp.values())
    print(f"(a) lexical + spaCy dependency metrics, {len(systems)} systems x {n} segments = {n_lines} lines, "
          f"empty cache")
    t0 = time.perf_counter()
    with ParseCache(tmp / "a.sqlite") as store:
        prepare(list(corp.values()), ("dep",), cache=store, progress=False)
        distinct = store.count()
    parse_s = time.perf_counter() - t0
    print(f"  spaCy parse  {distinct} distinct lines     {parse_s:7.1f} s  {distinct / parse_s:8.0f} lines/s")
    lex = score(LEXICAL, corp, "lexical", n_lines)
    dep = score(SPACY, corp, "spaCy  ", n_lines)
    total = time.perf_counter() - t0
    print(f"  (a) total {total:.1f} s = {total / 60:.2f} min (parse {parse_s:.1f} s, lexical {lex:.1f} s, "
          f"dependency metrics {dep:.1f} s; issue 38's target: at most 5 min for 19,000 lines)")


def part_b(frame, systems, n: int, sample: int, tmp: Path) -> None:
    rows = frame[frame["system"].isin(systems) & (frame["seg_id"] < n)]
    hyps = [t for t in rows["target"] if t.strip()]
    refs = [t for t in frame[frame["system"] == systems[0]].sort_values("seg_id").head(n)["ref_A"] if t.strip()]
    distinct_hyps, distinct_all = set(hyps), set(hyps) | set(refs)
    print(f"(b) Stanford path: {len(hyps)} hypothesis lines, {len(distinct_hyps)} distinct "
          f"({1 - len(distinct_hyps) / len(hyps):.1%} of the lines repeat a line of another system or segment and "
          f"are parsed once); with reference A: {len(hyps) + len(refs)} lines, {len(distinct_all)} distinct")
    pick = sorted(random.Random(0).sample(sorted(distinct_hyps), min(sample, len(distinct_hyps))))
    per = {}
    for split in ("lines", "sentences"):
        close_shared_parsers()
        t0 = time.perf_counter()
        get_stanford_parser().start()  # the shared parser parse_strings uses: JVM start-up and model, timed apart
        start = time.perf_counter() - t0
        with ParseCache(tmp / f"b-{split}.sqlite") as store:
            t0 = time.perf_counter()
            got = parse_strings(pick, cache=store, split=split, progress=False, warn=False)
            dt = time.perf_counter() - t0
        close_shared_parsers()
        per[split] = dt / len(pick)
        print(f"  {split:9s} mode: {len(pick)} distinct lines ({got.report.n_parsed} "
              f"{'sentences' if split == 'sentences' else 'lines'} parsed, {len(got.report.failures)} without a "
              f"parse) in {dt:.1f} s (+ {start:.1f} s JVM start): {1000 * per[split] / 60:.1f} min per 1,000 distinct "
              f"lines; all {len(distinct_all)} distinct lines: {len(distinct_all) * per[split] / 60:.0f} min "
              f"(one worker)")


def part_c(frame, systems, n: int) -> None:
    corp = corpora(frame, systems, n, parses=True)
    n_lines = sum(len(c) for c in corp.values())
    missing = sum(p is None for c in corp.values() for p in c.hyp_ptb)
    print(f"(c) the five syntactic metrics on the shipped Stanford parses, {len(systems)} systems x {n} segments = "
          f"{n_lines} lines ({missing} hypotheses without a shipped parse), no parsing")
    t0 = time.perf_counter()
    score(SYNTACTIC, corp, "syntax ", n_lines)
    total = time.perf_counter() - t0
    print(f"  (c) total {total:.1f} s = {total / 60:.2f} min")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--segments", type=int, default=1000, help="first N segments of every system (default 1000)")
    ap.add_argument("--systems", type=int, default=len(WMT21_SYSTEMS), help="first N of the 19 systems")
    ap.add_argument("--parts", default="a,b,c", help="which stages to run (a, b, c)")
    ap.add_argument("--stanford-sample", type=int, default=50, help="distinct lines timed in (b)")
    ap.add_argument("--data-dir", default=None)
    args = ap.parse_args(argv)
    parts = set(args.parts.split(","))
    if not parts <= {"a", "b", "c"} or args.segments < 1:
        ap.error("--parts takes a, b and c; --segments at least 1")
    frame = load_wmt21_deen(args.data_dir).segments
    systems = list(WMT21_SYSTEMS[:args.systems])
    print(f"WMT21 de-en, {len(systems)} systems x {args.segments} segments, reference A; {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.1f} at start")
    with tempfile.TemporaryDirectory() as tmp:
        if "a" in parts:
            part_a(frame, systems, args.segments, Path(tmp))
        if "b" in parts:
            part_b(frame, systems, args.segments, args.stanford_sample, Path(tmp))
        if "c" in parts:
            part_c(frame, systems, args.segments)
    print(f"load average {os.getloadavg()[0]:.1f} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
