"""Checks for notebooks/02_lexical_metrics.ipynb on the CI sample (20 TED source segments x 13 MT systems, 20
WMT21 de-en lines x 19 systems, seed 0, 200 resamples). Reference values were measured on that sample with the
kit; the worked examples are the hand-derived values of tests/test_lexical.py; BLEU is recomputed with sacrebleu
and scipy."""
import math

import pytest
from scipy.stats import pearsonr

from notebook_checks.check_03_constituent_metrics import _shape

PARAMS = {"sample": 20, "seed": 0, "n_resamples": 200}

METRICS = ["BLEU", "NIST", "WER", "PER", "F-measure", "GTM", "ROUGE-S", "METEOR", "TER"]


def check(result: dict) -> None:
    w = result["worked_examples"]
    assert w["BLEU-2 eps, 'A dog I had' vs 'I had a dog'"] == pytest.approx(math.sqrt(2 / 3), abs=1e-12)
    assert w["BLEU-2 eps, 'I have the dog' vs 'I had a dog'"] == pytest.approx(math.sqrt(0.5e-3), abs=1e-12)
    assert w["GTM e=2, 'a b c d e' vs 'a b c x d e'"] == pytest.approx(2 * math.sqrt(13) / 11, abs=1e-12)
    assert w["METEOR, 'the president then spoke to the audience'"] == pytest.approx(60 / 61 * 53 / 54, abs=1e-12)
    assert w["TER, 'c d a b' vs 'a b c d' (one shift)"] == pytest.approx(0.25, abs=1e-12)

    ted = result["ted"]
    assert ted["n_segments"] == 260 and ted["n_systems"] == 13 and ted["reference"] == "refB"
    assert set(ted["pearson_mqm"]) == set(METRICS) | {"length", "-ref length", "placebo"}
    # measured on this sample: BLEU 0.153, ROUGE-S 0.193 (best), WER 0.112 (raw MQM)
    assert ted["pearson_mqm"]["BLEU"] == pytest.approx(0.1528, abs=5e-4)
    assert ted["pearson_mqm"]["ROUGE-S"] == pytest.approx(0.1925, abs=5e-4)
    assert ted["pearson_mqm"]["WER"] == pytest.approx(0.1123, abs=5e-4)
    assert ted["pearson_mqm_z"]["BLEU"] == pytest.approx(0.164, abs=1e-3)
    assert ted["meteor_inexact_alignments"] == 0
    assert "smooth:epsilon[0.001]" in ted["signatures"]["BLEU"] and "window:9" in ted["signatures"]["ROUGE-S"]

    deen = result["wmt21_deen"]
    assert deen["n_segments"] == 380 and deen["references"] == ["ref_A"]
    assert len(deen["corpus_bleu"]) == 19
    # corpus BLEU per system and its system-level r with DA z, recomputed with sacrebleu and scipy (ref A)
    bleu, da = _sacrebleu()
    for s, v in bleu.items():
        assert deen["corpus_bleu"][s] == pytest.approx(v, abs=1e-9), s
    systems = sorted(bleu)
    r = pearsonr([bleu[s] for s in systems], [da[s] for s in systems])[0]
    assert deen["pearson_da"]["BLEU"] == pytest.approx(r, abs=1e-9)
    _shape(result)
    v = result["verdicts"]
    assert v["GTM correlates with MQM z"]["verdict"] == "holds"
    assert v["BLEU tracks Accuracy better than Fluency (z)"]["verdict"] == "cannot tell"
    assert v["TER tracks Accuracy better than Fluency (z)"]["verdict"] == "holds"


def _sacrebleu():
    import sacrebleu

    from syneval_nb.data import load_wmt21_deen, sample_segments

    w = load_wmt21_deen()
    seg = sample_segments(w.segments, PARAMS["sample"], PARAMS["seed"])
    da = w.system_da[~w.system_da["is_human"]].set_index("system")["da_z"]
    bleu = {s: sacrebleu.corpus_bleu(list(g["target"]), [list(g["ref_A"])]).score / 100
            for s, g in seg.groupby("system")}
    return bleu, da.to_dict()
