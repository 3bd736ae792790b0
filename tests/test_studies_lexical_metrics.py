"""studies.lexical_metrics on a small real sample: tables against scipy, corpus BLEU against sacrebleu."""
import json

import numpy as np
import pytest
import sacrebleu
from scipy.stats import pearsonr

from syneval_nb import stats
from syneval_nb.studies import common, lexical_metrics as study, raters


def test_tables_system_level_and_verdicts(shared_data):
    ted = common.load_ted(shared_data, sample=8, seed=0)
    ls = study.score(ted, progress=False)
    seg = study.segment_tables(ls, n_resamples=100)
    r = pearsonr(ls.scores["TER"], ted["mqm_z"])[0]
    assert stats.table_row(seg, "TER", human="MQM z")["r"] == pytest.approx(r, abs=1e-12)
    assert r > 0  # TER is negated: fewer edits, better MQM
    deen = common.load_deen(shared_data, sample=8, seed=0)
    dl = study.score(deen.segments, deen.references, progress=False)
    for s, g in deen.segments.groupby("system"):
        want = sacrebleu.corpus_bleu(list(g["target"]), [list(g["ref_A"])]).score / 100
        assert dl.system.loc[s, "BLEU-4"] == pytest.approx(want, abs=1e-9)
        want = sacrebleu.corpus_chrf(list(g["target"]), [list(g["ref_A"])]).score / 100
        assert dl.system.loc[s, "chrF"] == pytest.approx(want, abs=1e-9)
    sy = stats.system_table(**study.system_scores(dl, deen.da), n_resamples=100)
    assert stats.table_row(sy, "BLEU-4")["r"] == pytest.approx(
        pearsonr(dl.system.loc[deen.da.index, "BLEU-4"], deen.da)[0], abs=1e-12)
    within = study.segment_tables(ls, method="within", n_resamples=100)
    partial = study.segment_tables(ls, n_resamples=100, beyond_length=True)
    aspects = study.segment_tables(ls, common.ASPECTS, n_resamples=100)
    claims = study.claims(ls.claim_metrics)
    assert ls.claim_metrics == ["BLEU-4", "NIST", "WER", "PER", "F-measure", "GTM", "ROUGE-S", "METEOR", "TER", "chrF"]
    assert [c.claim for c in claims if c.primary] == list(study.PRIMARY)
    v = stats.decide_claims(claims, study.tables(seg, partial, within, aspects, sy))
    assert list(v) == [c.claim for c in claims]
    # the claims as data: BLEU-4's, in the order the chapter lists them (chrF is its only other baseline)
    assert [(c.test, c.baseline, c.on) for c in claims[:9]] == [
        ("correlates", None, "MQM z"), ("correlates", None, "beyond length"), ("beats the placebo", None, "MQM z"),
        ("beats", "chrF", "MQM z"), ("beats", "chrF", "beyond length"), ("beats", "chrF", "within"),
        ("beats", "chrF", "system"), ("beats the placebo", None, "system"), ("edge", "chrF", "Accuracy z")]
    bl = lambda m: pearsonr(ls.scores[m], ted["mqm_z"])[0] - pearsonr(ls.scores["chrF"], ted["mqm_z"])[0]  # noqa: E731
    assert v["METEOR beats chrF (MQM z, Pearson)"]["statistic"] == pytest.approx(bl("METEOR"), abs=1e-12)
    assert v["METEOR beats BLEU-4 (MQM z, Pearson)"]["statistic"] == pytest.approx(bl("METEOR") - bl("BLEU-4"),
                                                                                   abs=1e-12)
    assert "chrF beats chrF (MQM z, Pearson)" not in v and "chrF beats BLEU-4 (MQM z, Pearson)" in v
    assert {v[c]["verdict"] for c in v if c not in study.PRIMARY} == {"exploratory"}
    assert len(study.claims(ls.claim_metrics, system=False)) == len(claims) - 10 * 3 + 2  # no system claims
    c = v["BLEU-4 tracks Accuracy better than Fluency, more than chrF does (z)"]
    b, f = ls.scores["BLEU-4"], ls.scores["chrF"]
    gap = lambda x: pearsonr(x, ted["mqm_accuracy_z"])[0] - pearsonr(x, ted["mqm_fluency_z"])[0]  # noqa: E731
    assert c["statistic"] == pytest.approx(gap(b) - gap(f), abs=1e-12)
    # the edge it requires is BLEU-4's own edge over chrF on Accuracy z, the table it is decided on
    assert c["requires"]["text"] == "BLEU-4's own edge r(BLEU-4) - r(chrF) on Accuracy"
    # 10 metrics: correlates (x2), placebo, system permutation = 4 each; beats vs chrF and BLEU-4 (Pearson, beyond
    # length, within, system) = 4 per baseline (chrF and BLEU-4 against each other only); 9 contrasts
    assert len(v) == 10 * 4 + 8 * 8 + 2 * 4 + 9
    assert {x["family_size"] for x in v.values()} == {sum(x["verdict"] != "exploratory" for x in v.values())}
    assert np.isfinite([x["statistic"] for x in v.values()]).all()


