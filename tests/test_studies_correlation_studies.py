"""studies.correlation_studies on a small real sample: worked examples, per-system r against scipy, references."""
import pytest
from scipy.stats import pearsonr

from syneval_nb.studies import correlation_studies as study


def test_worked_examples(shared_data):
    w = study.worked_examples(shared_data)
    assert round(w["stm_example"], 3) == 0.702
    assert round(w["williams_t"], 3) == 1.361 and round(w["williams_p_two_sided"], 3) == 0.187
    assert w["mqm_borderline_84"] == w["mqm_published_84"] == -20.0


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
    assert "STM loses less than BLEU from depth 1 to 9 (MQM z, literal mean)" in c8.verdicts
    r = study.results(c8, study.worked_examples(shared_data))
    assert r["ted"]["n_rows"] == 104
