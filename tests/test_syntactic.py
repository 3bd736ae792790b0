"""STM, TKM, HWCM, DSTM, DTKM against the paper's worked examples and hand arithmetic."""
from __future__ import annotations

import math

import pandas as pd
import pytest

from syneval_nb.trees.kernels import normalized_tree_kernel
from syneval_nb.metrics.syntactic import (
    EPSILON,
    HWCM,
    STM,
    asiya_hwcm,
    asiya_stm,
    dstm,
    dtkm,
    hwcm,
    score_corpus,
    stm,
    tkm,
)
from syneval_nb.trees import TreeFormatError, read_ptb

# Liu & Gildea (2005), Figure 2 as the text describes it: the hypothesis has the 7 nodes S, NP, VP, PRON, V, NP, PRON
# (PRON twice), the reference has PRON once and an NP -> ART ADJ N ("I have a red pen").
HYP_FIG2 = "(S (NP (PRON I)) (VP (V have) (NP (PRON it))))"
REF_FIG2 = "(S (NP (PRON I)) (VP (V have) (NP (ART a) (ADJ red) (N pen))))"
# the same sentences with PTB tags, for the Collins head rules
REF_PEN = "(S (NP (PRP I)) (VP (VBP have) (NP (DT a) (JJ red) (NN pen))))"
HYP_BLUE = "(S (NP (PRP I)) (VP (VBP have) (NP (DT a) (JJ blue) (NN pen))))"
REAL = ("(ROOT (S (NP (PRP She)) (VP (VBD did) (RB not) (VP (VB see) (NP (NP (DT the) (JJ 24-year) (JJ old) "
        "(NN motorcyclist)) (VP (VBG coming) (PP (IN from) (NP (NNP Nellingen))))))) (. .)))")


def T(s: str):
    return read_ptb(s)


# ------------------------------------------------------------------------------------------ STM


def test_stm_worked_example_exactly():
    r = stm(T(HYP_FIG2), [T(REF_FIG2)], depth=3)
    assert (r.matches, r.totals) == ((6, 3, 1), (7, 4, 2))
    assert r.fractions == (6 / 7, 3 / 4, 1 / 2)
    assert r.score == pytest.approx((6 / 7 + 3 / 4 + 1 / 2) / 3)
    assert round(r.score, 3) == 0.702
    # STM with maximum depth D = 1, 2, 3: the means of the first D fractions
    assert r.scores_by_depth == pytest.approx((6 / 7, (6 / 7 + 3 / 4) / 2, (6 / 7 + 3 / 4 + 1 / 2) / 3))


def test_stm_explain_names_the_matched_subtrees():
    ex = stm(T(HYP_FIG2), [T(REF_FIG2)], depth=3).explain()
    assert list(ex.columns) == ["depth", "item", "count", "ref_max", "clipped", "matched"]
    row = ex[(ex.depth == 1) & (ex.item == "PRON")].iloc[0]
    assert (row["count"], row["ref_max"], row["clipped"]) == (2, 1, 1)  # "its clipped count should be 1 rather than 2"
    d3 = ex[ex.depth == 3].set_index("item")["matched"].to_dict()
    assert d3 == {"(S (NP PRON) (VP V NP))": True, "(VP V (NP PRON))": False}
    assert ex.groupby("depth")["clipped"].sum().tolist() == [6, 3, 1]
    # the picture colours the depth-3 roots: S found (green), VP not found (red)
    svg = stm(T(HYP_FIG2), [T(REF_FIG2)], depth=3).draw(3).get_svg().tostring()
    assert svg.count("#1a9641") >= 1 and svg.count("#d7191c") == 1
    with pytest.raises(ValueError, match="nothing to draw"):
        hwcm(T(HYP_BLUE), [T(REF_PEN)]).draw(2)


