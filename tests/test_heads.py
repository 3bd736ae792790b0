"""Tests of syneval_nb.trees.heads: the Collins (1999) head table, dependency conversion, headword chains.

Every expected head below was worked out by hand from the thesis table (Appendix A, as distributed with Collins'
parser) and is written next to the tree, with the reason, so a change in the rules shows up as a failing row.
"""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from nltk import Tree

from syneval_nb.trees.heads import (
    HEAD_RULES,
    PUNCT_TAGS,
    DependencyTree,
    attachment_statistics,
    dependency_lengths,
    explain_head,
    explain_tree,
    find_head_child,
    headword_chains,
    lexicalize,
    to_dependencies,
)
from syneval_nb.trees import TreeFormatError, read_ptb, read_ptb_file

PEN = "(S (NP (PRP I)) (VP (VBP have) (NP (DT a) (JJ red) (NN pen))))"


def head_word(bracketed: str) -> str:
    dep = to_dependencies(read_ptb(bracketed))
    return dep.words[dep.root]


# (tree, head word of the top constituent, why) -- one or more rows per table entry
TABLE_ROWS = [
    # ADJP left: NNS QP NN $ ADVP JJ VBN VBG ADJP JJR NP JJS DT FW RBR RBS SBAR RB
    ("(ADJP (RB very) (JJ good))", "good", "JJ comes before RB in the list"),
    ("(ADJP (CD 44) (NN year) (JJ old))", "year", "NN comes before JJ (real WMT21 phrase)"),
    ("(ADJP (JJ aware) (PP (IN of) (NP (PRP it))))", "aware", "JJ"),
    # ADVP right: RB RBR RBS FW ADVP TO CD JJR JJ IN NP JJS NN
    ("(ADVP (RB only) (RB slightly))", "slightly", "rightmost RB"),
    ("(ADVP (NNS thanks) (PP (TO to) (NP (PRP it))))", "to", "nothing listed: rightmost child, the PP"),
    ("(ADVP (NP (CD two) (NNS days)) (RBR earlier))", "earlier", "RBR before NP"),
    # CONJP right: CC RB IN
    ("(CONJP (RB as) (RB well) (IN as))", "well", "RB before IN, rightmost RB"),
    ("(CONJP (RB rather) (IN than))", "rather", "RB before IN"),
    # FRAG right, nothing listed
    ("(FRAG (NP (NN x)) (PP (IN in) (NP (NN y))))", "in", "rightmost child"),
    ("(FRAG (NP (NN x)) (. .))", "x", "rightmost non-punctuation child"),
    # INTJ left, nothing listed
    ("(INTJ (UH oh) (UH no))", "oh", "leftmost child"),
    # LST right: LS :
    ("(LST (LS 1) (: :))", "1", "LS comes before ':'"),
    # NAC left: NN NNS NNP NNPS NP NAC EX $ CD QP PRP VBG JJ JJS JJR ADJP FW
    ("(NAC (NNP Los) (NNP Angeles))", "Los", "leftmost NNP"),
    ("(NAC (JJ big) (NNS apples))", "apples", "NNS before JJ"),
    # PP right: IN TO VBG VBN RP FW
    ("(PP (IN in) (NP (DT the) (NN house)))", "in", "IN"),
    ("(PP (IN because) (IN of) (NP (NN rain)))", "of", "rightmost IN"),
    ("(PP (TO to) (NP (NNP Berlin)))", "to", "TO"),
    ("(PP (VBG including) (NP (NNS taxes)))", "including", "VBG"),
    ("(PP (RB just) (IN after) (NP (NN noon)))", "after", "IN, not the leftmost child"),
    # PRN left, nothing listed (punctuation is skipped)
    ("(PRN (-LRB- -LRB-) (NP (NN x)) (-RRB- -RRB-))", "x", "leftmost non-punctuation child"),
    ("(PRN (, ,) (S (NP (PRP he)) (VP (VBD said))) (, ,))", "said", "leftmost non-punctuation child"),
    # PRT right: RP
    ("(PRT (RB back) (RP up))", "up", "RP"),
    # QP left: $ IN NNS NN JJ RB DT CD NCD QP JJR JJS
    ("(QP (RB about) (CD 5))", "about", "RB comes before CD"),
    ("(QP ($ $) (CD 5) (CD million))", "$", "$ first"),
    ("(QP (IN between) (CD 5) (CC and) (CD 6))", "between", "IN"),
    ("(QP (CD 5) (TO to) (CD 6))", "5", "leftmost CD"),
    # ROOT left, nothing listed (the kit's multi-sentence root, issue 33): the first sentence heads the line
    ("(ROOT (S (NP (PRP It)) (VP (VBZ rains)) (. .)) (S (NP (PRP We)) (VP (VBP stay)) (. .)))", "rains",
     "first sentence"),
    ("(ROOT (FRAG (NP (NNS Thanks)) (. .)) (S (NP (PRP We)) (VP (VBP stay))))", "Thanks", "first sentence"),
    # RRC right: VP NP ADVP ADJP PP
    ("(RRC (ADVP (RB now)) (PP (IN in) (NP (NN power))))", "now", "ADVP before PP"),
    # S left: TO IN VP S SBAR ADJP UCP NP
    ("(S (NP (PRP I)) (VP (VBP have)) (. .))", "have", "VP"),
    ("(S (NP (PRP it)) (ADJP (JJ true)))", "true", "ADJP before NP"),
    ("(S (IN So) (NP (PRP it)) (VP (VBZ works)))", "So", "IN comes before VP in Collins' S row"),
    ("(S (S (NP (PRP I)) (VP (VBD came))) (, ,) (CC and) (S (NP (PRP I)) (VP (VBD saw))))", "came", "leftmost S"),
    # SBAR left: WHNP WHPP WHADVP WHADJP IN DT S SQ SINV SBAR FRAG
    ("(SBAR (WHNP (WP who)) (S (VP (VBD came))))", "who", "WHNP"),
    ("(SBAR (IN that) (S (NP (PRP he)) (VP (VBD left))))", "that", "IN before S"),
    ("(SBAR (WHADVP (WRB where)) (S (NP (PRP he)) (VP (VBZ lives))))", "where", "WHADVP"),
    ("(SBAR (S (NP (PRP he)) (VP (VBD left))) (. .))", "left", "S"),
    # SBARQ left: SQ S SINV SBARQ FRAG
    ("(SBARQ (WHNP (WP What)) (SQ (VBZ is) (NP (PRP it))) (. ?))", "is", "SQ before the WHNP"),
    # SINV left: VBZ VBD VBP VB MD VP S SINV ADJP NP
    ("(SINV (S (NP (PRP it)) (VP (VBZ works))) (, ,) (VP (VBD said)) (NP (NNP John)))", "said", "VP before S"),
    ("(SINV (ADVP (RB Here)) (VBZ is) (NP (DT the) (NN list)))", "is", "VBZ"),
    # SQ left: VBZ VBD VBP VB MD VP SQ
    ("(SQ (VBZ Is) (NP (PRP it)) (ADJP (JJ true)))", "Is", "VBZ"),
    ("(SQ (MD Can) (NP (PRP you)) (VP (VB help)))", "Can", "MD before VP"),
    # UCP right, nothing listed; the coordination rule moves the head left
    ("(UCP (ADJP (JJ local)) (CC and) (NP (NN state)))", "local", "rightmost, then coordination"),
    # VP left: TO VBD VBN MD VBZ VB VBG VBP VP ADJP NN NNS NP
    ("(VP (MD will) (VP (VB go)))", "will", "MD before VP"),
    ("(VP (VBZ has) (VBN been))", "been", "VBN comes before VBZ: search by category first"),
    ("(VP (TO to) (VP (VB turn) (ADVP (RB left))))", "to", "TO"),
    ("(VP (ADVP (RB quickly)) (VBD ran) (PP (IN to) (NP (NN school))))", "ran", "VBD, not the leftmost"),
    ("(VP (VP (VBZ reacts)) (CC and) (VP (VBZ prevents)))", "reacts", "leftmost VP; no move at h = 1"),
    # WHADJP left: CC WRB JJ ADJP
    ("(WHADJP (WRB how) (JJ many))", "how", "WRB before JJ"),
    # WHADVP right: CC WRB
    ("(WHADVP (WRB how) (RB far))", "how", "WRB"),
    ("(WHADVP (WRB when) (CC and) (WRB where))", "and", "CC is first in Collins' WHADVP row"),
    # WHNP left: WDT WP WP$ WHADJP WHPP WHNP
    ("(WHNP (WDT which) (NN book))", "which", "WDT"),
    ("(WHNP (WP$ whose) (NN car))", "whose", "WP$"),
    ("(WHNP (WHADJP (WRB how) (JJ many)) (NNS people))", "how", "WHADJP"),
    ("(WHNP (WHNP (WP who)) (PP (IN of) (NP (PRP them))))", "who", "WHNP"),
    # WHPP right: IN TO FW
    ("(WHPP (IN of) (WHNP (WDT which)))", "of", "IN"),
]

