"""The parse front end: sentences in, trees out, through the persistent cache.

One entry point, :func:`parse` (trees) / :func:`parse_strings` (the raw strings that are cached and written to
disk), aligned with the input and backed by the persistent :class:`~syneval_nb.parsers.cache.ParseCache`. Backends: ``stanford``
(:mod:`syneval_nb.parsers.stanford`), ``spacy`` (:mod:`syneval_nb.parsers.spacy`), and ``ptb``, pre-parsed input: a
file of one bracketed tree per line (any external parser; ``(())`` or an empty line means no parse), aligned line by
line with the sentences (``ptb_file=``), not cached. RST trees: :func:`parse_rst` (:mod:`syneval_nb.parsers.feng_hirst`).

Sentence mode (issue 33, the ``stanford`` default): each input line is split into its sentences by the kit's one
splitter (:mod:`syneval_nb.parsers.sentences`), every sentence is parsed (and cached) on its own, and the line's
tree joins them under one ``ROOT``; a one-sentence line is parsed exactly as in line mode (``split="lines"``).

Cache keys (:attr:`StanfordParser.backend_key`, :func:`spacy_backend_key`) encode backend, version and every
option that changes a result; the cache is keyed by the exact sentence text. Results are stored as they arrive,
so a run that is interrupted resumes where it stopped. A deterministic failure (``(())``: unparsable) is stored as
``None`` and re-tried only with ``retry_failed=True``; a sentence longer than ``max_length`` (the parser answers at
once, and the failure names its length), time-outs, crashes and empty inputs are never stored.
"""
from __future__ import annotations

import json
import os
import re
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tqdm.auto import tqdm
from syneval_nb.parsers.cache import ParseCache, open_cache
from syneval_nb.parsers.feng_hirst import (FengHirstParser, JAVA_TRIM, parse_stream, backend_key,
                                           sentences as rst_sentences)
from syneval_nb.parsers.spacy import dependency_tree, spacy_stream, spacy_backend_key
from syneval_nb.parsers.sentences import SPLITS, SPLITTER, join_trees, split_sentences
from syneval_nb.parsers.stanford import (DEFAULT_MAX_LENGTH, DEFAULT_MEMORY, ParseWarning, StanfordParser,
                                         get_stanford_parser, record_tree, split_answer, too_long_reason)
from syneval_nb.textio import InputEncodingError
from syneval_nb.trees.ptb import EmptyParseError, read_ptb, read_ptb_flat, read_ptb_strings, same_words

__all__ = ["parse", "parse_rst", "parse_strings"]


BACKENDS = ("stanford", "stanford-deps", "spacy", "ptb")
DEFAULT_SPLIT = "sentences"
"""The parse mode of the ``stanford`` backend by default (issue 33; measured in README "Parsing"): each sentence of
a line parsed on its own. ``split="lines"`` is the mode of the shipped parses."""


def _public(key: str, fixed=("sentences=", "tokenizer=", "format=", "next-line=", "line-", "after-", "utf-8")) -> str:
    """A parse source as the summary and a signature's ``parses:`` name it: the cache key without the kit's fixed
    protocol fields (tokenizer, output format, the sentinel line; the kit's version names them)."""
    return "/".join(p for p in key.split("/") if not p.startswith(fixed))


def dask_backend():
    """The Dask back end, :mod:`syneval_nb.parsers.dask`, imported only when a scheduler is given (Dask is an
    optional extra). The kit's one lazy import of it: every ``scheduler=`` path goes through here."""
    from . import dask

    return dask


# ------------------------------------------------------------------------------------------------- reports