def test_stm_clips_by_the_best_single_reference_not_the_sum():
    # two references with one PRON each: the ceiling is max(1, 1) = 1, not 2
    r = stm(T(HYP_FIG2), [T(REF_FIG2), T(REF_FIG2)], depth=3)
    assert r.matches == (6, 3, 1)
    # a reference with two PRONs raises the depth-1 ceiling to 2 and matches NP -> PRON twice
    r2 = stm(T(HYP_FIG2), [T(REF_FIG2), T("(S (NP (PRON We)) (VP (V saw) (NP (PRON it))))")], depth=3)
    assert r2.matches == (7, 4, 2)


def test_literal_mean_is_the_default_and_effective_order_the_variant():
    short = T("(NP (NN dog))")  # height 2: no depth-3 subtree
    ref = T("(S (NP (NN dog)) (VP (VBZ barks)))")
    # the paper's 1/D over d = 1..3: depths 1 (NP, NN: 2/2), 2 (NP -> NN: 1/1), 3 (none: a zero fraction)
    lit = stm(short, [ref], depth=3)
    assert lit.score == pytest.approx((1 + 1 + 0) / 3)
    assert lit.fractions[:2] == (1.0, 1.0) and math.isnan(lit.fractions[2])
    assert "eff:no" in lit.signature and "eff:no" in STM(3).signature()
    eff = STM(3, effective_order=True).sentence_score(short, [ref])
    assert eff.score == pytest.approx(1.0) and "eff:yes" in eff.signature  # depths 1, 2 only: 2/2 and 1/1
    # fractions below 1: depth 1 NP DT JJ NN against NP DT NN -> 3/4 (JJ unmatched); depth 2 NP -> DT JJ NN is
    # not in the reference -> 0/1; depth 3 absent. Literal (3/4 + 0 + 0) / 3, effective order (3/4 + 0) / 2.
    h2 = T("(NP (DT the) (JJ big) (NN dog))")
    r2 = T("(S (NP (DT the) (NN dog)) (VP (VBZ barks)))")
    assert stm(h2, [r2], depth=3).score == pytest.approx((3 / 4 + 0 + 0) / 3)
    assert stm(h2, [r2], depth=3, effective_order=True).score == pytest.approx((3 / 4 + 0) / 2)
    assert stm(h2, [r2], depth=3).scores_by_depth == pytest.approx((3 / 4, 3 / 8, 1 / 4))
    # HWCM: "I bark" against "I have a red pen": chains of length 1 I, bark -> 1/2; length 2 "bark I" -> 0, so
    # epsilon; length 3 none: a zero precision too, hence epsilon (the paper's replacement) in the literal mean
    hb = T("(S (NP (PRP I)) (VP (VBP bark)))")
    assert hwcm(hb, [T(REF_PEN)], length=3).score == pytest.approx((0.5 + EPSILON + EPSILON) / 3)
    assert hwcm(hb, [T(REF_PEN)], length=3, effective_order=True).score == pytest.approx((0.5 + EPSILON) / 2)


def test_primary_depth_is_fixed():
    from syneval_nb.metrics.syntactic import PRIMARY_DEPTH

    assert PRIMARY_DEPTH == 4  # chosen from Liu & Gildea's text (see its docstring), never from our data


# ------------------------------------------------------------------------------------------ TKM


def test_tkm_is_the_best_reference_cosine():
    h, r1, r2 = T(HYP_FIG2), T(REF_FIG2), T("(S (NP (PRON We)) (VP (V saw) (NP (PRON it))))")
    res = tkm(h, [r1, r2])
    assert res.cosines == pytest.approx((normalized_tree_kernel(h, r1), normalized_tree_kernel(h, r2)))
    # by hand (Collins & Duffy recursion, lam = 1), the paper's Figure 2 pair:
    # K(h, r): PRON->I 1, V->have 1, NP->PRON: (NP I, NP I) 1 + 1 = 2 and (NP it, NP I) 1 + 0 = 1,
    #   VP: (1 + C(V,V)) (1 + C(NP it, NP a-red-pen) = 0) = 2, S: (1 + 2)(1 + 2) = 9        -> 16
    # K(h, h): PRON->I 1, PRON->it 1, V 1, NP->PRON pairs 2 + 1 + 1 + 2 = 6, VP 2 * 3 = 6, S 3 * 7 = 21 -> 36
    # K(r, r): five preterminals 5, NP->PRON 2, NP->ART ADJ N 2^3 = 8, VP 2 * 9 = 18, S 3 * 19 = 57    -> 90
    assert res.cosines[0] == pytest.approx(16 / math.sqrt(36 * 90))
    assert res.score == max(res.cosines) and res.best_ref == 1
    ex = res.explain()
    assert ex["shared"].sum() > 0 and set(ex.columns) == {"node", "shared", "share"}
    assert tkm(h, [r1], lam=0.5).signature.startswith("TKM|lam:0.5")


