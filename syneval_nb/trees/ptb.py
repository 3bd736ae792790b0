"""Penn Treebank bracketed trees: reading and basic facts.

Reading (:func:`read_ptb`) follows what evaluation on parser output needs:

- one tree per call, written on one line or on several lines;
- wrapper nodes are removed: ``(ROOT (S ...))``, ``(TOP (S ...))`` and the Treebank's unlabelled
  ``( (S ...))`` all give the ``S`` tree (a wrapper with several children is kept, relabelled ``ROOT``: this is
  how a line parsed sentence by sentence is written, ``(ROOT (S ...) (S ...))``, one child per sentence, see
  :func:`syneval_nb.parsers.sentences.join_trees`; its subtrees are the sentences' subtrees plus those rooted at
  ``ROOT``, and its head is the first sentence's, :data:`syneval_nb.trees.heads.HEAD_RULES`);
- empty elements ``(-NONE- *T*-1)`` are removed, and so is every constituent left without words;
- function tags and indices are stripped from phrase labels (``NP-SBJ-1`` -> ``NP``, ``PP-LOC=2`` -> ``PP``),
  while labels that start with a hyphen (``-LRB-``, ``-RRB-``, ``-LCB-``, ``-RCB-``, ``-NONE-``) are kept whole;
- words stay as the parser wrote them (``-LRB-`` for "(", ``` `` ``` and ``''`` for quotes);
  :func:`unescape_word` maps them back for display.

The parser's "could not parse" marker ``(())`` (and any tree left without words once empty elements are removed)
makes :func:`read_ptb` raise :class:`EmptyParseError` (a :class:`TreeFormatError`); the file readers give ``None``
for it, and for empty lines, so that the output stays aligned with the input lines. Any other malformed input
raises :class:`TreeFormatError` naming the line, the character offset and what was expected: unbalanced
brackets, text after the tree, a word outside a preterminal ``(TAG word)``, a preterminal with two words, a
labelled node with nothing inside (``(S)``), an unlabelled node other than the outer wrapper (``(S ( (NN a)))``).

Trees are :class:`nltk.Tree` objects: nodes are ``Tree`` instances, words are ``str`` leaves, a preterminal is
``Tree(tag, [word])``. In a notebook a tree shows as a picture (nltk renders it to SVG through svgling);
:func:`draw` returns the svgling drawing explicitly.

For subtree counting and tree kernels, :func:`syneval_nb.trees.encoding.encode` turns a tree into integer arrays
(labels, productions, children).

Speed. There is one reader: it produces a :class:`FlatTree` (labels, child indices and words in plain lists, nodes
in preorder), and :func:`read_ptb` builds the ``nltk.Tree`` from it. Code that only needs the arrays (the metrics
of :mod:`syneval_nb.metrics.syntactic`, :func:`syneval_nb.trees.heads.to_dependencies`) uses :func:`read_ptb_flat` and never
builds ``nltk.Tree`` objects (about half the cost of :func:`read_ptb`); ``encode`` takes either form. The
reader has a fast path (``_parse_fast``) for ASCII text of the usual shape (an optional ``ROOT``/``TOP``/``(``
wrapper around one tree of phrases and ``(TAG word)`` preterminals, no empty elements): its tokens come from
``str.replace``/``str.split`` at C speed instead of the tokenizer regex (about 19 instead of 25 us per WMT21
parse); everything else, non-ASCII text and every malformed input included, goes to the general reader
(``_parse_general``), which alone reports errors. Only ASCII white space separates tokens (Stanford keeps
"3\\u00a01/2", with a no-break space, as one word), which is why non-ASCII text and the ASCII separators
``\\x1c-\\x1f`` (white space for ``str.split``, not for the PTB) are left to the regex. Both paths give identical
trees (``tests/test_trees.py`` checks all 28,935 shipped parses). When the compiled extension is built, the fast
path runs as its compiled twin (``_speedups.parse_fast``, a character scanner over the UTF-8 bytes; about 2x
faster, the same trees and declines on ASCII text, and it also takes the non-ASCII trees of the common shape,
giving the general reader's tree; ``tests/test_speedups.py``). No function here makes reference cycles
(traversals use explicit stacks, not recursive closures), so reference counting frees every tree at once, without
waiting for the cyclic garbage collector.
"""
from __future__ import annotations