NP_ROWS = [
    ("(NP (NNP John) (POS 's))", "'s", "rule 1 (the POS case): the last word is POS"),
    ("(NP (NN stock) (NNS prices))", "prices", "rule 1: rightmost of NN NNS ..."),
    ("(NP (NNS prices) (JJR higher))", "higher", "rule 1 searches by position: JJR is rightmost"),
    ("(NP (DT the) (NN man) (PP (IN in) (NP (DT the) (NN hat))))", "man", "rule 1"),
    ("(NP (NP (DT the) (NN man)) (PP (IN in) (NP (DT the) (NN hat))))", "man", "rule 2: leftmost NP"),
    ("(NP (NP (NNP Paris)) (, ,) (NP (NNP France)))", "Paris", "rule 2: leftmost NP"),
    ("(NP (DT the) (ADJP (RB very) (JJ rich)))", "rich", "rule 3: ADJP"),
    ("(NP ($ $) (CD 5))", "$", "rule 3 ($) comes before rule 4 (CD)"),
    ("(NP (NP (DT a) (NN dog)) (PRN (-LRB- -LRB-) (NP (NN x)) (-RRB- -RRB-)))", "dog", "rule 2 before rule 3"),
    ("(NP (DT the) (CD 1990s))", "1990s", "rule 4: CD"),
    ("(NP (CD 5) (RB apiece))", "5", "rule 4 (CD) applies before rule 5 (RB)"),
    ("(NP (DT the) (JJ poor))", "poor", "rule 5: JJ"),
    ("(NP (DT the) (JJS best))", "best", "rule 5: JJS"),
    ("(NP (DT all) (DT these))", "these", "rule 6: the last word"),
    ("(NP (DT that) (. .))", "that", "rule 6: the last non-punctuation word"),
    ("(NP (PRP he))", "he", "only child"),
]

