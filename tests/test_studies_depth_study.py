"""studies.common and studies.depth_study on a small real sample (8 TED source segments x 13 systems, 8 WMT21
lines x 19 systems), values recomputed with scipy / numpy from the scores the study returns."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy.stats import pearsonr

from syneval_nb import stats
from syneval_nb.stats import meta
from syneval_nb.studies import common, depth_display, depth_study as ds


@pytest.fixture(scope="module")
def ch(shared_data):
    return ds.run_chapter(("STM", "TKM"), shared_data, sample=8, seed=0, n_resamples=200, progress=False)


def test_load_ted_reference_and_permutation(shared_data):
    a = common.load_ted(shared_data, sample=8, seed=0)
    p = common.load_ted(shared_data, sample=8, seed=0, permute_human=3)
    assert len(a) == 104 and a["seg_id"].nunique() == 8 and (a["reference"] == a["refB"]).all()
    assert (a["target"] == p["target"]).all()
    # one permutation for every MQM column: the (mqm, mqm_z, mqm_fluency_z) triples are the same multiset
    key = ["mqm", "mqm_z", "mqm_fluency_z"]
    assert sorted(map(tuple, a[key].to_numpy())) == sorted(map(tuple, p[key].to_numpy()))
    assert not np.array_equal(a["mqm"].to_numpy(), p["mqm"].to_numpy())
    with pytest.raises(ValueError, match="permute_human"):
        common.load_ted(shared_data, sample=8, permute_human="1")
    with pytest.raises(ValueError, match="reference"):
        common.load_ted(shared_data, sample=8, reference="refC")


def test_load_deen_permutes_across_systems(shared_data):
    d = common.load_deen(shared_data, sample=8, seed=0)
    p = common.load_deen(shared_data, sample=8, seed=0, permute_human=1)
    assert len(d.da) == 19 and "ref-B" not in d.da.index and d.references == ("ref_A",)
    assert sorted(d.da) == sorted(p.da) and not np.array_equal(d.da.to_numpy(), p.da.to_numpy())


def test_headline_r_and_contrast_recomputed(ch):
    lit = ch.literal
    assert lit.dropped == 0 and len(lit.frame) == 104
    h = ch.heads[("MQM z", "pearson")]
    r = pearsonr(lit.segment[("STM", 4)], lit.frame["mqm_z"])[0]
    assert stats.table_row(h, "STM-4")["r"] == pytest.approx(r, abs=1e-12)
    assert r == pytest.approx(0.1303, abs=1e-4)  # measured on this sample
    # the contrast against chrF's: difference of differences of scipy correlations, the same resamples in both
    f, a = lit.frame["mqm_fluency_z"], lit.frame["mqm_accuracy_z"]
    s, b = lit.segment[("STM", 4)], lit.segment[("chrF", None)]
    want = (pearsonr(s, f)[0] - pearsonr(b, f)[0]) - (pearsonr(s, a)[0] - pearsonr(b, a)[0])
    v = ch.verdicts["STM-4's edge over chrF is larger on Fluency than on Accuracy (z)"]
    assert v["statistic"] == pytest.approx(want, abs=1e-12) and v["test"] == "difference"
    bf = ch.heads[("Fluency z", "pearson")].attrs["bootstrap"]
    ba = ch.heads[("Accuracy z", "pearson")].attrs["bootstrap"]
    d = (bf.column("STM-4") - bf.column("chrF")) - (ba.column("STM-4") - ba.column("chrF"))
    assert v["ci"] == pytest.approx(list(np.percentile(d, [2.5, 97.5])), abs=1e-12)
    assert v["p"] == pytest.approx(((d <= 0).sum() + 1) / (len(d) + 1))
    # beyond length: the partial r given the length model of the 13a lengths (its spline space built
    # independently), by numpy lstsq + scipy
    from notebook_checks._length_model import flexible_design
    from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a
    tok = Tokenizer13a()
    n = lambda x: len(tok(x.rstrip()).split())  # noqa: E731
    z = np.column_stack([np.ones(len(lit.frame)), flexible_design([n(x) for x in lit.frame["target"]],
                                                                  [n(x) for x in lit.frame["reference"]])])
    res = lambda y: y - z @ np.linalg.lstsq(z, y, rcond=None)[0]  # noqa: E731
    want = pearsonr(res(lit.segment[("STM", 4)]), res(lit.frame["mqm_z"].to_numpy()))[0]
    pv = ch.verdicts["STM-4 correlates with MQM z beyond length"]
    assert pv["statistic"] == pytest.approx(want, abs=1e-10) and pv["test"] == "correlates beyond length"
    assert stats.table_row(ch.heads[("MQM z", "partial")], "STM-4")["r"] == pytest.approx(want, abs=1e-10)


def test_within_column_and_curves(ch):
    lit = ch.literal
    w = ch.heads[("MQM z", "within")]
    seg = lit.frame["seg_id"].to_numpy()
    cm = lambda x: x - pd_group_mean(x, seg)  # noqa: E731
    r = pearsonr(cm(lit.segment[("STM", 4)]), cm(lit.frame["mqm_z"].to_numpy()))[0]
    assert stats.table_row(w, "STM-4")["r"] == pytest.approx(r, abs=1e-10)
    lit_c, eff_c = ch.curves["literal mean"], ch.curves["effective order"]
    # depth 1 is the same under both definitions; deeper it is not
    r1 = stats.table_row(lit_c, "STM-1", human="MQM z")["r"]
    assert r1 == stats.table_row(eff_c, "STM-1", human="MQM z")["r"]
    assert stats.table_row(lit_c, "STM-9", human="MQM z")["r"] != stats.table_row(eff_c, "STM-9", human="MQM z")["r"]
    assert stats.table_row(lit_c, "STM-3", human="MQM z")["baseline"] == "BLEU-3"


def pd_group_mean(x, g):
    x = np.asarray(x, dtype=float)
    out = np.empty_like(x)
    for s in np.unique(g):
        out[g == s] = x[g == s].mean()
    return out


def test_system_level_and_stability(ch):
    c = ch.deen_scores.corpus.loc[ch.deen.da.index]
    r = pearsonr(c[("BLEU", 4)], ch.deen.da)[0]
    assert stats.table_row(ch.system_head, "BLEU-4")["r"] == pytest.approx(r, abs=1e-12)
    assert list(ch.system_head["metric"]) == ["BLEU-4", "chrF", "STM-4", "TKM", "TKM λ=0.4", "-hyp length",
                                              "-ref length", "-|len diff|", "len ratio"]
    # the permutation null: Monte-Carlo p = (k + 1) / (1,000 + 1), k permutations of DA z with r >= r(STM-4)
    pv = ch.verdicts["STM-4 beats permuted human scores at system level (WMT21 de-en DA z, ref A)"]
    x = c[("STM", 4)].to_numpy(dtype=float)
    rng = np.random.default_rng(np.random.SeedSequence([0, 0x7065726D, 1]))
    hs = ch.deen.da.to_numpy()
    perm = np.array([pearsonr(x, hs[rng.permutation(len(hs))])[0] for _ in range(stats.N_NULL)])
    assert pv["p"] == pytest.approx(((perm >= pearsonr(x, hs)[0]).sum() + 1) / (len(perm) + 1))
    from syneval_nb.studies import correlation_studies as cs  # 08's stability claim, decided by the one engine

    claim = next(c for c in cs.claims(["STM"]) if c.claim == cs.stability_claim("STM", 9))
    v = claim.decide({"curves": ch.curves["literal mean"]}, 0.05)
    lit = ch.literal
    pr = lambda k: pearsonr(lit.segment[k], lit.frame["mqm_z"])[0]  # noqa: E731
    want = (pr(("STM", 9)) - pr(("STM", 1))) - (pr(("BLEU", 9)) - pr(("BLEU", 1)))
    assert v["statistic"] == pytest.approx(want, abs=1e-12)
    # the one difference-of-differences verdict (stats.verdict_contrast; the claim test 'loses less')
    assert v["statistic_text"] == "[r(STM-9) - r(STM-1)] - [r(BLEU-9) - r(BLEU-1)]" and v["test"] == "difference"


def test_verdict_keys_and_permuted_run(shared_data, ch):
    beats = [f"beats {b} {w}" for b in ("chrF", "BLEU-4") for w in (
        "(MQM z, Pearson)", "beyond length (MQM z, partial r given the length model)",
        "within source segments (MQM z)", "at system level (WMT21 de-en DA z, ref A)")]
    rows = ("STM-4", "TKM", "TKM λ=0.4")  # the kernel at Moschitti's decay gets the same verdicts (named variant)
    assert set(ch.verdicts) == {
        f"{m} {c}" for m in rows for c in beats + [
            "correlates with MQM z", "correlates with MQM z beyond length", "beats the placebo (MQM z)",
            "beats permuted human scores at system level (WMT21 de-en DA z, ref A)"]} | {
        f"{m}'s edge over chrF is larger on Fluency than on Accuracy (z)" for m in rows} | {
        f"{m}'s edge over chrF is larger on Fluency than on Accuracy beyond length (z, partial r given the length model)"
        for m in ("TKM", "TKM λ=0.4")}
    # 8 source segments (5 talks) is below the cluster floor of 20 units: every verdict is exploratory, none in
    # the Holm family (13 per row, 2 talks variants per row)
    allv = {**ch.verdicts, **ch.variants}
    assert len(allv) == 3 * 13 + 2 + 3 * 2 and {v["family_size"] for v in allv.values()} == {0}
    assert {v["verdict"] for v in allv.values()} == {"exploratory"} and {v["n_units"] for v in allv.values()} <= {5, 8, 19}
    p = ds.run_chapter(("STM", "TKM"), shared_data, sample=8, seed=0, n_resamples=200, progress=False,
                       permute_human=1)
    assert common.no_holds({**p.verdicts, **p.variants}) == []
    with pytest.raises(ValueError, match="PRIMARY_DEPTH"):
        ds.run_chapter(("STM",), shared_data, sample=8, max_depth=3)


def test_the_claims_are_records_the_engine_decides(ch):
    """The chapter's verdicts are its claim list decided by stats.decide_claims on its tables: one record per
    claim, the primary ones marked (Holm runs over those), the talks variants apart."""
    cl = ds.claims(ch.families, kernel_variants=["TKM λ=0.4"], length_contrast=True)
    assert [c.claim for c in cl if c.primary] == ds.primary_claims(ch.families) == [
        "STM-4 beats chrF (MQM z, Pearson)", "STM-4 beats chrF beyond length (MQM z, partial r given the length model)",
        "TKM beats chrF (MQM z, Pearson)", "TKM beats chrF beyond length (MQM z, partial r given the length model)"]
    c = next(c for c in cl if c.claim == "STM-4 beats BLEU-4 within source segments (MQM z)")
    assert (c.test, c.metric, c.baseline, c.on, c.primary, c.variant) == (
        "beats", "STM-4", "BLEU-4", ("MQM z", "within"), False, False)
    assert [c.claim for c in cl if c.variant] == list(ch.variants)
    assert [c.claim for c in cl if not c.variant] == list(ch.verdicts)
    again = stats.decide_claims(cl, {**ch.heads, "system": ch.system_head})
    both = {**ch.verdicts, **ch.variants}
    assert json.dumps(common.verdicts_json(again), sort_keys=True) == json.dumps(common.verdicts_json(both),
                                                                              sort_keys=True)


# moved from tests/test_discourse.py with combine.depth_scores
def test_depth_scores_by_hand():
    """Liu & Gildea's STM example (Sec. 2: depth 3 = (6/7 + 3/4 + 1/2) / 3), BLEU_1 and the controls by hand."""
    hyp_ptb = "(S (NP (PRON I)) (VP (V have) (NP (PRON it))))"
    ref_ptb = "(S (NP (PRON I)) (VP (V have) (NP (ART a) (N pen))))"
    seg, corpus = ds.depth_scores(["I have it"] * 2, [["I have a pen"]] * 2, [hyp_ptb] * 2, [[ref_ptb]] * 2,
                                  ["s1", "s2"], max_depth=3, progress=False)
    stm3 = (6 / 7 + 3 / 4 + 1 / 2) / 3
    assert seg[("STM", 3)].tolist() == pytest.approx([stm3, stm3])
    # BLEU_1: unigram precision 2/3 (I, have) times the brevity penalty exp(1 - 4/3)
    assert seg[("BLEU", 1)].tolist() == pytest.approx([2 / 3 * math.exp(-1 / 3)] * 2)
    assert seg[("-|len diff|", None)].tolist() == [-1.0, -1.0] and seg[("len ratio", None)].tolist() == [0.75, 0.75]
    assert seg[("-hyp length", None)].tolist() == [-3.0, -3.0] and seg[("-ref length", None)].tolist() == [-4.0, -4.0]
    assert seg[("log ref length", None)].tolist() == pytest.approx([math.log(5)] * 2)
    assert ("TKM", None) in seg and ("HWCM", 3) in seg and ("DSTM", 1) in seg
    # one segment per system: each corpus score is that segment's score
    assert list(corpus.index) == ["s1", "s2"]
    assert corpus.loc["s1", ("STM", 3)] == pytest.approx(stm3)
    assert corpus.loc["s2", ("BLEU", 1)] == pytest.approx(2 / 3 * math.exp(-1 / 3))
    assert ("HWCM", 3) in seg and ("DTKM", None) in seg and ("BLEU", 3) in seg and ("chrF", None) in seg
    # the kernel decay reaches TKM: the sentence-level tkm() at lam = 0.5, not the lam = 1 score above
    seg_half, _ = ds.depth_scores(["I have it"], [["I have a pen"]], [hyp_ptb], [[ref_ptb]], ["s1"], max_depth=1,
                                  syntactic_metrics=("tkm",), progress=False, lam=0.5)
    from syneval_nb.metrics import syntactic
    from syneval_nb.trees import read_ptb
    want = syntactic.tkm(read_ptb(hyp_ptb), [read_ptb(ref_ptb)], lam=0.5).score
    assert seg_half[("TKM", None)].tolist() == pytest.approx([want])
    assert want != pytest.approx(seg[("TKM", None)][0])
    with pytest.raises(ValueError, match="1, 2, 2, 2, 2 entries"):
        ds.depth_scores(["x"], [["y"]] * 2, ["(S x)"] * 2, [["(S y)"]] * 2, ["a", "a"])


