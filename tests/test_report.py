"""The report index (syneval_nb.app.report.index_page through runner.run_all) and ``syneval-nb report``.

run_all executes three small notebooks written here (a chapter with verdicts and a figure, one with only headline
numbers, one that fails) with the real papermill kernel; the index page is parsed with the standard library's
html.parser."""
from __future__ import annotations

from syneval_nb.stats.verdicts import format_p
import base64
import json
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest

from syneval_nb.app import report
from syneval_nb.app import index_page
from syneval_nb.app.runner import run_all


def _nb(path: Path, title: str, question: str, body: list[str]) -> Path:
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell("data_dir = None\nsample = None\noutput_dir = '.'\nseed = 0")
    params.metadata["tags"] = ["parameters"]
    nb.cells = [nbformat.v4.new_markdown_cell(f"# {title}\n\nSome context first.\n\n**Question.** {question}"),
                params] + [nbformat.v4.new_code_cell(src) for src in body]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, str(path))
    return path


class _Index(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.cards: list[dict] = []
        self._depth = 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "section":
            self.cards.append({"id": a.get("id"), "class": a.get("class", ""), "links": [], "imgs": [], "text": ""})
            self._depth = 1
        elif self.cards and self._depth:
            if tag == "a":
                self.cards[-1]["links"].append(a.get("href"))
            if tag == "img":
                self.cards[-1]["imgs"].append(a.get("src"))

    def handle_endtag(self, tag):
        if tag == "section":
            self._depth = 0

    def handle_data(self, data):
        if self.cards and self._depth:
            self.cards[-1]["text"] += data


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    d = tmp_path_factory.mktemp("index")
    write = "from syneval_nb.app.runner import write_results\n"
    nbs = [
        _nb(d / "01_alpha.ipynb", "01 · Alpha", "Does alpha beat the baseline?", [
            "import matplotlib\nimport matplotlib.pyplot as plt\nplt.plot([1, 2, 3], [3, 1, 2])\n"
            "plt.title('alpha')\nplt.show()",
            write + "write_results({'r': 0.5, 'verdicts': {'alpha beats the baseline': {'verdict': 'holds', "
                    "'statistic': 0.25, 'ci': [0.1, 0.4], 'p': 0.003, 'rule': 'paired bootstrap', "
                    "'reason': 'alpha beats the baseline and every control'}}}, output_dir, "
                    "'01_alpha')"]),
        _nb(d / "02_beta.ipynb", "02 · Beta", "How large is beta?", [
            write + "write_results({'parameters': {'seed': seed}, 'beta': {'size': 42, 'ratio': 0.125}}, "
                    "output_dir, '02_beta')"]),
        _nb(d / "03_gamma.ipynb", "03 · Gamma", "Can gamma run?", ["raise RuntimeError('gamma exploded here')"]),
    ]
    reports = d / "reports"
    rows = run_all(nbs, reports)
    page = (reports / "index.html").read_text(encoding="utf-8")
    p = _Index()
    p.feed(page)
    return {"rows": rows, "page": page, "cards": {c["id"]: c for c in p.cards}, "reports": reports}


def test_every_chapter_has_a_card_and_link(index):
    assert [r["status"] for r in index["rows"]] == ["ok", "ok", "failed"]
    assert set(index["cards"]) == {"01_alpha", "02_beta", "03_gamma"}
    for stem, card in index["cards"].items():
        assert f"{stem}/{stem}.html" in card["links"], card["links"]
        assert (index["reports"] / stem / f"{stem}.html").is_file()


def test_cards_are_not_empty(index):
    c = index["cards"]
    for card in c.values():
        assert len(card["text"].strip()) > 40, card
    assert "Does alpha beat the baseline?" in c["01_alpha"]["text"]
    assert "alpha beats the baseline: holds" in " ".join(c["01_alpha"]["text"].split())
    assert "p = 0.003" in c["01_alpha"]["text"] and "95% CI [0.1, 0.4]" in c["01_alpha"]["text"]
    assert "why: alpha beats the baseline and every control" in c["01_alpha"]["text"]
    assert "How large is beta?" in c["02_beta"]["text"]
    assert "beta / size: 42" in c["02_beta"]["text"] and "beta / ratio: 0.125" in c["02_beta"]["text"]
    assert "seed" not in c["02_beta"]["text"]  # parameters are not headline numbers


def test_failure_shown_as_failure(index):
    g = index["cards"]["03_gamma"]
    assert "failed" in g["class"].split()
    assert "FAILED" in g["text"] and "gamma exploded here" in g["text"]
    assert "failed" not in index["cards"]["01_alpha"]["class"].split()
    assert "1 failed" in index["page"]


def test_images_embedded_or_resolve(index):
    imgs = [(stem, src) for stem, c in index["cards"].items() for src in c["imgs"]]
    assert [s for s, _ in imgs] == ["01_alpha"]  # the one chapter with a figure shows it
    for stem, src in imgs:
        if src.startswith("data:image/png;base64,"):
            raw = base64.b64decode(src.split(",", 1)[1])
            assert raw[:8] == b"\x89PNG\r\n\x1a\n"
        else:
            assert (index["reports"] / src).is_file(), src


def _card(tmp_path, stem: str, results: dict, cells: list | None = None) -> dict:
    """One card from :func:`report.chapter_card` on an executed notebook of ``cells`` (code cells with outputs),
    parsed like the index page."""
    folder = tmp_path / stem
    folder.mkdir(parents=True)
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(f"# {stem}\n\n**Question.** Is it?")] + (cells or [])
    nbformat.write(nb, str(folder / f"{stem}.ipynb"))
    page = report.chapter_card({"stem": stem, "status": "ok", "seconds": 1.0, "results": results}, tmp_path)
    p = _Index()
    p.feed(page)
    return {"html": page, **p.cards[0]}


