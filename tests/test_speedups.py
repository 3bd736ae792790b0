"""The compiled twins (syneval_nb._speedups) against the pure-Python definitions they translate.

Every compiled function must give exactly what its pure-Python twin gives: the same trees (or the same decline),
the same shape ids in the same order, the same heads, chains, counts and clipped statistics, on every shipped
Stanford parse and on fuzzed input. End to end, ``score_corpus`` run in a process with
``SYNEVAL_NB_PURE_PYTHON=1`` gives a frame identical to the compiled run, value for value.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from itertools import chain
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from syneval_nb import _accel, trees
from syneval_nb.trees import heads
from syneval_nb.metrics import syntactic
from syneval_nb.trees.heads import DependencyTree, PUNCT_TAGS, head_index, _head_pass_py, headword_chains
from syneval_nb.metrics.syntactic import _clip_chains_py, _clip_ids_py, _max_counts_py, _subtree_ids_py
from syneval_nb.trees import (WRAPPER_LABELS, FlatTree, TreeFormatError, _parse_fast, _parse_general, read_ptb_flat,
                              strip_label)

C = _accel.speedups
needs_c = pytest.mark.skipif(C is None, reason=_accel.STATUS)
ROOT = Path(__file__).resolve().parents[1]


def test_the_compiled_extension_is_in_use():
    """``bash setup.sh`` builds the extension; only an explicit SYNEVAL_NB_PURE_PYTHON=1 may turn it off."""
    if os.environ.get("SYNEVAL_NB_PURE_PYTHON", "").strip().lower() in ("1", "true", "yes"):
        pytest.skip("pure Python requested")
    assert C is not None, _accel.STATUS
    assert _accel.compiled() and _accel.STATUS.startswith("compiled")


def test_pure_python_can_be_forced():
    out = subprocess.run(
        [sys.executable, "-c", "from syneval_nb import _accel, trees; from syneval_nb.metrics import syntactic; "
         "from syneval_nb.trees import heads; "
         "print(_accel.compiled(), trees._read_fast.__name__, syntactic._C is None, heads._C is None)"],
        env={**os.environ, "SYNEVAL_NB_PURE_PYTHON": "1"}, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "_parse_fast", "True", "True"]


@needs_c
def test_the_compiled_reader_uses_the_same_constants():
    # the compiled reader hard-codes the empty-element label; the wrappers are passed in
    assert trees.EMPTY_ELEMENT == "-NONE-"
    assert trees._read_fast.__name__ == "_parse_fast_compiled"


# ------------------------------------------------------------------------------------------ shipped parses


@pytest.fixture(scope="module")
def shipped_texts(shared_data: Path) -> list[str]:
    files = sorted(shared_data.glob("*/parses/stanford-pcfg-3.3.1/*.ptb"))
    texts = [line for f in files for line in f.read_text(encoding="utf-8").split("\n")[:-1] if line != "(())"]
    assert len(texts) == 34782  # every shipped parse but zh-en's three '(())' (no parse)
    return texts


@pytest.fixture(scope="module")
def shipped_flats(shipped_texts: list[str]) -> list[FlatTree]:
    return [read_ptb_flat(t) for t in shipped_texts]


def _triple(f: FlatTree | None):
    return None if f is None else (f.labels, f.kids, f.words)


def _same_as_readers(text: str) -> None:
    """The compiled fast path on ``text``: on ASCII text exactly the pure-Python fast path (same tree or same
    decline); on any text, when it reads a tree, the general reader's tree."""
    c = C.parse_fast(text, strip_label, WRAPPER_LABELS)
    if text.isascii():
        assert c == _triple(_parse_fast(text)), text
    if c is not None:
        assert c == _triple(_parse_general(text, None)), text


@needs_c
@pytest.mark.slow
def test_reader_equals_the_pure_python_readers_on_every_shipped_parse(shipped_texts):
    n_fast = 0
    for text in shipped_texts:
        _same_as_readers(text)
        n_fast += C.parse_fast(text, strip_label, WRAPPER_LABELS) is not None
    # the compiled fast path reads every shipped parse, the 1,159 non-ASCII ones (e.g. a no-break space) included
    assert sum(not t.isascii() for t in shipped_texts) == 1212
    assert n_fast == 34782