# ------------------------------------------------------------------------------------------ dependency metrics


def test_hwcm_on_the_papers_dependency_example():
    # "I have a red pen": have(I, pen(a, red)); the 2-word chains are have I, have pen, pen a, pen red (section 2.1).
    # Hypothesis "I have a blue pen": 1-chains I have a blue pen -> 4/5; 2-chains have I, have pen, pen a, pen blue
    # -> 3/4; 3-chains have-pen-a, have-pen-blue -> 1/2.  HWCM(D=3) = (0.8 + 0.75 + 0.5) / 3.
    r = hwcm(T(HYP_BLUE), [T(REF_PEN)], length=3)
    assert (r.matches, r.totals) == ((4, 3, 1), (5, 4, 2))
    assert r.score == pytest.approx((0.8 + 0.75 + 0.5) / 3)
    ex = r.explain()
    assert set(ex[(ex.depth == 2) & ex.matched]["item"]) == {"have I", "have pen", "pen a"}


def test_hwcm_no_match_is_the_epsilon_floor():
    r = hwcm(T("(S (NP (NNS Dogs)) (VP (VBP bark)))"), [T(REF_PEN)], length=4)
    assert r.matches == (0, 0, 0, 0) and r.totals == (2, 1, 0, 0)
    assert r.score == EPSILON  # every existing length has precision 0 -> 1e-3
    assert HWCM(4, effective_order=False).sentence_score(T("(S (NP (NNS Dogs)) (VP (VBP bark)))"),
                                                          [T(REF_PEN)]).score == pytest.approx(EPSILON)
    # a partial match keeps the epsilon only where the precision is zero: (1/2 + 1e-3) / 2
    r2 = hwcm(T("(S (NP (PRP I)) (VP (VBP bark)))"), [T(REF_PEN)], length=2)
    assert r2.score == pytest.approx((0.5 + EPSILON) / 2)


def test_dstm_and_dtkm_on_dependency_trees():
    # dependency trees have(I, pen(a, blue)) and have(I, pen(a, red)); nodes are words.
    # depth 1: I have a blue pen -> 4/5; depth 2: have(I pen) yes, pen(a blue) no -> 1/2; depth 3: 0/1.
    r = dstm(T(HYP_BLUE), [T(REF_PEN)], depth=3)
    assert (r.matches, r.totals) == ((4, 1, 0), (5, 2, 1))
    assert r.score == pytest.approx((0.8 + 0.5 + 0.0) / 3)
    k = dtkm(T(HYP_BLUE), [T(REF_PEN)])
    # fragments shared: I, a (1 each); have -> I pen with I cut or expanded, pen cut: 2. K(h,r) = 4.
    # K(h,h): leaves I, a, blue: 3; pen -> a blue: 4; have -> I pen: 2 * (1 + 4) = 10 -> 17; same for r.
    assert k.score == pytest.approx(4 / 17)


