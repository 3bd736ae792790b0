"""Issue 33: parse sentences, not lines, and take long sentences.

The splitter on concrete cases; the joined tree of a multi-sentence line (reader, heads, subtrees, the metrics, the
compiled twins); one-sentence lines give exactly the line-mode (shipped) trees; the cache's reuse of trees made
under another length limit; failures that name the sentence and its length, reachable from the Corpus; options
the spaCy backend refuses. Tests marked ``slow`` run the real JVM (each closes the parsers it starts).
"""
from __future__ import annotations

import subprocess
import sys
from collections import Counter

import pytest

from syneval_nb import _accel
from syneval_nb.metrics import registry as M
from syneval_nb.metrics.syntactic import _subtree_ids_py, dstm, dtkm, hwcm, stm, subtree_ids, tkm
from syneval_nb.parsers.cache import ParseCache
from syneval_nb.parsers.frontend import DEFAULT_SPLIT, parse, parse_strings, resolve_split
from syneval_nb.parsers.sentences import SPLITTER, join_trees, split_sentences
from syneval_nb.parsers.stanford import (DEFAULT_MAX_LENGTH, StanfordParser, close_shared_parsers,
                                         get_stanford_parser, too_long_reason)
from syneval_nb.textio import read_lines
from syneval_nb.trees import heads, ptb
from syneval_nb.trees.heads import to_dependencies
from syneval_nb.trees.ptb import read_ptb, read_ptb_flat

REF_A = "newstest2021.de-en.ref.A.en"
PTB_DIR = "parses/stanford-pcfg-3.3.1"

# two sentences and their one-line Stanford trees (the kit's parser, line mode, each sentence alone)
S1, T1 = "Mr. Smith went to Washington.", ("(ROOT (S (NP (NNP Mr.) (NNP Smith)) (VP (VBD went) (PP (TO to) "
                                           "(NP (NNP Washington)))) (. .)))")
S2, T2 = "He arrived at 5 p.m. on Monday.", ("(ROOT (S (NP (PRP He)) (VP (VBD arrived) (PP (IN at) (NP (CD 5) "
                                             "(RB p.m.))) (PP (IN on) (NP (NNP Monday)))) (. .)))")
JOINED = ("(ROOT (S (NP (NNP Mr.) (NNP Smith)) (VP (VBD went) (PP (TO to) (NP (NNP Washington)))) (. .)) "
          "(S (NP (PRP He)) (VP (VBD arrived) (PP (IN at) (NP (CD 5) (RB p.m.))) (PP (IN on) (NP (NNP Monday)))) "
          "(. .)))")


# ------------------------------------------------------------------------------------------ the splitter


@pytest.mark.parametrize("text, expected", [
    ("Mr. Smith went to Washington. He arrived at 5 p.m. on Monday.",
     ["Mr. Smith went to Washington.", "He arrived at 5 p.m. on Monday."]),
    # dotted abbreviations never end a sentence (a missed split, on purpose); decimals have no space
    ("It rose 3.5 percent in the U.S. The rest fell.", ["It rose 3.5 percent in the U.S. The rest fell."]),
    ("Dr. No and Prof. Higgins met St. John vs. Goliath.", ["Dr. No and Prof. Higgins met St. John vs. Goliath."]),
    ("J. K. Rowling wrote it. It sold.", ["J. K. Rowling wrote it.", "It sold."]),
    # a digit or a lower-case word does not start a sentence
    ("See No. 5 and Fig. 3 on p. 12.", ["See No. 5 and Fig. 3 on p. 12."]),
    ('"Why?" he asked. She left.', ['"Why?" he asked.', "She left."]),
    # closing quotes stay with their sentence; no boundary inside quotes or brackets
    ('He said "Go." Then he left.', ['He said "Go."', "Then he left."]),
    ('He said: "Go. Now." Then left.', ['He said: "Go. Now."', "Then left."]),
    ("He said: \u201cGo. Now.\u201d Then left.", ["He said: \u201cGo. Now.\u201d", "Then left."]),
    ("It was (as I said. Twice.) fine. Yes.", ["It was (as I said. Twice.) fine.", "Yes."]),
    ("What? No! Yes.", ["What?", "No!", "Yes."]),
    ("Wait... What happened?", ["Wait...", "What happened?"]),
    ("Es regnet. \u00c4pfel fallen.", ["Es regnet.", "\u00c4pfel fallen."]),
    # a piece without a letter stays with its neighbour
    ("1. Introduction", ["1. Introduction"]),
    ("... And so it began.", ["... And so it began."]),
    # a line without a boundary comes back unchanged, white space included (the line-mode text and cache entry)
    ("  A dog barked .  ", ["  A dog barked .  "]),
    ("", [""]),
    # a split line's sentences are stripped
    ("  One.   Two is here.  ", ["One.", "Two is here."]),
    ("We stand on the earth.\tWe see the stars.", ["We stand on the earth.", "We see the stars."]),
])
def test_splitter_examples(text, expected):
    assert split_sentences(text) == expected


