"""The registry of every metric (a dict, as sacrebleu's): :func:`get`, :func:`names`, :func:`register`,
:func:`parse_name` (the one name scheme). The only module that imports every family."""
from __future__ import annotations

import inspect
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from .base import *  # noqa: F401,F403  (the former syneval_nb.metrics names)
from syneval_nb.corpus import (Corpus, ParseMismatchError, ReferenceLayoutError, Segment,  # noqa: F401
                               check_parse_words, normalize_refs, prepare)
from syneval_nb.metrics import discourse, lexical, syntactic
from syneval_nb.metrics import chrf
from syneval_nb.metrics.base import Metric
from syneval_nb.metrics.learned import LearnedMetric, RidgeMetric, load_model

__all__ = ["Corpus", "Segment", "canonical_name", "get", "names", "register", "prepare", "DEFAULT_METRICS", "Metric",
           "Score", "UnknownMetricError", "parse_name"]

#: The one default metric list of ``syneval-nb score``, ``syneval-nb report`` and notebook 09: the lexical metrics
#: with chrF (every chapter's headline baseline) and the syntactic metrics of Liu & Gildea at their default depths.
DEFAULT_METRICS = ("bleu", "chrf", "ter", "meteor", "stm", "hwcm", "dstm", "tkm", "dtkm")


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


#: The kernel metrics that take a decay ``lam`` (their default): a name at another decay is a variant,
#: ``"TKM λ=0.4"`` (the chapters' row name) or in ASCII ``"tkm-lam0.4"``.
KERNEL_DEFAULT_LAM = {"TKM": 1.0, "DTKM": 1.0, "DTKM@spacy": 1.0, "TKM-BP": 1.0, "DTKM-BP": 1.0, "DR": 0.4,
                      "DR-lex": 0.4}
_LAM = re.compile(r"(?P<family>.*?)[\s_\-]*(?:λ|lambda|lam)[\s_\-]*=?[\s_\-]*(?P<lam>\d+(?:\.\d+)?|\.\d+)", re.I)


def _whole(depth: Any, spec: Any) -> int:
    """A depth given as a number: a whole number (``4.5`` and ``True`` are refused, not rounded)."""
    if isinstance(depth, bool) or not isinstance(depth, (int, float, np.integer, np.floating)) or \
            not float(depth).is_integer():
        raise UnknownMetricError(f"{spec!r}: the depth must be a whole number, got {depth!r}")
    return int(depth)


def _lam_variant(spec: str) -> tuple[str, float] | None:
    """``(kernel family, lam)`` of a decay variant's name (``"TKM λ=0.4"``, ``"tkm-lam0.4"``, ``"dr-lex λ=1"``),
    else ``None``."""
    m = _LAM.fullmatch(spec.strip())
    if m is None:
        return None
    family = _ALIASES.get(_key(m.group("family")))
    if family not in KERNEL_DEFAULT_LAM:
        raise UnknownMetricError(f"{spec!r}: a decay (λ) applies to the kernel metrics only: "
                                 f"{', '.join(KERNEL_DEFAULT_LAM)}")
    lam = float(m.group("lam"))
    if not 0 < lam <= 1:
        raise UnknownMetricError(f"{spec!r}: λ must be in (0, 1], got {lam:g}")
    return family, lam


def variant_name(family: str, lam: float) -> str:
    """The name of a kernel metric at decay ``lam`` (its family name at the default decay)."""
    return family if float(lam) == KERNEL_DEFAULT_LAM[family] else f"{family} λ={float(lam):g}"