import html
import re
import unicodedata
from functools import lru_cache
from os import PathLike
from typing import Iterable, Iterator, Sequence

import sys

from .._accel import speedups as _C
from syneval_nb.textio import read_lines

__all__ = ["read_ptb", "read_ptb_file", "words", "tree_depth", "phrase_labels", "draw", "FlatTree",
           "read_ptb_strings", "TreeFormatError"]
# what users call (the notebooks, the README); the other public names are helpers of the kit and its tests

WRAPPER_LABELS = frozenset({"", "ROOT", "TOP"})
EMPTY_ELEMENT = "-NONE-"
PTB_UNESCAPE = {
    "-LRB-": "(",
    "-RRB-": ")",
    "-LCB-": "{",
    "-RCB-": "}",
    "-LSB-": "[",
    "-RSB-": "]",
    "``": '"',
    "''": '"',
}
# Only ASCII white space separates tokens: Stanford keeps "3\u00a01/2" (no-break space) as one word.
_W = r"[ \t\n\r\f\v]"
_N = r"[^ \t\n\r\f\v()]"
# groups: (tag, word) of a whole preterminal "(TAG word)" | label of an opening "(LABEL" | ")" | a stray word
_TOKEN_RE = re.compile(rf"\({_W}*({_N}+){_W}+({_N}+){_W}*\)|\({_W}*({_N}*)|(\))|({_N}+)")
_FUNCTION_TAG_RE = re.compile(r"[-=]")


def nltk_tree_class():  # nltk.Tree once nltk is imported, else () (none exists before; isinstance(x, ()) is False)
    return getattr(sys.modules.get("nltk.tree.tree"), "Tree", ())


def __getattr__(name: str):  # ptb.Tree: the kit's Tree class, made at first use
    if name == "Tree":
        return _tree_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _tree_class() -> type:
    """The kit's ``Tree``, defined when first needed: ``import nltk`` (it brings scikit-learn, scipy.stats and
    pandas, 3 s of CPU) is paid only where a tree object is made, not by ``syneval-nb parse`` and ``rst``."""
    global Tree
    if "Tree" in globals():
        return Tree
    import nltk

    class Tree(nltk.Tree):
        """The kit's ``nltk.Tree``: the same tree, with ``str``, ``repr`` and ``pformat`` written without recursion
        (nltk's recurse once per level and raise ``RecursionError`` on a tree some thousand levels deep). The text is
        nltk's, character for character (``tests/test_trees.py`` compares them on real parses). It equals an
        ``nltk.Tree`` with the same labels and children (nltk's own ``==`` also asks for the same class)."""

        def _flat_lengths(self, nodesep: str, parens: str, quotes: bool) -> dict[int, int]:
            """``{id(node): len(node._pformat_flat(...))}`` for every node, bottom up without recursion."""
            size: dict[int, int] = {}
            stack: list = [(self, False)]
            while stack:
                node, done = stack.pop()
                if not done:
                    stack.append((node, True))
                    stack.extend((c, False) for c in node if isinstance(c, nltk.Tree))
                    continue
                n = len(parens[0]) + len(_label_text(node)) + len(nodesep) + 1 + len(parens[1]) + max(len(node) - 1, 0)
                for c in node:
                    n += size[id(c)] if isinstance(c, nltk.Tree) else len(_leaf_text(c, quotes))
                size[id(node)] = n
            return size

        def _pformat_flat(self, nodesep: str = "", parens: str = "()", quotes: bool = False) -> str:
            out: list[str] = []
            stack: list = [self]
            while stack:
                item = stack.pop()
                if isinstance(item, str) and item is _CLOSE:
                    out.append(parens[1])
                elif isinstance(item, nltk.Tree):
                    out.append(f"{parens[0]}{_label_text(item)}{nodesep} ")  # nltk's "(S )" for no children
                    stack.append(_CLOSE)
                    for k, c in enumerate(reversed(item)):
                        if k:
                            stack.append(_SPACE)
                        stack.append(c)
                elif item is _SPACE:
                    out.append(" ")
                else:
                    out.append(_leaf_text(item, quotes))
            return "".join(out)

        def pformat(self, margin: int = 70, indent: int = 0, nodesep: str = "", parens: str = "()",
                    quotes: bool = False) -> str:
            size = self._flat_lengths(nodesep, parens, quotes)
            out: list[str] = []
            stack: list = [(self, indent)]
            while stack:
                item, ind = stack.pop()
                if item is _CLOSE:
                    out.append(parens[1])
                elif isinstance(item, nltk.Tree):
                    if size[id(item)] + ind < margin:
                        out.append(Tree._pformat_flat(item, nodesep, parens, quotes))
                        continue
                    out.append(f"{parens[0]}{_label_text(item)}{nodesep}")
                    stack.append((_CLOSE, ind))
                    for c in reversed(item):
                        stack.append((c, ind + 2))
                        stack.append((_NEWLINE, ind + 2))
                elif item is _NEWLINE:
                    out.append("\n" + " " * ind)
                elif isinstance(item, tuple):
                    out.append("/".join(item))
                else:
                    out.append(item if isinstance(item, str) and not quotes else repr(item))
            return "".join(out)

        def __eq__(self, other: object) -> bool:  # equal to an nltk.Tree of the same labels and children
            return isinstance(other, nltk.Tree) and (self._label, list(self)) == (other._label, list(other))

        def __ne__(self, other: object) -> bool:
            return not self == other

        __hash__ = None  # type: ignore[assignment]  # a list: unhashable, as nltk.Tree

        def __str__(self) -> str:
            return self.pformat()

        def __repr__(self) -> str:
            out: list[str] = []
            stack: list = [self]
            while stack:
                item = stack.pop()
                if item is _CLOSE:
                    out.append("])")
                elif item is _COMMA:
                    out.append(", ")
                elif isinstance(item, nltk.Tree):
                    out.append(f"{type(item).__name__}({item._label!r}, [")
                    stack.append(_CLOSE)
                    for k, c in enumerate(reversed(item)):
                        if k:
                            stack.append(_COMMA)
                        stack.append(c)
                else:
                    out.append(repr(item))
            return "".join(out)

    Tree.__qualname__ = "Tree"  # pickled by reference as syneval_nb.trees.ptb.Tree
    return Tree