def test_identity_scores_one_for_every_metric():
    t = T(REAL)
    # the tree has subtrees of depth 1..8 (STM), 1..6 (DSTM) and chains of length 1..6 (HWCM): with the
    # effective-order variant identity is 1.0 at every D; with the paper's literal mean (the default) the depths
    # beyond them are zero fractions (HWCM: epsilon), so identity is 1.0 only up to that height
    for depth in (1, 3, 9, 12):
        for f in (stm, dstm):
            assert f(t, [t], depth=depth, effective_order=True).score == pytest.approx(1.0)
        assert hwcm(t, [t], length=depth, effective_order=True).score == pytest.approx(1.0)
    for depth, n_stm, n_dep in ((1, 1, 1), (3, 3, 3), (9, 8, 6), (12, 8, 6)):
        assert stm(t, [t], depth=depth).score == pytest.approx(n_stm / depth)
        assert dstm(t, [t], depth=depth).score == pytest.approx(n_dep / depth)
        assert hwcm(t, [t], length=depth).score == pytest.approx((n_dep + (depth - n_dep) * EPSILON) / depth)
    assert tkm(t, [t]).score == pytest.approx(1.0)
    assert dtkm(t, [t]).score == pytest.approx(1.0)
    assert asiya_stm(t, [t]) == pytest.approx(1.0)
    assert asiya_hwcm(t, [t]) == pytest.approx(1.0)
    one = T("(INTJ (UH Yes))")  # a one-word dependency tree is a single leaf node
    for f in (stm, dstm, hwcm):
        assert f(one, [one], effective_order=True).score == pytest.approx(1.0)
    for f in (tkm, dtkm):
        assert f(one, [one]).score == pytest.approx(1.0)
    # literal mean, D = 4: STM has depths 1 (INTJ, UH) and 2 (INTJ -> UH) -> 2/4; the dependency tree is one
    # node: DSTM depth 1 only -> 1/4, HWCM length 1 only -> (1 + 3 epsilon) / 4
    assert stm(one, [one]).score == pytest.approx(2 / 4)
    assert dstm(one, [one]).score == pytest.approx(1 / 4)
    assert hwcm(one, [one]).score == pytest.approx((1 + 3 * EPSILON) / 4)


def test_asiya_variants_differ_from_the_paper():
    h, r = T(HYP_FIG2), T(REF_FIG2)
    # label chains of length <= 2. hyp: 7 labels + S-NP S-VP NP-PRON VP-V VP-NP NP-PRON = 13 chains;
    # ref: 9 labels + S-NP S-VP NP-PRON VP-V VP-NP NP-ART NP-ADJ NP-N = 17 chains.
    # sum min: labels S1 NP2 VP1 PRON1 V1 = 6; chains S-NP S-VP NP-PRON(1) VP-V VP-NP = 5 -> 11
    # sum max: 13 + 17 - 11 = 19 -> 11/19
    assert asiya_stm(h, [r], depth=2) == pytest.approx(11 / 19)
    assert asiya_hwcm(T(HYP_BLUE), [T(REF_PEN)], length=3) == pytest.approx((0.8 + 0.75 + 0.5) / 3)


def test_an_unparsed_hypothesis_gets_the_worst_value_an_unparsed_reference_set_nan():
    """Issue 24: an unparsed hypothesis is the metric's worst value (never NaN, never left out); only a segment
    without a parsed reference is NaN."""
    assert stm(None, [T(REF_FIG2)]).score == 0.0
    assert hwcm(None, [T(REF_FIG2)]).score == EPSILON
    assert tkm(None, [T(REF_FIG2)]).score == 0.0
    assert stm(None, [T(REF_FIG2)]).parts["totals"] == (1, 1, 1, 1)  # max(1, tokens) items, none matched
    assert math.isnan(hwcm(T(HYP_BLUE), [None]).score)
    assert stm(T(HYP_FIG2), [None, T(REF_FIG2)], depth=3).score == pytest.approx((6 / 7 + 3 / 4 + 1 / 2) / 3)
    assert stm(None, [T(REF_FIG2)]).explain().empty


