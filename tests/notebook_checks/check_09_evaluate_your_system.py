"""Checks for notebooks/09_evaluate_your_system.ipynb on the embedded example (data/examples/your_system: 30
hand-written segments, two references, three hand-made systems, a hand-made toy rating, the kit's own parses).
Corpus BLEU and TER are recomputed independently with sacrebleu from the example files; the syntactic values were
measured with the kit on the shipped example parses (deterministic); the length-only control's r is recomputed
with sacrebleu's 13a tokenizer and scipy. ``PERMUTED_PARAMS``: the permute_human sanity check."""
import pytest

from syneval_nb.paths import KIT_DATA_DIR
from syneval_nb.textio import read_lines

PARAMS = {"n_resamples": 1000}
PERMUTED_PARAMS = {**PARAMS, "permute_human": 1}

EXAMPLE = KIT_DATA_DIR / "examples" / "your_system"
SYSTEMS = ["system_good", "system_literal", "system_scrambled"]


def check(result: dict) -> None:
    import sacrebleu
    from sacrebleu.metrics import TER

    assert result["n_segments"] == 30
    assert result["systems"] == SYSTEMS and result["baseline"] == "system_good"
    assert result["metrics"] == ["BLEU", "chrF", "TER", "METEOR", "STM-4", "HWCM-4", "DSTM-4", "TKM", "DTKM"]
    refs = [read_lines(EXAMPLE / f"ref.{k}.txt") for k in "AB"]
    for s in SYSTEMS:
        hyps = read_lines(EXAMPLE / f"{s}.txt")
        assert result["scores"][s]["BLEU"] * 100 == pytest.approx(sacrebleu.corpus_bleu(hyps, refs).score, abs=1e-9)
        assert result["scores"][s]["TER"] * 100 == pytest.approx(TER().corpus_score(hyps, refs).score, abs=1e-9)
        assert result["scores"][s]["chrF"] * 100 == pytest.approx(sacrebleu.corpus_chrf(hyps, refs).score, abs=1e-9)
        lo, hi = result["ci"][s]["BLEU"]
        assert lo < result["scores"][s]["BLEU"] < hi
        assert all(v == 0 for v in result["n_missing"][s].values())
    # measured on the example parses
    stm = {s: result["scores"][s]["STM-4"] for s in SYSTEMS}
    assert stm["system_good"] == pytest.approx(0.8728041916217242, abs=1e-12)
    assert stm["system_literal"] == pytest.approx(0.7375731052898538, abs=1e-12)
    assert stm["system_scrambled"] == pytest.approx(0.4717322110235317, abs=1e-12)
    assert result["scores"]["system_scrambled"]["TKM"] == pytest.approx(0.006455509563041035, abs=1e-12)
    assert result["scores"]["system_good"]["HWCM-4"] == pytest.approx(0.8173456978552355, abs=1e-12)
    # the scrambled system keeps far more BLEU than tree-kernel credit (what the example was written to show)
    assert result["scores"]["system_scrambled"]["BLEU"] == pytest.approx(0.39382915031330606, abs=1e-12)
    v = result["verdicts"]
    for s in ("system_scrambled", "system_literal"):
        c = v[f"{s} is better than system_good"]
        assert c["verdict"] == "does not hold" and c["statistic"] == 0 and c["ci"] is None
        assert "9 significantly worse" in c["rule"]
    c = v["STM-4 beats BLEU (human scores, Pearson)"]
    assert c["verdict"] == "cannot tell" and c["statistic"] == pytest.approx(-0.01649646582660036, abs=1e-9)
    assert c["ci"] == pytest.approx([-0.11091901736595468, 0.07188361791113447], abs=1e-9)
    assert {"verdict", "test", "statistic", "ci", "p", "p_holm", "family_size", "rule", "reason"} <= set(c)
    assert c["test"] == "beats" and c["family_size"] == 9  # Holm over the nine human-score verdicts
    assert v["STM-4 beats BLEU within source segments (human scores)"]["verdict"] == "cannot tell"
    assert v["STM-4 correlates with the human scores"]["verdict"] == "holds"
    bl = v["STM-4 beats BLEU beyond length (human scores, partial r given log lengths)"]
    assert bl["test"] == "beats beyond length" and bl["verdict"] == "cannot tell"
    # on the toy rating chrF is weaker than STM-4 (measured): "beats chrF" holds, on its own difference
    assert v["STM-4 beats chrF (human scores, Pearson)"]["verdict"] == "holds"
    assert v["STM-4 beats the placebo (human scores)"]["test"] == "beats the placebo"
    hc = result["human_correlations"]
    assert hc["BLEU|pearson"]["n"] == 90
    assert hc["BLEU|pearson"]["r"] == pytest.approx(0.8047329168718137, abs=1e-9)
    assert hc["STM-4|pearson"]["r"] == pytest.approx(0.7882364510452133, abs=1e-9)
    assert hc["-TER|pearson"]["r"] == pytest.approx(0.8526878660504931, abs=1e-9)
    assert hc["-|len diff||pearson"]["r"] == pytest.approx(_length_r(), abs=1e-12)
    assert "STM-4|partial pearson | log hyp length, log ref length" in hc
    assert result["disagreements"][0] == {"system": "system_literal", "seg_id": 15, "gap": pytest.approx(0.5055555555555555)}
    assert result["depth_curves"]["STM|system_good|1"] == pytest.approx(0.9782608695652174, abs=1e-12)


def check_permuted(result: dict) -> None:
    """With the toy rating shuffled across all rows no "beats" / "correlates" verdict may hold (measured: every
    one "cannot tell"); the system claims do not read the rating and stay as they are."""
    assert result["parameters"]["permute_human"] == 1
    v = result["verdicts"]
    human_claims = [c for c in v if "human scores" in c]
    assert len(human_claims) == 9
    assert "holds" not in {v[c]["verdict"] for c in human_claims}
    assert v["system_scrambled is better than system_good"]["verdict"] == "does not hold"


def _length_r() -> float:
    """Pearson r of the length-only control -|c - r| with the toy rating, recomputed independently: sacrebleu's 13a
    tokens, the closest reference length (ties: the shorter), scipy's Pearson."""
    import csv

    from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a
    from scipy.stats import pearsonr

    tok = Tokenizer13a()
    n = lambda s: len(tok(s.strip()).split())  # noqa: E731
    refs = [read_lines(EXAMPLE / f"ref.{k}.txt") for k in "AB"]
    hyps = {s: read_lines(EXAMPLE / f"{s}.txt") for s in SYSTEMS}
    xs, hs = [], []
    with open(EXAMPLE / "human_scores.tsv", encoding="utf-8") as f:
        for row in csv.DictReader((line for line in f if not line.startswith("#")), delimiter="\t"):
            c = n(hyps[row["system"]][int(row["seg_id"])])
            rl = sorted((abs(n(r[int(row["seg_id"])]) - c), n(r[int(row["seg_id"])])) for r in refs)[0][1]
            xs.append(-abs(c - rl))
            hs.append(float(row["score"]))
    return float(pearsonr(xs, hs)[0])