class _Mark(str):
    """A marker on the print stacks of :class:`Tree` (compared by identity, never printed)."""


_CLOSE, _SPACE, _NEWLINE, _COMMA = _Mark(")"), _Mark(" "), _Mark("\n"), _Mark(",")


def _label_text(node: nltk.Tree) -> str:
    return node._label if isinstance(node._label, str) else repr(node._label)


def _leaf_text(leaf, quotes: bool) -> str:
    if isinstance(leaf, tuple):
        return "/".join(leaf)
    return repr(leaf) if quotes or not isinstance(leaf, str) else leaf


class TreeFormatError(ValueError):
    """A bracketed tree that cannot be read. The message names the line, the offset and what was expected."""


class EmptyParseError(TreeFormatError):
    """The parser's "could not parse" marker ``(())``, or a tree without any word."""


@lru_cache(maxsize=65536)
def strip_label(label: str) -> str:
    """Strip function tags and indices: ``NP-SBJ-1`` -> ``NP``, ``PP-LOC=2`` -> ``PP``, ``-LRB-`` unchanged."""
    if not label or label.startswith("-"):
        return label
    return _FUNCTION_TAG_RE.split(label, 1)[0] or label


def _where(text: str, offset: int, line_no: int | None) -> str:
    line = text.count("\n", 0, offset)
    col = offset - (text.rfind("\n", 0, offset) + 1)
    lno = (line_no if line_no is not None else 1) + line
    return f"line {lno}, character {col + 1} (offset {offset})"


def _token_offset(text: str, k: int) -> int:
    """Character offset of the ``k``-th token (only computed when reporting an error)."""
    for j, m in enumerate(_TOKEN_RE.finditer(text)):
        if j == k:
            return m.start()
    return len(text)


def _fail(text: str, k: int, line_no: int | None, msg: str) -> TreeFormatError:
    return TreeFormatError(f"{_where(text, _token_offset(text, k), line_no)}: {msg}")