def test_meta_evaluation_beside_pearson(ch):
    """The WMT meta-evaluation table: item-grouped r recomputed with scipy per source segment; SPA and acc_eq in
    range; the permutation p-values against chrF for every other row."""
    lit = ch.literal
    m = ch.meta
    assert list(m.index) == ["BLEU-4", "chrF", "STM-4", "TKM"]
    f = lit.frame.assign(x=lit.segment[("STM", 4)])
    want = np.mean([pearsonr(g["x"], g["mqm_z"])[0] for _, g in f.groupby("seg_id")
                    if g["x"].nunique() > 1 and g["mqm_z"].nunique() > 1])
    assert m.loc["STM-4", "item_r"] == pytest.approx(want, abs=1e-12)
    assert m["acc_eq"].between(0, 1).all() and m["spa"].between(0, 1).all()
    assert np.isnan(m.loc["chrF", "spa_p"]) and np.isnan(m.loc["chrF", "acc_eq_p"])
    # the p against the baseline: (k + 1) / (B + 1) of mtme's PERM-BOTH test, k of its B resamples reaching the
    # observed difference, counted here from the test's own resamples (its p_value is mtme's k / B, here 0)
    h, items = lit.frame["mqm_z"].to_numpy(dtype=float), lit.frame["seg_id"].to_numpy()
    stm, chrf = lit.segment[("STM", 4)], lit.segment[("chrF", None)]
    r = meta.permutation_test_acc_eq(stm, chrf, h, items, k=200, random_state=0, block_size=100)
    reached = int(np.count_nonzero(r.resampled[:, 0] - r.resampled[:, 1] >= r.delta))
    assert (reached, r.k_used, r.p_value) == (0, 100, 0.0)  # stopped early at 100: mtme's p < 0.02
    t = common.meta_table({("STM", 4): stm, ("chrF", None): chrf}, lit.frame, baseline="STM-4", k=200, seed=0)
    assert t.loc["chrF", "acc_eq_p"] == (reached + 1) / (r.k_used + 1) == 1 / 101
    f = lit.frame.assign(stm=stm, chrf=chrf)  # the SPA test on the (systems x segments) matrices, recounted
    mat = lambda c: f.pivot(index="system", columns="seg_id", values=c).to_numpy(dtype=float)  # noqa: E731
    rs = meta.permutation_test_spa(mat("stm"), mat("chrf"), mat("mqm_z"), k=200, random_state=0, block_size=100)
    reached = int(np.count_nonzero(rs.resampled[:, 0] - rs.resampled[:, 1] >= rs.delta))
    assert t.loc["chrF", "spa_p"] == (reached + 1) / (rs.k_used + 1) == 19 / 201

