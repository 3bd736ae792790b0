"""Tests of syneval_nb.studies.learned_metric (notebook 05's study code) on hand examples and small real samples."""
from __future__ import annotations

import logging
import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import pearsonr

from syneval_nb import stats
from syneval_nb.metrics.learned import LearnedMetric
from syneval_nb.studies import learned_metric as S


# --------------------------------------------------------------------------------------------- moved helpers


def test_grid_meta_correlation_hand_example():
    # acc 0.5, 0.6, 0.7, 0.8 and r 0.1, 0.2, 0.2, 0.5: deviations from the means (0.65, 0.25) are
    # acc -0.15, -0.05, 0.05, 0.15 and r -0.15, -0.05, -0.05, 0.25;
    # sum of products 0.0225 + 0.0025 - 0.0025 + 0.0375 = 0.06; sums of squares 0.05 and 0.09;
    # meta r = 0.06 / sqrt(0.05 * 0.09) = 0.894427 (= 2/sqrt(5))
    table = pd.DataFrame({"C": [1.0, 1.0, 50.0, 50.0], "sigma": [1.0, 10.0, 1.0, 10.0],
                          "acc": [0.5, 0.6, 0.7, 0.8], "r": [0.1, 0.2, 0.2, 0.5]})
    best = LearnedMetric(C=50.0, sigma=1.0)
    m = S.grid_meta_correlation(table, best)
    assert m["meta_r"] == pytest.approx(2 / math.sqrt(5))
    z = math.atanh(2 / math.sqrt(5))  # Fisher z interval, n = 4: tanh(z -+ 1.959964 / sqrt(1))
    assert (m["ci_low"], m["ci_high"]) == (pytest.approx(math.tanh(z - 1.959964)), pytest.approx(math.tanh(z + 1.959964)))
    assert (m["n_grid"], m["r_selected"], m["r_best_in_grid"]) == (4, 0.2, 0.5)
    assert math.isnan(S.grid_meta_correlation(table.assign(acc=0.6), best)["meta_r"])
    with pytest.raises(ValueError, match="not a row"):
        S.grid_meta_correlation(table, LearnedMetric(C=5.0, sigma=1.0))


def test_system_means():
    rows = pd.DataFrame({"system": ["b", "a", "b", "a"], "seg_id": [1, 1, 2, 2]})
    sm = S.system_means(rows, {"m": [1.0, 2.0, 3.0, 6.0]})
    assert sm.loc["a", "m"] == 4.0 and sm.loc["b", "m"] == 2.0  # (2+6)/2, (1+3)/2


def test_length_model_hand():
    # 13a tokens: "a b c ." = 4 vs "a b" = 2 -> -2; "x y" vs "x y z" -> -1; equal lengths -> 0
    rows = pd.DataFrame({"hyp": ["a b c.", "x y", "p q"], "ref": ["a b", "x y z", "r s"]})
    controls, given = S.length_model(rows)
    assert controls["-|len diff|"].tolist() == [-2.0, -1.0, 0.0]
    assert controls["-hyp length"].tolist() == [-4.0, -2.0, -2.0] and controls["-ref length"].tolist() == [-2, -3, -2]
    assert given["log hyp length"] == pytest.approx(np.log1p([4, 2, 2]))


def test_premise_hand_example():
    # two segments: refB minus the MT mean is (1 - 0) = 1 and (5 - 2) = 3 -> statistic 2; every resample of the
    # two differences has a mean in {1, 2, 3} > 0, so p = (0 + 1) / (200 + 1) and the interval is above 0
    ted = pd.DataFrame({"seg_id": [1, 1, 1, 2, 2, 2], "system": ["refB", "m1", "m2"] * 2,
                        "is_human": [True, False, False] * 2, "mqm_z": [1.0, -1.0, 1.0, 5.0, 2.0, 2.0]})
    v = S.premise(ted, "refB", n_resamples=200)
    assert v["statistic"] == 2.0 and v["p"] == 1 / 201 and v["ci"][0] >= 1.0 and v["verdict"] == "holds"
    assert v["n_segments"] == 2 and v["share_segments_human_better"] == 1.0
    worse = ted.assign(mqm_z=[-3.0, 0.0, 0.0, -1.0, 0.0, 0.0])
    w = S.premise(worse, "refB", n_resamples=200)
    assert w["statistic"] == -2.0 and w["ci"][1] <= -1.0 and w["verdict"] == "does not hold"
    with pytest.raises(ValueError, match="no rated rows"):
        S.premise(ted, "refA")


def test_human_ceiling_counts_raters():
    t = pd.DataFrame({"mqm": [1.0, 2.0, np.nan, 3.0], "rater": ["r1", "r1,r2", "r3", "r2"]})
    hc = S.human_ceiling(t)
    assert hc["raters_per_item"] == {1: 2, 2: 1} and hc["available"] and hc["max_raters"] == 2
    one = S.human_ceiling(t.iloc[[0, 3]])
    assert one["available"] is False and "unavailable" in one["text"]


