"""One parse in any order (issue 38): ``syneval-nb score -m stm`` and later ``-m dr,dr-lex`` on the same cache.

    .venv/bin/python benchmarks/parse_any_order.py            # 12 de-en segments x 2 systems + refs A, B: 48 lines
    .venv/bin/python benchmarks/parse_any_order.py --n 24

Each step is the real command (:func:`syneval_nb.app.score.cli`, ``--n-bootstrap 0 -q --score-only``) in a fresh
Python process, timed from outside (so every step pays its own imports, model loading and JVM start-up), on files
of ``--n`` WMT21 de-en segments (seed ``--seed``) of the first two systems of
:data:`syneval_nb.data.WMT21_SYSTEMS`, with references A and B:

- ``empty``: ``-m dr,dr-lex`` from an empty cache;
- ``after-stm``: ``-m stm`` (timed on its own), then ``-m dr,dr-lex`` on the same cache (the time compared).

Each ``dr,dr-lex`` step runs ``--repeat`` times (``empty`` on a new empty cache each time, ``after-stm`` on a new
copy of the cache the ``stm`` step left) and the fastest run counts (the least disturbed by other work on the
machine); all runs are printed.

Each process counts the sentences it sends to a Stanford parser (at :meth:`StanfordParser.parse_stream`, which
every Stanford parse of the kit goes through). Prints the seconds, the counts, the ratio ``empty / after-stm``
(issue 38's target: at least 3x) and whether the DR/DR-lex scores are equal.
"""
from __future__ import annotations

import argparse
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def child(argv: list[str]) -> int:
    """One ``syneval-nb score`` run that reports the sentences sent to the Stanford parser on stderr."""
    from syneval_nb.app.score import cli
    from syneval_nb.parsers import stanford

    sent = [0]
    original = stanford.StanfordParser.parse_stream

    def parse_stream(self, items, on_result):
        sent[0] += len(items)
        return original(self, items, on_result)

    stanford.StanfordParser.parse_stream = parse_stream
    rc = cli(argv)
    print(f"stanford-sentences-parsed {sent[0]}", file=sys.stderr)
    return rc


def write_files(folder: Path, n: int, seed: int, data_dir=None) -> tuple[list[Path], list[Path]]:
    from syneval_nb.data import WMT21_SYSTEMS, dataset_dir, read_lines

    d = dataset_dir("wmt21-deen", data_dir)
    refs = {r: read_lines(d / f"newstest2021.de-en.ref.{r}.en") for r in ("A", "B")}
    hyps = {s: read_lines(d / f"system-outputs/newstest2021.de-en.hyp.{s}.en") for s in WMT21_SYSTEMS[:2]}
    ok = [i for i in range(len(refs["A"])) if all(x[i].strip() for x in [*refs.values(), *hyps.values()])]
    idx = sorted(random.Random(seed).sample(ok, min(n, len(ok))))
    out = []
    for name, lines in [*((f"ref.{r}.en", x) for r, x in refs.items()), *((f"{s}.en", x) for s, x in hyps.items())]:
        (folder / name).write_text("".join(lines[i] + "\n" for i in idx), encoding="utf-8")
        out.append(folder / name)
    return out[:2], out[2:]


def step(metrics: str, refs, hyps, cache: Path) -> tuple[float, int, str]:
    cmd = [sys.executable, __file__, "--child", "-r", *map(str, refs), "-i", *map(str, hyps), "-m", metrics,
           "--cache", str(cache), "--n-bootstrap", "0", "-q", "--score-only", "--width", "17"]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stderr}")
    n = int(proc.stderr.rsplit("stanford-sentences-parsed ", 1)[1].split()[0])
    return seconds, n, proc.stdout


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        return child(argv[1:])
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=12, help="segments (x 2 systems + 2 references = lines)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=3, help="runs of each dr,dr-lex step (the fastest counts)")
    ap.add_argument("--data-dir", default=None)
    args = ap.parse_args(argv)
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        refs, hyps = write_files(Path(tmp), args.n, args.seed, args.data_dir)
        lines = {ln for f in refs + hyps for ln in f.read_text(encoding="utf-8").splitlines()}
        print(f"{args.n} WMT21 de-en segments x 2 systems + 2 references = {4 * args.n} lines ({len(lines)} "
              f"distinct), seed {args.seed}, --workers 1; every step a fresh `syneval-nb score` process")
        stm = Path(tmp) / "stm.sqlite"
        s, n, _ = step("stm", refs, hyps, stm)
        print(f"after-stm: -m stm          {s:7.1f} s, {n:4d} sentences sent to the Stanford parser")
        for path in ("empty", "after-stm"):
            runs = []
            for k in range(args.repeat):
                cache = Path(tmp) / f"{path}-{k}.sqlite"
                for suffix in ("", "-wal") if path == "after-stm" else ():
                    if Path(f"{stm}{suffix}").exists():
                        shutil.copy(f"{stm}{suffix}", f"{cache}{suffix}")
                runs.append(step("dr,dr-lex", refs, hyps, cache))
                s, n, scores = runs[-1]
                print(f"{path + ':':10s} -m dr,dr-lex   {s:7.1f} s, {n:4d} sentences sent to the Stanford parser")
            if len({r[1:] for r in runs}) != 1:
                raise SystemExit(f"{path}: the runs differ in parses or scores")
            out[path] = min(runs)
    ratio = out["empty"][0] / out["after-stm"][0]
    print(f"fastest: empty {out['empty'][0]:.1f} s, after-stm {out['after-stm'][0]:.1f} s")
    print(f"ratio empty / after-stm: {ratio:.2f}x faster (issue 38's target: at least 3x)")
    same = out["empty"][2] == out["after-stm"][2]
    print(f"DR/DR-lex scores equal: {same} ({' '.join(out['empty'][2].split())})")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
