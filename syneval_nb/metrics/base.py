"""One face for every metric of the kit (lexical, syntactic, discourse, learned) and a registry.

Every metric is reached through :func:`get` and has the same shape, sacrebleu's:

* ``sentence_score(hyp, refs) -> Score``, ``corpus_score(hyps, refs) -> Score``, batch
  ``sentence_scores(hyps, refs) -> np.ndarray`` (NaN only where a segment has no usable reference, e.g. none of
  its references could be parsed;
  equal to ``sentence_score`` segment by segment, except NIST, whose information weights come from all the
  references scored together, as in :class:`syneval_nb.metrics.lexical.NIST`);
* ``signature() -> str``, built for every metric by the one function :func:`make_signature`;
* ``inputs``: what it consumes, among ``"text"``, ``"ptb"`` (constituency parses), ``"dep"`` (spaCy dependency
  parses, the ``@spacy`` variants of HWCM, DSTM and DTKM) and ``"rst"`` (RST trees);
* the statistics protocol behind the scores (used for bootstrap resampling by ``syneval-nb score`` and the report):
  ``segment_stats(corpus) -> (n, k)`` array whose rows, summed (or weighted and summed), give a corpus score through
  ``score_from_stats(sums)``; an unscorable segment (no usable reference: the same for every system) is a row of
  NaN, adds nothing and is counted in ``Score.n_missing``.

**Every segment counts** (issue 24). An empty hypothesis, or one without the parse or RST tree a metric needs,
gets that metric's worst value in every family, at sentence and corpus level (signature ``hypfault:worst`` for
the parse-based metrics): 0 for BLEU, chrF, STM, DSTM, TKM, DTKM, DR, DR-lex and the other scores, HWCM's
``epsilon``, 1.0 for WER and PER (every reference word deleted), the closest reference length over the average one
for TER. So a system cannot raise its score by emptying its worst lines or making them unparseable.

**Name scheme** (stated once): a metric's name is its family name in the papers' spelling, followed for the depth
metrics by ``-D``, the maximum depth (chain length): ``BLEU``, ``NIST``, ``WER``, ``PER``, ``F-measure``, ``GTM``,
``ROUGE-S``, ``METEOR``, ``TER``, ``STM-4``, ``DSTM-4``, ``HWCM-4``, ``TKM``, ``DTKM``, ``DR``, ``DR-lex``,
``Learned``. :func:`parse_name` maps every other spelling onto it: case and ``_``/``-`` are ignored (``stm_4``,
``stm-4``, ``STM4``), a tuple ``("STM", 4)`` works, and a depth metric named without a depth (``"stm"``) takes its
family's default depth (:data:`syneval_nb.metrics.syntactic.DEFAULT_DEPTH`).

**Defaults** are the family modules' own (constructor defaults of :mod:`syneval_nb.metrics.lexical`,
:mod:`syneval_nb.metrics.syntactic`, :mod:`syneval_nb.discourse`); options passed to :func:`get` go to the family
constructor unchanged (``get("hwcm", depth=4, epsilon=1e-3)``, ``get("bleu", smooth="epsilon")``). The BLEU of
``get("bleu")`` is sacrebleu's ``corpus_bleu`` at corpus level (13a, exp smoothing), on the 0-1 scale.

**Reference layout** (stated once): ``refs[i]`` is the list of references of segment ``i`` -- sacrebleu's reference
streams transposed. Sacrebleu's layout (``refs[k][i]`` = reference ``k`` of segment ``i``) is accepted only with
``ref_layout="streams"``; a list of references whose length is not the number of segments is refused with an error
that names both layouts, and so is input that fits both layouts differently (as many references per segment as
there are segments) unless ``ref_layout`` says which.

**Inputs.** Plain strings are texts. A :class:`Corpus` carries hypotheses, references and whatever parses are
available (PTB strings, spaCy dependency parses, RST trees); it makes the missing ones only when a metric needs
them, through the persistent parse cache (:func:`syneval_nb.parsers.frontend.parse_strings` with the Stanford parser, or with
the spaCy backend for ``"dep"``; :func:`syneval_nb.parsers.frontend.parse_rst`).
Pass a :class:`Corpus` (or :class:`Segment`) anywhere a metric takes ``hyps`` / ``hyp``.
"""
from __future__ import annotations

import copy
import math
import warnings
from dataclasses import dataclass, field
from typing import Any, Mapping, NamedTuple, Sequence

import numpy as np
import pandas as pd
from tqdm.auto import tqdm
from syneval_nb import __version__
from syneval_nb.parsers.frontend import dask_backend, parse_rst, parse_strings
from syneval_nb.parsers.stanford import combined_parser
from syneval_nb.textio import to_json
from nltk import Tree

from syneval_nb.trees.heads import DependencyTree
from syneval_nb.trees.ptb import FlatTree, TreeFormatError, is_empty_parse, read_ptb_flat, same_words
from syneval_nb.trees.rst import edus
from functools import lru_cache


__all__ = ["Score", "Metric", "Corpus", "Segment", "ReferenceLayoutError", "ParseMismatchError", "check_parse_words",
           "make_signature", "prepare",
           "normalize_refs", "depth_scores", "mean_rows", "score_systems", "score_rows", "RowScores"]


# ============================================================================================== results


