"""Tests of syneval_nb.metrics.hybrid: the paper's two worked examples, a literal brute-force Equ() oracle, and properties."""
from __future__ import annotations

import itertools
import random

import numpy as np
import pandas as pd
import pytest
import scipy.stats
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from nltk import Tree

from syneval_nb import stats as S
from syneval_nb.metrics.hybrid import (
    align_leaves,
    detokenize,
    equivalent_nodes,
    equivalent_pairs,
    hybridize,
    hybridize_corpus,
    hybridize_segment,
    seams_attested,
)
from syneval_nb.studies import hybridization as H6
from syneval_nb.studies.hybridization import (
    detokenization_agreement,
    length_distribution,
    node_lengths,
    reference_statistics,
    table5,
)
from syneval_nb.metrics.lexical import BLEU
from syneval_nb.paths import KIT_DATA_DIR
from syneval_nb.trees import TreeFormatError, read_ptb, read_ptb_file

EXAMPLES = KIT_DATA_DIR / "examples"

# Section 3 of the paper: the eight references of the Figure 1 pair.
FIGURE1_HYBRIDS = """Machine Translation develops constantly
Machine Translation develops persistently
Machine Translation progresses constantly
Machine Translation progresses persistently
MT develops constantly
MT develops persistently
MT progresses constantly
MT progresses persistently""".split("\n")

# Section 4: the four original LDC2008E43 references and the six additional ones.
ALABAMA_ORIGINALS = """Ten churches burned down in 10 days in the American state of Alabama
Burning of ten churches in ten days in the American state of Alabama
Ten churches set on fire in ten days in American state of Alabama
Torching of ten churches within ten days in American state of Alabama""".split("\n")
ALABAMA_ADDITIONAL = """Torching of ten churches in ten days in the American state of Alabama
Torching of ten churches within ten days in the American state of Alabama
Torching of ten churches in ten days in American state of Alabama
Burning of ten churches within ten days in American state of Alabama
Burning of ten churches within ten days in the American state of Alabama
Burning of ten churches in ten days in American state of Alabama""".split("\n")


def _lower(texts) -> set[str]:
    return {t.lower() for t in texts}


@pytest.fixture(scope="module")
def figure1() -> list[Tree]:
    return read_ptb_file(EXAMPLES / "wang_figure1.ptb")


@pytest.fixture(scope="module")
def alabama() -> list[Tree]:
    return read_ptb_file(EXAMPLES / "wang_alabama.ptb")


# ------------------------------------------------------------------------------------ the paper


def test_figure1_five_equivalent_pairs(figure1):
    pairs = equivalent_pairs(*figure1)
    got = [(p.label1, " ".join(p.seg1), " ".join(p.seg2)) for p in pairs]
    assert got == [
        ("S", "Machine translation develops constantly", "MT progresses persistently"),
        ("NP", "Machine translation", "MT"),
        ("VP", "develops constantly", "progresses persistently"),
        ("VV", "develops", "progresses"),
        ("ADV", "constantly", "persistently"),
    ]
    assert [p.pos1 for p in pairs] == [(), (0,), (1,), (1, 0), (1, 1)]


def test_figure1_eight_references(figure1):
    hs = hybridize(figure1, max_refs=None)
    assert len(hs) == 8
    assert _lower(h.text for h in hs) == _lower(FIGURE1_HYBRIDS)
    assert [h.is_original for h in hs] == [True, True] + [False] * 6


def test_alabama_six_additional_references(alabama):
    assert [" ".join(t.leaves()).lower() for t in alabama] == [s.lower() for s in ALABAMA_ORIGINALS]
    hs = hybridize(alabama, max_refs=None, texts=ALABAMA_ORIGINALS)
    originals = [h.text for h in hs if h.is_original]
    additional = [h.text for h in hs if not h.is_original]
    assert originals == ALABAMA_ORIGINALS
    assert len(additional) == 6
    assert _lower(additional) == _lower(ALABAMA_ADDITIONAL)


