"""One face for every metric of the kit (lexical, syntactic, discourse, learned) and a registry.

Every metric is reached through :func:`get` and has the same shape, sacrebleu's:

* ``sentence_score(hyp, refs) -> Score``, ``corpus_score(hyps, refs) -> Score``, batch
  ``sentence_scores(hyps, refs) -> np.ndarray`` (NaN where a segment cannot be scored, e.g. an unparsed sentence;
  equal to ``sentence_score`` segment by segment, except NIST, whose information weights come from all the
  references scored together, as in :class:`syneval_nb.lexical.NIST`);
* ``signature() -> str``, built for every metric by the one function :func:`make_signature`;
* ``inputs``: what it consumes, among ``"text"``, ``"ptb"`` (constituency parses) and ``"rst"`` (RST trees);
* the statistics protocol behind the scores (used for bootstrap resampling by ``syneval-nb score`` and the report):
  ``segment_stats(corpus) -> (n, k)`` array whose rows, summed (or weighted and summed), give a corpus score through
  ``score_from_stats(sums)``; an unscorable segment is a row of zeros (it adds nothing) and is counted in
  ``Score.n_missing``.

**Name scheme** (stated once): a metric's name is its family name in the papers' spelling, followed for the depth
metrics by ``-D``, the maximum depth (chain length): ``BLEU``, ``NIST``, ``WER``, ``PER``, ``F-measure``, ``GTM``,
``ROUGE-S``, ``METEOR``, ``TER``, ``STM-4``, ``DSTM-4``, ``HWCM-4``, ``TKM``, ``DTKM``, ``DR``, ``DR-lex``,
``Learned``. :func:`parse_name` maps every other spelling onto it: case and ``_``/``-`` are ignored (``stm_4``,
``stm-4``, ``STM4``), a tuple ``("STM", 4)`` works, and a depth metric named without a depth (``"stm"``) takes its
family's default depth (:data:`syneval_nb.syntactic.DEFAULT_DEPTH`).

**Defaults** are the family modules' own (constructor defaults of :mod:`syneval_nb.lexical`,
:mod:`syneval_nb.syntactic`, :mod:`syneval_nb.discourse`); options passed to :func:`get` go to the family
constructor unchanged (``get("hwcm", depth=4, epsilon=1e-3)``, ``get("bleu", smooth="epsilon")``). The BLEU of
``get("bleu")`` is sacrebleu's ``corpus_bleu`` at corpus level (13a, exp smoothing), on the 0-1 scale.

**Reference layout** (stated once): ``refs[i]`` is the list of references of segment ``i`` -- sacrebleu's reference
streams transposed. Sacrebleu's layout (``refs[k][i]`` = reference ``k`` of segment ``i``) is accepted only with
``ref_layout="streams"``; a list of references whose length is not the number of segments is refused with an error
that names both layouts.

**Inputs.** Plain strings are texts. A :class:`Corpus` carries hypotheses, references and whatever parses are
available (PTB strings, RST trees); it makes the missing ones only when a metric needs them, through the persistent
parse cache (:func:`syneval_nb.parsing.parse_strings` with the Stanford parser; :func:`syneval_nb.discourse.parse_rst`).
Pass a :class:`Corpus` (or :class:`Segment`) anywhere a metric takes ``hyps`` / ``hyp``.
"""
from __future__ import annotations

import inspect
import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from . import __version__

__all__ = [
    "Score", "Metric", "Corpus", "Segment", "UnknownMetricError", "ReferenceLayoutError",
    "make_signature", "parse_name", "canonical_name", "get", "names", "register", "prepare",
]


# ============================================================================================== results


