"""The papermill runner behind ``syneval-nb run``, the CLI dispatcher and the data-folder resolution, on a tiny
notebook written here (the real notebooks are run by tests/test_notebooks.py)."""
from __future__ import annotations

import json
import math
from pathlib import Path

import nbformat
import numpy as np
import pytest
from nbformat import v4

from syneval_nb import paths


from syneval_nb.app import cli
from syneval_nb.app import runner
def _notebook(path: Path, body: str) -> Path:
    params = v4.new_code_cell("data_dir = None\nsample = None\noutput_dir = '.'\nseed = 0")
    params.metadata["tags"] = ["parameters"]
    nb = v4.new_notebook(cells=[v4.new_markdown_cell("# tiny"), params, v4.new_code_cell(body)])
    nb.metadata["kernelspec"] = {"name": "syneval-nb", "display_name": "Python 3 (syneval-nb)", "language": "python"}
    nbformat.write(nb, str(path))
    return path


WRITES = ("from syneval_nb.app.runner import write_results\n"
          "print('hello')\n"
          "write_results({'sample': sample, 'twice': 2 * (sample or 0)}, output_dir, '00_tiny')")


def test_write_results_plain_json(tmp_path):
    p = runner.write_results({"a": np.float64(0.5), "b": np.arange(3), "c": float("nan"), "d": (1, np.int64(2))},
                             tmp_path, "x")
    assert json.loads(p.read_text()) == {"a": 0.5, "b": [0, 1, 2], "c": None, "d": [1, 2]}


@pytest.mark.slow
def test_run_all_writes_notebook_html_json_and_index(tmp_path):
    good = _notebook(tmp_path / "00_tiny.ipynb", WRITES)
    bad = _notebook(tmp_path / "01_broken.ipynb", "raise ValueError('on purpose')")
    rows = runner.run_all([good, bad], tmp_path / "reports", {"sample": 21})
    assert [(r["stem"], r["status"]) for r in rows] == [("00_tiny", "ok"), ("01_broken", "failed")]
    assert rows[0]["results"] == {"sample": 21, "twice": 42,  # the injected parameter reached the notebook
                                  "parameters": {"data_dir": None, "sample": 21, "seed": 0,
                                                 "output_dir": str((tmp_path / "reports" / "00_tiny").resolve())}}
    assert "on purpose" in rows[1]["error"]
    assert "on purpose" in (tmp_path / "reports" / "01_broken" / "01_broken.html").read_text()  # kept for reading
    out = tmp_path / "reports" / "00_tiny"
    assert (out / "00_tiny.ipynb").is_file() and (out / "00_tiny.json").is_file()
    assert "hello" in (out / "00_tiny.html").read_text()
    index = (tmp_path / "reports" / "index.html").read_text()
    assert "00_tiny/00_tiny.html" in index and "failed" in index and "on purpose" in index


@pytest.mark.slow
def test_notebook_without_results_file_is_an_error(tmp_path):
    nb = _notebook(tmp_path / "00_silent.ipynb", "x = 1")
    with pytest.raises(FileNotFoundError, match="did not write"):
        runner.run_notebook(nb, tmp_path / "out", html_copy=False)


def test_strip_outputs_keeps_tags(tmp_path):
    p = _notebook(tmp_path / "00_tiny.ipynb", "1 + 1")
    nb = nbformat.read(str(p), as_version=4)
    nb.cells[2].outputs = [v4.new_output("execute_result", data={"text/plain": "2"}, execution_count=1)]
    nb.cells[2].execution_count = 1
    nb.cells[2].metadata["papermill"] = {"duration": 0.1}
    nbformat.write(nb, str(p))
    runner.strip_outputs([p])
    nb = nbformat.read(str(p), as_version=4)
    assert nb.cells[2].outputs == [] and nb.cells[2].execution_count is None
    assert "papermill" not in nb.cells[2].metadata
    assert nb.cells[1].metadata["tags"] == ["parameters"]


def test_cli_dispatch_and_errors(capsys):
    assert cli.main(["--help"]) == 0 and "run" in capsys.readouterr().out
    assert cli.main(["nonsense"]) == 2 and "unknown command 'nonsense'" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # argparse: a selection that matches no notebook
        runner.cli(["99_no_such_notebook"])


