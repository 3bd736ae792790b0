"""``syneval-nb rst``: RST-parse a text file (one text per line) into ``.jsonl`` discourse trees, cached."""
from __future__ import annotations

import sys

from syneval_nb.app.files import OutputPathError, check_output_path, interrupted_message, read_input_lines, write_output
from syneval_nb.parsers.cache import ParseCache, default_cache_path
from syneval_nb.parsers.stanford import ParserSetupError, find_java
from syneval_nb.textio import InputEncodingError
from syneval_nb.parsers.feng_hirst import FengHirstParser, backend_key
from syneval_nb.parsers.frontend import parse_rst
from syneval_nb.trees.rst import is_void, write_rst_jsonl

__all__ = []  # a command's module: `syneval-nb` (app.cli) is its face


def cli(argv: list[str] | None = None) -> int:
    """``syneval-nb rst FILE``: RST-parse a text file (one segment per line) into ``FILE.jsonl`` (the shipped
    format), through the persistent parse cache. Returns 0, 1 if some texts got no tree, 2 on errors (one line;
    input and output paths are checked before any work), 130 when interrupted (the same command resumes)."""
    import argparse

    ap = argparse.ArgumentParser(
        prog="syneval-nb rst",
        description="RST-parse a text file (one segment per line) into FILE.jsonl, one discourse tree per line "
                    "(the format of the shipped trees), with the Feng-Hirst parser, through the persistent parse "
                    "cache. Exit code 0, 1 if some texts got no tree, 2 on errors (one line; the input and output "
                    "paths are checked before any work), 130 when interrupted (the same command resumes).")
    ap.add_argument("file", help="text file, one segment per line")
    ap.add_argument("-o", "--output", default=None, help="output .jsonl (default: FILE.jsonl)")
    ap.add_argument("-w", "--workers", type=int, default=1, help="parser processes (each holds a JVM, ~1 GB)")
    group = ap.add_mutually_exclusive_group()
    group.add_argument("--cache", default=None, help="parse cache file (default ~/.cache/syneval-nb/parses.sqlite)")
    group.add_argument("--no-cache", action="store_true", help="do not read or write the parse cache")
    ap.add_argument("--global-features", action="store_true", help="second EDU segmentation pass (default off)")
    ap.add_argument("--classifier", choices=FengHirstParser.CLASSIFIERS, default="inprocess",
                    help="CRF tagging: in this process (default) or the package's crfsuite subprocess (same trees)")
    ap.add_argument("--syntax", choices=FengHirstParser.SYNTAX, default="kit",
                    help="the Stanford parse of each sentence: the kit's long-lived workers and the parse cache "
                         "(default; a sentence is parsed once for every RST use) or the package's own JVM (same "
                         "trees)")
    ap.add_argument("--scheduler", default=None, metavar="tcp://HOST:PORT",
                    help="parse on a Dask cluster (its workers need the same install, bash setup.sh, and Java); the cache "
                         "stays here (README: More than one machine)")
    args = ap.parse_args(argv)
    import shutil
    import signal

    def fail(message: object) -> int:
        print(f"syneval-nb rst: {str(message).splitlines()[0] if str(message) else type(message).__name__}",
              file=sys.stderr)
        return 2

    if args.workers < 1:
        return fail(f"--workers must be >= 1, got {args.workers}")
    output = f"{args.file}.jsonl" if args.output is None else args.output
    try:  # the same line reader as `syneval-nb parse`: output line i is input line i
        lines = read_input_lines(args.file)
        out = check_output_path(output, args.file)
    except (OSError, InputEncodingError, OutputPathError) as e:
        return fail(e)
    todo = [ln for ln in lines if ln.strip()]
    key = backend_key(args.global_features)
    cache_path = None if args.no_cache else (args.cache or default_cache_path())
    store = None
    try:
        try:
            store = None if cache_path is None else ParseCache(cache_path)
            cached = store.get_many(key, todo) if store is not None else {}
            damaged = dict(store.last_rejected) if store is not None else {}
            if any(t not in cached for t in todo) and args.scheduler is None:
                # the Feng-Hirst package runs `java` and `perl` from PATH: say so in one line, before it fails
                # deep inside (and before worker processes start)
                for exe, why in (("java", "its syntax parser (Java 8 or newer, e.g. `sudo apt-get install "
                                          "default-jre-headless`)"),
                                 ("perl", "its sentence splitter")):
                    if shutil.which(exe) is None:
                        return fail(f"`{exe}` was not found on PATH; the Feng-Hirst RST parser runs it for {why}. "
                                    f"Install it or put it on PATH.")
                find_java(shutil.which("java"))  # it runs (`java -version`)
            why: dict[int, str] = {}
            got = dict(zip(todo, parse_rst(todo, workers=args.workers, cache=store,
                                           global_features=args.global_features, scheduler=args.scheduler,
                                           classifier=args.classifier, syntax=args.syntax, failures=why)))
            why_by_text = {todo[i]: w for i, w in why.items()}
        except (ParserSetupError, OSError, RuntimeError, ValueError) as e:
            return fail(e)
        finally:
            if store is not None:
                store.close()
        trees = [got.get(ln) if ln.strip() else None for ln in lines]
        try:
            write_output(out, lambda tmp: write_rst_jsonl(trees, tmp))
        except OSError as e:
            return fail(f"cannot write {out}: {e.strerror or e} (the trees are in the cache: fix the output path "
                        "and run the same command again)")
    except KeyboardInterrupt:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not turn the message into a traceback
        from tqdm.auto import tqdm

        # through tqdm: on a line of its own even while the progress bar (closed later, by the parser) is shown
        tqdm.write(f"syneval-nb rst: {interrupted_message(cache_path, key, todo)}", file=sys.stderr)
        return 130
    failed = [i + 1 for i, ln in enumerate(lines) if ln.strip() and got.get(ln) is None]
    print(f"{out}: {len(lines)} lines, {sum(1 for t in got.values() if t and not is_void(t))} with more than one EDU"
          f", {len(failed)} without a tree" + (f" (lines {', '.join(map(str, failed[:10]))}"
                                                 f"{', ...' if len(failed) > 10 else ''})" if failed else ""))
    for n in failed[:10]:  # each line without a tree, with its cause and what to do
        print(f"  line {n}: {why_by_text.get(lines[n - 1], 'no RST tree')}", file=sys.stderr)
    if len(failed) > 10:
        print(f"  ... and {len(failed) - 10} more lines without a tree", file=sys.stderr)
    if damaged:
        print(f"{len(damaged)} damaged cache entries (not a valid RST tree) were parsed again; first: "
              f"{next(iter(damaged.values()))}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":  # python -m syneval_nb.app.rst FILE
    sys.exit(cli(sys.argv[1:]))