@dataclass
class Score:
    """One metric value: ``name`` (the canonical name), ``score``, ``parts`` (the family's parts: precisions,
    brevity penalty, per-depth fractions, ...), ``signature``, ``n`` (segments) and ``n_missing`` (segments that
    could not be scored and are left out, e.g. unparsed). ``detail`` is the family's own result (a
    :class:`~syneval_nb.syntactic.DepthResult`, :class:`~syneval_nb.syntactic.KernelResult`,
    :class:`~syneval_nb.lexical.LexicalScore`, ...): :meth:`explain` and :meth:`draw` go to it."""

    name: str
    score: float
    parts: dict = field(default_factory=dict)
    signature: str = ""
    n: int = 1
    n_missing: int = 0
    detail: Any = field(default=None, repr=False, compare=False)

    def __float__(self) -> float:
        return float(self.score)

    def explain(self):
        if self.detail is None or not hasattr(self.detail, "explain"):
            raise ValueError(f"{self.name}: this result has no explanation (sentence-level syntactic results do)")
        return self.detail.explain()

    def draw(self, depth: int = 2):
        if self.detail is None or not hasattr(self.detail, "draw"):
            raise ValueError(f"{self.name}: nothing to draw (only sentence-level STM and DSTM results draw)")
        return self.detail.draw(depth)

    def to_dict(self) -> dict:
        """JSON-ready, sacrebleu-shaped: ``name``, ``score``, ``signature``, ``n``, ``n_missing`` and the parts."""
        return {"name": self.name, "score": self.score, "signature": self.signature, "n": self.n,
                "n_missing": self.n_missing, **{k: _plain(v) for k, v in self.parts.items()}}


def _plain(v: Any) -> Any:
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, (tuple, list, np.ndarray)):
        return [_plain(x) for x in v]
    return v


def make_signature(name: str, options: Mapping[str, Any]) -> str:
    """The one signature format of every metric: ``name|key:value|...|version:syneval-nb-X`` (the options in the
    order given; every option that changes the number is one of them)."""
    parts = [name] + [f"{k}:{v}" for k, v in options.items() if k != "version"]
    return "|".join(parts + [f"version:syneval-nb-{__version__}"])


def _family_options(sig: str) -> dict[str, str]:
    """``key:value`` pairs of a family module's own signature (its first field, the name, and its version field
    dropped)."""
    out: dict[str, str] = {}
    for tok in sig.split("|")[1:]:
        if ":" in tok:
            k, v = tok.split(":", 1)
            if k != "version":
                out[k] = v
    return out


# ============================================================================================== inputs


class ReferenceLayoutError(ValueError):
    """The references are not laid out as ``refs[i]`` = the references of segment ``i``."""


def _as_list(x: Any, what: str) -> list:
    if isinstance(x, (str, bytes, set, frozenset, dict)):
        raise TypeError(f"{what} must be a sequence, got {type(x).__name__}")
    if hasattr(x, "tolist") and hasattr(x, "ndim"):
        return x.tolist()
    return list(x)


def normalize_refs(refs: Any, n_segments: int, layout: str = "segments") -> list[list[Any]]:
    """``refs`` as ``refs[i]`` = list of segment ``i``'s references.

    ``layout="segments"`` (the kit's): ``refs[i]`` holds segment ``i``'s references (a single string is one
    reference). ``layout="streams"`` (sacrebleu's): ``refs[k]`` is the ``k``-th reference of every segment.
    A layout that does not fit the number of segments raises :class:`ReferenceLayoutError`."""
    if layout not in ("segments", "streams"):
        raise ValueError(f"ref_layout must be 'segments' or 'streams', got {layout!r}")
    refs = _as_list(refs, "refs")
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
        rs = [r] if isinstance(r, str) or r is None or isinstance(r, Mapping) else _as_list(r, f"refs[{i}]")
        if not rs:
            raise ValueError(f"segment {i} has no reference")
        out.append(rs)
    return out