@needs_c
@pytest.mark.slow
def test_subtree_ids_equal_on_every_shipped_parse(shipped_flats):
    """Insert the references (first half) in both tables, then look the rest up: same ids, same table size,
    same depth of every id."""
    half = len(shipped_flats) // 2
    tables = {"py": ({}, []), "c": ({}, [])}
    for f in shipped_flats[:half]:
        a = _subtree_ids_py(f, 9, tables["py"][0], True, tables["py"][1])
        b = C.subtree_ids(f.labels, f.kids, 9, tables["c"][0], True, tables["c"][1])
        assert a == b
    assert len(tables["py"][0]) == len(tables["c"][0]) > 10000
    assert tables["py"][1] == tables["c"][1]
    n_unknown = 0
    for f in shipped_flats[half:]:
        a = _subtree_ids_py(f, 9, tables["py"][0], False)
        b = C.subtree_ids(f.labels, f.kids, 9, tables["c"][0], False, None)
        assert a == b
        n_unknown += sum(ids.count(-1) for ids in b)
    assert n_unknown > 0  # the lookup branch (unknown shapes) is exercised
    # shapes of different depths never share an id (what the compiled clipping relies on)
    depth_of = tables["c"][1]
    for f in shipped_flats[:200]:
        for d, ids in enumerate(C.subtree_ids(f.labels, f.kids, 9, tables["c"][0], False, None)):
            assert all(depth_of[i] == d for i in ids if i != -1)


@needs_c
@pytest.mark.slow
def test_heads_dependencies_and_chains_equal_on_every_shipped_parse(shipped_flats):
    for f in shipped_flats:
        py = _head_pass_py(f)
        c = C.head_pass(f.labels, f.kids, f.words, PUNCT_TAGS, head_index, TreeFormatError)
        assert py == c
        words, tags, hds = py[:3]
        kids_py: list[list[int]] = [[] for _ in hds]
        for d, h in enumerate(hds):
            if h >= 0:
                kids_py[h].append(d)
        assert C.dependents(hds) == kids_py
        dep = DependencyTree(words, tags, hds)  # the validated constructor
        labels, fkids = C.dep_preorder(words, kids_py, hds.index(-1))
        flat = dep.to_flat()
        assert (labels, fkids) == (flat.labels, flat.kids)
        want = Counter(headword_chains(dep, 9))
        got = C.chain_counts(words, kids_py, 9, Counter())
        assert got == want and list(got) == list(want)  # same counts, same key order


@needs_c
@pytest.mark.slow
def test_clipping_equals_on_real_segments(shipped_flats):
    """Ceilings over two references and clipped statistics of a third tree, as STM/DSTM/HWCM use them."""
    space = syntactic.Space()
    for k in range(0, 3000, 3):
        refs, hyp = shipped_flats[k:k + 2], shipped_flats[k + 2]
        ids = [C.subtree_ids(f.labels, f.kids, 9, space.shapes, True, space.depth_of) for f in refs]
        counters = [Counter(chain.from_iterable(x)) for x in ids]
        ceiling = _max_counts_py(counters)
        assert C.max_counts(counters) == ceiling
        assert C.id_ceiling(ids) == ceiling
        h = C.subtree_ids(hyp.labels, hyp.kids, 9, space.shapes, False, None)
        assert C.clip_ids(h, ceiling, 9) == _clip_ids_py(h, ceiling, 9, space.depth_of)
        chains = [Counter(headword_chains(heads.to_dependencies(f), 9)) for f in refs]
        cc = _max_counts_py(chains)
        assert C.max_counts(chains) == cc
        hc = Counter(headword_chains(heads.to_dependencies(hyp), 9))
        for depth in (1, 4, 9):
            assert C.clip_chains(hc, cc, depth) == _clip_chains_py(hc, cc, depth)


# ------------------------------------------------------------------------------------------ fuzzed input

_PIECES = ["(", ")", " ", "  ", "\t", "\n", "NP", "VP", "S", "NN", "-NONE-", "ROOT", "TOP", "dog", "a",
           "NP-SBJ-1", "-LRB-", "\x1f", "\u00a0", "é", "\x00", "((", "))", "(NN x)", "(S ", "=2", "\u2009", "\x85",
           "漢字", "\U0001f600", "\ud800"]


@needs_c
@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), min_size=0, max_size=40))
def test_reader_equals_on_random_token_soup(pieces):
    _same_as_readers("".join(pieces))


_PEN = "(ROOT (S (NP (PRP I)) (VP (VBP have) (NP (DT a) (JJ red) (NN pen))) (. .)))"


@needs_c
@settings(max_examples=2000, deadline=None)
@given(st.integers(0, len(_PEN) - 1),
       st.sampled_from(["", "(", ")", " ", "x", "\x1c", "ü", "-NONE-", "\u00a0", "\u3000"]), st.booleans())
def test_reader_equals_on_mutated_trees(pos, ins, delete):
    _same_as_readers(_PEN[:pos] + ins + _PEN[pos + (1 if delete else 0):])