COORDINATION_ROWS = [
    ("(NP (NN cats) (CC and) (NNS dogs))", "cats", "rule 1 picks dogs, after CC: two to the left"),
    ("(NP (NNP John) (CC and) (NNP Jane))", "John", "no base-NP exception (see the module docstring)"),
    ("(NP (NN x) (CONJP (RB rather) (IN than)) (NN y))", "x", "CONJP counts as a coordinator"),
    ("(NP (NN x) (, ,) (CC and) (NN y))", "x", "punctuation is skipped when moving the head"),
    ("(NP (NN x) (CC and) (, ,) (NN y))", "x", "punctuation is skipped between CC and the head"),
    ("(NP (CC both) (NNS x))", "x", "h = 1: nothing two to the left, no move"),
    ("(ADJP (JJ big) (CC and) (JJ red))", "big", "leftmost JJ: head already left of CC"),
    ("(S (NP (PRP I)) (CC and) (VP (VBP run)))", "I", "the rule applies to any parent"),
    ("(UCP (NN a) (, ,) (JJ b) (CC or) (RB c))", "b", "rightmost c, after CC: two to the left is b"),
]

OTHER_ROWS = [
    ("(X (DT the) (NN thing))", "the", "no row for X: leftmost child (Collins' parser)"),
    ("(NX (NN x) (NN y))", "x", "no row for NX: leftmost child"),
    ("(FOO (, ,) (NN a) (NN b))", "a", "unknown label: leftmost non-punctuation child"),
    ("(ROOT (S (NN a)) (S (NN b)))", "a", "several-child wrapper: leftmost"),
    ("(NP (NP (: --)) (NP (NN x)))", "x", "a phrase of punctuation only is punctuation"),
    ("(S (. .) (. !))", ".", "all children punctuation: the default on all of them"),
]


