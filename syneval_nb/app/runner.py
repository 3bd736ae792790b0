"""Run the notebooks headless with papermill: the engine of ``syneval-nb run`` and of the regression tests.

Each notebook has a cell tagged ``parameters`` (``data_dir``, ``sample``, ``output_dir``, ``seed`` and its own
knobs) and ends by calling :func:`write_results`, which writes ``<output_dir>/<stem>.json`` with the headline
numbers; :func:`run_notebook` adds the parameters the notebook ran with under ``"parameters"`` (a reserved key). :func:`run_notebook` executes one notebook into a report folder and returns that JSON;
:func:`run_all` runs every notebook into ``reports/<stem>/`` with an HTML copy of each and an index page.
"""
from __future__ import annotations

import argparse
import functools
import html
import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any, Iterable, Mapping

from syneval_nb.app.index_page import index_page
from syneval_nb.paths import NOTEBOOK_DIR, in_checkout
from syneval_nb.textio import to_json


__all__ = ["write_results"]


KERNEL_NAME = "syneval-nb"


def write_results(results: Mapping[str, Any], output_dir: str | Path, name: str) -> Path:
    """Write a notebook's headline numbers to ``<output_dir>/<name>.json`` and return the path."""
    out = Path(output_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{name}.json"
    path.write_text(json.dumps(to_json(results), indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return path


def list_notebooks(folder: str | Path = NOTEBOOK_DIR) -> list[Path]:
    """The numbered notebooks ``NN_*.ipynb`` of a folder, in order."""
    return sorted(p for p in Path(folder).glob("[0-9][0-9]_*.ipynb"))


def require_notebook_modules() -> None:
    """Raise ``ModuleNotFoundError`` for the first module of the extra [report] that running a notebook needs and
    that is not installed, found without importing it (``syneval-nb`` names the extra): a refusal prints at once."""
    import importlib.util

    for name in ("jupyter_client", "zmq", "traitlets", "papermill", "nbformat"):
        if importlib.util.find_spec(name) is None:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)


def import_papermill_for_the_command_line() -> None:
    """Import papermill without jsonschema's optional ``rfc3987_syntax`` (it compiles 39 lark grammars at import,
    ~2.5 s of CPU, for an ``iri`` format no notebook schema uses): for ``run`` and ``report``, whose process ends
    with the run. ``rfc3987_syntax`` stays importable afterwards."""
    blocked = "rfc3987_syntax" not in sys.modules and "jsonschema" not in sys.modules
    if blocked:
        sys.modules["rfc3987_syntax"] = None  # type: ignore[assignment]  # its import raises ImportError
    try:
        import papermill  # noqa: F401
    finally:
        if blocked:
            del sys.modules["rfc3987_syntax"]


def _kernel_name() -> str:
    """``syneval-nb`` (the kernel ``setup.sh`` registers) when it runs this very interpreter, else ``python3``
    (ipykernel's own kernel, which jupyter_client starts with ``sys.executable``): a wheel installed in another
    environment must not run its report in the checkout's kernel."""
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    try:
        argv = KernelSpecManager().get_kernel_spec(KERNEL_NAME).argv
    except (NoSuchKernel, OSError, ValueError):
        return "python3"
    # the same environment: the kernel's python sits in this interpreter's bin folder (compared as folders: every
    # venv's python links to the same base binary)
    same = bool(argv) and os.path.isabs(argv[0]) and \
        os.path.realpath(os.path.dirname(argv[0])) == os.path.realpath(os.path.dirname(sys.executable))
    return KERNEL_NAME if same else "python3"


def _engine_options() -> dict[str, Any]:
    """Options of papermill's client: the kernel's ZeroMQ channels encrypted with CurveZMQ keys that the kernel
    manager provisions (``transport_encryption="auto"``, jupyter_client >= 8.10 with a libzmq that has Curve), which
    also spares every run ipykernel's "Kernel is running over TCP without encryption" warning."""
    from jupyter_client.manager import KernelManager
    from traitlets.config import Config
    import zmq

    opts: dict[str, Any] = {"kernel_manager_class": _quiet_shutdown_kernel_manager()}
    if "transport_encryption" not in KernelManager.class_trait_names() or not zmq.has("curve"):
        return opts
    return {**opts, "config": Config({"KernelManager": {"transport_encryption": "auto"}})}


@functools.cache
def _quiet_shutdown_kernel_manager():  # a class built on first use: jupyter_client loads when a notebook runs
    from jupyter_client.manager import AsyncKernelManager

    class QuietShutdownKernelManager(AsyncKernelManager):
        """jupyter_client's kernel manager without the SIGINT it sends before every shutdown request: the kernel is
        idle by then, and the signal only races with the request's handling, so that ipykernel prints
        "KeyboardInterrupt caught in kernel" on the console at random (about 1 run in 3 here). The shutdown request
        itself (and, after ``shutdown_wait_time``, SIGTERM and SIGKILL) still ends the kernel; interrupts asked for
        at other times pass."""

        async def _async_interrupt_kernel(self) -> None:
            if self.shutting_down:
                return
            await super()._async_interrupt_kernel()

    return QuietShutdownKernelManager


def to_html(nb_path: Path, html_path: Path) -> Path:
    """Export an executed notebook to a standalone HTML page that reads offline: every formula is MathML, written
    at export (:func:`_math_html`; browsers render it with no script), and the page loads nothing from the network
    (nbconvert's lab template without its CDN scripts: MathJax, require.js, the widget manager, mermaid)."""
    import nbformat

    nb = nbformat.read(str(nb_path), as_version=4)
    body, _ = _offline_exporter()().from_notebook_node(nb)
    html_path.write_text(body, encoding="utf-8")
    return html_path


def _math_html(tex: str, display: bool = False) -> str:
    """One TeX formula (without its ``$`` delimiters) as a MathML ``<math>`` element (latex2mathml); a formula it
    cannot read stays its TeX source, in a ``<code class='tex'>``."""
    from latex2mathml.converter import convert

    try:
        return convert(tex.strip(), display="block" if display else "inline")
    except Exception:  # noqa: BLE001 - latex2mathml raises many kinds on TeX it does not know
        delim = "$$" if display else "$"
        return f"<code class='tex'>{html.escape(delim + tex + delim)}</code>"


def _latex_output(text: str) -> str:
    """A ``text/latex`` output as MathML: its ``$$..$$``, ``\\[..\\]``, ``$..$``, ``\\(..\\)`` or a bare
    environment (then shown as display math)."""
    m = re.fullmatch(r"\s*(\$\$|\\\[|\$|\\\()(.*?)(\$\$|\\\]|\$|\\\))\s*", str(text), flags=re.S)
    if m:
        return _math_html(m.group(2), display=m.group(1) in ("$$", "\\["))
    return _math_html(str(text), display=True)


_OFFLINE_TEMPLATE = r"""{%- extends 'index.html.j2' -%}
{%- block html_head_js_requirejs -%}{%- endblock html_head_js_requirejs -%}
{%- block jupyter_widgets -%}{%- endblock jupyter_widgets -%}
{%- block html_head_js_mathjax -%}
<style type="text/css">
math { font-family: "Latin Modern Math", "STIX Two Math", "Cambria Math", math; }
math[display="block"] { margin: 0.6em 0; }
code.tex { white-space: pre-wrap; }
</style>
{%- endblock html_head_js_mathjax -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
{% block data_latex scoped %}
<div class="jp-RenderedLatex jp-OutputArea-output {{ extra_class }}" data-mime-type="text/latex">
{{ output.data['text/latex'] | latex_output }}
</div>
{%- endblock data_latex %}
"""
"""nbconvert's ``lab`` page with no script or style from the network: no MathJax (the formulas are MathML), no
require.js and no widget manager (the reports' only widgets are tqdm's progress bars), no mermaid."""


@functools.cache
def _offline_exporter():
    """The HTML exporter of :func:`to_html` (a class, built on first use: nbconvert loads only when exporting)."""
    from jinja2 import DictLoader, pass_context
    from nbconvert import HTMLExporter
    from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath

    class MathMLRenderer(IPythonRenderer):
        """nbconvert's markdown renderer (its math parser finds the formulas) writing each formula as MathML."""

        def block_math(self, body: str) -> str:
            return _math_html(body, display=True)

        def inline_math(self, body: str) -> str:
            return _math_html(body)

        def latex_environment(self, name: str, body: str) -> str:
            return _math_html(f"\\begin{{{name}}}{body}\\end{{{name}}}", display=True)

    class OfflineHTMLExporter(HTMLExporter):
        """``HTMLExporter`` on :data:`_OFFLINE_TEMPLATE`, its markdown formulas rendered by ``MathMLRenderer``."""

        def __init__(self, **kw: Any) -> None:
            kw.setdefault("template_name", "lab")
            kw.setdefault("template_file", "syneval_offline.html.j2")
            kw.setdefault("extra_loaders", [DictLoader({"syneval_offline.html.j2": _OFFLINE_TEMPLATE})])
            super().__init__(**kw)

        @pass_context
        def markdown2html(self, context, source):  # nbconvert's own, with the renderer above
            cell = context.get("cell", {})
            renderer = MathMLRenderer(
                escape=False,
                attachments=cell.get("attachments", {}),
                embed_images=self.embed_images,
                path=context.get("resources", {}).get("metadata", {}).get("path", ""),
                anchor_link_text=self.anchor_link_text,
                exclude_anchor_links=self.exclude_anchor_links,
                **self.lexer_options,
            )
            return MarkdownWithMath(renderer=renderer).render(source)

        def default_filters(self):
            yield from super().default_filters()
            yield ("latex_output", _latex_output)

    return OfflineHTMLExporter


class ParameterError(ValueError):
    """A parameter that a notebook does not have, or a notebook without a ``parameters`` cell."""


def notebook_parameters(notebook: str | Path) -> dict[str, Any]:
    """The names assigned in a notebook's cell tagged ``parameters``, with their default values (a literal's value;
    the source text of any other expression). Raises :class:`ParameterError` when there is no such cell."""
    import ast

    nb = json.loads(Path(notebook).read_text(encoding="utf-8"))  # json, not nbformat: its imports take ~1.5 s
    if not isinstance(nb, dict) or nb.get("nbformat") != 4:  # an older format, as nbformat converts it
        import nbformat

        nb = json.loads(nbformat.writes(nbformat.read(str(notebook), as_version=4)))
    sources = ["".join(c["source"]) for c in nb.get("cells", [])
               if c.get("cell_type") == "code" and "parameters" in c.get("metadata", {}).get("tags", [])]
    if not sources:
        raise ParameterError(f"{Path(notebook).name} has no code cell tagged 'parameters'")
    out: dict[str, Any] = {}
    for source in sources:
        for node in ast.parse(source).body:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] \
                if isinstance(node, ast.AnnAssign) and node.value is not None else []
            for t in targets:
                if isinstance(t, ast.Name):
                    try:
                        out[t.id] = ast.literal_eval(node.value)
                    except (ValueError, SyntaxError, TypeError):
                        out[t.id] = ast.get_source_segment(source, node.value)
    return out


def check_parameters(notebooks: Iterable[str | Path], parameters: Mapping[str, Any]) -> None:
    """Raise :class:`ParameterError` (naming the notebook and listing its parameters) when a name in
    ``parameters`` is not assigned in the ``parameters`` cell of every one of ``notebooks``."""
    for nb in notebooks:
        known = notebook_parameters(nb)
        unknown = [k for k in parameters if k not in known]
        if unknown:
            raise ParameterError(f"{Path(nb).stem} has no parameter {', '.join(map(repr, unknown))}; its parameters "
                                 f"are: {', '.join(known)}")
        for k, v in parameters.items():
            _check_value(Path(nb).stem, k, v, known[k])


_AT_LEAST = {"sample": 1, "seed": 0, "n_resamples": 0, "n_bootstrap": 0, "max_depth": 1, "workers": 1, "n_jobs": 1}
"""Lower bounds of the common numeric parameters (``None`` stays allowed where it is the default: all data)."""


def _check_value(notebook: str, name: str, value: Any, default: Any) -> None:
    """A parameter override must have its default's type (an int where the default is an int; a float may be given
    as an int; a default of ``None`` takes anything) and the common counts a whole number in range
    (:data:`_AT_LEAST`; ``None`` where that is the default)."""
    if name in _AT_LEAST:
        ok = (value is None and default is None) or (
            isinstance(value, int) and not isinstance(value, bool) and value >= _AT_LEAST[name])
        want = f"a whole number >= {_AT_LEAST[name]}" + (" or None" if default is None else "")
    elif name == "cache":  # the parse cache: the kit's (True), none (None/False) or a file path
        ok, want = value is None or isinstance(value, (bool, str)), "true, false, None or a file path"
    elif default is None:
        ok, want = True, ""
    elif isinstance(default, bool):
        ok, want = isinstance(value, bool), "true or false"
    elif isinstance(default, int):
        ok, want = isinstance(value, int) and not isinstance(value, bool), "a whole number"
    elif isinstance(default, float):
        ok, want = isinstance(value, (int, float)) and not isinstance(value, bool), "a number"
    else:
        ok, want = isinstance(value, type(default)), f"a {type(default).__name__}"
    if not ok:
        raise ParameterError(f"{notebook}: parameter {name}={value!r} must be {want} (its default is {default!r})")


def run_notebook(
    notebook: str | Path,
    out_dir: str | Path,
    parameters: Mapping[str, Any] | None = None,
    *,
    html_copy: bool = True,
    progress_bar: bool = False,
) -> dict:
    """Execute one notebook with papermill into ``out_dir`` and return the JSON it wrote.

    ``output_dir`` is always set to ``out_dir``; other ``parameters`` override the notebook's defaults. A results
    file left by an earlier run is removed first, so a failed run never leaves stale numbers beside it; the
    parameters the notebook ran with (its defaults with the overrides) are recorded in the JSON under
    ``"parameters"``. Raises ``papermill.PapermillExecutionError`` when a cell fails (the executed copy is kept for
    inspection) and ``FileNotFoundError`` when the notebook did not write its results file.
    """
    import papermill as pm

    notebook = Path(notebook)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    params = dict(parameters or {})
    params["output_dir"] = str(out.resolve())
    executed = out / notebook.name
    result_path = out / f"{notebook.stem}.json"
    result_path.unlink(missing_ok=True)  # a stale file of an earlier run must not pass for this run's results
    ran_with = {**notebook_parameters(notebook), **params}
    pm.execute_notebook(
        str(notebook),
        str(executed),
        parameters=params,
        kernel_name=_kernel_name(),
        cwd=str(notebook.parent.resolve()),
        progress_bar=progress_bar,
        log_output=False,
        **_engine_options(),
    )
    if html_copy:
        to_html(executed, executed.with_suffix(".html"))
    if not result_path.exists():
        raise FileNotFoundError(f"{notebook.name} ran but did not write {result_path}")
    results = json.loads(result_path.read_text(encoding="utf-8"))
    results["parameters"] = to_json(ran_with)
    result_path.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return results


def _error_line(exc: BaseException) -> str:
    """The last line of a notebook's error, in full: ``Name: message`` of the exception raised in the cell."""
    if hasattr(exc, "ename") and hasattr(exc, "evalue"):  # papermill.PapermillExecutionError
        return f"{exc.ename}: {exc.evalue}"
    return f"{type(exc).__name__}: {exc}"


def run_all(
    notebooks: Iterable[str | Path] | None = None,
    reports_dir: str | Path = "reports",
    parameters: Mapping[str, Any] | None = None,
    *,
    stop_on_error: bool = False,
) -> list[dict]:
    """Run notebooks into ``reports_dir/<stem>/`` (executed copy, HTML, JSON) and write ``reports_dir/index.html``.

    Returns one row per notebook: ``stem``, ``status`` (``ok`` or ``failed``), ``seconds``, ``results``, ``error``.
    A failing notebook does not stop the others unless ``stop_on_error``.
    """
    from tqdm.auto import tqdm

    nbs = [Path(p) for p in (notebooks if notebooks is not None else list_notebooks())]
    reports = Path(reports_dir)
    reports.mkdir(parents=True, exist_ok=True)
    rows: list[dict] = []
    for nb in tqdm(nbs, desc="notebooks", unit="nb"):
        t0 = time.perf_counter()
        row: dict[str, Any] = {"stem": nb.stem}
        try:
            row["results"] = run_notebook(nb, reports / nb.stem, parameters)
            row["status"] = "ok"
        except Exception as exc:  # noqa: BLE001 - reported in the index, re-raised on request
            row["status"] = "failed"
            row["error"] = _error_line(exc)
            executed = reports / nb.stem / nb.name  # papermill keeps the copy up to the failing cell
            if executed.is_file():
                to_html(executed, executed.with_suffix(".html"))
            if stop_on_error:
                raise
        row["seconds"] = time.perf_counter() - t0
        rows.append(row)

        (reports / "index.html").write_text(index_page(rows, "syneval-nb report", reports), encoding="utf-8")
    return rows


def strip_outputs(paths: Iterable[str | Path]) -> None:
    """Remove outputs, execution counts and papermill metadata from notebooks in place; keep cell tags."""
    import nbformat

    for p in paths:
        nb = nbformat.read(str(p), as_version=4)
        for cell in nb.cells:
            if cell.cell_type == "code":
                cell.outputs = []
                cell.execution_count = None
            cell.metadata.pop("papermill", None)
            cell.metadata.pop("execution", None)
        nb.metadata.pop("papermill", None)
        nbformat.write(nb, str(p))


def _parse_value(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def cli(argv: list[str] | None = None) -> int:
    """``syneval-nb run``: execute every notebook with its full default parameters."""
    require_notebook_modules()  # without the extra [report]: one line naming it, before anything else
    ap = argparse.ArgumentParser(prog="syneval-nb run", description="Execute every chapter notebook (or those named) "
                                 "with its full default parameters and write reports/index.html.")
    ap.add_argument("notebooks", nargs="*", help="notebook files or name prefixes (default: all in notebooks/)")
    ap.add_argument("-o", "--reports", default="reports", help="report folder (default: reports)")
    ap.add_argument("-p", "--param", action="append", default=[], metavar="KEY=VALUE",
                    help="override a parameter of every selected notebook (JSON value), e.g. -p sample=200; "
                         "the name must be in each notebook's parameters cell (checked before any notebook runs)")
    ap.add_argument("--data-dir", default=None, help="data folder (default: resolved by syneval_nb.paths)")
    args = ap.parse_args(argv)
    params: dict[str, Any] = {}
    if args.data_dir:
        if not Path(args.data_dir).is_dir():
            print(f"syneval-nb run: --data-dir {args.data_dir} is not a folder", file=sys.stderr)
            return 2
        params["data_dir"] = str(Path(args.data_dir).resolve())
    for kv in args.param:
        if "=" not in kv:
            ap.error(f"--param needs KEY=VALUE, got {kv!r}")
        k, v = kv.split("=", 1)
        params[k] = _parse_value(v)
    all_nbs = list_notebooks()
    if not all_nbs and not any(Path(sel).suffix == ".ipynb" for sel in args.notebooks):
        where = f"{NOTEBOOK_DIR} has none" if in_checkout() else "an installed syneval-nb does not include them"
        print(f"syneval-nb run: needs the chapters' notebooks (notebooks/NN_*.ipynb) and {where}: run it in a "
              "checkout of the repository (after bash setup.sh), or name notebook files (syneval-nb run "
              "path/to/03_constituent_metrics.ipynb); report, score, parse and rst work without them", file=sys.stderr)
        return 2
    if args.notebooks:
        chosen = []
        for sel in args.notebooks:
            p = Path(sel)
            if p.suffix == ".ipynb" and p.exists():
                chosen.append(p)
                continue
            hits = [nb for nb in all_nbs if nb.stem.startswith(sel)]
            if not hits:
                ap.error(f"no notebook matches {sel!r}")
            chosen.extend(hits)
    else:
        chosen = all_nbs
    try:  # before any notebook starts: a misspelled name must not run the full data with the default
        check_parameters(chosen, params)
    except (ParameterError, SyntaxError) as e:
        print(f"syneval-nb run: {e}", file=sys.stderr)
        return 2
    import_papermill_for_the_command_line()
    rows = run_all(chosen, args.reports, params)
    for r in rows:
        print(f"{r['status']:7s} {r['seconds']:7.1f}s  {r['stem']}  {r.get('error', '')}")
    print(f"index: {Path(args.reports).resolve() / 'index.html'}")
    return 0 if all(r["status"] == "ok" for r in rows) else 1


if __name__ == "__main__":  # python -m syneval_nb.app.runner strip notebooks/*.ipynb
    if len(sys.argv) > 1 and sys.argv[1] == "strip":
        strip_outputs(sys.argv[2:])
    else:
        sys.exit(cli(sys.argv[1:]))
