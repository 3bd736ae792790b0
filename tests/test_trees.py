"""Tests of syneval_nb.trees: PTB reading (issue 2, section 2), tree facts and the integer encoding.

Expected values are written by hand from the bracketed strings, or come from nltk (an independent reader)
and from counting brackets in the shipped files with a regular expression.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nltk import Tree

from syneval_nb.trees.encoding import EncodedTree, Interner, encode
from syneval_nb.trees import (
    EmptyParseError,
    FlatTree,
    TreeFormatError,
    draw,
    flatten,
    heights,
    phrase_labels,
    pos_tags,
    read_ptb,
    read_ptb_file,
    read_ptb_flat,
    read_ptb_lines,
    spans,
    strip_label,
    tree_depth,
    unescape_word,
    words,
)

PEN = "(S (NP (PRP I)) (VP (VBP have) (NP (DT a) (JJ red) (NN pen))))"
PEN_TREE = Tree("S", [Tree("NP", [Tree("PRP", ["I"])]),
                      Tree("VP", [Tree("VBP", ["have"]),
                                  Tree("NP", [Tree("DT", ["a"]), Tree("JJ", ["red"]), Tree("NN", ["pen"])])])])


# ------------------------------------------------------------------------------------------ reading


def test_one_line_tree_is_read_into_nltk_tree():
    t = read_ptb(PEN)
    assert isinstance(t, Tree)
    assert t == PEN_TREE
    assert all(isinstance(leaf, str) for leaf in t.leaves())


def test_multi_line_tree_equals_the_one_line_tree():
    multi = """(ROOT
  (S
    (NP (PRP I))
    (VP (VBP have)
      (NP (DT a) (JJ red) (NN pen)))))
