"""Issue 26: HWCM, DSTM and DTKM on spaCy's dependency parses (``dependencies="spacy"``, ``HWCM@spacy-D``, ...).

The kit's numbers on small spaCy-made trees equal a brute-force enumeration written here from the definitions,
independently of the kit's code: headword chains as every downward path of the heads array, DSTM's depth-d subtrees
as every node's d-level truncation, and the all-subtree kernel as the explicit list of every fragment of both
trees (Collins & Duffy: a fragment holds a node's whole production; each child node stops or continues).
"""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from collections import Counter
from itertools import product
from pathlib import Path

import pytest

from syneval_nb.metrics import registry as M
from syneval_nb.metrics import syntactic
from syneval_nb.metrics.base import Corpus, Segment
from syneval_nb.parsers.cache import ParseCache
from syneval_nb.parsers.frontend import parse, parse_strings
from syneval_nb.parsers.spacy import spacy_backend_key
from syneval_nb.textio import read_lines

EXAMPLE = Path(__file__).resolve().parent.parent / "data" / "examples" / "your_system"
HYPS = ["I have a blue pen.", "The old man, who lives here, has been reading the long book and the paper.",
        "Cats sleep.", "the the the cat cat sat sat ."]
REFS = [["I have a red pen.", "I own a red pen."],
        ["The old man who lives here has read the long book and the newspaper.", "An old man reads the book."],
        ["The cats are sleeping.", "Cats sleep a lot."],
        ["The cat sat.", "the cat sat on the cat ."]]


@pytest.fixture(scope="module")
def trees():
    texts = list(dict.fromkeys(HYPS + [r for rs in REFS for r in rs]))
    got = parse(texts, backend="spacy", cache=False)
    return dict(zip(texts, got))


# ------------------------------------------------------------------------------------------- brute force


def kids_of(dep) -> list[list[int]]:
    return [[d for d in range(len(dep.heads)) if dep.heads[d] == h] for h in range(len(dep.heads))]


def paths(dep, max_len: int) -> Counter:
    """Every downward path of 1..max_len words (a word, then a dependent of the last word, ...)."""
    kids, out = kids_of(dep), Counter()

    def walk(i, path):
        path = path + (dep.words[i],)
        out[path] += 1
        if len(path) < max_len:
            for k in kids[i]:
                walk(k, path)

    for i in range(len(dep.words)):
        walk(i, ())
    return out


def truncations(dep, d: int) -> Counter:
    """The depth-d subtree of every node of height >= d, as a bracketed string of words."""
    kids = kids_of(dep)

    def height(i):
        return 1 + max((height(k) for k in kids[i]), default=0)

    def rep(i, k):
        if k == 1 or not kids[i]:
            return dep.words[i]
        return "(" + dep.words[i] + " " + " ".join(rep(c, k - 1) for c in kids[i]) + ")"

    return Counter(rep(i, d) for i in range(len(dep.words)) if height(i) >= d)


def clipped_mean(hyp: list[Counter], refs: list[list[Counter]], epsilon: float | None) -> float:
    """The paper's literal mean over d = 1..D of clipped precision (0/0 is a zero fraction; zero -> epsilon)."""
    total = 0.0
    for d, h in enumerate(hyp):
        ceiling = Counter()
        for r in refs:
            for k, v in r[d].items():
                ceiling[k] = max(ceiling[k], v)
        n = sum(h.values())
        p = sum(min(v, ceiling[k]) for k, v in h.items()) / n if n else 0.0
        total += epsilon if (p == 0 and epsilon is not None) else p
    return total / len(hyp)


def fragments(dep) -> Counter:
    """Every Collins-Duffy fragment with its number of productions: ``{(string, size): count}``."""
    kids = kids_of(dep)

    def at(i) -> list[tuple[str, int]]:
        options = [[(dep.words[k], 0)] + at(k) for k in kids[i]]  # each child node: stop, or one of its fragments
        out = []
        for combo in product(*options):
            out.append(("[" + dep.words[i] + "(" + " ".join(s for s, _ in combo) + ")]", 1 + sum(n for _, n in combo)))
        return out

    return Counter(f for i in range(len(dep.words)) for f in at(i))