def parse_name(spec: Any) -> tuple[str, int | None]:
    """``(family name, depth or None)`` for any spelling: ``"HWCM-4"``, ``"hwcm_4"``, ``"stm4"``, ``("STM", 4)``,
    ``"dr-lex"``, ``"bleu"``. A depth metric named without a depth gets its family default; a depth on a metric
    without depths, a depth that is not a whole number, or an unknown name (``"stm-bp-4-4"``) raises
    :class:`UnknownMetricError` (listing the valid names). A kernel metric at another decay than its default is
    named ``"TKM λ=0.4"`` (the chapters' row name) or ``"tkm-lam0.4"``: its name is then ``"TKM λ=0.4"``
    (:data:`KERNEL_DEFAULT_LAM`; at the default decay, the family name)."""
    depth: int | None = None
    if isinstance(spec, tuple):
        if len(spec) != 2:
            raise UnknownMetricError(f"metric tuple must be (name, depth), got {spec!r}")
        spec, depth = spec[0], (None if spec[1] is None else _whole(spec[1], spec))
    if not isinstance(spec, str) or not spec.strip():
        raise UnknownMetricError(f"metric name must be a non-empty string, got {spec!r}; valid names: {_valid_names()}")
    lam = _lam_variant(spec)
    if lam is not None:
        if depth is not None:
            raise UnknownMetricError(f"{lam[0]} has no depth (got {spec!r} with depth {depth})")
        return variant_name(*lam), None
    k = _key(spec)
    name = _ALIASES.get(k)
    if name is None:
        # a depth is one trailing number, after at most one separator (``stm-bp-4-4`` is not STM-BP-44)
        m = re.fullmatch(r"(.*?)[\s_\-]?(\d+)", spec.strip().lower())
        fam = None if m is None or m.group(1)[-1:].isdigit() else _ALIASES.get(_key(m.group(1)))
        if fam and _REGISTRY[fam].depth:
            if depth is not None and depth != int(m.group(2)):
                raise UnknownMetricError(f"{spec!r} names depth {m.group(2)} but depth={depth} was given")
            name, depth = fam, int(m.group(2))
    if name is None:
        raise UnknownMetricError(f"unknown metric {spec!r}; valid names: {_valid_names()}"
                                 + ("; a kernel metric at another decay: 'TKM λ=0.4' or 'tkm-lam0.4'"
                                    if "lam" in spec.lower() or "λ" in spec else ""))
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
    (``get("hwcm", depth=4)`` is ``get("HWCM-4")``). A spec that is no name but a file is a saved learned metric
    (:func:`syneval_nb.metrics.learned.load_model`: ``syneval-nb score -m model.joblib``)."""
    if isinstance(spec, Metric):
        return spec
    try:
        name, depth = parse_name(spec)
    except UnknownMetricError:
        if isinstance(spec, (str, os.PathLike)) and not options:
            if Path(spec).is_file():
                return _features_made(load_model(spec))
            if Path(spec).suffix == ".joblib" or os.sep in str(spec):  # meant as a saved model's path
                raise UnknownMetricError(f"{str(spec)!r}: no such file (a saved learned metric is named by its "
                                         f"path, e.g. ridge.joblib)") from None
        raise
    if name not in _REGISTRY:  # a kernel metric at another decay ("TKM λ=0.4")
        family, lam = name.split(" λ=")
        if "lam" in options and float(options["lam"]) != float(lam):
            raise UnknownMetricError(f"{spec!r} names λ={lam} but lam={options['lam']} was given")
        return _REGISTRY[family].factory(**{**options, "lam": float(lam)})
    e = _REGISTRY[name]
    if e.depth:
        d = options.pop("depth", None)
        if d is not None:
            d = _whole(d, spec)
            if _key(str(spec)) != _key(name) and d != depth:
                raise UnknownMetricError(f"{spec!r} names depth {depth} but depth={d} was given")
        options["depth"] = d if d is not None else depth
    return e.factory(**options)


def _features_made(m: Metric) -> Metric:
    """A loaded ridge model with its feature metrics made from their names (the file keeps the names only)."""
    if isinstance(m, RidgeMetric) and not m.metrics:
        m.metrics = tuple(get(f) for f in m.features)
    return m


def _family_default(cls: Any, param: str) -> Any:
    return inspect.signature(cls.__init__).parameters[param].default


def _register_defaults() -> None:
    descriptions = {"BLEU": "BLEU (sacrebleu's corpus_bleu at corpus level)", "TER": "translation edit rate"}
    for nm, cls in lexical.ALL_METRICS.items():
        register(nm, cls,
                 aliases={"F-measure": ("fmeasure", "f"), "METEOR": ("meteor-exact",),
                          "ROUGE-S": ("rouges",)}.get(nm, ()), description=descriptions.get(nm, cls.__doc__.split(
                              "\n")[0] if cls.__doc__ else nm))
    register("chrF", lambda **o: chrf.CHRF(**o),
             description="chrF: character n-gram F-score (Popovic 2015), sacrebleu's CHRF, 0-1 scale")
    register("chrF++", lambda **o: chrf.CHRF(word_order=2, **o), aliases=("chrfpp", "chrf++"),
             description="chrF++: chrF with word uni- and bigrams (Popovic 2017), sacrebleu's CHRF(word_order=2)")
    default_depth = _family_default(syntactic.STM, "depth")
    for cls in (syntactic.STM, syntactic.DSTM, syntactic.HWCM):
        register(cls.family, cls, depth=True,
                 default_depth=default_depth, description=(cls.__doc__ or "").split("\n")[0])
    for cls in (syntactic.STM, syntactic.DSTM, syntactic.HWCM):  # the named variant with BLEU's brevity penalty
        register(f"{cls.family}-BP", lambda cls=cls, **o: cls(brevity_penalty=True, **o), depth=True,
                 default_depth=default_depth, description=f"{cls.family} times BLEU's brevity penalty (bp:yes)")
    for cls in (syntactic.TKM, syntactic.DTKM):
        register(cls.name, cls,
                 description=(cls.__doc__ or "").split("\n")[0])
    for cls in (syntactic.TKM, syntactic.DTKM):  # the named variant with BLEU's brevity penalty (issue 37)
        register(f"{cls.name}-BP", lambda cls=cls, **o: cls(brevity_penalty=True, **o),
                 description=f"{cls.name} (mean cosine) times BLEU's brevity penalty (bp:yes)")
    # the named variant on spaCy's dependency parses (dependencies="spacy", signature deps:spacy-...; no Java)
    for cls in (syntactic.DSTM, syntactic.HWCM):
        register(f"{cls.family}@spacy", lambda cls=cls, **o: cls(dependencies="spacy", **o), depth=True,
                 default_depth=default_depth, description=f"{cls.family} on spaCy's dependency parses (deps:spacy-...)")
    register("DTKM@spacy", lambda **o: syntactic.DTKM(dependencies="spacy", **o),
             description="DTKM on spaCy's dependency parses (deps:spacy-...)")
    register("DR", lambda **o: discourse.DiscourseSimilarity(lexicalized=False, **o),
             description="discourse tree kernel over RST trees (Guzman et al. 2014)")
    register("DR-lex", lambda **o: discourse.DiscourseSimilarity(lexicalized=True, **o),
             aliases=("drlex",), description="lexicalized discourse tree kernel (Guzman et al. 2014)")

    def learned(model: Any = None, kind: type = LearnedMetric, **o: Any) -> Metric:
        if model is None:
            raise ValueError(f"the learned metric needs a trained model: get({kind.name!r}, model=path or "
                             f"{kind.__name__}); a saved file also as a name: get('model.joblib')")
        m = model if isinstance(model, Metric) else load_model(model)
        if not isinstance(m, kind):
            raise ValueError(f"{model}: a {m.name} model, not {kind.name}")
        if isinstance(m, LearnedMetric):
            m._require_fitted()
        return _features_made(m)

    register("Learned", learned, aliases=("ks04", "kulesza-shieber", "svm"),
             description="Kulesza & Shieber (2004) SVM metric (needs model=)")
    register("Ridge", lambda model=None, **o: learned(model, RidgeMetric, **o), aliases=("learned-ridge",),
             description="ridge regression on registry metrics and length, fitted to human scores (needs model=; "
                         "syneval-nb fit)")


_register_defaults()
