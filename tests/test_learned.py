"""Tests for syneval_nb.metrics.learned (Kulesza & Shieber 2004)."""
from __future__ import annotations

import json
import math

import nltk
import numpy as np
import pandas as pd
import pytest

from syneval_nb.metrics import learned
from syneval_nb.metrics.base import Corpus
from syneval_nb.metrics.learned import (
    FEATURE_NAMES,
    FULL_GRID,
    FeatureConfig,
    LearnedMetric,
    balance,
    build_pool,
    class_accuracy,
    feature_frame,
    features,
    grid_search,
    split_sources,
    training_sets,
)


# --------------------------------------------------------------------------------------------- features


def test_features_hand_example():
    # hyp  = the cat sat on the mat                (6 words)
    # ref1 = the cat is on the mat                 (6 words)
    # ref2 = there is a cat on the mat             (7 words)
    # p1: hyp unigrams the x2, cat, sat, on, mat; pooled ref counts the 2+1=3, cat 2, sat 0, on 2, mat 2
    #     matched min(2,3)+1+0+1+1 = 5 of 6
    # p2: hyp bigrams the-cat, cat-sat, sat-on, on-the, the-mat; matched the-cat, on-the, the-mat = 3 of 5
    # p3: the-cat-sat, cat-sat-on, sat-on-the, on-the-mat; only on-the-mat is in a reference: 1 of 4
    # p4: the-cat-sat-on, cat-sat-on-the, sat-on-the-mat: none (0 of 3); p5: none (0 of 2)
    # length ratios 6/6 and 6/7
    # wer: ref1 needs one substitution (sat -> is) = 1; ref2 needs more; min = 1
    # per: ref1 common multiset {the,the,cat,on,mat} = 5 -> max(6,6)-5 = 1;
    #      ref2 common {the,cat,on,mat} = 4 -> max(6,7)-4 = 3; min = 1
    f = features("the cat sat on the mat", ["the cat is on the mat", "there is a cat on the mat"])
    assert list(f) == list(FEATURE_NAMES)
    expected = {"p1": 5 / 6, "p2": 3 / 5, "p3": 1 / 4, "p4": 0.0, "p5": 0.0,
                "len_ratio_min": 6 / 7, "len_ratio_max": 1.0, "wer": 1.0, "per": 1.0}
    for k, v in expected.items():
        assert f[k] == pytest.approx(v), k


def test_reference_ngrams_are_pooled_not_clipped_per_reference():
    # "the" occurs once in each reference: 2 reference occurrences in the pool, so 2 of the 3 hypothesis
    # "the"s match (BLEU's clipping by the single-reference maximum would give 1/3).
    f = features("the the the", ["the cat", "the dog"])
    assert f["p1"] == pytest.approx(2 / 3)
    # each reference occurrence matches at most once: one reference "the" for three hypothesis "the"s
    assert features("the the the", ["the cat"])["p1"] == pytest.approx(1 / 3)


def test_wer_and_per_are_raw_counts_that_differ():
    # hyp a b c, ref c d: edit distance 3 (delete a, delete b, insert d; no 2-edit path since only "c" is shared)
    # per: common multiset {c} = 1; max(3, 2) - 1 = 2
    f = features(["a", "b", "c"], [["c", "d"]])
    assert f["wer"] == 3.0 and f["per"] == 2.0
    # a pure reordering: PER 0, WER positive
    f = features("on the mat the cat sat", ["the cat sat on the mat"])
    assert f["per"] == 0.0
    assert f["wer"] == nltk.edit_distance("on the mat the cat sat".split(), "the cat sat on the mat".split())


def test_token_lists_are_used_as_given():
    # the single token "New York" is not the two tokens "New", "York": WER = 1 substitution + 1 insertion = 2,
    # PER = max(1, 2) - |{}| = 2, p1 = 0/1
    f = features(["New York"], [["New", "York"]])
    assert (f["wer"], f["per"], f["p1"]) == (2.0, 2.0, 0.0)


def test_wer_is_min_edit_distance_over_references_against_nltk():
    rng = np.random.default_rng(3)
    vocab = list("abcde")
    for _ in range(30):
        hyp = list(rng.choice(vocab, rng.integers(1, 8)))
        refs = [list(rng.choice(vocab, rng.integers(1, 8))) for _ in range(3)]
        f = features(hyp, refs)
        assert f["wer"] == min(nltk.edit_distance(hyp, r) for r in refs)
        # PER by brute force: remove the shorter's words one by one from the longer
        def per(h, r):
            longer, shorter = (list(h), r) if len(h) >= len(r) else (list(r), h)
            for w in shorter:
                if w in longer:
                    longer.remove(w)
            return len(longer)
        assert f["per"] == min(per(hyp, r) for r in refs)


