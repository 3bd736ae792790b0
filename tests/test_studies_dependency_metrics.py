"""studies.dependency_metrics: the paper's worked example and the Table-7-like pick on a small real sample."""
import pytest
from scipy.stats import rankdata

from syneval_nb.studies import dependency_metrics as study


def test_worked_example_by_hand():
    ex = study.worked_example()
    assert sorted(" ".join(c) for c in ex["two_word"]) == ["have I", "have pen", "pen a", "pen red"]
    assert ex["hwcm"].score == pytest.approx((0.8 + 0.75 + 0.5) / 3)
    assert ex["dstm"].score == pytest.approx((0.8 + 0.5 + 0.0) / 3)
    assert ex["dtkm"].score == pytest.approx(4 / 17)


def test_table7_pick_and_results(shared_data):
    ch = study.run(shared_data, sample=10, seed=0, n_resamples=100, progress=False)
    t7 = study.table7_example(ch, order=4, min_words=10)
    lit = ch.literal
    # percentile ranks recomputed with scipy (average ranks / n) at the picked row
    i = int(lit.frame.index[(lit.frame["system"] == t7["row"]["system"])
                            & (lit.frame["seg_id"] == t7["row"]["seg_id"])][0])
    n = len(lit.frame)
    assert t7["hwcm_pct"] == pytest.approx(rankdata(lit.segment[("HWCM", 4)])[i] / n, abs=1e-12)
    assert t7["bleu_pct"] == pytest.approx(rankdata(lit.segment[("BLEU", 4)])[i] / n, abs=1e-12)
    assert t7["row"]["mqm_fluency"] == 0 and len(t7["row"]["target"].split()) >= 10
    assert t7["hwcm"].score == pytest.approx(lit.segment[("HWCM", 4)][i], abs=1e-12)
    r = study.results(ch, study.worked_example(), t7)
    assert r["table7_example"]["seg_id"] == int(t7["row"]["seg_id"])
    assert r["study"]["families"] == ["HWCM", "DSTM", "DTKM"]


def test_parser_study_against_the_metrics_themselves(shared_data, tmp_path):
    """Issue 26: the spaCy rows of the parser comparison are the registry metrics' own numbers (sentence scores on
    TED, corpus scores per de-en system, each recomputed here from the texts), the Collins rows are the chapter's,
    and the parser verdicts join the chapter's one Holm family."""
    import numpy as np

    from syneval_nb import stats
    from syneval_nb.metrics import registry as M

    ch = study.run(shared_data, sample=6, seed=0, n_resamples=100, progress=False)
    n_before = len(ch.verdicts) + len(ch.variants)
    cache = str(tmp_path / "parses.sqlite")
    ps = study.parser_study(ch, cache=cache, progress=False)
    f = ch.literal.frame
    for name, (fam, depth) in {"HWCM@spacy-4": ("HWCM", 4), "DSTM@spacy-4": ("DSTM", 4),
                               "DTKM@spacy": ("DTKM", None)}.items():
        m = M.get(name)
        seg = [m.sentence_score(h, [r]).score for h, r in zip(f["target"], f["reference"])]
        r = float(stats.table_row(ps.ted, name)["r"])
        assert r == pytest.approx(stats.pearson(np.array(seg), f["mqm_z"].to_numpy(float)), abs=1e-12)
        assert float(stats.table_row(ps.ted, stats.metric_name(fam, depth))["r"]) == pytest.approx(
            stats.pearson(ch.literal.segment[(fam, depth)], f["mqm_z"].to_numpy(float)), abs=1e-12)
        d = ch.deen_scores.frame
        per_sys = [M.get(name).corpus_score(M.Corpus(g["target"].tolist(), [[x] for x in g["ref_A"]],
                                                     cache=cache)).score
                   for _, g in d.groupby("system", sort=True)]
        da = ch.deen.da.sort_index()
        assert float(stats.table_row(ps.system, name)["r"]) == pytest.approx(
            stats.pearson(np.array(per_sys), da.to_numpy(float)), abs=1e-12)
    allv = {**ch.verdicts, **ch.variants}
    assert len(ps.verdicts) == 18 and len(allv) == n_before + 18 and set(ps.verdicts) <= set(ch.verdicts)
    assert {v["family_size"] for v in allv.values()} == {sum(x["verdict"] != "exploratory" for x in allv.values())}
    assert {v["test"] for v in ps.verdicts.values()} == {"beats", "beats beyond length"}
    r = study.parser_results(ps)["parser"]
    assert r["pairs"] == {"HWCM-4": "HWCM@spacy-4", "DSTM-4": "DSTM@spacy-4", "DTKM": "DTKM@spacy"}
    assert r["timing"]["distinct_sentences"] == len({*f["target"], *f["reference"], *ch.deen_scores.frame["target"],
                                                     *ch.deen_scores.frame["ref_A"]})