def test_alabama_equivalent_nodes(alabama):
    # refs 1 and 3 ("Burning of ..." / "Torching of ...") share the NP/PP spine down to "of Alabama":
    # TOP is stripped, so per tree the paired nodes are NP(root), NPB, PP, IN, NP, NPB, CD, NNS, PP, IN, NP,
    # NPB, CD, NNS, PP, IN, NP, NPB, PP, IN, NPB, NNP = 22 (counted by hand on the printed trees; the NPBs
    # "Burning"/"Torching" (NN vs NNP) and "the American State"/"American State" stop the descent);
    # refs 0 and 2 (both S) share S, NPB, CD, NNS and VP = 5 nodes; the S/NP roots pair with each other too.
    flags = equivalent_nodes(alabama)
    assert [sum(f) for f in flags] == [5, 22, 5, 22]
    stats = reference_statistics([alabama])
    assert stats["n_equivalent_nodes"].tolist() == [5, 22, 5, 22]
    assert stats["n_words"].tolist() == [len(s.split()) for s in ALABAMA_ORIGINALS]  # the paper's sentences


# ------------------------------------------------------------------- a literal oracle for Equ()


def _paper_equ_set(trees: list[Tree]) -> set[tuple[str, ...]]:
    """R' computed literally as in Section 3: materialised sets, equivalents from the synchronous traversal."""
    equiv: dict[tuple[int, tuple], list[tuple[int, tuple]]] = {}

    def pair(i, a, j, b, pa, pb):
        equiv.setdefault((i, pa), []).append((j, pb))
        equiv.setdefault((j, pb), []).append((i, pa))
        ka = [c for c in a if isinstance(c, Tree)]
        kb = [c for c in b if isinstance(c, Tree)]
        if ka and len(ka) == len(a) and [c.label() for c in ka] == [c.label() for c in kb]:
            for n, (ca, cb) in enumerate(zip(ka, kb)):
                pair(i, ca, j, cb, pa + (n,), pb + (n,))

    for i, j in itertools.combinations(range(len(trees)), 2):
        pair(i, trees[i], j, trees[j], (), ())

    def equ(i, node, pos):
        out = {tuple(node.leaves())}
        for j, p in equiv.get((i, pos), []):
            out.add(tuple(trees[j][p].leaves()))
        kids = [c for c in node if isinstance(c, Tree)]
        if kids:
            prod = {()}
            for n, c in enumerate(kids):
                prod = {a + b for a in prod for b in equ(i, c, pos + (n,))}
            out |= prod
        return out

    return set().union(*(equ(i, t, ()) for i, t in enumerate(trees)))


LABELS = ["NP", "VP", "PP"]
WORDS = ["a", "b", "c", "d", "e"]


def _random_tree(rng: random.Random, depth: int, leaf_prob: float) -> Tree:
    if depth == 0 or rng.random() < leaf_prob:
        return Tree(rng.choice(["DT", "NN"]), [rng.choice(WORDS)])
    return Tree(rng.choice(LABELS), [_random_tree(rng, depth - 1, leaf_prob) for _ in range(rng.randint(1, 3))])


def _variant(rng: random.Random, base: Tree) -> Tree:
    """A reference sharing ``base``'s structure: words redrawn, 1 subtree in 8 replaced (half keep the label)."""
    if rng.random() < 1 / 8:
        fresh = _random_tree(rng, 2, 0.5)
        if rng.random() < 0.5 and not isinstance(fresh[0], str):
            fresh.set_label(base.label())
        return fresh
    if isinstance(base[0], str):
        return Tree(base.label(), [rng.choice(WORDS)])
    return Tree(base.label(), [_variant(rng, c) for c in base])


def _reference_set(seed: int, min_size: int = 1, max_size: int = 3) -> list[Tree]:
    rng = random.Random(seed)
    base = _random_tree(rng, 3, 0.25)
    return [_variant(rng, base) for _ in range(rng.randint(min_size, max_size))]