@pytest.mark.parametrize("tree, expected, why", TABLE_ROWS + NP_ROWS + COORDINATION_ROWS + OTHER_ROWS)
def test_head_rules(tree, expected, why):
    assert head_word(tree) == expected, why


def test_every_table_row_and_np_step_is_covered():
    covered = {read_ptb(t).label() for t, _, _ in TABLE_ROWS}
    assert covered == set(HEAD_RULES)
    steps = {why.split(":")[0] for _, _, why in NP_ROWS}
    for step in ("rule 1", "rule 2", "rule 3", "rule 4", "rule 5", "rule 6"):
        assert any(s.startswith(step) for s in steps), step


def test_find_head_child_and_explain():
    assert find_head_child("VP", ["VBZ", "VBN"]) == 1
    assert find_head_child("NP", ["NN", "CC", "NNS"]) == 0
    assert find_head_child("NP", ["NP", ",", "NP"]) == 0
    # the punctuation flags can be given explicitly (a phrase whose words are all punctuation)
    assert find_head_child("NP", ["NP", "NP"], punct=[True, False]) == 1
    idx, why = explain_head("NP", ["NN", "CC", "NNS"])
    assert idx == 0 and "NP rule 1" in why and "coordination" in why
    idx, why = explain_head("FOO", ["DT", "NN"])
    assert idx == 0 and "no row" in why
    with pytest.raises(ValueError, match="no children"):
        find_head_child("NP", [])
    with pytest.raises(ValueError, match="punctuation flags"):
        find_head_child("NP", ["NN", "NN"], punct=[False])


# ------------------------------------------------------------------------------------------ the paper's example


def test_paper_example_dependency_tree():
    """Liu & Gildea (2005), section 2.1: the dependency tree of "I have a red pen"."""
    dep = to_dependencies(read_ptb(PEN))
    assert dep.words == ["I", "have", "a", "red", "pen"]
    assert dep.tags == ["PRP", "VBP", "DT", "JJ", "NN"]
    assert dep.heads == [1, -1, 4, 4, 1]
    assert dep.root == 1
    assert dep.children(1) == [0, 4] and dep.children(4) == [2, 3] and dep.children(0) == []
    assert dep.to_nltk() == Tree("have", [Tree("I", []), Tree("pen", [Tree("a", []), Tree("red", [])])])
    assert str(dep) == "have/VBP\n├── I/PRP\n└── pen/NN\n    ├── a/DT\n    └── red/JJ"
    assert dep.to_conll().splitlines()[0] == "1\tI\tPRP\t2"


def test_paper_example_headword_chains():
    """The 2-word chains are "have I, have pen, pen a, and pen red" (Liu & Gildea 2005, section 2.1)."""
    dep = to_dependencies(PEN)
    chains = headword_chains(dep, 3)
    by_len = Counter(len(c) for c in chains)
    assert by_len == {1: 5, 2: 4, 3: 2}
    assert [c for c in chains if len(c) == 2] == [("have", "I"), ("have", "pen"), ("pen", "a"), ("pen", "red")]
    assert [c for c in chains if len(c) == 3] == [("have", "pen", "a"), ("have", "pen", "red")]
    assert headword_chains(dep, 1) == [("I",), ("have",), ("a",), ("red",), ("pen",)]
    assert headword_chains(dep, 10) == chains  # no chain is longer than 3 words


def test_headword_chains_count_repeats_and_check_max_len():
    dep = to_dependencies("(S (NP (DT the) (NN dog)) (VP (VBD saw) (NP (DT the) (NN dog))))")
    assert Counter(headword_chains(dep, 2))[("dog", "the")] == 2
    with pytest.raises(ValueError, match="max_len"):
        headword_chains(dep, 0)
    assert headword_chains(DependencyTree([], [], []), 3) == []


def _chains_by_brute_force(dep: DependencyTree, max_len: int) -> Counter:
    """Every downward path = a word and up to max_len - 1 of its ancestors (independent of the code above)."""
    out: Counter = Counter()
    for d in range(len(dep)):
        path = [d]
        while len(path) <= max_len:
            out[tuple(dep.words[i] for i in reversed(path))] += 1
            h = dep.heads[path[-1]]
            if h < 0:
                break
            path.append(h)
    return out


