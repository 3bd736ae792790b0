"""Checks for notebooks/06_hybridization.ipynb on the CI sample (50 random segments of each data set, seed 0)."""
from __future__ import annotations

import pytest

PARAMS = {"sample": 50, "n_resamples": 200}
PERMUTED_PARAMS = {**PARAMS, "permute_human": 1}


def check_permuted(result: dict) -> None:
    """With every human score shuffled nothing may beat or correlate: no verdict "holds"."""
    assert result["parameters"]["permute_human"] == 1
    held = [c for c, v in result["verdicts"].items() if v["verdict"] == "holds"]
    assert held == [], held
    decided = [c for c, v in result["verdicts"].items() if v["verdict"] != "exploratory"]
    assert len(result["verdicts"]) == 40 and len(decided) == 6  # the six primary claims were decided
    # the MQM really was shuffled: BLEU's r with it, recomputed independently (the switch's shuffle of every MT
    # row's MQM before the sample is drawn, sacrebleu's sentence_bleu, scipy), against 0.285895 unshuffled
    r = _bleu_r(permute_human=1)
    assert result["table3_original_r"]["MQM"]["BLEU"] == pytest.approx(r, abs=1e-9) and abs(r) < 0.05


def check(result: dict) -> None:
    # the paper's worked examples (Sections 2-4)
    assert result["figure1_n_pairs"] == 5
    assert result["figure1_n_references"] == 8
    assert result["alabama_n_additional"] == 6
    assert result["ted_n_segments"] == 50 and result["ted_n_rows"] == 650  # 13 MT systems
    assert result["deen_n_segments"] == 50
    # hybridization on the sample (measured: 2.82 and 4.68 references per segment, nothing capped at 64)
    cap = result["cap"]
    assert 2.5 < cap["TED zh-en"]["refs_per_segment"] < 3.2
    assert 4.0 < cap["WMT21 de-en"]["refs_per_segment"] < 5.2
    assert cap["TED zh-en"]["max_refs_per_segment"] <= result["max_refs"]
    # plain detokenization vs raw text, 13a tokens (measured: 88% / 78% identical; every reference aligned)
    for ref in ("reference A", "reference B"):
        d = result["detokenization"][ref]
        assert 0.6 < d["identical 13a tokens"] < 0.95 and d["token edit rate"] < 0.1 and d["aligned"] == 1.0
    # Table 5 analog (measured: 21.5 / 18.1 words, 40.5 / 31.7 nodes, 5.0 / 4.5 equivalent nodes per reference)
    t5 = result["table5"]
    assert 18 < t5["TED zh-en"]["Average length of reference"] < 25
    assert 3 < t5["TED zh-en"]["Average equivalent nodes"] < 7
    assert 3 < t5["WMT21 de-en"]["Average equivalent nodes"] < 9
    # Table 3 analog: segment-level r with MQM (raw; measured: BLEU .286, GTM .370, ROUGE-S .292, METEOR .271) and
    # MQM z (BLEU .317); the extended set changes r by less than 0.01 either way
    orig = result["table3_original_r"]
    for metric, r in {"BLEU": 0.285895, "GTM": 0.370442, "ROUGE-S": 0.291733, "METEOR": 0.270947}.items():
        assert orig["MQM"][metric] == pytest.approx(r, abs=1e-6), (metric, orig["MQM"][metric])
        for human in ("MQM", "MQM z"):
            ext = result["table3_extended"][human][metric]
            assert abs(ext["delta"]) < 0.01 and ext["delta_low"] <= ext["delta"] <= ext["delta_high"]
    assert orig["MQM z"]["BLEU"] == pytest.approx(0.317451, abs=1e-6)
    # BLEU with both references, recomputed independently: sacrebleu's sentence_bleu and scipy
    assert orig["MQM"]["BLEU"] == pytest.approx(_bleu_r(), abs=1e-9)
    # Table 4 analog, 19 systems (measured r: BLEU .442, METEOR .563 with A+B)
    assert result["table4_original_r"]["BLEU"] == pytest.approx(0.441875, abs=1e-6)
    assert all(abs(v["delta"]) < 0.1 for v in result["table4_extended"].values())
    # Table 6 analog (MQM z): one reference < two references; both framings of the second reference's gain
    t6 = result["table6"]["MQM z"]
    assert t6["1 manual (average)"]["r"] == pytest.approx((t6["1 manual (ref)"]["r"] + t6["1 manual (refB)"]["r"]) / 2)
    assert t6["second reference (vs average)"]["r"] == pytest.approx(0.081597, abs=1e-5)
    assert t6["second reference (vs best)"]["r"] == pytest.approx(
        t6["2 manual"]["r"] - t6["1 manual (refB)"]["r"]) and abs(t6["second reference (vs best)"]["r"]) < 0.01
    assert t6["hybrids"]["r"] == pytest.approx(t6["2 manual + hybrid"]["r"] - t6["2 manual"]["r"])
    # STM / HWCM with the hybrids' trees (literal mean over depths; measured r .222 / .261 raw MQM)
    assert result["syntactic_original_r"]["MQM"]["hwcm"] == pytest.approx(0.260783, abs=1e-6)
    assert all(abs(v["delta"]) < 0.01 for v in result["syntactic_extended"]["MQM z"].values())
    assert result["syntactic_system_original_r"]["stm"] == pytest.approx(0.178977, abs=1e-6)
    assert all(abs(v["delta"]) < 0.1 for v in result["syntactic_system_extended"].values())
    # the verdicts (MQM z): two references beat the average single one, not the best one; no hybrid gain
    v = result["verdicts"]
    # the index card's headline verdicts: the chapter's six primary claims (three with their beyond-length twins)
    primary = ["hybrids help BLEU (2 manual + hybrid beats 2 manual, TED MQM z)",
               "hybrids help BLEU beyond length (2 manual + hybrid beats 2 manual, TED MQM z)",
               "BLEU with hybrids beats chrF (2 manual + hybrid vs chrF with 2 manual, TED MQM z)",
               "BLEU with hybrids beats chrF beyond length (2 manual + hybrid vs chrF with 2 manual, TED MQM z)",
               "two human references beat one, average of single references (BLEU, TED MQM z)",
               "two human references beat one beyond length, average of single references (BLEU, TED MQM z)"]
    assert result["headline_verdicts"] == primary
    # twenty claims and their beyond-length twins: hybrids help (5 lexical + 2 syntactic metrics), hybrids beat the
    # random splices (5), M with hybrids beats chrF (4), two references beat one (2), a second reference is worth
    # more than the hybrids (2)
    assert len(v) == 40
    for claim, x in v.items():
        assert set(x) >= {"verdict", "test", "statistic", "ci", "p", "p_holm", "rule", "reason"}, claim
        assert (x["verdict"] == "exploratory") == (claim not in primary), claim  # Holm over the primary claims
        if claim in primary:
            assert (x["verdict"] == "holds") == (x["ci"][0] > 0 and x["p_holm"] < 0.05), claim
            assert x["family_size"] == 6, claim
        assert x["test"] == ("beats beyond length" if "beyond length" in claim else "beats"), claim
    two = v["two human references beat one, average of single references (BLEU, TED MQM z)"]
    assert two["verdict"] == "holds" and two["p"] == 1 / 201 and two["p_holm"] == pytest.approx(6 / 201)
    assert v["two human references beat one, best single reference refB (BLEU, TED MQM z)"]["ci"][0] < 0
    assert [c for c, x in v.items() if c.startswith("hybrids help") and x["verdict"] == "holds"] == []
    bl = v["two human references beat one beyond length, average of single references (BLEU, TED MQM z)"]
    assert bl["verdict"] == "holds" and bl["statistic"] == pytest.approx(0.0809, abs=1e-3)  # measured
    assert "refB" in result["verdict"]
    # chrF, the baseline, recomputed independently (sacrebleu's sentence chrF with both references, scipy)
    chrf_z, chrf_raw = _chrf_r()
    assert result["chrf_table"][0]["chrF (2 manual)"]["r"] == pytest.approx(chrf_z, abs=1e-9)
    assert orig["MQM"]["chrF"] == pytest.approx(chrf_raw, abs=1e-9) and chrf_z == pytest.approx(0.312200, abs=1e-6)
    c = v["BLEU with hybrids beats chrF (2 manual + hybrid vs chrF with 2 manual, TED MQM z)"]
    assert c["statistic"] == pytest.approx(result["table3_extended"]["MQM z"]["BLEU"]["r"] - chrf_z, abs=1e-9)
    assert c["verdict"] == "cannot tell" and c["statistic"] == pytest.approx(0.0077, abs=1e-4)  # measured
    # the placebo: "hybrids help" needs the hybrids' edge over as many random splices of the same references;
    # on this sample the splices do as well as the hybrids (measured: BLEU -0.0003 [-0.0036, +0.0025])
    for m in ("chrF", "BLEU", "GTM", "ROUGE-S", "METEOR"):
        for bl_ in ("", " beyond length"):
            x = v[f"hybrids help {m}{bl_} (2 manual + hybrid beats 2 manual, TED MQM z)"]
            assert "random splices" in x["requires"]["text"] and x["verdict"] != "holds", (m, bl_)
            y = v[f"hybrids beat random splices for {m}{bl_} (2 manual + hybrid beats 2 manual + random splices, "
                  "TED MQM z)"]
            assert y["ci"] == pytest.approx(x["requires"]["ci"], abs=1e-12), (m, bl_)
    sp = v["hybrids beat random splices for BLEU (2 manual + hybrid beats 2 manual + random splices, TED MQM z)"]
    assert sp["statistic"] == pytest.approx(-0.0003, abs=1e-4) and sp["ci"][0] < 0 < sp["ci"][1]

    # issue 22: real hybrids, the share of segments that get one, the "seams" check (measured on this sample)
    cov = result["coverage"]
    ted, deen = cov["TED zh-en"], cov["WMT21 de-en"]
    assert (ted["segments"], ted["segments with a hybrid"], ted["hybrids"]) == (50, 11, 42)
    assert (deen["segments"], deen["segments with a hybrid"], deen["hybrids"]) == (50, 21, 134)
    assert ted["share with a hybrid"] == pytest.approx(11 / 50) and deen["share with a hybrid"] == pytest.approx(21 / 50)
    assert (ted["segments with a hybrid (seams checked)"], ted["hybrids (seams checked)"]) == (5, 14)
    assert (deen["segments with a hybrid (seams checked)"], deen["hybrids (seams checked)"]) == (14, 44)
    for c in (ted, deen):  # nothing capped on this sample: the check only removes
        assert c["hybrids (seams checked)"] + c["removed by the check"] == c["hybrids"]
    ex = result["hybrid_examples"]
    assert len(ex) == 12 and [e["data"] for e in ex].count("TED zh-en") == 6
    assert all(e["hybrid"] != e["host reference"] and e["swaps"] >= 1 and " -> " in e["swapped"] for e in ex)
    assert sum(e["seams attested"] for e in ex) == 5
    assert "In this case, both of them're both wobbling quite a lot." in [e["hybrid"] for e in ex]
    wf = result["well_formed"]["MQM z"]
    for metric in ("BLEU", "GTM", "ROUGE-S", "METEOR"):  # the same r as the chapter's Table 3
        assert wf[metric]["r (2 manual)"] == pytest.approx(orig["MQM z"][metric], abs=1e-12)
        assert wf[metric]["r (paper)"] == pytest.approx(result["table3_extended"]["MQM z"][metric]["r"], abs=1e-12)
    assert wf["METEOR"]["gain (paper)"] == pytest.approx(0.006128, abs=1e-6)
    assert wf["METEOR"]["gain (seams)"] == pytest.approx(-0.000480, abs=1e-6)
    assert wf["BLEU"]["gain (seams)"] == pytest.approx(0.0000337, abs=1e-6)