@dataclass
class Score:
    """One metric value, the only result type of every metric: ``name`` (the canonical name), ``score``, ``parts``
    (the family's parts: precisions and brevity penalty, matches/totals/fractions per depth, cosines, ...; readable
    as attributes, ``s.precisions``, ``s.fractions``), ``signature``, ``n`` (segments) and ``n_missing`` (segments
    that could not be scored and are left out, e.g. unparsed). Sentence-level syntactic scores :meth:`explain`
    themselves, and STM/DSTM :meth:`draw` the matched subtrees."""

    name: str
    score: float
    parts: dict = field(default_factory=dict)
    signature: str = ""
    n: int = 1
    n_missing: int = 0
    explain_fn: Any = field(default=None, repr=False, compare=False)
    draw_fn: Any = field(default=None, repr=False, compare=False)

    def __getattr__(self, name: str) -> Any:
        parts = self.__dict__.get("parts", {})
        if name in parts:
            return parts[name]
        raise AttributeError(f"{self.__dict__.get('name', 'score')} has no part {name!r}; parts: {sorted(parts)}")

    def __float__(self) -> float:
        return float(self.score)

    def explain(self):
        """The metric's own account of this score (a DataFrame; sentence-level STM, DSTM, HWCM, TKM, DTKM)."""
        if self.explain_fn is None:
            raise ValueError(f"{self.name}: this result has no explanation (sentence-level syntactic results do)")
        return self.explain_fn()

    def draw(self, depth: int = 2):
        """STM/DSTM of one sentence: the hypothesis tree with its matched depth-``depth`` subtrees coloured."""
        if self.draw_fn is None:
            raise ValueError(f"{self.name}: nothing to draw (only sentence-level STM and DSTM results draw)")
        return self.draw_fn(depth)

    def to_dict(self) -> dict:
        """JSON-ready, sacrebleu-shaped: ``name``, ``score``, ``signature``, ``n``, ``n_missing`` and the parts."""
        return {"name": self.name, "score": self.score, "signature": self.signature, "n": self.n,
                "n_missing": self.n_missing, **{k: to_json(v, finite=False) for k, v in self.parts.items()}}


def make_signature(name: str, options: Mapping[str, Any]) -> str:
    """The one signature format of every metric: ``name|key:value|...|version:syneval-nb-X`` (the options in the
    order given; every option that changes the number is one of them)."""
    parts = [name] + [f"{k}:{v}" for k, v in options.items() if k != "version"]
    return "|".join(parts + [f"version:syneval-nb-{__version__}"])


# ============================================================================================== inputs


class ReferenceLayoutError(ValueError):
    """The references are not laid out as ``refs[i]`` = the references of segment ``i``."""


def _as_list(x: Any, what: str) -> list:
    if isinstance(x, (str, bytes, set, frozenset, dict)):
        raise TypeError(f"{what} must be a sequence, got {type(x).__name__}")
    if hasattr(x, "tolist") and hasattr(x, "ndim"):
        return x.tolist()
    return list(x)


def _ambiguous(refs: list, n_segments: int) -> bool:
    """Both layouts fit: ``n_segments >= 2`` lists of ``n_segments`` references each, and reading them as streams
    would give other reference sets."""
    if n_segments < 2 or len(refs) != n_segments:
        return False
    rows = []
    for r in refs:
        if isinstance(r, (str, bytes, Mapping, Tree, FlatTree)) or r is None or not hasattr(r, "__len__"):
            return False
        r = list(r)
        if len(r) != n_segments:
            return False
        rows.append(r)
    return any(rows[i][k] != rows[k][i] for i in range(n_segments) for k in range(i))


def normalize_refs(refs: Any, n_segments: int, layout: str | None = None) -> list[list[Any]]:
    """``refs`` as ``refs[i]`` = list of segment ``i``'s references.

    ``layout="segments"`` (the kit's): ``refs[i]`` holds segment ``i``'s references (a single string is one
    reference). ``layout="streams"`` (sacrebleu's): ``refs[k]`` is the ``k``-th reference of every segment.
    ``layout=None`` (the default) reads ``"segments"``, but refuses input that fits both layouts differently (as
    many references per segment as there are segments, e.g. sacrebleu's 2 streams of 2 segments) with a
    :class:`ReferenceLayoutError` naming both: pass ``ref_layout`` then. A layout that does not fit the number of
    segments raises :class:`ReferenceLayoutError`."""
    if layout not in (None, "segments", "streams"):
        raise ValueError(f"ref_layout must be 'segments' or 'streams', got {layout!r}")
    refs = _as_list(refs, "refs")
    if layout is None:
        if _ambiguous(refs, n_segments):
            raise ReferenceLayoutError(
                f"refs is ambiguous: {n_segments} segments with {n_segments} references each read differently as "
                f"the kit's layout (refs[i] = the references of segment i: pass ref_layout='segments') and as "
                f"sacrebleu's (refs[k] = reference stream k: pass ref_layout='streams')")
        layout = "segments"
    if layout == "streams":
        streams = [_as_list(s, f"reference stream {k}") for k, s in enumerate(refs)]
        bad = [k for k, s in enumerate(streams) if len(s) != n_segments]
        if not streams or bad:
            raise ReferenceLayoutError(
                f"ref_layout='streams': each reference stream must have one entry per segment ({n_segments}); "
                f"stream lengths {[len(s) for s in streams]}")
        return [list(t) for t in zip(*streams)]
    if len(refs) != n_segments:
        hint = ""
        if refs and all(not isinstance(s, str) and hasattr(s, "__len__") and len(s) == n_segments for s in refs):
            hint = (f" It looks like sacrebleu's layout ({len(refs)} reference streams of {n_segments} segments): "
                    f"pass ref_layout='streams' or transpose it.")
        raise ReferenceLayoutError(f"refs has {len(refs)} entries for {n_segments} segments; refs[i] must hold the "
                                   f"references of segment i.{hint}")
    out = []
    for i, r in enumerate(refs):
        rs = [r] if isinstance(r, (str, Mapping, Tree, FlatTree)) or r is None else _as_list(r, f"refs[{i}]")
        if not rs:
            raise ValueError(f"segment {i} has no reference")
        out.append(rs)
    return out