class Corpus:
    """Hypotheses and references of one system, with whatever parses are available.

    ``hyps[i]`` is segment ``i``'s hypothesis text; ``refs`` follow the reference layout of the module docstring
    (``ref_layout="streams"`` for sacrebleu's). ``hyp_ptb`` / ``ref_ptb`` (bracketed parse strings, ``None`` for
    unparsed; ``ref_ptb[i]`` = list, same layout as ``refs``) and ``hyp_rst`` / ``ref_rst`` (RST trees as dicts)
    may be given; :meth:`ptb` and :meth:`rst` make the missing ones through the persistent cache (``cache``:
    as :func:`syneval_nb.cache.open_cache` reads it; ``workers`` parser processes). ``failures`` records the
    sentences without a parse: ``{("ptb"|"rst", "hyp"|"ref k"): [0-based line numbers]}``.
    """

    def __init__(self, hyps: Sequence[str], refs: Any, *, hyp_ptb: Sequence[str | None] | None = None,
                 ref_ptb: Any = None, hyp_rst: Sequence[Any] | None = None, ref_rst: Any = None,
                 ref_layout: str = "segments", workers: int = 1, cache: Any = True, progress: bool = False,
                 parse_source: str | None = None) -> None:
        self.hyps = _as_list(hyps, "hyps")
        for i, h in enumerate(self.hyps):
            if not isinstance(h, str):
                raise TypeError(f"hypothesis {i} is {type(h).__name__}, not str")
        n = len(self.hyps)
        self.refs = normalize_refs(refs, n, ref_layout)
        self.hyp_ptb = None if hyp_ptb is None else _as_list(hyp_ptb, "hyp_ptb")
        self.ref_ptb = None if ref_ptb is None else normalize_refs(ref_ptb, n, ref_layout)
        self.hyp_rst = None if hyp_rst is None else _as_list(hyp_rst, "hyp_rst")
        self.ref_rst = None if ref_rst is None else normalize_refs(ref_rst, n, ref_layout)
        for what, v in (("hyp_ptb", self.hyp_ptb), ("hyp_rst", self.hyp_rst)):
            if v is not None and len(v) != n:
                raise ValueError(f"{what} has {len(v)} entries for {n} segments")
        self.workers, self.cache, self.progress = workers, cache, progress
        self.parse_source = parse_source or ("given" if hyp_ptb is not None else None)
        self.failures: dict[tuple[str, str], list[int]] = {}

    def __len__(self) -> int:
        return len(self.hyps)

    @property
    def n_refs(self) -> set[int]:
        return {len(r) for r in self.refs}

    def ptb(self) -> tuple[list[str | None], list[list[str | None]]]:
        """Hypothesis and reference parses (made through the cache if missing)."""
        if self.hyp_ptb is None or self.ref_ptb is None:
            prepare([self], ("ptb",), workers=self.workers, cache=self.cache, progress=self.progress)
        return self.hyp_ptb, self.ref_ptb  # type: ignore[return-value]

    def rst(self) -> tuple[list[Any], list[list[Any]]]:
        """Hypothesis and reference RST trees (made through the cache if missing)."""
        if self.hyp_rst is None or self.ref_rst is None:
            prepare([self], ("rst",), workers=self.workers, cache=self.cache, progress=self.progress)
        return self.hyp_rst, self.ref_rst  # type: ignore[return-value]

    def _record_failures(self, kind: str) -> None:
        hyp, ref = (self.hyp_ptb, self.ref_ptb) if kind == "ptb" else (self.hyp_rst, self.ref_rst)
        self.failures[(kind, "hyp")] = [i for i, v in enumerate(hyp) if _missing(v)]
        for k in range(max(self.n_refs)):
            self.failures[(kind, f"ref {k}")] = [i for i, rs in enumerate(ref) if k < len(rs) and _missing(rs[k])]


def _missing(v: Any) -> bool:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return True
    if isinstance(v, str):
        from .trees import is_empty_parse

        return not v.strip() or is_empty_parse(v)
    return False


def Segment(hyp: str, refs: Sequence[str], **parses: Any) -> Corpus:
    """One segment as a one-line :class:`Corpus`: ``Segment(hyp, refs, hyp_ptb=..., ref_ptb=[...])``."""
    one = {k: ([v] if k.startswith("hyp_") else [v]) for k, v in parses.items()}
    return Corpus([hyp], [list(refs) if not isinstance(refs, str) else [refs]], **one)