def test_matches_literal_equ_recursion():
    n_nontrivial = 0
    n_checked = 0
    for seed in range(300):
        trees = _reference_set(seed)
        if hybridize_segment(trees, max_refs=len(trees)).n_derivations > 600:
            continue  # keep the materialising oracle fast (skips 5 of the 300 sets)
        n_checked += 1
        got = hybridize(trees, max_refs=None)
        expected = _paper_equ_set(trees)
        assert {h.tokens for h in got} == expected, f"seed {seed}: {[str(t) for t in trees]}"
        assert len({h.tokens for h in got}) == len(got)  # duplicates removed
        for h in got:  # every hybrid's tree spells its tokens
            assert tuple(h.tree.leaves()) == h.tokens
        n_nontrivial += len(expected) > len({tuple(t.leaves()) for t in trees})
    # coverage floors, not results: most sets are checked and many do hybridize (seen: 295 checked, 62 non-trivial)
    assert n_checked >= 280 and n_nontrivial >= 50


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 10**6), st.integers(min_value=3, max_value=12))
def test_cap_properties(seed, cap):
    trees = _reference_set(seed, min_size=2)
    # the full enumeration is the oracle: keep it small (about 1 set in 300 has more than 5,000 derivations, and a
    # rare one took minutes); large sets are test_cap_never_materialises_the_product's
    assume(hybridize_segment(trees, max_refs=len(trees)).n_derivations <= 5000)
    full = hybridize_segment(trees, max_refs=None)
    capped = hybridize_segment(trees, max_refs=cap)
    assert len(capped) == min(cap, len(full))
    assert capped.capped == (len(full) > cap)
    # the capped set is a prefix of the canonical enumeration, originals first, by number of swaps
    assert [h.tokens for h in capped.hybrids] == [h.tokens for h in full.hybrids][:cap]
    swaps = [h.n_swaps for h in capped.hybrids]
    assert swaps == sorted(swaps)
    originals = {tuple(t.leaves()) for t in trees}
    assert {h.tokens for h in capped.hybrids if h.is_original} == originals
    # deterministic
    again = hybridize_segment(trees, max_refs=cap)
    assert [(h.tokens, h.source, h.swaps) for h in again.hybrids] == [(h.tokens, h.source, h.swaps)
                                                                       for h in capped.hybrids]


def test_cap_never_materialises_the_product():
    # 2 references, 40 preterminal slots with different words under identical structure: 2^40 strings.
    a = Tree("S", [Tree("NN", [f"a{k}"]) for k in range(40)])
    b = Tree("S", [Tree("NN", [f"b{k}"]) for k in range(40)])
    hs = hybridize_segment([a, b], max_refs=50)
    assert hs.n_derivations == 2 * 2 ** 40  # each root: every subset of the 40 slots swapped
    assert len(hs) == 50 and hs.capped
    # originals, then the 40 + 40 single swaps come next (first 48 of them, round-robin over the two roots)
    assert [h.n_swaps for h in hs.hybrids] == [0, 0] + [1] * 48
    assert hs.hybrids[2].tokens == ("b0",) + tuple(f"a{k}" for k in range(1, 40))
    assert hs.hybrids[3].tokens == ("a0",) + tuple(f"b{k}" for k in range(1, 40))


def test_identical_references_give_one_original():
    t = read_ptb("(S (NP (DT the) (NN cat)) (VP (VBD sat)))")
    hs = hybridize([t, t.copy(deep=True)], max_refs=None)
    assert len(hs) == 1 and hs[0].is_original


def test_swapped_subtree_comes_from_the_other_tree(figure1):
    hs = hybridize(figure1, max_refs=None)
    h = next(h for h in hs if h.text == "MT develops constantly")
    assert h.tree == read_ptb("(S (NP (NN MT)) (VP (VV develops) (ADV constantly)))")
    assert h.swaps == ((1, 1, 1),)  # node 1 (NP) of tree 0 <- node 1 (NP) of tree 1


def test_bad_input():
    t = read_ptb("(S (NP (NN a)) (VP (VB b)))")
    with pytest.raises(ValueError, match="no reference trees"):
        hybridize([])
    with pytest.raises(ValueError, match="max_refs=1"):
        hybridize([t, t], max_refs=1)
    with pytest.raises(ValueError, match="1 texts for 2"):
        hybridize([t, t], texts=["a b"])
    with pytest.raises(TypeError, match="reference 1"):
        hybridize([t, "(S (NN a))"])


def test_corpus_keeps_references_without_tree(figure1):
    texts = ["Machine translation develops constantly", "MT evolves.", "MT progresses persistently"]
    sets = hybridize_corpus([[figure1[0], None, figure1[1]]], texts=[texts], max_refs=None, progress=False)
    hs = sets[0]
    assert len(hs) == 9
    assert [h.text for h in hs.originals] == ["Machine translation develops constantly", "MT evolves.",
                                             "MT progresses persistently"]
    assert hs.hybrids[1].tree is None and hs.hybrids[2].source == 2
    with pytest.raises(ValueError, match="segment 0: references \\[1\\] have no tree"):
        hybridize_corpus([[figure1[0], None]], progress=False)


# ---------------------------------------------------------------------------------- detokenize