@dataclass
class ParseReport:
    """What happened in one :func:`parse_strings` call (indices are positions in the input: its lines).

    ``backend_key`` is the cache key of the backend's results; ``source`` names the parses of the lines, what a
    metric's signature shows (Stanford: the key, the parse mode ``split=sentences:<splitter>`` or ``split=lines``,
    and the workers' Java heap ``memory=2g``). In sentence mode ``n_sentences`` counts the sentences of the
    non-empty lines and ``n_cached`` / ``n_parsed`` count sentences; ``failures`` are always by line, each with its
    cause (``"sentence 2 of 2 has 212 tokens > max_length 250"``)."""

    backend_key: str
    n_input: int = 0
    n_empty: int = 0  # empty / white-space lines: None without parsing
    n_cached: int = 0  # served from the cache (including stored failures)
    n_parsed: int = 0  # sent to the backend in this call
    failures: dict[int, str] = field(default_factory=dict)  # index -> reason (cached failures included)
    restarts: int = 0  # worker restarts (crash, hang, desync)
    seconds: float = 0.0
    damaged: dict[int, str] = field(default_factory=dict)  # index -> why its cached result was not valid (re-parsed)
    split: str = "lines"  # "sentences" or "lines" (parse_strings' split)
    source: str = ""  # what the parses are (defaults to backend_key)
    n_sentences: int = 0  # sentence mode: sentences of the non-empty lines

    def __post_init__(self) -> None:
        self.source = self.source or self.backend_key

    def summary(self) -> str:
        if self.split == "sentences":
            text = (f"{self.n_input} lines ({self.n_sentences} sentences): {self.n_cached} sentences from cache, "
                    f"{self.n_parsed} parsed, {self.n_empty} empty lines, {len(self.failures)} lines without a "
                    f"parse, {self.restarts} worker restarts, {self.seconds:.1f} s [{self.source}]")
        else:
            text = (f"{self.n_input} sentences: {self.n_cached} from cache, {self.n_parsed} parsed, {self.n_empty} "
                    f"empty, {len(self.failures)} without a parse, {self.restarts} worker restarts, "
                    f"{self.seconds:.1f} s [{self.source}]")
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

    def unparsed(self) -> list[tuple[int, str]]:
        """``[(line, cause)]`` of the lines without a parse (1-based lines, empty lines not included)."""
        return [(i + 1, why) for i, why in self.failures.items()]


class ParseList(list):
    """A list aligned with the input sentences, with the call's :class:`ParseReport` as ``.report``."""

    report: ParseReport


# ------------------------------------------------------------------------------------------------- ptb files

def _same_words(sentence: str, ptb: str) -> bool:
    """Whether a tree holds the words of a sentence (:func:`syneval_nb.trees.ptb.same_words`, the kit's one check)."""
    try:
        return same_words([w for w in read_ptb_flat(ptb).words if w is not None], sentence)
    except EmptyParseError:
        return True


# ------------------------------------------------------------------------------------------------- front end