class ParseMismatchError(ValueError):
    """Given parses (or RST trees) that do not hold the words of their text line (the parses of another text)."""


@lru_cache(maxsize=1 << 16)
def _ptb_string_words(parse: str) -> tuple[str, ...] | None:
    try:
        return tuple(w for w in read_ptb_flat(parse).words if w is not None)
    except TreeFormatError:
        return None  # a malformed parse is reported where it is read, with its position


@lru_cache(maxsize=1 << 16)
def _same(words: tuple[str, ...], text: str) -> bool:
    return same_words(words, text)


def _tree_words(v: Any, kind: str) -> tuple[str, ...] | None:
    """The words of a given parse / tree (``None``: nothing to check, e.g. unparsed or a JSON string)."""
    if _missing(v):
        return None
    if kind == "ptb":
        if isinstance(v, str):
            return _ptb_string_words(v)
        if isinstance(v, FlatTree):
            return tuple(w for w in v.words if w is not None)
        if isinstance(v, Tree):
            return tuple(str(w) for w in v.leaves())
        return None
    if kind == "rst" and isinstance(v, Mapping):
        try:
            return tuple(" ".join(edus(v)).split())
        except Exception:  # a malformed tree is refused where the metric reads it
            return None
    return None


def first_word_mismatch(texts: Sequence[str], words: Sequence[Sequence[str] | None]) -> tuple[int, str] | None:
    """The one word check of given parses (``Corpus``, ``score --parses``): the first line whose words (``None``:
    no check) differ from its text's (:func:`~syneval_nb.trees.ptb.same_words`) as ``(line, "('w' vs 't')")``."""
    for i, (t, w) in enumerate(zip(texts, words)):
        if w is not None and not _same(tuple(w), t):
            w = " ".join(w)
            return i, f"({w[:50]!r}{'...' if len(w) > 50 else ''} vs {t[:50]!r}{'...' if len(t) > 50 else ''})"
    return None


def check_parse_words(texts: Sequence[str], parses: Sequence[Any], kind: str, what: str) -> None:
    """Refuse given parses of another text (:func:`first_word_mismatch`) with a :class:`ParseMismatchError`."""
    bad = first_word_mismatch(texts, [_tree_words(v, kind) for v in parses])
    if bad is not None:
        raise ParseMismatchError(f"{what}[{bad[0]}] does not hold the words of its text {bad[1]}: these parses "
                                 f"belong to another text (give the parses of these lines, or None to have them made)")


