"""The package's layers (DEVELOPERS.md, "Layout"): no import cycles, no upward imports, kit imports at the top.

Read from the source with ``ast`` (nothing is imported), counting imports inside functions too. The former flat
module names that now forward to their new homes (``syneval_nb/trees/heads.py``, ``parsing.py``, ...) are not part of any
layer and are left out until the restructuring's last step removes them.
"""
from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "syneval_nb"

# lowest first; a module may import from its own layer and the layers before it
LAYERS = [
    ("base", ("syneval_nb", "syneval_nb.paths", "syneval_nb.textio", "syneval_nb._accel", "syneval_nb._speedups")),
    ("stats", ("syneval_nb.stats",)),
    ("trees", ("syneval_nb.trees",)),
    ("parsers", ("syneval_nb.parsers",)),
    ("data", ("syneval_nb.data",)),
    ("corpus", ("syneval_nb.corpus",)),
    ("metrics", ("syneval_nb.metrics",)),
    ("evaluate", ("syneval_nb.evaluate",)),
    ("studies", ("syneval_nb.studies",)),
    ("app", ("syneval_nb.app", "syneval_nb.__main__")),
]
# the imports allowed inside a function: the optional Dask back end, the compiled extension (optional too), and
# format_p on the index page (syneval_nb.stats brings scipy.stats, ~1 s, which `syneval-nb run`'s refusals skip)
LAZY_ALLOWED = {("syneval_nb.parsers.frontend", "syneval_nb.parsers.dask"), ("syneval_nb._accel", "syneval_nb._speedups"),
                ("syneval_nb.app.index_page", "syneval_nb.stats.verdicts")}


def _modules() -> dict[str, Path]:
    out = {}
    for p in PKG.rglob("*.py"):
        parts = p.relative_to(PKG.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = p
    return out


MODULES = _modules()
FORWARDERS = {m for m, p in MODULES.items() if "forwards there" in p.read_text() or "forwards every former name"
              in p.read_text()}


def _layer(module: str) -> int:
    best = None
    for k, (_, prefixes) in enumerate(LAYERS):
        for pre in prefixes:
            if module == pre or module.startswith(pre + "."):
                if best is None or len(pre) > best[1]:
                    best = (k, len(pre))
    assert best is not None, f"{module} is in no layer: add it to LAYERS and to DEVELOPERS.md"
    return best[0]


def _imports(module: str) -> list[tuple[str, bool, int]]:
    """(imported kit module, inside a function?, line) for every kit import of ``module``."""
    path = MODULES[module]
    tree = ast.parse(path.read_text())
    pkg = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    top = {id(n) for n in tree.body}
    out = []
    for node in ast.walk(tree):
        targets = []
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg.split(".")[: len(pkg.split(".")) - node.level + 1]
                mod = ".".join(base) + ("." + node.module if node.module else "")
            else:
                mod = node.module or ""
            if not (mod == "syneval_nb" or mod.startswith("syneval_nb.")):
                continue
            subs = [f"{mod}.{a.name}" for a in node.names if f"{mod}.{a.name}" in MODULES or a.name == "_speedups"]
            targets = subs if len(subs) == len(node.names) else subs + [mod]
        elif isinstance(node, ast.Import):
            targets = [a.name for a in node.names if a.name.startswith("syneval_nb")]
        for t in targets:
            if t != module:
                out.append((t, id(node) not in top, node.lineno))
    return out


def test_no_import_cycles_counting_imports_inside_functions():
    graph = {m: {t for t, _, _ in _imports(m) if t in MODULES and t not in FORWARDERS}
             for m in MODULES if m not in FORWARDERS}
    index, low, stack, on, cycles, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    assert cycles == []


def test_no_upward_imports():
    upward = [f"{m}:{line} imports {t}" for m in MODULES if m not in FORWARDERS
              for t, _, line in _imports(m) if t not in FORWARDERS and _layer(t) > _layer(m)]
    assert upward == []


def test_metrics_import_nothing_from_parsers():
    """Issue 34: a metric sees trees and text; parsing happens where a corpus is prepared (``syneval_nb.corpus``),
    so no module of ``metrics/`` imports from ``parsers/``, at the top or inside a function."""
    into_parsers = [f"{m}:{line} imports {t}" for m in MODULES if _layer(m) == _index("metrics")
                    for t, _, line in _imports(m) if _layer(t) == _index("parsers")]
    assert into_parsers == []


def _index(layer: str) -> int:
    return [name for name, _ in LAYERS].index(layer)


def test_kit_imports_stand_at_the_top():
    inside = [f"{m}:{line} imports {t}" for m in MODULES if m not in FORWARDERS
              for t, lazy, line in _imports(m) if lazy and (m, t) not in LAZY_ALLOWED]
    assert inside == []


FORMER_FLAT = ("cache", "cli", "cluster", "combine", "discourse", "heads", "hybrid", "kernels", "learned", "lexical",
               "parsing", "report", "rst_crf", "runner", "score", "stats_meta", "syntactic")


def test_the_former_flat_modules_are_gone():
    """Issue 20's last step: the forwarders of the former flat names are removed; every import names the new home."""
    assert FORWARDERS == set()
    assert [n for n in FORMER_FLAT if (PKG / f"{n}.py").exists()] == []


def _private_uses(module: str) -> list[str]:
    """Every private name (``_x``, not a dunder, not a private module such as ``_speedups``) that ``module`` takes
    from another kit module: ``from syneval_nb.x import _y`` and ``x._y`` on a kit module bound by an import."""
    path = MODULES[module]
    tree = ast.parse(path.read_text())
    pkg = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    private = lambda n: n.startswith("_") and not n.startswith("__")
    bound, out = {}, []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = pkg.split(".")[: len(pkg.split(".")) - node.level + 1] if node.level else []
            mod = ".".join(base) + ("." if base and node.module else "") + (node.module or "")
            if not (mod == "syneval_nb" or mod.startswith("syneval_nb.")) or mod == module:
                continue
            for a in node.names:
                if f"{mod}.{a.name}" in MODULES or a.name == "_speedups":
                    bound[a.asname or a.name] = f"{mod}.{a.name}"
                elif private(a.name):
                    out.append(f"{module}:{node.lineno} imports {mod}.{a.name}")
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("syneval_nb") and a.asname:
                    bound[a.asname] = a.name
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in bound
                and private(node.attr) and bound[node.value.id] != module):
            out.append(f"{module}:{node.lineno} uses {bound[node.value.id]}.{node.attr}")
    return out


def test_no_module_takes_another_modules_private_names():
    """Issue 34: a name that another module needs is a helper without the underscore (kept out of ``__all__`` where
    it is not for users); no module reaches into another's ``_`` names."""
    found = [x for m in sorted(MODULES) for x in _private_uses(m)]
    assert found == []
