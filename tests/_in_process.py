"""A kit command run in the test process, as a test that only reads its output and exit code needs it: the same
:class:`subprocess.CompletedProcess` a ``python -m syneval_nb.app.cli ...`` subprocess gives, without a new
interpreter's imports (issue 38). Output is captured at the file descriptors (pytest's ``capfd``), warnings are
filtered as in a plain ``python -m`` process and printed to stderr as it prints them. Tests whose point is the
process itself (signals, process groups, what a fresh interpreter imports) keep a real subprocess."""
from __future__ import annotations

import subprocess
import sys
import warnings

from syneval_nb.app import cli

# the warning filters of a plain `python -m` process (Python's defaults)
DEFAULT_FILTERS = (("ignore", ResourceWarning, ""), ("ignore", ImportWarning, ""),
                   ("ignore", PendingDeprecationWarning, ""), ("ignore", DeprecationWarning, ""),
                   ("default", DeprecationWarning, "__main__"))


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))


def run_command(capfd, argv: list[str]) -> subprocess.CompletedProcess:
    """``syneval-nb ARGV`` through :func:`syneval_nb.app.cli.main`: its exit code (argparse's ``SystemExit``
    included), stdout and stderr."""
    capfd.readouterr()  # what the test printed before is not the command's
    with warnings.catch_warnings():
        warnings.resetwarnings()
        for action, category, module in DEFAULT_FILTERS:
            warnings.filterwarnings(action, category=category, module=module)
        warnings.showwarning = _show_warning
        try:
            rc = cli.main(argv)
        except SystemExit as e:  # argparse's errors
            rc = e.code if isinstance(e.code, int) else 1
    out, err = capfd.readouterr()
    return subprocess.CompletedProcess([sys.executable, "-m", "syneval_nb.app.cli", *argv], rc, out, err)
