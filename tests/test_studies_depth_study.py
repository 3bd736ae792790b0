"""studies.common and studies.depth_study on a small real sample (8 TED source segments x 13 systems, 8 WMT21
lines x 19 systems), values recomputed with scipy / numpy from the scores the study returns."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import pearsonr

from syneval_nb import stats
from syneval_nb.studies import common, depth_study as ds


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
    # the contrast: difference of differences of scipy correlations, and the same resamples in both tables
    f, a = lit.frame["mqm_fluency_z"], lit.frame["mqm_accuracy_z"]
    s, b = lit.segment[("STM", 4)], lit.segment[("BLEU", 4)]
    want = (pearsonr(s, f)[0] - pearsonr(b, f)[0]) - (pearsonr(s, a)[0] - pearsonr(b, a)[0])
    v = ch.verdicts["STM-4 beats BLEU-4 more on Fluency than on Accuracy (z)"]
    assert v["statistic"] == pytest.approx(want, abs=1e-12)
    bf = ch.heads[("Fluency z", "pearson")].attrs["bootstrap"]
    ba = ch.heads[("Accuracy z", "pearson")].attrs["bootstrap"]
    d = (bf.column("STM-4") - bf.column("BLEU-4")) - (ba.column("STM-4") - ba.column("BLEU-4"))
    assert v["ci"] == pytest.approx(list(np.percentile(d, [2.5, 97.5])), abs=1e-12)
    assert v["p"] == pytest.approx(float((d <= 0).mean()))


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
    assert list(ch.system_head["metric"]) == ["BLEU-4", "STM-4", "TKM", "length", "placebo"]
    v = ds.verdict_stability(ch.curves["literal mean"], "STM")
    lit = ch.literal
    pr = lambda k: pearsonr(lit.segment[k], lit.frame["mqm_z"])[0]  # noqa: E731
    want = (pr(("STM", 9)) - pr(("STM", 1))) - (pr(("BLEU", 9)) - pr(("BLEU", 1)))
    assert v["statistic"] == pytest.approx(want, abs=1e-12)


def test_verdict_keys_and_permuted_run(shared_data, ch):
    assert set(ch.verdicts) == {
        f"{m} {c}" for m in ("STM-4", "TKM") for c in (
            "beats BLEU-4 (MQM z, Pearson)", "beats BLEU-4 within source segments (MQM z)", "correlates with MQM z",
            "beats BLEU-4 more on Fluency than on Accuracy (z)",
            "beats BLEU-4 at system level (WMT21 de-en DA z, ref A)")}
    p = ds.run_chapter(("STM", "TKM"), shared_data, sample=8, seed=0, n_resamples=200, progress=False,
                       permute_human=1)
    assert common.no_holds({**p.verdicts, **p.variants}) == []
    with pytest.raises(ValueError, match="PRIMARY_DEPTH"):
        ds.run_chapter(("STM",), shared_data, sample=8, max_depth=3)