def _chrf_r() -> tuple[float, float]:
    """Pearson r of sacrebleu's sentence chrF (both references) with MQM z and raw MQM on the sample."""
    import sacrebleu
    from scipy.stats import pearsonr

    from notebook_checks._data import load_ted_zhen_mqm, sample_segments

    ted = load_ted_zhen_mqm()
    mt = sample_segments(ted[~ted["is_human"]].reset_index(drop=True), 50, 0)
    x = [sacrebleu.sentence_chrf(h, [a, b]).score / 100 for h, a, b in zip(mt["target"], mt["ref"], mt["refB"])]
    return float(pearsonr(x, mt["mqm_z"])[0]), float(pearsonr(x, mt["mqm"])[0])


def _bleu_r(permute_human: int | None = None) -> float:
    """Pearson r of sacrebleu's sentence BLEU (both references) with raw MQM on the sample; ``permute_human``: the
    MT rows' MQM shuffled first (:func:`syneval_nb.stats.permute_human`, as the chapter's switch does)."""
    import sacrebleu
    from scipy.stats import pearsonr

    from notebook_checks._data import load_ted_zhen_mqm, sample_segments
    from syneval_nb.stats import permute_human as shuffle

    ted = load_ted_zhen_mqm()
    mt = ted[~ted["is_human"]].reset_index(drop=True)
    mt["mqm"] = shuffle(mt["mqm"].to_numpy(dtype=float), permute_human)
    mt = sample_segments(mt, 50, 0)
    bleu = [sacrebleu.sentence_bleu(h, [a, b]).score / 100 for h, a, b in zip(mt["target"], mt["ref"], mt["refB"])]
    return float(pearsonr(bleu, mt["mqm"])[0])