class Corpus:
    """Hypotheses and references of one system, with whatever parses are available.

    ``hyps[i]`` is segment ``i``'s hypothesis text; ``refs`` follow the reference layout of the module docstring
    (``ref_layout="streams"`` for sacrebleu's). ``hyp_ptb`` / ``ref_ptb`` (bracketed parse strings, ``None`` for
    unparsed; ``ref_ptb[i]`` = list, same layout as ``refs``), ``hyp_dep`` / ``ref_dep`` (spaCy dependency parses:
    the spaCy backend's JSON strings or :class:`~syneval_nb.trees.heads.DependencyTree` objects) and ``hyp_rst`` /
    ``ref_rst`` (RST trees as dicts) may be given; :meth:`ptb`, :meth:`dep` and :meth:`rst` make the missing ones
    through the persistent cache (``cache``: as :func:`syneval_nb.parsers.cache.open_cache` reads it; ``workers`` parser
    processes). ``failures`` records the sentences without a parse: ``{("ptb"|"dep"|"rst", "hyp"|"ref k"): [0-based
    line numbers]}``; ``failure_reasons`` the causes the parser gave, same keys: ``{(kind, side): {line: cause}}``
    (e.g. ``"sentence 2 of 2 has 212 tokens > max_length 200"``; parses made here, not given ones).
    ``parse_source`` / ``dep_source`` name where the parses came from (a parse source such as
    :attr:`syneval_nb.parsers.frontend.ParseReport.source`, or ``"given"``).

    Given constituency parses and RST trees are checked against their texts (``check_words=True``: each must hold
    the words of its line, :func:`check_parse_words`; a :class:`ParseMismatchError` names the first that does not):
    the parses of other lines are refused, not scored. ``check_words=False`` is for tree-only input whose texts are
    placeholders (:meth:`of`).
    """

    def __init__(self, hyps: Sequence[str], refs: Any, *, hyp_ptb: Sequence[str | None] | None = None,
                 ref_ptb: Any = None, hyp_rst: Sequence[Any] | None = None, ref_rst: Any = None,
                 ref_layout: str | None = None, workers: int = 1, cache: Any = True, progress: bool = False,
                 parse_source: str | None = None, hyp_dep: Sequence[Any] | None = None, ref_dep: Any = None,
                 dep_source: str | None = None, check_words: bool = True) -> None:
        self.hyps = _as_list(hyps, "hyps")
        for i, h in enumerate(self.hyps):
            if not isinstance(h, str):
                raise TypeError(f"hypothesis {i} is {type(h).__name__}, not str"
                                + (": give texts, or trees to a metric that reads trees" if isinstance(
                                    h, (Tree, FlatTree, DependencyTree, Mapping)) else ""))
        n = len(self.hyps)
        self.refs = normalize_refs(refs, n, ref_layout)
        for i, rs in enumerate(self.refs):
            for k, r in enumerate(rs):
                if not isinstance(r, str):
                    raise TypeError(f"reference {k} of segment {i} is {type(r).__name__}, not str: give reference "
                                    "texts (their parses go to ref_ptb / ref_rst)")
        ref_layout = ref_layout or "segments"  # the trees follow the texts' layout
        self.hyp_ptb = None if hyp_ptb is None else _as_list(hyp_ptb, "hyp_ptb")
        self.ref_ptb = None if ref_ptb is None else normalize_refs(ref_ptb, n, ref_layout)
        self.hyp_rst = None if hyp_rst is None else _as_list(hyp_rst, "hyp_rst")
        self.ref_rst = None if ref_rst is None else normalize_refs(ref_rst, n, ref_layout)
        self.hyp_dep = None if hyp_dep is None else _as_list(hyp_dep, "hyp_dep")
        self.ref_dep = None if ref_dep is None else normalize_refs(ref_dep, n, ref_layout)
        for what, v in (("hyp_ptb", self.hyp_ptb), ("hyp_rst", self.hyp_rst), ("hyp_dep", self.hyp_dep)):
            if v is not None and len(v) != n:
                raise ValueError(f"{what} has {len(v)} entries for {n} segments")
        if check_words:
            for kind in ("ptb", "rst"):
                hv, rv = getattr(self, f"hyp_{kind}"), getattr(self, f"ref_{kind}")
                if hv is not None:
                    check_parse_words(self.hyps, hv, kind, f"hyp_{kind}")
                if rv is not None:
                    for i, (ts, ps) in enumerate(zip(self.refs, rv)):
                        if len(ps) != len(ts):
                            raise ValueError(f"ref_{kind}[{i}] has {len(ps)} entries for {len(ts)} references")
                        check_parse_words(ts, ps, kind, f"ref_{kind}[{i}]")
        self.workers, self.cache, self.progress = workers, cache, progress
        self.parse_source = parse_source or ("given" if hyp_ptb is not None else None)
        self.dep_source = dep_source or ("given" if hyp_dep is not None else None)
        self.failures: dict[tuple[str, str], list[int]] = {}
        self.failure_reasons: dict[tuple[str, str], dict[int, str]] = {}  # same keys: {line: the parser's cause}

    def __len__(self) -> int:
        return len(self.hyps)

    @classmethod
    def of(cls, hyps: Any, refs: Any, *, ref_layout: str | None = None, kind: str = "text") -> "Corpus":
        """A corpus from what a metric was given: texts, or -- for a parse-based metric (``kind="ptb"``) -- trees
        (``nltk.Tree`` / :class:`~syneval_nb.trees.ptb.FlatTree`, ``None`` for unparsed), or for a discourse metric
        (``kind="rst"``) RST trees as dicts, or for a spaCy-dependency metric (``kind="dep"``)
        :class:`~syneval_nb.trees.heads.DependencyTree` objects or the spaCy backend's JSON strings. Given trees are
        used as they are; texts are parsed when needed."""
        hyps = _as_list(hyps, "hyps")
        given = kind != "text" and (any(not isinstance(h, str) for h in hyps) or _holds_trees(refs, kind))
        if not given:
            return cls(hyps, refs, ref_layout=ref_layout)
        if kind == "ptb":  # trees given: a string beside them is a bracketed parse, read here or refused
            hyps = [_as_tree(h, f"hypothesis {i}") for i, h in enumerate(hyps)]
        ok = {"ptb": (Tree, FlatTree, str, type(None)), "dep": (DependencyTree, str, type(None))}.get(
            kind, (Mapping, type(None)))
        for i, h in enumerate(hyps):
            if not isinstance(h, ok):
                raise TypeError(f"hypothesis {i} is {type(h).__name__}: give texts, or {kind} trees")
        if kind == "ptb" and isinstance(refs, Tree):
            raise TypeError("refs must be a list of trees (one per reference), not a single tree")
        trees = normalize_refs(refs, len(hyps), ref_layout)
        if kind == "ptb":
            trees = [[_as_tree(r, f"a reference of segment {i}") for r in rs] for i, rs in enumerate(trees)]
        texts, ref_texts = [""] * len(hyps), [[""] * len(rs) for rs in trees]  # placeholders: the trees are scored
        if kind == "ptb":
            return cls(texts, ref_texts, hyp_ptb=hyps, ref_ptb=trees, parse_source="given", ref_layout="segments",
                       check_words=False)
        if kind == "dep":
            return cls(texts, ref_texts, hyp_dep=hyps, ref_dep=trees, dep_source="given", ref_layout="segments",
                       check_words=False)
        return cls(texts, ref_texts, hyp_rst=hyps, ref_rst=trees, ref_layout="segments", check_words=False)

    @property
    def n_refs(self) -> set[int]:
        return {len(r) for r in self.refs}

    def ptb(self) -> tuple[list[str | None], list[list[str | None]]]:
        """Hypothesis and reference parses (made through the cache if missing)."""
        if self.hyp_ptb is None or self.ref_ptb is None:
            prepare([self], ("ptb",), workers=self.workers, cache=self.cache, progress=self.progress)
        return self.hyp_ptb, self.ref_ptb  # type: ignore[return-value]

    def dep(self) -> tuple[list[Any], list[list[Any]]]:
        """Hypothesis and reference spaCy dependency parses (made through the cache if missing)."""
        if self.hyp_dep is None or self.ref_dep is None:
            prepare([self], ("dep",), workers=self.workers, cache=self.cache, progress=self.progress)
        return self.hyp_dep, self.ref_dep  # type: ignore[return-value]

    def rst(self) -> tuple[list[Any], list[list[Any]]]:
        """Hypothesis and reference RST trees (made through the cache if missing)."""
        if self.hyp_rst is None or self.ref_rst is None:
            prepare([self], ("rst",), workers=self.workers, cache=self.cache, progress=self.progress)
        return self.hyp_rst, self.ref_rst  # type: ignore[return-value]

    def _record_failures(self, kind: str) -> None:
        hyp, ref = getattr(self, f"hyp_{kind}"), getattr(self, f"ref_{kind}")
        self.failures[(kind, "hyp")] = [i for i, v in enumerate(hyp) if _missing(v)]
        for k in range(max(self.n_refs)):
            self.failures[(kind, f"ref {k}")] = [i for i, rs in enumerate(ref) if k < len(rs) and _missing(rs[k])]