# --------------------------------------------------------------------------------------------- real data


def test_load_permutes_every_human_score_consistently(shared_data):
    plain = S.load(shared_data)
    perm = S.load(shared_data, permute_human=1)
    rated = plain.ted["mqm"].notna()
    assert int(rated.sum()) == 7935 and (perm.ted["mqm"].notna() == rated).all()
    # one permutation for every MQM column: the (mqm, mqm_z) pairs are the same multiset, in another order
    a = plain.ted.loc[rated, ["mqm", "mqm_z"]].sort_values(["mqm", "mqm_z"]).to_numpy()
    b = perm.ted.loc[rated, ["mqm", "mqm_z"]].sort_values(["mqm", "mqm_z"]).to_numpy()
    assert np.array_equal(a, b)
    assert not np.array_equal(plain.ted.loc[rated, "mqm"].to_numpy(), perm.ted.loc[rated, "mqm"].to_numpy())
    assert sorted(plain.da) == sorted(perm.da) and not plain.da.equals(perm.da) and len(plain.da) == 20
    with pytest.raises(ValueError, match="permute_human"):
        S.load(shared_data, permute_human="yes")


def test_baseline_scores_bleu_is_sacrebleu(shared_data):
    import sacrebleu

    logging.getLogger("sacrebleu").setLevel(logging.ERROR)
    d = S.load(shared_data)
    pool = S.build_pools(d, sample=5, seed=0)["TED"]
    base = S.baseline_scores(pool, progress=False)
    assert list(base.columns) == ["WER", "PER", "F-measure", "BLEU", "chrF"] and len(base) == 5 * 14
    want = [sacrebleu.sentence_chrf(h, [r]).score / 100 for h, r in zip(pool["hyp"], pool["ref"])]
    assert base["chrF"].to_numpy() == pytest.approx(want, abs=1e-12)
    bleu = sacrebleu.metrics.BLEU(effective_order=False)
    want = [bleu.sentence_score(h, [r]).score / 100 for h, r in zip(pool["hyp"], pool["ref"])]
    assert base["BLEU"].to_numpy() == pytest.approx(want, abs=1e-12)
    assert (base["WER"] <= 0).all() and (base["PER"] <= 0).all()


@pytest.fixture(scope="module")
def chapter(shared_data):
    return S.run_chapter(shared_data, sample=40, grid="small", syntax=False, run_swapped=False, n_resamples=100,
                         progress=False)


def test_chapter_tables_recomputed(chapter):
    ch = chapter
    rows = ch.ted_test
    assert len(rows) == 12 * 13 and rows["seg_id"].nunique() == 12  # round(0.3 * 40) = 12 test sources
    z = ch.seg_table[ch.seg_table["human"] == "MQM z"].set_index("metric")
    raw = ch.seg_table[ch.seg_table["human"] == "MQM"].set_index("metric")
    for m in ("BLEU", S.SVM_TED, "WER count (K&S feature)"):
        assert z.loc[m, "r"] == pytest.approx(pearsonr(ch.seg_scores[m], rows["mqm_z"])[0], abs=1e-12)
        assert raw.loc[m, "r"] == pytest.approx(pearsonr(ch.seg_scores[m], rows["mqm"])[0], abs=1e-12)
    # the WER count feature, recomputed as the negated feature column
    assert np.array_equal(ch.seg_scores["WER count (K&S feature)"], -ch.exps["TED"].X["test"]["wer"].to_numpy())
    assert z.loc["BLEU", "r"] == pytest.approx(0.088527, abs=1e-5)  # measured
    assert z.loc[S.SVM_TED, "baseline"] == "BLEU" and z.loc[S.SVM_TED, "n_clusters"] == 12
    assert z.loc[S.SVM_TED, "delta"] == pytest.approx(z.loc[S.SVM_TED, "r"] - z.loc["BLEU", "r"])
    # system level: mean sentence score per system, Pearson with DA z over the 19 MT systems
    sys = ch.sys_table.set_index("metric")
    da = ch.data.da.loc[ch.sys_scores.index]
    assert len(da) == 19
    assert sys.loc["BLEU", "r"] == pytest.approx(pearsonr(ch.sys_scores["BLEU"], da)[0], abs=1e-12)
    assert S.deen_refB_rank(ch) == (19, 20)


