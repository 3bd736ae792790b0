"""Issue 33 (your own test set, end to end) and issue 37's report cases: the report's human section (ranking,
system-level agreement, claims marked where the humans disagree), lines no metric could score kept out of the
examples, and legal inputs that must not break it (identical systems, constant human scores, one rated system,
one segment)."""
from __future__ import annotations

import itertools
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from syneval_nb import stats
from syneval_nb.studies import evaluate_your_system as E
from syneval_nb.textio import read_lines

ORACLES = Path(__file__).resolve().parents[2] / "shared" / "oracles"
FAST = ["bleu", "chrf", "ter", "stm", "hwcm", "tkm"]


def _oracle_agreement():
    sys.path.insert(0, str(ORACLES))
    try:
        from mt_metrics_eval import stats as mtme_stats  # tests only: the oracle is never imported at run time
    finally:
        sys.path.remove(str(ORACLES))
    return mtme_stats.Agreement


def test_pairwise_accuracy_equals_mt_metrics_eval_agreement():
    agreement = _oracle_agreement()
    rng = np.random.default_rng(3)
    for n in (2, 3, 7, 15):
        m, h = rng.normal(size=n), rng.normal(size=n)
        h[0] = h[1]  # a human tie
        m[0] = m[1]  # tied by the metric too: agrees
        agree, pairs = agreement(list(h), list(m))
        assert stats.meta.pairwise_accuracy(m, h) == (agree / pairs, pairs)
    assert stats.meta.pairwise_accuracy([0.3, 0.2, 0.1], [3.0, 1.0, 2.0]) == (2 / 3, 3)
    assert np.isnan(stats.meta.pairwise_accuracy([0.3], [1.0])[0])
    # an unrated system (NaN) is left out, as mtme leaves out None
    assert stats.meta.pairwise_accuracy([0.3, 0.2, 0.1], [3.0, np.nan, 2.0]) == (1.0, 1)


def _files(tmp_path, systems: dict[str, str], lines: slice | None = None, human: dict | None = None):
    """Copies of the example's files (and parses) under new names: ``{new name: example system}``."""
    ex = E.example_files()
    src = dict(zip(ex["names"], ex["hyp_files"]))
    parses = tmp_path / "parses"
    parses.mkdir(exist_ok=True)
    pdir = Path(ex["parses_dir"])
    sl = lines or slice(None)
    hyps = []
    for new, old in systems.items():
        f = tmp_path / f"{new}.txt"
        f.write_text("\n".join(read_lines(src[old])[sl]) + "\n", encoding="utf-8")
        (parses / f"{new}.txt.ptb").write_text(
            "\n".join(read_lines(pdir / f"{Path(src[old]).name}.ptb")[sl]) + "\n", encoding="utf-8")
        hyps.append(str(f))
    ref = tmp_path / "ref.txt"
    ref.write_text("\n".join(read_lines(ex["ref_files"][0])[sl]) + "\n", encoding="utf-8")
    (parses / "ref.txt.ptb").write_text("\n".join(read_lines(pdir / "ref.A.txt.ptb")[sl]) + "\n", encoding="utf-8")
    hs = None
    if human is not None:
        hs = tmp_path / "human.tsv"
        hs.write_text("system\tseg_id\tscore\n" + "".join(f"{s}\t{i}\t{v}\n" for s, col in human.items()
                                                         for i, v in enumerate(col)), encoding="utf-8")
    return hyps, [str(ref)], str(parses), None if hs is None else str(hs)


def _example_human(system: str) -> list[float]:
    rows = [line.split("\t") for line in read_lines(E.example_files()["human_scores"])[1:]]
    return [float(v) for s, _, v in rows if s == system]