def _png(color: int) -> str:
    """A 1x1 PNG of one grey level, base64 (distinct images for distinct cells)."""
    import struct
    import zlib

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    raw = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0)) + \
        chunk(b"IDAT", zlib.compress(bytes([0, color]))) + chunk(b"IEND", b"")
    return base64.b64encode(raw).decode("ascii")


def _image_cell(color: int, tags=()):
    c = nbformat.v4.new_code_cell("plot()")
    c.outputs = [nbformat.v4.new_output("display_data", data={"image/png": _png(color)})]
    if tags:
        c.metadata["tags"] = list(tags)
    return c


def _v(verdict: str, p: float = 0.01) -> dict:
    return {"verdict": verdict, "statistic": 0.1, "ci": [0.05, 0.2], "p": p, "p_holm": min(1.0, 4 * p),
            "rule": "r", "reason": "because"}


def test_card_shows_headline_verdicts_and_folds_the_rest(tmp_path):
    verdicts = {f"claim {i:02d}": _v(["cannot tell", "holds", "does not hold"][i % 3]) for i in range(12)}
    head = ["claim 07", "claim 02", "claim 05"]
    c = _card(tmp_path, "07_x", {"verdicts": verdicts, "headline_verdicts": head})
    top, _, folded = c["html"].partition("<details>")
    # the declared claims, in the declared order, outside the fold; the other 9 inside it, holds first
    assert [m for m in re.findall(r"<b>(claim \d+)</b>", top)] == head
    assert re.findall(r"<b>(claim \d+)</b>", folded) == ["claim 01", "claim 04", "claim 10", "claim 08",
                                                           "claim 11", "claim 00", "claim 03", "claim 06",
                                                           "claim 09"]
    assert "<summary>9 more verdicts (3 holds, 2 does not hold, 4 cannot tell)</summary>" in c["html"]
    # at most six headline verdicts, even if a chapter declares more; a missing claim is said to be missing
    c = _card(tmp_path, "08_x", {"verdicts": verdicts,
                                 "headline_verdicts": [f"claim {i:02d}" for i in range(7)] + ["gone"]})
    assert len(re.findall(r"<b>claim", c["html"].partition("<details>")[0])) == 6
    c = _card(tmp_path, "09_x", {"verdicts": verdicts, "headline_verdicts": ["gone"]})
    assert "gone: not in the results file" in " ".join(c["text"].split())
    # no declaration: up to five verdicts show, more fold entirely
    assert "<details>" not in _card(tmp_path, "10_x", {"verdicts": dict(list(verdicts.items())[:5])})["html"]
    c = _card(tmp_path, "11_x", {"verdicts": verdicts})
    assert c["html"].index("<details>") < c["html"].index("<b>claim") and "12 verdicts (" in c["text"]


def test_card_p_values_never_read_p_0(tmp_path):
    assert format_p(0.0) == "p < 0.001" and format_p(0.0004) == "p < 0.001"
    assert format_p(0.001) == "p = 0.001" and format_p(0.0123) == "p = 0.012"
    c = _card(tmp_path, "03_x", {"verdicts": {"a beats b": _v("holds", 0.0)}})
    text = " ".join(c["text"].split())
    assert "p < 0.001; Holm p < 0.001" in text and "p = 0" not in text


def test_card_headline_figure_is_the_tagged_cell(tmp_path):
    cells = [_image_cell(10), _image_cell(200, ["headline-figure"]), _image_cell(90)]
    c = _card(tmp_path, "04_x", {"r": 0.5}, cells)
    assert c["imgs"] == ["data:image/png;base64," + _png(200)]
    # without the tag: the first figure
    assert _card(tmp_path, "05_x", {"r": 0.5}, [_image_cell(10), _image_cell(90)])["imgs"] == \
        ["data:image/png;base64," + _png(10)]