def test_a_tree_without_words_is_unparsed_in_all_five_metrics():
    """Issue 13: ``Tree('S', [])`` scored STM 1.0 and TKM 0.0 while HWCM, DSTM and DTKM raised. A tree without
    words is an unparsed sentence everywhere, as ``(())`` is for the reader: as a hypothesis the worst value (issue
    24: 0, HWCM epsilon; never a perfect match), as a reference it is left out of the set (NaN without another)."""
    from nltk import Tree

    empty = Tree("S", [])
    for f in (stm, tkm, hwcm, dstm, dtkm):
        worst = EPSILON if f is hwcm else 0.0
        assert f(empty, [T(REF_FIG2)]).score == worst, f.__name__
        assert math.isnan(f(T(REF_FIG2), [empty]).score), f.__name__
        assert f(Tree("S", [Tree("NP", [])]), [T(REF_FIG2)]).score == worst, f.__name__
        kw = {"effective_order": True} if f in (stm, hwcm, dstm) else {}  # identity is 1.0 at any depth
        assert f(T(REF_FIG2), [empty, T(REF_FIG2)], **kw).score == 1.0, f.__name__
    df = score_corpus([empty, REF_FIG2], [[REF_FIG2], [empty, REF_FIG2]], max_depth=2)
    assert df["stm_2"][0] == 0.0 and df["dtkm"][0] == 0.0 and df["hwcm_2"][0] == EPSILON and df["hwcm_2"][1] == 1.0


def test_an_empty_constituent_in_a_tree_with_words_is_refused_by_all_five():
    from nltk import Tree

    bad = Tree("S", [Tree("NP", []), Tree("VP", [Tree("VBZ", ["runs"])])])
    for f in (stm, tkm, hwcm, dstm, dtkm):
        with pytest.raises(TreeFormatError, match="constituent 'NP' .* has no children"):
            f(bad, [T(REF_FIG2)])
        with pytest.raises(TreeFormatError, match="constituent 'NP' .* has no children"):
            f(T(REF_FIG2), [bad])


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="no references"):
        stm(T(HYP_FIG2), [])
    with pytest.raises(TypeError, match="list of trees"):
        stm(T(HYP_FIG2), T(REF_FIG2))
    with pytest.raises(ValueError, match="depth"):
        stm(T(HYP_FIG2), [T(REF_FIG2)], depth=0)
    for f in (asiya_stm, asiya_hwcm):  # a single tree would otherwise be read as the list of its children
        with pytest.raises(TypeError, match="list of trees"):
            f(T(HYP_FIG2), T(REF_FIG2))
        with pytest.raises(ValueError, match="no references"):
            f(T(HYP_FIG2), [])
    with pytest.raises(ValueError, match="depth"):
        asiya_stm(T(HYP_FIG2), [T(REF_FIG2)], depth=0)


# ------------------------------------------------------------------------------------------ corpus level


def test_score_corpus_columns_nan_and_reuse():
    hyps = [HYP_FIG2, "(())", HYP_BLUE, REF_PEN]
    refs = [[REF_FIG2], [REF_FIG2, REF_PEN], ["(())", REF_PEN], ["(())"]]
    with pytest.warns(UserWarning, match="1 segments without a parsed reference"):
        df = score_corpus(hyps, refs, max_depth=3)
    assert list(df.columns) == ["stm_1", "stm_2", "stm_3", "tkm", "hwcm_1", "hwcm_2", "hwcm_3",
                                "dstm_1", "dstm_2", "dstm_3", "dtkm"]
    assert df.loc[0, "stm_3"] == pytest.approx((6 / 7 + 3 / 4 + 1 / 2) / 3)
    assert df.loc[0, "stm_1"] == pytest.approx(6 / 7)
    assert df.loc[2, "hwcm_3"] == pytest.approx((0.8 + 0.75 + 0.5) / 3)
    assert df.loc[2, "dstm_3"] == pytest.approx((0.8 + 0.5) / 3)
    # the unparsed hypothesis (segment 1) counts with the worst value; segment 3 has no parsed reference: NaN
    assert df.iloc[1].to_dict() == {**{c: 0.0 for c in df.columns}, **{f"hwcm_{d}": EPSILON for d in (1, 2, 3)}}
    assert df.iloc[3].isna().all()
    assert (df.attrs["n_hyp_unparsed"], df.attrs["n_ref_unparsed"], df.attrs["n_no_reference"]) == (1, 2, 1)
    # corpus level = summed statistics. STM depth 1 over segments 0, 1 and 2: 6 of 7 labels, the unparsed
    # hypothesis's one unmatched item (no text given: max(1, 0 tokens)), then the 9 labels of "I have a blue pen"
    # (S NP PRP VP VBP NP DT JJ NN), all in "I have a red pen": (6 + 0 + 9) / (7 + 1 + 9)
    assert df.attrs["corpus"]["stm_1"] == pytest.approx((6 + 9) / (7 + 1 + 9))
    # depth 2: 3 of 4, 0 of 1, then the 4 depth-2 subtrees of segment 2 (S, NP, VP, NP), all found;
    # depth 3: 1 of 2, 0 of 1, then S and VP (height >= 3), both found
    corpus_stm_3 = ((6 + 9) / (7 + 1 + 9) + (3 + 4) / (4 + 1 + 4) + (1 + 2) / (2 + 1 + 2)) / 3
    assert df.attrs["corpus"]["stm_3"] == pytest.approx(corpus_stm_3)
    # with the hypotheses' texts, the unparsed one counts as its number of tokens (here 6) unmatched items
    texts = ["I have it", "a b c d e f", "I have a blue pen", "x"]
    with pytest.warns(UserWarning, match="1 segments without a parsed reference"):
        df6 = score_corpus(hyps, refs, max_depth=3, hyp_texts=texts)
    assert df6.attrs["corpus"]["stm_1"] == pytest.approx((6 + 9) / (7 + 6 + 9))
    corpus_stm_3 = ((6 + 9) / (7 + 9) + (3 + 4) / (4 + 4) + (1 + 2) / (2 + 2)) / 3
    # the metric object's corpus_score (nltk trees, its own loop) sums the same statistics
    assert STM(3).corpus_score([T(HYP_FIG2), T(HYP_BLUE)], [[T(REF_FIG2)], [T(REF_PEN)]]).score == pytest.approx(
        corpus_stm_3)



