"""The index page of ``syneval-nb run`` (``reports/index.html``): one card per chapter, to read at a glance: its
question, its headline verdicts (at most :data:`MAX_HEADLINE_VERDICTS`, declared by the chapter in its results
file under ``"headline_verdicts"``; every other verdict folds away in a ``<details>``), its headline figure (the
first image of the code cell tagged :data:`HEADLINE_FIGURE_TAG`; a click opens it full size, offline and with no
script), time and a link. A run on toy data (the shipped example of notebook 09, :func:`toy_note`) says so on its
card; p-values read "p < 0.001", never "p = 0" (:func:`format_p`)."""

import base64
import datetime as _dt
import html
import re
from pathlib import Path
from typing import Any, Mapping, Sequence
from syneval_nb.paths import NOTEBOOK_DIR



__all__ = []  # a command's module: `syneval-nb` (app.cli) is its face

HEADLINE_FIGURE_TAG = "headline-figure"
"""The cell tag that marks a chapter's headline figure: the card shows the first image of that cell's outputs."""
MAX_HEADLINE_VERDICTS = 6
"""At most this many verdicts show on a card; the chapter names them in its results (``"headline_verdicts"``)."""


# ============================================================================================== index page


def _notebook(path: Path):
    import nbformat

    try:
        return nbformat.read(str(path), as_version=4)
    except Exception:  # noqa: BLE001 - a missing or unreadable notebook just has no question/figure
        return None