def test_rater_allocation_on_the_full_ted_data(shared_data):
    """Issue 35 point 7: the allocation table, recomputed with plain pandas groupby on the loaded rows."""
    ted = common.load_ted(shared_data)
    a = raters.rater_allocation(ted)
    per_seg = ted.groupby("seg_id")["rater"].nunique()
    want = {k: int((per_seg == k).sum()) for k in sorted(per_seg.unique())}
    assert a["segments by raters"].to_dict() == want == {3: 8, 4: 85, 5: 143, 6: 188, 7: 98, 8: 7}  # the issue's
    counts = ted.groupby(["rater", "system"]).size()
    assert all(a["rows"].loc[r, s] == n for (r, s), n in counts.items()) and a["rows"].to_numpy().sum() == len(ted)
    assert (a["rows"].loc["rater3", "Online-W"], a["rows"].loc["rater3", "DIDI-NLP"]) == (211, 82)
    means = ted.groupby("rater")["mqm"].mean()
    assert a["raters"]["mean"].to_dict() == pytest.approx(means.to_dict(), abs=1e-12)
    assert a["raters"].index[-1] == "rater3" and a["raters"]["mean"].iloc[-1] == pytest.approx(-4.8992, abs=1e-4)
    assert a["raters"].index[0] == "rater6" and a["raters"]["mean"].iloc[0] == pytest.approx(-0.7954, abs=1e-4)
    assert "3: 8, 4: 85, 5: 143, 6: 188, 7: 98, 8: 7" in a["text"] and "211 Online-W rows but 82 DIDI-NLP" in a["text"]
    assert "from -0.80 (rater6) to -4.90 (rater3)" in a["text"]


def _pair_r(x, y, groups):
    """Brute force: the within-group Pearson r from the pairs of each group, (x_i - x_j)(y_i - y_j) summed over
    the pairs i < j of a group and weighted by 1 / group size (= the centred cross-product of the group)."""
    sxy = sxx = syy = 0.0
    for g in set(groups):
        idx = [i for i, gi in enumerate(groups) if gi == g]
        w = 1 / len(idx)
        for a in range(len(idx)):
            for b in range(a + 1, len(idx)):
                dx, dy = x[idx[a]] - x[idx[b]], y[idx[a]] - y[idx[b]]
                sxy, sxx, syy = sxy + w * dx * dy, sxx + w * dx * dx, syy + w * dy * dy
    return sxy / np.sqrt(sxx * syy)