def test_short_hypothesis_has_zero_higher_order_precision():
    f = features("the cat", ["the cat sat"])
    assert f["p1"] == 1.0 and f["p2"] == 1.0 and f["p3"] == 0.0 and f["p5"] == 0.0
    assert f["len_ratio_min"] == pytest.approx(2 / 3)


def test_tokenization_and_lowercase_options():
    # 13a splits the final period off: "mat ." -> 2 tokens
    assert features("The mat.", ["the mat."])["p1"] == pytest.approx(2 / 3)
    assert features("The mat.", ["the mat."], lowercase=True)["p1"] == 1.0


@pytest.mark.parametrize(
    "hyp, refs, msg",
    [("", ["a"], "empty hypothesis"), ("a", [], "at least one reference"), ("a", ["a", ""], "reference 1 is empty")],
)
def test_bad_input(hyp, refs, msg):
    with pytest.raises(ValueError, match=msg):
        features(hyp, refs)


def test_refs_as_string_is_an_error():
    with pytest.raises(TypeError):
        features("a b", "a b")


def test_feature_frame_alignment_errors():
    with pytest.raises(ValueError, match="2 hypotheses but 1"):
        feature_frame(["a", "b"], [["a"]], progress=False)
    with pytest.raises(ValueError, match="syntax=True"):
        feature_frame(["a"], [["a"]], FeatureConfig(syntax=True), progress=False)
    # a bad row is named by its index
    with pytest.raises(ValueError, match="segment 1: empty hypothesis"):
        feature_frame(["a b", " "], [["a b"], ["a b"]], progress=False)
    with pytest.raises(TypeError, match="segment 0: .*sequence of token strings"):
        feature_frame([None], [["a b"]], progress=False)


# --------------------------------------------------------------------------------------------- data pools


def _toy_long() -> pd.DataFrame:
    rows = []
    for seg in range(10):
        rows.append({"system": "H1", "seg_id": seg, "target": f"human one {seg}", "is_human": True, "mqm": 0.0})
        rows.append({"system": "H2", "seg_id": seg, "target": f"human two {seg}", "is_human": True, "mqm": 0.0})
        for s in ("m1", "m2", "m3"):
            rows.append({"system": s, "seg_id": seg, "target": f"{s} out {seg}", "is_human": False,
                         "mqm": -float(seg)})
    return pd.DataFrame(rows)


def test_build_pool_uses_one_reference_and_labels():
    pool = build_pool(_toy_long(), human="H2", reference="H1")
    assert len(pool) == 10 * 4  # 1 human + 3 machine per segment
    assert (pool["ref"] == pool["seg_id"].map(lambda s: f"human one {s}")).all()
    assert set(pool.loc[pool.label == 1, "system"]) == {"H2"}
    assert set(pool.loc[pool.label == 0, "system"]) == {"m1", "m2", "m3"}
    assert "mqm" in pool.columns
    with pytest.raises(ValueError, match="different"):
        build_pool(_toy_long(), human="H1", reference="H1")
    with pytest.raises(ValueError, match="not in the data"):
        build_pool(_toy_long(), human="X", reference="H1")


def test_split_is_disjoint_complete_and_seeded():
    ids = range(1000)
    a = split_sources(ids, val_frac=0.25, test_frac=0.3, seed=7)
    b = split_sources(ids, val_frac=0.25, test_frac=0.3, seed=7)
    c = split_sources(ids, val_frac=0.25, test_frac=0.3, seed=8)
    assert (len(a["train"]), len(a["val"]), len(a["test"])) == (450, 250, 300)
    assert set(a["train"]) | set(a["val"]) | set(a["test"]) == set(ids)
    assert not (set(a["train"]) & set(a["val"])) and not (set(a["train"]) & set(a["test"]))
    assert not (set(a["val"]) & set(a["test"]))
    assert all((a[k] == b[k]).all() for k in a) and not (a["test"] == c["test"]).all()


def test_balance_and_training_sets_have_no_source_overlap():
    pool = build_pool(_toy_long(), human="H2", reference="H1")
    bal = balance(pool, seed=0)
    assert (bal.groupby("seg_id")["label"].agg(["sum", "count"]) == [1, 2]).all().all()
    assert bal.equals(balance(pool, seed=0))
    sets = training_sets(pool, split_sources(pool.seg_id, val_frac=0.3, test_frac=0.3, seed=1), seed=0)
    ids = {k: set(v["seg_id"]) for k, v in sets.items()}
    assert not (ids["train"] & ids["val"]) and not (ids["train"] & ids["test"]) and not (ids["val"] & ids["test"])
    assert (sets["test"]["label"] == 0).all() and len(sets["test"]) == 3 * 3  # all MT outputs of 3 test sources
    assert sets["train"]["label"].mean() == 0.5


