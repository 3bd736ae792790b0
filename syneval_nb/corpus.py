"""Corpora: hypotheses, references and their parses, prepared for the metrics (the layer between ``parsers/`` and
``metrics/``). A metric sees the trees and texts of a :class:`Corpus`; parsing happens here: :func:`prepare` fills
the missing parses of several corpora at once through the parse cache, and a corpus asked for parses it lacks
(:meth:`Corpus.ptb`, ``dep``, ``rst``) prepares itself. The metrics take the parsers' outputs from here, never from
``parsers/``.

**Reference layout** (stated once): ``refs[i]`` is the list of references of segment ``i`` -- sacrebleu's reference
streams transposed. Sacrebleu's layout (``refs[k][i]`` = reference ``k`` of segment ``i``) is accepted only with
``ref_layout="streams"``; a list of references whose length is not the number of segments is refused with an error
that names both layouts, and so is input that fits both layouts differently (as many references per segment as
there are segments) unless ``ref_layout`` says which.
"""
from __future__ import annotations

import math
import warnings
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from syneval_nb.parsers.frontend import dask_backend, parse_rst, parse_strings
from syneval_nb.parsers.spacy import dependency_tree, spacy_backend_key
from syneval_nb.parsers.stanford import combined_parser
from syneval_nb.trees.heads import DependencyTree
from syneval_nb.trees.ptb import (FlatTree, TreeFormatError, is_empty_parse, nltk_tree_class, read_ptb_flat,
                                  same_words)
from syneval_nb.trees.rst import edus


if TYPE_CHECKING:  # annotations only: nltk (with scikit-learn) is imported where a tree is made (trees.ptb)
    from nltk import Tree


__all__ = ["Corpus", "Segment", "prepare"]


def map_on_cluster(scheduler: Any, fn: Callable, items: Sequence, shared: Sequence = (), what: str = "scoring") -> list:
    """``[fn(item, *shared) for item in items]`` on a Dask cluster, in order (``parsers.dask.map_tasks``)."""
    return dask_backend().map_tasks(scheduler, fn, items, shared=shared, what=what)


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
        if isinstance(r, (str, bytes, Mapping, nltk_tree_class(), FlatTree)) or r is None or not hasattr(r, "__len__"):
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
        one = isinstance(r, (str, Mapping, nltk_tree_class(), FlatTree)) or r is None
        rs = [r] if one else _as_list(r, f"refs[{i}]")
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
        if isinstance(v, nltk_tree_class()):
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
                                    h, (nltk_tree_class(), FlatTree, DependencyTree, Mapping)) else ""))
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
        ok = {"ptb": (nltk_tree_class(), FlatTree, str, type(None)), "dep": (DependencyTree, str, type(None))}.get(
            kind, (Mapping, type(None)))
        for i, h in enumerate(hyps):
            if not isinstance(h, ok):
                raise TypeError(f"hypothesis {i} is {type(h).__name__}: give texts, or {kind} trees")
        if kind == "ptb" and isinstance(refs, nltk_tree_class()):
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

    def _parses(self, kind: str) -> tuple[list[Any], list[list[Any]]]:
        """Hypothesis and reference parses of ``kind`` (made through the cache if missing)."""
        if getattr(self, f"hyp_{kind}") is None or getattr(self, f"ref_{kind}") is None:
            prepare([self], (kind,), workers=self.workers, cache=self.cache, progress=self.progress)
        return getattr(self, f"hyp_{kind}"), getattr(self, f"ref_{kind}")

    def ptb(self) -> tuple[list[str | None], list[list[str | None]]]:
        """Hypothesis and reference constituency parses (made through the cache if missing)."""
        return self._parses("ptb")

    def dep(self) -> tuple[list[Any], list[list[Any]]]:
        """Hypothesis and reference spaCy dependency parses (made through the cache if missing)."""
        return self._parses("dep")

    def rst(self) -> tuple[list[Any], list[list[Any]]]:
        """Hypothesis and reference RST trees (made through the cache if missing)."""
        return self._parses("rst")

    def _record_failures(self, kind: str) -> None:
        hyp, ref = getattr(self, f"hyp_{kind}"), getattr(self, f"ref_{kind}")
        self.failures[(kind, "hyp")] = [i for i, v in enumerate(hyp) if _missing(v)]
        for k in range(max(self.n_refs)):
            self.failures[(kind, f"ref {k}")] = [i for i, rs in enumerate(ref) if k < len(rs) and _missing(rs[k])]


def _holds_trees(refs: Any, kind: str) -> bool:
    """Whether ``refs`` (any layout) holds a tree object of ``kind`` (then the metric was given trees)."""
    kinds = {"ptb": (nltk_tree_class(), FlatTree), "dep": (DependencyTree,), "rst": (Mapping,)}.get(kind, ())
    if isinstance(refs, kinds):
        return True
    if isinstance(refs, (str, bytes)) or not hasattr(refs, "__iter__"):
        return False
    for r in refs:
        if isinstance(r, kinds):
            return True
        if not isinstance(r, (str, bytes, nltk_tree_class())) and hasattr(r, "__iter__") and any(isinstance(x, kinds)
                                                                                           for x in r):
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
    return Corpus([hyp], [list(refs) if not isinstance(refs, str) else [refs]], **{k: [v] for k, v in parses.items()})


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