def parse_strings(sentences: Sequence[str] | None, backend: str = "stanford", workers: int = 1,
                  cache: ParseCache | str | os.PathLike | bool | None = True, *, max_length: int | None = None,
                  split: str | None = None, timeout: float = 60.0, memory: str | None = None,
                  ptb_file: str | os.PathLike | None = None, retry_failed: bool = False,
                  parser: StanfordParser | None = None, progress: bool = True, warn: bool = True,
                  scheduler: Any = None) -> ParseList:
    """Parse ``sentences`` (one segment per entry: an input line) into backend strings, aligned with the input (a
    :class:`ParseList` with ``.report``).

    - ``stanford``: one-line PTB trees exactly as the parser prints them (``(ROOT ...)``);
    - ``stanford-deps``: records of the same parser and model run as the Feng-Hirst parser runs it
      (``StanfordParser(dependencies=True)``: ``ParserDemo``, tree and collapsed typed dependencies of each
      sentence, parsed alone: what the RST parser reads; see :mod:`syneval_nb.parsers.stanford`);
    - ``spacy``: JSON ``{"words", "tags", "heads", "deps"}`` per sentence (heads 0-based, -1 for the root);
    - ``ptb``: the lines of ``ptb_file`` (``sentences`` may be ``None``; if given, counts and words are checked).

    ``split`` (``stanford`` only; issue 33): ``"sentences"`` (the default, :data:`DEFAULT_SPLIT`) splits each line
    into its sentences (:func:`syneval_nb.parsers.sentences.split_sentences`, the kit's one splitter), parses every
    sentence on its own (cached by its exact text) and joins the line's trees under one ``ROOT``
    (:func:`~syneval_nb.parsers.sentences.join_trees`); a one-sentence line is parsed exactly as in line mode (the
    same text, cache entry and tree). A line gets no parse when one of its sentences gets none (the reason names
    it: ``"sentence 2 of 2 has 212 tokens > max_length 250"``). ``"lines"``: every line is parsed as one sentence.
    The other backends parse lines (``spacy`` forbids splits inside a line; ``stanford-deps`` answers the RST
    parser's own sentences): they refuse ``"sentences"``.

    ``max_length`` (``stanford`` only; default :data:`~syneval_nb.parsers.stanford.DEFAULT_MAX_LENGTH`): longest
    sentence in PTB tokens; ``memory``: the Java heap of each worker (default
    :data:`~syneval_nb.parsers.stanford.DEFAULT_MEMORY`). The spaCy backend has no length limit and refuses both
    rather than ignore them. A tree stored under another limit is reused when its sentence is within this one.

    ``None`` marks an empty line and every failure; failures are listed in ``.report.failures`` (by line, with the
    cause) and in one :class:`ParseWarning`. ``cache``: ``True`` (the default file), a path, a
    :class:`ParseCache`, or ``None``/``False``.
    ``parser`` reuses a running :class:`StanfordParser` (its own ``workers``/``max_length``/``timeout``/``memory``
    apply); one made with ``both=True`` serves both Stanford backends and caches each sentence's other answer too.
    ``scheduler``: a Dask scheduler address (``"tcp://HOST:8786"``) or a ``distributed.Client``: the sentences the
    cache lacks are parsed on the cluster's workers (``workers`` is then unused; ``parser`` only gives the
    options) and cached here as they arrive (:mod:`syneval_nb.parsers.dask`; ``stanford`` and ``spacy``).
    """
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    split = resolve_split(backend, split)
    stanford_options = {"max_length": max_length, "memory": memory}
    if backend not in ("stanford", "stanford-deps"):
        given = [k for k, v in stanford_options.items() if v is not None]
        if given:
            raise ValueError(f"{' and '.join(given)}: Stanford parser options; the {backend} backend "
                             + ("parses every line whatever its length" if backend == "spacy" else
                                "reads ready trees") + f" (give no {' or '.join(given)})")
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
    deps = backend == "stanford-deps"
    if backend in ("stanford", "stanford-deps"):
        max_length = DEFAULT_MAX_LENGTH if max_length is None else max_length
        memory = DEFAULT_MEMORY if memory is None else memory
        if scheduler is not None:  # Dask is imported only here
            parser = dask_backend().RemoteParser(scheduler, "stanford", parser or StanfordParser(
                max_length=max_length, timeout=timeout, memory=memory, dependencies=deps))
        parser = parser or get_stanford_parser(workers=workers, max_length=max_length, timeout=timeout,
                                               memory=memory, dependencies=deps)
        if parser.dependencies != deps and not parser.both:
            raise ValueError(f"backend={backend!r} needs a parser made with dependencies={deps} (or both=True)")
        key = parser.deps_key if deps else parser.backend_key
        other = parser.backend_key if deps else parser.deps_key  # the other answer of a both parser (issue 38)
        max_length = parser.max_length  # a parser given brings its own limit
        restarts0 = parser.restarts
        stream = parser.parse_stream
        source = _public(key) if deps else (
            f"{_public(key)}/split={'sentences:' + SPLITTER if split == 'sentences' else 'lines'}/"
            f"memory={getattr(parser, 'memory', None) or parser.options['memory']}")
    else:
        key = source = spacy_backend_key()
        restarts0 = 0
        other = None
        stream = lambda items, on_result: spacy_stream(items, on_result, workers)  # noqa: E731
        if scheduler is not None:
            stream = dask_backend().RemoteParser(scheduler, "spacy").parse_stream

    out = ParseList([None] * len(sentences))
    report = ParseReport(backend_key=key, n_input=len(sentences), split=split, source=source)
    out.report = report
    todo_idx = [i for i, s in enumerate(sentences) if s.strip()]
    report.n_empty = len(sentences) - len(todo_idx)
    # the texts sent to the parser: the lines, or (sentence mode) each line's sentences (one-sentence lines as they are)
    pieces = {i: (split_sentences(sentences[i]) if split == "sentences" else [sentences[i]]) for i in todo_idx}
    units = [x for i in todo_idx for x in pieces[i]]
    if split == "sentences":
        report.n_sentences = len(units)

    store, owned = open_cache(cache)
    try:
        done, why, cached, damaged = _parse_units(units, key, other, store, parser if backend != "spacy" else None,
                                                  stream, retry_failed, progress, backend, deps, max_length)
    finally:
        if owned and store is not None:
            store.close()
    for i in todo_idx:
        ps = pieces[i]
        report.n_cached += sum(cached[x] for x in ps)
        report.n_parsed += sum(not cached[x] for x in ps)
        bad = [(k, x) for k, x in enumerate(ps) if x in damaged]
        if bad:
            report.damaged[i] = damaged[bad[0][1]]
        if all(done[x] is not None for x in ps):
            out[i] = join_trees([done[x] for x in ps]) if len(ps) > 1 else done[ps[0]]
            continue
        k, x = next((k, x) for k, x in enumerate(ps) if done[x] is None)
        report.failures[i] = _cause(why.get(x) or "no parse", k, len(ps), split)
    report.restarts = (parser.restarts - restarts0) if backend in ("stanford", "stanford-deps") else 0
    report.seconds = time.perf_counter() - t0
    report.failures = dict(sorted(report.failures.items()))
    if warn and report.failures:
        warnings.warn(f"{len(report.failures)} of {len(sentences)} sentences have no parse.\n{report.summary()}",
                      ParseWarning, stacklevel=2)
    elif warn and report.damaged:
        warnings.warn(f"{len(report.damaged)} damaged cache entries were parsed again.\n{report.summary()}",
                      ParseWarning, stacklevel=2)
    return out