def test_splitter_pieces_are_the_line_in_order():
    """Every split of the shipped WMT21 reference lines: the sentences are the line's text, in order, and every
    sentence holds a letter."""
    from syneval_nb.paths import data_dir

    ref = read_lines(data_dir() / "wmt21-deen" / REF_A)
    n_multi = 0
    for line in ref:
        parts = split_sentences(line)
        if len(parts) > 1:
            n_multi += 1
            assert "".join("".join(p.split()) for p in parts) == "".join(line.split())
            assert all(any(ch.isalpha() for ch in p) for p in parts)
        else:
            assert parts == [line]
    assert n_multi == 15  # of 1,000 lines (counted by this splitter, SPLITTER below)
    assert SPLITTER == "syneval-rules-1"


def test_splitter_refuses_non_text():
    with pytest.raises(TypeError, match="text must be str"):
        split_sentences(None)


# ------------------------------------------------------------------------------------------ the joined tree


def test_join_trees():
    assert join_trees([T1]) == T1  # one sentence: the line-mode tree, unchanged
    assert join_trees([T1, T2]) == JOINED
    with pytest.raises(ValueError, match="not a one-line Stanford tree"):
        join_trees([T1, "(S (NN x))"])


def test_joined_tree_reads_as_one_root_with_the_sentences():
    t, a, b = read_ptb(JOINED), read_ptb(T1), read_ptb(T2)
    assert t.label() == "ROOT" and len(t) == 2 and t[0] == a and t[1] == b
    assert a.label() == "S"  # a one-sentence tree still loses its ROOT
    assert t.leaves() == a.leaves() + b.leaves()
    flat = read_ptb_flat(JOINED)
    assert flat.labels[0] == "ROOT" and len(flat.kids[0]) == 2
    # the reader's paths agree: the general reader (the definition) and whatever read_ptb_flat used
    general = ptb._parse_general(JOINED, None)
    assert (general.labels, general.kids, general.words) == (flat.labels, flat.kids, flat.words)


def test_joined_tree_heads_first_sentence_heads_the_line():
    dep, da, db = to_dependencies(read_ptb(JOINED)), to_dependencies(read_ptb(T1)), to_dependencies(read_ptb(T2))
    n = len(da.words)
    assert dep.words == da.words + db.words and dep.tags == da.tags + db.tags
    assert da.words[da.root] == "went" and db.words[db.root] == "arrived"
    expected = list(da.heads) + [(da.root if h == -1 else h + n) for h in db.heads]
    assert dep.heads == expected  # "arrived" depends on "went"; everything else as in the sentences alone
    assert heads.explain_head("ROOT", ["S", "S"]) == (0, "ROOT (left): no listed category, the leftmost child")
    # the head pass and its compiled twin agree on the joined tree
    flat = read_ptb_flat(JOINED)
    assert heads._head_pass(flat) == heads._head_pass_py(flat)


def test_joined_tree_subtrees_are_the_union_plus_the_root():
    """Depth-d subtrees of the joined tree = those of sentence 1 + those of sentence 2 + the one rooted at ROOT
    (the sentences' trees have height 5, the root 6: the depths 1..6 have a root subtree, 7 has none)."""
    joined, a, b = read_ptb_flat(JOINED), read_ptb_flat(T1), read_ptb_flat(T2)
    assert [ptb.tree_depth(read_ptb(t)) for t in (JOINED, T1, T2)] == [6, 5, 5]
    for twin in (subtree_ids, _subtree_ids_py):
        shapes: dict = {}
        ids_a, ids_b = twin(a, 7, shapes, True), twin(b, 7, shapes, True)
        ids_j = twin(joined, 7, shapes, True)
        for d in range(1, 8):
            extra = Counter(ids_j[d - 1]) - Counter(ids_a[d - 1]) - Counter(ids_b[d - 1])
            assert sum(extra.values()) == (1 if d <= 6 else 0), d
            if d <= 6:
                assert list(extra) == [ids_j[d - 1][-1]]  # the root's subtree (the root comes last)
            assert Counter(ids_j[d - 1]) - extra == Counter(ids_a[d - 1]) + Counter(ids_b[d - 1])
    if _accel.speedups is not None:  # the compiled twin hands out the same ids
        s1, s2 = {}, {}
        assert subtree_ids(joined, 7, s1, True) == _subtree_ids_py(joined, 7, s2, True)