def _plain(md: str) -> str:
    """Markdown to plain text for a card: links, code marks and emphasis dropped. A code span keeps its text as it
    is (``PRIMARY_DEPTH``); ``**bold**``/``__bold__`` and ``*italic*``/``_italic_`` lose their marks, an underscore
    inside a word is kept."""
    md = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", md)
    code: list[str] = []
    md = re.sub(r"`([^`]*)`", lambda m: code.append(m.group(1)) or f"\x00{len(code) - 1}\x00", md)
    md = re.sub(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1", r"\2", md)
    md = re.sub(r"(?<![\w*])([*_])(?=\S)(.+?)(?<=\S)\1(?![\w*])", r"\2", md)
    md = re.sub(r"\x00(\d+)\x00", lambda m: code[int(m.group(1))], md)
    return re.sub(r"\s+", " ", md).strip()


def notebook_question(nb) -> tuple[str, str]:
    """``(title, question)`` from a notebook's first markdown cell: the ``#`` heading, and the paragraph that
    states the question (the one containing "Question", else the first one with a "?", else the first)."""
    if nb is None:
        return "", ""
    cell = next((c for c in nb.cells if c.cell_type == "markdown"), None)
    if cell is None:
        return "", ""
    lines = cell.source.strip().split("\n")
    title = _plain(lines[0].lstrip("#")) if lines and lines[0].startswith("#") else ""
    body = "\n".join(lines[1:] if title else lines)
    paras = [p for p in (_plain(x) for x in re.split(r"\n\s*\n", body)) if p]
    pick = next((p for p in paras if "question" in p.lower()), None) or next((p for p in paras if "?" in p), None)
    return title, pick or (paras[0] if paras else "")


def first_image(nb, cells=None) -> str | None:
    """The first image output of an executed notebook (or of its ``cells``) as a ``data:`` URI (PNG, JPEG or
    SVG), or ``None``."""
    if nb is None:
        return None
    for c in nb.cells if cells is None else cells:
        for out in c.get("outputs", []):
            data = out.get("data", {})
            for mime in ("image/png", "image/jpeg"):
                if mime in data:
                    b64 = "".join(data[mime]) if isinstance(data[mime], list) else data[mime]
                    return f"data:{mime};base64,{b64.strip()}"
            if "image/svg+xml" in data:
                svg = "".join(data["image/svg+xml"]) if isinstance(data["image/svg+xml"], list) else \
                    data["image/svg+xml"]
                return "data:image/svg+xml;base64," + base64.b64encode(svg.encode("utf-8")).decode("ascii")
    return None


def headline_image(nb) -> str | None:
    """The headline figure of an executed notebook: the first image of the code cells tagged
    :data:`HEADLINE_FIGURE_TAG`; a notebook without the tag falls back to its first image."""
    if nb is None:
        return None
    tagged = [c for c in nb.cells if HEADLINE_FIGURE_TAG in c.get("metadata", {}).get("tags", [])]
    return (first_image(nb, tagged) if tagged else None) or first_image(nb)


def toy_note(results: Mapping[str, Any]) -> str | None:
    """The label of a run on toy data, or ``None``: a results file that says ``"toy_data": true``, or whose
    parameters have ``hyp_files`` ``None`` (notebook 09 then runs on its shipped, hand-made example)."""
    params = results.get("parameters") if isinstance(results, Mapping) else None
    if results.get("toy_data") or (isinstance(params, Mapping) and "hyp_files" in params
                                   and params["hyp_files"] is None):
        return ("Toy data: the hand-made example shipped in data/examples/your_system (three made-up systems, a "
                "made-up rating). Its verdicts show what the chapter prints for your files; they are not findings.")
    return None


def _fmt_value(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, (list, tuple)) and len(v) == 2 and all(isinstance(x, (int, float)) for x in v):
        return f"[{_fmt_value(v[0])}, {_fmt_value(v[1])}]"
    return str(v)


def _verdict_items(verdicts: Mapping[str, Any]) -> list[str]:
    from syneval_nb.stats.verdicts import format_p  # here: syneval_nb.stats brings scipy.stats (~1 s at import)

    items = []
    for claim, v in verdicts.items():
        if v is None:
            items.append(f"<b>{html.escape(str(claim))}</b>: <span class='v meh'>not in the results file</span>")
            continue
        if not isinstance(v, Mapping):
            items.append(f"<b>{html.escape(str(claim))}</b>: {html.escape(str(v))}")
            continue
        bits = [f"statistic {_fmt_value(v.get('statistic'))}"] if v.get("statistic") is not None else []
        if v.get("ci"):
            bits.append(f"95% CI {_fmt_value(v['ci'])}")
        if v.get("p") is not None:
            bits.append(format_p(v["p"]))
        if v.get("p_holm") is not None:
            bits.append("Holm " + format_p(v["p_holm"]))
        verdict = str(v.get("verdict", "?"))
        cls = {"holds": "ok", "does not hold": "no"}.get(verdict, "meh")
        items.append(f"<b>{html.escape(str(claim))}</b>: <span class='v {cls}'>{html.escape(verdict)}</span>"
                     + (f" <small>({html.escape('; '.join(bits))})</small>" if bits else "")
                     + (f" <small class='why'>why: {html.escape(str(v['reason']))}</small>" if v.get("reason") else ""))
    return items


_ORDER = {"holds": 0, "does not hold": 1, "cannot tell": 2, "exploratory": 3}


def _split_verdicts(results: Mapping[str, Any], verdicts: Mapping[str, Any]) -> tuple[dict, dict]:
    """``(headline, rest)``: the claims the chapter declares under ``"headline_verdicts"`` (at most
    :data:`MAX_HEADLINE_VERDICTS`, in its order; a declared claim missing from the verdicts maps to ``None``), and
    every other verdict, ordered holds / does not hold / cannot tell, then by claim. Without a declaration a
    chapter with at most :data:`MAX_HEADLINE_VERDICTS` verdicts shows them all; a larger one folds them all."""
    declared = results.get("headline_verdicts")
    if declared is None:
        declared = list(verdicts) if len(verdicts) <= MAX_HEADLINE_VERDICTS else []
    declared = [str(c) for c in declared][:MAX_HEADLINE_VERDICTS]
    head = {c: verdicts.get(c) for c in declared}
    rest = {c: v for c, v in verdicts.items() if c not in head}
    key = lambda kv: (_ORDER.get(str(kv[1].get("verdict")) if isinstance(kv[1], Mapping) else "", 3), kv[0])  # noqa: E731
    return head, dict(sorted(rest.items(), key=key))


def _headline_items(results: Mapping[str, Any], limit: int = 8) -> list[str]:
    """A chapter without verdicts: its first few numbers (nested keys joined with ' / ')."""
    out: list[str] = []

    def walk(prefix: str, v: Any) -> None:
        if len(out) >= limit:
            return
        if isinstance(v, Mapping):
            for k, x in v.items():
                walk(f"{prefix} / {k}" if prefix else str(k), x)
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            out.append(f"{html.escape(prefix)}: <b>{html.escape(_fmt_value(v))}</b>")

    for k, v in results.items():
        if k not in ("parameters", "verdicts", "signatures"):
            walk(str(k), v)
    return out


def last_line(text: str) -> str:
    lines = [x.strip() for x in str(text).strip().split("\n") if x.strip()]
    return lines[-1] if lines else "failed"


def chapter_card(row: Mapping[str, Any], reports_dir: str | Path) -> str:
    """One chapter's card: title and question, a toy-data label (:func:`toy_note`), the headline verdicts (the
    rest folded in a ``<details>``; a chapter without verdicts: its first numbers), the headline figure
    (:func:`headline_image`), the run time and the link; a failed chapter is a red card with the error's last
    line."""
    stem = str(row["stem"])
    executed = Path(reports_dir) / stem / f"{stem}.ipynb"
    nb = _notebook(executed) if executed.is_file() else _notebook(NOTEBOOK_DIR / f"{stem}.ipynb")
    title, question = notebook_question(nb)
    link = f"{stem}/{stem}.html"
    failed = row.get("status") != "ok"
    parts = [f"<section class='card{' failed' if failed else ''}' id='{html.escape(stem)}'>",
             f"<h2><a href='{html.escape(link)}'>{html.escape(title or stem)}</a></h2>",
             f"<p class='meta'>{html.escape(stem)} · {'FAILED' if failed else 'ok'} · "
             f"{float(row.get('seconds', 0.0)):.1f} s · <a href='{html.escape(link)}'>full report</a></p>"]
    if question:
        parts.append(f"<p class='q'>{html.escape(question)}</p>")
    if failed:
        parts.append(f"<p class='err'>{html.escape(last_line(row.get('error', 'failed')))}</p>")
    results = row.get("results") or {}
    if not isinstance(results, Mapping):
        results = {}
    toy = toy_note(results)
    if toy:
        parts[0] = parts[0].replace("class='card", "class='card toy", 1)
        parts.append(f"<p class='toy'><b>TOY DATA.</b> {html.escape(toy)}</p>")
    verdicts = results.get("verdicts")
    if verdicts:
        head, rest = _split_verdicts(results, verdicts)
        if head:
            parts.append("<ul class='verdicts headline'>" + "".join(f"<li>{x}</li>" for x in _verdict_items(head))
                         + "</ul>")
        if rest:
            counts = [f"{n} {k}" for k in _ORDER if (n := sum(isinstance(v, Mapping) and v.get('verdict') == k
                                                                for v in rest.values())) or k != "exploratory"]
            more = "more verdicts" if head else "verdicts"
            parts.append(f"<details><summary>{len(rest)} {more} ({html.escape(', '.join(counts))})</summary>"
                         "<ul class='verdicts'>" + "".join(f"<li>{x}</li>" for x in _verdict_items(rest))
                         + "</ul></details>")
    elif results:
        parts.append("<ul class='numbers'>" + "".join(f"<li>{x}</li>" for x in _headline_items(results)) + "</ul>")
    img = headline_image(nb)
    if img:
        parts.append(_figure(img, stem))
    parts.append("</section>")
    return "\n".join(parts)


def _figure(src: str, stem: str) -> str:
    """A card's headline figure: a thumbnail that opens full size in the page, with no script (a CSS lightbox on
    ``:target``: the link sets ``#figure-<stem>`` and the figure fills the window at its own size, scrolling when
    larger; a click anywhere, the close mark or the browser's Back closes it and returns to the card). One ``<img>``
    (the ``data:`` URI once), so the page stays one file that reads offline."""
    fid = html.escape(f"figure-{stem}")
    return (f"<figure class='headline' id='{fid}'>"
            f"<a class='open' href='#{fid}' title='open the figure full size'>"
            f"<img alt='headline figure of {html.escape(stem)}' src='{src}'></a>"
            f"<a class='close' href='#{html.escape(stem)}' title='close' aria-label='close'><span>&times;</span></a>"
            "<figcaption>click the figure to see it full size</figcaption></figure>")


_CSS = """body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#222}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(480px,1fr));gap:1.2em}
.card{border:1px solid #ccc;border-radius:8px;padding:1em 1.2em;background:#fff}
.card.failed{border-color:#d7191c;background:#fdecea}
.card h2{font-size:1.15em;margin:0 0 .3em}.meta{color:#666;font-size:.85em;margin:0 0 .6em}
.q{font-style:italic}.err{color:#b00;font-family:monospace;white-space:pre-wrap}
.card img{max-width:100%;margin-top:.6em}.v.ok{color:#1a9641}.v.no{color:#d7191c}.v.meh{color:#b8860b}
ul{padding-left:1.2em}li{margin:.2em 0}
.card.toy{border-color:#b8860b;background:#fffbea}p.toy{color:#7a5a00;font-size:.9em}
details{margin:.4em 0;font-size:.92em}summary{cursor:pointer;color:#444}
figure.headline{margin:.6em 0 0}figure.headline img{display:block;cursor:zoom-in;margin:0}
figure.headline figcaption{color:#777;font-size:.8em}figure.headline a.close{display:none}
figure.headline:target{position:fixed;inset:0;z-index:10;margin:0;padding:1.5em;box-sizing:border-box;
  background:rgba(20,20,20,.88);display:flex;overflow:auto}
figure.headline:target a.open{margin:auto;pointer-events:none;position:relative;z-index:2}
figure.headline:target img{max-width:none;margin:0;background:#fff;cursor:zoom-out}
figure.headline:target figcaption{display:none}
figure.headline:target a.close{display:block;position:fixed;inset:0;z-index:1;cursor:zoom-out;text-decoration:none}
figure.headline:target a.close span{position:fixed;top:.2em;right:.5em;color:#fff;font-size:2.2em;line-height:1}"""


def index_page(rows: Sequence[Mapping[str, Any]], title: str = "syneval-nb report",
               reports_dir: str | Path = "reports") -> str:
    """The ``reports/index.html`` of ``syneval-nb run``: one card per chapter (:func:`chapter_card`)."""
    n_ok = sum(r.get("status") == "ok" for r in rows)
    total = sum(float(r.get("seconds", 0.0)) for r in rows)
    head = (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
            f"<style>{_CSS}</style></head><body>")
    summary = (f"<h1>{html.escape(title)}</h1><p>{n_ok} of {len(rows)} chapters ran ({len(rows) - n_ok} failed) in "
               f"{total:.0f} s; generated {html.escape(_dt.datetime.now().isoformat(timespec='seconds'))}.</p>")
    cards = "\n".join(chapter_card(r, reports_dir) for r in rows)
    return f"{head}\n{summary}\n<div class='grid'>\n{cards}\n</div>\n</body></html>\n"


# ============================================================================================== syneval-nb report