class FlatTree:
    """A tree as plain lists over its nodes in preorder (words are not nodes); what the reader produces.

    - ``labels[i]``: node ``i``'s label (function tags stripped, as :func:`read_ptb` does);
    - ``kids[i]``: the indices of node ``i``'s child nodes, in order (every child has a larger index: preorder);
    - ``words[i]``: the word of a preterminal ``(TAG word)``, ``None`` for any other node.

    Node 0 is the root. :func:`read_ptb_flat` reads one straight from a bracketed string (no ``nltk.Tree`` is made:
    this is the fast path of :mod:`syneval_nb.metrics.syntactic`), :func:`flatten` makes one from an ``nltk.Tree`` and
    :meth:`to_tree` builds the ``nltk.Tree`` (cached: built once, then shared). :func:`read_ptb` is
    ``read_ptb_flat(text).to_tree()``: there is one reader. Treat it as immutable.
    """

    __slots__ = ("labels", "kids", "words", "_tree")

    def __init__(self, labels: list[str], kids: list[tuple[int, ...]], words: list[str | None]) -> None:
        self.labels = labels
        self.kids = kids
        self.words = words
        self._tree: Tree | None = None

    def __len__(self) -> int:
        return len(self.labels)

    def to_tree(self) -> Tree:
        """The ``nltk.Tree`` (preterminals ``Tree(tag, [word])``, a node without children ``Tree(label, [])``),
        built once and cached: the same object comes back on every call."""
        if self._tree is None:
            labels, kids, words, T = self.labels, self.kids, self.words, _tree_class()
            built: list[Tree | None] = [None] * len(labels)
            for i in range(len(labels) - 1, -1, -1):
                w = words[i]
                built[i] = T(labels[i], [w] if w is not None else [built[c] for c in kids[i]])
            self._tree = built[0]
        return self._tree


def _parse(text: str, line_no: int | None) -> FlatTree | None:
    """Read ``text`` into a :class:`FlatTree` (``None``: nothing left): the fast path :func:`_parse_fast` for the
    usual well-formed ASCII tree, else (non-ASCII text, wrappers with several children, empty elements, unlabelled
    inner nodes, any error) the general reader :func:`_parse_general`. Both give the same tree."""
    flat = _read_fast(text)
    return flat if flat is not None else _parse_general(text, line_no)


# ASCII characters that str.split() treats as white space but a PTB tree does not (file/group/record/unit separators)
_SPLIT_ONLY_SPACE_RE = re.compile(r"[\x1c-\x1f]")


def _parse_fast(text: str) -> FlatTree | None:
    """The reader's fast path: ``None`` unless ``text`` is ASCII and a well-formed tree of the common shape.

    For ASCII text the tokens are found at C speed by ``text.replace("(", " ( ").replace(")", " ) ").split()``:
    in ASCII the white space of ``str.split`` is the PTB's (``[ \\t\\n\\r\\f\\v]``) plus the separators
    ``\\x1c-\\x1f``, so text holding one of those is left to the general reader, and so is non-ASCII text (only
    ASCII white space separates tokens: Stanford keeps "3\\u00a01/2", with a no-break space, as one word). Accepted:
    an optional wrapper ``(ROOT``/``(TOP``/``(`` around exactly one tree, phrases ``(LABEL`` followed by ``(``,
    preterminals ``(TAG word)``, no ``-NONE-`` label anywhere. Anything else (including every malformed input)
    returns ``None`` and the general reader decides, so errors are reported by one reader only.
    ``tests/test_trees.py`` checks that both paths give identical trees on every shipped parse.
    """
    if not text.isascii() or _SPLIT_ONLY_SPACE_RE.search(text):
        return None
    toks = text.replace("(", " ( ").replace(")", " ) ").split()
    n = len(toks)
    if n < 4 or toks[0] != "(":
        return None
    if toks[1] == "(" or toks[1] in WRAPPER_LABELS:  # ( (S ...) ), (ROOT (S ...) ): read inside the wrapper
        if toks[-1] != ")":
            return None
        it = iter(toks[1 if toks[1] == "(" else 2:-1])
    else:
        it = iter(toks)
    labels: list = []
    kids: list = []
    words: list = []
    add_label, add_kids, add_word = labels.append, kids.append, words.append
    stack: list[tuple[int, list[int]]] = []  # (node index, its child node indices) of the open phrases
    top: list[int] | None = None  # the child list of the innermost open phrase
    try:
        for t in it:
            if t == "(":
                lab = next(it)
                nxt = next(it)
                while nxt == "(":  # lab is a phrase (its label is stripped when it closes); nxt opens its first child
                    if lab == "(" or lab == ")" or lab == EMPTY_ELEMENT:
                        return None
                    idx = len(labels)
                    if top is not None:
                        top.append(idx)
                    elif idx:
                        return None  # a second tree, or a wrapper with several children
                    top = []
                    stack.append((idx, top))
                    add_label(lab)
                    add_kids(())
                    add_word(None)
                    lab = next(it)
                    nxt = next(it)
                # a preterminal (lab nxt)
                if nxt == ")" or lab == "(" or lab == ")" or lab == EMPTY_ELEMENT or next(it) != ")":
                    return None
                idx = len(labels)
                if top is not None:
                    top.append(idx)
                elif idx:
                    return None
                add_label(strip_label(lab))
                add_kids(())
                add_word(nxt)
            elif t == ")" and stack:
                idx, ks = stack.pop()
                labels[idx] = strip_label(labels[idx])
                kids[idx] = tuple(ks)
                top = stack[-1][1] if stack else None
            else:
                return None
    except StopIteration:  # the input ends inside a node
        return None
    if stack or not labels or labels[0] in WRAPPER_LABELS:
        return None
    return FlatTree(labels, kids, words)