def test_chapter_verdicts(chapter):
    claims = S.claims(chapter)  # the chapter's claims are records, decided by the one engine
    v = stats.decide_claims(claims, S.tables(chapter))
    assert [c.claim for c in claims if c.primary] == [c for c in S._PRIMARY if c in v]  # no syntax run: four
    w, z_ = "TED held-out segments", "MQM z"
    svms = ("SVM (TED-trained)", "SVM (de-en-trained)")
    assert list(v) == ["human translation refB is rated better than MT (TED, MQM z)",
                       "human translation ref is rated better than MT (TED, MQM z)",
                       *[c for s in svms for c in (f"{s} correlates with {z_} ({w})",
                                                   f"{s} correlates with {z_} beyond length ({w})",
                                                   f"{s} beats the placebo ({w}, {z_})")],
                       *[c for s in svms for b in ("chrF", "BLEU") for c in (
                           f"{s} beats {b} ({w}, {z_})", f"{s} beats {b} beyond length ({w}, {z_})")],
                       "SVM (de-en-trained) correlates with DA z (WMT21 de-en, system level)",
                       "SVM (de-en-trained) beats permuted DA z (WMT21 de-en, system level)"]
    assert {x["family_size"] for x in v.values()} == {sum(x["verdict"] != "exploratory" for x in v.values())}  # Holm over the chapter's verdicts
    ref = v["human translation ref is rated better than MT (TED, MQM z)"]
    # ref is rated below the MT systems: the statistic, recomputed with a groupby on the 40 sources
    t = chapter.data.ted[chapter.data.ted["seg_id"].isin(chapter.pools["TED"]["seg_id"])]
    h = t[t["system"] == "ref"].set_index("seg_id")["mqm_z"]
    mt = t[~t["is_human"]].groupby("seg_id")["mqm_z"].mean()
    assert ref["statistic"] == pytest.approx(float((h - mt.loc[h.index]).mean()), abs=1e-12)
    assert ref["verdict"] == "exploratory" and ref["ci"][1] < 0  # not a primary claim; its interval below 0
    b = v["SVM (TED-trained) beats BLEU (TED held-out segments, MQM z)"]
    z = chapter.seg_table[chapter.seg_table["human"] == "MQM z"].set_index("metric")
    assert b["statistic"] == pytest.approx(z.loc[S.SVM_TED, "delta"]) and b["test"] == "beats"
    # beyond length: the partial r given the length model (its spline space built independently), by numpy
    # lstsq residuals and scipy
    from notebook_checks._length_model import flexible_design

    _, given = S.length_model(chapter.ted_test)
    a = np.column_stack([np.ones(len(chapter.ted_test)),
                         flexible_design(np.expm1(given["log hyp length"]), np.expm1(given["log ref length"]))])
    res = lambda y: y - a @ np.linalg.lstsq(a, y, rcond=None)[0]  # noqa: E731
    want = pearsonr(res(chapter.seg_scores[S.SVM_TED]), res(chapter.ted_test["mqm_z"].to_numpy(float)))[0]
    assert v["SVM (TED-trained) correlates with MQM z beyond length (TED held-out segments)"]["statistic"] == \
        pytest.approx(want, abs=1e-10)
    res = S.results(chapter, v)
    assert list(res["verdicts"]) == list(v) and res["human_ceiling"]["available"] is False


def test_permuted_chapter_has_no_holds(shared_data):
    ch = S.run_chapter(shared_data, sample=40, grid="small", syntax=False, run_swapped=False, n_resamples=100,
                       permute_human=1, progress=False)
    v = stats.decide_claims(S.claims(ch), S.tables(ch))
    assert [c for c, x in v.items() if x["verdict"] == "holds"] == []
    assert ch.params["permute_human"] == 1


# --------------------------------------------------------------------------------------------- issue 22: features


def test_weighted_auc_hand_example_and_sklearn():
    """Human 3, 1, 2 against MT 1, 0: 3>1, 3>0, 1=1 (a tie counts one half), 1>0, 2>1, 2>0: 5.5 of 6 pairs."""
    from sklearn.metrics import roc_auc_score

    x, y = np.array([3.0, 1.0, 2.0, 1.0, 0.0]), np.array([1, 1, 1, 0, 0])
    assert S.weighted_auc(x, y)[0] == pytest.approx(5.5 / 6)
    rng = np.random.default_rng(3)
    x = rng.integers(0, 6, size=40).astype(float)  # many ties
    y = np.r_[np.ones(20, int), np.zeros(20, int)]
    W = rng.integers(0, 3, size=(25, 40)).astype(float)
    W[:, 0] += 1  # both classes present in every row
    W[:, -1] += 1
    got = S.weighted_auc(x, y, W)
    want = [roc_auc_score(y, x, sample_weight=w) for w in W]
    np.testing.assert_allclose(got, want, atol=1e-12)
    with pytest.raises(ValueError, match="both classes"):
        S.weighted_auc(x, np.ones(40, int))
    with pytest.raises(ValueError, match="one length"):
        S.weighted_auc(x, y[:-1])
