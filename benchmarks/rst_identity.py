"""The Feng-Hirst parser through the kit's paths gives the shipped trees (issues 16 and 23: >= 300 + 300 texts).

    .venv/bin/python benchmarks/rst_identity.py                      # 300 TED + 300 de-en, kit syntax, in-process CRF
    .venv/bin/python benchmarks/rst_identity.py --n 50 --syntax package --classifier subprocess
    .venv/bin/python benchmarks/rst_identity.py --n 0 --check-oneline 150   # only the one-parse-two-outputs check

Draws ``--n`` distinct texts (seed ``--seed``) from the TED zh-en ``texts.tsv`` rows and ``--n`` from the lines of
the WMT21 de-en files (every system and both references) and parses them with
:func:`syneval_nb.parsers.frontend.parse_rst` (``syntax=``, ``classifier=``; a fresh temporary cache, one worker).
With ``--syntax kit`` (issue 23) the Stanford parse of every sentence comes from the kit's long-lived parser
(``dependencies=True``, each sentence parsed alone) instead of the package's ``ParserDemo`` JVM. Prints, per data
set, how many trees equal the shipped ``parses/feng-hirst-0.1.4`` trees (overall, multi-EDU), and what could make
the two syntax paths differ, counted over the sentences the RST parser parsed:

- tokenization context: sentences whose last words are abbreviations ending in a period (the tokenizer's
  look-ahead; the kit parses them alone, followed by a lower-case sentinel line, as ``ParserDemo`` at the end of
  its input) -- :func:`syneval_nb.parsers.stanford.context_free`;
- escaping / encoding: sentences with non-ASCII characters or PTB escapes (``-LRB-``, quotes);
- ``-maxLength``: sentences with more than 150 tokens (``ParserDemo`` has no limit; neither has the kit's
  ``dependencies=True`` parser, whose one-line tree applies the limit itself).

``--check-oneline K``: parses the first K of those sentences (K <= all) with the kit's one-line parser and with
the ``dependencies=True`` parser (as lines) and counts how many one-line trees are equal -- the claim that one parse
serves the syntactic metrics (:func:`~syneval_nb.parsers.stanford.record_tree`). Exit code 1 if anything differs.
"""
from __future__ import annotations

import argparse
import random
import re
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from rst_throughput import deen_items, ted_items  # noqa: E402

from syneval_nb.parsers.cache import ParseCache  # noqa: E402
from syneval_nb.parsers.feng_hirst import FengHirstParser, sentences  # noqa: E402
from syneval_nb.parsers.frontend import parse_rst  # noqa: E402
from syneval_nb.parsers.stanford import (StanfordParser, context_free, deps_backend_key,  # noqa: E402
                                         record_tree)
from syneval_nb.trees.ptb import read_ptb_flat  # noqa: E402
from syneval_nb.trees.rst import is_void  # noqa: E402

_ESCAPED = re.compile(r"[()\[\]{}\"`']")


def draw(items: list[tuple[str, dict | None]], n: int, seed: int) -> list[tuple[str, dict | None]]:
    """``n`` distinct non-empty texts with their shipped trees (the first occurrence's tree)."""
    unique: dict[str, dict | None] = {}
    for t, tree in items:
        if t.strip() and t not in unique:
            unique[t] = tree
    texts = sorted(unique)
    return [(t, unique[t]) for t in random.Random(seed).sample(texts, min(n, len(texts)))]


def syntax_facts(store: ParseCache, texts: list[str]) -> str:
    """The counts of the module docstring over the sentences of ``texts`` (records read from ``store``)."""
    sents = list(dict.fromkeys(s for t in texts for s in sentences(t)))
    recs = store.get_many(deps_backend_key(), sents)
    n_ctx = n_esc = n_long = n_fail = 0
    for s in sents:
        rec = recs.get(s)
        if rec is None:
            n_fail += 1
            continue
        words = [w for w in read_ptb_flat(record_tree(rec)).words if w is not None]
        n_ctx += not context_free(rec)
        n_esc += bool(_ESCAPED.search(s)) or not s.isascii()
        n_long += len(words) > 150
    return (f"{len(sents)} sentences: {n_ctx} end in an abbreviation (context-dependent tokenization), {n_esc} with "
            f"brackets/quotes or non-ASCII (escaping), {n_long} longer than 150 tokens (maxLength), {n_fail} without "
            "a parse")


def check_oneline(sents: list[str]) -> int:
    """How many of ``sents`` differ between the one-line parser and the record's one-line tree (as lines)."""
    one: dict[int, str | None] = {}
    rec: dict[int, str | None] = {}
    with StanfordParser() as a, StanfordParser(dependencies=True) as b:
        a.parse_stream(list(enumerate(sents)), lambda i, r, *_: one.__setitem__(i, r))
        b.parse_stream([(i, s, "line") for i, s in enumerate(sents)], lambda i, r, *_: rec.__setitem__(i, r))
    bad = [i for i in range(len(sents))
           if (one[i] or "(())") != (record_tree(rec[i], 150) if rec[i] is not None else "(())")]
    for i in bad[:10]:
        print(f"  one-line differs: {sents[i][:80]!r}\n    {one[i]}\n    {rec[i] and record_tree(rec[i])}")
    print(f"one parse, two outputs: the one-line tree of the dependencies parser equals the one-line parser's on "
          f"{len(sents) - len(bad)} / {len(sents)} sentences")
    return len(bad)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=300, help="texts per data set (default 300)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--classifier", choices=FengHirstParser.CLASSIFIERS, default="inprocess")
    ap.add_argument("--syntax", choices=FengHirstParser.SYNTAX, default="kit")
    ap.add_argument("--check-oneline", type=int, default=0, metavar="K")
    ap.add_argument("--data-dir", default=None)
    args = ap.parse_args(argv)

    bad = 0
    all_texts: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        store = ParseCache(Path(tmp) / "parses.sqlite")
        try:
            for name, loader in (("ted-zhen-mqm", ted_items), ("wmt21-deen", deen_items)):
                sample = draw(loader(args.data_dir), args.n, args.seed)
                if not sample:
                    continue
                texts = [t for t, _ in sample]
                all_texts += texts
                t0 = time.perf_counter()
                got = parse_rst(texts, cache=store, classifier=args.classifier, syntax=args.syntax, progress=True)
                dt = time.perf_counter() - t0
                same = multi = multi_same = 0
                for (text, shipped), g in zip(sample, got):
                    ok = g == shipped
                    same += ok
                    if shipped is not None and not is_void(shipped):
                        multi += 1
                        multi_same += ok
                    if not ok:
                        print(f"  differs: {text[:90]!r}")
                bad += len(sample) - same
                print(f"{name:13s} syntax={args.syntax} classifier={args.classifier}: {same} / {len(sample)} trees "
                      f"equal to the shipped ones; multi-EDU {multi_same} / {multi}; failed "
                      f"{sum(g is None for g in got)}; {len(sample) / dt:.2f} segments/s (syntax parsing included)")
                if args.syntax == "kit":
                    print(f"  {syntax_facts(store, texts)}")
            if args.check_oneline:
                if not all_texts:
                    all_texts = [t for t, _ in draw(ted_items(args.data_dir), 100, args.seed)]
                sents = list(dict.fromkeys(s for t in all_texts for s in sentences(t)))[:args.check_oneline]
                bad += check_oneline(sents)
        finally:
            store.close()
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
