"""``syneval-nb score`` on 40 lines (every 25th) of two WMT21 de-en systems with both references, the shipped parses
given through --parses; plus one small run that really parses through the JVM (slow). The main run (``json_out``),
the JVM run's cold start and the read-only cache run are real commands in a subprocess (the entry point's wiring);
the other runs call the command's entry (``syneval_nb.app.cli.main``) in this process with stdout and stderr
captured at the file descriptors, the environment patched and Python's default warning filters (a warning the
command emits is on stderr, as a subprocess prints it), which saves each a new interpreter's imports (issue 38)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from _in_process import run_command
from _read_only import run_read_only
from syneval_nb import metrics
from syneval_nb.trees import rst
from syneval_nb.parsers.cache import ParseCache
from syneval_nb.textio import read_lines
from syneval_nb.evaluate import comparison_metrics

LINES = list(range(0, 1000, 25))
SYSTEMS = ["UEdin", "Online-W"]
METRICS = "bleu,ter,meteor,stm,hwcm,dstm,tkm,dtkm,dr,dr-lex"


def run_subprocess(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "syneval_nb.app.cli", "score", "-q", *args], capture_output=True,
                          text=True, env={**os.environ, **(env or {})}, timeout=600)


@pytest.fixture
def run(capfd, monkeypatch):
    """``run(*args, env=None)``: ``syneval-nb score -q ARGS`` through ``syneval_nb.app.cli.main`` in this process
    (``tests/_in_process.py``), as a :class:`subprocess.CompletedProcess` (exit code, stdout, stderr) -- what
    :func:`run_subprocess` returns for the same command."""

    def _run(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
        with monkeypatch.context() as mp:
            for k, v in (env or {}).items():
                mp.setenv(k, v)
            return run_command(capfd, ["score", "-q", *args])

    return _run


@pytest.fixture(scope="module")
def files(deen_dir, tmp_path_factory):
    d = tmp_path_factory.mktemp("score")
    (d / "parses").mkdir()
    names = [f"newstest2021.de-en.ref.{k}.en" for k in "AB"] + [f"newstest2021.de-en.hyp.{s}.en" for s in SYSTEMS]
    for n in names:
        src = deen_dir / n if ".ref." in n else deen_dir / "system-outputs" / n
        lines = read_lines(src)
        (d / n).write_text("\n".join(lines[i] for i in LINES) + "\n", encoding="utf-8")
        pl = read_lines(deen_dir / "parses" / "stanford-pcfg-3.3.1" / (n + ".ptb"))
        (d / "parses" / (n + ".ptb")).write_text("\n".join(pl[i] for i in LINES) + "\n", encoding="utf-8")
        trees = rst.load_rst_jsonl(deen_dir / "parses" / "feng-hirst-0.1.4" / (n + ".jsonl"))
        rst.write_rst_jsonl([trees[i] for i in LINES], d / "parses" / (n + ".jsonl"))
    refs = [str(d / names[0]), str(d / names[1])]
    hyps = [str(d / names[2]), str(d / names[3])]
    return {"dir": d, "refs": refs, "hyps": hyps, "parses": str(d / "parses")}


def api_corpus(files: dict, system_file: str) -> metrics.Corpus:
    p = Path(files["parses"])
    refs = [read_lines(f) for f in files["refs"]]
    return metrics.Corpus(read_lines(system_file), refs, ref_layout="streams",
                          hyp_ptb=read_lines(p / (Path(system_file).name + ".ptb")),
                          ref_ptb=[read_lines(p / (Path(f).name + ".ptb")) for f in files["refs"]],
                          hyp_rst=rst.load_rst_jsonl(p / (Path(system_file).name + ".jsonl")),
                          ref_rst=[rst.load_rst_jsonl(p / (Path(f).name + ".jsonl")) for f in files["refs"]])


@pytest.fixture(scope="module")
def json_out(files):
    r = run_subprocess("-r", *files["refs"], "-i", *files["hyps"], "-m", METRICS, "--parses", files["parses"],
            "--format", "json", "--paired-bootstrap", "--baseline", Path(files["hyps"][0]).name, "--segment-level")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_json_equals_python_api(files, json_out):
    recs = {(r["system"], r["name"]): r for r in json_out["scores"]}
    assert len(recs) == 2 * 10
    for f in files["hyps"]:
        c = api_corpus(files, f)
        for m in comparison_metrics(METRICS.split(","))[0]:  # STM, HWCM, DSTM as their -BP variants (issue 37)
            want = m.corpus_score(c)
            rec = recs[(Path(f).stem, m.name)]
            assert rec["score"] == pytest.approx(want.score, abs=1e-12), (f, m.name)
            assert rec["signature"] == want.signature
            assert rec["n"] == len(LINES) and rec["n_missing"] == 0
            seg = json_out["segments"][Path(f).stem][m.name]
            np.testing.assert_allclose(seg, m.sentence_scores(c), rtol=0, atol=1e-12)


def test_bleu_equals_sacrebleu(files, json_out):
    import sacrebleu

    refs = [read_lines(f) for f in files["refs"]]
    for f in files["hyps"]:
        rec = next(r for r in json_out["scores"] if r["system"] == Path(f).stem and r["name"] == "BLEU")
        assert rec["score"] * 100 == pytest.approx(sacrebleu.corpus_bleu(read_lines(f), refs).score, abs=1e-9)


def test_intervals_and_paired_p_recomputed(files, json_out):
    """DR's corpus score is the mean segment score (TKM is compared as TKM-BP, issue 37), so its bootstrap can be redone by hand: the same resamples
    (numpy's generator, seed 0, chunks of 100 resamples drawing 40 segment indices each), the percentile interval
    and the one-sided paired p-value."""
    seg = {s: np.array(json_out["segments"][Path(f).stem]["DR"]) for s, f in zip(SYSTEMS, files["hyps"])}
    rng = np.random.default_rng(0)
    idx = np.concatenate([rng.integers(0, len(LINES), size=(100, len(LINES))) for _ in range(10)])
    boot = {s: v[idx].mean(axis=1) for s, v in seg.items()}
    recs = {r["system"]: r for r in json_out["scores"] if r["name"] == "DR"}
    for s, f in zip(SYSTEMS, files["hyps"]):
        lo, hi = np.quantile(boot[s], [0.025, 0.975])
        assert recs[Path(f).stem]["ci"] == pytest.approx([lo, hi], abs=1e-12)
    d = boot["Online-W"] - boot["UEdin"]
    r = recs[Path(files["hyps"][1]).stem]
    assert r["p"] == pytest.approx(float(((d <= 0).sum() + 1) / (len(d) + 1)), abs=1e-12)  # (k+1)/(B+1)
    assert r["delta"] == pytest.approx(seg["Online-W"].mean() - seg["UEdin"].mean(), abs=1e-12)
    assert recs[Path(files["hyps"][0]).stem]["p"] is None  # the baseline against itself: no test


def test_ter_paired_direction(json_out):
    """TER is an error rate: a lower TER is better, so p counts the resamples where the system's TER is not lower."""
    ter = {r["system"]: r for r in json_out["scores"] if r["name"] == "TER"}
    w = ter["newstest2021.de-en.hyp.Online-W"]  # default names: the file stems (issue 24)
    assert w["higher_is_better"] is False
    assert w["delta"] == pytest.approx(w["score"] - ter["newstest2021.de-en.hyp.UEdin"]["score"], abs=1e-15)


def test_text_and_tsv(files, run):
    r = run("-r", *files["refs"], "-i", *files["hyps"], "-m", "bleu,stm-9", "--parses", files["parses"])
    assert r.returncode == 0, r.stderr
    assert "STM-BP-9|depth:9" in r.stdout and "BLEU|n:4|smooth:exp" in r.stdout and "95% CI" in r.stdout
    t = run("-r", *files["refs"], "-i", *files["hyps"], "-m", "bleu", "--format", "tsv")
    assert t.returncode == 0, t.stderr
    rows = [line.split("\t") for line in t.stdout.strip().split("\n")]
    assert rows[0][:3] == ["system", "metric", "score"] and len(rows) == 3


def test_unparsed_lines_reported_and_scored_with_the_worst_value(files, tmp_path, run):
    """Issue 24: an unparsed hypothesis line counts (STM: no match out of its tokens at every depth), reported by
    line and counted per system and metric (``n_unparsed``); it is not left out (``n_missing`` 0)."""
    p = tmp_path / "parses"
    p.mkdir()
    for f in Path(files["parses"]).iterdir():
        lines = read_lines(f)  # .ptb and .jsonl lines copied as they are
        if f.name == Path(files["hyps"][1]).name + ".ptb":
            lines[4] = "(())"
        (p / f.name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    r = run("-r", *files["refs"], "-i", *files["hyps"], "-m", "bleu,stm", "--parses", str(p), "--format", "json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    stm = {x["system"]: x for x in out["scores"] if x["name"] == "STM-BP-4"}
    bleu = {x["system"]: x for x in out["scores"] if x["name"] == "BLEU"}
    one, zero = Path(files["hyps"][1]).stem, Path(files["hyps"][0]).stem
    assert (stm[one]["n_missing"], stm[one]["n_unparsed"], stm[one]["n_empty"]) == (0, 1, 0)
    assert (stm[zero]["n_unparsed"], bleu[one]["n_unparsed"]) == (0, 0)  # BLEU needs no parse
    assert out["unparsed"] == {one: {"ptb hyp": [5]}} and out["line_numbers"] == "1-based"  # as stderr says
    assert "1 ptb hyp sentences without a parse (lines 5): scored with the worst value" in r.stderr
    c = api_corpus(files, files["hyps"][1])
    keep = [i for i in range(len(LINES)) if i != 4]
    sub = metrics.Corpus([c.hyps[i] for i in keep], [c.refs[i] for i in keep],
                         hyp_ptb=[c.hyp_ptb[i] for i in keep], ref_ptb=[c.ref_ptb[i] for i in keep])
    rest = metrics.get("stm").segment_stats(sub).sum(axis=0)
    n_tok = len(c.hyps[4].split())
    by_hand = sum(rest[d] / (rest[4 + d] + n_tok) for d in range(4)) / 4
    bp = metrics.get("stm-bp")
    assert stm[one]["score"] == pytest.approx(by_hand * bp._parts(bp.segment_stats(c).sum(axis=0))["bp"], abs=1e-12)
    assert stm[one]["score"] < bp.corpus_score(sub).score


def _one_error_line(r: subprocess.CompletedProcess, *needles: str) -> None:
    assert r.returncode == 2, (r.returncode, r.stderr)
    lines = [line for line in r.stderr.strip().split("\n") if line]
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("syneval-nb score: error: ")
    for n in needles:
        assert n in lines[0], lines[0]


def test_error_mismatched_lines(files, tmp_path, run):
    short = tmp_path / "short.txt"
    short.write_text("\n".join(read_lines(files["hyps"][0])[:39]) + "\n", encoding="utf-8")
    _one_error_line(run("-r", *files["refs"], "-i", str(short), "-m", "bleu"), "has 39 lines but", "40")


def test_error_empty_file(files, tmp_path, run):
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    _one_error_line(run("-r", *files["refs"], "-i", str(empty), "-m", "bleu"), "empty.txt is empty")


def test_error_not_utf8(files, tmp_path, run):
    bad = tmp_path / "latin1.txt"
    lines = read_lines(files["hyps"][0])
    lines[2] = "Gr\u00fc\u00dfe aus K\u00f6ln"
    bad.write_bytes(("\n".join(lines) + "\n").encode("latin-1", errors="replace"))
    _one_error_line(run("-r", *files["refs"], "-i", str(bad), "-m", "bleu"), "not UTF-8: line 3")


def test_error_unknown_metric(files, run):
    _one_error_line(run("-r", *files["refs"], "-i", *files["hyps"], "-m", "bleu,blue"),
                    "unknown metric 'blue'; valid names: BLEU")


def test_error_java_missing(files, tmp_path, run):
    r = run("-r", *files["refs"], "-i", *files["hyps"], "-m", "stm", "--cache", str(tmp_path / "c.sqlite"),
            env={"SYNEVAL_NB_JAVA": str(tmp_path / "no-java")})
    _one_error_line(r, "parser cannot run")


def test_output_never_overwrites_an_input(files, run):
    before = Path(files["hyps"][0]).read_bytes()
    _one_error_line(run("-r", *files["refs"], "-i", *files["hyps"], "-m", "bleu", "-o", files["hyps"][0]),
                    "the input is never overwritten")
    assert Path(files["hyps"][0]).read_bytes() == before


@pytest.mark.slow
def test_really_parses_through_the_jvm(files, tmp_path, run):
    """10 lines parsed by the Stanford parser (fresh cache), then again from the warm cache: same JSON; the
    scores equal the Python API on the parses the command stored."""
    from syneval_nb.parsers.cache import ParseCache
    from syneval_nb.parsers.stanford import get_stanford_parser

    d = tmp_path / "ten"
    d.mkdir()
    for f in files["refs"] + files["hyps"]:
        (d / Path(f).name).write_text("\n".join(read_lines(f)[:10]) + "\n", encoding="utf-8")
    refs = [str(d / Path(f).name) for f in files["refs"]]
    hyp = [str(d / Path(files["hyps"][0]).name)]
    cache = tmp_path / "parses.sqlite"
    cold = run_subprocess("-r", *refs, "-i", *hyp, "-m", "bleu,stm,hwcm", "--cache", str(cache), "--format", "json")
    assert cold.returncode == 0, cold.stderr
    warm = run("-r", *refs, "-i", *hyp, "-m", "bleu,stm,hwcm", "--cache", str(cache), "--format", "json")
    assert json.loads(warm.stdout) == json.loads(cold.stdout)
    store = ParseCache(cache)
    key = get_stanford_parser().backend_key
    texts = [read_lines(hyp[0])] + [read_lines(f) for f in refs]
    n = len({t for lines in texts for t in lines})
    # one tree per distinct line, and (issue 38) the RST step's record of the same parse: nothing parsed twice
    assert store.count(key) == n and store.count() == 2 * n
    got = store.get_many(key, [t for lines in texts for t in lines])
    c = metrics.Corpus(texts[0], texts[1:], ref_layout="streams", hyp_ptb=[got[t] for t in texts[0]],
                       ref_ptb=[[got[t] for t in lines] for lines in texts[1:]])
    out = {r["name"]: r for r in json.loads(cold.stdout)["scores"]}
    for spec in ("stm-bp", "hwcm-bp"):  # what "-m stm,hwcm" scores (issue 37)
        assert out[metrics.canonical_name(spec)]["score"] == pytest.approx(
            metrics.get(spec).corpus_score(c).score, abs=1e-12)
    store.close()


@pytest.mark.parametrize("suffix", [".ptb", ".jsonl"])
def test_parses_of_another_text_are_refused(files, tmp_path, suffix, run):
    """Issue 24: ``--parses`` holding the parses (or RST trees) of another system's file of the same length gave
    STM-4 .8413 instead of .7059 without a word. Every tree's words are checked against its line (up to PTB
    tokenization), and the first mismatch is named by file and line, before any scoring."""
    p = tmp_path / "parses"
    p.mkdir()
    for f in Path(files["parses"]).iterdir():
        (p / f.name).write_text(f.read_text(encoding="utf-8"), encoding="utf-8")
    one, other = (Path(h).name for h in files["hyps"])
    (p / (one + suffix)).write_text((p / (other + suffix)).read_text(encoding="utf-8"), encoding="utf-8")
    ours, theirs = read_lines(files["hyps"][0]), read_lines(files["hyps"][1])
    first = next(i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b)
    r = run("-r", *files["refs"], "-i", files["hyps"][0], "-m", "stm" if suffix == ".ptb" else "dr",
            "--parses", str(p))
    _one_error_line(r, f"{one}{suffix} line {first + 1} does not hold the words of", f"{one} line {first + 1}",
                    "belong to another text")


def test_a_malformed_parse_line_is_named_by_file_and_line(files, tmp_path, run):
    p = tmp_path / "parses"
    p.mkdir()
    for f in Path(files["parses"]).iterdir():
        lines = read_lines(f)
        if f.name == Path(files["hyps"][0]).name + ".ptb":
            lines[3] = "(ROOT (S (NP dog"
        (p / f.name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    r = run("-r", *files["refs"], "-i", files["hyps"][0], "-m", "stm", "--parses", str(p))
    _one_error_line(r, f"parse file {p / (Path(files['hyps'][0]).name + '.ptb')}: line 4")


@pytest.mark.parametrize("args, needle", [
    (["--n-bootstrap", "1"], "--n-bootstrap 1: give 0 (no intervals) or at least 100 resamples"),
    (["--n-bootstrap", "-5"], "--n-bootstrap -5: give 0"),
    (["-m", "stm-1000000"], "STM: depth must be in 1..100, got 1000000"),
])
def test_bad_options_are_refused_before_any_work(files, args, needle, run):
    _one_error_line(run("-r", *files["refs"], "-i", *files["hyps"], "-m", "bleu", *args), needle)


def test_system_names_are_checked_before_any_file_is_read(files, tmp_path, run):
    missing = str(tmp_path / "not-read.txt")  # never opened: the names are refused first
    _one_error_line(run("-r", *files["refs"], "-i", files["hyps"][0], missing, "--names", "x", "-m", "bleu"),
                    "--names gives 1 name(s) for 2 system file(s): one a file")
    _one_error_line(run("-r", *files["refs"], "-i", files["hyps"][0], missing, "--names", "q,q", "-m", "bleu"),
                    "two systems are named 'q'")
    _one_error_line(run("-r", *files["refs"], "-i", files["hyps"][0], files["hyps"][0], "-m", "bleu"),
                    f"two systems are named '{files['hyps'][0]}' (the same file given twice): give "
                    "distinct names with --names")


def test_paired_bootstrap_needs_two_systems(files, run):
    _one_error_line(run("-r", *files["refs"], "-i", files["hyps"][0], "-m", "bleu", "--paired-bootstrap"),
                    "give at least two -i files")


def test_output_and_cache_are_checked_before_any_work(files, tmp_path, run):
    folder = tmp_path / "a-folder"
    folder.mkdir()
    _one_error_line(run("-r", *files["refs"], "-i", *files["hyps"], "-m", "bleu", "-o", str(folder)),
                    f"the output {folder} is an existing folder")
    garbage = tmp_path / "garbage.sqlite"
    garbage.write_bytes(b"not a database at all" * 100)
    r = run("-r", *files["refs"], "-i", *files["hyps"], "-m", "bleu", "--cache", str(garbage))
    _one_error_line(r, str(garbage))
    nested = tmp_path / "x" / "y" / "out.json"  # missing folders are made, the file written whole
    r = run("-r", *files["refs"], "-i", *files["hyps"], "-m", "bleu", "--format", "json", "-o", str(nested),
            "--n-bootstrap", "0")
    assert r.returncode == 0, r.stderr
    assert [x["name"] for x in json.loads(nested.read_text(encoding="utf-8"))["scores"]] == ["BLEU", "BLEU"]


def test_a_healthy_cache_in_a_read_only_folder_is_used_with_one_note(files, tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    path = folder / "parses.sqlite"
    ParseCache(path).close()
    r = run_read_only(folder, sys.executable, "-m", "syneval_nb.app.cli", "score", "-q", "-r", *files["refs"],
                      "-i", files["hyps"][0], "-m", "bleu,stm", "--parses", files["parses"], "--n-bootstrap", "0",
                      "--format", "json", "--cache", str(path))
    assert r.returncode == 0, r.stderr
    assert r.stderr.strip().splitlines() == [
        f"syneval-nb score: note: the parse cache {path} is read-only (its folder {folder} is read-only): its "
        "parses are used, new parses are not stored (to keep them, make it writable or give --cache PATH in a "
        "writable place)"]
    assert [x["name"] for x in json.loads(r.stdout)["scores"]] == ["BLEU", "STM-BP-4"]


def test_a_cache_path_that_is_a_folder_is_one_error_line(files, tmp_path, run):
    _one_error_line(run("-r", *files["refs"], "-i", *files["hyps"], "-m", "bleu", "--cache", str(tmp_path)),
                    f"the parse cache {tmp_path} is a folder: give the cache file's path")


@pytest.mark.parametrize("text, needle", [
    ("", "no scores (a header line and at least one row are needed)"),
    ("system\tseg_id\tscore\nnewstest2021.de-en.hyp.UEdin\t0\n", "row 1 has 2 tab-separated fields, the header 3"),
    ("system\tseg_id\tscore\nnewstest2021.de-en.hyp.UEdin\t40\t1\n", "seg_id 40 (row 1) is outside the files' 0..39"),
])
def test_empty_ragged_or_out_of_range_human_scores_are_one_error_line(files, tmp_path, text, needle, run):
    """Issue 24: an empty or ragged score TSV gave raw pandas errors; an id outside the files was dropped."""
    tsv = tmp_path / "h.tsv"
    tsv.write_text(text, encoding="utf-8")
    _one_error_line(run("-r", *files["refs"], "-i", *files["hyps"], "-m", "bleu", "--human-scores", str(tsv)),
                    str(tsv), needle)


def test_default_system_names_are_file_stems_and_file_names_are_read_with_a_note(files, tmp_path, run):
    """Issue 24: systems are named by their file stems (as in the WMT layouts); human scores naming them by their
    file names are still read, with one note."""
    tsv = tmp_path / "h.tsv"
    tsv.write_text("system\tseg_id\tscore\n" + "".join(f"{Path(f).name}\t{i}\t{i % 7}\n" for f in files["hyps"]
                                                       for i in range(len(LINES))), encoding="utf-8")
    r = run("-r", *files["refs"], "-i", *files["hyps"], "-m", "bleu", "--human-scores", str(tsv), "--format",
            "json", "--n-bootstrap", "0")
    assert r.returncode == 0, r.stderr
    stems = [Path(f).stem for f in files["hyps"]]
    assert stems == ["newstest2021.de-en.hyp.UEdin", "newstest2021.de-en.hyp.Online-W"]
    assert [x["system"] for x in json.loads(r.stdout)["scores"]] == stems
    assert r.stderr.strip().splitlines() == [
        f"syneval-nb score: note: the human scores name 2 system(s) by file name ({Path(files['hyps'][0]).name} -> "
        f"{stems[0]}, {Path(files['hyps'][1]).name} -> {stems[1]}); they are read as those systems (the system "
        "names are the file stems unless --names is given)"]
