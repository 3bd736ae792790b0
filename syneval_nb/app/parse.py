"""``syneval-nb parse``: parse a text file (one segment per line) into PTB trees or spaCy dependencies, cached."""
from __future__ import annotations

import argparse
import signal
import sys
import warnings
from typing import Any
from syneval_nb.app.files import OutputPathError, check_output_path, interrupted_message, read_input_lines, write_output
from syneval_nb.parsers.cache import CacheError, ParseCache, default_cache_path, read_only_note
from syneval_nb.parsers.frontend import parse_strings, resolve_split
from syneval_nb.parsers.spacy import spacy_backend_key
from syneval_nb.parsers.sentences import SPLITS, split_sentences
from syneval_nb.parsers.stanford import (DEFAULT_MAX_LENGTH, DEFAULT_MEMORY, FAILED_PARSE, ParserSetupError,
                                         ParseWarning, StanfordParser)
from syneval_nb.textio import InputEncodingError


__all__ = []  # a command's module: `syneval-nb` (app.cli) is its face


def _build_argparser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="syneval-nb parse",
        description="Parse a text file (one segment per line) into one tree per line, aligned with the input. "
                    "Stanford: one-line PTB trees, '(())' for a line without a parse (an empty line stays "
                    "empty); by default each sentence of a line is parsed on its own and the line's tree joins "
                    "them under one ROOT (--split lines: the line as one sentence). spaCy: one JSON object per "
                    "line ({words, tags, heads, deps}), 'null' for none.")
    ap.add_argument("input", help="UTF-8 text file, one segment per line")
    ap.add_argument("-o", "--output", required=True, help="output file (e.g. INPUT.txt.ptb)")
    ap.add_argument("--backend", choices=["stanford", "spacy"], default="stanford")
    ap.add_argument("--workers", type=int, default=1, help="parallel parser processes (default 1)")
    ap.add_argument("--max-length", type=int, default=None,
                    help=f"Stanford: longest sentence in tokens (default {DEFAULT_MAX_LENGTH}; README: Parsing)")
    ap.add_argument("--split", choices=SPLITS, default=None,
                    help="Stanford: 'sentences' (default) parses each sentence of a line on its own and joins the "
                         "trees; 'lines' parses each line as one sentence (the shipped parses)")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds allowed per sentence (default 60)")
    ap.add_argument("--memory", default=None, help=f"Stanford: Java heap (-Xmx) of each worker JVM (default "
                    f"{DEFAULT_MEMORY}); raise it with --max-length (README: Parsing)")
    group = ap.add_mutually_exclusive_group()
    group.add_argument("--cache", default=None, help="parse cache file (default ~/.cache/syneval-nb/parses.sqlite)")
    group.add_argument("--no-cache", action="store_true", help="do not read or write the parse cache")
    ap.add_argument("--retry-failed", action="store_true", help="parse again the sentences stored as failures")
    ap.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    ap.add_argument("--scheduler", default=None, metavar="tcp://HOST:PORT",
                    help="parse on a Dask cluster (its workers need the same install, bash setup.sh, and Java); the cache "
                         "stays here (README: More than one machine)")
    return ap


def cli(argv: list[str]) -> int:
    """``syneval-nb parse INPUT.txt -o OUTPUT.ptb [--backend stanford] [--workers 2] [--cache PATH | --no-cache]
    [--max-length 200] [--split sentences|lines] [--timeout 60] [--memory 2g]``. Returns 0, 1 if some sentences have no parse, 2 on errors
    (one line naming the problem; input and output paths are checked before any work), 130 when interrupted
    (Ctrl-C: the results so far stay in the cache, and the same command resumes)."""
    args = _build_argparser().parse_args(argv)

    def fail(message: object) -> int:
        print(f"syneval-nb parse: {message}", file=sys.stderr)
        return 2

    if args.workers < 1:
        return fail(f"--workers must be >= 1, got {args.workers}")
    if args.backend == "spacy":
        given = [o for o, v in (("--max-length", args.max_length), ("--memory", args.memory),
                                ("--split", args.split)) if v is not None]
        if given:
            return fail(f"{', '.join(given)}: options of the Stanford parser; spaCy parses each line as one sentence "
                        "whatever its length (give none of them with --backend spacy)")
    try:
        sentences = read_input_lines(args.input)
        out = check_output_path(args.output, args.input)
    except (OSError, InputEncodingError, OutputPathError) as e:
        return fail(e)
    cache: Any = None if args.no_cache else (args.cache if args.cache else True)
    cache_path = None if args.no_cache else (args.cache or default_cache_path())
    if args.cache and not args.no_cache:
        try:  # a folder, a damaged or foreign file: refused now; a read-only one: used, with one note (as score)
            with ParseCache(args.cache) as c:
                note = read_only_note(c)
        except CacheError as e:
            return fail(e)
        if note:
            print(f"syneval-nb parse: note: {note}", file=sys.stderr)
    key = spacy_backend_key() if args.backend == "spacy" else None
    parser = None
    try:
        try:
            if args.backend == "stanford":
                parser = StanfordParser(workers=args.workers, timeout=args.timeout,
                                        max_length=DEFAULT_MAX_LENGTH if args.max_length is None else args.max_length,
                                        memory=DEFAULT_MEMORY if args.memory is None else args.memory)
                key = parser.backend_key
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ParseWarning)
                res = parse_strings(sentences, backend=args.backend, workers=args.workers, cache=cache,
                                    parser=parser, retry_failed=args.retry_failed, progress=not args.quiet,
                                    warn=False, scheduler=args.scheduler, split=args.split)
        except (ParserSetupError, ValueError, RuntimeError) as e:
            return fail(e)
        finally:
            if parser is not None:
                parser.close()
        none = FAILED_PARSE if args.backend == "stanford" else "null"
        out_lines = ["" if not s.strip() else (r if r is not None else none) for s, r in zip(sentences, res)]
        try:
            write_output(out, lambda tmp: tmp.write_text("".join(line + "\n" for line in out_lines),
                                                         encoding="utf-8"))
        except OSError as e:
            return fail(f"cannot write {out}: {e.strerror or e} (the parses are in the cache: fix the output path "
                        "and run the same command again)")
    except KeyboardInterrupt:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not turn the message into a traceback
        units = ([x for s in sentences for x in split_sentences(s)]
                 if resolve_split(args.backend, args.split) == "sentences" else sentences)  # what the cache holds
        print(f"syneval-nb parse: {interrupted_message(cache_path, key, units) if key else 'interrupted'}",
              file=sys.stderr)
        return 130
    print(res.report.summary(), file=sys.stderr)
    print(f"wrote {len(out_lines)} lines to {out}", file=sys.stderr)
    return 1 if res.report.failures else 0