def test_headword_chains_equal_brute_force_on_real_sentences(deen_dir: Path):
    trees = read_ptb_file(deen_dir / "parses/stanford-pcfg-3.3.1/newstest2021.de-en.ref.B.en.ptb")[:60]
    for t in trees:
        dep = to_dependencies(t)
        for n in (1, 2, 4):
            assert Counter(headword_chains(dep, n)) == _chains_by_brute_force(dep, n)


# ------------------------------------------------------------------------------------------ punctuation


def test_punctuation_stays_attached_and_can_be_dropped():
    t = read_ptb("(S (`` ``) (NP (NNP Biker)) (VP (VBZ reacts) (, ,) (ADVP (RB fast))) (. .) ('' ''))")
    dep = to_dependencies(t)
    # words: 0 `` 1 Biker 2 reacts 3 , 4 fast 5 . 6 '' ; S -> VP (reacts); the comma hangs from the VP's head
    assert dep.heads == [2, 2, -1, 2, 2, 2, 2]
    dropped = to_dependencies(t, drop_punct=True)
    assert dropped.words == ["Biker", "reacts", "fast"]
    assert dropped.heads == [1, -1, 1]
    assert not set(dropped.tags) & PUNCT_TAGS
    assert to_dependencies("(S (. .) (. !))", drop_punct=True).words == []


def test_punct_tags_are_exactly_the_stanford_set():
    assert PUNCT_TAGS == {",", ":", ".", "``", "''", "-LRB-", "-RRB-"}
    assert "$" not in PUNCT_TAGS and "#" not in PUNCT_TAGS


def test_lexicalize_marks_head_words():
    lex = lexicalize(read_ptb(PEN))
    assert lex.pformat(margin=10_000) == "(S[have] (NP[I] (PRP I)) (VP[have] (VBP have) (NP[pen] (DT a) (JJ red) (NN pen))))"


def test_explain_tree_rows():
    rows = explain_tree(read_ptb("(S (NP (NN cats) (CC and) (NNS dogs)) (VP (VBP have) (NP (DT a) (NN pen))) (. .))"))
    assert [(r["constituent"], r["children"], r["head child"], r["head word"]) for r in rows] == [
        ("S", "NP VP .", "VP", "have"),
        ("NP", "NN CC NNS", "NN", "cats"),
        ("VP", "VBP NP", "VBP", "have"),
        ("NP", "DT NN", "NN", "pen"),
    ]
    assert rows[1]["rule"].startswith("NP rule 1: rightmost of NN NNP NNPS NNS NX POS JJR; coordination")


def test_dependency_lengths_signed():
    # I(0)->have(1): +1; a(2)->pen(4): +2; red(3)->pen(4): +1; pen(4)->have(1): -3
    assert dependency_lengths(to_dependencies(PEN)) == [1, 2, 1, -3]


# ------------------------------------------------------------------------------------------ malformed input


def test_malformed_trees_are_rejected():
    with pytest.raises(TreeFormatError, match="mixes the word"):
        to_dependencies(Tree("S", ["a", Tree("NN", ["b"])]))
    with pytest.raises(TreeFormatError, match="no children"):
        to_dependencies(Tree("S", [Tree("NP", [])]))
    with pytest.raises(TreeFormatError, match="line 1"):
        to_dependencies("(S (NP (NN a))")
    with pytest.raises(TypeError):
        to_dependencies(["S"])


@pytest.mark.parametrize("words, tags, heads, msg", [
    (["a", "b"], ["DT"], [1, -1], "lengths must agree"),
    (["a", "b"], ["DT", "NN"], [-1, -1], "exactly one root"),
    (["a", "b"], ["DT", "NN"], [1, 0], "exactly one root"),
    (["a", "b", "c"], ["DT", "NN", "NN"], [-1, 2, 1], "cycle"),
    (["a", "b"], ["DT", "NN"], [5, -1], "has head 5"),
    (["a", "b"], ["DT", "NN"], [0, -1], "has head 0"),
])
def test_dependency_tree_validation(words, tags, heads, msg):
    with pytest.raises(ValueError, match=msg):
        DependencyTree(words, tags, heads)


def test_svg_picture():
    svg = to_dependencies(PEN)._repr_svg_()
    assert svg.lstrip().startswith("<svg") and "pen" in svg