def test_score_corpus_takes_trees_as_well_as_strings():
    """nltk Trees and FlatTrees stand for parse strings (no printing and re-reading), a single tree is one reference,
    and the numbers are those of the strings."""
    from syneval_nb.trees import read_ptb_flat

    hyps = [HYP_FIG2, HYP_BLUE]
    refs = [[REF_FIG2], [REF_FIG2, REF_PEN]]
    want = score_corpus(hyps, refs, max_depth=3)
    got = score_corpus([T(h) for h in hyps], [T(REF_FIG2), [read_ptb_flat(REF_FIG2), T(REF_PEN)]], max_depth=3)
    pd.testing.assert_frame_equal(got, want)
    assert got.attrs["corpus"] == want.attrs["corpus"]
    assert got.loc[0, "stm_3"] == pytest.approx((6 / 7 + 3 / 4 + 1 / 2) / 3)

def test_score_corpus_missing_values_and_malformed_parses():
    df = score_corpus([float("nan"), "", HYP_FIG2], [[REF_FIG2]] * 3, metrics=("stm",), max_depth=3)
    assert df["stm_3"].tolist() == [0.0, 0.0, pytest.approx((6 / 7 + 3 / 4 + 1 / 2) / 3)]
    assert df.attrs["n_hyp_unparsed"] == 2
    # a missing reference (NaN in a DataFrame column) is one unparsed reference, not a crash
    with pytest.warns(UserWarning, match="1 segments without a parsed reference"):
        df = score_corpus([HYP_FIG2, HYP_FIG2], [float("nan"), REF_FIG2], metrics=("stm",), max_depth=3)
    assert df["stm_3"].isna().tolist() == [True, False] and df.attrs["n_ref_unparsed"] == 1
    with pytest.raises(TreeFormatError, match="segment 1, hypothesis"):
        score_corpus([HYP_FIG2, "(S (NP dog"], [[REF_FIG2]] * 2, metrics=("stm",), max_depth=3)