def prepare(corpora: Sequence[Corpus], inputs: Sequence[str], *, workers: int = 1, cache: Any = True,
            progress: bool = True, scheduler: Any = None) -> None:
    """Fill the missing parses (``"ptb"``) and RST trees (``"rst"``) of several corpora with one parser call each
    (all sentences of every corpus together: each distinct sentence is parsed once, through the cache).
    ``scheduler``: a Dask scheduler address or ``distributed.Client`` to parse on (the cache is still written here).

    Raises :class:`syneval_nb.parsing.ParserSetupError` when the parser cannot run (e.g. no Java)."""
    if "ptb" in inputs:
        def stanford(uniq: list[str]):
            from .parsing import parse_strings
            import warnings

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # failures are reported per corpus (Corpus.failures)
                return parse_strings(uniq, backend="stanford", workers=workers, cache=cache, progress=progress,
                                     scheduler=scheduler)

        _fill(corpora, "ptb", stanford)
    if "rst" in inputs:
        def rst(uniq: list[str]):
            from .discourse import parse_rst

            return parse_rst(uniq, workers=workers, cache=cache, progress=progress, scheduler=scheduler)

        _fill(corpora, "rst", rst)


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
        got = parse_fn(uniq)
        table = dict(zip(uniq, got))
        source = got.report.backend_key if hasattr(got, "report") else None
        for c in todo:
            if getattr(c, hyp_a) is None:
                setattr(c, hyp_a, [table.get(h) for h in c.hyps])
            if getattr(c, ref_a) is None:
                setattr(c, ref_a, [[table.get(r) for r in rs] for rs in c.refs])
            if kind == "ptb":
                c.parse_source = c.parse_source or source or "stanford"
    for c in corpora:
        c._record_failures(kind)


def _as_corpus(hyps: Any, refs: Any, ref_layout: str) -> Corpus:
    if isinstance(hyps, Corpus):
        if refs is not None:
            raise TypeError("pass either a Corpus or (hyps, refs), not both")
        return hyps
    if refs is None:
        raise TypeError("refs are missing (pass hyps and refs, or a Corpus)")
    return Corpus(hyps, refs, ref_layout=ref_layout)


# ============================================================================================== metrics