def brute_kernel(a, b, lam: float) -> float:
    fa, fb = fragments(a), fragments(b)
    return sum(v * fb[f] * lam ** f[1] for f, v in fa.items() if f in fb)


def brute_cosine(a, b, lam: float) -> float:
    return brute_kernel(a, b, lam) / math.sqrt(brute_kernel(a, a, lam) * brute_kernel(b, b, lam))


# ------------------------------------------------------------------------------------------- the tests


@pytest.mark.parametrize("depth", [1, 2, 3, 4])
def test_hwcm_and_dstm_equal_brute_force(trees, depth):
    for hyp, refs in zip(HYPS, REFS):
        h, rs = trees[hyp], [trees[r] for r in refs]
        want_h = clipped_mean([Counter({k: v for k, v in paths(h, depth).items() if len(k) == d})
                               for d in range(1, depth + 1)],
                              [[Counter({k: v for k, v in paths(r, depth).items() if len(k) == d})
                                for d in range(1, depth + 1)] for r in rs], syntactic.EPSILON)
        want_d = clipped_mean([truncations(h, d) for d in range(1, depth + 1)],
                              [[truncations(r, d) for d in range(1, depth + 1)] for r in rs], None)
        seg = Segment("", [""] * len(rs), hyp_dep=h, ref_dep=rs)
        assert M.get(f"HWCM@spacy-{depth}").sentence_score(seg).score == pytest.approx(want_h, abs=1e-12), hyp
        assert M.get(f"DSTM@spacy-{depth}").sentence_score(seg).score == pytest.approx(want_d, abs=1e-12), hyp


@pytest.mark.parametrize("lam", [1.0, 0.4])
def test_dtkm_equals_brute_force_fragments(trees, lam):
    for hyp, refs in zip(HYPS, REFS):
        h, rs = trees[hyp], [trees[r] for r in refs]
        want = max(brute_cosine(h, r, lam) for r in rs)
        got = M.get("DTKM@spacy", lam=lam).sentence_score(Segment("", [""] * len(rs), hyp_dep=h, ref_dep=rs))
        assert got.score == pytest.approx(want, abs=1e-12), hyp


def test_the_enumeration_counts_fragments_as_collins_and_duffy():
    """A hand-countable tree: have(I pen(a red)): fragments at I, a, red: 1 each; at pen: 2 x 2 = 4; at have:
    2 x (1 + 4) = 10; 17 in all (the kit's worked example: K(ref, ref) = 17)."""
    from syneval_nb.trees.heads import DependencyTree

    t = DependencyTree(["I", "have", "a", "red", "pen"], ["PRP", "VBP", "DT", "JJ", "NN"], [1, -1, 4, 4, 1])
    assert sum(fragments(t).values()) == 17 == brute_kernel(t, t, 1.0)


def test_texts_are_parsed_through_the_cache_and_equal_given_trees(trees, tmp_path):
    """A corpus of texts makes its spaCy parses through the persistent cache (a second run parses nothing); the
    scores equal those of the same trees given; the signature names the dependency source."""
    cache = tmp_path / "parses.sqlite"
    for name in ("HWCM@spacy-4", "DSTM@spacy-4", "DTKM@spacy"):
        c = Corpus(HYPS, REFS, cache=str(cache))
        got = M.get(name).sentence_scores(c)
        given = Corpus(HYPS, REFS, hyp_dep=[trees[h] for h in HYPS], ref_dep=[[trees[r] for r in rs] for rs in REFS])
        assert got.tolist() == pytest.approx(M.get(name).sentence_scores(given).tolist(), abs=1e-15)
        m = M.get(name)
        m.corpus_score(c)
        assert f"|deps:{spacy_backend_key()}|" in m.signature() and "parses:" not in m.signature()
        mg = M.get(name)
        mg.corpus_score(given)
        assert mg.signature().endswith("|parses:given|version:syneval-nb-0.1.0")
    store = ParseCache(cache)
    assert store.count(spacy_backend_key()) == len({*HYPS, *(r for rs in REFS for r in rs)})
    store.close()
    again = parse_strings(HYPS, backend="spacy", cache=str(cache))
    assert again.report.n_cached == len(HYPS) and again.report.n_parsed == 0


