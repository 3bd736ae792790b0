"""``syneval-nb fit``: fit the ridge metric (:func:`syneval_nb.metrics.learned.fit_ridge`) on your own human scores
and write the model file that ``syneval-nb score -m FILE`` applies."""
from __future__ import annotations

import argparse
import sys
from types import SimpleNamespace

import numpy as np
import pandas as pd
from syneval_nb.app.score import read_documents, read_human_scores
from syneval_nb.evaluate import ScoreInputError, load_files
from syneval_nb.metrics import learned, registry
from syneval_nb.parsers.stanford import ParserSetupError
from syneval_nb.textio import InputEncodingError

__all__ = []  # a command's module: `syneval-nb` (app.cli) is its face


def _argparser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="syneval-nb fit",
        description="Fit a learned metric to your human scores: a ridge regression (standardized features, alpha "
                    "by cross-validation, grouped by document with --documents, else by segment) on the metrics "
                    "of -m and the kit's length model, written to -o; score new systems with it by "
                    "syneval-nb score -m MODEL. Its signature names the features, alpha and the training data.",
        epilog="example:\n  syneval-nb fit -r ref.txt -i sysA.txt sysB.txt --human-scores mqm.tsv -o ridge.joblib\n"
               "  syneval-nb score -r ref.txt -i sysC.txt -m chrf,ridge.joblib",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-r", "--refs", nargs="+", required=True, metavar="FILE", help="reference files (line-aligned)")
    ap.add_argument("-i", "--input", nargs="+", required=True, metavar="FILE", help="system output files")
    ap.add_argument("--human-scores", required=True, metavar="FILE",
                    help="segment human scores (higher is better): a TSV with columns system, seg_id (0-based), "
                         "score, or a LP.NAME.seg.score file; unscored segments are left out")
    ap.add_argument("-o", "--output", required=True, metavar="MODEL", help="the model file to write (joblib)")
    ap.add_argument("-m", "--metrics", default=",".join(learned.RIDGE_FEATURES),
                    help="comma-separated feature metrics (default: " + ",".join(learned.RIDGE_FEATURES) + ")")
    ap.add_argument("--names", default=None, help="comma-separated system names (default: the file stems)")
    ap.add_argument("--documents", default=None, metavar="FILE",
                    help="DOMAIN DOCNAME per segment: cross-validation folds keep each document whole")
    ap.add_argument("--training", default=None, help="what the training data are, for the signature (default: "
                    "the human-scores file name)")
    ap.add_argument("--parses", default=None, metavar="DIR", help="read ready parses: DIR/<file name>.ptb")
    ap.add_argument("--workers", type=int, default=1, help="parser processes (default 1)")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--cache", default=None, metavar="PATH", help="parse cache file (default: the kit's cache)")
    g.add_argument("--no-cache", action="store_true", help="parse everything again and store nothing")
    ap.add_argument("-q", "--quiet", action="store_true", help="no progress bars")
    return ap


def cli(argv: list[str] | None = None) -> int:
    """``syneval-nb fit`` (see :func:`_argparser`). Returns 0, or 2 with one line naming the problem."""
    args = _argparser().parse_args(argv)
    try:
        metrics = [registry.get(s.strip()) for s in args.metrics.split(",") if s.strip()]
        need = {i for m in metrics for i in m.inputs} - {"text"}
        names = [s.strip() for s in args.names.split(",")] if args.names else None
        corpora = load_files(args.refs, args.input, names=names, parses_dir=args.parses, need=need,
                             workers=args.workers, cache=None if args.no_cache else (args.cache or True),
                             progress=not args.quiet)
        n = len(next(iter(corpora.values())))
        ns = SimpleNamespace(human_scores=args.human_scores, documents=args.documents, mtme=None, lp=None,
                             input=args.input)
        human, docs = read_human_scores(ns, list(corpora), n), read_documents(ns, n)
        knots = learned.ridge_knots(corpora.values())  # one length model over every system's lines
        frame = pd.concat([learned.ridge_frame(c, metrics, knots=knots).assign(human=human[s],
                                                                               group=docs or np.arange(n))
                           for s, c in corpora.items()], ignore_index=True)
        frame.attrs["length_knots"] = knots
        model = learned.fit_ridge(frame, "human", metrics, groups=frame["group"],
                                  training=args.training or str(args.human_scores))
        model.save(args.output)
    except (ScoreInputError, InputEncodingError, ValueError, ParserSetupError) as e:
        print(f"syneval-nb fit: error: {str(e).splitlines()[0]}", file=sys.stderr)
        return 2
    print(f"syneval-nb fit: wrote {args.output}: {model.signature()}", file=sys.stderr)
    return 0