def test_kernel_variant_and_length_diagnosis(shared_data, ch):
    """TKM at Moschitti's decay is TKM(lam=0.4) on the same trees; the length diagnosis recomputed with scipy's
    Kendall tau, numpy lstsq + pearsonr, and the verdict contrast on the partial tables."""
    from scipy.stats import kendalltau

    from syneval_nb.metrics import syntactic
    from syneval_nb.trees.ptb import read_ptb

    lit = ch.literal
    assert lit.kernel_variants == [("TKM λ=0.4", None)] and ch.params["kernel_lams"] == [0.4]
    for i in (0, 17, 60):
        row = lit.frame.iloc[i]
        want = syntactic.tkm(read_ptb(row["ptb"]), [read_ptb(row["ptb_reference"])], lam=0.4).score
        assert lit.segment[("TKM λ=0.4", None)][i] == pytest.approx(want, abs=1e-12)
        assert lit.segment[("TKM", None)][i] == pytest.approx(
            syntactic.tkm(read_ptb(row["ptb"]), [read_ptb(row["ptb_reference"])]).score, abs=1e-12)
    d = ch.length
    assert list(d.index) == ["TKM", "TKM λ=0.4", "chrF", "BLEU-4"]
    hyp, ref = lit.segment[("log hyp length", None)], lit.segment[("log ref length", None)]
    tkm = lit.segment[("TKM", None)]
    assert d.loc["TKM", "tau_hyp"] == pytest.approx(kendalltau(tkm, hyp)[0], abs=1e-12)
    assert d.loc["TKM", "tau_ref"] == pytest.approx(kendalltau(tkm, ref)[0], abs=1e-12)
    assert d.loc["TKM", "tau_hyp"] == pytest.approx(-0.5768, abs=1e-4)  # measured on this sample: TKM is length
    assert d.loc["TKM", "tau_hyp_low"] < d.loc["TKM", "tau_hyp"] < d.loc["TKM", "tau_hyp_high"]
    assert d.loc["TKM", "median"] == pytest.approx(float(np.median(tkm)))
    assert d.loc["TKM", "share_tiny"] == pytest.approx(float((tkm < 1e-4).mean()))
    # the partial r given the length model (its spline space built independently), by numpy lstsq + scipy; the
    # same number as the headline table
    from notebook_checks._length_model import flexible_design

    z = np.column_stack([np.ones(len(hyp)), flexible_design(np.expm1(hyp), np.expm1(ref))])
    res = lambda y: y - z @ np.linalg.lstsq(z, y, rcond=None)[0]  # noqa: E731
    for m, k in (("TKM", ("TKM", None)), ("TKM λ=0.4", ("TKM λ=0.4", None))):
        want = pearsonr(res(lit.segment[k]), res(lit.frame["mqm_z"].to_numpy()))[0]
        assert d.loc[m, "partial"] == pytest.approx(want, abs=1e-10)
    # the Fluency contrast beyond length: difference of differences of partial r's (numpy + scipy)
    pr = lambda k, col: pearsonr(res(lit.segment[k]), res(lit.frame[col].to_numpy()))[0]  # noqa: E731
    c = ("chrF", None)
    want = (pr(("TKM", None), "mqm_fluency_z") - pr(c, "mqm_fluency_z")) - \
        (pr(("TKM", None), "mqm_accuracy_z") - pr(c, "mqm_accuracy_z"))
    assert d.loc["TKM", "fluency_beyond"] == pytest.approx(want, abs=1e-10)
    v = ch.verdicts["TKM's edge over chrF is larger on Fluency than on Accuracy beyond length (z, partial r given the "
                    "length model)"]
    assert v["statistic"] == d.loc["TKM", "fluency_beyond"] and v["ci"] == [d.loc["TKM", "fluency_beyond_low"],
                                                                            d.loc["TKM", "fluency_beyond_high"]]
    assert np.isnan(d.loc["chrF", "fluency"])
    # the sentences are formatted from these numbers; the verdict on the contrast follows its interval
    text = depth_display.length_diagnosis_text(d)
    assert f"{d.loc['TKM', 'tau_hyp']:+.3f}" in text and f"{d.loc['TKM λ=0.4', 'partial']:+.3f}" in text
    assert "**TKM** (λ = 1) is largely an inverse-length score" in text
    lo, hi = d.loc["TKM", "fluency_beyond_low"], d.loc["TKM", "fluency_beyond_high"]
    want_word = "survives removing length" if lo > 0 else "reverses" if hi < 0 else "not distinguishable from 0"
    assert want_word in text.split("**TKM λ=0.4**")[0]
    shown = depth_display.length_diagnosis_display(d)
    assert shown.loc["TKM", "τ with hyp length"].startswith(f"{d.loc['TKM', 'tau_hyp']:+.3f} [")
    # a chapter without kernel variants: the plain-named rows only, no verdicts added (chapter 04's family)
    q = ds.run_chapter(("STM", "TKM"), shared_data, sample=8, seed=0, n_resamples=50, progress=False, kernel_lams=(),
                       kernel_verdicts=False)
    assert list(q.length.index) == ["TKM", "chrF", "BLEU-4"] and not any("λ" in k for k in q.verdicts)
    assert len(q.verdicts) == 2 * 13


