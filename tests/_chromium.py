"""Headless Chromium for the page tests: the browser found on this machine (``CHROMIUM``, None when there is none)
and :func:`probe`, which opens a page with a probe script appended, offline, and returns what the script wrote."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

CHROMIUM = next((shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None)


def probe(page: Path, script: str, probe_file: Path, profile: Path, *extra: str) -> dict:
    """Open ``page`` (with ``script`` inserted before ``</body>``, written to ``probe_file``) in headless Chromium
    with no network (a proxy that refuses every request and, as root, a network namespace of its own) and return
    the JSON the script wrote into ``<pre id="probe">``."""
    probe_file.write_text(page.read_text(encoding="utf-8").replace("</body>", script), encoding="utf-8")
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", *extra,
           "--proxy-server=127.0.0.1:9", "--proxy-bypass-list=<-loopback>",  # any request would fail
           f"--user-data-dir={profile}", "--virtual-time-budget=5000", "--dump-dom", probe_file.as_uri()]
    if shutil.which("unshare") and subprocess.run(["unshare", "-n", "true"], capture_output=True).returncode == 0:
        cmd = ["unshare", "-n", *cmd]  # no network at all (root)
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    m = re.search(r'<pre id="probe">(.*?)</pre>', out.stdout)
    assert m, out.stderr[-2000:]
    return json.loads(m.group(1).replace("&quot;", '"'))