@pytest.mark.parametrize("tokens, text", [
    ("He said , `` I do n't know -LRB- really -RRB- . ''", 'He said, "I don\'t know (really)."'),
    ("It 's John 's cat , is n't it ?", "It's John's cat, isn't it?"),
    ("The U.S. economy grew 3 % in 2020 .", "The U.S. economy grew 3% in 2020."),
])
def test_detokenize(tokens, text):
    assert detokenize(tokens.split()) == text


# -------------------------------------------------------------------------- Table 5, Figures 2-5


def test_node_lengths_and_distribution(figure1):
    lengths = node_lengths([figure1])
    # tree 0: S(4) NP(2) NN(1) NN(1) VP(2) VV(1) ADV(1); tree 1: S(3) NP(1) NN(1) VP(2) VV(1) ADV(1)
    assert lengths["length"].tolist() == [4, 2, 1, 1, 2, 1, 1, 3, 1, 1, 2, 1, 1]
    assert lengths["is_equivalent"].tolist() == [True, True, False, False, True, True, True,
                                                 True, True, False, True, True, True]
    dist = length_distribution(lengths, max_length=4).set_index("length")
    assert dist["tree_nodes"].tolist() == [8, 3, 1, 1]
    assert dist["equivalent_nodes"].tolist() == [5, 3, 1, 1]
    assert dist.loc[1, "proportion"] == pytest.approx(5 / 8)
    t5 = table5(reference_statistics([figure1]))
    assert t5["Average length of reference"] == pytest.approx(3.5)
    assert t5["Total tree nodes"] == 13 and t5["Total equivalent nodes"] == 10


def test_align_leaves():
    raw = "He said: “I don’t live in the U.S.”"
    toks = "He said : `` I do n't live in the U.S. ''".split()
    spans = align_leaves(toks, raw)
    assert [raw[a:b] for a, b in spans] == ["He", "said", ":", "“", "I", "do", "n’t", "live", "in", "the", "U.S.",
                                            "”"]
    toks2 = "He lives in the U.S. .".split()
    assert align_leaves(toks2, "He lives in the U.S.")[-1] == (20, 20)  # the tokenizer's extra period
    assert align_leaves(["foo"], "bar") is None


def test_hybrid_text_keeps_raw_characters():
    t0 = read_ptb("(S (NP (NNP John)) (VP (VBZ does) (RB n't) (VP (VB sleep))) (. .))")
    t1 = read_ptb("(S (NP (NNP Mary)) (VP (VBZ does) (RB n't) (VP (VB eat))) (. .))")
    hs = hybridize([t0, t1], texts=["John doesn’t  sleep.", "Mary doesn’t eat."], max_refs=None)
    # swap points: NNP (John/Mary) and VB (sleep/eat); "does"/"n't"/"." are equal and give nothing new.
    # Round-robin at one swap: root 0 -> "Mary ... sleep." (host 0 keeps its double space), root 1 -> "John ...
    # eat."; root 0's next one ("John ... eat.") repeats those tokens and is dropped.
    assert [h.text for h in hs] == ["John doesn’t  sleep.", "Mary doesn’t eat.", "Mary doesn’t  sleep.",
                                    "John doesn’t eat."]
    assert [h.text_from for h in hs] == ["raw", "raw", "aligned", "aligned"]
    no_text = hybridize([t0, t1], max_refs=None)
    assert no_text[2].text == "Mary doesn't sleep." and no_text[2].text_from == "detokenized"


def test_detokenization_agreement():
    t = read_ptb("(S (NP (PRP He)) (VP (VBD said) (`` ``) (NP (NN hi)) ('' '')) (. .))")
    d = detokenization_agreement([t, None], ["He said “hi”.", "x"])
    # 13a does not split curly quotes: [He, said, “hi”, .] (4 tokens); the detokenized 'He said "hi".' gives
    # [He, said, ", hi, ", .] (6 tokens): 1 substitution + 2 insertions
    assert d.to_dict("records") == [dict(ref=0, n_raw=4, n_detok=6, edit_distance=3, identical=False,
                                         aligned=True)]


# ---------------------------------------------------------------------- evaluation helpers (notebook 06)