def test_depth_scores_count_an_unparsed_hypothesis_as_its_tokens_like_the_registry():
    """depth_scores passes the hypotheses' texts to the syntactic scoring, so an unparsed hypothesis is no match out
    of its number of tokens per depth, as metrics.get("STM-3") counts it (the worked example of test_syntactic:
    depth 1 over "I have it" (6 of 7 labels), an unparsed 6-word hypothesis and "I have a blue pen" (9 of 9))."""
    from syneval_nb.metrics import Corpus, get

    fig2_hyp = "(S (NP (PRON I)) (VP (V have) (NP (PRON it))))"
    fig2_ref = "(S (NP (PRON I)) (VP (V have) (NP (ART a) (ADJ red) (N pen))))"
    pen_ref = "(S (NP (PRP I)) (VP (VBP have) (NP (DT a) (JJ red) (NN pen))))"
    blue = "(S (NP (PRP I)) (VP (VBP have) (NP (DT a) (JJ blue) (NN pen))))"
    texts = ["I have it", "a b c d e f", "I have a blue pen"]
    refs = [["I have a red pen"]] * 3
    ptb, ptb_refs = [fig2_hyp, "(())", blue], [[fig2_ref], [fig2_ref], [pen_ref]]
    _, corpus = ds.depth_scores(texts, refs, ptb, ptb_refs, ["s"] * 3, max_depth=3, syntactic_metrics=("stm",),
                                progress=False)
    assert corpus.loc["s", ("STM", 1)] == pytest.approx((6 + 9) / (7 + 6 + 9), abs=1e-15)
    registry = get("STM-3").corpus_score(Corpus(texts, refs, hyp_ptb=ptb, ref_ptb=ptb_refs)).score
    assert corpus.loc["s", ("STM", 3)] == pytest.approx(registry, abs=1e-15)
    assert registry == pytest.approx(((6 + 9) / (7 + 6 + 9) + (3 + 4) / (4 + 6 + 4) + (1 + 2) / (2 + 6 + 2)) / 3)
