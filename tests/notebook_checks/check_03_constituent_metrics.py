"""Checks for notebooks/03_constituent_metrics.ipynb on 50 TED source segments (x 13 systems) and 50 WMT21 lines,
200 resamples; and the permuted run (``PERMUTED_PARAMS``: every human score shuffled, no verdict may hold)."""
import numpy as np
import pytest
from scipy.stats import pearsonr

from notebook_checks import _kernel_length as kernel_length
from notebook_checks import _length_control as length_control

PARAMS = {"sample": 50, "seed": 0, "max_depth": 9, "n_resamples": 200}
PERMUTED_PARAMS = {**PARAMS, "permute_human": 1}
VERDICTS = {"holds", "does not hold", "cannot tell", "exploratory"}


def _n_family(verdicts: dict) -> int:
    """The size of a chapter's Holm family: every verdict but the exploratory ones (fewer than 20 units)."""
    return sum(x["verdict"] != "exploratory" for x in verdicts.values())


def _shape(result):
    assert result["verdicts"], "no verdicts"
    for claim, v in {**result["verdicts"], **result.get("variant_verdicts", {})}.items():
        assert v["verdict"] in VERDICTS, claim
        assert set(v) >= {"verdict", "test", "statistic", "ci", "p", "p_holm", "rule", "reason"}, claim
        assert v["ci"][0] <= v["ci"][1], claim
        assert v["reason"].startswith(v["test"] + ":"), claim  # the computed reason names the test
        assert not (v["verdict"] == "does not hold" and v["ci"][0] > 0), claim


def check(result: dict) -> None:
    # the paper's worked example, exactly: (6/7 + 3/4 + 1/2) / 3
    assert result["worked_example_stm"] == pytest.approx((6 / 7 + 3 / 4 + 1 / 2) / 3)
    assert result["worked_example_fractions"] == pytest.approx([6 / 7, 3 / 4, 1 / 2])
    # TKM by hand (Collins & Duffy, lam = 1): K(h,r) = 16, K(h,h) = 36, K(r,r) = 90 (tests/test_syntactic.py)
    assert result["worked_example_tkm"] == pytest.approx(16 / (36 * 90) ** 0.5)
    assert result["n_ted_segments"] == 50 * 13 and result["n_ted_dropped"] == 0
    assert result["n_deen_systems"] == 19
    assert result["study"]["ted_reference"] == "refB" and result["study"]["deen_references"] == ["ref_A"]
    assert result["study"]["primary_depth"] == 4 and result["study"]["permute_human"] is None
    # the literal mean is the default (eff:no), effective order the variant
    assert result["signatures"]["stm"].startswith("STM-9|depth:9|eff:no|tree:constituency|hypfault:worst|version:syneval-nb-")
    lit, eff = result["curves"]["literal mean"], result["curves"]["effective order"]
    # measured on this sample (seed 0): literal STM falls after depth 2, effective order keeps rising
    assert lit["MQM z|STM-9"] == pytest.approx(0.182, abs=0.002)
    assert eff["MQM z|STM-9"] == pytest.approx(0.281, abs=0.002)
    assert lit["MQM z|STM-1"] == eff["MQM z|STM-1"]  # depth 1 is the same under both definitions
    h = result["headline"]
    assert h["MQM z|pearson"]["STM-4"] == lit["MQM z|STM-4"]
    assert h["MQM z|pearson"]["BLEU-4"] == pytest.approx(0.246, abs=0.002)
    # the length-only control -|len diff|, recomputed with sacrebleu's tokenizer and scipy
    length_control.check({**result, "ted_r": {"MQM Fluency|BLEU|4": result["bleu4_r_fluency"]}},
                         PARAMS["sample"], PARAMS["seed"])
    # BLEU-4 at system level (de-en, ref A), recomputed with sacrebleu from the same 50 lines
    assert result["deen_system_r"]["BLEU-4"] == pytest.approx(_sacrebleu_system_r(), abs=2e-3)
    _shape(result)
    # raw length is a stronger control than -|len diff| on this sample too (measured: .384, .374 vs .295)
    assert h["MQM z|pearson"]["-hyp length"] == pytest.approx(0.3844, abs=5e-4)
    assert h["MQM z|pearson"]["-ref length"] > h["MQM z|pearson"]["-|len diff|"]
    # chrF (the headline baseline) and the partial r given the flexible length model (measured on this sample;
    # 0.1547 given the two log lengths linearly: the flexible model takes a third more of STM-4's agreement)
    assert h["MQM z|pearson"]["chrF"] == pytest.approx(0.2842, abs=5e-4)
    assert h["MQM z|partial"]["STM-4"] == pytest.approx(0.1123, abs=5e-4)
    v = result["verdicts"]
    # issue 35: Holm over the four primary claims (STM-4 and TKM beat chrF, raw and beyond length); the rest
    # are exploratory even where their interval is above 0
    assert result["headline_verdicts"] == ["STM-4 beats chrF (MQM z, Pearson)",
                                           "STM-4 beats chrF beyond length (MQM z, partial r given the length model)",
                                           "TKM beats chrF (MQM z, Pearson)",
                                           "TKM beats chrF beyond length (MQM z, partial r given the length model)"]
    assert v["STM-4 correlates with MQM z"]["verdict"] == "exploratory"
    assert v["STM-4 correlates with MQM z"]["p"] == 1 / 201 and v["STM-4 correlates with MQM z"]["ci"][0] > 0
    assert v["STM-4 correlates with MQM z beyond length"]["verdict"] == "exploratory"
    assert v["STM-4 beats the placebo (MQM z)"]["p"] == 1 / 1001  # no placebo column reaches it: never 0
    assert v["STM-4 beats chrF (MQM z, Pearson)"]["verdict"] == "cannot tell"
    assert v["STM-4 beats chrF (MQM z, Pearson)"]["p_holm"] == 1.0
    assert v["TKM beats BLEU-4 within source segments (MQM z)"]["verdict"] == "exploratory"
    assert v["TKM beats BLEU-4 within source segments (MQM z)"]["ci"][1] < 0
    allv = {**v, **result["variant_verdicts"]}
    assert {x["family_size"] for x in allv.values()} == {_n_family(allv)}  # Holm: one family per chapter
    # the WMT meta-evaluation beside Pearson (measured on this sample): acc_eq, item-grouped r, SPA, p vs chrF
    me = result["meta_evaluation"]
    assert set(me) == {"BLEU-4", "chrF", "STM-4", "TKM"}
    assert me["STM-4"]["acc_eq"] == pytest.approx(0.37974, abs=1e-4) and me["chrF"]["acc_eq_p"] is None
    _check_tkm_length(result)