def _figure1_frame(figure1) -> pd.DataFrame:
    p0, p1 = (t.pformat(margin=1 << 30) for t in figure1)
    return pd.DataFrame({"system": ["s1", "s2", "s1", "s2"], "seg_id": [0, 0, 1, 1],
                         "target": ["MT develops constantly", "machine translation is constant",
                                    "MT progresses persistently", "constantly"],
                         "ptb": ["(S (NP (NN MT)) (VP (VV develops) (ADV constantly)))", None, p1, p1],
                         "ref": ["Machine translation develops constantly"] * 4,
                         "refB": ["MT progresses persistently"] * 4,
                         "ptb_ref": [p0] * 4, "ptb_refB": [p1] * 4})


def test_hybridize_frame_and_syntactic_scores(figure1):
    df = _figure1_frame(figure1)
    sets = H6.hybridize_frame(df, ("ref", "refB"), ("ptb_ref", "ptb_refB"), progress=False)
    assert list(sets) == [0, 1] and [len(s) for s in sets.values()] == [8, 8]
    assert [read_ptb(p) for p in sets[0].ptbs] == [h.tree for h in sets[0].hybrids]
    parse_sets = {"orig": {0: [df.ptb_ref[0]], 1: [df.ptb_ref[0]]}, "ext": {s: v.ptbs for s, v in sets.items()}}
    sc = H6.syntactic_scores(df, parse_sets, metrics=("stm",), depth=2, progress=False)
    # row 0: hyp "MT develops constantly" = the hybrid NP-swap of ref 0: STM 1 with the extended set; against ref 0
    # alone depth 1 matches S NP NN VP VV ADV (6/6), depth 2 (S NP VP) and (VP VV ADV) match but (NP NN) does
    # not, ref 0 has (NP NN NN): 2/3 -> (1 + 2/3) / 2
    assert sc[("stm", "ext")].iloc[0] == pytest.approx(1.0)
    assert sc[("stm", "orig")].iloc[0] == pytest.approx((1 + 2 / 3) / 2)
    assert sc[("stm", "ext")].iloc[1] == 0.0  # unparsed hypothesis: the worst value (issue 24)
    # corpus level of system s1 (rows 0 and 2, both hybrids of the extended set): STM 1
    assert sc.attrs["corpus"].at["s1", ("stm", "ext")] == pytest.approx(1.0)
    # the hybrid trees themselves give the same scores as their printed parses
    by_tree = H6.syntactic_scores(df, {"ext": {s: v.trees for s, v in sets.items()}}, metrics=("stm",),
                                          depth=2, progress=False)
    pd.testing.assert_series_equal(by_tree[("stm", "ext")], sc[("stm", "ext")])


def test_reference_gain_table_matches_scipy_and_stats():
    rng = np.random.default_rng(0)
    seg = np.repeat(np.arange(20), 3)
    human = rng.normal(size=60)
    base = human + rng.normal(size=60)
    ext = human + 0.5 * rng.normal(size=60)
    scores = pd.DataFrame({("m", "orig"): base, ("m", "ext"): ext})
    scores.columns = pd.MultiIndex.from_tuples(scores.columns)
    t = H6.reference_gain_table(scores, human, baseline="orig", segments=seg, n_resamples=200)
    assert t.columns.tolist() == ["metric", "references", *S.TABLE_COLUMNS[1:]]
    t = t.set_index("references")
    assert t.at["ext", "r"] == pytest.approx(scipy.stats.pearsonr(ext, human)[0])
    assert t.at["ext", "delta"] == pytest.approx(scipy.stats.pearsonr(ext, human)[0]
                                                 - scipy.stats.pearsonr(base, human)[0])
    pb = S.paired_bootstrap(ext, base, human, segments=seg, n_resamples=200)  # the same resamples
    assert (t.at["ext", "delta_low"], t.at["ext", "delta_high"], t.at["ext", "p_better"]) == pytest.approx(
        (pb.delta.low, pb.delta.high, pb.p_better))
    assert t.at["ext", "baseline"] == "orig" and t.at["orig", "baseline"] == "" and np.isnan(t.at["orig", "p_better"])
    assert (t["n_clusters"] == 20).all()
    with pytest.raises(ValueError, match="baseline"):
        H6.reference_gain_table(scores, human, baseline="nope")


