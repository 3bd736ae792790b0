"""Tests of syneval_nb.studies.hybridization (notebook 06's study code): the Table 6 comparison in both framings
on the same resamples (against scipy and stats.paired_bootstrap) and the claims decided on it. The scoring
helpers moved here (syntactic_scores, reference_gain_table, system_scores) keep their tests in tests/test_hybrid.py."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.stats

from syneval_nb import stats
from syneval_nb.studies import hybridization as H


def _scores(seed=0):
    rng = np.random.default_rng(seed)
    seg = np.repeat(np.arange(40), 3)
    human = rng.normal(size=120)
    cols = {"1 manual (ref)": human + 2.0 * rng.normal(size=120), "1 manual (refB)": human + 0.8 * rng.normal(size=120)}
    cols["2 manual"] = cols["1 manual (refB)"] + 0.1 * rng.normal(size=120)
    cols["2 manual + hybrid"] = cols["2 manual"] + 0.01 * rng.normal(size=120)
    cols[H.PLACEBO_SET] = cols["2 manual"] + 0.01 * rng.normal(size=120)
    scores = pd.DataFrame({("BLEU", k): v for k, v in cols.items()})
    scores.columns = pd.MultiIndex.from_tuples(scores.columns)
    return scores, human, seg, cols


def test_reference_value_both_framings():
    scores, human, seg, cols = _scores()
    t = H.reference_value(scores, "BLEU", human, seg, n_resamples=300, seed=1)
    r = {k: scipy.stats.pearsonr(v, human)[0] for k, v in cols.items()}
    assert t.at["1 manual (refB)", "r"] == pytest.approx(r["1 manual (refB)"])
    assert t.at["1 manual (average)", "r"] == pytest.approx((r["1 manual (ref)"] + r["1 manual (refB)"]) / 2)
    assert t.at["second reference (vs best)", "r"] == pytest.approx(r["2 manual"] - r["1 manual (refB)"])
    assert t.at["hybrids", "r"] == pytest.approx(r["2 manual + hybrid"] - r["2 manual"])
    # the same resamples as a paired bootstrap of the two sets
    pb = stats.paired_bootstrap(cols["2 manual"], cols["1 manual (refB)"], human, segments=seg, n_resamples=300,
                                seed=1)
    assert (t.at["second reference (vs best)", "low"], t.at["second reference (vs best)", "high"]) == pytest.approx(
        (pb.delta.low, pb.delta.high))
    # the second reference (a near copy of refB) adds a lot over the average, nothing over the best one
    gains = H.reference_gain_table(scores, human, "2 manual", seg, n_resamples=300, seed=1)
    tb = H.tables([{"MQM z": gains}], [{"MQM z": t}])
    assert list(tb) == ["reference sets of BLEU", "Table 6"]
    with pytest.raises(KeyError, match="reads table 'reference sets of BLEU beyond length'"):
        stats.decide_claims(H.claims(["BLEU"]), tb)  # the beyond-length twins need their own tables
    plain = [c for c in H.claims(["BLEU"]) if "beyond length" not in c.claim]
    v = stats.decide_claims(plain, tb, holm=False)
    assert v["two human references beat one, average of single references (BLEU, TED MQM z)"]["verdict"] == "holds"
    assert v["two human references beat one, best single reference refB (BLEU, TED MQM z)"]["verdict"] != "holds"
    assert v["hybrids help BLEU (2 manual + hybrid beats 2 manual, TED MQM z)"]["statistic"] == pytest.approx(
        r["2 manual + hybrid"] - r["2 manual"])
    # the hybrids against the splices and against the two references, four Table 6 claims; no chrF claim without
    # chrF among the metrics
    assert len(v) == 6 and not any("chrF" in c for c in v)


def test_real_hybrid_helpers_by_hand():
    """Two toy segments: "They fly" / "It flies" (two hybrids, both with new seams) and one without any
    equivalent below the root ("Yes" / "No" have different labels: only the roots pair, no hybrid)."""
    from syneval_nb.metrics.hybrid import hybridize_corpus
    from syneval_nb.trees import read_ptb

    segs = [[read_ptb("(S (NP (PRP They)) (VP (VBP fly)))"), read_ptb("(S (NP (PRP It)) (VP (VBZ flies)))")],
            [read_ptb("(S (INTJ (UH Yes)))"), read_ptb("(S (NP (DT No)))")]]
    texts = [["They fly", "It flies"], ["Yes", "No"]]
    plain = dict(enumerate(hybridize_corpus(segs, texts=texts, progress=False)))
    checked = dict(enumerate(hybridize_corpus(segs, texts=texts, progress=False, well_formed="seams")))
    ch = H.HybridChapter(ted=pd.DataFrame(), seg=pd.DataFrame(), da={}, ted_sets=plain, deen_sets={0: plain[1]})
    cov = H.coverage_table(ch, {"TED zh-en": checked, "WMT21 de-en": {0: checked[1]}})
    assert cov["TED zh-en"].to_dict() == {
        "segments": 2, "segments with a hybrid": 1, "share with a hybrid": 0.5, "hybrids": 2,
        "hybrids per segment with one": 2.0, "segments with a hybrid (seams checked)": 0,
        "share with a hybrid (seams checked)": 0.0, "hybrids (seams checked)": 0, "removed by the check": 2}
    assert cov["WMT21 de-en"]["segments with a hybrid"] == 0
    ex = H.hybrid_examples(ch, n_per_set=3)
    # the first hybrid of the enumeration: root 0 ("They fly") with its subject swapped
    assert ex.to_dict("records") == [{"data": "TED zh-en", "seg_id": 0, "host reference": "They fly",
                                      "hybrid": "It fly", "swapped": "They -> It", "swaps": 1,
                                      "seams attested": False}]


def test_placebo_splices_by_hand():
    """The placebo of "They fly" / "It flies": as many random splices as hybrids, each of the same host with a
    one-word span at a random position replaced by a one-word span of the other reference (the real swaps are
    one word each); seeded, so the same seed gives the same texts."""
    from syneval_nb.metrics.hybrid import hybridize_corpus
    from syneval_nb.trees import read_ptb

    segs = [[read_ptb("(S (NP (PRP They)) (VP (VBP fly)))"), read_ptb("(S (NP (PRP It)) (VP (VBZ flies)))")]]
    sets = dict(enumerate(hybridize_corpus(segs, texts=[["They fly", "It flies"]], progress=False)))
    hybrids = [h for h in sets[0].hybrids if not h.is_original]
    p = H.placebo_sets(sets, seed=3)[0]
    assert len(p) == len(sets[0].hybrids) == 4 and p[:2] == ["They fly", "It flies"]
    by_host = {"They fly": {"It fly", "flies fly", "They It", "They flies"},
               "It flies": {"They flies", "fly flies", "It They", "It fly"}}
    for h, text in zip(hybrids, p[2:]):
        assert text in by_host[sets[0].originals[h.source].text], (h.text, text)
    assert H.placebo_sets(sets, seed=3) == {0: p}
    assert {tuple(H.placebo_sets(sets, seed=s)[0]) for s in range(20)} != {tuple(p)}  # the seed matters


def test_hybrids_help_needs_the_edge_over_the_placebo_and_the_chrf_claim():
    """A hybrid set that beats the two references but not the random splices: "hybrids help" cannot hold; "BLEU
    with hybrids beats chrF" is r(BLEU, extended) - r(chrF, 2 manual) (scipy)."""
    rng = np.random.default_rng(1)
    seg = np.repeat(np.arange(60), 3)
    human = rng.normal(size=180)
    two = human + 1.0 * rng.normal(size=180)
    cols = {"2 manual": two, "2 manual + hybrid": two + 0.3 * human, H.PLACEBO_SET: two + 0.6 * human}
    scores = pd.DataFrame({(m, k): v + (0.5 * rng.normal(size=180) if m == "chrF" else 0)
                           for m in ("chrF", "BLEU") for k, v in cols.items()})
    scores.columns = pd.MultiIndex.from_tuples(scores.columns)
    gains = H.reference_gain_table(scores, human, "2 manual", seg, n_resamples=200)
    value_scores = pd.DataFrame({("BLEU", k): v for k, v in {"1 manual (ref)": two, "1 manual (refB)": two,
                                                             **cols}.items()})
    value = H.reference_value(value_scores, "BLEU", human, seg, n_resamples=200)
    ted = pd.DataFrame({"mqm_z": human, "seg_id": seg})
    chrf = H.baseline_table(scores, ted, n_resamples=200)
    tb = H.tables([{"MQM z": gains}], [{"MQM z": value}], [chrf])
    v = stats.decide_claims([c for c in H.claims(["chrF", "BLEU"]) if c.on in tb], tb, holm=False)
    helps = v["hybrids help BLEU (2 manual + hybrid beats 2 manual, TED MQM z)"]
    assert helps["ci"][0] > 0 and helps["requires"]["ci"][1] < 0 and helps["verdict"] == "cannot tell"
    assert "random splices" in helps["requires"]["text"] and "random splices" in helps["rule"]
    # the edge's interval, by hand on the table's resamples
    b = gains.attrs["bootstrap"]["BLEU"]
    edge = b.column("2 manual + hybrid") - b.column(H.PLACEBO_SET)
    assert helps["requires"]["ci"] == pytest.approx(list(np.percentile(edge, [2.5, 97.5])), abs=1e-12)
    assert v["hybrids beat random splices for BLEU (2 manual + hybrid beats 2 manual + random splices, TED MQM z)"][
        "verdict"] == "does not hold"
    c = v["BLEU with hybrids beats chrF (2 manual + hybrid vs chrF with 2 manual, TED MQM z)"]
    expected = (scipy.stats.pearsonr(scores[("BLEU", "2 manual + hybrid")], human)[0]
                - scipy.stats.pearsonr(scores[("chrF", "2 manual")], human)[0])
    assert c["statistic"] == pytest.approx(expected, abs=1e-12) and c["test"] == "beats"
    assert not any("chrF with hybrids beats chrF" in k for k in v)
    # a claim with requires= is a "beats" claim with a (row, text) pair
    with pytest.raises(ValueError, match="requires"):
        stats.Claim("x", "correlates", "BLEU", requires=("a", "b"))
