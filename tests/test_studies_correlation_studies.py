"""studies.correlation_studies on a small real sample: per-system r against scipy, references, raters."""
import pytest
from scipy.stats import pearsonr

from syneval_nb import stats

from syneval_nb.studies import correlation_studies as study


def test_chapter_on_a_small_sample(shared_data):
    c8 = study.run(shared_data, sample=8, seed=0, families=("stm", "tkm"), n_resamples=100, progress=False)
    lit = c8.ch.literal
    m = (lit.frame["system"] == "Borderline").to_numpy()
    t = c8.per_system["MQM z"]
    got = t[(t["system"] == "Borderline") & (t["metric"] == "STM-4")]["r"].iloc[0]
    assert got == pytest.approx(pearsonr(lit.segment[("STM", 4)][m], lit.frame["mqm_z"][m])[0], abs=1e-12)
    assert list(c8.deen_variants.columns) == ["A", "B", "A+B"]
    assert c8.deen_variants.loc["BLEU-4", "A"] == pytest.approx(c8.ch.system_curves.set_index("metric").loc["BLEU-4", "r"])
    assert c8.comet["A"] == pytest.approx(0.361, abs=5e-4)  # the shared README's COMET (ref-A) vs DA z
    human = lit.frame.groupby("system")["mqm_z"].mean()
    r = pearsonr(lit.corpus.loc[human.index, ("TKM", None)], human)[0]
    assert c8.ted_system.set_index("metric").loc["TKM", "r"] == pytest.approx(r, abs=1e-12)
    # the chapter's own claims, as data: the depth claim and its twin (primary) for STM, TED system level for both
    own = study.claims(("STM", "TKM"), ["TKM λ=0.4"])
    assert [(c.claim, c.test, c.metric, c.baseline, c.than, c.on, c.primary) for c in own[:2]] == [
        ("STM loses less than BLEU from depth 1 to 9 (MQM z, literal mean)", "loses less", "STM-9", "STM-1",
         ("BLEU-9", "BLEU-1"), "curves", True),
        ("STM loses less than BLEU from depth 1 to 9 beyond length (MQM z, literal mean, partial r given the length "
         "model)", "loses less", "STM-9", "STM-1", ("BLEU-9", "BLEU-1"), "curves beyond length", True)]
    assert [c.claim for c in own[2:5]] == [f"STM-4 beats {b} at system level (TED zh-en, mean MQM z, 13 systems)"
                                           for b in ("chrF", "BLEU-4")] + [
        "STM-4 beats permuted human scores at system level (TED zh-en, mean MQM z, 13 systems)"]
    assert len(own) == 2 + 3 * 3 and not any(c.primary for c in own[2:])
    assert [c.primary for c in study.claims(("TKM", "STM", "HWCM", "DSTM"), max_depth=6)] == [True] * 6 + [False] * 12
    assert [c.claim for c in own] == list(c8.verdicts)[-len(own):]  # after the depth chapter's, in this order
    pr = lambda k: pearsonr(lit.segment[k], lit.frame["mqm_z"])[0]  # noqa: E731
    v = c8.verdicts["STM loses less than BLEU from depth 1 to 9 (MQM z, literal mean)"]
    assert v["statistic"] == pytest.approx((pr(("STM", 9)) - pr(("STM", 1))) - (pr(("BLEU", 9)) - pr(("BLEU", 1))),
                                           abs=1e-12)
    assert v["family_size"] == 0 and v["verdict"] == "exploratory"  # 8 source segments: below the cluster floor
    r = study.results(c8, {})  # the worked examples live in the notebook (check_08 pins them)
    assert r["ted"]["n_rows"] == 104
    # issue 35: the allocation of the sample's rows and the depth claims re-checked on same-rater pairs
    ted = c8.ch.ted
    got = {s: n for s, n in r["raters"]["allocation"]["rows"]["rater3"].items() if n}  # crosstab: zeros too
    assert got == ted[ted["rater"] == "rater3"].groupby("system").size().to_dict()
    rc = c8.raters
    claim = "STM loses less than BLEU from depth 1 to 9 (MQM z, literal mean)"
    assert list(rc["same rater"]) == [claim, claim.replace(" (MQM z, literal mean)", " beyond length (MQM z, literal "
                                                                                     "mean, partial r given the length model)")]
    cells = (lit.frame["seg_id"].astype(str) + "|" + lit.frame["rater"]).to_numpy()
    w = lambda k, g: stats.within_segment(lit.segment[k], lit.frame["mqm_z"], g)  # noqa: E731
    for pairs, g in (("all pairs", lit.frame["seg_id"].to_numpy()), ("same rater", cells)):
        want = (w(("STM", 9), g) - w(("STM", 1), g)) - (w(("BLEU", 9), g) - w(("BLEU", 1), g))
        assert rc[pairs][claim]["statistic"] == pytest.approx(want, abs=1e-12)
        assert rc[pairs][claim]["verdict"] == "exploratory"  # 8 source segments: below the cluster floor
