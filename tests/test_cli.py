"""The ``syneval-nb`` command line as an MT user meets it (issue 39): plain-text help, the top-level usage, p-values
as the chapters print them, sacreBLEU's conventions (``-i -``, ``--score-only``, ``--width``, segment BLEU) and the
messages that name the right file or install command. Runs on the embedded example (30 lines, BLEU and chrF only:
no parser)."""
from __future__ import annotations

import importlib.util
import io
import os
import re
import subprocess
import sys
from pathlib import Path
from unittest import mock

import pytest

from syneval_nb import __version__
from syneval_nb.app import cli, report, score
from syneval_nb.parsers import stanford
from syneval_nb import paths
from syneval_nb.paths import KIT_DATA_DIR
from syneval_nb.textio import read_lines

EX = Path(KIT_DATA_DIR) / "examples" / "your_system"
REF, GOOD, LITERAL, SCRAMBLED = (str(EX / f) for f in ("ref.A.txt", "system_good.txt", "system_literal.txt",
                                                        "system_scrambled.txt"))


def run_process(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "syneval_nb.app.cli", *args], capture_output=True, text=True,
                          input=stdin, env={**os.environ}, timeout=300)


class Done:
    def __init__(self, returncode: int, stdout: str, stderr: str) -> None:
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


@pytest.fixture
def run(capsys, monkeypatch):
    """``syneval-nb ARGS`` in this process (a subprocess costs seconds of imports): exit code, stdout, stderr."""
    def call(*args: str, stdin: str | None = None) -> Done:
        capsys.readouterr()
        if stdin is not None:
            monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode("utf-8")), encoding="utf-8"))
        try:
            rc = cli.main(list(args))
        except SystemExit as e:  # argparse: --help, a bad option
            rc = e.code
        got = capsys.readouterr()
        return Done(rc, got.out, got.err)
    return call


# ------------------------------------------------------------------------------------------------ help, top level


@pytest.mark.parametrize("cmd", ["parse", "rst", "score", "report", "fit"])
def test_help_is_plain_text_without_a_checkout_path(run, cmd):
    r = run(cmd, "--help")
    assert r.returncode == 0, r.stderr
    out = r.stdout
    for rest in ("``", ":func:", ":mod:", "`", "**", "data/examples"):
        assert rest not in out, (cmd, rest)
    assert out.startswith(f"usage: syneval-nb {cmd}")


def test_score_help_names_format_seed_and_the_sacrebleu_options(run):
    out = " ".join(run("score", "--help").stdout.split())
    assert "--format {text,json,tsv} text: a table for people (default)" in out
    assert "--seed SEED seed of the bootstrap resamples (default 0" in out
    assert "-b, --score-only print only the scores" in out and "-w N, --width N decimal places" in out
    assert "- reads one system from stdin" in out and "--sentence-bleu {papers,sacrebleu}" in out
    assert 'printed as "p < 0.001" below 0.001' in out


def test_report_help_says_the_embedded_example_and_has_quiet_and_seed(run):
    out = " ".join(run("report", "--help").stdout.split())
    assert "With no -r and -i it reports on the embedded example" in out
    assert "-q, --quiet no progress bars" in out and "--seed SEED seed of the bootstrap resamples" in out
    assert "run_notebook" not in out


def test_no_command_is_usage_on_stderr_exit_2(capsys):
    assert cli.main([]) == 2
    got = capsys.readouterr()
    assert got.out == "" and got.err.startswith("usage: syneval-nb [-h] [-V] COMMAND [options]")
    assert got.err.rstrip().endswith("syneval-nb: error: the following arguments are required: COMMAND")
    r = run_process()  # the installed entry point too
    assert r.returncode == 2 and r.stdout == "" and "usage: syneval-nb" in r.stderr


def test_top_level_help_lists_version(capsys):
    assert cli.main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "  -V, --version  print the version (syneval-nb X.Y.Z) and exit" in out
    assert "  -h, --help     show this help and exit" in out
    assert cli.main(["-V"]) == 0 and capsys.readouterr().out == f"syneval-nb {__version__}\n"


def test_parse_takes_q_for_quiet(run):
    assert "-q, --quiet" in run("parse", "--help").stdout


# ------------------------------------------------------------------------------------------------ p-values


def test_paired_p_values_print_as_the_chapters_do(run):
    r = run("score", "-q", "-r", REF, "-i", SCRAMBLED, GOOD, LITERAL, "-m", "bleu,chrf", "--paired-bootstrap")
    assert r.returncode == 0, r.stderr
    rows = {tuple(line.split()[:2]): line for line in r.stdout.splitlines() if line.startswith(("BLEU", "chrF"))}
    # system_good beats the scrambled baseline in every resample: p = 1/1001
    assert rows[("BLEU", "system_good")].endswith("p < 0.001")
    assert rows[("chrF", "system_literal")].endswith("  p = 0.061")
    assert rows[("BLEU", "system_scrambled")].split()[-1] == "baseline"
    assert "0.0000" not in r.stdout
    assert score._pfmt(0.0123) == "p = 0.012" and score._pfmt(float("nan")) == "-" and score._pfmt(1.0) == "p = 1"


