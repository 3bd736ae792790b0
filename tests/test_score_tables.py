"""Issue 24: human scores that do not fit the files are refused, by one reader, before any parsing.

``data.read_score_table`` serves ``load_text_set(scores=)`` and ``report --human-scores``
(``studies.evaluate_your_system.read_human``): ids outside the files (1-based ids called out), unknown systems
(file names and stems accepted), ragged or empty tables, duplicates. ``report`` refuses them with one line and exit
code 2 before papermill starts.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from syneval_nb.data import read_score_table
from syneval_nb.studies.evaluate_your_system import read_human
from syneval_nb.textio import read_lines

EXAMPLE = Path(__file__).resolve().parent.parent / "data" / "examples" / "your_system"
FILES = [str(EXAMPLE / f"system_{s}.txt") for s in ("good", "literal", "scrambled")]
NAMES = ["system_good", "system_literal", "system_scrambled"]  # syneval-nb's default names: the file stems


def _tsv(tmp_path, text: str) -> Path:
    p = tmp_path / "h.tsv"
    p.write_text(text, encoding="utf-8")
    return p


def test_the_example_scores_read_by_file_stem():
    h = read_human(EXAMPLE / "human_scores.tsv", NAMES, 30, FILES)
    assert len(h) == 90 and set(h["system"]) == set(NAMES) and h.attrs["aliases_used"] == {}
    rows = [line.split("\t") for line in read_lines(EXAMPLE / "human_scores.tsv")[1:]]
    assert h["score"].tolist() == [float(r[2]) for r in rows]
    assert h["seg_id"].tolist() == [int(r[1]) for r in rows]


def test_default_names_are_file_stems_and_file_names_are_aliases_with_a_note(tmp_path):
    """Issue 24: the default system names are the file stems, as in the WMT layouts (``GPT4-5shot``, not
    ``GPT4-5shot.txt``), in ``evaluate.load_files`` (so in ``score`` and ``report``); a score table that names the
    systems by their file names is still read, and the note says so."""
    from syneval_nb.evaluate import alias_note, file_aliases, load_files, system_names

    assert system_names(["a/GPT4-5shot.txt", "b/ONLINE-B.txt"]) == ["GPT4-5shot", "ONLINE-B"]
    assert system_names(["a/x.txt", "a/x.en"]) == ["x.txt", "x.en"]  # equal stems: the file names
    assert system_names(["a/x.txt", "b/x.txt"]) == ["a/x.txt", "b/x.txt"]  # equal names: the paths
    assert list(load_files([str(EXAMPLE / "ref.A.txt")], FILES)) == NAMES
    assert file_aliases(NAMES, FILES) == {f"{n}.txt": n for n in NAMES}
    rows = "".join(f"{n}.txt\t{i}\t{i}\n" for n in NAMES[:2] for i in range(3))
    h = read_human(_tsv(tmp_path, "system\tseg_id\tscore\n" + rows), NAMES, 30, FILES)
    assert h["system"].tolist() == [NAMES[0]] * 3 + [NAMES[1]] * 3
    assert alias_note(h.attrs["aliases_used"]) == (
        "the human scores name 2 system(s) by file name (system_good.txt -> system_good, system_literal.txt -> "
        "system_literal); they are read as those systems (the system names are the file stems unless --names is "
        "given)")


def test_rows_of_systems_not_scored_are_left_out_with_a_note(tmp_path):
    """A WMT human-score file rates every system of the test set; scoring two of them with it is legal: the other
    systems' rows are left out, and the note names them (score and report print it)."""
    h = read_human(EXAMPLE / "human_scores.tsv", NAMES[:2], 30, FILES[:2])
    assert (len(h), sorted(set(h["system"]))) == (60, NAMES[:2])
    assert h.attrs["left_out_note"] == (f"{EXAMPLE / 'human_scores.tsv'}: the rows of 1 system(s) that are not "
                                        "scored are left out (system_scrambled)")
    assert read_human(EXAMPLE / "human_scores.tsv", NAMES, 30, FILES).attrs["left_out_note"] is None
    out = subprocess.run([sys.executable, "-m", "syneval_nb.app.cli", "score", "-q", "-r", str(EXAMPLE / "ref.A.txt"),
                          "-i", *FILES[:2], "-m", "bleu", "--human-scores", str(EXAMPLE / "human_scores.tsv"),
                          "--n-bootstrap", "0"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stderr.splitlines() == [f"syneval-nb score: note: {h.attrs['left_out_note']}"]
    assert "BLEU      0.7611  [-, -]      60         -    2\n" in out.stdout  # 60 rated segments of the two systems


def test_the_published_mqm_format_is_read(shared_data, tmp_path):
    """google/wmt-mqm-human-evaluation's ``*.avg_seg_scores.tsv`` (``system mqm_avg_score seg_id``, whitespace,
    1-based seg_id, ``None``) is read as given: newstest2021 zh-en's file, renumbered to the 650 lines shipped here
    (segments.tsv's wmt_seg_id), against 3 systems. The segment-level r recomputed with sacrebleu's sentence chrF and
    scipy's pearsonr on the rated rows; the unrenumbered file (lines of the whole test set) is refused by name."""
    import json
    import math

    import sacrebleu
    from scipy.stats import pearsonr

    z = shared_data / "newstest2021-zhen-mqm"
    pos = {int(r.split("\t")[1]): int(r.split("\t")[0]) + 1 for r in read_lines(z / "segments.tsv")[1:]}
    published = read_lines(z / "mqm_newstest2021_zhen.avg_seg_scores.tsv")
    rows = [(ln.split()[0], ln.split()[1], int(ln.split()[2])) for ln in published[1:]]
    mine = tmp_path / "pub650.tsv"
    mine.write_text("\n".join([published[0]] + [f"{sy}\t{v} {pos[i]}" for sy, v, i in rows if i in pos]) + "\n",
                    encoding="utf-8")
    systems = ["SMU", "NiuTrans", "Borderline"]
    cmd = [sys.executable, "-m", "syneval_nb.app.cli", "score", "-q", "-r", str(z / "ref-A.en"), "-i",
           *[str(z / f"{s}.en") for s in systems], "-m", "chrf", "--n-bootstrap", "0", "--format", "json",
           "--human-scores"]
    out = subprocess.run(cmd + [str(mine)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stderr.splitlines() == [
        f"syneval-nb score: note: {mine}: read as the published MQM format (seg_id 1-based, None: not rated); the "
        "rows of 12 system(s) that are not scored are left out (DIDI-NLP, Facebook-AI, IIE-MT, MiSS, Online-W, ...)"]
    ref = read_lines(z / "ref-A.en")
    score = {(sy, pos[i] - 1): float(v) for sy, v, i in rows if i in pos and v != "None"}
    x, h = [], []
    for sy in systems:
        for k, hyp in enumerate(read_lines(z / f"{sy}.en")):
            if (sy, k) in score:
                x.append(sacrebleu.sentence_chrf(hyp, [ref[k]]).score)
                h.append(score[(sy, k)])
    got = json.loads(out.stdout)["human"]["chrF"]
    assert got["n_seg"] == len(h) == 1950 and math.isclose(got["seg_pearson"], pearsonr(x, h)[0], abs_tol=1e-9)
    assert round(got["seg_pearson"], 4) == 0.2006
    whole = subprocess.run(cmd + [str(z / "mqm_newstest2021_zhen.avg_seg_scores.tsv")], capture_output=True,
                           text=True)
    assert whole.returncode == 2 and "seg_id 651 (row 651) is outside the files' 1..650; this published MQM file " \
        "numbers the lines of a test set of 1948" in whole.stderr


def test_one_based_ids_are_called_out(tmp_path):
    rows = "".join(f"system_good\t{i + 1}\t{i}\n" for i in range(30))
    with pytest.raises(ValueError, match=r"seg_id 30 \(row 30\) is outside the files' 0..29; the ids look "
                                         r"1-based \(1..30\): subtract 1"):
        read_human(_tsv(tmp_path, "system\tseg_id\tscore\n" + rows), NAMES, 30, FILES)


def test_an_id_outside_the_files_is_refused(tmp_path):
    with pytest.raises(ValueError, match=r"seg_id 31 \(row 2\) is outside the files' 0..29$"):
        read_human(_tsv(tmp_path, "system\tseg_id\tscore\nsystem_good\t0\t1\nsystem_good\t31\t2\n"), NAMES, 30,
                   FILES)


@pytest.mark.parametrize("text, message", [
    ("", "no scores"),
    ("system\tseg_id\tscore\n", "no scores"),
    ("system\tseg_id\tscore\nsystem_good\t0\n", "row 1 has 2 tab-separated fields, the header 3"),
    ("system\tseg_id\tmqm\nsystem_good\t0\t1\n", "missing 'score'"),
    ("system\tseg_id\tscore\nsystem_good\t0\tabc\n", "'abc' is not a number"),
    ("system\tseg_id\tscore\nsystem_good\t1.5\t1\n", "not a whole number"),
    ("system\tseg_id\tscore\nGPT4\t0\t1\n", r"none of its systems \['GPT4'\] is among the scored systems"),
    ("system\tseg_id\tscore\nSYSTEM_GOOD\t0\t1\nsystem_literal\t0\t1\n",
     "system 'SYSTEM_GOOD' is not 'system_good' \\(system names are case-sensitive\\): its scores would be lost"),
    ("system\tseg_id\tscore\nsystem_good\t3\t1\nsystem_good.txt\t3\t2\n", "system system_good and seg_id 3 is "
                                                                          "given twice"),
    ("seg_id\tscore\n0\t1\n", "needs a 'system' column"),
])
def test_bad_tables_are_refused_with_the_fix_named(tmp_path, text, message):
    with pytest.raises(ValueError, match=message):
        read_human(_tsv(tmp_path, text), NAMES, 30, FILES)


def test_one_system_may_leave_out_the_system_column(tmp_path):
    t = read_score_table(_tsv(tmp_path, "seg_id\tscore\n0\t1.5\n2\t\n"), 3, ["a"], required=("score",))
    assert t["seg_id"].tolist() == [0, 2] and t["score"].tolist()[0] == 1.5 and t["score"].isna().tolist() == [
        False, True]


def test_report_refuses_bad_human_scores_before_any_work(tmp_path):
    """The run that parsed for 54 minutes and then failed: now one line and exit code 2 at once."""
    bad = _tsv(tmp_path, "system\tseg_id\tscore\n" + "".join(f"system_good\t{i + 1}\t{i}\n" for i in range(30)))
    r = subprocess.run([sys.executable, "-m", "syneval_nb.app.cli", "report", "-r", str(EXAMPLE / "ref.A.txt"), "-i",
                        *FILES, "--human-scores", str(bad), "-o", str(tmp_path / "out")], capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 2, r.stderr
    assert r.stderr.strip().splitlines() == [
        f"syneval-nb report: error: {bad}: seg_id 30 (row 30) is outside the files' 0..29; the ids look 1-based "
        "(1..30): subtract 1, seg_id is the 0-based line number"]
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("args, message", [
    (["-o", "FILE"], "-o {FILE} is a file; the report is a folder"),
    (["--sample", "0"], "--sample 0: give at least 1 segment"),
    (["--workers", "0"], "--workers must be >= 1, got 0"),
])
def test_report_refuses_bad_options_before_any_work(tmp_path, args, message):
    """Issue 24: ``report -o`` naming a file failed after the work and claimed the notebook was kept there."""
    f = tmp_path / "a-file.html"
    f.write_text("mine", encoding="utf-8")
    args = [str(f) if a == "FILE" else a for a in args]
    r = subprocess.run([sys.executable, "-m", "syneval_nb.app.cli", "report", *args], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"syneval-nb report: error: {message.format(FILE=f)}"), lines
    assert f.read_text(encoding="utf-8") == "mine"