def resolve_split(backend: str, split: str | None) -> str:
    """The parse mode of ``backend``: ``split`` checked, or its default (``stanford``: :data:`DEFAULT_SPLIT`; the
    other backends parse lines and refuse ``"sentences"``, see :func:`parse_strings`)."""
    if split is not None and split not in SPLITS:
        raise ValueError(f"split must be one of {', '.join(map(repr, SPLITS))}, got {split!r}")
    if backend != "stanford":
        if split == "sentences":
            why = {"spacy": "spaCy parses each line as one sentence (its dependency trees are not joined)",
                   "stanford-deps": "its records are made for the RST parser's own sentences",
                   "ptb": "it reads one ready tree per line"}.get(backend, "")
            raise ValueError(f"split='sentences' is for the stanford backend; the {backend} backend parses lines "
                             f"({why}): give split='lines' or none")
        return "lines"
    return DEFAULT_SPLIT if split is None else split


def _cause(reason: str, k: int, n: int, split: str) -> str:
    """A line's failure reason from its sentence ``k`` (0-based) of ``n``: ``"sentence 2 of 2 has 212 tokens >
    max_length 250"`` for a line of several sentences, ``"the line has ..."`` for a line parsed as one."""
    if split != "sentences" or n == 1:  # a one-sentence line: as in line mode
        return f"the line {reason}" if reason.startswith("has ") else reason
    return f"sentence {k + 1} of {n} {reason}" if reason.startswith("has ") else f"sentence {k + 1} of {n}: {reason}"


_MAX_LENGTH_FIELD = re.compile(r"/maxLength=(\d+)/")


def _other_limits(store: ParseCache, key: str, texts: list[str], max_length: int
                  ) -> tuple[dict[str, str], dict[str, str]]:
    """Trees of ``texts`` stored under the same Stanford key with another ``maxLength`` (a tree does not depend on
    the limit): ``(trees within max_length, {text: reason} for trees longer than it)``. Stored failures under
    another limit are not used (parsed again)."""
    m = _MAX_LENGTH_FIELD.search(key)
    if m is None:
        return {}, {}
    head, tail = key[:m.start()], key[m.end():]
    siblings = [k for k in store.backend_keys() if k != key and k.startswith(head + "/maxLength=")
                and _MAX_LENGTH_FIELD.search(k) and k[_MAX_LENGTH_FIELD.search(k).end():] == tail]
    found: dict[str, str] = {}
    too_long: dict[str, str] = {}
    for k in sorted(siblings, key=lambda k: -int(_MAX_LENGTH_FIELD.search(k).group(1))):
        left = [t for t in texts if t not in found and t not in too_long]
        if not left:
            break
        for t, r in store.get_many(k, left).items():
            if r is None:
                continue
            n = sum(w is not None for w in read_ptb_flat(r).words)
            if n <= max_length:
                found[t] = r
            else:
                too_long[t] = too_long_reason(n, max_length)
    return found, too_long