def _run(hyps, refs, parses, human, **kw):
    st = E.load_study(hyps, refs, None, human, FAST, parses_dir=parses, progress=False, n_resamples=1000, cache=None,
                      **kw)
    tabs = E.human_tables(st, "BLEU", n_resamples=1000)
    ranking = E.human_ranking(st, 1000)
    tables = E.claim_tables(st, tabs)
    v = E.decide_report(st, E.claims(st, tables), tables, ranking=ranking, n_resamples=1000)
    return st, tabs, ranking, v


def test_human_ranking_is_the_mean_with_a_paired_bootstrap_interval(tmp_path):
    good, lit = _example_human("system_good"), _example_human("system_literal")
    hyps, refs, parses, human = _files(tmp_path, {"good": "system_good", "lit": "system_literal"},
                                       human={"good": good, "lit": lit})
    st = E.load_study(hyps, refs, None, human, ["bleu"], parses_dir=parses, progress=False, n_resamples=50, cache=None)
    r = E.human_ranking(st, n_resamples=50, seed=0)
    assert list(r["system"]) == ["good", "lit"] and list(r["rank"]) == [1, 2] and list(r["n"]) == [30, 30]
    assert r["human"].tolist() == pytest.approx([np.mean(good), np.mean(lit)])
    # brute force: the same resamples of the 30 segments, each system's mean in each
    w = np.vstack(list(stats.bootstrap_weights(30, 50, 0, groups=np.arange(30))))
    means = np.vstack([w @ np.asarray(c) / w.sum(axis=1) for c in (good, lit)]).T
    lo, hi = np.quantile(means, [0.025, 0.975], axis=0)
    assert r["low"].tolist() == pytest.approx(lo.tolist()) and r["high"].tolist() == pytest.approx(hi.tolist())


def test_a_claim_by_the_metrics_says_when_the_humans_disagree(tmp_path):
    """The metrics find system_literal worse than system_good; human scores that rank it first must be stated."""
    good, lit = _example_human("system_good"), _example_human("system_literal")
    hyps, refs, parses, human = _files(tmp_path, {"good": "system_good", "lit": "system_literal"},
                                       human={"good": lit, "lit": good})  # swapped: the humans prefer lit
    st, _, ranking, v = _run(hyps, refs, parses, human)
    claim = v["lit is better than good by the metrics"]
    assert claim["verdict"] == "does not hold" and claim["human_view"] == "disagree"
    assert claim["human"]["delta"] == pytest.approx(np.mean(good) - np.mean(lit))
    assert claim["human"]["rank"] == 1 and claim["human"]["rank_baseline"] == 2
    assert claim["human"]["ci"][0] > 0  # the humans are sure of it
    # the numbers the notebook's sentence is written from ("The human scores disagree: lit 93.100 (rank 1) vs
    # good 74.267 (rank 2), difference +18.833 [...]"): the two means of the example's toy rating
    assert [claim["human"]["system"], claim["human"]["baseline"]] == pytest.approx([93.1, 74.2666667])
    agree = E.system_agreement(st)
    assert set(agree["pairwise_accuracy"]) == {0.0} and list(agree["n_pairs"].unique()) == [1]


@pytest.mark.parametrize("case", ["identical systems", "constant human scores", "one rated system"])
def test_legal_inputs_that_broke_the_report(tmp_path, case):
    good, lit = _example_human("system_good"), _example_human("system_literal")
    if case == "identical systems":
        files, human = {"good": "system_good", "twin": "system_good"}, {"good": good, "twin": good}
    elif case == "constant human scores":
        files, human = {"good": "system_good", "lit": "system_literal"}, {"good": [50] * 30, "lit": [50] * 30}
    else:
        files, human = {"good": "system_good", "lit": "system_literal"}, {"good": good}
    st, tabs, ranking, v = _run(*_files(tmp_path, files, human=human))
    agree = E.system_agreement(st)
    if case == "identical systems":
        # within a source segment the two translations are identical: the within-segment r cannot be estimated
        w = v["STM-BP-4 beats chrF within source segments (human scores)"]
        assert w["verdict"] == "cannot tell" and "cannot be estimated" in w["reason"]
        assert list(ranking["rank"]) == [1, 1] and v["twin is better than good by the metrics"]["verdict"] == \
            "cannot tell"
        assert set(agree["pairwise_accuracy"]) == {1.0}  # tied by the humans and by every metric
    elif case == "constant human scores":
        assert all(x["verdict"] == "cannot tell" and "cannot be estimated" in x["reason"]
                   for c, x in v.items() if "human scores" in c)
        assert agree["r"].isna().all()
    else:
        assert "within" not in tabs  # no source segment has two rated translations
        assert ranking["human"].isna().tolist() == [False, True]
        assert agree["note"].str.startswith("1 rated system(s)").all()
        assert v["lit is better than good by the metrics"]["human_view"] == "not rated"