def test_system_level_gain_table_matches_sacrebleu():
    """The system level of chapter 06: corpus BLEU of every system with both references (``2 manual``) and with the
    extended set (here the first reference alone, :func:`system_scores`) against the human scores
    (:func:`reference_gain_table` without segments: :func:`syneval_nb.stats.system_table`), each r from scipy,
    Williams from its formula."""
    import sacrebleu
    from types import SimpleNamespace

    refs = [["the cat sat on the mat", "a cat was sitting on the mat"], ["he reads a book", "he is reading a book"]]
    hyps = {"a": ["the cat sat on a mat", "he reads the book"], "b": ["cat mat", "book"],
            "c": ["a cat was on the mat", "he is reading a book"], "d": ["the cat sat", "he reads"]}
    human = {"a": 0.5, "b": -1.0, "c": 0.8, "d": 0.0}
    seg = pd.DataFrame([{"system": s, "seg_id": k, "target": h, "ref_A": refs[k][0], "ref_B": refs[k][1]}
                        for s in "abcd" for k, h in enumerate(hyps[s])])
    ch = H6.HybridChapter(ted=pd.DataFrame(), seg=seg, da=human, ted_sets={},
                          deen_sets={k: SimpleNamespace(texts=[r[0]]) for k, r in enumerate(refs)})
    scores = H6.system_scores(ch, {"BLEU": BLEU()}, progress=False)
    t = H6.reference_gain_table(scores, human, H6.ORIGINAL, n_resamples=50).set_index("references")
    two, one = H6.ORIGINAL, H6.EXTENDED
    streams = [list(x) for x in zip(*refs)]
    bleu = [sacrebleu.corpus_bleu(hyps[s], streams).score / 100 for s in "abcd"]
    assert scores[("BLEU", two)].tolist() == pytest.approx(bleu)
    assert t.at[two, "r"] == pytest.approx(scipy.stats.pearsonr(bleu, [human[s] for s in "abcd"])[0])
    assert np.isnan(t.at[two, "williams_p"]) and not np.isnan(t.at[one, "williams_p"])
    # Williams (1959) on the three correlations, each from scipy
    from syneval_nb.stats import williams_test

    one_bleu = [sacrebleu.corpus_bleu(hyps[s], streams[:1]).score / 100 for s in "abcd"]
    assert scores[("BLEU", one)].tolist() == pytest.approx(one_bleu)
    h = [human[s] for s in "abcd"]
    expected = williams_test(scipy.stats.pearsonr(one_bleu, h)[0], scipy.stats.pearsonr(bleu, h)[0],
                             scipy.stats.pearsonr(one_bleu, bleu)[0], 4)
    assert (t.at[one, "williams_t"], t.at[one, "williams_p"]) == pytest.approx(expected)
    assert t.at[one, "delta"] == pytest.approx(scipy.stats.pearsonr(one_bleu, h)[0] - scipy.stats.pearsonr(bleu, h)[0])
    assert (t.at[one, "n"], t.at[one, "baseline"]) == (4, two)
    with pytest.raises(ValueError, match=r"no human score for the systems \['d'\]"):
        H6.reference_gain_table(scores, {s: human[s] for s in "abc"}, H6.ORIGINAL)
    with pytest.raises(ValueError, match="system-level gain table"):
        H6.reference_gain_table(scores, human, H6.ORIGINAL, method="spearman")
    with pytest.raises(TypeError, match="syntactic metric names"):
        H6.system_scores(ch, "stm")
    shuffled = pd.concat([seg[seg.system != "b"], seg[seg.system == "b"].iloc[::-1]], ignore_index=True)
    with pytest.raises(ValueError, match="same lines in the same order"):
        H6.system_scores(H6.HybridChapter(pd.DataFrame(), shuffled, human, {}, ch.deen_sets), {"BLEU": BLEU()})


def test_reference_trees_names_a_malformed_parse(figure1):
    df = _figure1_frame(figure1)
    df.loc[df.seg_id == 1, "ptb_refB"] = "(S (NP (NN MT)"
    df.loc[df.seg_id == 0, "ptb_ref"] = "(())"
    with pytest.raises(TreeFormatError, match="seg_id 1, column 'ptb_refB'"):
        H6.reference_trees(df, ("ptb_ref", "ptb_refB"))
    trees = H6.reference_trees(df[df.seg_id == 0], ("ptb_ref", "ptb_refB"))
    assert trees == [[None, figure1[1]]]  # (()) is a failed parse: None


