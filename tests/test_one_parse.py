"""Issue 23: one Stanford parse serves the syntactic metrics and the Feng-Hirst RST parser.

The records below are the JVM's own output (``-outputFormat penn,typedDependenciesCollapsed``), copied from a run;
the tests marked ``slow`` run the real JVMs.
"""
from __future__ import annotations

import subprocess
import sys

import pytest

from syneval_nb.parsers.cache import ParseCache
from syneval_nb.parsers.feng_hirst import FengHirstParser, KitSyntaxParser, backend_key, sentences
from syneval_nb.parsers.frontend import parse_rst, parse_strings
from syneval_nb.parsers.stanford import (ALONE_SENTINEL, SENTINEL, StanfordParser, _JvmWorker, context_free,
                                         deps_backend_key, feng_hirst_answer, record_parts, record_tree)
from syneval_nb.trees.rst import load_rst_jsonl

# "He left at 5 p.m." parsed alone (followed by ALONE_SENTINEL, as ParserDemo at the end of its input) and as a
# line (followed by SENTINEL: the tokenizer splits a period off the final abbreviation and the tag changes)
ALONE = ("(ROOT\n  (S\n    (NP (PRP He))\n    (VP (VBN left)\n      (PP (IN at)\n        (NP (CD 5) (RB p.m.))))))"
         "\n\nnsubj(left-2, He-1)\nroot(ROOT-0, left-2)\nprep_at(left-2, 5-4)\nadvmod(5-4, p.m.-5)")
LINE = ("(ROOT\n  (S\n    (NP (PRP He))\n    (VP (VBD left)\n      (PP (IN at)\n        (NP (CD 5) (RB p.m.))))\n"
        "    (. .)))\n\nnsubj(left-2, He-1)\nroot(ROOT-0, left-2)\nprep_at(left-2, 5-4)\nadvmod(5-4, p.m.-5)")
NO_DEPS = "(ROOT\n  (INTJ (UH ...)))\n\n"
HI = "(ROOT\n  (NP (NNP Hi)))\n\nroot(ROOT-0, Hi-1)"


def test_record_tree_is_the_one_line_form():
    assert record_tree(ALONE) == "(ROOT (S (NP (PRP He)) (VP (VBN left) (PP (IN at) (NP (CD 5) (RB p.m.))))))"
    assert record_tree(LINE) == ("(ROOT (S (NP (PRP He)) (VP (VBD left) (PP (IN at) (NP (CD 5) (RB p.m.)))) "
                                 "(. .)))")
    assert record_tree(NO_DEPS) == "(ROOT (INTJ (UH ...)))"
    assert record_tree(LINE, max_length=6) == "(ROOT (S (NP (PRP He)) (VP (VBD left) (PP (IN at) (NP (CD 5) " \
                                              "(RB p.m.)))) (. .)))"
    assert record_tree(LINE, max_length=5) == "(())"  # 6 words: what -maxLength 5 prints
    assert record_tree("(())") == "(())"
    assert record_parts(NO_DEPS) == (["(ROOT", "  (INTJ (UH ...)))"], [])


def test_feng_hirst_answer_is_what_its_reader_returns():
    # SyntaxParser.parse_sentence strips each line and concatenates the tree's lines without a separator
    assert feng_hirst_answer(ALONE) == (
        "(ROOT(S(NP (PRP He))(VP (VBN left)(PP (IN at)(NP (CD 5) (RB p.m.))))))",
        "nsubj(left-2, He-1)\nroot(ROOT-0, left-2)\nprep_at(left-2, 5-4)\nadvmod(5-4, p.m.-5)")
    assert feng_hirst_answer(NO_DEPS) == ("(ROOT(INTJ (UH ...)))", "")


def test_context_free():
    assert not context_free(ALONE)  # ends in "p.m.": tokenized differently before a capitalised line
    assert not context_free(LINE)
    assert context_free(HI)
    assert context_free(NO_DEPS)  # "..." is not an abbreviation
    assert context_free("(ROOT (S (NP (PRP He)) (VP (VBD left)) (. .)))")
    assert not context_free("(ROOT (NP (NNP U.S.)))")
    assert not context_free("(())")


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


@pytest.mark.slow
def test_one_parse_serves_both_uses(tmp_path):
    """Lines parsed for the syntactic metrics by the dependencies parser: the one-line trees equal the one-line
    parser's, and a context-free line's record is cached for the RST parser, which then parses nothing."""
    lines = ["The cat sat on the mat.", "He left at 5 p.m.", "It rained (a lot) yesterday."]
    with StanfordParser() as one, StanfordParser(dependencies=True) as both, ParseCache(tmp_path / "c.sqlite") as c:
        expected = parse_strings(lines, cache=None, parser=one, progress=False)
        got = parse_strings(lines, cache=c, parser=both, progress=False)
        assert list(got) == list(expected)
        assert expected[1].endswith("(. .)))")  # the line context's fake period
        assert c.count(both.backend_key) == 3
        assert set(c.get_many(deps_backend_key(), lines)) == {lines[0], lines[2]}  # not the "p.m." line
        recs = parse_strings(lines, backend="stanford-deps", cache=c, parser=both, progress=False)
        assert recs.report.n_cached == 2 and recs.report.n_parsed == 1
        assert recs[1] == ALONE  # parsed alone: no period split off, VBN as ParserDemo
        assert recs[0].startswith("(ROOT\n  (S\n    (NP (DT The) (NN cat))")


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
