"""Reports people read: ``syneval-nb report`` (notebook 09 on your files, as HTML) and the index page of
``syneval-nb run`` (:func:`index_page`).

``syneval-nb report -r ref.A.txt [ref.B.txt ...] -i sysA.txt [sysB.txt ...] [--cache PATH | --no-cache] [-o DIR]``
runs
``notebooks/09_evaluate_your_system.ipynb`` (in an installed wheel: its copy in the package data) with papermill (:func:`syneval_nb.app.runner.run_notebook`) and writes
``DIR/09_evaluate_your_system.html`` (plus the executed notebook and its results JSON). With no files it reports on
the embedded example (``data/examples/your_system``).
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any, Sequence
from syneval_nb.app.index_page import last_line, chapter_card, first_image, index_page, notebook_question  # noqa: F401
from syneval_nb.app.runner import import_papermill_for_the_command_line, require_notebook_modules, run_notebook
from syneval_nb.app.score import ScoreInputError, load_files
from syneval_nb.data import MtmeFormatError, read_mtme_documents, read_mtme_scores
from syneval_nb.metrics import registry as M
from syneval_nb.parsers.cache import CacheError, ParseCache, read_only_note
from syneval_nb.paths import NOTEBOOK_DIR, REPORT_NOTEBOOK_NAME, KitFileMissing, report_notebook
from syneval_nb.evaluate import alias_note, file_aliases
from syneval_nb.studies.evaluate_your_system import read_human
from syneval_nb.textio import InputEncodingError


__all__ = []  # a command's module: `syneval-nb` (app.cli) is its face

try:  # the checkout's notebooks/09, else the installed package's copy (syneval_nb.paths.report_notebook)
    NOTEBOOK = report_notebook()
except KitFileMissing:
    NOTEBOOK = NOTEBOOK_DIR / REPORT_NOTEBOOK_NAME  # cli() says what is missing


def _abs(paths: Sequence[str] | None) -> list[str] | None:
    return None if not paths else [str(Path(p).resolve()) for p in paths]


def _human_tsv(path: str, out: Path) -> str:
    """The human scores as the notebook reads them (TSV ``system, seg_id, score``): a TSV as it is, a ``.score``
    file of the metrics-task layout converted into ``<out>/human_scores.tsv`` (``None`` scores left out)."""
    p = Path(path)
    if not p.name.endswith(".score"):
        return str(p.resolve())
    if p.name.endswith(".sys.score"):
        raise ScoreInputError(f"human scores {path} is a system-level score file (.sys.score); only segment-level "
                              f"human scores are read: a LP.NAME.seg.score file or a TSV with columns system, seg_id, "
                              f"score (the report ranks the systems by their mean segment score)")
    rows = ["system\tseg_id\tscore"]
    for system, values in read_mtme_scores(p).items():
        rows += [f"{system}\t{i}\t{v!r}" for i, v in enumerate(values) if v is not None]
    out.mkdir(parents=True, exist_ok=True)
    tsv = out / "human_scores.tsv"
    tsv.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return str(tsv.resolve())


def _check_baseline(name: str, systems: list[str], files: Sequence[str]) -> None:
    """``--baseline`` names a system by its name, file name or file stem (as ``syneval-nb score``)."""
    if name not in systems and name not in file_aliases(systems, files):
        raise ScoreInputError(f"--baseline {name!r} is not one of the systems {systems} (nor one of their files)")


DESCRIPTION = """\
Write the "evaluate your system" report: the kit's notebook 09 run (with papermill) on your
files, as DIR/09_evaluate_your_system.html, beside the executed notebook and its results
JSON. With no -r and -i it reports on the embedded example (three made-up systems and a
made-up rating): what the report shows for your files, not findings. The parses the
metrics need are made first, with progress on the console, into the parse cache the
notebook reads."""

EPILOG = """\
examples:
  syneval-nb report -o example-report
  syneval-nb report -r ref.A.txt -i sysA.txt sysB.txt --human-scores human.tsv -o my-report"""


def cli(argv: list[str] | None = None) -> int:
    """``syneval-nb report``: notebook 09 on your files (or the embedded example), as HTML."""
    require_notebook_modules()  # without the extra [report]: one line naming it, before anything else
    ap = argparse.ArgumentParser(prog="syneval-nb report", description=DESCRIPTION, epilog=EPILOG,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-r", "--refs", nargs="+", default=None, metavar="FILE", help="reference files")
    ap.add_argument("-i", "--input", nargs="+", default=None, metavar="FILE", help="system output files")
    ap.add_argument("--names", default=None, help="comma-separated system names (default: the file stems, e.g. sysA for sysA.txt)")
    ap.add_argument("--human-scores", default=None, metavar="TSV",
                    help="TSV with columns system, seg_id, score, or a LP.NAME.seg.score file of the WMT "
                         "metrics-task layout (system<TAB>score lines, each system's segments in order)")
    ap.add_argument("-m", "--metrics", default=",".join(M.DEFAULT_METRICS),
                    help="comma-separated metric names (default: " + ",".join(M.DEFAULT_METRICS)
                         + "; add dr,dr-lex for the discourse metrics)")
    ap.add_argument("--syntactic-metric", default="STM-4", metavar="NAME",
                    help="the metric whose disagreements with --lexical-metric are shown (default STM-4; any "
                         "registry metric; when it is not among -m, the first scored syntactic metric)")
    ap.add_argument("--lexical-metric", default="BLEU", metavar="NAME",
                    help="the lexical side of the disagreements and of the 'beats' claims beside chrF (default BLEU)")
    ap.add_argument("--documents", default=None, metavar="FILE",
                    help="resample whole documents: a .docs file (DOMAIN DOCNAME per line, one line per segment)")
    ap.add_argument("--parses", default=None, metavar="DIR", help="ready parses (<file name>.ptb / .jsonl)")
    ap.add_argument("--baseline", default=None, help="baseline system name (default: the first)")
    ap.add_argument("--sample", type=int, default=None, help="keep this many segments (default: all)")
    ap.add_argument("--seed", type=int, default=0,
                    help="seed of the bootstrap resamples and of --sample (default 0)")
    ap.add_argument("--workers", type=int, default=1, help="parser processes")
    ap.add_argument("--max-length", type=int, default=None, metavar="N",
                    help="longest sentence the Stanford parser parses, in tokens (default 200; README: Parsing)")
    ap.add_argument("--split", choices=("sentences", "lines"), default=None,
                    help="Stanford parses: each sentence of a line on its own, trees joined (default), or each line "
                         "as one sentence (the shipped parses)")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--cache", default=None, metavar="PATH", help="parse cache file (default: the kit's cache)")
    g.add_argument("--no-cache", action="store_true", help="parse everything again and store nothing")
    ap.add_argument("-o", "--output", default="reports/evaluate_your_system", metavar="DIR",
                    help="report folder (default: reports/evaluate_your_system)")
    ap.add_argument("-q", "--quiet", action="store_true", help="no progress bars (parsing, notebook cells)")
    args = ap.parse_args(argv)

    def error(msg: str) -> int:
        print(f"syneval-nb report: error: {msg}", file=sys.stderr)
        return 2

    if bool(args.refs) != bool(args.input):
        return error("give both -r (references) and -i (systems), or neither for the embedded example")
    specs = [s.strip() for s in args.metrics.split(",") if s.strip()]
    names = [s.strip() for s in args.names.split(",")] if args.names else None
    if Path(args.output).exists() and not Path(args.output).is_dir():
        return error(f"-o {args.output} is a file; the report is a folder (give a folder name, e.g. "
                     f"{Path(args.output).with_suffix('')}-report)")
    for parent in Path(args.output).absolute().parents:
        if parent.exists() and not parent.is_dir():
            return error(f"-o {args.output}: {parent} is a file, so the report folder cannot be made there")
    existing = next(p for p in [Path(args.output).absolute(), *Path(args.output).absolute().parents] if p.exists())
    if not os.access(existing, os.W_OK | os.X_OK):
        return error(f"-o {args.output}: {existing} cannot be written, so the report cannot be made there")
    if args.sample is not None and args.sample < 1:
        return error(f"--sample {args.sample}: give at least 1 segment (or leave it out for all)")
    if args.workers < 1:
        return error(f"--workers must be >= 1, got {args.workers}")
    if args.max_length is not None and args.max_length < 1:
        return error(f"--max-length must be >= 1, got {args.max_length}")
    cache: Any = None if args.no_cache else (str(Path(args.cache).resolve()) if args.cache else True)
    try:
        objs = [M.get(s) for s in specs]
        M.get(args.syntactic_metric), M.get(args.lexical_metric)
        if args.documents and not Path(args.documents).is_file():
            raise ScoreInputError(f"--documents {args.documents}: no such file")
        if isinstance(cache, str):
            with ParseCache(cache) as c:  # a folder, a damaged or foreign file: refused before papermill
                note = read_only_note(c)
            if note:
                print(f"syneval-nb report: note: {note}", file=sys.stderr)
        if args.human_scores and not Path(args.human_scores).is_file():
            raise ScoreInputError(f"human scores {args.human_scores}: no such file")
        human_tsv = _human_tsv(args.human_scores, Path(args.output)) if args.human_scores else None
        if args.input:
            # syneval-nb score's checks, with the given parses against their texts, before papermill
            corpora = load_files(args.refs, args.input, names=names, parses_dir=args.parses,
                                 need={i for m in objs for i in m.inputs} - {"text"})
            n_seg = len(next(iter(corpora.values())))
            if human_tsv:  # and the human scores against the files, before any parsing
                h = read_human(human_tsv, list(corpora), n_seg, args.input)
                for note in (h.attrs.get("left_out_note"), alias_note(h.attrs["aliases_used"])):
                    if note:
                        print(f"syneval-nb report: note: {note}", file=sys.stderr)
            if args.documents:
                _, docs = read_mtme_documents(args.documents)
                if len(docs) != n_seg:
                    raise ScoreInputError(f"--documents {args.documents} has {len(docs)} lines, the systems have "
                                          f"{n_seg} segments")
            if args.baseline:
                _check_baseline(args.baseline, list(corpora), args.input)
    except (M.UnknownMetricError, ScoreInputError, InputEncodingError, MtmeFormatError, CacheError) as e:
        return error(str(e))
    except ValueError as e:
        return error(str(e).splitlines()[0])
    if args.input and not args.parses and cache is not None:
        # parse here, with progress on the console, into the cache the notebook then reads: a long parse shows
        # its progress instead of papermill's cell counter (with --no-cache the notebook parses, silently)
        need = {i for m in objs for i in m.inputs} - {"text"}
        if need:
            stanford = {"max_length": args.max_length, "split": args.split} if "ptb" in need else {}
            try:
                M.prepare(list(corpora.values()), tuple(need), workers=args.workers, cache=cache, progress=not args.quiet,
                          **stanford)
            except Exception as e:  # noqa: BLE001 - no Java, a broken cache: said before papermill starts
                return error(f"parsing failed: {type(e).__name__}: {(str(e).strip().splitlines() or [''])[0]}")
    params: dict[str, Any] = {"hyp_files": _abs(args.input), "ref_files": _abs(args.refs), "names": names,
                              "human_scores": human_tsv, "documents": _abs([args.documents])[0] if args.documents else None,
                              "syntactic_metric": args.syntactic_metric, "lexical_metric": args.lexical_metric,
                              "max_length": args.max_length, "split": args.split,
                              "metrics": specs, "parses_dir": str(Path(args.parses).resolve()) if args.parses else None,
                              "baseline": args.baseline, "sample": args.sample, "seed": args.seed,
                              "workers": args.workers, "cache": cache}

    if not NOTEBOOK.is_file():
        try:
            report_notebook()
        except KitFileMissing as e:
            return error(str(e))
    out = Path(args.output)
    import_papermill_for_the_command_line()
    try:
        result = run_notebook(NOTEBOOK, out, params, progress_bar=not args.quiet)
    except Exception as exc:  # noqa: BLE001 - papermill's error names the failing cell
        # a cell's error: its last line (``Name: message``); anything else (the HTML export, the kernel): the
        # exception's first line, which says what was missing
        why = last_line(str(exc)) if hasattr(exc, "ename") else \
            f"{type(exc).__name__}: {(str(exc).strip().splitlines() or [''])[0]}"
        print(f"syneval-nb report: the report failed: {why} (executed notebook kept in {out})",
              file=sys.stderr)
        return 1
    page = out / f"{NOTEBOOK.stem}.html"
    for claim, v in (result.get("verdicts") or {}).items():
        view = v.get("human_view")
        print(f"{v.get('verdict')}: {claim}" + (f" (human scores: {view})" if view else ""))
    print(f"report: {page.resolve()}")
    return 0


if __name__ == "__main__":
    sys.exit(cli())
