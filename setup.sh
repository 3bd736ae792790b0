#!/usr/bin/env bash
# One-command set-up for syneval-nb (the README's set-up command is `bash setup.sh`).
# - creates .venv with Python 3.11 (override with PYTHON=/path/to/python3.11),
# - installs every dependency at the exact versions of requirements.lock (PyPI only, no model hub),
# - installs syneval_nb itself in editable mode with its `syneval-nb` command, compiling its optional speed-ups
#   (Cython, pinned in pyproject.toml's build requirements; needs a C compiler, else the kit runs pure Python),
#   and its bytecode,
# - registers the Jupyter kernel "syneval-nb" inside .venv, which papermill uses,
# - checks that Java (needed by the Stanford and Feng-Hirst parsers) is there,
# - as root with apt-get, installs Debian's chromium for the two page tests when no Chromium is found.
set -euo pipefail
cd "$(dirname "$0")"
PY="${PYTHON:-python3.11}"
if ! command -v "$PY" >/dev/null 2>&1; then
    echo "setup.sh: $PY not found; install Python 3.11 or set PYTHON=/path/to/python3.11" >&2
    exit 1
fi
if [ ! -x .venv/bin/python ]; then
    "$PY" -m venv .venv
fi
.venv/bin/python -m pip install --quiet -r requirements.lock
.venv/bin/python -m pip install --quiet --no-deps -e .
# the package's bytecode, written once here: every process of the kit (a notebook kernel, a command) then reads it
# instead of compiling the modules it imports at each start (as it would where PYTHONDONTWRITEBYTECODE is set)
.venv/bin/python -m compileall -q syneval_nb >/dev/null
.venv/bin/python -c "from syneval_nb._accel import STATUS; print('setup.sh: syneval_nb hot loops:', STATUS)"
.venv/bin/python -m ipykernel install --sys-prefix --name syneval-nb --display-name "Python 3 (syneval-nb)" >/dev/null
if command -v java >/dev/null 2>&1; then
    echo "setup.sh: Java found: $(java -version 2>&1 | head -n 1)"
else
    echo "setup.sh: WARNING: java not found. The Stanford and Feng-Hirst parsers need Java 8 or newer" >&2
    echo "          (Debian/Ubuntu: sudo apt-get install default-jre-headless). Shipped parses still work." >&2
fi
# the browser of the two page tests (tests/test_index_page.py, tests/test_offline_html.py): Debian's chromium,
# installed when none is found and this runs as root with apt-get (CI, containers); else those tests are skipped
if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1 \
        && ! command -v google-chrome >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && [ "${SYNEVAL_NB_NO_BROWSER:-0}" != 1 ]; then
        echo "setup.sh: installing Debian's chromium for the page tests (SYNEVAL_NB_NO_BROWSER=1 skips this)"
        { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } >/dev/null 2>&1 \
            || echo "setup.sh: WARNING: apt-get could not install chromium; the two page tests will be skipped" >&2
    else
        echo "setup.sh: no Chromium found: the two page tests will be skipped (Debian/Ubuntu: apt-get install chromium)"
    fi
fi
echo "setup.sh: done. Run the notebooks with .venv/bin/syneval-nb run and the tests with .venv/bin/python -m pytest"