def test_metrics_of_the_joined_tree_against_itself_are_one():
    t = read_ptb(JOINED)
    for score in (stm(t, [t], 4), hwcm(t, [t], 4), dstm(t, [t], 4), tkm(t, [t]), dtkm(t, [t])):
        assert score.score == pytest.approx(1.0)
    # against the first sentence alone: every hypothesis subtree of sentence 1 matches, those of sentence 2 and
    # the root's do not all match
    assert 0 < stm(t, [read_ptb(T1)], 4).score < 1


# ------------------------------------------------------------------------------------------ through the cache (no JVM)


@pytest.fixture()
def no_java(tmp_path):
    """A parser that cannot start (every result must come from the cache) and an empty cache."""
    return StanfordParser(java=tmp_path / "no-java-here"), ParseCache(tmp_path / "c.sqlite")


def test_one_sentence_lines_give_exactly_the_line_mode_trees(shared_data, no_java):
    """Shipped parses (line mode) of one-sentence lines, cached under the parser's key: sentence mode asks the
    cache for the same text and returns the same string; a two-sentence line is joined from its sentences."""
    p, cache = no_java
    ref = read_lines(shared_data / "wmt21-deen" / REF_A)
    ref_ptb = read_lines(shared_data / "wmt21-deen" / PTB_DIR / f"{REF_A}.ptb")
    idx = [i for i in range(40) if len(split_sentences(ref[i])) == 1][:12]
    assert len(idx) == 12
    lines = [ref[i] for i in idx]
    cache.put_many(p.backend_key, list(zip(lines, [ref_ptb[i] for i in idx])) + [(S1, T1), (S2, T2)])
    for split in ("sentences", "lines"):
        res = parse_strings(lines, parser=p, cache=cache, progress=False, split=split)
        assert list(res) == [ref_ptb[i] for i in idx] and res.report.n_cached == 12
    res = parse_strings(["", f"{S1} {S2}", S1], parser=p, cache=cache, progress=False)
    assert list(res) == [None, JOINED, T1]
    r = res.report
    assert (r.split, r.n_input, r.n_sentences, r.n_cached, r.n_parsed, r.n_empty) == ("sentences", 3, 3, 3, 0, 1)
    assert r.summary().startswith("3 lines (3 sentences): 3 sentences from cache, 0 parsed, 1 empty lines, 0 lines "
                                  "without a parse")
    # the source names the parser, its limit, the splitter and the heap; not the kit's protocol fields (issue 39)
    assert r.source == (f"stanford-lexparser-3.3.1/englishPCFG/{p.backend_key.split('/')[2]}/maxLength={p.max_length}"
                        "/split=sentences:syneval-rules-1/memory=2g") and r.backend_key == p.backend_key
    assert "sentinel" not in r.source and "format=" not in r.source
    trees = parse([f"{S1} {S2}"], parser=p, cache=cache, progress=False)
    assert trees[0] == read_ptb(JOINED) and trees[0].label() == "ROOT"
    assert DEFAULT_SPLIT == "sentences" and resolve_split("stanford", None) == "sentences"


def test_a_tree_made_under_another_limit_is_reused(no_java):
    """A tree does not depend on maxLength: one stored under maxLength=150 serves max_length 200 (and is copied
    to its key), and one longer than a smaller limit is that limit's failure, named, with no JVM."""
    p, cache = no_java
    old = StanfordParser(max_length=150).backend_key
    assert old != p.backend_key and p.max_length == DEFAULT_MAX_LENGTH == 200
    cache.put_many(old, [(S1, T1), (S2, T2)])
    res = parse_strings([S1], parser=p, cache=cache, progress=False)
    assert list(res) == [T1] and res.report.n_cached == 1 and cache.get(p.backend_key, S1) == T1
    small = StanfordParser(java=p._java_arg, max_length=5)  # T1 has 6 tokens
    res = parse_strings([S1, f"{S2} {S1}"], parser=small, cache=cache, progress=False, warn=False)
    assert list(res) == [None, None]
    assert res.report.failures == {0: "the line has 6 tokens > max_length 5",
                                   1: "sentence 1 of 2 has 8 tokens > max_length 5"}
    assert cache.get(small.backend_key, S1, default=None) is None  # not stored as a failure


def test_too_long_reason_text():
    assert too_long_reason(212, 250) == "has 212 tokens > max_length 250"