# ------------------------------------------------------------------------------------------ real data


def test_attachment_statistics_by_hand():
    st = attachment_statistics([to_dependencies(PEN)])
    # arcs: I<-have (head right of the word), pen<-have (head left), a<-pen, red<-pen (head right)
    assert st["n_trees"] == 1 and st["n_words"] == 5 and st["n_arcs"] == 4
    assert st["head_left"] == pytest.approx(1 / 4) and st["head_right"] == pytest.approx(3 / 4)
    assert st["mean_dependency_length"] == pytest.approx((1 + 3 + 2 + 1) / 4)
    assert st["root_tags"] == Counter({"VBP": 1})


def test_first_wmt21_references_by_hand(deen_dir: Path):
    trees = read_ptb_file(deen_dir / "parses/stanford-pcfg-3.3.1/newstest2021.de-en.ref.A.en.ptb")
    # (S (NP Biker) (VP (VP reacts lightning fast) (CC and) (VP prevents (ADJP worse))) (. .)):
    # S -> VP; outer VP -> leftmost VP (reacts), no move since it is not after the CC
    assert to_dependencies(trees[0]).heads == [1, -1, 1, 1, 1, 1, 5, 1]
    # (S (NP A female car driver) (VP overlooks (NP a biker)))
    assert to_dependencies(trees[2]).heads == [3, 3, 3, 4, -1, 6, 4]


@pytest.mark.slow
def test_all_wmt21_reference_parses_convert(deen_dir: Path):
    """All 2,000 reference parses (ref A and ref B) convert; figures for the closing note of issue 2."""
    folder = deen_dir / "parses/stanford-pcfg-3.3.1"
    deps = []
    for name in ("newstest2021.de-en.ref.A.en.ptb", "newstest2021.de-en.ref.B.en.ptb"):
        for t in read_ptb_file(folder / name):
            assert t is not None
            dep = to_dependencies(t)
            assert dep.words == t.leaves() and dep.tags == [p for _, p in t.pos()]
            nodrop = to_dependencies(t, drop_punct=True)
            assert len(nodrop) == sum(p not in PUNCT_TAGS for p in dep.tags)
            deps.append(dep)
    st = attachment_statistics(deps)
    assert st["n_trees"] == 2000
    # measured values (2026-11, Stanford PCFG 3.3.1 parses): see the notebook 01 results
    assert 0.5 < st["head_left"] < 0.65
    assert 2.5 < st["mean_dependency_length"] < 3.8
    assert st["root_tags"].most_common(1)[0][0] in {"VBD", "VBZ"}


# ------------------------------------------------------------------------------------------ array paths, no cycles


def test_flat_input_and_to_flat_agree_with_the_tree_paths():
    from syneval_nb.trees import read_ptb_flat

    text = "(ROOT (S (NP (PRP I)) (VP (VBP have) (NP (DT a) (JJ red) (NN pen))) (. .)))"
    a, b, c = to_dependencies(read_ptb(text)), to_dependencies(read_ptb_flat(text)), to_dependencies(text)
    assert (a.words, a.tags, a.heads) == (b.words, b.tags, b.heads) == (c.words, c.tags, c.heads)
    assert a.heads == [1, -1, 4, 4, 1, 1]  # hand: I->have, a->pen, red->pen, pen->have, .->have
    flat = a.to_flat()
    # preorder of the word-labelled tree: have, I, pen, a, red, .
    assert (flat.labels, flat.kids) == (["have", "I", "pen", "a", "red", "."], [(1, 2, 5), (), (3, 4), (), (), ()])
    t1, t2 = a.to_nltk(), a.to_nltk()
    assert t1 == t2 and t1 is not t2  # a new tree on every call
    assert t1 == Tree("have", [Tree("I", []), Tree("pen", [Tree("a", []), Tree("red", [])]), Tree(".", [])])


def test_conversions_make_no_reference_cycles():
    """Reference counting frees everything: with the collector paused, a collection finds nothing afterwards."""
    import gc

    gc.collect()
    gc.disable()
    try:
        t = read_ptb(PEN)
        dep = to_dependencies(t)
        dep.to_nltk(), str(dep), lexicalize(t), explain_tree(t), headword_chains(dep, 4)
        del t, dep
        assert gc.collect() == 0
    finally:
        gc.enable()