def _parse_units(units: list[str], key: str, other: str | None, store: ParseCache | None, parser: Any, stream: Any,
                 retry_failed: bool, progress: bool, backend: str, deps: bool, max_length: int | None
                 ) -> tuple[dict[str, str | None], dict[str, str], dict[str, bool], dict[str, str]]:
    """Results of the distinct texts of ``units`` through the cache and the backend: ``(result by text, failure
    reason by text, whether it came from the cache, why a damaged cache entry was parsed again)``."""
    uniq = list(dict.fromkeys(units))
    counts: dict[str, int] = {}
    for u in units:
        counts[u] = counts.get(u, 0) + 1
    done: dict[str, str | None] = {}
    why: dict[str, str] = {}
    cached: dict[str, bool] = {}
    stored = store.get_many(key, uniq) if store else {}
    damaged = dict(store.last_rejected) if store else {}  # damaged entries: misses, parsed again and replaced
    pending: list[str] = []
    for s in uniq:
        if s in stored and (stored[s] is not None or not retry_failed):
            done[s], cached[s] = stored[s], True
            if stored[s] is None:
                why[s] = "stored failure in the cache (retry_failed=True parses it again)"
        else:
            pending.append(s)
    if pending and store is not None and backend == "stanford" and max_length is not None:
        found, too_long = _other_limits(store, key, pending, max_length)
        if found:
            store.put_many(key, list(found.items()))
        for s in list(found) + list(too_long):
            done[s], cached[s] = found.get(s), True
            if s in too_long:
                why[s] = too_long[s]
        pending = [s for s in pending if s not in done]
    if pending and parser is not None:
        parser.start()  # JVM start-up and model loading (seconds) before the progress bar starts
    bar = tqdm(total=len(units), initial=sum(counts[s] for s in done), desc=f"parse [{backend}]", unit="sent",
               disable=not progress or not pending)
    firsts = list(enumerate(pending))

    def on_result(first: int, result: Any, reason: str | None, storable: bool) -> None:
        text = pending[first]
        if isinstance(result, tuple):  # a both=True parser: the other backend's answer is cached too
            answers = split_answer(result, text, parser.max_length)
            result, reason, storable = answers["alone" if deps else "line"]
            if store is not None and answers["line" if deps else "alone"][2]:  # a record: under the RST step's text
                store.put(other, text if deps else text.strip(JAVA_TRIM), answers["line" if deps else "alone"][0])
        if reason is not None and reason.startswith("has "):  # over max_length: cheap to ask again, and the
            storable = False                                   # stored failure would lose the length
        if store is not None and storable:
            store.put(key, text, result)
        done[text], cached[text] = result, False
        if reason is not None:
            why[text] = reason
        bar.update(counts[text])

    try:
        stream(firsts, on_result)
    finally:
        bar.close()
    return done, why, cached, damaged


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
    ``ROOT`` wrapper is removed); ``spacy`` gives :class:`syneval_nb.trees.heads.DependencyTree`. The options are those
    of :func:`parse_strings`; the result's ``.report`` says what was cached, parsed and failed.
    """
    raw = parse_strings(sentences, backend=backend, workers=workers, cache=cache, **options)
    out = ParseList()
    for i, s in enumerate(raw):
        if s is None:
            out.append(None)
            continue
        try:
            if backend == "stanford-deps":
                out.append(read_ptb(record_tree(s), line_no=i + 1))
            else:
                out.append(dependency_tree(s) if backend == "spacy" else read_ptb(s, line_no=i + 1))
        except EmptyParseError:
            out.append(None)
            raw.report.failures[i] = "empty tree"
    out.report = raw.report
    return out


def parse_rst(texts: Sequence[str], workers: int = 1, cache: Any = True, global_features: bool = False,
              progress: bool = True, retry_failed: bool = False, scheduler: Any = None,
              classifier: str = "inprocess", syntax: str = "kit", parser: StanfordParser | None = None,
              failures: dict | None = None) -> list[dict | None]:
    """RST trees of ``texts`` (aligned; ``None`` where the parser failed), parsing only what the cache lacks.
    ``failures``: a dict that receives ``{index: why}`` for every text without a tree (the parser's cause, e.g. a
    sentence too long for it; or a failure stored in the cache).

    ``cache``: ``True`` for the default :class:`syneval_nb.parsers.cache.ParseCache`, a ``ParseCache``, or ``None``.
    Each result is stored as soon as it arrives (JSON of the tree; ``None`` for a failure, retried only with
    ``retry_failed``). ``workers`` processes each hold one long-lived :class:`FengHirstParser` (each JVM takes up
    to 1 GB); ``workers=1`` parses in this process. Empty texts raise ``ValueError``.
    ``scheduler``: a Dask scheduler address (``"tcp://HOST:8786"``) or a ``distributed.Client``: the texts the
    cache lacks are parsed by the cluster's workers, each with its own long-lived parser (``workers`` unused),
    and cached here as they arrive (:mod:`syneval_nb.parsers.dask`).
    ``classifier``: ``"inprocess"`` (default) or ``"subprocess"``, how the CRF models are applied (see
    :class:`FengHirstParser`; the trees are the same, so is the cache key).
    ``syntax``: ``"kit"`` (default): the parser's syntax step (Stanford PCFG, tree and dependencies of each
    sentence) is made by the kit's Stanford parser through the cache (:func:`parse_strings` with
    ``backend="stanford-deps"``: sentences already parsed come from the cache, the others go to the kit's
    long-lived workers, local or on the Dask ``scheduler``), before the RST step; ``parser``: a
    :class:`StanfordParser` with ``dependencies=True``, or with ``both=True`` (the one that parsed the lines for
    the syntactic metrics and cached their records: one parse and one JVM per worker for both). ``"package"``: the package's own ``ParserDemo`` JVM in each
    RST worker. The trees are the same (``benchmarks/rst_identity.py``), so is the cache key.
    """
    for k, t in enumerate(texts):
        if not isinstance(t, str) or not t.strip():
            raise ValueError(f"text {k} is empty: the Feng-Hirst parser needs at least one word")
    if syntax not in FengHirstParser.SYNTAX:
        raise ValueError(f"syntax must be one of {FengHirstParser.SYNTAX}, got {syntax!r}")

    store, opened = open_cache(cache)
    try:
        why: dict[str, str] = {}
        done = _cached_or_parsed(texts, store, workers, global_features, progress, retry_failed, scheduler,
                                 classifier, syntax, parser, why)
    finally:
        if opened:
            store.close()
    if failures is not None:
        failures.update({i: why.get(t, "a failure stored in the parse cache (parse it again with retry_failed, or "
                                       "without the cache)") for i, t in enumerate(texts) if done[t] is None})
    return [None if done[t] is None else json.loads(done[t]) for t in texts]


def _cached_or_parsed(texts: Sequence[str], store: Any, workers: int, global_features: bool, progress: bool,
                      retry_failed: bool, scheduler: Any = None, classifier: str = "inprocess",
                      syntax: str = "kit", parser: StanfordParser | None = None,
                      why: dict | None = None) -> dict[str, str | None]:
    """Results (JSON strings) by text: cached ones, then the rest parsed and stored as each arrives (the causes of
    the new failures into ``why``)."""
    key = backend_key(global_features)
    unique = list(dict.fromkeys(texts))
    done: dict[str, str | None] = {}
    if store is not None:
        got = store.get_many(key, unique)
        done = {t: r for t, r in got.items() if r is not None or not retry_failed}
    todo = [t for t in unique if t not in done]
    if todo:
        tasks: list = todo
        if syntax == "kit":  # the syntax step first: every sentence once, through the cache and the kit's parser
            sents = {t: rst_sentences(t) for t in todo}
            uniq = list(dict.fromkeys(x for t in todo for x in sents[t]))
            own = None  # without a parser given, this call's JVMs end with it (as the package's did)
            if parser is None and scheduler is None:  # both=None: the one-line trees are kept too (issue 38)
                own = parser = StanfordParser(workers=workers, dependencies=True, both=None)
            try:
                recs = parse_strings(uniq, backend="stanford-deps", workers=workers, cache=store, parser=parser,
                                     progress=progress, warn=False, scheduler=scheduler)
            finally:
                if own is not None:
                    own.close()
            table = dict(zip(uniq, recs))
            tasks = [(t, {x: table.get(x) for x in sents[t]}) for t in todo]
        bar = tqdm(total=len(todo), desc="RST parsing", unit="seg", disable=not progress)
        if scheduler is None:
            stream = parse_stream(tasks, workers, global_features, classifier, syntax)
        else:  # Dask is imported only here
            stream = dask_backend().rst_stream(scheduler, tasks, global_features, classifier=classifier,
                                               syntax=syntax)
        for text, result, *reason in stream:  # (text, result) or, for a failure, (text, None, why)
            done[text] = result
            if result is None and why is not None:
                why[text] = reason[0] if reason and reason[0] else "the Feng-Hirst parser gave no tree"
            if store is not None:
                store.put(key, text, result)
            bar.update()
        bar.close()
    return done


