"""Tests of syneval_nb.studies.learned_study (chapter 10: does syntax add beyond chrF and length?) on hand examples
and a small real sample of newstest2021 zh-en, each number recomputed with sacrebleu, numpy, scikit-learn or
scipy."""
from __future__ import annotations

import logging
from functools import lru_cache

import numpy as np
import pandas as pd
import pytest
from scipy.stats import pearsonr

from syneval_nb.studies import learned_study as S


def test_fold_ids_keep_groups_whole_and_are_seeded():
    groups = ["a", "a", "b", "c", "c", "c", "d", "e", "e", "f"]
    f = S.fold_ids(groups, 3, seed=1)
    for g in set(groups):  # every row of a group in one fold
        assert len({x for x, y in zip(f, groups) if y == g}) == 1
    assert sorted(pd.Series(f).groupby(pd.Series(groups)).first().value_counts().tolist()) == [2, 2, 2]  # 6 groups
    assert (S.fold_ids(groups, 3, seed=1) == f).all()
    assert S.fold_ids(groups, 99).max() == 5  # at most one fold per group
    with pytest.raises(ValueError, match="at least 2 groups"):
        S.fold_ids(["x", "x"], 5)


@lru_cache(maxsize=1)
def _news():
    from syneval_nb.data import load_newstest2021_zhen_mqm, sample_segments

    news = sample_segments(load_newstest2021_zhen_mqm(), 24, 0)
    return news, S.prepare(news.assign(group=news["seg_id"]), "news", human="mqm", group="group",
                           lexical_metrics=("BLEU", "chrF"), syntactic_metrics=("STM",), seed=0)


def _tokens(texts) -> np.ndarray:
    from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

    tok = Tokenizer13a()
    return np.array([len(tok(t.rstrip()).split()) for t in texts], dtype=float)


def _sklearn_fit(news: pd.DataFrame, s: S.MQMSet, train: np.ndarray, test: np.ndarray, columns: list[str]):
    """The model of ``columns`` refitted with scikit-learn alone: knots the 5/35/65/95th percentiles of the training
    rows' log lengths (numpy), alpha by RidgeCV over 5 group folds of the training rows."""
    from sklearn.linear_model import RidgeCV
    from sklearn.model_selection import GroupKFold
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from syneval_nb.metrics.learned import RIDGE_ALPHAS
    from syneval_nb.stats import length_covariates

    h, r = np.log1p(_tokens(news["target"])), np.log1p(_tokens(news["ref"]))
    q = [0.05, 0.35, 0.65, 0.95]
    knots = {"log hyp length": np.unique(np.quantile(h[train], q)),
             "log ref length": np.unique(np.quantile(r[train], q)),
             "log length ratio": np.unique(np.quantile((h - r)[train], q))}

    def design(rows):
        length = length_covariates(_tokens(news["target"])[rows], _tokens(news["ref"])[rows], knots=knots)
        return np.column_stack([s.X.loc[rows, columns].to_numpy(), *length.values()])

    y, g = news["mqm"].to_numpy()[train], news["seg_id"].to_numpy()[train]
    cv = list(GroupKFold(5).split(design(train), y, g))
    pipe = make_pipeline(StandardScaler(), RidgeCV(alphas=RIDGE_ALPHAS, cv=cv, scoring="neg_mean_squared_error"))
    return pipe.fit(design(train), y).predict(design(test))


def test_prepare_scores_the_registry_metrics_and_placebo():
    import sacrebleu

    logging.getLogger("sacrebleu").setLevel(logging.ERROR)
    news, s = _news()
    assert (len(s.rows), s.rows["seg_id"].nunique()) == (192, 24)  # 24 segments x 8 systems
    chrf = [sacrebleu.sentence_chrf(t, [r]).score / 100 for t, r in zip(news["target"], news["ref"])]
    assert s.X["chrF"].to_numpy() == pytest.approx(chrf, abs=1e-9)
    assert s.groups == {"chrF": ["chrF"], "lexical": ["BLEU", "chrF"], "syntax": ["STM-4"], "placebo": ["placebo 1"]}
    assert s.columns("all + length") == ["BLEU", "chrF", "STM-4"]
    assert s.hyp_len.tolist() == _tokens(news["target"]).tolist()
    # the placebo is standard normal, seeded: the same seed gives the same column, another seed another
    again = S.prepare(news.assign(group=news["seg_id"]), "news", human="mqm", group="group",
                      lexical_metrics=("chrF",), syntactic_metrics=("STM",), seed=0)
    assert again.X["placebo 1"].equals(s.X["placebo 1"])
    assert abs(s.X["placebo 1"].mean()) < 0.2 and 0.8 < s.X["placebo 1"].std() < 1.2