# --------------------------------------------------------------------------------------------- the SVM


def _synthetic(n: int, seed: int) -> tuple[pd.DataFrame, np.ndarray]:
    """Humans have higher precisions and fewer errors than machines, with noise (overlapping classes)."""
    rng = np.random.default_rng(seed)
    y = np.repeat([1, 0], n // 2)
    base = np.where(y == 1, 0.6, 0.4)[:, None]
    X = np.clip(base + rng.normal(0, 0.15, (n, 5)), 0, 1)
    ratio = rng.normal(1.0, 0.1, (n, 2))
    errs = np.where(y == 1, 8, 12)[:, None] + rng.normal(0, 3, (n, 2))
    return pd.DataFrame(np.hstack([X, ratio, errs]), columns=FEATURE_NAMES), y


def test_training_is_reproducible_and_human_side_is_positive():
    X, y = _synthetic(200, 0)
    a = LearnedMetric(C=1.0, sigma=2.0).fit(X, y)
    b = LearnedMetric(C=1.0, sigma=2.0).fit(X, y)
    Xt, yt = _synthetic(100, 1)
    assert np.array_equal(a.score_features(Xt), b.score_features(Xt))
    s = a.score_features(Xt)
    assert s[yt == 1].mean() > s[yt == 0].mean()  # more human-like = higher
    assert np.array_equal(a.predict(Xt), (a.decision_function(Xt) > 0).astype(int))
    assert class_accuracy(yt, a.predict(Xt))["acc"] > 0.7


def test_signed_distance_uses_the_kernel_space_norm():
    X, y = _synthetic(120, 2)
    m = LearnedMetric(C=5.0, sigma=1.5).fit(X, y)
    svm = m.pipeline.named_steps["svm"]
    # ||w||^2 = sum_ij a_i a_j exp(-||x_i - x_j||^2 / (2 sigma^2)) over the (scaled) support vectors
    sv = svm.support_vectors_
    d2 = ((sv[:, None, :] - sv[None, :, :]) ** 2).sum(-1)
    a = svm.dual_coef_[0]
    norm = math.sqrt(a @ np.exp(-d2 / (2 * 1.5**2)) @ a)
    assert m.w_norm == pytest.approx(norm, rel=1e-9)
    assert np.allclose(m.score_features(X), m.decision_function(X) / norm)


def test_save_load_roundtrip_gives_identical_scores(tmp_path):
    X, y = _synthetic(100, 3)
    m = LearnedMetric(C=50.0, sigma=10.0, seed=4).fit(X, y)
    path = m.save(tmp_path / "ks.joblib")
    m2 = LearnedMetric.load(path)
    assert m2.signature() == m.signature() and m2.C == 50.0 and m2.sigma == 10.0
    assert np.array_equal(m.score_features(X), m2.score_features(X))
    from syneval_nb import metrics  # the one reader behind score -m FILE: an SVM file as a metric name too

    m3 = metrics.get(str(path))
    assert isinstance(m3, LearnedMetric) and np.array_equal(m.score_features(X), m3.score_features(X))
    (tmp_path / "notes.txt").write_text("not a model\n")
    with pytest.raises(ValueError, match="not a saved learned metric"):
        metrics.get(str(tmp_path / "notes.txt"))
    with pytest.raises(metrics.UnknownMetricError, match="no such file"):
        metrics.get(str(tmp_path / "missing.joblib"))


def test_load_refuses_other_format_version(tmp_path):
    import joblib

    X, y = _synthetic(60, 4)
    path = LearnedMetric(C=1.0, sigma=1.0).fit(X, y).save(tmp_path / "m.joblib")
    payload = joblib.load(path)
    payload["format_version"] = learned.FORMAT_VERSION + 1
    joblib.dump(payload, path)
    with pytest.raises(ValueError, match="format"):
        LearnedMetric.load(path)


def test_scores_raw_text_with_the_stored_feature_pipeline():
    X, y = _synthetic(100, 5)
    m = LearnedMetric(C=1.0, sigma=3.0).fit(X, y)
    hyps, refs = ["the cat sat on the mat", "mat the"], [["the cat is on the mat"], ["the cat is on the mat"]]
    direct = m.score_features(pd.DataFrame([features(h, r) for h, r in zip(hyps, refs)]))
    assert np.array_equal(m.sentence_scores(hyps, refs), direct)
    assert m.sentence_score(hyps[0], refs[0]).score == direct[0]
    assert m.corpus_score(hyps, refs).score == pytest.approx(direct.mean())


def test_unfitted_and_bad_frames():
    with pytest.raises(RuntimeError, match="not trained"):
        LearnedMetric().decision_function(pd.DataFrame(columns=FEATURE_NAMES))
    X, y = _synthetic(40, 6)
    with pytest.raises(ValueError, match="lacks columns"):
        LearnedMetric().fit(X.drop(columns="per"), y)
    with pytest.raises(ValueError, match="both classes"):
        LearnedMetric().fit(X, np.ones(len(X)))
    with pytest.raises(ValueError, match="positive"):
        learned.make_pipeline(C=0.0)


def test_make_pipeline_gamma_from_sigma():
    svc = learned.make_pipeline(C=50, sigma=10).named_steps["svm"]
    assert svc.kernel == "rbf" and svc.C == 50 and svc.gamma == pytest.approx(1 / 200)


def test_raw_features_option_is_kept_through_save_load(tmp_path):
    X, y = _synthetic(80, 9)
    m = LearnedMetric(C=50.0, sigma=10.0, standardize=False).fit(X, y)
    assert m.pipeline.named_steps["scale"] == "passthrough" and "scale:raw" in m.signature()
    # without scaling the SVM sees the raw values: the decision equals an SVC fitted on X directly
    from sklearn.svm import SVC

    ref = SVC(kernel="rbf", C=50.0, gamma=1 / 200).fit(X.to_numpy(), y)
    assert np.allclose(m.decision_function(X), ref.decision_function(X.to_numpy()))
    m2 = LearnedMetric.load(m.save(tmp_path / "raw.joblib"))
    assert m2.standardize is False and np.array_equal(m2.score_features(X), m.score_features(X))


def test_grid_search_selects_by_validation_accuracy():
    X, y = _synthetic(160, 7)
    Xv, yv = _synthetic(80, 8)
    g = grid_search(X, y, Xv, yv, Cs=(0.1, 50.0), sigmas=(0.5, 10.0), progress=False)
    assert len(g.table) == 4 and set(g.models) == {(0.1, 0.5), (0.1, 10.0), (50.0, 0.5), (50.0, 10.0)}
    best = g.table["acc"].max()
    row = g.table[(g.table.C == g.best.C) & (g.table.sigma == g.best.sigma)].iloc[0]
    assert row["acc"] == best
    # accuracies recomputed independently of the table
    for (C, s), m in g.models.items():
        acc = float((m.predict(Xv) == yv).mean())
        assert g.table[(g.table.C == C) & (g.table.sigma == s)]["acc"].iloc[0] == pytest.approx(acc)
    assert 50.0 in FULL_GRID["C"] and 10.0 in FULL_GRID["sigma"]


def test_class_accuracy_hand():
    # human: 2 of 3 right; machine: 1 of 1 right; overall 3 of 4
    assert class_accuracy([1, 1, 1, 0], [1, 0, 1, 0]) == {"acc_human": 2 / 3, "acc_machine": 1.0, "acc": 0.75}


# --------------------------------------------------------------------------------------------- real data


def test_deen_pool_sizes(deen_dir):
    from syneval_nb.data import load_wmt21_deen
    from syneval_nb.studies.learned_metric import deen_long

    wmt = load_wmt21_deen(deen_dir.parent)
    pool = build_pool(deen_long(wmt.segments), human="ref_B", reference="ref_A")
    assert (pool.label == 1).sum() == 1000 and (pool.label == 0).sum() == 19000
    assert (pool.loc[pool.label == 1, "hyp"].to_numpy() == wmt.segments.drop_duplicates("seg_id")["ref_B"]).all()
    bal = balance(pool, seed=0)
    assert len(bal) == 2000


def test_ted_pool_sizes(ted_dir):
    from syneval_nb.data import load_ted_zhen_mqm

    ted = load_ted_zhen_mqm(ted_dir.parent)
    pool = build_pool(ted, human="refB", reference="ref")
    assert (pool.label == 1).sum() == 529 and (pool.label == 0).sum() == 13 * 529
    assert pool["mqm"].notna().all()


# --------------------------------------------------------------------------------------------- vs lexical, stats


def test_wer_per_features_are_lexical_rates_times_reference_length():
    from syneval_nb.metrics.lexical import PER, WER

    hyp, ref = "the cat sat on the mat today", "a cat is sitting on the mat"
    f = features(hyp, [ref])
    # 7 reference words; the feature is the count, lexical's score the rate
    assert f["wer"] == pytest.approx(WER().sentence_score(hyp, [ref]).score * 7)
    assert f["per"] == pytest.approx(PER().sentence_score(hyp, [ref]).score * 7)
    # hand: common multiset {cat, on, the, mat} = 4 -> per = max(7, 7) - 4 = 3
    assert f["per"] == 3.0


def test_run_experiment_on_ted_sample(ted_dir):
    from syneval_nb.data import load_ted_zhen_mqm

    from syneval_nb.data import sample_segments

    pool = sample_segments(build_pool(load_ted_zhen_mqm(ted_dir.parent), human="refB", reference="ref"), 80, 0)
    exp = learned.run_experiment("ted", pool, Cs=(1.0,), sigmas=(10.0,), val_frac=0.25, test_frac=0.25,
                                 progress=False)
    sizes = exp.sizes().set_index("part")
    assert sizes.loc["test", "machine"] == 20 * 13 and sizes.loc["train", "human"] == 40
    assert sizes.loc["train", "human"] == sizes.loc["train", "machine"]
    again = learned.run_experiment("ted", pool, Cs=(1.0,), sigmas=(10.0,), val_frac=0.25, test_frac=0.25,
                                   progress=False)
    assert np.array_equal(exp.best.score_features(exp.X["test"]), again.best.score_features(again.X["test"]))


# --------------------------------------------------------------------------------------------- syntactic extension

HYP_PTB = "(ROOT (S (NP (DT the) (NN cat)) (VP (VBD sat))))"
REF_PTB = "(ROOT (S (NP (DT the) (NN dog)) (VP (VBD sat))))"


def test_syntactic_columns_hand_example():
    # STM compares labels only (words are not nodes): every subtree of depth 1..3 of the hypothesis is in the
    # reference, so stm_1 = stm_2 = stm_3 = 1.
    # TKM (Collins & Duffy, lambda 1): C(S,S) = (1 + C(NP,NP)) (1 + C(VP,VP)).
    #   K(h,h): DT 1, NN 1, VBD 1, VP 1+1 = 2, NP (1+1)(1+1) = 4, S (1+4)(1+2) = 15 -> 24 (same for K(r,r))
    #   K(h,r): DT 1, NN 0 (cat vs dog), VBD 1, VP 2, NP (1+1)(1+0) = 2, S (1+2)(1+2) = 9 -> 15; cosine 15/24
    # HWCM (Collins heads: S <- VP <- sat, NP <- NN): chains sat, cat, the | sat-cat, cat-the | sat-cat-the
    #   vs sat, dog, the | sat-dog, dog-the | sat-dog-the: precisions 2/3, 0 -> 1e-3, 0 -> 1e-3
    #   hwcm_d is the mean over lengths 1..d
    df = learned.syntactic_frame([HYP_PTB], [[REF_PTB]], depth=3)
    assert list(df.columns) == learned.syntactic_feature_names(3)
    row = df.iloc[0]
    assert row["stm_1"] == row["stm_2"] == row["stm_3"] == 1.0
    assert row["tkm"] == pytest.approx(15 / 24)
    assert row["hwcm_1"] == pytest.approx(2 / 3)
    assert row["hwcm_2"] == pytest.approx((2 / 3 + 1e-3) / 2)
    assert row["hwcm_3"] == pytest.approx((2 / 3 + 2e-3) / 3)


def test_syntax_model_roundtrip_on_raw_text_and_parses(tmp_path):
    cfg = FeatureConfig(syntax=True, syntax_depth=2)
    hyps = ["the cat sat", "the dog sat", "cat the sat", "the the cat"] * 5
    refs = [["the dog sat"]] * len(hyps)
    parses = {"the cat sat": HYP_PTB, "the dog sat": REF_PTB,
              "cat the sat": "(ROOT (S (NP (NN cat)) (NP (DT the)) (VP (VBD sat))))",
              "the the cat": "(ROOT (NP (DT the) (DT the) (NN cat)))"}
    ht, rt = [parses[h] for h in hyps], [[REF_PTB]] * len(hyps)
    X = feature_frame(hyps, refs, cfg, hyp_trees=ht, ref_trees=rt, progress=False)
    assert list(X.columns) == list(FEATURE_NAMES) + ["stm_1", "stm_2", "hwcm_1", "hwcm_2", "tkm"]
    assert X.loc[1, "tkm"] == pytest.approx(1.0) and X.loc[1, "p3"] == 1.0
    y = np.array([1, 1, 0, 0] * 5)
    m = LearnedMetric(config=cfg, C=1.0, sigma=1.0).fit(X, y)
    m2 = LearnedMetric.load(m.save(tmp_path / "syn.joblib"))
    assert m2.config == cfg and "syntax" in m2.signature()
    assert np.array_equal(m2.sentence_scores(hyps, refs, hyp_trees=ht, ref_trees=rt), m.score_features(X))
    # the one metric protocol: a Corpus carrying the parses is the same input (without parses it would parse the
    # texts through the cache, as every parse-based metric does)
    c = Corpus(hyps, refs, hyp_ptb=ht, ref_ptb=rt)
    assert np.array_equal(m2.sentence_scores(c), m.score_features(X))
    assert m2.corpus_score(c).score == pytest.approx(float(np.mean(m.score_features(X))), abs=1e-12)


# --------------------------------------------------------------------------------------------- the ridge metric
# (issue 36: registry metrics and the length model fitted to human scores; saved and applied as the SVM is)

RIDGE_TRAINING = "TED zh-en MQM, 60 segments"


@pytest.fixture(scope="module")
def ted_ridge(shared_data):
    """60 TED source segments (seed 0), every translation but refB scored against refB, MQM the human score."""
    from syneval_nb import data

    ted = data.load_ted_zhen_mqm(shared_data)
    from syneval_nb import metrics

    ted = data.sample_segments(ted[ted["system"] != "refB"], 60, seed=0)
    ms = [metrics.get(n) for n in learned.RIDGE_FEATURES]
    X = learned.ridge_frame(ted, ms, refs=("refB",))
    X["mqm"] = ted["mqm"].to_numpy()
    return ted, X, learned.fit_ridge(X, "mqm", ms, groups=ted["seg_id"], training=RIDGE_TRAINING)


def test_ridge_sample_and_signature(ted_ridge):
    ted, X, m = ted_ridge
    assert len(ted) == 60 * 14 == 840 and ted["seg_id"].nunique() == 60
    assert ted["ptb"].notna().all() and ted["ptb_refB"].notna().all()
    # the features, then the flexible length model (stats.length_covariates) with knots fixed in the model
    assert list(X.columns) == ["BLEU", "chrF", "TER", "METEOR", "STM-4", "HWCM-4", "DSTM-4", "TKM", "TKM λ=0.4",
                               "DTKM", "DTKM λ=0.4", "log hyp length", "log hyp length s1", "log hyp length s2", "log ref length", "log ref length s1",
                               "log ref length s2", "log length ratio s1", "log length ratio s2", "log hyp x ref length", "mqm"]
    assert m.length_knots == X.attrs["length_knots"] == learned.ridge_knots([learned.Corpus(
        list(ted["target"]), [[r] for r in ted["refB"]], ref_layout="segments", check_words=False)])
    # three new rows get the same terms from the stored knots (their own percentiles would give fewer), and the
    # prediction equals the one of the same rows inside the training frame
    small = learned.ridge_frame(ted.head(3), m.metrics, refs=("refB",), knots=m.length_knots)
    assert list(small.columns) == list(m.columns)
    np.testing.assert_allclose(m.predict(small), m.predict(X.head(3)), rtol=0, atol=1e-12)
    assert m.train_info == {"n_train": 840, "n_left_out": 0, "human": "mqm", "cv": "group 5-fold"}
    sig = m.signature()
    assert sig.startswith("Ridge|model:ridge|features:BLEU+chrF+TER+METEOR+STM-4+HWCM-4+DSTM-4+TKM+TKM λ=0.4+DTKM+"
                          "DTKM λ=0.4|length:flexible:9 terms|alpha:")
    assert f"|scale:std|train:{RIDGE_TRAINING} (n=840)|format:v1|" in sig and m.alpha in learned.RIDGE_ALPHAS


def test_ridge_coefficients_are_the_closed_form_on_the_standardized_matrix(ted_ridge):
    from sklearn.linear_model import Ridge
    from sklearn.model_selection import GroupKFold

    ted, X, m = ted_ridge
    A, y = X[list(m.columns)].to_numpy(float), X["mqm"].to_numpy(float)
    sd = A.std(axis=0)
    Z = (A - A.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    beta = np.linalg.solve(Z.T @ Z + m.alpha * np.eye(Z.shape[1]), Z.T @ (y - y.mean()))
    ridge = m.pipeline.named_steps["ridge"]
    np.testing.assert_allclose(ridge.coef_, beta, rtol=0, atol=1e-10)
    assert ridge.intercept_ == pytest.approx(y.mean(), abs=1e-10)
    np.testing.assert_allclose(m.predict(X), Z @ beta + y.mean(), rtol=0, atol=1e-10)
    # alpha: the least squared error over folds that keep every source segment whole
    folds = list(GroupKFold(5).split(Z, y, ted["seg_id"]))
    assert all(not set(ted["seg_id"].iloc[a]) & set(ted["seg_id"].iloc[b]) for a, b in folds)
    err = {a: np.mean([np.mean((Ridge(alpha=a).fit(Z[tr], y[tr]).predict(Z[te]) - y[te]) ** 2)
                       for tr, te in folds]) for a in learned.RIDGE_ALPHAS}
    assert m.alpha == min(err, key=err.get)


def test_ridge_save_load_and_score_m_file(ted_ridge, tmp_path):
    """Saved, loaded (the SVM's one reader) and applied by ``syneval-nb score -m FILE``: the same predictions."""
    import json

    from syneval_nb import metrics
    from syneval_nb.app import score

    ted, X, m = ted_ridge
    path = m.save(tmp_path / "ridge.joblib")
    m2 = learned.load_model(path)
    assert isinstance(m2, learned.RidgeMetric) and m2.signature() == m.signature()
    assert np.array_equal(m2.predict(X), m.predict(X))  # exact, before and after the save
    with pytest.raises(RuntimeError, match=r"feature metrics are not made .*: load it with syneval_nb.metrics.get"):
        m2.corpus_score(["a b"], [["a b"]])
    m3 = metrics.get(str(path))  # the registry makes the feature metrics from their names
    assert [x.name for x in m3.metrics] == list(m.features) and m3.inputs == ("text", "ptb")
    assert np.array_equal(m3.sentence_scores(Corpus(list(ted["target"][:5]), [[r] for r in ted["refB"][:5]],
                                                    hyp_ptb=list(ted["ptb"][:5]), ref_ptb=[[r] for r in
                                                                                        ted["ptb_refB"][:5]])),
                          m.predict(X.head(5)))
    assert metrics.get("ridge", model=path).signature() == m.signature()
    assert metrics.get(str(path)).signature() == m.signature()
    with pytest.raises(ValueError, match="not a Kulesza & Shieber SVM"):
        LearnedMetric.load(path)
    parses = tmp_path / "parses"
    parses.mkdir()
    files = {}
    for s in ("Online-W", "ref"):
        rows = ted[ted["system"] == s].sort_values("seg_id")
        for name, col, ptb in ((s, "target", "ptb"), ("refB", "refB", "ptb_refB")):
            (tmp_path / f"{name}.txt").write_text("".join(t + "\n" for t in rows[col]), encoding="utf-8")
            (parses / f"{name}.txt.ptb").write_text("".join(t + "\n" for t in rows[ptb]), encoding="utf-8")
        files[s] = rows.index
    out = tmp_path / "out.json"
    rc = score.cli(["-r", str(tmp_path / "refB.txt"), "-i", str(tmp_path / "Online-W.txt"), str(tmp_path / "ref.txt"),
                    "-m", f"chrf,{path}", "--parses", str(parses), "--format", "json", "--segment-level",
                    "--n-bootstrap", "0", "-q", "--no-cache", "-o", str(out)])
    assert rc == 0
    got = json.loads(out.read_text())
    assert got["signatures"]["Ridge"].startswith(m.signature().split("|version")[0])
    for s, idx in files.items():
        np.testing.assert_allclose(got["segments"][s]["Ridge"], m.predict(X.loc[idx]), rtol=0, atol=1e-12)
        corpus = [r for r in got["scores"] if r["system"] == s and r["name"] == "Ridge"][0]
        assert corpus["score"] == pytest.approx(m.predict(X.loc[idx]).mean(), abs=1e-12)


def test_ridge_needs_the_parses_of_its_features(ted_ridge):
    from syneval_nb import metrics

    ted = ted_ridge[0]
    chrf, bleu, stm, tkm = (metrics.get(n) for n in ("chrF", "BLEU", "STM", "TKM"))
    with pytest.raises(ValueError, match=r"feature STM-4 needs constituency parses and the frame has none in "
                                         r"\['ptb_refB'\]"):
        learned.ridge_frame(ted.drop(columns=["ptb_refB"]), [chrf, stm], refs=("refB",))
    X = learned.ridge_frame(ted.drop(columns=["ptb", "ptb_refB"]).head(5), [chrf, bleu], refs=("refB",))
    with pytest.raises(ValueError, match=r"lacks the columns \['TKM'"):
        learned.fit_ridge(X.assign(mqm=1.0), "mqm", [chrf, bleu, tkm])
    # a saved model's path that does not exist is said to be missing, not an unknown metric name
    with pytest.raises(metrics.UnknownMetricError, match=r"^'no/such/ridge.joblib': no such file \(a saved learned "
                                                         r"metric is named by its path, e\.g\. ridge\.joblib\)$"):
        metrics.get("no/such/ridge.joblib")
    # constant human scores: a model of them predicts one value, so fit refuses (a clear error, not a model)
    with pytest.raises(ValueError, match=r"^the human scores 'mqm' are constant \(-2 in all 5 rows\): there is "
                                         r"nothing to fit$"):
        learned.fit_ridge(X.assign(mqm=-2.0), "mqm", [chrf, bleu])


def test_fit_command_writes_the_model_score_applies(ted_ridge, tmp_path, capsys):
    from syneval_nb import metrics
    from syneval_nb.app import cli, fit

    ted = ted_ridge[0]
    rows, human = [], []
    for s in ("Online-W", "Borderline", "ref"):
        g = ted[ted["system"] == s].sort_values("seg_id")
        (tmp_path / f"{s}.txt").write_text("".join(t + "\n" for t in g["target"]), encoding="utf-8")
        rows.append(g)
        human += [f"{s}\t{i}\t{v!r}" for i, v in enumerate(g["mqm"])]
    (tmp_path / "refB.txt").write_text("".join(t + "\n" for t in rows[0]["refB"]), encoding="utf-8")
    (tmp_path / "mqm.tsv").write_text("system\tseg_id\tscore\n" + "\n".join(human) + "\n", encoding="utf-8")
    model = tmp_path / "m.joblib"
    rc = cli.main(["fit", "-r", str(tmp_path / "refB.txt"), "-i", *(str(tmp_path / f"{s}.txt") for s in
                   ("Online-W", "Borderline", "ref")), "--human-scores", str(tmp_path / "mqm.tsv"), "-m", "bleu,chrf",
                   "-o", str(model), "--training", "three TED systems", "-q", "--no-cache"])
    assert rc == 0, capsys.readouterr().err
    m = learned.load_model(model)
    assert m.features == ("BLEU", "chrF") and m.train_info["n_train"] == 180 and m.train_info["cv"] == "group 5-fold"
    assert "|features:BLEU+chrF|length:flexible:9 terms|" in m.signature()
    assert "|train:three TED systems (n=180)|" in m.signature()
    # the same fit as fit_ridge on ridge_frame of the loader's frame (groups: the segment of each row)
    frame = pd.concat(rows, ignore_index=True)
    ms = [metrics.get("bleu"), metrics.get("chrf")]
    X = learned.ridge_frame(frame, ms, refs=("refB",)).assign(mqm=frame["mqm"].to_numpy())
    direct = learned.fit_ridge(X, "mqm", ms, groups=frame["seg_id"].rank(method="dense"))
    np.testing.assert_allclose(m.pipeline.named_steps["ridge"].coef_, direct.pipeline.named_steps["ridge"].coef_,
                               rtol=0, atol=1e-12)
    assert fit.cli(["-r", str(tmp_path / "refB.txt"), "-i", str(tmp_path / "ref.txt"), "--human-scores",
                    str(tmp_path / "none.tsv"), "-o", str(tmp_path / "x.joblib"), "-m", "chrf"]) == 2
    assert "--human-scores" in capsys.readouterr().err


def test_two_saved_models_go_by_their_file_names(tmp_path, capsys):
    """``score -m a.joblib,b.joblib``: two ridge models (both "Ridge") are told apart by their files' names, each
    scoring exactly as it does alone; one file given twice under one name is still refused, naming it."""
    from pathlib import Path

    from syneval_nb.app import cli, score
    from syneval_nb.evaluate import comparison_metrics

    ex = Path(__file__).resolve().parents[1] / "data" / "examples" / "your_system"
    systems = [str(ex / f"system_{s}.txt") for s in ("good", "literal", "scrambled")]
    base = ["-r", str(ex / "ref.A.txt"), "-i", *systems, "-q", "--no-cache"]
    for stem, feats in (("a", "bleu,chrf"), ("b", "chrf")):
        assert cli.main(["fit", *base, "--human-scores", str(ex / "human_scores.tsv"), "-m", feats,
                         "-o", str(tmp_path / f"{stem}.joblib")]) == 0, capsys.readouterr().err
    a, b = str(tmp_path / "a.joblib"), str(tmp_path / "b.joblib")
    assert [m.name for m in comparison_metrics([a, b])[0]] == ["Ridge:a", "Ridge:b"]
    assert [m.name for m in comparison_metrics([a])[0]] == ["Ridge"]  # alone, its own name
    for spec in ([a, b], [a], [b]):
        out = tmp_path / f"{len(spec)}{Path(spec[-1]).stem}.json"
        assert score.cli([*base, "-m", ",".join(spec), "--format", "json", "--n-bootstrap", "0", "-o",
                          str(out)]) == 0
    both = {(r["name"], r["system"]): r["score"] for r in json.loads((tmp_path / "2b.json").read_text())["scores"]}
    alone = {(n, r["system"]): r["score"] for f, n in (("1a", "Ridge:a"), ("1b", "Ridge:b"))
             for r in json.loads((tmp_path / f"{f}.json").read_text())["scores"]}
    assert both == alone and len(both) == 6
    assert both[("Ridge:a", "system_good")] != both[("Ridge:b", "system_good")]  # two models, not one twice
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "a.joblib").write_bytes((tmp_path / "a.joblib").read_bytes())
    with pytest.raises(ValueError, match=r"a metric is named twice: Ridge:a"):
        comparison_metrics([a, str(tmp_path / "other" / "a.joblib")])
