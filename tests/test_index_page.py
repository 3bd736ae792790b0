"""The index page's headline figures open full size (issue 33): each thumbnail is a link to a CSS lightbox
(``:target``, no script, nothing from the network). With a Chromium on the machine, the page opened from a
``file://`` URL with no network shows the thumbnail smaller than the figure, and after a click the figure at its own
size; a click on it closes it."""
from __future__ import annotations

import base64
import io
import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest

from _chromium import CHROMIUM, probe

from syneval_nb.app.index_page import HEADLINE_FIGURE_TAG, index_page

WIDTH, HEIGHT = 1800, 500  # a wide figure, like chapter 07's, far wider than a card


def _png(width: int = WIDTH, height: int = HEIGHT) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 4, figsize=(width / 100, height / 100), dpi=100)
    for i, ax in enumerate(axes):
        ax.plot(range(10), [(x * (i + 1)) % 7 for x in range(10)])
        ax.set_title(f"panel {i}: small print that a thumbnail cannot show")
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _reports(folder: Path, stems=("07_wide", "08_plain")) -> tuple[Path, list[dict]]:
    """A report folder with executed notebooks (a headline figure each), and the rows of ``run_all``."""
    png = _png()
    rows = []
    for stem in stems:
        (folder / stem).mkdir(parents=True)
        nb = nbformat.v4.new_notebook()
        cell = nbformat.v4.new_code_cell("plot()")
        cell.metadata["tags"] = [HEADLINE_FIGURE_TAG]
        cell.outputs = [nbformat.v4.new_output("display_data", data={"image/png": png, "text/plain": "<Figure>"})]
        nb.cells = [nbformat.v4.new_markdown_cell(f"# {stem}\n\n**Question.** Does the figure open?"), cell]
        nbformat.write(nb, str(folder / stem / f"{stem}.ipynb"))
        rows.append({"stem": stem, "status": "ok", "seconds": 1.0, "results": {"r": 0.5}})
    (folder / "index.html").write_text(index_page(rows, "test report", folder), encoding="utf-8")
    return folder / "index.html", rows


class _Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.open: list[str] = []
        self.parents: list[tuple[str, dict, tuple]] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.parents.append((tag, a, tuple(self.open)))
        if tag not in ("img", "meta", "br", "link"):
            self.open.append(f"{tag}#{a.get('id', '')}.{a.get('class', '')}|{a.get('href', '')}")

    def handle_endtag(self, tag):
        if tag not in ("img", "meta", "br", "link") and self.open:
            self.open.pop()


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> Path:
    return _reports(tmp_path_factory.mktemp("index"))[0]


def test_each_thumbnail_is_a_link_that_opens_its_figure(page):
    text = page.read_text(encoding="utf-8")
    p = _Page()
    p.feed(text)
    imgs = [(a, parents) for tag, a, parents in p.parents if tag == "img"]
    assert len(imgs) == 2
    for stem, (a, parents) in zip(("07_wide", "08_plain"), imgs):
        assert a["src"].startswith("data:image/png;base64,")
        # inside <figure id=figure-STEM> and a link to that same figure (the lightbox), inside the card
        assert parents[-1] == f"a#.open|#figure-{stem}", parents
        assert parents[-2] == f"figure#figure-{stem}.headline|", parents
        assert any(x.startswith(f"section#{stem}.card") for x in parents)
    closes = [a["href"] for tag, a, _ in p.parents if tag == "a" and a.get("class") == "close"]
    assert closes == ["#07_wide", "#08_plain"]  # closing goes back to the card
    assert text.count(_png()[:200]) == 2  # each figure's data once: one <img> per card


def test_the_index_needs_no_script_and_no_network(page):
    text = page.read_text(encoding="utf-8")
    assert "<script" not in text
    assert not re.search(r"""(src|href)\s*=\s*['"]?(https?:)?//""", text)
    assert "figure.headline:target" in text  # the lightbox is CSS


# ------------------------------------------------------------------------------------------ a real browser, offline


_PROBE = """<script>
const box = el => { const r = el.getBoundingClientRect(); return [Math.round(r.left), Math.round(r.top),
                                                                    Math.round(r.width), Math.round(r.height)]; };
window.addEventListener("load", () => {
  const img = document.querySelector("#figure-07_wide img");
  const out = {natural: [img.naturalWidth, img.naturalHeight], thumb: box(img)};
  document.querySelector("#figure-07_wide a.open").click();
  setTimeout(() => {
    out.hash = location.hash;
    out.open = box(img);
    out.fixed = getComputedStyle(document.querySelector("#figure-07_wide")).position;
    const [x, y, w, h] = out.open;
    const hit = document.elementFromPoint(x + w / 2, y + h / 2);
    out.hit = hit.closest("a") ? hit.closest("a").className : hit.tagName;
    hit.click();
    setTimeout(() => {
      out.closed = location.hash;
      out.after = box(img);
      const pre = document.createElement("pre");
      pre.id = "probe";
      pre.textContent = JSON.stringify(out);
      document.body.appendChild(pre);
    }, 200);
  }, 200);
});
</script></body>"""


@pytest.mark.skipif(CHROMIUM is None, reason="no Chromium on this machine")
def test_chromium_opens_the_figure_full_size_and_closes_it(page, tmp_path):
    got = probe(page, _PROBE, page.with_name("probe.html"), tmp_path / "profile", "--window-size=1280,900")
    assert got["natural"] == [WIDTH, HEIGHT]
    assert got["thumb"][2] < WIDTH / 2  # a thumbnail in its card
    assert got["hash"] == "#figure-07_wide" and got["fixed"] == "fixed"
    assert got["open"][2:] == [WIDTH, HEIGHT], got  # full size (the overlay scrolls when the window is smaller)
    assert got["hit"] == "close"  # a click on the open figure closes it
    assert got["closed"] == "#07_wide" and got["after"][2] == got["thumb"][2], got
