"""Regression check of notebooks/01_trees_and_heads.ipynb on 300 segments per WMT21 reference set (seed 0).

The paper's example is exact (Liu & Gildea 2005, section 2.1); the corpus figures were measured on the shipped
Stanford PCFG 3.3.1 parses (full data: ref A 20.46 words, depth 8.81, 56.5% of heads to the left, mean
dependency length 3.05; ref B 20.29, 8.72, 55.8%, 3.10).
"""
import pytest

PARAMS = {"sample": 300, "seed": 0}


def check(result: dict) -> None:
    refs = ("ref A", "ref B")
    # every line of both reference parse files is read; none is the parser's (()) marker
    assert result["n_lines"] == {"ref A": 1000, "ref B": 1000}
    assert result["failures"] == {"ref A": 0, "ref B": 0}
    assert result["trees_read"] == {"ref A": 1000, "ref B": 1000}
    assert result["n_segments"] == 300
    # the paper's example: "I have a red pen"
    assert result["paper_example"]["heads"] == [1, -1, 4, 4, 1]
    assert result["paper_example"]["two_word_chains"] == ["have I", "have pen", "pen a", "pen red"]
    assert result["paper_example"]["n_chains_3"] == 11  # 5 words + 4 two-word + 2 three-word chains
    # sample statistics (seed 0), measured
    assert result["mean_length"]["ref A"] == pytest.approx(20.1333, abs=1e-3)
    assert result["mean_length"]["ref B"] == pytest.approx(20.1267, abs=1e-3)
    assert result["mean_depth"]["ref A"] == pytest.approx(8.6767, abs=1e-3)
    assert result["mean_depth"]["ref B"] == pytest.approx(8.6833, abs=1e-3)
    assert result["label_total_variation"] == pytest.approx(0.028, abs=2e-3)
    att = result["attachment"]
    assert att["ref A"]["n_trees"] == att["ref B"]["n_trees"] == 300
    assert (att["ref A"]["n_words"], att["ref B"]["n_words"]) == (6040, 6038)
    assert att["ref A"]["n_arcs"] == 6040 - 300  # one root per sentence
    assert att["ref A"]["head_left"] == pytest.approx(0.5547, abs=2e-3)
    assert att["ref B"]["head_left"] == pytest.approx(0.5535, abs=2e-3)
    assert att["ref A"]["mean_dependency_length"] == pytest.approx(3.0127, abs=2e-3)
    assert att["ref B"]["mean_dependency_length"] == pytest.approx(3.0338, abs=2e-3)
    for r in refs:
        assert att[r]["head_left"] + att[r]["head_right"] == pytest.approx(1.0)
        assert result["top_root_tag"][r] == "VBD"
        assert result["finite_root_share"][r] > 0.9
    # segment 81: "Laboratory investigations corroborated / firmed up the suspicion of arson ."
    assert result["example_shared_chains"] == 5
