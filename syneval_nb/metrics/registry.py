"""The registry of every metric (a dict, as sacrebleu's): :func:`get`, :func:`names`, :func:`register`,
:func:`parse_name` (the one name scheme). The only module that imports every family."""
from __future__ import annotations

import inspect
import re
from dataclasses import dataclass
from typing import Any, Callable, Sequence


from .base import *  # noqa: F401,F403  (the former syneval_nb.metrics names)
from syneval_nb.metrics import discourse, lexical, syntactic
from syneval_nb.metrics import chrf
from syneval_nb.metrics.base import Corpus, Metric
from syneval_nb.metrics.learned import LearnedMetric

__all__ = [
    "Score", "Metric", "Corpus", "Segment", "UnknownMetricError", "ReferenceLayoutError",
    "make_signature", "parse_name", "canonical_name", "get", "names", "register", "prepare",
]


# -- learned -----------------------------------------------------------------------------------------------------


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

    def learned(model: Any = None, **o: Any) -> Metric:

        if model is None:
            raise ValueError("the learned metric needs a trained model: get('learned', model=path or LearnedMetric)")
        m = model if isinstance(model, LearnedMetric) else LearnedMetric.load(model)
        m._require_fitted()
        return m

    register("Learned", learned, aliases=("ks04", "kulesza-shieber", "svm"),
             description="Kulesza & Shieber (2004) SVM metric (needs model=)")


_register_defaults()