def test_same_rater_recheck_by_brute_force(shared_data):
    ted = common.load_ted(shared_data, sample=12, seed=1)
    x = ted["target"].str.len().to_numpy(dtype=float)  # two cheap "metrics"
    y = ted["target"].str.count(",").to_numpy(dtype=float) - x / 50
    h = ted["mqm_z"].to_numpy(dtype=float)
    claims = {"x correlates": (lambda t: stats.verdict_correlates(t, "x"), False),
              "x beats y": (lambda t: stats.verdict_beats(t, "x", "y"), False)}
    rc = raters.same_rater_recheck({"x": x, "y": y}, ted, claims, n_resamples=200)
    cells = list(zip(ted["seg_id"], ted["rater"]))
    segs = list(ted["seg_id"])
    same, every = rc["same rater"], rc["all pairs"]
    assert same["x correlates"]["statistic"] == pytest.approx(_pair_r(x, h, cells), abs=1e-12)
    assert every["x correlates"]["statistic"] == pytest.approx(_pair_r(x, h, segs), abs=1e-12)
    assert every["x correlates"]["statistic"] == pytest.approx(stats.within_segment(x, h, segs), abs=1e-12)
    assert same["x beats y"]["statistic"] == pytest.approx(_pair_r(x, h, cells) - _pair_r(y, h, cells), abs=1e-12)
    assert same["x correlates"]["statistic"] != pytest.approx(every["x correlates"]["statistic"], abs=1e-3)
    sizes = ted.groupby(["seg_id", "rater"]).size()
    assert rc["n_pairs"] == {"all pairs": 12 * 13 * 12 // 2, "same rater": int((sizes * (sizes - 1) // 2).sum())}
    assert rc["n_segments"]["same rater"] == sizes[sizes >= 2].reset_index()["seg_id"].nunique()
    # 12 segments: below the cluster floor (MIN_UNITS = 20), exploratory on both sets of pairs, out of Holm
    assert {v["verdict"] for p in ("all pairs", "same rater") for v in rc[p].values()} == {"exploratory"}
    assert {v["family_size"] for p in ("all pairs", "same rater") for v in rc[p].values()} == {0}
    again = raters.same_rater_recheck({"x": x, "y": y}, ted, claims, n_resamples=200)
    assert json.dumps(again) == json.dumps(rc)  # identical inputs, identical numbers (NaN p_holm too)


def test_same_rater_recheck_matches_the_chapter_within_table(shared_data):
    """On all pairs the re-check is the chapter's within-segment verdict (same resamples); beyond length it is
    the partial r of the cell-centred values, recomputed by least squares."""
    ted = common.load_ted(shared_data, sample=25, seed=0)
    ls = study.score(ted, progress=False)
    within = study.segment_tables(ls, method="within", n_resamples=200)
    claims = {c.claim: (lambda t, c=c: c.decide({c.on: t}), c.on == "beyond length")  # as notebook 02 re-checks
              for c in study.claims(ls.claim_metrics) if c.primary}
    rc = raters.same_rater_recheck({m: ls.scores[m] for m in ("BLEU-4", "METEOR", "chrF")}, ted, claims, ls.given,
                                   n_resamples=200)
    want = stats.verdict_beats(within, "BLEU-4", "chrF", human="MQM z")
    got = rc["all pairs"]["BLEU-4 beats chrF (MQM z, Pearson)"]
    assert got["statistic"] == pytest.approx(want["statistic"], abs=1e-12)
    assert got["ci"] == pytest.approx(want["ci"], abs=1e-9)
    cells = ted["seg_id"].astype(str) + "|" + ted["rater"]
    c = lambda v: stats.center_within(np.asarray(v, dtype=float), cells)  # noqa: E731
    z = np.column_stack([np.ones(len(ted))] + [c(v) for v in ls.given.values()])
    res = lambda v: c(v) - z @ np.linalg.lstsq(z, c(v), rcond=None)[0]  # noqa: E731
    r = pearsonr(res(ls.scores["chrF"]), res(ted["mqm_z"]))[0]
    got = rc["same rater"]["chrF correlates with MQM z beyond length"]
    assert got["statistic"] == pytest.approx(r, abs=1e-9) and got["family_size"] == 6
    assert got["test"] == "correlates beyond length"
    for pairs in ("all pairs", "same rater"):  # the kit's rule on Holm over the six re-checked claims
        assert list(rc[pairs]) == list(study.PRIMARY) and rc["n_segments"][pairs] == 25
        for v in rc[pairs].values():
            assert v["p_holm"] >= v["p"] and v["family_size"] == 6
            assert v["verdict"] == stats.decide(v["ci"], v["p_holm"], 0.05, n_units=25)
    assert rc["survives"] == {c: rc["all pairs"][c]["verdict"] == rc["same rater"][c]["verdict"] for c in study.PRIMARY}
    text = raters.recheck_lines(rc, {c: {"verdict": "v"} for c in study.PRIMARY})
    assert text.count("**survives**") == sum(rc["survives"].values()) and text.count("\n* ") == 6