def _holds_trees(refs: Any, kind: str) -> bool:
    """Whether ``refs`` (any layout) holds a tree object of ``kind`` (then the metric was given trees)."""
    kinds = {"ptb": (Tree, FlatTree), "dep": (DependencyTree,), "rst": (Mapping,)}.get(kind, ())
    if isinstance(refs, kinds):
        return True
    if isinstance(refs, (str, bytes)) or not hasattr(refs, "__iter__"):
        return False
    for r in refs:
        if isinstance(r, kinds):
            return True
        if not isinstance(r, (str, bytes, Tree)) and hasattr(r, "__iter__") and any(isinstance(x, kinds) for x in r):
            return True
    return False


def _as_tree(v: Any, what: str) -> Any:
    """A string beside given trees: a bracketed parse (read now; an empty one is unparsed), or a clear error."""
    if not isinstance(v, str):
        return v
    if not v.strip() or is_empty_parse(v):
        return None
    try:
        return read_ptb_flat(v)
    except TreeFormatError as e:
        raise TypeError(f"{what} is the string {v[:40]!r}{'...' if len(v) > 40 else ''} beside trees, and not a "
                        f"bracketed parse ({str(e).splitlines()[0]}): give trees (or parse strings) for every "
                        f"hypothesis and reference, or texts for all of them") from None


def _missing(v: Any) -> bool:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return True
    if isinstance(v, str):

        return not v.strip() or is_empty_parse(v)
    if isinstance(v, DependencyTree):
        return len(v) == 0
    return False


def Segment(hyp: str, refs: Sequence[str], **parses: Any) -> Corpus:
    """One segment as a one-line :class:`Corpus`: ``Segment(hyp, refs, hyp_ptb=..., ref_ptb=[...])``."""
    one = {k: ([v] if k.startswith("hyp_") else [v]) for k, v in parses.items()}
    return Corpus([hyp], [list(refs) if not isinstance(refs, str) else [refs]], **one)


def prepare(corpora: Sequence[Corpus], inputs: Sequence[str], *, workers: int = 1, cache: Any = True,
            progress: bool = True, scheduler: Any = None, rst_syntax: str = "kit", max_length: int | None = None,
            split: str | None = None) -> None:
    """Fill the missing parses (``"ptb"``: Stanford; ``"dep"``: spaCy dependency parses, no Java) and RST trees
    (``"rst"``) of several corpora with one parser call each
    (all sentences of every corpus together: each distinct sentence is parsed once, through the cache).
    ``scheduler``: a Dask scheduler address or ``distributed.Client`` to parse on (the cache is still written here).

    ``rst_syntax``: who makes the RST parser's syntax parses: ``"kit"`` (default) the kit's long-lived
    ``ParserDemo`` workers through the cache (:func:`syneval_nb.parsers.frontend.parse_rst`), ``"package"`` the
    package's own JVM per RST worker (the path before issue 23; the trees are the same). With ``"kit"`` and both
    ``"ptb"`` and ``"rst"``, one program parses each line once for both (its one-line tree and the RST parser's
    record, :func:`syneval_nb.parsers.stanford.combined_parser`; the same workers, local or on the cluster).

    ``max_length`` / ``split``: the Stanford parse's length limit and mode (``None``: the kit's defaults; see
    :func:`syneval_nb.parsers.frontend.parse_strings`); refused when no input needs a Stanford parse.

    Raises :class:`syneval_nb.parsers.stanford.ParserSetupError` when the parser cannot run (e.g. no Java)."""
    if "ptb" not in inputs and (max_length is not None or split is not None):
        raise ValueError("max_length and split are options of the Stanford parse, and no metric asked for needs one "
                         "(spaCy parses every line whatever its length)")
    both = (combined_parser(workers, max_length=max_length) if {"ptb", "rst"} <= set(inputs) and rst_syntax == "kit"
            else None)
    options = {"max_length": max_length, "split": split}

    def sentences(backend: str):
        def parse(uniq: list[str]):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # failures are reported per corpus (Corpus.failures)
                return parse_strings(uniq, backend=backend, workers=workers, cache=cache, progress=progress,
                                     scheduler=scheduler, parser=both if backend == "stanford" else None,
                                     **(options if backend == "stanford" else {}))
        return parse

    try:
        if "ptb" in inputs:
            _fill(corpora, "ptb", sentences("stanford"))
        if "dep" in inputs:
            _fill(corpora, "dep", sentences("spacy"))
        if "rst" in inputs:
            _fill(corpora, "rst", lambda uniq, why: parse_rst(uniq, workers=workers, cache=cache, progress=progress,
                                                              scheduler=scheduler, syntax=rst_syntax, parser=both,
                                                              failures=why))
    finally:
        if both is not None:
            both.close()


