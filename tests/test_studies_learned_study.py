"""Tests of syneval_nb.studies.learned_study (chapter 10: does syntax add beyond chrF and length?) on hand examples
and a small real sample of newstest2021 zh-en, each number recomputed with sacrebleu, numpy, scikit-learn or
scipy."""
from __future__ import annotations

import json
import logging
import sys
from functools import lru_cache
from pathlib import Path

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
    with pytest.raises(ValueError, match=r"lacks the columns \['raw'\]"):
        S.prepare(frame, "news", human="mqm", group="group", tie_human="raw")
    with pytest.raises(ValueError, match=r"1 rows without a human score \('raw'\)"):
        S.prepare(frame.assign(raw=frame["mqm"].mask(frame.index == 3)), "news", human="mqm", group="group",
                  tie_human="raw")
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


# ------------------------------------------------------------------------------ acc_eq, system level, claims (issue 36)

ORACLES = Path(__file__).resolve().parents[2] / "shared" / "oracles"


def _mtme():
    if not (ORACLES / "mt_metrics_eval" / "stats.py").is_file():
        raise RuntimeError(f"the mt-metrics-eval oracle is not at {ORACLES}; put ../shared beside the checkout")
    if str(ORACLES) not in sys.path:
        sys.path.insert(0, str(ORACLES))
    from mt_metrics_eval import stats as mtme_stats

    return mtme_stats


@lru_cache(maxsize=1)
def _ted():
    """30 TED source segments x 13 systems (5 talks), chrF and STM features, human MQM z, acc_eq on the raw MQM,
    as the chapter prepares TED; and their out-of-fold predictions (3 talk-grouped folds)."""
    from syneval_nb.data import load_ted_zhen_mqm, sample_segments

    ted = load_ted_zhen_mqm()
    ted = sample_segments(ted[~ted["is_human"]], 30, 0)
    s = S.prepare(ted, "TED", human="mqm_z", group="doc", reference="refB", tie_human="mqm",
                  lexical_metrics=("chrF",), syntactic_metrics=("STM",), seed=0)
    return ted, s, S.out_of_fold(s, k=3, seed=0, models=("length", "chrF + length", "chrF + placebo + length"))


def _oracle_acc_eq(frame: pd.DataFrame, metric: str, human: str):
    """mt-metrics-eval's own acc_eq (``KendallWithTiesOpt``, acc23, averaged by item, every pair), on the
    system-major packing it expects."""
    f = frame.sort_values(["system", "seg_id"], kind="stable")
    n_sys = f["system"].nunique()
    assert len(f) == n_sys * f["seg_id"].nunique()
    acc, eps, _ = _mtme().KendallWithTiesOpt(list(f[human]), list(f[metric]), "acc23", n_sys, "item", 1.0)
    return acc, eps


def test_acc_eq_is_mtme_acc23_against_the_raw_mqm():
    ted, s, oof = _ted()
    # the score acc_eq reads is TED's raw MQM, shuffled with MQM z by the same permutation in the permuted run
    assert s.rows["tie human"].tolist() == ted["mqm"].tolist()
    shuffled = S.prepare(ted, "TED", human="mqm_z", group="doc", reference="refB", tie_human="mqm",
                         lexical_metrics=("chrF",), syntactic_metrics=(), permute_human=1)
    pairs = set(zip(ted["mqm_z"], ted["mqm"]))
    assert set(zip(shuffled.rows["human"], shuffled.rows["tie human"])) <= pairs
    assert not np.array_equal(shuffled.rows["human"], s.rows["human"])
    frame = ted.assign(**{m: oof[m].to_numpy() for m in oof.columns if m != "fold"})
    acc = S._acc_eq(oof, s)
    for m in ("length", "chrF + length", "chrF + placebo + length"):
        want, eps = _oracle_acc_eq(frame, m, "mqm")
        assert acc[m].acc_eq == pytest.approx(want, abs=1e-12) and acc[m].epsilon == eps, m
    # on this sample, mtme's own numbers: against MQM z (the old target, ties of identical outputs lost) the model
    # with random columns beat chrF + length; against the raw MQM it does not
    z = {m: _oracle_acc_eq(frame, m, "mqm_z")[0] for m in ("chrF + length", "chrF + placebo + length")}
    raw = {m: _oracle_acc_eq(frame, m, "mqm")[0] for m in z}
    assert z["chrF + placebo + length"] > z["chrF + length"]
    assert raw["chrF + placebo + length"] < raw["chrF + length"]
    # the cause: translations identical within a segment (equal predictions) tied in raw MQM, not in MQM z
    same = ted.merge(ted, on="seg_id").query("system_x < system_y and target_x == target_y")
    assert len(same) > 0
    assert (same["mqm_x"] == same["mqm_y"]).mean() > 2 * (same["mqm_z_x"] == same["mqm_z_y"]).mean()


