"""The package's surface, counted with ``ast`` (issue 34): what a student has to hold.

Counts, on the ``syneval_nb`` package of this checkout (or ``--package DIR``):

- **public names**: per module, the length of its ``__all__`` where it has one, else the top-level names it binds
  (``def``, ``class``, assignments, also inside a top-level ``if``/``try``) that do not start with ``_``; imported
  names are not counted (a module without ``__all__`` that re-exports should declare one). Totals for the package,
  outside the ``__init__`` modules, and in ``studies/``; the largest module and how many modules have more than
  :data:`PER_MODULE_TARGET`.
- **lines** of ``studies/`` and of the package: every line of every ``.py`` file, docstrings and comments included
  (what ``wc -l`` prints).
- **imports from ``metrics/`` into ``parsers/``**: import statements anywhere in ``syneval_nb/metrics/`` (inside
  functions too) that import from ``syneval_nb.parsers``.
- **system-table functions** (``def system_table*`` / ``def *system_table`` in ``studies/``) and **verdict functions**
  (``def verdict*`` / ``def *verdicts`` in ``studies/``), methods included.
- **JSON converters**: the ``def`` statements named one of :data:`JSON_CONVERTERS` anywhere in the package (by name
  only: each is listed with its place, so a false friend shows).

Usage::

    .venv/bin/python benchmarks/surface.py            # a table
    .venv/bin/python benchmarks/surface.py --json     # the same as JSON
    .venv/bin/python benchmarks/surface.py --modules  # the table with every module's count

``tests/test_surface.py`` holds every count at or below its value when the test was written (a ceiling that later
work can only lower).
"""
from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "syneval_nb"
PER_MODULE_TARGET = 20
"""Issue 34's target for public names per module."""
JSON_CONVERTERS = ("_jsonable", "_json_safe", "_plain", "verdicts_json", "_rows")
"""The names of the JSON converters issue 34 found (``runner._jsonable``, ``score._json_safe``, ``base._plain``,
``common.verdicts_json``, ``learned_metric._rows``)."""
SYSTEM_TABLE = re.compile(r"^system_table|system_table$")
VERDICT = re.compile(r"^verdict|verdicts$")


def _module_name(path: Path, package: Path) -> str:
    rel = path.relative_to(package.parent).with_suffix("")
    return ".".join(rel.parts)


def _top_level(body: list[ast.stmt]):
    """The statements at module level, with those inside a top-level ``if``/``try`` (an optional import's
    fallback still binds a name of the module)."""
    for node in body:
        yield node
        if isinstance(node, ast.If):
            yield from _top_level(node.body)
            yield from _top_level(node.orelse)
        elif isinstance(node, ast.Try):
            yield from _top_level(node.body)
            for h in node.handlers:
                yield from _top_level(h.body)
            yield from _top_level(node.orelse)
            yield from _top_level(node.finalbody)


def defined_names(tree: ast.Module) -> set[str]:
    """The top-level names a module binds itself (``def``, ``class``, assignment targets; not imports)."""
    out: set[str] = set()
    for node in _top_level(tree.body):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        out.add(n.id)
    return out


def dunder_all(tree: ast.Module) -> list[str] | None:
    """The module's ``__all__`` (a literal list or tuple, ``+=`` extensions included), or ``None``."""
    found: list[str] | None = None
    for node in _top_level(tree.body):
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets) and node.value is not None:
                try:
                    names = [str(x) for x in ast.literal_eval(node.value)]
                except ValueError:
                    continue
                found = (found or []) + names if isinstance(node, ast.AugAssign) else names
    return found


def _parsers_import(node: ast.AST) -> bool:
    if isinstance(node, ast.ImportFrom):
        if node.level:  # relative: from ..parsers import x (inside metrics/)
            return node.level == 2 and (node.module or "").split(".")[0] == "parsers"
        mod = node.module or ""
        return mod == "syneval_nb.parsers" or mod.startswith("syneval_nb.parsers.") or (
            mod == "syneval_nb" and any(a.name == "parsers" for a in node.names))
    if isinstance(node, ast.Import):
        return any(a.name == "syneval_nb.parsers" or a.name.startswith("syneval_nb.parsers.") for a in node.names)
    return False


def _line_count(path: Path) -> int:
    return path.read_bytes().count(b"\n")