def test_hybrid_text_keeps_the_spacing_of_each_piece(shared_data):
    """Issue 22: TED talk.7 segment 35 gave "as youare building your bricks" (the host's empty seam before "'re"
    kept when "are" came in) and "as you 're building bricks". Each piece now brings the spacing before its first
    token in its own reference."""
    from syneval_nb.data import load_ted_zhen_mqm

    t = load_ted_zhen_mqm()
    row = t[t["ref"].str.contains("as you're building your bricks", regex=False)].iloc[0]
    hs = hybridize_segment([read_ptb(row["ptb_ref"]), read_ptb(row["ptb_refB"])], texts=[row["ref"], row["refB"]])
    assert [h.text for h in hs.hybrids] == [
        "One of them is the input from the user, as you're building your bricks.",
        "One of them is the input from the user, as you are building bricks.",
        "One of them is the input from the user, as you are building your bricks.",
        "One of them is the input from the user, as you're building bricks."]
    assert [" ".join(h.tree.leaves()) for h in hs.hybrids[2:]] == [
        "One of them is the input from the user , as you are building your bricks .",
        "One of them is the input from the user , as you 're building bricks ."]


# ------------------------------------------------------------------------------ issue 22: the "seams" check


def test_seams_check_by_hand():
    """They fly / It flies: S, NP, PRP and VP are equivalent (VBP and VBZ are not), so the paper's R' adds "It fly"
    and "They flies" (a subject and a predicate swap). Their seams ("It", "fly") and ("They", "flies") occur in
    neither reference: the "seams" check removes both. The cat sat / A cat slept: every hybrid's seams occur in
    one of the references ("A cat" in the second, "cat sat" in the first), so the check keeps all of them."""
    bad = [read_ptb("(S (NP (PRP They)) (VP (VBP fly)))"), read_ptb("(S (NP (PRP It)) (VP (VBZ flies)))")]
    plain = hybridize_segment(bad, max_refs=None)
    assert [" ".join(h.tokens) for h in plain.hybrids] == ["They fly", "It flies", "It fly", "They flies"]
    assert [h.seams for h in plain.hybrids[2:]] == [(("It", "fly"),), (("They", "flies"),)]
    checked = hybridize_segment(bad, max_refs=None, well_formed="seams")
    assert [" ".join(h.tokens) for h in checked.hybrids] == ["They fly", "It flies"]
    assert (checked.n_rejected, checked.well_formed, plain.n_rejected) == (2, "seams", 0)
    assert not seams_attested(plain.hybrids[2], [h.tokens for h in plain.originals])
    good = [read_ptb("(S (NP (DT The) (NN cat)) (VP (VBD sat)))"), read_ptb("(S (NP (DT A) (NN cat)) (VP (VBD slept)))")]
    p, c = hybridize_segment(good, max_refs=None), hybridize_segment(good, max_refs=None, well_formed="seams")
    assert [h.tokens for h in c.hybrids] == [h.tokens for h in p.hybrids] and len(p) == 4 and c.n_rejected == 0
    with pytest.raises(ValueError, match="well_formed must be one of"):
        hybridize_segment(bad, well_formed="root")
    with pytest.raises(ValueError, match="well_formed must be one of"):
        hybridize_corpus([bad], well_formed="root")


def test_seams_check_on_real_hybrids(shared_data):
    """TED zh-en: "They fly into this thing" gives "It fly into this thing" (removed by the check); "He thought
    nature would protect us" gives "He believed nature would protect us", a fine paraphrase that the check also
    removes (its seams are new): the check is strict, not perfect. Counts over all TED and de-en segments (the
    chapter's reports them)."""
    from syneval_nb.data import load_ted_zhen_mqm
    from syneval_nb.studies import hybridization as H6

    t = load_ted_zhen_mqm()
    t = t[~t["is_human"]]
    plain = H6.hybridize_frame(t, ("ref", "refB"), ("ptb_ref", "ptb_refB"), progress=False)
    checked = H6.hybridize_frame(t, ("ref", "refB"), ("ptb_ref", "ptb_refB"), progress=False, well_formed="seams")
    texts = {s: set(hs.texts) for s, hs in plain.items()}
    kept = {s: set(hs.texts) for s, hs in checked.items()}
    fly = next(s for s, x in texts.items() if any(h.startswith("It fly into this thing") for h in x))
    assert not any(h.startswith("It fly") for h in kept[fly])
    he = next(s for s, x in texts.items() if "He believed nature would protect us from their formation." in x)
    assert "He believed nature would protect us from their formation." not in kept[he]
    n_plain = sum(len(hs) - len(hs.originals) for hs in plain.values())
    n_kept = sum(len(hs) - len(hs.originals) for hs in checked.values())
    assert (n_plain, n_kept, sum(hs.n_rejected for hs in checked.values())) == (676, 348, 328)
    assert sum(len(hs) > len(hs.originals) for hs in plain.values()) == 126  # 24% of 529 segments
    assert sum(len(hs) > len(hs.originals) for hs in checked.values()) == 89
    assert all(kept[s] <= texts[s] for s in texts)  # nothing capped on TED: the check only removes