# ------------------------------------------------------------------------------------------------ sacreBLEU conventions


def test_stdin_is_one_system_named_stdin(run):
    text = Path(GOOD).read_text(encoding="utf-8")
    from_file = run("score", "-q", "-r", REF, "-i", GOOD, "-m", "bleu,chrf", "--format", "tsv")
    from_stdin = run("score", "-q", "-r", REF, "-i", "-", "-m", "bleu,chrf", "--format", "tsv", stdin=text)
    assert from_stdin.returncode == 0, from_stdin.stderr
    assert from_stdin.stdout == from_file.stdout.replace("system_good", "stdin")
    assert from_stdin.stdout.splitlines()[1].startswith("stdin\tBLEU\t0.77938743")


@pytest.mark.parametrize("args, needle", [
    (("-r", REF, "-i", "-", "-"), "-i: stdin (-) can be given once (it holds one system)"),
    (("-r", "-", "-i", GOOD), "-r -: stdin can be one system (-i -), not a reference"),
])
def test_stdin_twice_or_as_reference_is_refused(run, args, needle):
    r = run("score", "-q", *args, "-m", "bleu", stdin="a b c\n")
    assert r.returncode == 2 and r.stderr.strip() == f"syneval-nb score: error: {needle}"


def test_an_empty_stdin_is_named_as_stdin(run):
    r = run("score", "-q", "-r", REF, "-i", "-", "-m", "bleu", stdin="")
    assert r.returncode == 2 and r.stderr.strip() == "syneval-nb score: error: system file stdin (-i -) is empty"


def test_score_only_prints_one_number_per_metric_and_system(run):
    r = run("score", "-q", "-r", REF, "-i", GOOD, LITERAL, "-m", "bleu,chrf", "-b")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "0.7794\n0.5920\n0.8999\n0.8075\n"  # BLEU good, literal; chrF good, literal
    r = run("score", "-q", "-r", REF, "-i", GOOD, "-m", "bleu", "--score-only", "--width", "2")
    assert r.stdout == "0.78\n"
    r = run("score", "-q", "-r", REF, "-i", GOOD, "-m", "bleu", "-b", "--format", "json")
    assert r.returncode == 2 and "--score-only prints the corpus scores alone" in r.stderr


def test_width_sets_the_decimal_places_of_the_table(run):
    r = run("score", "-q", "-r", REF, "-i", GOOD, "-m", "bleu", "--width", "6", "--n-bootstrap", "0")
    assert r.returncode == 0, r.stderr
    row = next(line for line in r.stdout.splitlines() if line.startswith("BLEU"))
    assert row.split()[:3] == ["BLEU", "system_good", "0.779387"]
    assert run("score", "-q", "-r", REF, "-i", GOOD, "-m", "bleu", "--width", "-1").returncode == 2


def _short_lines(tmp_path: Path) -> str:
    """The good system with every third line cut to its first three words (segment BLEU eff:no gives 0 there)."""
    lines = read_lines(GOOD)
    cut = [" ".join(s.split()[:3]) if i % 3 == 2 else s for i, s in enumerate(lines)]
    p = tmp_path / "short.txt"
    p.write_text("\n".join(cut) + "\n", encoding="utf-8")
    return str(p)


def test_segment_level_says_which_segment_bleu_and_the_switch_equals_sentence_bleu(run, tmp_path):
    import json

    import sacrebleu

    hyp = _short_lines(tmp_path)
    r = run("score", "-q", "-r", REF, "-i", hyp, "-m", "bleu", "--segment-level", "--n-bootstrap", "0")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[1] == (
        "segment-level BLEU: exp smoothing over all 4 n-gram orders (eff:no, as corpus BLEU), so a line of fewer "
        "than 4 tokens scores 0; sacrebleu's sentence_bleu uses exp smoothing with effective order (eff:yes): "
        "--sentence-bleu sacrebleu gives its values")
    refs, hyps = read_lines(REF), read_lines(hyp)
    want = [sacrebleu.sentence_bleu(h, [ref]).score / 100 for h, ref in zip(hyps, refs)]
    out = {}
    for mode in ("papers", "sacrebleu"):
        r = run("score", "-q", "-r", REF, "-i", hyp, "-m", "bleu", "--segment-level", "--format", "json",
                "--n-bootstrap", "0", "--sentence-bleu", mode)
        assert r.returncode == 0, r.stderr
        out[mode] = json.loads(r.stdout)
    papers, sacre = out["papers"]["segments"]["short"]["BLEU"], out["sacrebleu"]["segments"]["short"]["BLEU"]
    assert papers[2] == 0.0 and want[2] > 0.05  # a three-word line
    assert sacre == pytest.approx(want, abs=1e-12)
    assert out["sacrebleu"]["signatures"]["BLEU"].startswith("BLEU|n:4|smooth:exp|eff:yes|")
    corpus = sacrebleu.corpus_bleu(hyps, [refs]).score / 100  # the corpus score is the same either way here
    assert out["sacrebleu"]["scores"][0]["score"] == pytest.approx(corpus, abs=1e-12)
    assert out["papers"]["scores"][0]["score"] == pytest.approx(corpus, abs=1e-12)
    r = run("score", "-q", "-r", REF, "-i", hyp, "-m", "bleu", "--segment-level", "--n-bootstrap", "0",
            "--sentence-bleu", "sacrebleu")
    assert r.stdout.splitlines()[1] == ("segment-level BLEU: exp smoothing with effective order (eff:yes), as "
                                        "sacrebleu's sentence_bleu")