def _check_tkm_length(result: dict) -> None:
    """Issue 22: TKM at the paper's lambda = 1 is an inverse-length score; lambda = 0.4 (Moschitti) is the named
    variant beside it, with its own rows, verdicts and signature."""
    kernel_length.check(result, "tkm", PARAMS["sample"], PARAMS["seed"])
    d = result["length_diagnosis"]
    assert set(d) == {"TKM", "TKM λ=0.4", "chrF", "BLEU-4"}
    # measured on this sample (seed 0, 200 resamples): tau -.745 / -.766, 39% of segments below 1e-4, the r with
    # MQM z almost all length (partial .026 of .214 given the length model), at lambda 0.4 much less so (partial
    # .189 of .362)
    assert d["TKM"]["tau_hyp"] == pytest.approx(-0.7452, abs=1e-4)
    assert d["TKM"]["tau_ref"] == pytest.approx(-0.7660, abs=1e-4)
    assert d["TKM"]["share_tiny"] == pytest.approx(252 / 650)
    assert d["TKM"]["r"] == pytest.approx(0.2140, abs=1e-4) and d["TKM"]["partial"] == pytest.approx(0.0264, abs=1e-4)
    assert d["TKM λ=0.4"]["tau_hyp"] == pytest.approx(-0.3290, abs=1e-4)
    assert d["TKM λ=0.4"]["partial"] == pytest.approx(0.1887, abs=1e-4) and d["TKM λ=0.4"]["share_tiny"] == 0
    # the diagnosis reads the headline tables: the same numbers as the table rows
    h = result["headline"]
    assert d["TKM"]["partial"] == h["MQM z|partial"]["TKM"] and d["TKM λ=0.4"]["r"] == h["MQM z|pearson"]["TKM λ=0.4"]
    # the Fluency contrast beyond length is the verdict's statistic and interval
    v = result["verdicts"]
    fb = v["TKM's edge over chrF is larger on Fluency than on Accuracy beyond length (z, partial r given the length model)"]
    assert fb["statistic"] == pytest.approx(d["TKM"]["fluency_beyond"]) and fb["ci"] == pytest.approx(
        [d["TKM"]["fluency_beyond_low"], d["TKM"]["fluency_beyond_high"]])
    assert d["TKM"]["fluency_beyond"] == pytest.approx(0.2266, abs=1e-4)
    # issue 35: the contrast needs TKM's own edge over chrF on Fluency, and it has none (interval spans 0)
    assert fb["requires"]["ci"][0] < 0 < fb["requires"]["ci"][1] and fb["verdict"] == "exploratory"
    assert v["TKM λ=0.4 correlates with MQM z beyond length"]["ci"][0] > 0
    assert v["TKM λ=0.4 beats chrF (MQM z, Pearson)"]["verdict"] == "exploratory"
    assert result["signatures"]["tkm λ=0.4"].startswith("TKM|lam:0.4|tree:constituency|")
    assert result["signatures"]["tkm"].startswith("TKM|lam:1.0|tree:constituency|")
    assert result["study"]["kernel_lams"] == [0.4]


def _sacrebleu_system_r() -> float:
    import sacrebleu

    from syneval_nb.data import load_wmt21_deen, sample_segments

    w = load_wmt21_deen()
    seg = sample_segments(w.segments, PARAMS["sample"], PARAMS["seed"])
    da = w.system_da[~w.system_da["is_human"]].set_index("system")["da_z"]
    bleu = {s: sacrebleu.corpus_bleu(list(g["target"]), [list(g["ref_A"])]).score / 100
            for s, g in seg.groupby("system")}
    systems = sorted(bleu)
    return float(pearsonr([bleu[s] for s in systems], da.loc[systems])[0])


def check_permuted(result: dict) -> None:
    """With every human score shuffled nothing may beat or correlate: no verdict "holds"."""
    assert result["study"]["permute_human"] == 1
    _shape(result)
    held = [c for c, v in {**result["verdicts"], **result["variant_verdicts"]}.items() if v["verdict"] == "holds"]
    assert held == [], held
    assert result["worked_example_stm"] == pytest.approx((6 / 7 + 3 / 4 + 1 / 2) / 3)