def _parse_fast_compiled(text: str) -> FlatTree | None:
    """:func:`_parse_fast` in compiled code (:mod:`syneval_nb._speedups`): the same trees and declines on ASCII
    text; it also reads non-ASCII text of the common shape (scanning UTF-8 bytes), giving the general reader's
    tree, which the pure-Python fast path leaves to the general reader."""
    r = _C.parse_fast(text, strip_label, WRAPPER_LABELS)
    return None if r is None else FlatTree(*r)


_read_fast = _parse_fast_compiled if _C is not None else _parse_fast
"""The fast path in use (:mod:`syneval_nb._accel` picks the compiled one when it is built)."""


def _parse_general(text: str, line_no: int | None) -> FlatTree | None:
    """One pass over the tokens: check the brackets and build the :class:`FlatTree` at once (wrappers unwrapped).

    A token is a whole preterminal ``(TAG word)``, an opening ``(LABEL`` (label possibly empty), a ``)`` or a
    stray word (always an error in a PTB tree). A node takes its preorder index when it opens; when it closes
    without words, or is a ``-NONE-`` node, it is dropped with its whole subtree (the last indices, so the lists
    are cut back). ``None`` comes back if nothing is left. Unlabelled nodes are allowed only as the outer wrapper
    ``( (S ...))`` and as the empty parse ``(())``. The outermost node, if its label is a wrapper label, takes no
    index until it closes: with a single child node it is unwrapped (the usual ``(ROOT (S ...))``, no renumbering);
    otherwise it is inserted as node 0, labelled ``ROOT``.
    """
    tokens = _TOKEN_RE.findall(text)
    if not tokens:
        raise EmptyParseError(f"{_where(text, 0, line_no)}: empty input, expected '('")
    labels: list = []
    kids: list = []
    words: list = []
    add_label, add_kids, add_word = labels.append, kids.append, words.append
    # a frame is [label, child node indices, token index of its '(', node index or -1]; a frame has read nothing
    # yet while the previous token is its '('
    stack: list[list] = []
    deferred: list | None = None  # the outermost frame when its label is a wrapper label
    done = False
    for k, (tag, word, label, close, stray) in enumerate(tokens):
        if tag:  # a preterminal (TAG word)
            if not stack:
                if done:
                    raise _fail(text, k, line_no, "expected end of input after the tree, found another '('")
                if tag != EMPTY_ELEMENT:  # e.g. "(NN dog)"
                    add_label(strip_label(tag))
                    add_kids(())
                    add_word(word)
                done = True
            elif tag != EMPTY_ELEMENT:
                stack[-1][1].append(len(labels))
                add_label(strip_label(tag))
                add_kids(())
                add_word(word)
        elif close:
            if not stack:
                raise _fail(text, k, line_no, "unbalanced ')', no open bracket to close")
            frame = stack.pop()
            label, ks, opened_at, idx = frame
            if opened_at == k - 1 and label:
                raise _fail(text, k, line_no, f"expected a word or '(' inside {label!r}, found ')'")
            if frame is deferred:
                done = True
                _close_wrapper(labels, kids, words, ks)
            elif ks and label != EMPTY_ELEMENT:
                labels[idx] = strip_label(label)
                kids[idx] = tuple(ks)
                if stack:
                    stack[-1][1].append(idx)
                else:
                    done = True
            else:  # no words left inside, or an empty element: drop the node and its subtree
                del labels[idx:], kids[idx:], words[idx:]
                done = done or not stack
        elif stray:
            if not stack:
                where = "end of input after the tree" if done else "'('"
                raise _fail(text, k, line_no, f"expected {where} but found the word {stray!r}")
            top = stack[-1]
            if top[2] != k - 1:
                raise _fail(text, k, line_no, f"expected ')' or '(' in {top[0]!r}, found the word {stray!r} "
                                              "(a word stands only in a preterminal '(TAG word)')")
            raise _fail(text, k + 1, line_no, f"expected ')' after the word {stray!r} in {top[0]!r}, found "
                                              f"{_describe(tokens, k + 1)} (a preterminal holds exactly one word)")
        else:  # an opening bracket, with or without a label
            if done:
                raise _fail(text, k, line_no, "expected end of input after the tree, found another '('")
            if stack:
                if not label and not (len(stack) == 1 and not stack[-1][0] and _closes_next(tokens, k)):
                    raise _fail(text, k, line_no, "expected a label after '('")
            elif label in WRAPPER_LABELS:
                deferred = [label, [], k, -1]
                stack.append(deferred)
                continue
            stack.append([label, [], k, len(labels)])
            add_label(label)
            add_kids(())
            add_word(None)
    if stack:
        opened = _where(text, _token_offset(text, stack[-1][2]), line_no)
        raise TreeFormatError(
            f"{_where(text, len(text), line_no)}: expected ')' to close {stack[-1][0]!r} opened at "
            f"{opened} ({len(stack)} bracket(s) left open)"
        )
    if not labels:
        return None
    # unwrap (ROOT x), (TOP x), ( x ) while the wrapper has a single child node (nested wrappers: rare, renumbered)
    while labels[0] in WRAPPER_LABELS and words[0] is None and len(kids[0]) == 1:
        del labels[0], kids[0], words[0]
        kids[:] = [tuple(c - 1 for c in ks) for ks in kids]
    if labels[0] in WRAPPER_LABELS:
        labels[0] = "ROOT"
    return FlatTree(labels, kids, words)


