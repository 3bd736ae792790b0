"""The HTML reports read offline (issue 33): ``runner.to_html`` writes every formula as MathML and the page loads no
script or style from the network. With a Chromium on the machine, a page opened from a ``file://`` URL with no
network lays out its fractions as fractions (numerator above denominator)."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest

from _chromium import CHROMIUM, probe

from syneval_nb.app import runner
from syneval_nb.paths import NOTEBOOK_DIR

MARKDOWN = r"""# Offline formulas

Inline $p_n = \frac{\sum \mathrm{count_{clip}}(g)}{\sum \mathrm{count}(g)}$ and $\lambda = 1$, a price of \$5, code
`$not math$`, and a formula over two lines $\sum_{n=1}^{5}
\frac{a}{b}$.

$$\mathrm{STM} = \frac{1}{D}\sum_{d=1}^{D} \frac{x_d}{y_d}$$
"""
FORMULAS = 4  # in MARKDOWN (the escaped dollar and the code span are not formulas)


def _notebook(path: Path) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(MARKDOWN), nbformat.v4.new_code_cell("x = 1")]
    nb.cells[1].outputs = [nbformat.v4.new_output("display_data", data={"text/latex": r"$$\frac{1}{2}$$",
                                                                            "text/plain": "1/2"})]
    # the widget state nbclient stores (tqdm's progress bars): nbconvert would load the widget manager from a CDN
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}, "version_major": 2,
                                                                           "version_minor": 0}}
    nbformat.write(nb, str(path))
    return path


class _Resources(HTMLParser):
    """Every URL a page loads: script ``src``, stylesheet/icon ``link href``, and, inside ``<script>`` and
    ``<style>``, ``import(...)``/``@import``/``url(...)`` targets."""

    def __init__(self):
        super().__init__()
        self.loads: list[str] = []
        self.scripts: list[str] = []
        self._in: str | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "script":
            self.scripts.append(a.get("src") or "")
            if a.get("src"):
                self.loads.append(a["src"])
        if tag == "link" and a.get("href") and set((a.get("rel") or "").split()) & {"stylesheet", "icon", "preload",
                                                                                   "modulepreload", "import"}:
            self.loads.append(a["href"])
        if tag in ("script", "style"):
            self._in = tag

    def handle_endtag(self, tag):
        if tag == self._in:
            self._in = None

    def handle_data(self, data):
        if self._in == "script":
            self.loads += re.findall(r"""import\s*\(?\s*["']([^"']+)["']""", data)
            self.loads += re.findall(r"""\bfrom\s+["']([^"']+)["']""", data)
        elif self._in == "style":
            text = re.sub(r"/\*.*?\*/", "", data, flags=re.S)  # URLs in CSS comments load nothing
            self.loads += re.findall(r"""@import\s+(?:url\()?\s*["']?([^"')\s;]+)""", text)
            self.loads += re.findall(r"""url\(\s*["']?([^"')\s]+)""", text)


def _remote(page: str) -> list[str]:
    p = _Resources()
    p.feed(page)
    return [u for u in p.loads if re.match(r"(?i)(https?:)?//", u.strip())]


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("offline")
    return runner.to_html(_notebook(folder / "formulas.ipynb"), folder / "formulas.html")


def test_the_page_loads_nothing_from_the_network(page):
    html = page.read_text(encoding="utf-8")
    assert _remote(html) == []
    assert not re.search(r"(?i)(cdnjs|unpkg|jsdelivr|mathjax)", html)  # not even as text a script could load


def test_every_formula_is_mathml(page):
    html = page.read_text(encoding="utf-8")
    assert html.count("<math ") == FORMULAS + 1  # and the text/latex output
    assert len(re.findall(r'<math [^>]*display="block"', html)) == 2  # $$..$$ and the text/latex output
    assert "<code>$not math$</code>" in html and "price of $5" in html  # not formulas
    assert "code class='tex'" not in html  # every formula was read
    assert "count_{clip}" not in html and "\\frac" not in html  # no TeX source left on the page


def test_a_formula_latex2mathml_cannot_read_stays_its_source():
    assert runner._math_html(r"\frac{1}{2}").startswith("<math ")
    assert runner._math_html(r"a^", display=True) == "<code class='tex'>$$a^$$</code>"


@pytest.mark.parametrize("stem", ["02_lexical_metrics", "03_constituent_metrics"])
def test_a_chapter_page_is_offline(tmp_path, stem):
    """A chapter as committed (no outputs): its formulas (inline and display) are MathML, nothing remote."""
    html = runner.to_html(NOTEBOOK_DIR / f"{stem}.ipynb", tmp_path / f"{stem}.html").read_text(encoding="utf-8")
    assert _remote(html) == []
    n_tex = sum(len(re.findall(r"(?<![$\\])\$(?:\$)?[^$]+?\$", "".join(c.source)))
                for c in nbformat.read(str(NOTEBOOK_DIR / f"{stem}.ipynb"), as_version=4).cells
                if c.cell_type == "markdown")
    assert html.count("<math ") >= 0.9 * n_tex > 0 and "code class='tex'" not in html


# ------------------------------------------------------------------------------------------ a real browser, offline


_PROBE = """<script>
window.addEventListener("load", () => {
  const fr = [...document.querySelectorAll("mfrac")].map(f => {
    const [num, den] = [...f.children].map(c => c.getBoundingClientRect());
    return num.bottom <= den.top + 1;   // the numerator sits above the denominator: MathML was laid out
  });
  const maths = document.querySelectorAll("math").length;
  const out = document.createElement("pre");
  out.id = "probe";
  out.textContent = JSON.stringify({maths, fractions: fr.length, stacked: fr.filter(Boolean).length});
  document.body.appendChild(out);
});
</script></body>"""


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium on this machine")
def test_chromium_lays_out_the_formulas_from_a_file_url_with_no_network(page, tmp_path):
    got = probe(page, _PROBE, tmp_path / "probe.html", tmp_path / "profile")
    assert got["maths"] == FORMULAS + 1
    assert got["fractions"] >= 5 and got["stacked"] == got["fractions"], got
