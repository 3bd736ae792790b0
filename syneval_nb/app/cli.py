"""The ``syneval-nb`` command.

Subcommands dispatch to ``<module>.cli(argv) -> int`` so that each module owns its own options:

- ``syneval-nb run``    execute the notebooks headless into ``reports/`` (:mod:`syneval_nb.app.runner`)
- ``syneval-nb parse``  parse raw sentences into PTB trees, cached (:mod:`syneval_nb.app.parse`)
- ``syneval-nb rst``    RST-parse texts with the Feng-Hirst parser, cached (:mod:`syneval_nb.app.rst`)
- ``syneval-nb score``  score systems' plain-text output with any metric, with intervals (:mod:`syneval_nb.app.score`)
- ``syneval-nb report`` the "evaluate your system" report (notebook 09) as HTML (:mod:`syneval_nb.app.report`)
- ``syneval-nb fit``    fit the ridge metric to your human scores, for ``score -m MODEL`` (:mod:`syneval_nb.app.fit`)
"""
from __future__ import annotations

import importlib
import sys
from syneval_nb import __version__

SUBCOMMANDS = {
    "run": ("syneval_nb.app.runner", "execute every notebook headless with papermill into reports/"),
    "parse": ("syneval_nb.app.parse", "parse a text file (one sentence per line) into PTB trees"),
    "rst": ("syneval_nb.app.rst", "RST-parse a text file (one text per line) into .jsonl discourse trees"),
    "score": ("syneval_nb.app.score", "score system outputs against references (any metric, 95% intervals, tests)"),
    "report": ("syneval_nb.app.report", "write the HTML report evaluating your systems (notebook 09)"),
    "fit": ("syneval_nb.app.fit", "fit a learned metric (ridge) to your human scores, for score -m MODEL"),
}


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
    module = importlib.import_module(SUBCOMMANDS[cmd][0])
    return int(module.cli(argv[1:]) or 0)


if __name__ == "__main__":
    sys.exit(main())