# ------------------------------------------------------------------------------------------ options refused


def test_spacy_refuses_stanford_options():
    with pytest.raises(ValueError, match="max_length: Stanford parser options; the spacy backend parses every line"):
        parse_strings(["A b."], backend="spacy", cache=None, max_length=100)
    with pytest.raises(ValueError, match="split='sentences' is for the stanford backend"):
        parse_strings(["A b."], backend="spacy", cache=None, split="sentences")
    with pytest.raises(ValueError, match="split must be one of 'sentences', 'lines'"):
        parse_strings(["A b."], cache=None, split="paragraphs")
    with pytest.raises(ValueError, match="split='sentences' is for the stanford backend; the stanford-deps"):
        parse_strings(["A b."], backend="stanford-deps", cache=None, split="sentences")
    corpus = M.Corpus(["A b."], [["A b."]])
    with pytest.raises(ValueError, match="no metric asked for needs one"):
        M.prepare([corpus], ("dep",), max_length=100, cache=None, progress=False)


def test_parse_cli_refuses_max_length_with_spacy(tmp_path):
    src = tmp_path / "in.txt"
    src.write_text("A b.\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "syneval_nb.app.cli", "parse", str(src), "-o",
                           str(tmp_path / "out.json"), "--backend", "spacy", "--max-length", "100", "--no-cache"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr == ("syneval-nb parse: --max-length: options of the Stanford parser; spaCy parses each line "
                           "as one sentence whatever its length (give none of them with --backend spacy)\n")
    assert not (tmp_path / "out.json").exists()


# ------------------------------------------------------------------------------------------ real JVM


@pytest.mark.slow
def test_sentence_mode_with_the_parser(shared_data):
    """One JVM (max_length 20): one-sentence lines give their shipped trees, a two-sentence line the join of its
    sentences parsed alone, and a line whose second sentence is too long gets no parse with that cause, in the
    report and on the Corpus (``failure_reasons``). The parser is the shared one that ``prepare`` then reuses
    (``get_stanford_parser``, the same options), so the test starts one JVM, not two (issue 38)."""
    ref = read_lines(shared_data / "wmt21-deen" / REF_A)
    ref_ptb = read_lines(shared_data / "wmt21-deen" / PTB_DIR / f"{REF_A}.ptb")
    idx = [i for i in range(40) if len(split_sentences(ref[i])) == 1 and len(ref[i].split()) <= 12][:4]
    assert len(idx) == 4
    long = "Cats " + " ".join(["sleep"] * 28) + " ."  # 30 PTB tokens (white-space words: none is split)
    two = f"{S1} {S2}"
    try:
        p = get_stanford_parser(max_length=20)
        res = parse_strings([ref[i] for i in idx] + [two, f"{S1} {long}"], parser=p, cache=None,
                            progress=False, warn=False)
        alone = parse_strings([S1, S2], parser=p, cache=None, progress=False, split="lines")
        assert list(res[:4]) == [ref_ptb[i] for i in idx]
        assert list(alone) == [T1, T2] and res[4] == join_trees([T1, T2]) == JOINED
        assert res[5] is None
        assert res.report.failures == {5: "sentence 2 of 2 has 30 tokens > max_length 20"}
        assert "  line 6: sentence 2 of 2 has 30 tokens > max_length 20" in res.report.summary()
        assert res.report.unparsed() == [(6, "sentence 2 of 2 has 30 tokens > max_length 20")]
        # through the Corpus (what `score` and the report use): the cause per line
        corpus = M.Corpus([two, f"{S1} {long}", ""], [[S1], [S2], [S1]])
        M.prepare([corpus], ("ptb",), max_length=20, cache=None, progress=False)
        assert corpus.hyp_ptb[0] == JOINED and corpus.failures[("ptb", "hyp")] == [1, 2]
        assert corpus.failure_reasons[("ptb", "hyp")] == {1: "sentence 2 of 2 has 30 tokens > max_length 20"}
        assert corpus.parse_source.endswith("maxLength=20/split=sentences:syneval-rules-1/memory=2g")
    finally:
        close_shared_parsers()  # the shared parser (max_length 20) of this test and of prepare


# The default limit and heap on a correct 200-token sentence (issue 33; formerly test_a_200_token_sentence_gets_a_parse
# here): tests/test_long_lines.py, whose report run with its defaults parses that sentence (LONG_200) as its single
# long line and asserts the defaults, the one-sentence split, no failure, 200 leaves and "(ROOT (S " (issue 38: the
# suite's one slow parse of a 200-token sentence instead of two).