def _close_wrapper(labels: list, kids: list, words: list, ks: list[int]) -> None:
    """Close the outermost wrapper node: nothing to do if it has one child node (it is unwrapped); with several
    it becomes node 0 (every index moves up by one). Without any it is dropped (nothing was kept)."""
    if len(ks) <= 1:
        return
    kids[:] = [tuple(c + 1 for c in k) for k in kids]
    labels.insert(0, "ROOT")
    kids.insert(0, tuple(c + 1 for c in ks))
    words.insert(0, None)


def _closes_next(tokens: list[tuple[str, ...]], k: int) -> bool:
    """Is the token after ``k`` a ``)`` (the inner ``()`` of the empty parse ``(())``)?"""
    return k + 1 < len(tokens) and bool(tokens[k + 1][3])


def _describe(tokens: list[tuple[str, ...]], k: int) -> str:
    """How token ``k`` reads in an error message."""
    if k >= len(tokens):
        return "the end of the input"
    tag, word, label, close, stray = tokens[k]
    if stray:
        return f"a second word {stray!r}"
    return "')'" if close else "'('"


def read_ptb_flat(text: str, *, line_no: int | None = None) -> FlatTree:
    """Read one bracketed tree into a :class:`FlatTree` (no ``nltk.Tree`` is built); see :func:`read_ptb`."""
    flat = _parse(text, line_no)
    if flat is None:
        raise EmptyParseError(
            f"{_where(text, 0, line_no)}: the tree has no words (the parser's 'could not parse' marker is '(())')"
        )
    return flat


def read_ptb(text: str, *, line_no: int | None = None) -> Tree:
    """Read one bracketed tree (see the module docstring for what is normalised).

    ``line_no`` is the line of ``text`` in its file, used in error messages.
    Raises :class:`EmptyParseError` for ``(())`` or a tree without words, :class:`TreeFormatError` for any
    other malformed input (the message names the line, the character offset and what was expected).
    """
    return read_ptb_flat(text, line_no=line_no).to_tree()


def read_ptb_lines(lines: Iterable[str], *, first_line: int = 1) -> list[Tree | None]:
    """One tree per line, aligned with the lines: ``None`` for an empty line and for ``(())``."""
    out: list[Tree | None] = []
    for k, line in enumerate(lines):
        if not line.strip():
            out.append(None)
            continue
        try:
            out.append(read_ptb(line, line_no=first_line + k))
        except EmptyParseError:
            out.append(None)
    return out