class Metric:
    """The common face (see the module docstring). Subclasses wrap one family object (``self.family``) and
    define ``inputs``, ``_stats(corpus) -> (n, k) array`` (NaN rows for unscorable segments),
    ``score_from_stats(sums) -> scores`` (vectorised over rows) and ``_corpus_detail(sums)``."""

    name = ""
    inputs: tuple[str, ...] = ("text",)
    higher_is_better = True

    def __init__(self, family: Any) -> None:
        self.family = family
        self._last: Corpus | None = None

    # -- signature ------------------------------------------------------------------------------------------
    def _options(self) -> dict[str, Any]:
        return _family_options(self.family.signature())

    def signature(self) -> str:
        opts = self._options()
        if self._last is not None:
            nr = sorted(self._last.n_refs)
            opts["nrefs"] = str(nr[0]) if len(nr) == 1 else "var"
            if "ptb" in self.inputs and self._last.parse_source:
                opts["parses"] = self._last.parse_source
        return make_signature(self.name, opts)

    # -- the statistics protocol ----------------------------------------------------------------------------
    def _stats(self, corpus: Corpus) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def segment_stats(self, hyps: Any, refs: Any = None, *, ref_layout: str = "segments") -> np.ndarray:
        """Sufficient statistics, one row per segment; an unscorable segment is a row of NaN."""
        corpus = _as_corpus(hyps, refs, ref_layout)
        self._last = corpus
        return np.asarray(self._stats(corpus), dtype=float)

    def score_from_stats(self, sums: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        """Scores of summed statistics rows (shape (B, k) -> (B,)), e.g. bootstrap resamples."""
        raise NotImplementedError

    def _corpus_detail(self, sums: np.ndarray) -> tuple[float, dict, Any]:
        return float(self.score_from_stats(sums[None, :])[0]), {}, None

    def corpus_from_stats(self, stats: np.ndarray) -> Score:
        """The corpus :class:`Score` of a statistics matrix (NaN rows are left out and counted as missing)."""
        stats = np.asarray(stats, dtype=float)
        bad = np.isnan(stats).any(axis=1)
        sums = np.where(bad[:, None], 0.0, stats).sum(axis=0)
        score, parts, detail = self._corpus_detail(sums)
        return Score(self.name, score, parts, self.signature(), len(stats), int(bad.sum()), detail)

    # -- public API ---------------------------------------------------------------------------------------------
    def corpus_score(self, hyps: Any, refs: Any = None, *, ref_layout: str = "segments") -> Score:
        """Corpus score (summed statistics, or the mean sentence score for kernel metrics)."""
        stats = self.segment_stats(hyps, refs, ref_layout=ref_layout)
        if len(stats) == 0:
            raise ValueError(f"{self.name}: no segments to score")
        return self.corpus_from_stats(stats)

    def sentence_scores(self, hyps: Any, refs: Any = None, *, ref_layout: str = "segments") -> np.ndarray:
        """Every segment's score at once (NaN where unscorable)."""
        stats = self.segment_stats(hyps, refs, ref_layout=ref_layout)
        out = np.full(len(stats), np.nan)
        ok = ~np.isnan(stats).any(axis=1)
        if ok.any():
            out[ok] = self.score_from_stats(stats[ok])
        return out

    def sentence_score(self, hyp: Any, refs: Any = None) -> Score:
        """One segment's :class:`Score` (``hyp`` a string with ``refs`` its references, or a :class:`Segment`)."""
        corpus = hyp if isinstance(hyp, Corpus) else _as_corpus([hyp], [refs] if refs is not None else None,
                                                                "segments")
        if len(corpus) != 1:
            raise ValueError(f"sentence_score takes one segment, got {len(corpus)}")
        return self._sentence(corpus)

    def _sentence(self, corpus: Corpus) -> Score:
        st = self.segment_stats(corpus)
        s = self.corpus_from_stats(st)
        return s

    def __repr__(self) -> str:
        return f"<metric {self.name}: {self.signature()}>"


# -- lexical -----------------------------------------------------------------------------------------------------


class LexicalMetric(Metric):
    inputs = ("text",)

    def __init__(self, family: Any) -> None:
        from .lexical import LOWER_IS_BETTER

        super().__init__(family)
        self.name = family.name
        self.higher_is_better = family.name not in LOWER_IS_BETTER

    def _options(self) -> dict[str, Any]:
        opts = _family_options(self.family.signature())
        opts.pop("nrefs", None)
        return opts

    def _stats(self, corpus: Corpus) -> np.ndarray:
        return self.family.segment_stats(corpus.hyps, corpus.refs)

    def score_from_stats(self, sums: np.ndarray) -> np.ndarray:
        return np.asarray(self.family._score_rows(np.atleast_2d(sums)), dtype=float)

    def _corpus_detail(self, sums: np.ndarray) -> tuple[float, dict, Any]:
        r = self.family.corpus_score_from_stats(sums[None, :])
        return float(r.score), dict(r.parts), r

    def _sentence(self, corpus: Corpus) -> Score:
        self.family._check_sentence(corpus.hyps[0], corpus.refs[0])
        return super()._sentence(corpus)


# -- syntactic ---------------------------------------------------------------------------------------------------


def _read_tree(s: Any):
    from .trees import read_ptb

    return None if _missing(s) else (read_ptb(s) if isinstance(s, str) else s)


def depth_scores(M: np.ndarray, T: np.ndarray, effective_order: bool, epsilon: float | None) -> np.ndarray:
    """:func:`syneval_nb.syntactic.depth_score` over rows (matches and totals per depth, shape (B, D))."""
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


class _SyntacticMetric(Metric):
    inputs = ("ptb",)

    def _refset_iter(self, corpus: Corpus):
        from .syntactic import Parse, _references

        hyp_ptb, ref_ptb = corpus.ptb()
        R = _references(ref_ptb, getattr(self.family, "depth", 1))
        for i, h in enumerate(hyp_ptb):
            yield Parse.from_ptb(h, R.space, where=f"segment {i}, hypothesis"), R.segments[i]


class DepthMetric(_SyntacticMetric):
    """STM / DSTM / HWCM: statistics ``[m_1..m_D, t_1..t_D]`` (clipped matches and totals per depth)."""

    def __init__(self, family: Any) -> None:
        super().__init__(family)
        self.name = f"{family.name}-{family.depth}"

    def _stats(self, corpus: Corpus) -> np.ndarray:
        D = self.family.depth
        out = np.full((len(corpus), 2 * D), np.nan)
        for i, (h, rs) in enumerate(self._refset_iter(corpus)):
            st = self.family.sentence_stats(h, rs)
            if st is not None:
                out[i, :D], out[i, D:] = st
        return out

    def score_from_stats(self, sums: np.ndarray) -> np.ndarray:
        D = self.family.depth
        sums = np.atleast_2d(sums)
        return depth_scores(sums[:, :D], sums[:, D:], self.family.effective_order, self.family.epsilon)

    def _result(self, sums: np.ndarray):
        from .syntactic import DepthResult

        D = self.family.depth
        f = self.family
        return DepthResult(f.name, tuple(int(round(x)) for x in sums[:D]), tuple(int(round(x)) for x in sums[D:]),
                           f.effective_order, f.epsilon, f.signature())

    def _corpus_detail(self, sums: np.ndarray) -> tuple[float, dict, Any]:
        r = self._result(sums)
        parts = {"fractions": list(r.fractions), "scores_by_depth": list(r.scores_by_depth),
                 "matches": list(r.matches), "totals": list(r.totals)}
        return float(r.score), parts, r

    def _sentence(self, corpus: Corpus) -> Score:
        s = super()._sentence(corpus)
        hyp_ptb, ref_ptb = corpus.ptb()
        if s.n_missing == 0:  # the family's own result: explain() and draw()
            s.detail = self.family.sentence_score(_read_tree(hyp_ptb[0]), [_read_tree(r) for r in ref_ptb[0]])
        return s


class KernelMetric(_SyntacticMetric):
    """TKM / DTKM: statistics ``[score, 1]`` (a cosine has no additive statistic: the corpus score is the mean)."""

    def __init__(self, family: Any) -> None:
        super().__init__(family)
        self.name = family.name

    def _stats(self, corpus: Corpus) -> np.ndarray:
        out = np.full((len(corpus), 2), np.nan)
        for i, (h, rs) in enumerate(self._refset_iter(corpus)):
            st = self.family.sentence_stats(h, rs)
            if st:
                out[i] = (max(st), 1.0)
        return out

    def score_from_stats(self, sums: np.ndarray) -> np.ndarray:
        return _mean_rows(sums)

    def _corpus_detail(self, sums: np.ndarray) -> tuple[float, dict, Any]:
        return float(_mean_rows(sums)[0]), {"n_scored": int(sums[1])}, None

    def _sentence(self, corpus: Corpus) -> Score:
        s = super()._sentence(corpus)
        hyp_ptb, ref_ptb = corpus.ptb()
        if s.n_missing == 0:
            r = self.family.sentence_score(_read_tree(hyp_ptb[0]), [_read_tree(x) for x in ref_ptb[0]])
            s.detail, s.parts = r, {"cosines": list(r.cosines), "best_ref": r.best_ref}
        return s


def _mean_rows(sums: np.ndarray) -> np.ndarray:
    sums = np.atleast_2d(sums)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(sums[:, 1] > 0, sums[:, 0] / np.where(sums[:, 1] > 0, sums[:, 1], 1.0), np.nan)


# -- discourse ---------------------------------------------------------------------------------------------------


class DiscourseMetric(Metric):
    """DR / DR-lex: statistics ``[score, 1]``; the corpus score is the mean (as the family's ``corpus_score``)."""

    inputs = ("rst",)

    def __init__(self, family: Any) -> None:
        super().__init__(family)
        self.name = family.name

    def _options(self) -> dict[str, Any]:
        return _family_options(self.family.signature())

    def _stats(self, corpus: Corpus) -> np.ndarray:
        hyp, ref = corpus.rst()
        scores = self.family.score_many(hyp, ref, missing="nan")
        return np.array([[s, 1.0] if not math.isnan(s) else [np.nan, np.nan] for s in scores]).reshape(-1, 2)

    score_from_stats = KernelMetric.score_from_stats
    _corpus_detail = KernelMetric._corpus_detail


# -- learned -----------------------------------------------------------------------------------------------------


class LearnedMetricFace(Metric):
    """Kulesza & Shieber's SVM metric (a fitted :class:`syneval_nb.learned.LearnedMetric`); corpus = mean."""

    name = "Learned"

    def __init__(self, family: Any) -> None:
        super().__init__(family)
        family._require_fitted()
        self.inputs = ("text", "ptb") if family.config.syntax else ("text",)

    def _options(self) -> dict[str, Any]:
        sig = self.family.signature()
        return {"model": sig.split("|")[0], **_family_options(sig), "format": sig.split("|")[-1]}

    def _stats(self, corpus: Corpus) -> np.ndarray:
        kw = {}
        if self.family.config.syntax:
            kw["hyp_trees"], kw["ref_trees"] = corpus.ptb()
        s = self.family.sentence_scores(corpus.hyps, corpus.refs, **kw)
        return np.column_stack([s, np.ones(len(s))]) if len(s) else np.zeros((0, 2))

    score_from_stats = KernelMetric.score_from_stats
    _corpus_detail = KernelMetric._corpus_detail


# ============================================================================================== registry


class UnknownMetricError(ValueError):
    """A metric name the registry does not know (the message lists the valid names)."""


@dataclass
class _Entry:
    name: str                       # canonical family name (without depth)
    factory: Callable[..., Metric]  # factory(**options) -> Metric
    depth: bool = False             # takes a depth (name "NAME-D")
    default_depth: int | None = None
    description: str = ""


_REGISTRY: dict[str, _Entry] = {}
_ALIASES: dict[str, str] = {}


def _key(s: str) -> str:
    return re.sub(r"[\s_\-]+", "", s.strip().lower())


def register(name: str, factory: Callable[..., Metric], *, aliases: Sequence[str] = (), depth: bool = False,
             default_depth: int | None = None, description: str = "") -> None:
    """Add a metric: ``factory(**options) -> Metric`` (for a depth metric, ``depth`` is one of the options)."""
    e = _Entry(name, factory, depth, default_depth, description)
    _REGISTRY[name] = e
    for a in (name, *aliases):
        _ALIASES[_key(a)] = name


def names() -> list[str]:
    """The registered metric names (depth metrics without their ``-D``)."""
    return list(_REGISTRY)


def _valid_names() -> str:
    return ", ".join(f"{n}[-D]" if e.depth else n for n, e in _REGISTRY.items())


def parse_name(spec: Any) -> tuple[str, int | None]:
    """``(family name, depth or None)`` for any spelling: ``"HWCM-4"``, ``"hwcm_4"``, ``"stm4"``, ``("STM", 4)``,
    ``"dr-lex"``, ``"bleu"``. A depth metric named without a depth gets its family default; a depth on a metric
    without depths, or an unknown name, raises :class:`UnknownMetricError` (listing the valid names)."""
    depth: int | None = None
    if isinstance(spec, tuple):
        if len(spec) != 2:
            raise UnknownMetricError(f"metric tuple must be (name, depth), got {spec!r}")
        spec, depth = spec[0], (None if spec[1] is None else int(spec[1]))
    if not isinstance(spec, str) or not spec.strip():
        raise UnknownMetricError(f"metric name must be a non-empty string, got {spec!r}; valid names: {_valid_names()}")
    k = _key(spec)
    name = _ALIASES.get(k)
    if name is None:
        m = re.fullmatch(r"(.*?)(\d+)", k)
        if m and _ALIASES.get(m.group(1)) and _REGISTRY[_ALIASES[m.group(1)]].depth:
            if depth is not None and depth != int(m.group(2)):
                raise UnknownMetricError(f"{spec!r} names depth {m.group(2)} but depth={depth} was given")
            name, depth = _ALIASES[m.group(1)], int(m.group(2))
    if name is None:
        raise UnknownMetricError(f"unknown metric {spec!r}; valid names: {_valid_names()}")
    e = _REGISTRY[name]
    if depth is not None and not e.depth:
        raise UnknownMetricError(f"{name} has no depth (got {spec!r} with depth {depth}); depth metrics: "
                                 + ", ".join(n for n, x in _REGISTRY.items() if x.depth))
    if e.depth and depth is None:
        depth = e.default_depth
    if depth is not None and depth < 1:
        raise UnknownMetricError(f"{name}: depth must be >= 1, got {depth}")
    return name, depth


def canonical_name(spec: Any) -> str:
    """The canonical spelling: ``"stm_4"`` -> ``"STM-4"``, ``"dr_lex"`` -> ``"DR-lex"``."""
    name, depth = parse_name(spec)
    return name if depth is None else f"{name}-{depth}"


def get(spec: Any, **options: Any) -> Metric:
    """A metric object by name (any spelling :func:`parse_name` reads); ``options`` go to the family constructor
    (``get("hwcm", depth=4)`` is ``get("HWCM-4")``)."""
    if isinstance(spec, Metric):
        return spec
    name, depth = parse_name(spec)
    e = _REGISTRY[name]
    if e.depth:
        d = options.pop("depth", None)
        if d is not None and _key(str(spec)) != _key(name) and int(d) != depth:
            raise UnknownMetricError(f"{spec!r} names depth {depth} but depth={d} was given")
        options["depth"] = int(d) if d is not None else depth
    return e.factory(**options)


def _family_default(cls: Any, param: str) -> Any:
    return inspect.signature(cls.__init__).parameters[param].default


def _register_defaults() -> None:
    from . import discourse, lexical, syntactic

    descriptions = {"BLEU": "BLEU (sacrebleu's corpus_bleu at corpus level)", "TER": "translation edit rate"}
    for nm, cls in lexical.ALL_METRICS.items():
        register(nm, (lambda cls=cls: lambda **o: LexicalMetric(cls(**o)))(),
                 aliases={"F-measure": ("fmeasure", "f"), "METEOR": ("meteor-exact",),
                          "ROUGE-S": ("rouges",)}.get(nm, ()), description=descriptions.get(nm, cls.__doc__.split(
                              "\n")[0] if cls.__doc__ else nm))
    default_depth = _family_default(syntactic.STM, "depth")
    for cls in (syntactic.STM, syntactic.DSTM, syntactic.HWCM):
        register(cls.name, (lambda cls=cls: lambda **o: DepthMetric(cls(**o)))(), depth=True,
                 default_depth=default_depth, description=(cls.__doc__ or "").split("\n")[0])
    for cls in (syntactic.TKM, syntactic.DTKM):
        register(cls.name, (lambda cls=cls: lambda **o: KernelMetric(cls(**o)))(),
                 description=(cls.__doc__ or "").split("\n")[0])
    register("DR", lambda **o: DiscourseMetric(discourse.DiscourseSimilarity(lexicalized=False, **o)),
             description="discourse tree kernel over RST trees (Guzman et al. 2014)")
    register("DR-lex", lambda **o: DiscourseMetric(discourse.DiscourseSimilarity(lexicalized=True, **o)),
             aliases=("drlex",), description="lexicalized discourse tree kernel (Guzman et al. 2014)")

    def learned(model: Any = None, **o: Any) -> Metric:
        from .learned import LearnedMetric

        if model is None:
            raise ValueError("the learned metric needs a trained model: get('learned', model=path or LearnedMetric)")
        return LearnedMetricFace(model if isinstance(model, LearnedMetric) else LearnedMetric.load(model))

    register("Learned", learned, aliases=("ks04", "kulesza-shieber", "svm"),
             description="Kulesza & Shieber (2004) SVM metric (needs model=)")


_register_defaults()