def test_one_segment_decides_nothing(tmp_path):
    """Issue 37: a one-segment test set printed "holds: one_full is better than one_lit"."""
    hyps, refs, parses, _ = _files(tmp_path, {"one_full": "system_good", "one_lit": "system_literal"},
                                   lines=slice(0, 1))
    st, _, ranking, v = _run(hyps, refs, parses, None)
    assert [x["verdict"] for x in v.values()] == ["cannot tell"]
    assert v["one_lit is better than one_full by the metrics"]["rule"].endswith(
        "never decided on fewer than 20 resampled segments (here 1)")


def test_unparsed_lines_are_listed_and_never_an_example(tmp_path):
    """Issue 33: a line without a parse was the first "disagreement" (a parser limit shown as a finding)."""
    hyps, refs, parses, _ = _files(tmp_path, {"good": "system_good", "lit": "system_literal"})
    ptb = Path(parses) / "lit.txt.ptb"
    lines = read_lines(ptb)
    lines[15] = "(())"  # the example's first disagreement (system_literal, line 16)
    ptb.write_text("\n".join(lines) + "\n", encoding="utf-8")
    st = E.load_study(hyps, refs, None, None, FAST, parses_dir=parses, progress=False, n_resamples=0, cache=None)
    bad = E.unscorable(st)
    assert bad[["system", "seg_id", "line"]].values.tolist() == [["lit", 15, 16]]
    assert bad["cause"].iloc[0].startswith("no constituency parse of the hypothesis")
    assert bad["metrics"].iloc[0] == ", ".join(n for n in st.metric_names if n not in ("BLEU", "chrF", "TER"))
    for syn in ("STM-4", "HWCM-4", "TKM"):
        dis = E.disagreements(st, syn, "BLEU", k=5)
        assert ("lit", 15) not in set(zip(dis["system"], dis["seg_id"]))
    # any registry metric can be the notebook's syntactic metric; one not scored falls back to a scored one
    assert E.pick_metric(st, "tkm") == "TKM-BP" and E.pick_metric(st, "dstm") == st.metric_names[3]
    assert E.pick_metric(st, "chrf", "lexical") == "chrF"


def test_one_default_metric_list_with_chrf():
    from syneval_nb.app import report
    from syneval_nb.metrics import registry as M

    assert "chrf" in M.DEFAULT_METRICS
    nb = __import__("json").loads(E.KIT_DATA_DIR.parent.joinpath("notebooks", "09_evaluate_your_system.ipynb")
                                  .read_text(encoding="utf-8")) if (E.KIT_DATA_DIR.parent / "notebooks").is_dir() \
        else None
    if nb is not None:
        params = "".join(nb["cells"][1]["source"])
        assert "metrics = None" in params
    helptext = subprocess.run([sys.executable, "-m", "syneval_nb.app.cli", "report", "--help"], capture_output=True,
                              text=True, timeout=120).stdout
    assert ",".join(M.DEFAULT_METRICS) in helptext.replace("\n", "").replace(" ", "")
    assert report  # imported: the CLI module reads the registry's list


