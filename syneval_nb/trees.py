"""Penn Treebank bracketed trees: reading, basic facts, and an integer encoding for fast comparisons.

Reading (:func:`read_ptb`) follows what evaluation on parser output needs:

- one tree per call, written on one line or on several lines;
- wrapper nodes are removed: ``(ROOT (S ...))``, ``(TOP (S ...))`` and the Treebank's unlabelled
  ``( (S ...))`` all give the ``S`` tree (a wrapper with several children is kept, relabelled ``ROOT``);
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

For subtree counting and tree kernels, :func:`encode` turns a tree into integer arrays (labels, productions,
children) through an :class:`Interner` shared by all the trees that are compared, so comparisons are integer
comparisons, not string comparisons.
"""
from __future__ import annotations

import re
from functools import lru_cache
from dataclasses import dataclass
from os import PathLike
from typing import Hashable, Iterable, Iterator

from nltk import Tree

__all__ = [
    "TreeFormatError",
    "EmptyParseError",
    "read_ptb",
    "read_ptb_lines",
    "read_ptb_file",
    "strip_label",
    "words",
    "pos_tags",
    "tree_depth",
    "phrase_labels",
    "spans",
    "unescape_word",
    "Interner",
    "EncodedTree",
    "encode",
    "draw",
]

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


def _parse(text: str, line_no: int | None) -> Tree | None:
    """One pass over the tokens: check the brackets and build the tree at once.

    A token is a whole preterminal ``(TAG word)``, an opening ``(LABEL`` (label possibly empty), a ``)`` or a
    stray word (always an error in a PTB tree). A node is closed into ``Tree(strip_label(label), ...)``;
    ``-NONE-`` nodes and nodes left without words are dropped (``None`` comes back if nothing is left).
    Unlabelled nodes are allowed only as the outer wrapper ``( (S ...))`` and as the empty parse ``(())``.
    """
    tokens = _TOKEN_RE.findall(text)
    if not tokens:
        raise EmptyParseError(f"{_where(text, 0, line_no)}: empty input, expected '('")
    # a frame is [label, surviving child Trees, number of children read, token index of its '(']
    stack: list[list] = []
    result: Tree | None = None
    done = False
    for k, (tag, word, label, close, stray) in enumerate(tokens):
        if tag:  # a preterminal (TAG word)
            if not stack:
                if done:
                    raise _fail(text, k, line_no, "expected end of input after the tree, found another '('")
                result = None if tag == EMPTY_ELEMENT else Tree(strip_label(tag), [word])  # e.g. "(NN dog)"
                done = True
                continue
            top = stack[-1]
            top[2] += 1
            if tag != EMPTY_ELEMENT:
                top[1].append(Tree(strip_label(tag), [word]))
        elif close:
            if not stack:
                raise _fail(text, k, line_no, "unbalanced ')', no open bracket to close")
            label, kids, n_read, _ = stack.pop()
            if not n_read and label:
                raise _fail(text, k, line_no, f"expected a word or '(' inside {label!r}, found ')'")
            node = Tree(strip_label(label), kids) if kids and label != EMPTY_ELEMENT else None
            if stack:
                if node is not None:
                    stack[-1][1].append(node)
            else:
                result = node
                done = True
        elif stray:
            if not stack:
                where = "end of input after the tree" if done else "'('"
                raise _fail(text, k, line_no, f"expected {where} but found the word {stray!r}")
            top = stack[-1]
            if top[2]:
                raise _fail(text, k, line_no, f"expected ')' or '(' in {top[0]!r}, found the word {stray!r} "
                                              "(a word stands only in a preterminal '(TAG word)')")
            raise _fail(text, k + 1, line_no, f"expected ')' after the word {stray!r} in {top[0]!r}, found "
                                              f"{_describe(tokens, k + 1)} (a preterminal holds exactly one word)")
        else:  # an opening bracket, with or without a label
            if done:
                raise _fail(text, k, line_no, "expected end of input after the tree, found another '('")
            if stack:
                top = stack[-1]
                if not label and not (len(stack) == 1 and not top[0] and _closes_next(tokens, k)):
                    raise _fail(text, k, line_no, "expected a label after '('")
                top[2] += 1
            stack.append([label, [], 0, k])
    if stack:
        opened = _where(text, _token_offset(text, stack[-1][3]), line_no)
        raise TreeFormatError(
            f"{_where(text, len(text), line_no)}: expected ')' to close {stack[-1][0]!r} opened at "
            f"{opened} ({len(stack)} bracket(s) left open)"
        )
    return result


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


def read_ptb(text: str, *, line_no: int | None = None) -> Tree:
    """Read one bracketed tree (see the module docstring for what is normalised).

    ``line_no`` is the line of ``text`` in its file, used in error messages.
    Raises :class:`EmptyParseError` for ``(())`` or a tree without words, :class:`TreeFormatError` for any
    other malformed input (the message names the line, the character offset and what was expected).
    """
    tree = _parse(text, line_no)
    if tree is None:
        raise EmptyParseError(
            f"{_where(text, 0, line_no)}: the tree has no words (the parser's 'could not parse' marker is '(())')"
        )
    # unwrap (ROOT x), (TOP x), ( x ) while the wrapper has a single child node
    while tree.label() in WRAPPER_LABELS and len(tree) == 1 and isinstance(tree[0], Tree):
        tree = tree[0]
    if tree.label() in WRAPPER_LABELS:
        tree.set_label("ROOT")
    return tree


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