def test_card_labels_toy_data(tmp_path):
    toy = {"parameters": {"hyp_files": None, "seed": 0}, "verdicts": {"sysA beats sysB": _v("holds")}}
    c = _card(tmp_path, "09_evaluate_your_system", toy)
    assert "toy" in c["class"].split() and "TOY DATA." in c["text"] and "not findings" in c["text"]
    real = {"parameters": {"hyp_files": ["a.txt"], "seed": 0}, "verdicts": {"sysA beats sysB": _v("holds")}}
    c = _card(tmp_path / "real", "09_evaluate_your_system", real)
    assert "toy" not in c["class"].split() and "TOY" not in c["text"]
    assert "TOY DATA." in _card(tmp_path / "flag", "02_x", {"toy_data": True, "r": 1.0})["text"]


def test_every_chapter_declares_a_headline_figure_and_few_verdicts():
    """Each chapter notebook tags exactly one headline-figure cell, and it is a cell that draws."""
    from syneval_nb.app.runner import list_notebooks

    for path in list_notebooks():
        nb = nbformat.read(str(path), as_version=4)
        tagged = [c for c in nb.cells if "headline-figure" in c.metadata.get("tags", [])]
        assert len(tagged) == 1, path.name
        assert tagged[0].cell_type == "code" and re.search(r"plt\.show\(\)|plot|draw|fig", tagged[0].source), path.name


def test_question_from_first_markdown_cell():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# 05 · Title\n\nIntro with a `code` mark.\n\nIs it *so*?")]
    assert report.notebook_question(nb) == ("05 · Title", "Is it so?")
    nb09 = nbformat.read(str(report.NOTEBOOK), as_version=4)
    title, q = report.notebook_question(nb09)
    assert title == "09 · Evaluate your own system" and q.startswith("Question. Which of your systems is better")
    # chapter 08's question: bold marks dropped around "beyond length", the code span keeps its underscore
    nb08 = nbformat.read(str(report.NOTEBOOK.parent / "08_correlation_studies.ipynb"), as_version=4)
    q8 = report.notebook_question(nb08)[1]
    assert "each family at depth 4 (syntactic.PRIMARY_DEPTH) against chrF" in q8
    assert "has a twin beyond length (partial correlation" in q8 and "*" not in q8
    assert index_page._plain("**A** and __b__, *c* _d_ snake_case `x_y*` [l](u)") == "A and b, c d snake_case x_y* l"


def test_report_cli_refuses_bad_input(tmp_path):
    r = subprocess.run([sys.executable, "-m", "syneval_nb.app.cli", "report", "-i", "x.txt"], capture_output=True,
                       text=True)
    assert r.returncode == 2 and r.stderr.strip() == ("syneval-nb report: error: give both -r (references) and -i "
                                                      "(systems), or neither for the embedded example")
    r = subprocess.run([sys.executable, "-m", "syneval_nb.app.cli", "report", "-m", "bleu,blue"], capture_output=True,
                       text=True)
    assert r.returncode == 2 and "unknown metric 'blue'" in r.stderr


def test_report_cache_is_checked_before_the_notebook(tmp_path):
    """``report --cache`` (as ``score --cache``, issue 24): a folder or a damaged file is one error line, before
    papermill starts; ``--cache`` and ``--no-cache`` exclude each other."""
    def report_(*args):
        return subprocess.run([sys.executable, "-m", "syneval_nb.app.cli", "report", "-o", str(tmp_path / "out"), *args],
                              capture_output=True, text=True, timeout=300)
    r = report_("--cache", str(tmp_path))
    assert r.returncode == 2 and r.stderr.strip() == (f"syneval-nb report: error: the parse cache {tmp_path} is a "
                                                      f"folder: give the cache file's path (e.g. "
                                                      f"{tmp_path / 'parses.sqlite'})")
    garbage = tmp_path / "garbage.sqlite"
    garbage.write_bytes(b"not a database at all" * 100)
    r = report_("--cache", str(garbage))
    assert r.returncode == 2 and r.stderr.startswith(f"syneval-nb report: error: {garbage} is not a usable "
                                                     "syneval-nb parse cache (file is not a database)")
    assert len(r.stderr.strip().splitlines()) == 1 and not (tmp_path / "out").exists()
    r = report_("--cache", str(garbage), "--no-cache")
    assert r.returncode == 2 and "not allowed with argument" in r.stderr