def is_empty_parse(line: str) -> bool:
    """True for an empty line and for the parser's "could not parse" marker ``(())`` in any spacing (a line made
    only of brackets and white space)."""
    return not line.strip(" ()\t\r\n\f\v")


def read_ptb_strings(path: str | PathLike, n: int | None = None) -> list[str | None]:
    """The parse strings of a one-tree-per-line file, stripped and aligned with its lines: ``None`` for an empty
    line and for ``(())`` (:func:`is_empty_parse`). With ``n``, a file of another length is a ``ValueError``.
    The trees are not read (that is :func:`read_ptb_file`); lines come from :func:`syneval_nb.textio.read_lines`."""
    lines = read_lines(path)
    if n is not None and len(lines) != n:
        raise ValueError(f"{path} has {len(lines)} parses for {n} input lines")
    return [None if is_empty_parse(ln) else ln.strip() for ln in lines]


def read_ptb_file(path: str | PathLike) -> list[Tree | None]:
    """Read a file with one bracketed tree per line (the kit's parse format), aligned with its lines."""
    try:
        return read_ptb_lines(read_lines(path))
    except TreeFormatError as exc:
        raise TreeFormatError(f"{path}: {exc}") from None


# --------------------------------------------------------------------------------------------- facts


def _leaves_with_parents(t: Tree) -> Iterator[tuple[str, Tree]]:
    """``(word, the node holding it)`` in surface order, without recursion (a tree of any depth)."""
    NT = nltk_tree_class()
    stack: list = [t]
    while stack:
        node = stack.pop()
        if isinstance(node, tuple):
            yield node
            continue
        stack.extend(c if isinstance(c, NT) else (c, node) for c in reversed(node))


def words(t: Tree) -> list[str]:
    """The words (leaves) in surface order (iterative: a 5,000-level tree works too).

    >>> words(read_ptb("(S (NP (DT the) (NN cat)) (VP (VBZ sleeps)))"))
    ['the', 'cat', 'sleeps']
    """
    return [w for w, _ in _leaves_with_parents(t)]


def pos_tags(t: Tree) -> list[str]:
    """The part-of-speech tags (preterminal labels) in surface order (iterative, as :func:`words`).

    >>> pos_tags(read_ptb("(S (NP (DT the) (NN cat)) (VP (VBZ sleeps)))"))
    ['DT', 'NN', 'VBZ']
    """
    return [parent.label() for _, parent in _leaves_with_parents(t)]


def tree_depth(t: "Tree | FlatTree") -> int:
    """Number of node levels on the longest root-to-preterminal path (words are not nodes): ``(NN dog)`` is 1.

    For PTB-shaped trees (words only in preterminals): a tree that mixes words with other children raises
    :class:`TreeFormatError` (see :func:`flatten`)."""
    NT = nltk_tree_class()
    if isinstance(t, FlatTree):
        return heights(t)[0]
    if not isinstance(t, NT):
        return 0
    return heights(flatten(t))[0]


def heights(flat: FlatTree) -> list[int]:
    """Each node's height, preorder indices: the node levels down to its deepest node without child nodes (words
    are not nodes, so a preterminal has height 1). ``heights(flat)[0]`` is :func:`tree_depth`."""
    kids = flat.kids
    h = [1] * len(kids)
    for i in range(len(kids) - 1, -1, -1):  # preorder: children after their parent
        ks = kids[i]
        if ks:
            h[i] = 1 + max([h[c] for c in ks])
    return h


def phrase_labels(t: Tree) -> list[str]:
    """Labels of the phrase nodes (every node that is not a preterminal), in preorder."""
    return [s.label() for s in preorder(t) if not (len(s) == 1 and isinstance(s[0], str))]


def spans(t: Tree) -> list[tuple[str, int, int]]:
    """``(label, start, end)`` word spans (end exclusive) of every node, in preorder."""
    NT = nltk_tree_class()
    out: list[tuple[str, int, int]] = []
    pos = 0
    open_at: list[int] = []
    stack: list = [(t, 0)]  # 0: open a node, 1: close it, 2: a word
    while stack:
        item, what = stack.pop()
        if what == 2:
            pos += 1
        elif what == 1:
            idx = open_at.pop()
            out[idx] = (item.label(), out[idx][1], pos)
        else:
            open_at.append(len(out))
            out.append((item.label(), pos, pos))
            stack.append((item, 1))
            stack.extend((c, 0 if isinstance(c, NT) else 2) for c in reversed(item))
    return out