def test_report_documents_and_syntactic_metric_reach_the_notebook(tmp_path):
    """``report --documents`` resamples documents (3 documents: no claim is decided) and ``--syntactic-metric``
    picks the disagreements' metric."""
    import json

    ex = E.example_files()
    docs = tmp_path / "x.docs"
    docs.write_text("".join(f"news d{i // 10}\n" for i in range(30)), encoding="utf-8")
    out = tmp_path / "rep"
    r = subprocess.run([sys.executable, "-m", "syneval_nb.app.cli", "report", "-o", str(out), "--no-cache",
                        "-r", *ex["ref_files"], "-i", *ex["hyp_files"], "--names", ",".join(ex["names"]),
                        "--parses", ex["parses_dir"], "--human-scores", ex["human_scores"], "-m", "bleu,chrf,hwcm",
                        "--syntactic-metric", "HWCM-4", "--documents", str(docs)],
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-2000:]
    res = json.loads((out / "09_evaluate_your_system.json").read_text(encoding="utf-8"))
    assert res["parameters"]["documents"] == str(docs.resolve())
    assert res["parameters"]["syntactic_metric"] == "HWCM-4"
    assert {v["verdict"] for v in res["verdicts"].values()} == {"cannot tell"}
    assert all("here 3)" in v["rule"] for v in res["verdicts"].values())
    assert "HWCM-4" in (out / "09_evaluate_your_system.html").read_text(encoding="utf-8")