# ------------------------------------------------------------------------------------------------ messages


def test_missing_parser_package_names_the_wheel_not_a_pypi_project():
    with mock.patch.object(importlib.util, "find_spec", return_value=None):
        with pytest.raises(stanford.ParserSetupError) as e:
            stanford.stanford_jars()
    msg = str(e.value)
    assert "[parsers]" in msg and "bash setup.sh" in msg and "pip install -e '.[parsers]'" in msg  # a checkout
    with mock.patch.object(importlib.util, "find_spec", return_value=None), \
            mock.patch.object(paths, "in_checkout", return_value=False):
        with pytest.raises(stanford.ParserSetupError) as e:
            stanford.stanford_jars()
    # an installed wheel: that wheel by its file name (the tag of the installed WHEEL file, else *)
    assert re.search(r"pip install 'syneval_nb-0\.1\.0-[^ ]+\.whl\[parsers\]' \(the wheel it came from: not on "
                     r"PyPI\)$", str(e.value)), str(e.value)
    assert "syneval-nb[parsers]" not in str(e.value)
    src = Path(stanford.__file__).parents[1]
    assert not [p for p in src.rglob("*.py") if "syneval-nb[parsers]" in p.read_text(encoding="utf-8")]


def test_system_level_human_scores_are_refused_naming_the_file_kind(run, tmp_path):
    sys_file = tmp_path / "xx-en.mqm.sys.score"
    sys_file.write_text("system_good\t-1.5\nsystem_literal\t-3.0\n", encoding="utf-8")
    r = run("score", "-q", "-r", REF, "-i", GOOD, LITERAL, "-m", "bleu", "--human-scores", str(sys_file))
    assert r.returncode == 2
    assert r.stderr.strip() == (
        f"syneval-nb score: error: --human-scores {sys_file} is a system-level score file (.sys.score); only "
        f"segment-level human scores are read: a LP.NAME.seg.score file (one line per system and segment) or a TSV "
        f"with columns system, seg_id, score (the system-level r uses each system's mean segment score)")
    other = tmp_path / "ratings.score"  # one score per system under another name
    other.write_text(sys_file.read_text(encoding="utf-8"), encoding="utf-8")
    r = run("score", "-q", "-r", REF, "-i", GOOD, LITERAL, "-m", "bleu", "--human-scores", str(other))
    assert r.returncode == 2 and f"{other} holds one score per system (system-level scores); only segment-level" \
        in r.stderr


def test_mtme_name_with_only_a_system_level_file_is_named(run, tmp_path):
    d = tmp_path / "mtme"
    (d / "system-outputs" / "xx-en").mkdir(parents=True)
    (d / "references").mkdir()
    (d / "human-scores").mkdir()
    for name, f in (("good", GOOD), ("literal", LITERAL), ("scrambled", SCRAMBLED)):
        (d / "system-outputs" / "xx-en" / f"{name}.txt").write_text(Path(f).read_text(encoding="utf-8"),
                                                                     encoding="utf-8")
    (d / "references" / "xx-en.refA.txt").write_text(Path(REF).read_text(encoding="utf-8"), encoding="utf-8")
    (d / "human-scores" / "xx-en.mqm.sys.score").write_text("good\t-1\nliteral\t-2\nscrambled\t-5\n",
                                                             encoding="utf-8")
    r = run("score", "-q", "--mtme", str(d), "--lp", "xx-en", "-m", "bleu", "--human-scores", "mqm")
    assert r.returncode == 2, r.stdout
    assert re.search(r"--human-scores mqm: there is no xx-en\.mqm\.seg\.score, only the system-level "
                     r"xx-en\.mqm\.sys\.score; only segment-level human scores are read", r.stderr), r.stderr


# ------------------------------------------------------------------------------------------------ report -q


@pytest.mark.parametrize("quiet", [True, False])
def test_report_quiet_turns_off_both_progress_bars(tmp_path, quiet):
    seen = {}

    def prepare(corpora, need, **kw):
        seen["prepare"] = kw["progress"]

    def run_notebook(nb, out, params, progress_bar):
        seen["notebook"] = progress_bar
        return {}

    argv = ["-r", REF, "-i", GOOD, LITERAL, "-m", "bleu,stm", "--cache", str(tmp_path / "c.sqlite"),
            "-o", str(tmp_path / "rep")] + (["-q"] if quiet else [])
    with mock.patch.object(report.M, "prepare", prepare), mock.patch.object(report, "run_notebook", run_notebook):
        assert report.cli(argv) == 0
    assert seen == {"prepare": not quiet, "notebook": not quiet}