def _fill(corpora: Sequence[Corpus], kind: str, parse_fn) -> None:
    """Give every corpus lacking ``hyp_<kind>`` / ``ref_<kind>`` its parses: the distinct non-empty sentences of
    all those corpora go to ``parse_fn`` once; then each corpus records its failures."""
    hyp_a, ref_a = f"hyp_{kind}", f"ref_{kind}"
    todo = [c for c in corpora if getattr(c, hyp_a) is None or getattr(c, ref_a) is None]
    if todo:
        texts: list[str] = []
        for c in todo:
            if getattr(c, hyp_a) is None:
                texts += c.hyps
            if getattr(c, ref_a) is None:
                texts += [r for rs in c.refs for r in rs]
        uniq = list(dict.fromkeys(t for t in texts if t.strip()))
        why: dict[int, str] = {}
        got = parse_fn(uniq, why) if kind == "rst" else parse_fn(uniq)
        table = dict(zip(uniq, got))
        source = got.report.source if hasattr(got, "report") else None
        reasons = {uniq[i]: r for i, r in (got.report.failures if hasattr(got, "report") else why).items()}
        for c in todo:
            if getattr(c, hyp_a) is None:
                setattr(c, hyp_a, [table.get(h) for h in c.hyps])
                c.failure_reasons[(kind, "hyp")] = {i: reasons[h] for i, h in enumerate(c.hyps) if h in reasons}
            if getattr(c, ref_a) is None:
                setattr(c, ref_a, [[table.get(r) for r in rs] for rs in c.refs])
                for k in range(max(c.n_refs)):
                    c.failure_reasons[(kind, f"ref {k}")] = {i: reasons[rs[k]] for i, rs in enumerate(c.refs)
                                                             if k < len(rs) and rs[k] in reasons}
            if kind == "ptb":
                c.parse_source = c.parse_source or source or "stanford"
            elif kind == "dep":
                c.dep_source = c.dep_source or source or "spacy"
    for c in corpora:
        c._record_failures(kind)


# ============================================================================================== metrics