def test_report_refuses_an_output_below_a_file_and_names_a_bad_baseline_before_papermill(tmp_path):
    """Issue 37: ``-o file/sub`` and a ``--baseline`` that is no system failed only after papermill started; a
    system's file name is accepted as ``--baseline`` (as ``score`` accepts it)."""
    ex = E.example_files()
    afile = tmp_path / "afile"
    afile.write_text("x", encoding="utf-8")
    base = [sys.executable, "-m", "syneval_nb.app.cli", "report", "-r", *ex["ref_files"], "-i", *ex["hyp_files"],
            "--parses", ex["parses_dir"], "--no-cache"]
    r = subprocess.run(base + ["-o", str(afile / "sub")], capture_output=True, text=True, timeout=300)
    assert (r.returncode, r.stderr) == (2, f"syneval-nb report: error: -o {afile / 'sub'}: {afile} is a file, so the "
                                           "report folder cannot be made there\n")
    r = subprocess.run(base + ["-o", str(tmp_path / "rep"), "--baseline", "nope.txt"], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 2 and r.stderr.startswith("syneval-nb report: error: --baseline 'nope.txt' is not one of "
                                                     "the systems ['system_good', 'system_literal', 'system_scrambled']")
    assert not (tmp_path / "rep").exists()
    st = E.load_study(ex["hyp_files"], ex["ref_files"], None, None, ["bleu"], parses_dir=ex["parses_dir"],
                      baseline="system_literal.txt", progress=False, n_resamples=0, cache=None)
    assert st.baseline == "system_literal"


def _report(tmp_path, hyps, refs, parses, human, metrics="bleu,chrf,stm"):
    """``syneval-nb report`` on the files (quiet, no cache): ``(completed process, results or None, folder)``."""
    import json

    out = tmp_path / "rep"
    r = subprocess.run([sys.executable, "-m", "syneval_nb.app.cli", "report", "-q", "--no-cache", "-o", str(out),
                        "-r", *refs, "-i", *hyps, "--parses", parses, "-m", metrics]
                       + (["--human-scores", human] if human else []), capture_output=True, text=True, timeout=900)
    res = json.loads((out / "09_evaluate_your_system.json").read_text(encoding="utf-8")) if r.returncode == 0 else None
    return r, res, out


def _edit(path, edits: dict) -> None:
    lines = read_lines(path)
    for i, text in edits.items():
        lines[i] = text
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")


BAD_INPUTS = ["one system", "constant human scores", "a system file of another length", "empty lines",
              "a NaN human score", "unicode and tabs", "parses of another text"]


@pytest.mark.slow
@pytest.mark.parametrize("case", BAD_INPUTS)
def test_report_on_bad_or_unusual_inputs(tmp_path, case):
    """Bad or unusual inputs a user may give ``report``: each gives a result or, before any work, one clear error
    naming the problem; never a traceback. (Constant human scores and a report without a depth metric broke the
    notebook; parses of another text failed only inside the notebook.)"""
    import sacrebleu

    good, lit = _example_human("system_good"), _example_human("system_literal")
    two = {"good": "system_good", "lit": "system_literal"}
    human = {"good": good, "lit": lit}
    metrics = "bleu,chrf,stm"
    if case == "one system":
        hyps, refs, parses, hs = _files(tmp_path, {"good": "system_good"}, human={"good": good})
    elif case == "constant human scores":
        hyps, refs, parses, hs = _files(tmp_path, two, human={"good": [50] * 30, "lit": [50] * 30})
    else:
        hyps, refs, parses, hs = _files(tmp_path, two, human=human)
    if case == "a system file of another length":
        Path(hyps[1]).write_text("\n".join(read_lines(hyps[1])[:29]) + "\n", encoding="utf-8")
    elif case == "empty lines":
        _edit(hyps[1], {3: "", 7: ""})
        _edit(Path(parses) / "lit.txt.ptb", {3: "(())", 7: "(())"})
    elif case == "a NaN human score":
        _edit(hs, {5: "good\t4\tnan"})  # line 5 of the TSV: good's segment 4 (0-based), after the header
    elif case in ("unicode and tabs", "parses of another text"):
        _edit(hyps[1], {2: read_lines(hyps[1])[2].replace(" ", "\t", 1),
                        5: "Ça déjà vu — naïve “quotes” 日本語 " + read_lines(hyps[1])[5]})
        metrics = "bleu,chrf,ter" if case == "unicode and tabs" else "bleu,stm"
    r, res, out = _report(tmp_path, hyps, refs, parses, hs, metrics)
    if case == "a system file of another length":
        assert (r.returncode, r.stderr) == (2, f"syneval-nb report: error: {hyps[1]} has 29 lines but {refs[0]} has 30: "
                                               "the files must be line-aligned (one segment per line)\n")
        assert not out.exists()
        return
    if case == "parses of another text":
        assert (r.returncode, r.stderr) == (2, (
            f"syneval-nb report: error: {Path(parses) / 'lit.txt.ptb'} line 6 does not hold the words of {hyps[1]} "
            "line 6 ('The most of the works was paid by a regional subsi'... vs 'Ça déjà vu — naïve “quotes” 日本語 The "
            "most of the wo'...): these parses belong to another text; parse the file again (syneval-nb parse) or fix "
            "--parses\n"))
        assert not out.exists()
        return
    assert (r.returncode, r.stderr) == (0, ""), r.stderr[-3000:]
    v = res["verdicts"]
    page = (out / "09_evaluate_your_system.html").read_text(encoding="utf-8")
    if case == "one system":
        assert set(v) == {f"STM-BP-4 {c}" for c in (
            "beats chrF (human scores, Pearson)", "beats BLEU (human scores, Pearson)",
            "beats chrF beyond length (human scores, partial r given the length model)",
            "beats BLEU beyond length (human scores, partial r given the length model)",
            "correlates with the human scores", "correlates with the human scores beyond length",
            "beats the placebo (human scores)")}  # no system claim, no within-segment claim
        assert [(x["system"], x["rank"], x["n"]) for x in res["human_ranking"]] == [("good", 1, 30)]
        assert res["human_ranking"][0]["human"] == pytest.approx(np.mean(good), abs=1e-12)
        assert {x["note"] for x in res["system_agreement"]} == {
            "1 rated system(s): system-level agreement cannot be estimated"}
    elif case == "constant human scores":
        human_claims = {c: x for c, x in v.items() if "human scores" in c}
        assert len(human_claims) == 9 and {x["verdict"] for x in human_claims.values()} == {"cannot tell"}
        assert all("cannot be estimated (constant or identical scores" in x["reason"] for x in human_claims.values())
        assert v["lit is better than good by the metrics"]["human_view"] == "cannot tell"
        assert "No r with the human scores can be estimated (constant scores)" in page
    elif case == "empty lines":
        assert res["line_faults"]["lit"] == {"empty": 2, "unparsed": 0}
        assert res["unscorable"] == [{"system": "lit", "seg_id": i, "line": i + 1, "cause": "empty hypothesis",
                                      "metrics": "BLEU, chrF, STM-BP-4"} for i in (3, 7)]
        assert not {("lit", 3), ("lit", 7)} & {(d["system"], d["seg_id"]) for d in res["disagreements"]}
    elif case == "a NaN human score":  # read as a missing score: that translation is not rated
        rank = {x["system"]: x for x in res["human_ranking"]}
        assert rank["good"]["n"] == 29 and rank["lit"]["n"] == 30
        assert rank["good"]["human"] == pytest.approx(np.mean(good[:4] + good[5:]), abs=1e-12)
        assert res["human_correlations"]["BLEU|pearson"]["n"] == 59
    elif case == "unicode and tabs":  # the scores are sacrebleu's on the same lines (a tab is whitespace)
        ref = read_lines(refs[0])
        for s, f in zip(("good", "lit"), hyps):
            assert res["scores"][s]["BLEU"] * 100 == pytest.approx(
                sacrebleu.corpus_bleu(read_lines(f), [ref]).score, abs=1e-9)
            assert res["scores"][s]["chrF"] * 100 == pytest.approx(
                sacrebleu.corpus_chrf(read_lines(f), [ref]).score, abs=1e-9)
        assert "No depth metric (STM, DSTM, HWCM) among the scored metrics ['BLEU', 'chrF', 'TER']: no curves." in page


def test_depth_curves_run_through_the_one_scoring_loop(tmp_path, monkeypatch):
    """Issue 34: the depth curves are scored by :func:`syneval_nb.metrics.base.score_systems` (one call per
    family, every system; the old code called ``corpus_score`` per system), and the curve's point at depth ``d``
    is the corpus score of the scored STM / HWCM variant with maximum depth ``d`` scored on its own."""
    from syneval_nb.metrics.base import score_systems

    hyps, refs, parses, _ = _files(tmp_path, {"good": "system_good", "lit": "system_literal"})
    st = E.load_study(hyps, refs, None, None, ["bleu", "stm", "hwcm"], parses_dir=parses, progress=False,
                      n_resamples=20, cache=None)
    calls = []

    def spy(metrics, corpora, **kw):
        calls.append(([m.name for m in metrics], sorted(corpora)))
        return score_systems(metrics, corpora, **kw)

    monkeypatch.setattr(E, "score_systems", spy)
    curves = E.depth_curves(st, max_depth=4)
    scored = {m.name.rsplit("-", 1)[0]: m for m in st.evaluation.metrics
              if getattr(m, "family", None) in ("STM", "HWCM")}
    assert calls == [([f"{n}-4"], ["good", "lit"]) for n in scored]  # e.g. STM-BP-4 (the kit's default STM)
    assert len(curves) == 2 * 2 * 4 and set(curves["metric"]) == set(scored)
    for r in curves.to_dict("records"):
        alone = scored[r["metric"]].variant(depth=r["depth"])
        assert alone.name == f"{r['metric']}-{r['depth']}"
        assert r["score"] == pytest.approx(alone.corpus_score(st.corpora[r["system"]]).score, abs=1e-12), r