def test_names_options_and_default_unchanged(trees):
    assert M.canonical_name("hwcm@spacy") == "HWCM@spacy-4" == M.canonical_name("HWCM@SPACY_4")
    assert M.canonical_name("dstm@spacy-2") == "DSTM@spacy-2" and M.canonical_name("dtkm@spacy") == "DTKM@spacy"
    m = M.get("hwcm", depth=4, dependencies="spacy")
    assert (m.name, m.inputs) == ("HWCM@spacy-4", ("dep",)) and m.signature() == M.get("HWCM@spacy-4").signature()
    assert m.signature().startswith(f"HWCM@spacy-4|depth:4|eff:no|eps:0.001|deps:{spacy_backend_key()}|hypfault")
    # the default (Collins heads, the paper's) keeps its name, inputs and signature: no deps field
    for name in ("HWCM-4", "DSTM-4", "DTKM"):
        d = M.get(name)
        assert d.inputs == ("ptb",) and "deps:" not in d.signature() and "@" not in d.name
        assert d.signature() == M.get(name, dependencies="collins").signature()
    with pytest.raises(ValueError, match="constituency trees; dependencies='spacy' applies to the dependency"):
        M.get("stm", dependencies="spacy")
    with pytest.raises(ValueError, match=r"dependencies must be one of \('collins', 'spacy'\), got 'stanford'"):
        M.get("hwcm", dependencies="stanford")
    with pytest.raises(ValueError, match="segment 0, hypothesis: not a spaCy dependency parse"):
        M.get("HWCM@spacy-2").corpus_score(Corpus(["a"], [["a"]], hyp_dep=["{bad"], ref_dep=[[trees["Cats sleep."]]]))


def test_every_segment_counts_on_spacy_trees(trees):
    """An empty hypothesis gets the worst value; a segment without any reference tree is left out."""
    rs = [trees[r] for r in REFS[0]]
    for name, worst in (("HWCM@spacy-4", syntactic.EPSILON), ("DSTM@spacy-4", 0.0), ("DTKM@spacy", 0.0)):
        s = M.get(name).sentence_score(Corpus([""], [REFS[0]], ref_dep=[rs]))
        assert (s.score, s.n_missing) == (worst, 0)
        c = Corpus(HYPS[:2], REFS[:2], hyp_dep=[trees[HYPS[0]], trees[HYPS[1]]], ref_dep=[rs, [None, None]],
                   ref_layout="segments")
        got = M.get(name).corpus_score(c)
        assert (got.n, got.n_missing) == (2, 1)


def test_score_command_needs_no_java(tmp_path):
    """``syneval-nb score -m hwcm@spacy`` with the Java path pointing nowhere: spaCy parses, no JVM; the scores
    equal the Python API's."""
    hyp, refs = EXAMPLE / "system_literal.txt", [EXAMPLE / "ref.A.txt", EXAMPLE / "ref.B.txt"]
    r = subprocess.run([sys.executable, "-m", "syneval_nb.app.cli", "score", "-q", "-r", *map(str, refs), "-i", str(hyp),
                        "-m", "hwcm@spacy,dstm@spacy-2,dtkm@spacy", "--cache", str(tmp_path / "c.sqlite"),
                        "--format", "json"], capture_output=True, text=True, timeout=600,
                       env={**os.environ, "SYNEVAL_NB_JAVA": str(tmp_path / "no-java")})
    assert r.returncode == 0, r.stderr
    out = {s["name"]: s for s in json.loads(r.stdout)["scores"]}
    c = Corpus(read_lines(hyp), [read_lines(f) for f in refs], ref_layout="streams", cache=str(tmp_path / "c.sqlite"))
    from syneval_nb.evaluate import comparison_metrics

    for name in ("HWCM@spacy-4", "DSTM@spacy-2", "DTKM@spacy"):
        (m,), _ = comparison_metrics([name])  # score compares systems with the brevity-penalty variant (issue 37)
        assert m.name != name and m.brevity_penalty
        assert out[m.name]["score"] == pytest.approx(m.corpus_score(c).score, abs=1e-12)
        assert f"deps:{spacy_backend_key()}" in out[m.name]["signature"]
