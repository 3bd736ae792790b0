"""Compiled twins against pure Python on trees far larger than any shipped parse (run as a script, in a subprocess).

``tests/test_speedups.py`` runs this file with ``python tests/_large_trees.py`` so that a crash of the interpreter
(the segfault of issue 13 killed it on any tree of 258 or more nodes) fails that test instead of killing the suite.
Each generated tree is read by both readers and goes through every compiled function and its pure-Python twin;
any difference raises ``AssertionError`` (exit 1). On success the script prints one JSON line: how many trees of
which shapes were compared, their largest node count and depth.

Shapes (seeded): flat (one phrase over up to 5,000 preterminals), deep (a chain of up to 1,000 levels, one or two
children a level), random (up to 5,000 nodes, random fan-out and labels, up to 1,000 levels), and real (WMT21
parses joined under one S into trees of 300 to 2,000 nodes), plus the flat 300-word tree of the issue.
"""
from __future__ import annotations

import json
import random
import sys
from collections import Counter
from itertools import chain

from syneval_nb import _accel
from syneval_nb.metrics import syntactic
from syneval_nb.trees.heads import PUNCT_TAGS, DependencyTree, head_index, _head_pass_py, headword_chains
from syneval_nb.metrics.syntactic import _clip_chains_py, _clip_ids_py, _max_counts_py, _subtree_ids_py
from syneval_nb.trees import (WRAPPER_LABELS, TreeFormatError, _parse_fast, _parse_general, read_ptb_flat,
                              strip_label)

C = _accel.speedups
PHRASES = ["S", "NP", "VP", "PP", "SBAR", "ADJP", "NP-SBJ", "VP-1", "FRAG"]
TAGS = ["NN", "DT", "JJ", "VBZ", "IN", "PRP", ",", ".", "CC", "-LRB-"]


def _pre(rng: random.Random) -> str:
    return f"({rng.choice(TAGS)} w{rng.randrange(40)})"


def flat_tree(n: int, rng: random.Random) -> str:
    return "(ROOT (S " + " ".join(_pre(rng) for _ in range(n)) + "))"


def deep_tree(levels: int, rng: random.Random, fork: bool) -> str:
    """A chain of ``levels`` phrases; with ``fork`` every level also has a preterminal beside the next level."""
    out = []
    for _ in range(levels - 1):
        out.append(f"({rng.choice(PHRASES)} " + (_pre(rng) + " " if fork else ""))
    out.append(_pre(rng))
    out.append(")" * (levels - 1))
    return "".join(out)


def random_tree(max_nodes: int, max_depth: int, rng: random.Random) -> str:
    """A random PTB-shaped tree grown top-down without recursion (breadth limited by ``max_nodes``)."""
    # node = [label, children (list of nodes) or word]
    root = [rng.choice(PHRASES), []]
    frontier = [(root, 1)]
    n = 1
    while frontier and n < max_nodes:
        node, d = frontier.pop(rng.randrange(len(frontier)))
        k = rng.choice([1, 1, 2, 2, 3, 5, 12]) if d < max_depth - 1 else 1
        for _ in range(k):
            if d + 1 < max_depth and rng.random() < 0.55 and n < max_nodes:
                child = [rng.choice(PHRASES), []]
                frontier.append((child, d + 1))
            else:
                child = [rng.choice(TAGS), f"w{rng.randrange(40)}"]
            node[1].append(child)
            n += 1
    for node, _ in frontier:  # close what is still open with one preterminal each
        node[1].append([rng.choice(TAGS), f"w{rng.randrange(40)}"])
    # print without recursion
    parts: list[str] = []
    stack: list = [root]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            parts.append(item)
            continue
        label, body = item
        if isinstance(body, str):
            parts.append(f"({label} {body})")
            continue
        parts.append(f"({label} ")
        stack.append(")")
        stack.extend(reversed(body))
    return "".join(parts)


def joined_real(parses: list[str], rng: random.Random, n_parts: int) -> str:
    """Real parses (their ``(ROOT ...)`` wrappers dropped) side by side under one S."""
    picked = [rng.choice(parses).strip() for _ in range(n_parts)]
    inner = [p[len("(ROOT "):-1] if p.startswith("(ROOT ") else p for p in picked]
    return "(ROOT (S " + " ".join(inner) + "))"