def measure(package: str | Path = PACKAGE) -> dict:
    """Every count of the module docstring, as a JSON-ready dict."""
    package = Path(package).resolve()
    per_module: dict[str, dict] = {}
    lines_total = lines_studies = 0
    parsers_imports: list[str] = []
    system_tables: list[str] = []
    verdict_functions: list[str] = []
    converters: list[str] = []
    for path in sorted(package.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text, filename=str(path))
        name = _module_name(path, package)
        rel = path.relative_to(package)
        in_studies = rel.parts[0] == "studies"
        n_lines = _line_count(path)
        lines_total += n_lines
        lines_studies += n_lines if in_studies else 0
        declared = dunder_all(tree)
        public_defined = sorted(x for x in defined_names(tree) if not x.startswith("_"))
        per_module[name] = {
            "public": len(declared) if declared is not None else len(public_defined),
            "has_all": declared is not None,
            "defined_public": len(public_defined),
            "lines": n_lines,
            "init": path.name == "__init__.py",
            "studies": in_studies,
        }
        for node in ast.walk(tree):
            if rel.parts[0] == "metrics" and _parsers_import(node):
                parsers_imports.append(f"{name}:{node.lineno}")
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                where = f"{name}.{node.name}:{node.lineno}"
                if in_studies and SYSTEM_TABLE.search(node.name):
                    system_tables.append(where)
                if in_studies and VERDICT.search(node.name):
                    verdict_functions.append(where)
                if node.name in JSON_CONVERTERS:
                    converters.append(where)
    public = [m["public"] for m in per_module.values()]
    outside = {k: m["public"] for k, m in per_module.items() if not m["init"]}
    largest = max(outside, key=outside.get) if outside else None
    return {
        "package": str(package),
        "public_names": sum(public),
        "public_names_outside_init": sum(outside.values()),
        "public_names_studies": sum(m["public"] for m in per_module.values() if m["studies"]),
        "max_public_names_per_module": outside[largest] if largest else 0,
        "largest_module": largest,
        f"modules_over_{PER_MODULE_TARGET}": sum(v > PER_MODULE_TARGET for v in outside.values()),
        "lines_package": lines_total,
        "lines_studies": lines_studies,
        "metrics_imports_from_parsers": len(parsers_imports),
        "system_table_functions": len(system_tables),
        "verdict_functions": len(verdict_functions),
        "json_converters": len(converters),
        "where": {"metrics_imports_from_parsers": parsers_imports, "system_table_functions": system_tables,
                  "verdict_functions": verdict_functions, "json_converters": converters},
        "modules": per_module,
    }


COUNTS = ("public_names", "public_names_outside_init", "public_names_studies", "max_public_names_per_module",
          f"modules_over_{PER_MODULE_TARGET}", "lines_package", "lines_studies", "metrics_imports_from_parsers",
          "system_table_functions", "verdict_functions", "json_converters")
"""The counts (each one a number that later work should only lower)."""


def render(m: dict, modules: bool = False) -> str:
    width = max(map(len, COUNTS))
    out = [f"{'count':<{width}}  value"]
    for k in COUNTS:
        extra = f"  ({m['largest_module']})" if k == "max_public_names_per_module" else ""
        out.append(f"{k:<{width}}  {m[k]:>6}{extra}")
    for k, places in m["where"].items():
        out.append(f"\n{k}: " + (", ".join(places) if places else "none"))
    if modules:
        mw = max(map(len, m["modules"]))
        out.append(f"\n{'module':<{mw}}  public  __all__  defined  lines")
        for name, row in sorted(m["modules"].items(), key=lambda kv: -kv[1]["public"]):
            out.append(f"{name:<{mw}}  {row['public']:>6}  {'yes' if row['has_all'] else '-':>7}  "
                       f"{row['defined_public']:>7}  {row['lines']:>5}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--package", default=str(PACKAGE), help="the package folder (default: this checkout's)")
    ap.add_argument("--json", action="store_true", help="print JSON")
    ap.add_argument("--modules", action="store_true", help="also list every module's counts")
    args = ap.parse_args(argv)
    m = measure(args.package)
    if args.json:
        if not args.modules:
            m = {k: v for k, v in m.items() if k != "modules"}
        print(json.dumps(m, indent=2))
    else:
        print(render(m, modules=args.modules))
    return 0


if __name__ == "__main__":
    sys.exit(main())