def test_data_dir_resolution_order(tmp_path, monkeypatch):
    explicit = tmp_path / "explicit"
    explicit.mkdir()
    env = tmp_path / "env"
    env.mkdir()
    monkeypatch.setenv("SYNEVAL_NB_DATA", str(env))
    assert paths.data_dir(explicit) == explicit  # 1. the argument
    assert paths.data_dir() == env  # 2. the environment variable
    monkeypatch.delenv("SYNEVAL_NB_DATA")
    monkeypatch.setattr(paths, "shared_data_dir", lambda: None)
    monkeypatch.setenv("SYNEVAL_NB_CACHE", str(tmp_path / "cache"))
    assert paths.data_dir() == tmp_path / "cache" / "data"  # 4. the user cache (3. ../shared/data is switched off)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        paths.data_dir(tmp_path / "missing")
    monkeypatch.setenv("SYNEVAL_NB_DATA", str(tmp_path / "missing"))
    with pytest.raises(FileNotFoundError, match="SYNEVAL_NB_DATA"):
        paths.data_dir()


def test_parse_value_json_or_text():
    assert runner._parse_value("200") == 200 and runner._parse_value("null") is None
    assert runner._parse_value('["A", "B"]') == ["A", "B"] and runner._parse_value("refB") == "refB"
    assert math.isnan(float(runner._parse_value("NaN")))


# ------------------------------------------------------------------------------------ issue 13: syneval-nb run
def _run_cli(*args, timeout=600):
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "syneval_nb.app.cli", "run", *map(str, args)], capture_output=True,
                          text=True, timeout=timeout)


def test_notebook_parameters_are_read_from_the_tagged_cell(tmp_path):
    nb = _notebook(tmp_path / "00_tiny.ipynb", WRITES)
    assert runner.notebook_parameters(nb) == {"data_dir": None, "sample": None, "output_dir": ".", "seed": 0}
    real = runner.notebook_parameters(runner.list_notebooks()[0])  # 01_trees_and_heads
    assert real == {"data_dir": None, "sample": None, "output_dir": ".", "seed": 0, "example_segment": 81,
                    "max_chain": 3}
    runner.check_parameters([nb], {"sample": 3, "seed": 1})
    with pytest.raises(runner.ParameterError, match=r"00_tiny has no parameter 'sampel'; its parameters are: "
                                                    r"data_dir, sample, output_dir, seed"):
        runner.check_parameters([nb], {"sampel": 3})


def test_run_refuses_an_unknown_parameter_before_any_notebook_starts(tmp_path):
    """Issue 13: ``-p`` with a misspelled name ran the full data with the default and exited 0."""
    nb = _notebook(tmp_path / "00_tiny.ipynb", WRITES)
    done = _run_cli(nb, "-p", "sampel=3", "-o", tmp_path / "reports")
    assert done.returncode == 2
    assert done.stderr.splitlines() == ["syneval-nb run: 00_tiny has no parameter 'sampel'; its parameters are: "
                                        "data_dir, sample, output_dir, seed"]
    assert not (tmp_path / "reports").exists()  # nothing started
    # a chapter's own knob is refused for a notebook that does not have it (here: all of them selected by prefix)
    done = _run_cli("0", "-p", "max_chain=2", "-o", tmp_path / "reports")
    assert done.returncode == 2 and "02_lexical_metrics has no parameter 'max_chain'" in done.stderr
    assert not (tmp_path / "reports").exists()


@pytest.mark.parametrize("value, shown", [("abc", "'abc'"), ("0", "0"), ("-3", "-3"), ("1.5", "1.5"),
                                          ("true", "True")])
def test_run_refuses_a_bad_parameter_value_before_any_notebook_starts(tmp_path, value, shown):
    """Issue 24: ``-p sample=abc``, ``0``, ``-3`` and ``1.5`` failed inside the notebook with unrelated errors."""
    nb = _notebook(tmp_path / "00_tiny.ipynb", WRITES)
    done = _run_cli(nb, "-p", f"sample={value}", "-o", tmp_path / "reports")
    assert done.returncode == 2
    default = runner.notebook_parameters(nb)["sample"]
    assert done.stderr.splitlines() == [f"syneval-nb run: 00_tiny: parameter sample={shown} must be a whole number "
                                        f">= 1{' or None' if default is None else ''} (its default is {default!r})"]
    assert not (tmp_path / "reports").exists()