@needs_c
def test_compiled_functions_reject_wrong_types_with_a_clear_error():
    with pytest.raises(TypeError):
        C.subtree_ids(["S"], [[]], 2, {}, True, None)  # kids must be tuples
    with pytest.raises(TypeError, match="counter must be a dict"):
        C.chain_counts(["a"], [[]], 2, [])
    with pytest.raises(ValueError, match="max_len"):
        C.chain_counts(["a"], [[]], 0, {})
    with pytest.raises(ValueError, match="depth"):
        C.subtree_ids(["S"], [()], 0, {}, True, None)
    with pytest.raises(TreeFormatError, match="'VP' has no children"):
        C.head_pass(["S", "VP"], [(1,), ()], [None, None], PUNCT_TAGS, head_index, TreeFormatError)
    # indices that would reach outside the arrays raise instead of crashing
    with pytest.raises(ValueError, match="not a later node"):
        C.subtree_ids(["S", "NP"], [(5,), ()], 2, {}, True, None)
    with pytest.raises(ValueError, match="not a later node"):
        C.subtree_ids(["S", "NP"], [(0,), ()], 2, {}, True, None)
    with pytest.raises(ValueError, match="not a later node"):
        C.head_pass(["S", "NN"], [(1, 7), ()], [None, "a"], PUNCT_TAGS, head_index, TreeFormatError)
    with pytest.raises(ValueError, match="head 3"):
        C.dependents([-1, 3])
    with pytest.raises(ValueError, match="root 2"):
        C.dep_preorder(["a", "b"], [[1], []], 2)
    with pytest.raises(ValueError, match="do not form a tree"):
        C.dep_preorder(["a", "b"], [[1], [0]], 0)  # a cycle
    with pytest.raises(ValueError, match="do not form a tree"):
        C.chain_counts(["a", "b"], [[1, 1, 1], []], 9, {})  # more chains of a length than words
    with pytest.raises(ValueError, match="lists of ids"):
        C.clip_ids([[1]], {}, 3)
    # None where a list or tuple belongs raises too (typed arguments refuse None)
    for call in (lambda: C.parse_fast(None, strip_label, WRAPPER_LABELS),
                 lambda: C.subtree_ids(["S"], [None], 2, {}, True, None),
                 lambda: C.head_pass(["S"], [None], [None], PUNCT_TAGS, head_index, TreeFormatError),
                 lambda: C.dep_preorder(["a"], [None], 0), lambda: C.chain_counts(["a"], [None], 3, {}),
                 lambda: C.clip_ids([None], {}, 1), lambda: C.id_ceiling([[None]])):
        with pytest.raises(TypeError):
            call()


# ------------------------------------------------------------------------------------------ end to end

_SCORE = """
import json, sys
import pandas as pd
from syneval_nb import _accel
from syneval_nb.data import load_wmt21_deen
from syneval_nb.metrics.syntactic import score_corpus
seg = load_wmt21_deen().segments
out = {"compiled": _accel.compiled()}
for system in ("UEdin", "Online-W"):
    one = seg[seg["system"] == system].sort_values("seg_id").head(250)
    refs = [[a, b] for a, b in zip(one["ptb_ref_A"], one["ptb_ref_B"])]
    df = score_corpus(one["ptb"].tolist(), refs, max_depth=9)
    out[system] = {"rows": df.to_dict("list"), "corpus": df.attrs["corpus"]}
json.dump(out, sys.stdout)
"""


@needs_c
@pytest.mark.slow
def test_score_corpus_is_identical_with_and_without_the_extension(shared_data: Path):
    env = {**os.environ, "SYNEVAL_NB_DATA": str(shared_data)}
    runs = {}
    for pure in ("0", "1"):
        p = subprocess.run([sys.executable, "-c", _SCORE], env={**env, "SYNEVAL_NB_PURE_PYTHON": pure},
                           capture_output=True, text=True, cwd=ROOT)
        assert p.returncode == 0, p.stderr[-2000:]
        runs[pure] = json.loads(p.stdout)
    assert runs["0"].pop("compiled") is True and runs["1"].pop("compiled") is False
    # exact equality (json keeps every float digit; NaN round-trips as NaN, compared as strings)
    assert json.dumps(runs["0"], sort_keys=True) == json.dumps(runs["1"], sort_keys=True)
    first = runs["0"]["UEdin"]["rows"]
    assert len(first["stm_9"]) == 250 and set(first) >= {"stm_1", "tkm", "hwcm_9", "dstm_9", "dtkm"}


# ------------------------------------------------------------------------------------------ beyond the shipped sizes


def _run_isolated(args: list[str], pure: bool = False, **kw) -> subprocess.CompletedProcess:
    """A child interpreter: a crash (negative return code: killed by a signal) fails the calling test, not the suite."""
    env = {**os.environ, "SYNEVAL_NB_PURE_PYTHON": "1" if pure else "0"}
    p = subprocess.run([sys.executable, *args], env=env, capture_output=True, text=True, cwd=ROOT, **kw)
    assert p.returncode >= 0, f"the interpreter was killed by signal {-p.returncode}: {p.stderr[-2000:]}"
    return p