def read_ptb_file(path: str | PathLike) -> list[Tree | None]:
    """Read a file with one bracketed tree per line (the kit's parse format), aligned with its lines."""
    with open(path, encoding="utf-8") as fh:
        lines = fh.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    try:
        return read_ptb_lines(lines)
    except TreeFormatError as exc:
        raise TreeFormatError(f"{path}: {exc}") from None


# --------------------------------------------------------------------------------------------- facts


def words(t: Tree) -> list[str]:
    """The words (leaves) in surface order."""
    return list(t.leaves())


def pos_tags(t: Tree) -> list[str]:
    """The part-of-speech tags (preterminal labels) in surface order."""
    return [tag for _, tag in t.pos()]


def tree_depth(t: Tree) -> int:
    """Number of node levels on the longest root-to-preterminal path (words are not nodes): ``(NN dog)`` is 1."""
    if not isinstance(t, Tree):
        return 0
    kids = [c for c in t if isinstance(c, Tree)]
    return 1 + (max(tree_depth(c) for c in kids) if kids else 0)


def phrase_labels(t: Tree) -> list[str]:
    """Labels of the phrase nodes (every node that is not a preterminal), in preorder."""
    return [s.label() for s in t.subtrees() if not (len(s) == 1 and isinstance(s[0], str))]


def spans(t: Tree) -> list[tuple[str, int, int]]:
    """``(label, start, end)`` word spans (end exclusive) of every node, in preorder."""
    out: list[tuple[str, int, int]] = []

    def walk(node: Tree, start: int) -> int:
        idx = len(out)
        out.append((node.label(), start, start))
        pos = start
        for c in node:
            pos = walk(c, pos) if isinstance(c, Tree) else pos + 1
        out[idx] = (node.label(), start, pos)
        return pos

    walk(t, 0)
    return out


def unescape_word(word: str) -> str:
    """Map PTB escapes back to characters (``-LRB-`` -> ``(``, ```` `` ```` -> ``"``); other words unchanged."""
    return PTB_UNESCAPE.get(word, word)


# ------------------------------------------------------------------------------------------ encoding


class Interner:
    """A table from hashable keys (labels, productions, subtree shapes) to dense ints ``0, 1, 2, ...``.

    Share one interner across every tree that is compared, so equal keys get equal ids.
    """

    __slots__ = ("_ids", "_keys")

    def __init__(self) -> None:
        self._ids: dict[Hashable, int] = {}
        self._keys: list[Hashable] = []

    def __call__(self, key: Hashable) -> int:
        i = self._ids.get(key)
        if i is None:
            i = self._ids[key] = len(self._keys)
            self._keys.append(key)
        return i

    def key(self, i: int) -> Hashable:
        """The key behind id ``i``."""
        return self._keys[i]

    def __len__(self) -> int:
        return len(self._keys)


@dataclass(frozen=True)
class EncodedTree:
    """A tree as integer arrays over its nodes in preorder (words are not nodes).

    - ``labels[i]``: id of node ``i``'s label (``interner(("L", label))``);
    - ``prods[i]``: id of node ``i``'s production: its label with the sequence of its children, where a child node
      contributes its label and a word child contributes the word (``interner(("P", label, (("L", c) | ("W", w), ...)))``),
      so a preterminal's production includes its word, as in Collins & Duffy (2001);
    - ``children[i]``: indices of node ``i``'s child nodes, in order;
    - ``n_words[i]``: number of word children (1 for a preterminal of a PTB tree, 0 for a phrase);
    - ``nodes[i]``: the ``Tree`` object itself (for explanations and pictures).
    """

    labels: tuple[int, ...]
    prods: tuple[int, ...]
    children: tuple[tuple[int, ...], ...]
    n_words: tuple[int, ...]
    nodes: tuple[Tree, ...]

    def __len__(self) -> int:
        return len(self.labels)

    def postorder(self) -> Iterator[int]:
        """Node indices children-first (the reverse of preorder is a valid bottom-up order)."""
        return reversed(range(len(self.labels)))


def encode(t: Tree, interner: Interner) -> EncodedTree:
    """Encode a tree's nodes, labels and productions as integers (see :class:`EncodedTree`)."""
    labels: list[int] = []
    prods: list[int] = []
    children: list[tuple[int, ...]] = []
    n_words: list[int] = []
    nodes: list[Tree] = []

    def walk(node: Tree) -> int:
        idx = len(labels)
        labels.append(interner(("L", node.label())))
        prods.append(-1)
        children.append(())
        n_words.append(0)
        nodes.append(node)
        kid_ids: list[int] = []
        rhs: list[tuple[str, str]] = []
        nw = 0
        for c in node:
            if isinstance(c, Tree):
                kid_ids.append(walk(c))
                rhs.append(("L", c.label()))
            else:
                rhs.append(("W", c))
                nw += 1
        prods[idx] = interner(("P", node.label(), tuple(rhs)))
        children[idx] = tuple(kid_ids)
        n_words[idx] = nw
        return idx

    walk(t)
    return EncodedTree(tuple(labels), tuple(prods), tuple(children), tuple(n_words), tuple(nodes))


def draw(t: Tree, **options):
    """An svgling drawing of the tree (shows as SVG in a notebook); options go to ``svgling.draw_tree``."""
    import svgling

    return svgling.draw_tree(t, **options)