def test_run_refuses_a_missing_data_dir(tmp_path):
    nb = _notebook(tmp_path / "00_tiny.ipynb", WRITES)
    done = _run_cli(nb, "--data-dir", tmp_path / "nowhere", "-o", tmp_path / "reports")
    assert done.returncode == 2
    assert done.stderr.splitlines() == [f"syneval-nb run: --data-dir {tmp_path / 'nowhere'} is not a folder"]
    assert not (tmp_path / "reports").exists()


@pytest.mark.slow
def test_run_records_parameters_removes_stale_results_and_prints_the_whole_error(tmp_path):
    """Issue 13: the results JSON did not say which parameters made it; a failed run left the JSON of an earlier
    successful one beside it; the console cut the error at 500 characters."""
    nb = _notebook(tmp_path / "00_tiny.ipynb", WRITES)
    reports = tmp_path / "reports"
    done = _run_cli(nb, "-p", "sample=21", "-p", "seed=3", "-o", reports)
    assert done.returncode == 0, done.stderr
    result = json.loads((reports / "00_tiny" / "00_tiny.json").read_text())
    assert result == {"sample": 21, "twice": 42, "parameters": {
        "data_dir": None, "sample": 21, "seed": 3, "output_dir": str((reports / "00_tiny").resolve())}}
    message = "x" * 700 + " the end of a long message"
    _notebook(tmp_path / "00_tiny.ipynb", f"raise ValueError({message!r})")
    done = _run_cli(nb, "-o", reports)
    assert done.returncode == 1
    assert f"00_tiny  ValueError: {message}\n" in done.stdout
    assert not (reports / "00_tiny" / "00_tiny.json").exists()  # the stale results of the first run are gone


def test_every_parameters_cell_reads_without_a_papermill_warning(caplog):
    """papermill reads each chapter's parameters cell itself (to warn about unknown parameters): a line it cannot
    parse (a comment with ``=``) is a warning on every run and makes it call that parameter unknown."""
    import logging

    from papermill.translators import PythonTranslator

    nbs = runner.list_notebooks()
    assert [nb.stem[:2] for nb in nbs] == ["01", "02", "03", "04", "05", "06", "07", "08", "09", "10"]
    for nb_path in nbs:
        nb = nbformat.read(str(nb_path), as_version=4)
        cell = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="papermill"):
            names = [p.name for p in PythonTranslator.inspect(cell)]
        assert caplog.records == [], (nb_path.name, [r.getMessage() for r in caplog.records])
        assert names == list(runner.notebook_parameters(nb_path)), nb_path.name


def test_kernel_channels_are_encrypted():
    opts = runner._engine_options()
    assert opts["config"]["KernelManager"]["transport_encryption"] == "auto"
    assert runner._kernel_name() == "syneval-nb"  # setup.sh registered it for this very interpreter


@pytest.mark.slow
def test_a_run_prints_no_warning(tmp_path, capfd):
    """The kernel's stderr is the terminal's: a run prints neither ipykernel's unencrypted-TCP warning nor
    papermill's parameter warnings; an error in a cell still reaches the caller."""
    nb = _notebook(tmp_path / "00_tiny.ipynb", WRITES)
    result = runner.run_notebook(nb, tmp_path / "out", {"sample": 3}, html_copy=False)
    assert result["twice"] == 6
    out, err = capfd.readouterr()
    assert out == "" and err == "", (out, err)
    bad = _notebook(tmp_path / "01_broken.ipynb", "import sys; print('real problem', file=sys.stderr); 1/0")
    with pytest.raises(Exception, match="ZeroDivisionError"):
        runner.run_notebook(bad, tmp_path / "out-bad", html_copy=False)


def test_chapter_07_takes_n_jobs_as_a_count_of_processes():
    """``-p n_jobs=0`` (or -1, joblib's "all cores") is refused before the chapter starts, like ``workers``."""
    nb = next(p for p in runner.list_notebooks() if p.stem == "07_discourse_kernels")
    runner.check_parameters([nb], {"n_jobs": 1})
    for bad in (0, -1):
        with pytest.raises(runner.ParameterError, match=rf"^07_discourse_kernels: parameter n_jobs={bad} must be a "
                                                         r"whole number >= 1 \(its default is 2\)$"):
            runner.check_parameters([nb], {"n_jobs": bad})