"""
    assert read_ptb(multi) == PEN_TREE
    assert read_ptb("\t" + PEN.replace(" (", "\r\n (") + "  \n") == PEN_TREE


@pytest.mark.parametrize("wrapped", [
    f"(ROOT {PEN})",
    f"(TOP {PEN})",
    f"( {PEN})",
    f"({PEN})",
    f"(ROOT (TOP {PEN}))",
    f"( (ROOT {PEN}) )",
])
def test_wrappers_are_removed(wrapped):
    t = read_ptb(wrapped)
    assert t.label() == "S"
    assert t == PEN_TREE


def test_wrapper_with_several_children_is_kept_as_root():
    t = read_ptb("( (S (NN a)) (S (NN b)))")
    assert t.label() == "ROOT"
    assert [c.label() for c in t] == ["S", "S"]
    assert read_ptb("(TOP (S (NN a)) (S (NN b)))") == t


def test_wrapper_left_with_one_child_after_removing_empty_elements_is_removed():
    assert read_ptb("(ROOT (-NONE- *) (S (NN a)))") == Tree("S", [Tree("NN", ["a"])])


def test_empty_elements_and_constituents_left_empty_are_removed():
    # the subject NP holds only a trace; the PP's object is a trace -> PP keeps IN only; an S holding only
    # an SBAR of traces disappears entirely
    text = ("( (S (NP-SBJ-1 (-NONE- *T*-1)) (VP (VBD left) (PP-LOC=2 (IN in) (NP (-NONE- *U*)))"
            " (S (SBAR (-NONE- 0) (S (-NONE- *T*-2))))) (. .)) )")
    t = read_ptb(text)
    assert t == Tree("S", [Tree("VP", [Tree("VBD", ["left"]), Tree("PP", [Tree("IN", ["in"])])]),
                           Tree(".", ["."])])
    assert "-NONE-" not in str(t)


def test_tree_of_empty_elements_only_is_an_empty_parse():
    with pytest.raises(EmptyParseError):
        read_ptb("(ROOT (S (NP (-NONE- *)) (VP (-NONE- *T*-1))))")
    with pytest.raises(EmptyParseError):
        read_ptb("(-NONE- *)")


@pytest.mark.parametrize("label, expected", [
    ("NP-SBJ-1", "NP"),
    ("PP-LOC=2", "PP"),
    ("NP=2", "NP"),
    ("S-TPC-1", "S"),
    ("ADVP-TMP", "ADVP"),
    ("SBAR-ADV-PRP", "SBAR"),
    ("NP", "NP"),
    ("PRP$", "PRP$"),
    ("WP$", "WP$"),
    ("-LRB-", "-LRB-"),
    ("-RRB-", "-RRB-"),
    ("-NONE-", "-NONE-"),
    ("$", "$"),
    ("``", "``"),
    (",", ","),
])
def test_strip_label(label, expected):
    assert strip_label(label) == expected


def test_function_tags_are_stripped_in_trees_and_brackets_kept():
    t = read_ptb("(S (NP-SBJ-1 (NNP John)) (VP (VBD left) (PP-LOC=2 (IN in) (NP (-LRB- -LRB-) (NN x) "
                 "(-RRB- -RRB-)))) (. .))")
    assert [st.label() for st in t.subtrees()] == ["S", "NP", "NNP", "VP", "VBD", "PP", "IN", "NP", "-LRB-", "NN",
                                                   "-RRB-", "."]
    assert t.leaves() == ["John", "left", "in", "-LRB-", "x", "-RRB-", "."]


def test_the_no_parse_marker():
    with pytest.raises(EmptyParseError) as err:
        read_ptb("(())")
    assert isinstance(err.value, TreeFormatError) and isinstance(err.value, ValueError)
    assert "(())" in str(err.value)
    with pytest.raises(EmptyParseError):
        read_ptb("( ( ) )")
    with pytest.raises(EmptyParseError):
        read_ptb("   ")


def test_one_word_tree():
    assert read_ptb("(NN dog)") == Tree("NN", ["dog"])
    assert read_ptb("(ROOT (NN dog))") == Tree("NN", ["dog"])


def test_words_are_kept_as_written_including_non_ascii_spaces():
    t = read_ptb("(NP (CD 3\u00a01/2) (NNS miles) (POS 's) (`` ``))")
    assert t.leaves() == ["3\u00a01/2", "miles", "'s", "``"]


# (text, line, character, part of the message) -- positions counted by hand (1-based characters)
MALFORMED = [
    ("(S (NP (NN a) (VP (VBZ b))", 1, 27, "expected ')' to close 'NP' opened at line 1, character 4"),
    ("(S (NP (NN a)) (VP (VBZ b))))", 1, 29, "unbalanced ')'"),
    ("(S (NN a b))", 1, 10, "found a second word 'b'"),
    ("(S (NN a) x)", 1, 11, "found the word 'x'"),
    ("(S (NP (NN a)) (NP (NN b))) (S (NN c))", 1, 29, "expected end of input after the tree"),
    ("(NN dog) cat", 1, 10, "expected end of input after the tree but found the word 'cat'"),
    ("word", 1, 1, "expected '(' but found the word 'word'"),
    ("(S)", 1, 3, "expected a word or '(' inside 'S'"),
    ("(S (NN))", 1, 7, "expected a word or '(' inside 'NN'"),
    ("(S ())", 1, 4, "expected a label after '('"),
    ("(S ( (NN a)))", 1, 4, "expected a label after '('"),
    ("(ROOT\n  (S (NN a)\n     (VP (VBZ b))", 3, 18, "expected ')' to close 'S' opened at line 2, character 3"),
    ("(ROOT\n  (S (NN a) b))", 2, 13, "found the word 'b'"),
]


@pytest.mark.parametrize("text, line, char, msg", MALFORMED)
def test_malformed_input_names_line_offset_and_expectation(text, line, char, msg):
    with pytest.raises(TreeFormatError) as err:
        read_ptb(text)
    assert not isinstance(err.value, EmptyParseError)
    text_of = str(err.value)
    assert f"line {line}, character {char} " in text_of
    assert msg in text_of


def test_line_number_is_passed_through():
    with pytest.raises(TreeFormatError, match=r"line 42, character 10 "):
        read_ptb("(S (NN a b))", line_no=42)


def test_read_ptb_lines_aligned_with_none_for_no_parse_and_blank_lines():
    lines = [PEN, "(())", "", "   ", "(ROOT (S (NN a)))", "(ROOT (S (NP (-NONE- *))))"]
    out = read_ptb_lines(lines)
    assert len(out) == 6
    assert out[0] == PEN_TREE
    assert out[1] is None and out[2] is None and out[3] is None and out[5] is None
    assert out[4] == Tree("S", [Tree("NN", ["a"])])


def test_read_ptb_file(tmp_path: Path):
    p = tmp_path / "x.ptb"
    p.write_text(f"(ROOT {PEN})\n(())\n\n(ROOT (S (NN a)))\n", encoding="utf-8")
    out = read_ptb_file(p)
    assert [t is None for t in out] == [False, True, True, False]
    assert out[0] == PEN_TREE


def test_read_ptb_file_crlf(tmp_path: Path):
    p = tmp_path / "x.ptb"
    p.write_bytes(f"(ROOT {PEN})\r\n(())\r\n".encode())
    out = read_ptb_file(p)
    assert len(out) == 2 and out[0] == PEN_TREE and out[1] is None


def test_read_ptb_file_error_names_file_and_line(tmp_path: Path):
    p = tmp_path / "bad.ptb"
    p.write_text(f"{PEN}\n(())\n(S (NP (NN a))\n", encoding="utf-8")
    with pytest.raises(TreeFormatError) as err:
        read_ptb_file(p)
    msg = str(err.value)
    assert str(p) in msg and "line 3, character 15 " in msg and "expected ')' to close 'S'" in msg


# ------------------------------------------------------------------------------------------ round trip


_LABELS = st.sampled_from(["S", "NP", "VP", "PP", "SBAR", "ADJP", "WHNP", "-LRB-"])
_TAGS = st.sampled_from(["NN", "VBZ", "DT", "IN", ",", "-LRB-", "PRP$", "$"])
_WORDS = st.text(alphabet="abcXYZ$'`.,-0123456789é", min_size=1, max_size=6)


def _trees(max_leaves: int = 12):
    leaf = st.builds(lambda tag, w: Tree(tag, [w]), _TAGS, _WORDS)
    return st.recursive(leaf, lambda kids: st.builds(lambda lab, ks: Tree(lab, ks), _LABELS,
                                                     st.lists(kids, min_size=1, max_size=4)),
                        max_leaves=max_leaves)


def _bracket(t: Tree, sep: str) -> str:
    if isinstance(t[0], str):
        return f"({t.label()} {t[0]})"
    return f"({t.label()}{sep}" + sep.join(_bracket(c, sep) for c in t) + ")"


@settings(max_examples=150, deadline=None)
@given(_trees(), st.sampled_from([" ", "\n  ", "\t", " \r\n"]))
def test_round_trip_through_brackets(t, sep):
    assert read_ptb(_bracket(t, sep)) == t
    # and nltk's own reader agrees on what is in the string
    assert Tree.fromstring(_bracket(t, " ")) == t


# ------------------------------------------------------------------------------------------ facts


def test_words_tags_depth_spans_of_the_paper_example():
    t = read_ptb(PEN)
    assert words(t) == ["I", "have", "a", "red", "pen"]
    assert pos_tags(t) == ["PRP", "VBP", "DT", "JJ", "NN"]
    # S -> VP -> NP -> NN: four node levels (words are not nodes)
    assert tree_depth(t) == 4
    assert tree_depth(Tree("NN", ["dog"])) == 1
    # node heights in preorder: S 4, NP 2, PRP 1, VP 3, VBP 1, NP 2, DT 1, JJ 1, NN 1
    assert heights(read_ptb_flat(PEN)) == [4, 2, 1, 3, 1, 2, 1, 1, 1]
    assert tree_depth(read_ptb_flat(PEN)) == 4
    assert phrase_labels(t) == ["S", "NP", "VP", "NP"]
    assert spans(t) == [("S", 0, 5), ("NP", 0, 1), ("PRP", 0, 1), ("VP", 1, 5), ("VBP", 1, 2), ("NP", 2, 5),
                        ("DT", 2, 3), ("JJ", 3, 4), ("NN", 4, 5)]


def test_unescape_word():
    assert [unescape_word(w) for w in ["-LRB-", "-RRB-", "``", "''", "-LCB-", "dog", "--"]] == [
        "(", ")", '"', '"', "{", "dog", "--"]


def test_encode_labels_productions_children():
    interner = Interner()
    a = encode(read_ptb(PEN), interner)
    b = encode(read_ptb("(S (NP (PRP You)) (VP (VBP have) (NP (DT a) (NN pen))))"), interner)
    assert isinstance(a, EncodedTree)
    assert len(a) == 9 and len(b) == 8  # nodes of each tree, preorder
    assert [interner.key(x) for x in a.labels] == [("L", l) for l, _, _ in spans(read_ptb(PEN))]
    # children in preorder indices: S(0) -> NP(1), VP(3); VP -> VBP(4), NP(5); NP -> DT JJ NN
    assert a.children[0] == (1, 3) and a.children[3] == (4, 5) and a.children[5] == (6, 7, 8)
    assert a.n_words == (0, 0, 1, 0, 1, 0, 1, 1, 1)
    # shared productions get shared ids: S -> NP VP, NP -> PRP, VP -> VBP NP, (VBP have), (DT a), (NN pen)
    assert set(a.prods) & set(b.prods) == {a.prods[i] for i in (0, 1, 3, 4, 6, 8)}
    assert a.prods[2] != b.prods[2]  # (PRP I) vs (PRP You): a preterminal's production includes its word
    assert a.prods[5] != b.prods[5]  # NP -> DT JJ NN vs NP -> DT NN
    # the production ids are in one-to-one correspondence with nltk's productions
    prods = read_ptb(PEN).productions()
    assert len(set(a.prods)) == len(set(prods)) == 9
    assert a.nodes[5].label() == "NP" and list(a.postorder())[0] == 8


def _nltk_view(t: Tree) -> tuple[list, list, list]:
    """Labels, child-node indices and preterminal words in preorder, from nltk's own traversal (``subtrees`` is
    preorder; positions give the parent-child relation): an independent view of a FlatTree."""
    positions = [p for p in t.treepositions() if isinstance(t[p], Tree)]
    index = {p: i for i, p in enumerate(positions)}
    labels = [t[p].label() for p in positions]
    kids = [tuple(index[p + (j,)] for j, c in enumerate(t[p]) if isinstance(c, Tree)) for p in positions]
    words = [t[p][0] if len(t[p]) == 1 and isinstance(t[p][0], str) else None for p in positions]
    assert labels == [s.label() for s in t.subtrees()]
    return labels, kids, words


@pytest.mark.parametrize("text, expected", [
    (PEN, PEN),
    (f"(ROOT {PEN})", PEN),
    (f"( (ROOT {PEN}) )", PEN),  # nested wrappers
    ("( (S (NN a)) (S (NN b)))", "(ROOT (S (NN a)) (S (NN b)))"),  # a wrapper with two children is node 0
    ("(ROOT (-NONE- *) (S (NN a)))", "(S (NN a))"),
    ("(NN dog)", "(NN dog)"),
    ("(TOP dog)", "(ROOT dog)"),
    ("(S (NP-SBJ (-NONE- *T*-1)) (VP (VBD left) (NP (-NONE- *U*)) (ADVP (RB early))) (. .))",
     "(S (VP (VBD left) (ADVP (RB early))) (. .))"),  # dropped subtrees in the middle: indices stay dense
])
def test_flat_reading_matches_nltk_traversal(text, expected):
    flat = read_ptb_flat(text)
    assert isinstance(flat, FlatTree)
    want = Tree.fromstring(expected)
    assert (flat.labels, flat.kids, flat.words) == _nltk_view(want)
    assert flat.to_tree() == want == read_ptb(text)
    assert flat.to_tree() is flat.to_tree()  # built once
    back = flatten(want)
    assert (back.labels, back.kids, back.words) == (flat.labels, flat.kids, flat.words)
    with pytest.raises(EmptyParseError):
        read_ptb_flat("(())")


def test_flatten_rejects_mixed_children_and_keeps_childless_nodes():
    with pytest.raises(TreeFormatError, match="mixes the word"):
        flatten(Tree("S", ["a", Tree("NN", ["b"])]))
    f = flatten(Tree("have", [Tree("I", []), Tree("pen", [Tree("a", [])])]))  # a word-labelled dependency tree
    assert (f.labels, f.kids, f.words) == (["have", "I", "pen", "a"], [(1, 2), (), (3,), ()], [None] * 4)


def test_encode_flat_equals_encode_tree():
    """The FlatTree path and the nltk.Tree path give the same keys (checked through the interner's table)."""
    texts = [PEN, "(S (NP (NP (DT the) (NN dog)) (PP (IN of) (NP (DT the) (NN dog)))) (VP (VBD barked)))"]
    for text in texts:
        i1, i2 = Interner(), Interner()
        a, b = encode(read_ptb(text), i1), encode(read_ptb_flat(text), i2)
        for field in ("labels", "prods"):
            assert [i1.key(x) for x in getattr(a, field)] == [i2.key(x) for x in getattr(b, field)]
        assert (a.children, a.n_words) == (b.children, b.n_words)
        assert [str(n) for n in a.nodes] == [str(n) for n in b.nodes]  # built on demand for the flat one
    # equal productions share an id within one tree: (DT the) twice, (NN dog) twice, NP -> DT NN twice
    e = encode(read_ptb_flat(texts[1]), Interner())
    assert len(e) == 12 and len(set(e.prods)) == 9  # 12 nodes, 3 productions repeated


def test_reading_and_encoding_make_no_reference_cycles():
    """Everything is freed by reference counting: with the collector paused, a collection afterwards finds
    nothing (the recursive closures of the first versions kept every tree alive until the collector ran)."""
    import gc

    gc.collect()
    gc.disable()
    try:
        for _ in range(3):
            t = read_ptb(f"(ROOT {PEN})")
            encode(t, Interner())
            encode(read_ptb_flat(PEN), Interner()).nodes
            spans(t)
            flatten(t)
            del t
        assert gc.collect() == 0
    finally:
        gc.enable()


def test_draw_gives_svg():
    svg = draw(read_ptb(PEN))._repr_svg_()
    assert svg.lstrip().startswith("<svg") and "pen" in svg


# ------------------------------------------------------------------------------------------ shipped data

_PRETERMINAL = re.compile(r"\([^ ()]+ [^ ()]+\)")  # words may hold a no-break space


@pytest.mark.slow
def test_all_shipped_stanford_parses_are_read(shared_data: Path):
    """34,785 parses: 21 WMT21 de-en files x 1,000 lines, 7,935 TED rows and 9 newstest2021 zh-en files x 650
    lines; three are '(())' (zh-en: Online-W's two empty lines and NiuTrans line 499, as its README says).

    Independent checks per line: the number of words equals the number of '(TAG word)' groups, and the number
    of nodes plus the ROOT wrapper equals the number of '(' (the parser writes no empty elements).
    """
    files = sorted(shared_data.glob("*/parses/stanford-pcfg-3.3.1/*.ptb"))
    assert len(files) == 31
    n = failures = 0
    for f in files:
        lines = f.read_text(encoding="utf-8").split("\n")[:-1]
        trees = read_ptb_file(f)
        assert len(trees) == len(lines)
        for line, t in zip(lines, trees):
            n += 1
            if t is None:
                failures += 1
                continue
            assert len(t.leaves()) == len(_PRETERMINAL.findall(line))
            assert sum(1 for _ in t.subtrees()) + 1 == line.count("(")
    assert (n, failures) == (34785, 3)


# ------------------------------------------------------------------ the reader's fast path (ASCII, common shape)

def _same(a: FlatTree | None, b: FlatTree | None) -> bool:
    if a is None or b is None:
        return a is b
    return (a.labels, a.kids, a.words) == (b.labels, b.kids, b.words)


FAST_PATH_CASES = [
    PEN,
    "(ROOT " + PEN + ")",
    "(TOP " + PEN + ")",
    "( " + PEN + " )",
    "(NN dog)",
    "(ROOT (NN dog))",
    "(S-SBJ-1 (NP=2 (NN a)) (-LRB- -LRB-) (VP (VBZ b)))",
    "(ROOT\n  (S (NP (NN a))\n     (VP (VBZ b))))",
    "  (S (NP (NN a)) (VP (VBZ b))) \r\n",
    "((S(NP(NN a))(VP(VBZ b))))",
]
FALLBACK_CASES = [  # (text, why the fast path declines)
    ("(NP (CD 3\u00a01/2) (NNS miles))", "non-ASCII"),
    ("(NP (CD 3\x1f1/2) (NNS miles))", "\\x1f is white space for str.split, not for PTB"),
    ("(ROOT (S (NN a)) (S (NN b)))", "a wrapper with two children becomes ROOT"),
    ("(S (NP (-NONE- *T*-1)) (VP (VBZ b)))", "empty element"),
    ("(S (-NONE- (NN a)) (VP (VBZ b)))", "a phrase labelled -NONE- is dropped with its subtree"),
    ("(ROOT (ROOT (S (NN a))))", "nested wrappers"),
    ("(())", "the empty parse"),
] + [(text, "malformed") for text, *_ in MALFORMED]


@pytest.mark.parametrize("text", FAST_PATH_CASES)
def test_fast_path_reads_the_common_shapes_like_the_general_reader(text):
    from syneval_nb.trees import _parse_fast, _parse_general

    fast = _parse_fast(text)
    assert fast is not None
    assert _same(fast, _parse_general(text, None))


@pytest.mark.parametrize("text, why", FALLBACK_CASES)
def test_fast_path_declines_everything_else(text, why):
    from syneval_nb.trees import _parse_fast

    assert _parse_fast(text) is None, why


def test_split_only_white_space_stays_inside_a_word():
    # the general reader splits only on ASCII PTB white space: "\x1f" is part of the word (str.split would cut it)
    assert read_ptb("(NP (CD 3\x1f1/2))").leaves() == ["3\x1f1/2"]


@pytest.mark.slow
def test_fast_path_equals_general_reader_on_every_shipped_parse(shared_data: Path):
    from syneval_nb.trees import _parse_fast, _parse_general

    files = sorted(shared_data.glob("*/parses/stanford-pcfg-3.3.1/*.ptb"))
    texts = [line for f in files for line in f.read_text(encoding="utf-8").split("\n")[:-1] if line != "(())"]
    assert len(texts) == 34782
    n_fast = 0
    for text in texts:
        fast = _parse_fast(text)
        if fast is not None:
            n_fast += 1
            assert _same(fast, _parse_general(text, None)), text
        elif text.isascii():  # only non-ASCII text may leave the fast path on these files
            pytest.fail(f"the fast path declined an ASCII parse: {text[:80]}")
    assert n_fast == 34782 - sum(not t.isascii() for t in texts)
    assert n_fast == 33570  # measured (1,212 lines hold non-ASCII characters)


_FUZZ_LEAF = st.builds(lambda t, w: f"({t} {w})", st.sampled_from(["NN", "DT", "-NONE-", "NP-SBJ"]),
                       st.sampled_from(["a", "b", "*T*", "3\u00a01/2"]))
_FUZZ_TREE = st.recursive(_FUZZ_LEAF, lambda kids: st.builds(
    lambda lab, ks: f"({lab} {' '.join(ks)})", st.sampled_from(["S", "NP", "VP-SBJ", "ROOT", "-NONE-"]),
    st.lists(kids, min_size=1, max_size=3)), max_leaves=8)


@settings(max_examples=300, deadline=None)
@given(_FUZZ_TREE, st.sampled_from(["", "(ROOT ", "( ", "(TOP "]),
       st.lists(st.tuples(st.integers(0, 200), st.integers(0, 2),
                          st.sampled_from(["(", ")", " ", "S", "a", "ROOT", "-NONE-", "\x1c", "\t", ""])),
                max_size=2))
def test_fast_path_never_accepts_what_the_general_reader_reads_differently(tree, wrapper, edits):
    """Random trees (with empty elements, function tags, wrappers, a no-break space), some of them corrupted by
    random edits: whenever the fast path accepts a text, the general reader reads the same tree from it."""
    from syneval_nb.trees import _parse_fast, _parse_general

    text = wrapper + tree + (")" if wrapper else "")
    for pos, cut, ins in edits:
        pos = min(pos, len(text))
        text = text[:pos] + ins + text[pos + cut:]
    fast = _parse_fast(text)
    if fast is not None:
        assert _same(fast, _parse_general(text, None)), text


# ------------------------------------------------------------------ parse-string files (shared by data and parsing)

def test_read_ptb_strings_aligned_with_lines(tmp_path):
    from syneval_nb.trees import is_empty_parse, read_ptb_strings

    f = tmp_path / "x.ptb"
    f.write_bytes(b"(ROOT (NP (NN a)))\r\n(())\r\n\n( ( ) )\n  (S (VP (VB go)))  \n")
    # five lines: a tree, the failure marker, an empty line, the marker spaced out, a tree with padding
    assert read_ptb_strings(f) == ["(ROOT (NP (NN a)))", None, None, None, "(S (VP (VB go)))"]
    assert read_ptb_strings(f, 5) == read_ptb_strings(f)
    with pytest.raises(ValueError, match="has 5 parses for 4 input lines"):
        read_ptb_strings(f, 4)
    assert is_empty_parse("(())") and is_empty_parse("  ") and not is_empty_parse("(NN a)")
    # the tree reader agrees line by line on what is missing
    assert [t is None for t in read_ptb_file(f)] == [s is None for s in read_ptb_strings(f)]


def test_one_line_reader_for_every_module(tmp_path):
    from syneval_nb import data, textio

    assert data.read_lines is textio.read_lines
    f = tmp_path / "bad.txt"
    f.write_bytes(b"ok\nbad \xff here\n")
    with pytest.raises(textio.InputEncodingError, match=r"line 2, byte 5 of the line \(offset 7"):  # 3 + 4 = 7
        read_ptb_file(f)


def test_words_and_pos_tags_are_nltks_and_take_any_depth(deen_dir):
    """Issue 24: ``words`` and ``pos_tags`` hit RecursionError on a 5,000-level tree. They are iterative now, and
    equal to nltk's ``leaves()`` / ``pos()`` on real parses and on a tree mixing words and constituents."""
    from nltk import Tree

    from syneval_nb.trees.ptb import pos_tags, read_ptb, read_ptb_strings, words

    for s in read_ptb_strings(deen_dir / "parses" / "stanford-pcfg-3.3.1" / "newstest2021.de-en.ref.A.en.ptb")[:300]:
        t = read_ptb(s)
        assert words(t) == t.leaves() and pos_tags(t) == [tag for _, tag in t.pos()]
    mixed = Tree("S", ["a", Tree("NP", ["b"]), "c"])
    assert (words(mixed), pos_tags(mixed)) == (["a", "b", "c"], ["S", "NP", "S"])
    deep = Tree("NN", ["x"])
    for i in range(5000):
        deep = Tree("S", [deep, Tree("VB", [f"w{i}"])])
    w, p = words(deep), pos_tags(deep)
    assert (len(w), w[0], w[-1], p[0], p[-1]) == (5001, "x", "w4999", "NN", "VB")


def test_str_and_repr_are_nltks_and_take_any_depth(deen_dir):
    """Issue 24: ``str(tree)`` hit RecursionError on a 5,000-level tree (nltk's ``pformat`` recurses once per level).
    The kit's trees (``trees.ptb.Tree``, an ``nltk.Tree``) print the same text as nltk without recursion: equal to
    nltk's on real parses, odd trees and a 400-level tree, and an 8,000-level tree read through the compiled reader
    prints in a subprocess (a crash of the interpreter fails the test, not the run)."""
    import nltk

    from syneval_nb.trees.ptb import Tree, read_ptb, read_ptb_strings

    for s in read_ptb_strings(deen_dir / "parses" / "stanford-pcfg-3.3.1" / "newstest2021.de-en.ref.A.en.ptb")[:300]:
        t = read_ptb(s)
        n = nltk.Tree.convert(t)
        assert type(t) is Tree and type(n) is nltk.Tree
        assert (str(t), repr(t)) == (str(n), repr(n))
        assert t.pformat(margin=30, indent=3) == n.pformat(margin=30, indent=3)
        assert t.pformat(nodesep=":", parens="[]", quotes=True) == n.pformat(nodesep=":", parens="[]", quotes=True)
    odd = Tree("S", [Tree("X", []), ("a", "b"), 3, Tree(("l",), ["w"])])
    n = nltk.Tree.convert(odd)
    assert [odd.pformat(margin=m) for m in (70, 5)] == [n.pformat(margin=m) for m in (70, 5)]
    assert repr(odd) == repr(n) == "Tree('S', [Tree('X', []), ('a', 'b'), 3, Tree(('l',), ['w'])])"
    r = subprocess.run([sys.executable, "-c", _DEEP], capture_output=True, text=True, timeout=600,
                       env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    assert r.returncode == 0, r.stderr[-2000:]
    n = 8000  # (S (S ... (NN x))): n + 2 lines ("(S" per level, "(NN", "x" and the closing brackets)
    assert r.stdout.split() == ["same-as-nltk", str(n + 1), str(13 * n + 17), "1", "1", str(n), str(n + 1), str(n + 1)]


_DEEP = """
import sys, threading
import nltk
from syneval_nb.trees.ptb import read_ptb, words, pos_tags, phrase_labels, spans, tree_depth

def deep(n):
    return read_ptb("(S " * n + "(NN x)" + ")" * n)  # the compiled reader when built

# nltk's own text of a 400-level tree (its pformat is cubic in the depth), with the recursion it needs
t = deep(400)
got = str(t)
want = []
def nltk_str():
    want.append(nltk.Tree.pformat(nltk.Tree.convert(t)))
sys.setrecursionlimit(1_000_000)
threading.stack_size(1 << 29)
th = threading.Thread(target=nltk_str)
th.start(); th.join()
sys.setrecursionlimit(1000)  # the default again: the kit's printing needs no recursion
print("same-as-nltk" if want == [got] else "differs")
t = deep(8000)
s, r = str(t), repr(t)
print(s.count(chr(10)), len(r), len(words(t)), len(pos_tags(t)), len(phrase_labels(t)), len(spans(t)), tree_depth(t))
"""