@pytest.mark.slow
def test_report_cli_on_the_example(tmp_path):
    """``syneval-nb report`` with no files: the embedded example, an HTML page with every section."""
    out = tmp_path / "rep"
    r = subprocess.run([sys.executable, "-m", "syneval_nb.app.cli", "report", "-o", str(out), "--no-cache"],
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-2000:]
    page = (out / "09_evaluate_your_system.html").read_text(encoding="utf-8")
    for section in ("What the human scores say", "Your systems by the metrics: scores with 95% intervals",
                    "Scores by depth", "Do the metrics agree?",
                    "Where syntactic and lexical metrics disagree most", "Segment lengths",
                    "Agreement with human scores", "Verdict"):
        assert section in page, section
    assert page.count("data:image/png;base64") + page.count("<svg") >= 5
    assert "empty lines" in page and "unparsed lines" in page  # the system table's line counts
    # the notebook's sentences, written from the numbers: the family (2 system claims x 9 metrics x 2 directions
    # + 9 human-score verdicts = 45 p-values) and the humans' view, from the toy rating's means (93.1, 40.333...)
    assert ("Holm runs over every verdict this report prints, one family of 45 p-values: the 9 human-score verdicts "
            "and the 36 one-sided tests of the 2 system claims (each metric, better and worse). 4 of 11 verdicts "
            "hold.") in page
    assert "The human scores agree: system_scrambled 40.333 (rank 3) vs system_good 93.100 (rank 1), difference " \
           "-52.767 [" in page
    assert ("does not hold: system_scrambled is better than system_good by the metrics (human scores: agree)"
            in r.stdout)
    # a quiet console (issue 25): the verdicts (as the results file has them), the page, and on stderr papermill's
    # progress bar only
    result = json.loads((out / "09_evaluate_your_system.json").read_text(encoding="utf-8"))
    assert r.stdout.splitlines() == [
        f"{v['verdict']}: {claim}" + (f" (human scores: {v['human_view']})" if "human_view" in v else "")
        for claim, v in result["verdicts"].items()] + [f"report: {(out / '09_evaluate_your_system.html').resolve()}"]
    # 2 system claims, and for STM-4 against chrF and BLEU: beats, beyond length, within; correlates (twice), placebo
    assert len(result["verdicts"]) == 11
    # the humans first: their ranking of the three systems, and each metric's agreement with it
    assert [r["system"] for r in result["human_ranking"]] == ["system_good", "system_literal", "system_scrambled"]
    assert [r["human"] for r in result["human_ranking"]] == pytest.approx([93.1, 74.2666667, 40.3333333])
    assert {r["metric"]: r["pairwise_accuracy"] for r in result["system_agreement"]}["chrF"] == 1.0
    assert result["parameters"]["cache"] is None  # --no-cache reached the notebook (issue 24)
    assert [p for p in re.split(r"[\r\n]+", r.stderr) if p.strip() and not p.startswith("Executing:")] == []


def test_the_report_table_counts_empty_and_unparsed_lines(tmp_path):
    """Issue 24: the report shows beside each system's scores how many of its lines were empty or unparseable.
    The example's literal system with lines 3 and 7 blanked and line 11's parse removed: 2 empty, 1 unparsed, and
    its STM-4 is below the full system's (every line counts)."""
    from syneval_nb.studies import evaluate_your_system as E
    from syneval_nb.textio import read_lines

    ex = E.example_files()
    parses = tmp_path / "parses"
    parses.mkdir()
    for f in Path(ex["parses_dir"]).iterdir():
        (parses / f.name).write_text(f.read_text(encoding="utf-8"), encoding="utf-8")
    lines = read_lines(ex["hyp_files"][1])
    ptb = read_lines(parses / "system_literal.txt.ptb")
    for i in (3, 7):
        lines[i], ptb[i] = "", "(())"
    ptb[11] = "(())"
    hyp = tmp_path / "literal_cut.txt"
    hyp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    (parses / "literal_cut.txt.ptb").write_text("\n".join(ptb) + "\n", encoding="utf-8")
    study = E.load_study([ex["hyp_files"][1], str(hyp)], ex["ref_files"], metrics=["bleu", "stm"],
                         parses_dir=str(parses), n_resamples=0, progress=False, cache=None)
    t = E.line_faults(study)  # the notebook's system table shows these two columns beside the scores
    assert list(t.columns) == ["empty", "unparsed"]
    assert t.loc["system_literal"].tolist() == [0, 0] and t.loc["literal_cut"].tolist() == [2, 1]
    assert E.headline(study)["line_faults"] == {"system_literal": {"empty": 0, "unparsed": 0},
                                                "literal_cut": {"empty": 2, "unparsed": 1}}
    s = E.headline(study)["scores"]
    assert s["literal_cut"]["STM-BP-4"] < s["system_literal"]["STM-BP-4"]