class Metric:
    """The one base of every metric of the kit (see the module docstring), sacrebleu's shape. A family defines

    * ``name``, ``inputs`` (among ``"text"``, ``"ptb"``, ``"rst"``) and ``higher_is_better``;
    * ``_options() -> dict``: every option that changes the number, in signature order;
    * ``_corpus_stats(corpus) -> (n, k) array``: one statistics row per segment, a row of NaN where the segment
      cannot be scored (e.g. unparsed);
    * ``score_from_stats(sums) -> scores``: the score of summed rows, vectorised over rows (``(B, k) -> (B,)``);
    * optionally ``_parts(sums) -> dict`` (the parts of a corpus score), ``_check_sentence(corpus)`` and
      ``_sentence_extras(corpus, score)`` (what a sentence-level :class:`Score` adds: explain, draw, parts).

    Everything else -- ``segment_stats``, ``sentence_scores``, ``sentence_score``, ``corpus_score``,
    ``corpus_from_stats`` and ``signature`` -- is defined here once."""

    name = ""
    inputs: tuple[str, ...] = ("text",)
    higher_is_better = True

    def __init__(self) -> None:
        self._nrefs: set[int] = set()
        self._parse_source: str | None = None

    # -- signature ------------------------------------------------------------------------------------------
    def _options(self) -> dict[str, Any]:
        return {}

    def signature(self) -> str:
        """``name|option:value|...|nrefs:N|version:syneval-nb-X``: every option that changes the number; ``nrefs``
        (``var`` if it varied) and, for parse-based metrics, ``parses`` (the parser) after the first scoring call."""
        opts = dict(self._options())
        if self._nrefs:
            nr = sorted(self._nrefs)
            opts["nrefs"] = str(nr[0]) if len(nr) == 1 else "var"
        if self._parse_source and ("ptb" in self.inputs or
                                   ("dep" in self.inputs and self._parse_source != opts.get("deps"))):
            opts["parses"] = self._parse_source  # (spaCy parses made by the kit: the ``deps`` field names them)
        # a decay variant ("TKM λ=0.4") signs with its family name: the lam field tells the variants apart
        return make_signature(self.name.split(" λ=")[0], opts)

    # -- the statistics protocol ----------------------------------------------------------------------------
    def _corpus_stats(self, corpus: Corpus) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def segment_stats(self, hyps: Any, refs: Any = None, *, ref_layout: str | None = None) -> np.ndarray:
        """Sufficient statistics, one row per segment; an unscorable segment is a row of NaN."""
        corpus = self._as_corpus(hyps, refs, ref_layout)
        stats = np.asarray(self._corpus_stats(corpus), dtype=float)
        self._nrefs = corpus.n_refs
        self._parse_source = corpus.dep_source if "dep" in self.inputs else corpus.parse_source
        return stats

    def score_from_stats(self, sums: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        """Scores of summed statistics rows (shape (B, k) -> (B,)), e.g. bootstrap resamples."""
        raise NotImplementedError

    def _parts(self, sums: np.ndarray) -> dict:
        return {}

    def _corpus_detail(self, sums: np.ndarray) -> tuple[float, dict]:
        """Score and parts of one summed statistics row."""
        return float(self.score_from_stats(sums[None, :])[0]), self._parts(sums)

    def corpus_from_stats(self, stats: np.ndarray) -> Score:
        """The corpus :class:`Score` of a statistics matrix (NaN rows are left out and counted as missing)."""
        stats = np.atleast_2d(np.asarray(stats, dtype=float))
        bad = np.isnan(stats).any(axis=1)
        sums = np.where(bad[:, None], 0.0, stats).sum(axis=0)
        score, parts = self._corpus_detail(sums)
        if len(stats) and bad.all():
            score = math.nan
        return Score(self.name, score, parts, self.signature(), len(stats), int(bad.sum()))

    # -- public API ---------------------------------------------------------------------------------------------
    def corpus_score(self, hyps: Any, refs: Any = None, *, ref_layout: str | None = None) -> Score:
        """Corpus score (summed statistics, or the mean sentence score for kernel metrics)."""
        stats = self.segment_stats(hyps, refs, ref_layout=ref_layout)
        if len(stats) == 0:
            raise ValueError(f"{self.name}: no segments to score")
        return self.corpus_from_stats(stats)

    def segment_scores(self, stats: np.ndarray) -> np.ndarray:
        """Each segment's score from its own statistics row (NaN where the row is NaN: unscorable)."""
        stats = np.asarray(stats, dtype=float)
        out = np.full(len(stats), np.nan)
        ok = ~np.isnan(stats).any(axis=1) if stats.ndim == 2 else np.zeros(0, bool)
        if ok.any():
            out[ok] = self.score_from_stats(stats[ok])
        return out

    def sentence_scores(self, hyps: Any, refs: Any = None, *, ref_layout: str | None = None) -> np.ndarray:
        """Every segment's score at once (NaN where unscorable)."""
        return self.segment_scores(self.segment_stats(hyps, refs, ref_layout=ref_layout))

    def sentence_score(self, hyp: Any, refs: Any = None) -> Score:
        """One segment's :class:`Score` (``hyp`` with ``refs`` its references, or a :class:`Segment`)."""
        if isinstance(hyp, Corpus):
            corpus = self._as_corpus(hyp, refs, "segments")
        else:
            if refs is None:
                raise TypeError("refs are missing (pass hyp and its references, or a Segment)")
            if isinstance(refs, (Tree, FlatTree)):
                raise TypeError("refs must be a list of trees (one per reference), not a single tree")
            if isinstance(refs, (str, Mapping)) or not hasattr(refs, "__len__"):
                refs = [refs]
            elif len(refs) == 0:
                raise ValueError(f"{self.name}: no references given")
            corpus = self._as_corpus([hyp], [list(refs)], "segments")
        if len(corpus) != 1:
            raise ValueError(f"sentence_score takes one segment, got {len(corpus)}")
        self._check_sentence(corpus)
        s = self.corpus_from_stats(self.segment_stats(corpus))
        self._sentence_extras(corpus, s)
        return s

    def _check_sentence(self, corpus: Corpus) -> None:
        pass

    def _sentence_extras(self, corpus: Corpus, score: Score) -> None:
        pass

    def _as_corpus(self, hyps: Any, refs: Any, ref_layout: str | None) -> Corpus:
        if isinstance(hyps, Corpus):
            if refs is not None:
                raise TypeError("pass either a Corpus or (hyps, refs), not both")
            return hyps
        if refs is None:
            raise TypeError("refs are missing (pass hyps and refs, or a Corpus)")
        return Corpus.of(hyps, refs, ref_layout=ref_layout, kind=self.inputs[-1])

    def __repr__(self) -> str:
        return f"<metric {self.name}: {self.signature()}>"


# ============================================================================================== scoring


_SCRATCH = {"_info"}  # NIST's information weights: recomputed by every segment_stats call, not sent back


def _system_stats(item: tuple, metrics: Sequence[Metric]) -> tuple:
    """One system's statistics by every metric (a task of the Dask path of :func:`score_systems`), with the state
    each call leaves on its metric object (``signature()``'s reference count, METEOR's ``last_inexact``). The
    worker's tasks share the scattered metric objects, so each task scores with its own copies."""
    system, corpus = item
    metrics = copy.deepcopy(list(metrics))
    out = [(m.segment_stats(corpus), {k: v for k, v in vars(m).items() if k not in _SCRATCH}) for m in metrics]
    return system, out


def score_systems(metrics: Sequence[Metric], corpora: Mapping[str, Corpus], *, progress: bool = False,
                  scheduler: Any = None) -> list[dict[str, np.ndarray]]:
    """The kit's one scoring loop: every metric's statistics on every system, one ``{system: (n, k) matrix}`` per
    metric, in the order of ``metrics`` (:meth:`Metric.segment_stats`). Segment scores come from a matrix by
    :meth:`Metric.segment_scores`, corpus scores by :meth:`Metric.corpus_from_stats`, bootstrap resamples by
    weighting its rows. :func:`syneval_nb.evaluate.evaluate` and :func:`score_rows` (the chapters, the
    combinations) call it.

    ``scheduler`` (a Dask scheduler address or ``distributed.Client``): one task per system on that cluster
    (:func:`syneval_nb.parsers.dask.map_tasks`), the metric objects sent to each worker once; the numbers are the
    local run's.

    >>> from syneval_nb.metrics import get
    >>> bleu = get("BLEU")
    >>> stats = score_systems([bleu], {"A": Corpus(["the cat sat on the mat"], [["the cat sat on the mat"]])})
    >>> bleu.corpus_from_stats(stats[0]["A"]).score
    1.0
    """
    metrics = list(metrics)
    out: list[dict[str, np.ndarray]] = [{} for _ in metrics]
    if scheduler is not None:
        for system, results in dask_backend().map_tasks(scheduler, _system_stats, list(corpora.items()),
                                                        shared=[metrics], what="scores"):
            for k, (m, (stats, state)) in enumerate(zip(metrics, results)):
                vars(m).update(state)  # the state a call leaves on a metric object, as after a local call
                out[k][system] = stats
        return out
    todo = [(k, s) for k in range(len(metrics)) for s in corpora]
    for k, s in tqdm(todo, desc="scoring", disable=not progress, leave=False):
        out[k][s] = np.asarray(metrics[k].segment_stats(corpora[s]), dtype=float)
    return out


class RowScores(NamedTuple):
    """What :func:`score_rows` returns: ``segment`` (one column per metric key, aligned with the rows; NaN where
    unscorable), ``corpus`` (one row per system, in order of appearance: each metric's corpus score of that
    system's rows, from summed statistics; kernel metrics: the mean) and ``stats`` (``{metric key: {system:
    statistics matrix}}``, for resampling or the counts a family keeps in its statistics)."""

    segment: pd.DataFrame
    corpus: pd.DataFrame
    stats: dict


def score_rows(metrics: Mapping[str, Metric], hyps: Sequence[str], refs: Sequence[Sequence[str]],
               systems: Sequence[str] | None = None, *, progress: bool = False, scheduler: Any = None,
               **parses: Any) -> RowScores:
    """Rows of several systems, scored by :func:`score_systems`: ``systems[i]`` names the system of row ``i``
    (default: one system ``"all"``), ``refs[i]`` its references; ``parses``: ``hyp_ptb``, ``ref_ptb``, ``hyp_rst``,
    ... aligned with the rows, as :class:`Corpus` takes them (a single string in ``refs`` is one reference). Each
    system is scored alone (NIST's information
    weights from that system's references). Returns a :class:`RowScores` ``(segment, corpus, stats)``."""
    if isinstance(systems, (str, bytes)):
        raise TypeError(f"systems must hold one label per row, got the single string {systems!r} (for one system: "
                        f"[{systems!r}] * len(hyps), or systems=None)")
    labels = np.asarray(["all"] * len(hyps) if systems is None else list(systems), dtype=object)
    if len(labels) != len(hyps):
        raise ValueError(f"systems has {len(labels)} labels for {len(hyps)} hypotheses")
    index = {s: np.flatnonzero(labels == s) for s in pd.unique(labels)}
    corpora = {s: Corpus([hyps[i] for i in idx], [refs[i] for i in idx], ref_layout="segments",
                         **{k: None if v is None else [v[i] for i in idx] for k, v in parses.items()})
               for s, idx in index.items()}
    stats = dict(zip(metrics, score_systems(list(metrics.values()), corpora, progress=progress,
                                            scheduler=scheduler)))
    segment = {k: np.full(len(labels), np.nan) for k in metrics}
    corpus: dict[str, dict[str, float]] = {}
    for s, idx in index.items():
        corpus[s] = {}
        for k, m in metrics.items():
            segment[k][idx] = m.segment_scores(stats[k][s])
            corpus[s][k] = m.corpus_from_stats(stats[k][s]).score
    frame = pd.DataFrame.from_dict(corpus, orient="index", columns=list(metrics))
    frame.index.name = "system"
    return RowScores(pd.DataFrame(segment, index=range(len(labels))), frame, stats)


def depth_scores(M: np.ndarray, T: np.ndarray, effective_order: bool, epsilon: float | None) -> np.ndarray:
    """:func:`syneval_nb.metrics.syntactic.depth_score` over rows (matches and totals per depth, shape (B, D))."""
    M, T = np.atleast_2d(M).astype(float), np.atleast_2d(T).astype(float)
    pos = T > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.where(pos, M / np.where(pos, T, 1.0), 0.0)
    use = pos if effective_order else np.ones_like(pos)
    if epsilon is not None:
        p = np.where(p == 0.0, epsilon, p)
    cnt = use.sum(axis=1)
    num = np.where(use, p, 0.0).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(cnt > 0, num / np.maximum(cnt, 1), np.nan)


def mean_rows(sums: np.ndarray) -> np.ndarray:
    """Scores of ``[sum of scores, count]`` rows: the mean (the corpus score of the kernel metrics)."""
    sums = np.atleast_2d(sums)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(sums[:, 1] > 0, sums[:, 0] / np.where(sums[:, 1] > 0, sums[:, 1], 1.0), np.nan)