@needs_c
def test_twins_equal_on_trees_up_to_5000_nodes_and_1000_levels(shared_data: Path):
    """Issue 13: the compiled reader and ``dep_preorder`` stored ints they did not own in tuples, so any tree of
    258 or more nodes (past CPython's small-int cache) crashed the interpreter or read back wrong children. Every
    twin is compared on flat (300 and 5,000 words, 257/258 around the old threshold), deep (257 to 1,000 levels),
    random (up to 5,000 nodes, 1,000 levels) and joined real trees, in a child process."""
    real = shared_data / "wmt21-deen/parses/stanford-pcfg-3.3.1/newstest2021.de-en.ref.A.en.ptb"
    p = _run_isolated([str(ROOT / "tests/_large_trees.py"), str(real)])
    assert p.returncode == 0, p.stderr[-3000:]
    got = json.loads(p.stdout)
    assert got == {"trees": {"flat": 4, "deep": 6, "random": 12, "real": 3}, "max_nodes": 6385, "max_depth": 1000}


_BIG = """
import json, random, sys
sys.path.insert(0, "tests")
from _large_trees import deep_tree, flat_tree, random_tree
from syneval_nb import _accel, trees
from syneval_nb.metrics import syntactic
rng = random.Random(5)
hyps = [flat_tree(300, rng), deep_tree(1000, rng, True), random_tree(5000, 1000, rng), flat_tree(5000, rng)]
refs = [[random_tree(2000, 300, rng), flat_tree(400, rng)] for _ in hyps]
df = syntactic.score_corpus(hyps, refs, metrics=("stm", "hwcm", "dstm"), max_depth=9)
out = {"compiled": _accel.compiled(), "rows": df.to_dict("list"), "corpus": df.attrs["corpus"]}
# the flat 300-word sentence of the issue, read back as an nltk.Tree and scored at sentence level
t = trees.read_ptb(hyps[0])
out["words"] = len(t.leaves())
out["stm_self"] = syntactic.stm(t, [t], depth=9, effective_order=True).score
out["stm_self_literal"] = syntactic.stm(t, [t], depth=9).score
json.dump(out, sys.stdout)
"""


@needs_c
def test_score_corpus_on_large_trees_is_identical_with_and_without_the_extension():
    runs = {}
    for pure in (False, True):
        p = _run_isolated(["-c", _BIG], pure=pure, timeout=600)
        assert p.returncode == 0, p.stderr[-3000:]
        runs[pure] = json.loads(p.stdout)
    assert runs[False].pop("compiled") is True and runs[True].pop("compiled") is False
    assert json.dumps(runs[False], sort_keys=True) == json.dumps(runs[True], sort_keys=True)
    assert runs[False]["words"] == 300 and runs[False]["stm_self"] == 1.0
    # (S w1 .. w300) has subtrees of depths 1 and 2 only: the paper's literal mean over d = 1..9 is 2/9
    assert runs[False]["stm_self_literal"] == pytest.approx(2 / 9, abs=1e-15)
    assert len(runs[False]["rows"]["stm_9"]) == 4


_DEEP = """
import json, sys
from syneval_nb import _accel, trees
from syneval_nb.metrics import syntactic
deep = "(S " * 4999 + "(NN w)" + ")" * 4999
other = "(S " * 2999 + "(NN w)" + ")" * 2999
t, r = trees.read_ptb(deep), trees.read_ptb(other)
out = {"compiled": _accel.compiled()}
for name in ("stm", "hwcm", "dstm"):
    res = getattr(syntactic, name)(t, [r], 9)
    out[name] = [res.score, list(res.matches), list(res.totals), len(res.explain())]
out["score_corpus"] = syntactic.score_corpus([deep], [[other]], metrics=("stm", "hwcm", "dstm"),
                                             max_depth=9).to_dict("list")
json.dump(out, sys.stdout)
"""


def test_a_5000_level_tree_is_scored_the_same_on_both_paths():
    """Issue 13: with pure Python, ``stm()`` on a 5,000-deep tree raised RecursionError (the recursive flatten
    and encode of nltk Trees). Both are iterative now; the compiled and pure runs give the same numbers."""
    runs = {}
    for pure in (False, True):
        p = _run_isolated(["-c", _DEEP], pure=pure, timeout=600)
        assert p.returncode == 0, p.stderr[-3000:]
        runs[pure] = json.loads(p.stdout)
    runs[False].pop("compiled"), runs[True].pop("compiled")
    assert runs[False] == runs[True]
    # a chain of S nodes: every depth-d subtree of the hypothesis (5,000 - d + 1 of them) has the same shape and the
    # reference has 3,000 - d + 1 of it, so the clipped matches are 3,000 - d + 1 at every depth d
    assert runs[False]["stm"][1] == [3000 - d for d in range(9)]
    assert runs[False]["stm"][2] == [5000 - d for d in range(9)]