def test_out_of_fold_equals_sklearn_refit_and_scipy_r():
    news, s = _news()
    models = ("chrF + length", "chrF + syntax + length")
    oof = S.out_of_fold(s, k=4, seed=0, models=models)
    assert oof.equals(S.out_of_fold(s, k=4, seed=0, models=models))  # seeded: identical numbers
    assert np.isfinite(oof[list(models)].to_numpy()).all() and sorted(set(oof["fold"])) == [0, 1, 2, 3]
    for f in (0, 3):
        test = (oof["fold"] == f).to_numpy()
        for m in models:
            want = _sklearn_fit(news, s, ~test, test, s.columns(m))
            assert oof.loc[test, m].to_numpy() == pytest.approx(want, rel=1e-9, abs=1e-12), (f, m)
    # no source segment in two folds
    assert news.assign(fold=oof["fold"]).groupby("seg_id")["fold"].nunique().max() == 1
    assert len(oof.attrs["alphas"]["chrF + length"]) == 4
    # the out-of-fold r the chapter's table reports is scipy's Pearson of these predictions
    t = S._tables(oof, s, n_resamples=50, seed=0, alpha=0.05)["r"].set_index("metric")
    for m in models:
        assert t.at[m, "r"] == pytest.approx(pearsonr(oof[m], news["mqm"])[0], abs=1e-12)


def test_transfer_applies_the_training_knots():
    news, s = _news()
    first = news["seg_id"] < news["seg_id"].median()
    a = S.prepare(news[first].assign(group=news["seg_id"]), "A", human="mqm", group="group",
                  lexical_metrics=("chrF",), syntactic_metrics=("STM",))
    b = S.prepare(news[~first].assign(group=news["seg_id"]), "B", human="mqm", group="group",
                  lexical_metrics=("chrF",), syntactic_metrics=("STM",))
    pred, fitted = S.transfer(a, b, models=("chrF + length",))
    q = [0.05, 0.35, 0.65, 0.95]
    assert fitted["chrF + length"].length_knots["log hyp length"] == pytest.approx(
        np.unique(np.quantile(np.log1p(_tokens(news[first]["target"])), q)))
    both = pd.concat([news[first], news[~first]], ignore_index=True)
    ab = S.MQMSet("AB", pd.concat([a.rows, b.rows], ignore_index=True), pd.concat([a.X, b.X], ignore_index=True),
                  np.r_[a.hyp_len, b.hyp_len], np.r_[a.ref_len, b.ref_len], a.groups)
    train = np.r_[np.ones(len(a.rows), bool), np.zeros(len(b.rows), bool)]
    want = _sklearn_fit(both, ab, train, ~train, ["chrF"])
    assert pred["chrF + length"].to_numpy() == pytest.approx(want, rel=1e-9, abs=1e-12)


def test_bad_input_is_named():
    news, s = _news()
    frame = news.assign(group=news["seg_id"])
    with pytest.raises(ValueError, match=r"lacks the columns \['group'\]"):
        S.prepare(news, "news", human="mqm", group="group")
    with pytest.raises(ValueError, match="1 rows without a human score"):
        S.prepare(frame.assign(mqm=frame["mqm"].mask(frame.index == 3)), "news", human="mqm", group="group")
    with pytest.raises(ValueError, match="chrF must be among"):
        S.prepare(frame, "news", human="mqm", group="group", lexical_metrics=("BLEU",))
    with pytest.raises(KeyError, match="unknown model"):
        s.columns("syntax alone")