def test_references_are_built_once_and_shared():
    """The references are read once per reference set (kept by _references, shared by every metric, depth and
    system) and a system's hypotheses once for all the metrics scoring it."""
    from syneval_nb.metrics.syntactic import _references, clear_caches

    clear_caches()
    refs = [[REF_FIG2, REF_PEN]] * 3
    hyps = [HYP_FIG2, HYP_BLUE, REF_PEN]
    a = score_corpus(hyps, refs, metrics=("stm", "tkm"), max_depth=4)
    R = _references(refs)
    assert _references([list(r) for r in refs]) is R  # the same strings: the same References
    ceilings = [id(s.shape_ceiling(4, False)) for s in R.segments]
    parsed = R.hypotheses(hyps)
    b = score_corpus(hyps, refs, metrics=("stm", "tkm"), max_depth=4)
    assert [id(s.shape_ceiling(4, False)) for s in R.segments] == ceilings  # nothing recomputed
    assert R.hypotheses(list(hyps)) is parsed  # the hypotheses read once for both metrics and both calls
    pd.testing.assert_frame_equal(a, b)
    assert b.loc[2, "stm_4"] == 1.0 and b.loc[2, "tkm"] == pytest.approx(1.0)
    assert b.loc[0, "stm_3"] == pytest.approx((6 / 7 + 3 / 4 + 1 / 2) / 3)
    with pytest.raises(ValueError, match="1 hypothesis parses but 3 reference sets"):
        score_corpus([HYP_FIG2], refs)
    with pytest.raises(ValueError, match="unknown metrics"):
        score_corpus(hyps, refs, metrics=("bleu",))
    # tree objects are kept by identity: the same objects, the same References
    trees = [[T(REF_FIG2)], [T(REF_PEN)]]
    assert _references(trees) is _references([list(r) for r in trees])
    assert _references(trees) is not _references([[T(REF_FIG2)], [T(REF_PEN)]])


def test_scoring_makes_no_reference_cycles():
    import gc

    gc.collect()
    gc.disable()
    try:
        h, r = T(HYP_BLUE), T(REF_PEN)
        for f in (stm, dstm, hwcm, tkm, dtkm):
            f(h, [r]).score
        score_corpus([HYP_FIG2, HYP_BLUE], [[REF_FIG2, REF_PEN]] * 2, max_depth=4)
        del h, r
        assert gc.collect() == 0
    finally:
        gc.enable()


def test_depth_scores_treat_missing_orders_alike_for_bleu_and_stm():
    """depth_study.depth_scores passes effective_order to BLEU and to the syntactic metrics, so a comparison is like
    for like. "I have it" (3 words; S > VP > NP > PRON: subtrees of depth 1..4) against "I have a pen" (hand
    arithmetic): STM fractions 6/7, 3/4, 1/2, 0/1 and no depth-5 subtree; BLEU: p1 = 2/3, p2 = 1/2 ("I have"),
    p3 = 0 and no 4-gram, both epsilon (Liu & Gildea's 10^-3), brevity penalty exp(1 - 4/3)."""
    from syneval_nb.studies import depth_study

    hyp_ptb = "(S (NP (PRON I)) (VP (V have) (NP (PRON it))))"
    ref_ptb = "(S (NP (PRON I)) (VP (V have) (NP (ART a) (N pen))))"
    bp, eps = math.exp(1 - 4 / 3), EPSILON
    args = (["I have it"], [["I have a pen"]], [hyp_ptb], [[ref_ptb]], ["s1"])
    lit, _ = depth_study.depth_scores(*args, max_depth=5, syntactic_metrics=("stm",), progress=False)
    eff, _ = depth_study.depth_scores(*args, max_depth=5, syntactic_metrics=("stm",), progress=False,
                                      effective_order=True)
    assert lit[("STM", 5)][0] == pytest.approx((6 / 7 + 3 / 4 + 1 / 2 + 0 + 0) / 5)
    assert eff[("STM", 5)][0] == pytest.approx((6 / 7 + 3 / 4 + 1 / 2 + 0) / 4)
    assert lit[("BLEU", 4)][0] == pytest.approx(bp * (2 / 3 * 1 / 2 * eps * eps) ** (1 / 4))
    assert eff[("BLEU", 4)][0] == pytest.approx(bp * (2 / 3 * 1 / 2 * eps) ** (1 / 3))
    assert lit[("STM", 4)][0] == eff[("STM", 4)][0]  # every depth up to 4 exists: the two agree
