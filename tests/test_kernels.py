"""The Collins & Duffy kernel against brute-force enumeration of all fragments, plus its algebraic properties."""
from __future__ import annotations

import itertools
import math
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nltk import Tree

from syneval_nb.trees.kernels import (
    KernelTree,
    cosine,
    kernel,
    kernel_contributions,
    max_cosine,
    normalized_tree_kernel,
    tree_kernel,
)
from syneval_nb.trees import read_ptb
from syneval_nb.trees.encoding import Interner


# ------------------------------------------------------------------ brute force: enumerate every fragment explicitly


def _fragments(node: Tree) -> list[tuple[str, int]]:
    """Every fragment rooted at ``node`` as (canonical string, number of productions).

    A fragment holds the node's whole production; each child node is either cut (written ``c:label``) or expanded
    into one of its own fragments; word children are part of the production (written ``w:word``)."""
    options: list[list[tuple[str, int]]] = []
    for c in node:
        if isinstance(c, Tree):
            options.append([(f"c:{c.label()}", 0)] + _fragments(c))
        else:
            options.append([(f"w:{c}", 0)])
    out = []
    for combo in itertools.product(*options):
        text = "(" + node.label() + "".join(" " + s for s, _ in combo) + ")"
        out.append((text, 1 + sum(k for _, k in combo)))
    return out


def _all_fragments(t: Tree) -> Counter:
    h: Counter = Counter()
    for sub in t.subtrees():
        for frag in _fragments(sub):
            h[frag] += 1
    return h


def brute_kernel(t1: Tree, t2: Tree, lam: float = 1.0) -> float:
    """H(t1) . H(t2), each common fragment weighted by lam ** (its number of productions)."""
    h1, h2 = _all_fragments(t1), _all_fragments(t2)
    return sum(c * h2[f] * lam ** f[1] for f, c in h1.items() if f in h2)


# ------------------------------------------------------------------ random small trees

LABELS = ["A", "B", "C"]
WORDS = ["x", "y"]


@st.composite
def small_trees(draw, depth: int = 3) -> Tree:
    """Small trees mixing phrase nodes, PTB-like preterminals (one word child) and word-labelled leaf nodes."""
    label = draw(st.sampled_from(LABELS))
    if depth <= 1 or draw(st.integers(0, 3)) == 0:
        kind = draw(st.integers(0, 1))
        if kind == 0:
            return Tree(label, [draw(st.sampled_from(WORDS))])  # preterminal
        return Tree(draw(st.sampled_from(WORDS)), [])  # dependency-style leaf node
    n = draw(st.integers(1, 3))
    kids = [draw(small_trees(depth - 1)) for _ in range(n)]
    if draw(st.booleans()):  # sometimes a word mixed into a production (RST/DR-lex style)
        kids.insert(draw(st.integers(0, len(kids))), draw(st.sampled_from(WORDS)))
    return Tree(label, kids)


@settings(max_examples=80, deadline=None)
@given(small_trees(), small_trees())
def test_kernel_equals_brute_force(t1, t2):
    assert tree_kernel(t1, t2) == pytest.approx(brute_kernel(t1, t2), rel=1e-12)


@settings(max_examples=30, deadline=None)
@given(small_trees(), small_trees(), st.sampled_from([0.3, 0.5, 0.9]))
def test_decayed_kernel_equals_brute_force(t1, t2, lam):
    assert tree_kernel(t1, t2, lam) == pytest.approx(brute_kernel(t1, t2, lam), rel=1e-12)


@settings(max_examples=50, deadline=None)
@given(small_trees(), small_trees())
def test_symmetry_and_cosine_range(t1, t2):
    assert tree_kernel(t1, t2) == pytest.approx(tree_kernel(t2, t1), rel=1e-12)
    c = normalized_tree_kernel(t1, t2)
    assert 0.0 <= c <= 1.0
    assert normalized_tree_kernel(t1, t1) == pytest.approx(1.0)


@settings(max_examples=50, deadline=None)
@given(small_trees(), small_trees())
def test_contributions_sum_to_kernel(t1, t2):
    it = Interner()
    a, b = KernelTree.from_tree(t1, it), KernelTree.from_tree(t2, it)
    assert sum(kernel_contributions(a, b)) == pytest.approx(kernel(a, b), rel=1e-12)


# ------------------------------------------------------------------ hand-computed values


def test_hand_computed_kernel():
    # (NP (DT the) (NN dog)) against itself. Fragments rooted at DT: {DT->the}; at NN: {NN->dog};
    # at NP: NP->DT NN with each child cut or expanded: 2 * 2 = 4. H = 6 fragments, each once: K = 6.
    t = read_ptb("(NP (DT the) (NN dog))")
    assert tree_kernel(t, t) == 6.0
    # against (NP (DT a) (NN dog)): common fragments are NN->dog, NP->DT NN with DT cut and NN cut or expanded: 3
    u = read_ptb("(NP (DT a) (NN dog))")
    assert tree_kernel(t, u) == 3.0
    assert normalized_tree_kernel(t, u) == pytest.approx(3 / 6)
    # lam = 0.5: NN->dog 0.5, NP(cut,cut) 0.5, NP(cut, NN->dog) 0.25 -> 1.25
    assert tree_kernel(t, u, lam=0.5) == pytest.approx(1.25)


def test_words_distinguish_preterminals_and_dependency_leaves():
    # a preterminal's production includes its word
    assert tree_kernel(read_ptb("(NN dog)"), read_ptb("(NN cat)")) == 0.0
    # word-labelled dependency trees: have(I, pen(a, red)) vs have(I, pen(a)): leaves are nodes with empty productions
    t1 = Tree("have", [Tree("I", []), Tree("pen", [Tree("a", []), Tree("red", [])])])
    t2 = Tree("have", [Tree("I", []), Tree("pen", [Tree("a", [])])])
    # common: I, a (1 each); pen->(a) differs from pen->(a red); have->(I pen) with I cut/expanded and pen cut: 2
    assert tree_kernel(t1, t2) == 4.0
    assert tree_kernel(t1, t2) == brute_kernel(t1, t2)


def test_max_cosine_reuses_reference_self_kernel():
    it = Interner()
    h = KernelTree.from_tree(read_ptb("(S (NP (PRP I)) (VP (VBD ran)))"), it)
    r1 = KernelTree.from_tree(read_ptb("(S (NP (PRP You)) (VP (VBD ran)))"), it)
    r2 = KernelTree.from_tree(read_ptb("(S (NP (PRP I)) (VP (VBD ran)))"), it)
    best, arg = max_cosine(h, [r1, r2])
    assert (best, arg) == (pytest.approx(1.0), 1)
    assert 1.0 in r1._self and 1.0 in r2._self  # the self-kernels are cached on the reference objects
    assert cosine(h, r1) < 1.0


def test_bad_lambda_and_bad_input():
    t = read_ptb("(NN dog)")
    with pytest.raises(ValueError, match="lam"):
        tree_kernel(t, t, lam=0.0)
    with pytest.raises(ValueError, match="lam"):
        tree_kernel(t, t, lam=1.5)
    with pytest.raises(TypeError, match="nltk.Tree"):
        tree_kernel("(NN dog)", t)


def test_large_identical_trees_stay_finite():
    # a 60-word right-branching tree: the fragment count is huge but the cosine stays exactly 1
    s = "(NN w)"
    for i in range(60):
        s = f"(X (NN w{i}) {s})"
    t = read_ptb(s)
    k = tree_kernel(t, t)
    assert math.isfinite(k) and k > 1e15
    assert normalized_tree_kernel(t, t) == pytest.approx(1.0)