def _planted_set(name: str, seed: int, planted: bool) -> S.MQMSet:
    """40 source segments x 4 systems of random scores; with ``planted``, STM-4 follows the human score closely."""
    rng = np.random.default_rng(seed)
    seg = np.repeat(np.arange(40), 4)
    human = rng.standard_normal(len(seg))
    noisy = lambda w: w * human + rng.standard_normal(len(seg))  # noqa: E731
    X = pd.DataFrame({c: noisy(0.3) for c in ("chrF", "STM-4", "TKM", "HWCM-4", "DSTM-4", "DTKM")})
    if planted:
        X["STM-4"] = human + 0.3 * rng.standard_normal(len(seg))
    depth = {f"{f}-{d}": noisy(0.0 if (f, d) == ("BLEU", 9) else 1.0)
             for f in ("BLEU", "STM", "HWCM", "DSTM") for d in (1, 9)}
    rows = pd.DataFrame({"system": np.tile(list("abcd"), 40), "seg_id": seg, "group": seg, "human": human})
    return S.MQMSet(name, rows, X, rng.integers(5, 40, len(seg)).astype(float),
                    rng.integers(5, 40, len(seg)).astype(float), {}, depth)


def test_replication_decides_the_chapters_claims_on_each_set():
    from syneval_nb.stats import length_covariates

    sets = {"A": _planted_set("A", 1, planted=True), "B": _planted_set("B", 2, planted=False)}
    rep = S.replication(sets, n_resamples=400, seed=0)  # 400: Holm over 16 can reach 16 / 401 < 0.05
    assert rep.equals(S.replication(sets, n_resamples=400, seed=0))  # identical inputs, identical numbers
    assert rep["chapter"].value_counts().to_dict() == {"03": 4, "04": 6, "08": 6}
    raw, beyond = "STM-4 beats chrF (MQM z, Pearson)", \
        "STM-4 beats chrF beyond length (MQM z, partial r given the length model)"
    stable = "HWCM loses less than BLEU from depth 1 to 9 (MQM z, literal mean)"
    assert rep.index[0] == raw and stable in rep.index
    a, h = sets["A"], sets["A"].rows["human"].to_numpy()
    r = lambda x: pearsonr(x, h)[0]  # noqa: E731
    assert rep.at[raw, "A estimate"] == pytest.approx(r(a.X["STM-4"]) - r(a.X["chrF"]), abs=1e-12)
    d = a.depth
    assert rep.at[stable, "A estimate"] == pytest.approx(
        (r(d["HWCM-9"]) - r(d["HWCM-1"])) - (r(d["BLEU-9"]) - r(d["BLEU-1"])), abs=1e-12)
    # beyond length: residuals on [1, the length model] by numpy's least squares
    z = np.column_stack([np.ones(len(h)), *length_covariates(a.hyp_len, a.ref_len).values()])
    res = lambda y: y - z @ np.linalg.lstsq(z, y, rcond=None)[0]  # noqa: E731
    part = lambda x: np.corrcoef(res(np.asarray(x)), res(h))[0, 1]  # noqa: E731
    assert rep.at[beyond, "A estimate"] == pytest.approx(part(a.X["STM-4"]) - part(a.X["chrF"]), abs=1e-9)
    # the planted metric beats chrF on A, first of its family of 16 (Holm: p * 16); on B it does not hold
    assert rep.at[raw, "A verdict"] == "holds" and rep.at[raw, "A low"] > 0
    assert rep.at[raw, "A p_holm"] == pytest.approx(16 / 401)
    assert rep.at[raw, "B verdict"] != "holds"
    assert (rep.loc[rep["chapter"] != "08", "B verdict"] != "holds").all()
    # BLEU's planted signal is gone at depth 9, HWCM's is not: it loses less on both sets
    assert rep.at[stable, "A verdict"] == rep.at[stable, "B verdict"] == "holds"
    text = S.replication_text(rep, "A", "B")
    same = int((rep["A verdict"] == rep["B verdict"]).sum())
    assert text.startswith(f"{same} of the 16 headline claims of chapters 03, 04, 08 replicate on B")
    assert f"holds on A, {rep.at[raw, 'B verdict']} on B: {raw}" in text
    # without the depth rows, chapter 08's claims are left out
    bare = {n: S.MQMSet(n, s.rows, s.X, s.hyp_len, s.ref_len) for n, s in sets.items()}
    assert len(S.replication(bare, n_resamples=50)) == 10