def test_system_scores_run_through_the_one_scoring_loop(shared_data, monkeypatch):
    """Issue 34: chapter 06's system scores go through :func:`syneval_nb.metrics.base.score_systems` (one call per
    reference set, one corpus per system; the old code called ``corpus_score`` per system and metric, or
    ``score_corpus`` per system), with the numbers of the old paths: on 4 real WMT21 de-en systems x 30 lines with
    their real (ragged) hybrid sets, each lexical score equals ``corpus_score`` of that system's texts, corpus BLEU
    equals sacrebleu's with the same references (streams padded with None), and STM/HWCM equal
    :func:`syneval_nb.metrics.syntactic.score_corpus`'s corpus scores."""
    import sacrebleu
    from syneval_nb.data import load_wmt21_deen
    from syneval_nb.metrics.base import score_systems
    from syneval_nb.metrics.syntactic import score_corpus

    segs = load_wmt21_deen().segments
    systems = ["Borderline", "ICL", "Online-A", "UF"]
    seg = segs[segs["system"].isin(systems) & (segs["seg_id"] < 30)].sort_values(["system", "seg_id"])
    seg = seg.reset_index(drop=True)
    first = seg.drop_duplicates("seg_id").reset_index(drop=True)
    sets = H6.hybridize_frame(first, ("ref_A", "ref_B"), ("ptb_ref_A", "ptb_ref_B"), progress=False)
    assert len({len(s.texts) for s in sets.values()}) > 2  # ragged: 1, 2 and more references per segment
    ch = H6.HybridChapter(ted=pd.DataFrame(), seg=seg, da=dict(zip(systems, [0.1, -0.2, 0.3, 0.0])), ted_sets={},
                          deen_sets=sets)
    calls = []

    def spy(metrics, corpora, **kw):
        calls.append(sorted(corpora))
        return score_systems(metrics, corpora, **kw)

    monkeypatch.setattr(H6, "score_systems", spy)
    metrics = H6.make_metrics()
    lex = H6.system_scores(ch, metrics, progress=False)
    assert calls == [systems, systems]  # one loop per reference set, every system in it
    ref_sets = {H6.ORIGINAL: [[a, b] for a, b in zip(first["ref_A"], first["ref_B"])],
                H6.EXTENDED: [sets[s].texts for s in first["seg_id"]]}
    for s in systems:
        hyps = list(seg.loc[seg["system"] == s, "target"])
        for r, refs in ref_sets.items():
            for m, obj in metrics.items():
                assert lex.at[s, (m, r)] == obj.corpus_score(hyps, refs, ref_layout="segments").score, (s, m, r)
    hyps = list(seg.loc[seg["system"] == "ICL", "target"])
    for r, refs in ref_sets.items():
        k = max(map(len, refs))
        streams = [[rs[i] if i < len(rs) else None for rs in refs] for i in range(k)]
        assert lex.at["ICL", ("BLEU", r)] == pytest.approx(
            sacrebleu.corpus_bleu(hyps, streams, smooth_method="exp").score / 100, abs=1e-12)
    calls.clear()
    syn = H6.system_scores(ch, ("stm", "hwcm"), progress=False)
    assert calls == [systems, systems]
    parse_refs = {H6.ORIGINAL: [[a, b] for a, b in zip(first["ptb_ref_A"], first["ptb_ref_B"])],
                  H6.EXTENDED: [sets[s].trees for s in first["seg_id"]]}
    for s in systems:
        for r, refs in parse_refs.items():
            old = score_corpus(list(seg.loc[seg["system"] == s, "ptb"]), refs, ("stm", "hwcm"), 4).attrs["corpus"]
            assert (syn.at[s, ("stm", r)], syn.at[s, ("hwcm", r)]) == (old["stm_4"], old["hwcm_4"]), (s, r)