def compare(text: str, refs: list[str]) -> tuple[int, int]:
    """Every twin on one tree (and its references); returns (nodes, depth)."""
    c = C.parse_fast(text, strip_label, WRAPPER_LABELS)
    general = _parse_general(text, None)
    assert c is not None, "the compiled reader declined a tree of the common shape"
    assert c == (general.labels, general.kids, general.words)
    if text.isascii():
        py = _parse_fast(text)
        assert py is not None and c == (py.labels, py.kids, py.words)
    flat = general
    n = len(flat.labels)
    # subtree ids: insert the references, then look the hypothesis up, in both tables
    tables = {"py": ({}, []), "c": ({}, [])}
    ref_flats = [read_ptb_flat(r) for r in refs]
    per_ref_py, per_ref_c = [], []
    for rf in ref_flats + [flat]:
        a = _subtree_ids_py(rf, 9, tables["py"][0], True, tables["py"][1])
        b = C.subtree_ids(rf.labels, rf.kids, 9, tables["c"][0], True, tables["c"][1])
        assert a == b
        per_ref_py.append(a)
        per_ref_c.append(b)
    assert tables["py"][1] == tables["c"][1]
    hyp_py = _subtree_ids_py(flat, 9, tables["py"][0], False)
    hyp_c = C.subtree_ids(flat.labels, flat.kids, 9, tables["c"][0], False, None)
    assert hyp_py == hyp_c
    ceiling = _max_counts_py([Counter(chain.from_iterable(x)) for x in per_ref_py])
    assert C.id_ceiling(per_ref_c) == ceiling
    assert C.max_counts([Counter(chain.from_iterable(x)) for x in per_ref_c]) == ceiling
    assert C.clip_ids(hyp_c, ceiling, 9) == _clip_ids_py(hyp_py, ceiling, 9, tables["py"][1])
    # heads, dependents, preorder, chains
    py = _head_pass_py(flat)
    cc = C.head_pass(flat.labels, flat.kids, flat.words, PUNCT_TAGS, head_index, TreeFormatError)
    assert py == cc
    words, tags, hds = py[:3]
    kids_py: list[list[int]] = [[] for _ in hds]
    for d, h in enumerate(hds):
        if h >= 0:
            kids_py[h].append(d)
    assert C.dependents(hds) == kids_py
    dep = DependencyTree(words, tags, hds)
    labels, fkids = C.dep_preorder(words, kids_py, hds.index(-1))
    # the pure-Python preorder (DependencyTree.to_flat without the extension), recomputed here
    order, stack = [], [hds.index(-1)]
    while stack:
        i = stack.pop()
        order.append(i)
        stack += kids_py[i][::-1]
    pos = {i: k for k, i in enumerate(order)}
    assert labels == [words[i] for i in order]
    assert fkids == [tuple(pos[d] for d in kids_py[i]) for i in order]
    want = Counter(headword_chains(dep, 9))
    got = C.chain_counts(words, kids_py, 9, Counter())
    assert got == want and list(got) == list(want)
    ref_chains = []
    for rf in ref_flats:
        rw, rt, rh = _head_pass_py(rf)[:3]
        ref_chains.append(Counter(headword_chains(DependencyTree(rw, rt, rh), 9)))
    chain_ceiling = _max_counts_py(ref_chains)
    assert C.max_counts(ref_chains) == chain_ceiling
    for depth in (1, 4, 9):
        assert C.clip_chains(want, chain_ceiling, depth) == _clip_chains_py(want, chain_ceiling, depth)
    return n, _heights(flat)[0]


def _heights(flat) -> list[int]:
    h = [1] * len(flat.kids)
    for i in range(len(flat.kids) - 1, -1, -1):
        if flat.kids[i]:
            h[i] = 1 + max([h[c] for c in flat.kids[i]])
    return h


def main(real_file: str | None) -> None:
    if C is None:
        raise SystemExit(f"the compiled extension is not in use: {_accel.STATUS}")
    rng = random.Random(13)
    real = []
    if real_file:
        with open(real_file, encoding="utf-8") as fh:
            real = [ln for ln in fh.read().split("\n") if ln.startswith("(ROOT")][:400]
    cases: list[tuple[str, str]] = [("flat", flat_tree(300, rng)), ("flat", flat_tree(5000, rng)),
                                    ("flat", flat_tree(257, rng)), ("flat", flat_tree(258, rng))]
    cases += [("deep", deep_tree(lv, rng, fork)) for lv in (257, 300, 1000) for fork in (False, True)]
    cases += [("random", random_tree(rng.choice([300, 1000, 5000]), rng.choice([30, 300, 1000]), rng))
              for _ in range(12)]
    if real:
        cases += [("real", joined_real(real, rng, k)) for k in (12, 40, 80)]
    small_ref = "(ROOT (S (NP (DT a) (NN w1)) (VP (VBZ w2) (NP (PRP w3))) (. .)))"
    seen = Counter()
    max_nodes = max_depth = 0
    for k, (kind, text) in enumerate(cases):
        other = cases[(k + 1) % len(cases)][1]
        n, d = compare(text, [other, small_ref])
        seen[kind] += 1
        max_nodes, max_depth = max(max_nodes, n), max(max_depth, d)
    print(json.dumps({"trees": dict(seen), "max_nodes": max_nodes, "max_depth": max_depth}))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