def unescape_word(word: str) -> str:
    """Map PTB escapes back to characters (``-LRB-`` -> ``(``, ```` `` ```` -> ``"``); other words unchanged."""
    return PTB_UNESCAPE.get(word, word)


_SPACED_ENTITY = re.compile(r"&\s+(amp|quot|lt|gt|apos|nbsp|#\d+|#x[0-9a-fA-F]+);")


def _letters(text: str) -> str:
    """The letters and digits of a text, lowercased, after HTML unescaping (the Stanford tokenizer reads ``&amp;``
    as ``&``, and ``& amp;`` too) and NFKC normalisation (``½`` -> ``1⁄2``, the tokenizer's ``1/2``): what PTB
    tokenization keeps."""
    text = _SPACED_ENTITY.sub(r"&\1;", text)
    for _ in range(3):
        u = html.unescape(text)
        if u == text:
            break
        text = u
    return "".join(ch for ch in unicodedata.normalize("NFKC", text).lower() if ch.isalnum())


def same_words(tree_words: Sequence[str], text: str) -> bool:
    """Whether a parse's words are those of ``text``, up to PTB tokenization and escaping: the letters and digits
    of both, in order, are equal (spaces, punctuation, quotes and brackets are ignored; ``-LRB-`` etc. are
    unescaped). Checked on every shipped parse of the WMT21 de-en and TED zh-en data and every de-en RST tree's
    EDUs: all equal.

    >>> same_words(["I", "do", "n't", "-LRB-", "3", "1/2", "-RRB-", "."], "I don't (3 ½).")
    True
    >>> same_words(["Sané", "&", "Co."], "Sané & amp; Co.")
    True
    >>> same_words(["I", "do", "not", "."], "I don't.")
    False
    """
    return _letters("".join(unescape_word(w) for w in tree_words)) == _letters(text)


def preorder(t: Tree) -> list[Tree]:
    """The nodes (``Tree`` objects, not words) in preorder, without recursion (the order of :class:`FlatTree` and
    of :class:`~syneval_nb.trees.encoding.EncodedTree`)."""
    NT = nltk_tree_class()
    out: list[Tree] = []
    stack = [t]
    while stack:
        node = stack.pop()
        out.append(node)
        stack.extend(c for c in reversed(node) if isinstance(c, NT))
    return out


def flatten(t: Tree) -> FlatTree:
    """The :class:`FlatTree` of an ``nltk.Tree`` whose words stand alone in preterminals (PTB trees, and the
    word-labelled dependency trees, whose nodes have no word children). A node with exactly one ``str`` child is a
    preterminal; a node that mixes words with other children raises :class:`TreeFormatError`."""
    NT = nltk_tree_class()
    if not isinstance(t, NT):
        raise TypeError(f"expected an nltk.Tree, got {type(t).__name__}")
    labels: list[str] = []
    kids: list = []
    words: list[str | None] = []
    # iterative preorder (no recursion: a tree of any depth is read; no closure: no reference cycle)
    stack: list[tuple[Tree, int]] = [(t, -1)]  # (node, index of its parent or -1)
    while stack:
        node, parent = stack.pop()
        idx = len(labels)
        if parent >= 0:
            kids[parent].append(idx)
        labels.append(node._label)
        if len(node) == 1 and not isinstance(node[0], NT):
            kids.append(())
            words.append(node[0])
            continue
        kids.append([])
        words.append(None)
        for c in node:
            if not isinstance(c, NT):
                raise TreeFormatError(f"constituent {node._label!r} mixes the word {c!r} with other children; "
                                      "a word stands only in a preterminal (TAG word)")
        stack.extend([(c, idx) for c in reversed(node)])
    flat = FlatTree(labels, [ks if type(ks) is tuple else tuple(ks) for ks in kids], words)
    flat._tree = t
    return flat


def draw(t: Tree, **options):
    """An svgling drawing of the tree (shows as SVG in a notebook); options go to ``svgling.draw_tree``."""
    import svgling

    return svgling.draw_tree(t, **options)