def test_system_table_over_segments_equals_scipy_and_mtme_agreement():
    """stats.system_table over source segments (chapter 10's system level, ``ch.systems``): r of the system means
    and their pairwise accuracy, and both intervals, each resample's r from scipy.stats.pearsonr and its accuracy
    from mt-metrics-eval's Agreement on the resample written out row by row."""
    from scipy.stats import pearsonr
    from syneval_nb import stats

    ted, s, oof = _ted()
    B = 60
    t = stats.system_table({m: oof[m] for m in oof.columns if m in S.MODELS}, s.rows["human"], s.rows["system"],
                           segments=s.rows["seg_id"], n_resamples=B, seed=3).set_index("metric")
    assert list(t.index) == ["length", "chrF + length", "chrF + placebo + length"]
    frame = ted.assign(pred=0.0)
    uniq, codes = np.unique(ted["seg_id"], return_inverse=True)
    draws = np.random.default_rng(3).integers(0, len(uniq), size=(B, len(uniq)))  # the segment draws, by hand
    for m in t.index:
        frame["pred"] = oof[m].to_numpy()
        means = frame.groupby("system")[["pred", "mqm_z"]].mean()
        assert t.at[m, "r"] == pytest.approx(pearsonr(means["pred"], means["mqm_z"])[0], abs=1e-12)
        agree, pairs = _mtme().Agreement(list(means["mqm_z"]), list(means["pred"]))
        assert (t.at[m, "accuracy"], t.at[m, "pairs"], t.at[m, "systems"]) == (pytest.approx(agree / pairs), 78, 13)
        rs, accs = [], []
        for d in draws:
            rows = np.concatenate([np.flatnonzero(codes == u) for u in d])
            mm = frame.iloc[rows].groupby("system")[["pred", "mqm_z"]].mean()
            rs.append(pearsonr(mm["pred"], mm["mqm_z"])[0])
            a, p = _mtme().Agreement(list(mm["mqm_z"]), list(mm["pred"]))
            accs.append(a / p)
        assert [t.at[m, "low"], t.at[m, "high"]] == pytest.approx(np.percentile(rs, [2.5, 97.5]), abs=1e-12)
        assert [t.at[m, "acc low"], t.at[m, "acc high"]] == pytest.approx(np.percentile(accs, [2.5, 97.5]),
                                                                          abs=1e-12)


def test_claims_decide_as_verdict_beats_with_holm_over_the_primary():
    from syneval_nb import stats
    from syneval_nb.studies import common

    news, s = _news()
    oof = S.out_of_fold(s, k=3, seed=0, models=tuple(S.MODELS))
    tables = {st: S._tables(oof, s, n_resamples=100, seed=i, alpha=0.05) for i, st in enumerate(S.SETTINGS)}
    claims = S.claims()
    assert len(claims) == 48 and sorted(c.claim for c in claims if c.primary) == sorted(S.PRIMARY)
    got = stats.decide_claims(claims, {(st, how): t for st in S.SETTINGS for how, t in tables[st].items()})
    old = {f"{c} ({st}, {how})": stats.verdict_beats(tables[st][how], *pair, alpha=0.05)
           for st in S.SETTINGS for c, pair in S.CLAIMS.items() for how in S.MEASURES}
    (old,) = common.holm_chapter(old, primary=S.PRIMARY)
    assert list(got) == list(old)
    assert json.dumps(common.verdicts_json(got)) == json.dumps(common.verdicts_json(old))  # NaN p_holm included
