"""The integer encoding of trees (split from :mod:`syneval_nb.trees.ptb`, issue 34): :func:`encode` turns an
``nltk.Tree`` or a :class:`~syneval_nb.trees.ptb.FlatTree` into integer arrays (labels, productions, children, in
preorder) through an :class:`Interner` shared by the trees that are compared, so subtree counts and tree kernels
compare integers, not strings."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Hashable, Iterator

from syneval_nb.trees.ptb import FlatTree, nltk_tree_class, preorder

if TYPE_CHECKING:
    from nltk import Tree

__all__ = []  # helpers of trees.ptb, trees.heads and trees.kernels


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
    - ``nodes[i]``: the ``Tree`` object itself (for explanations and pictures; for an encoded :class:`FlatTree`
      built on first use from :meth:`FlatTree.to_tree`).
    """

    labels: tuple[int, ...]
    prods: tuple[int, ...]
    children: tuple[tuple[int, ...], ...]
    n_words: tuple[int, ...]
    _nodes: tuple[Tree, ...] | None = field(default=None, repr=False, compare=False)
    _source: "FlatTree | None" = field(default=None, repr=False, compare=False)

    @property
    def nodes(self) -> tuple[Tree, ...]:
        if self._nodes is None:
            object.__setattr__(self, "_nodes", tuple(preorder(self._source.to_tree())))
        return self._nodes

    def __len__(self) -> int:
        return len(self.labels)

    def postorder(self) -> Iterator[int]:
        """Node indices children-first (the reverse of preorder is a valid bottom-up order)."""
        return reversed(range(len(self.labels)))


def encode(t: "Tree | FlatTree", interner: Interner) -> EncodedTree:
    """Encode a tree's nodes, labels and productions as integers (see :class:`EncodedTree`).

    ``t`` is any ``nltk.Tree`` (``str`` children are words of their parent's production, wherever they stand) or a
    :class:`FlatTree` (then no ``nltk.Tree`` is needed; ``nodes`` is built only if asked for). Both give the same
    ids for the same tree.
    """
    NT = nltk_tree_class()
    if isinstance(t, FlatTree):
        return _encode_flat(t, interner)
    if not isinstance(t, NT):
        raise TypeError(f"expected an nltk.Tree or a FlatTree, got {type(t).__name__}")
    lab_keys: list = []
    prod_keys: list = []
    children: list = []
    n_words: list = []
    nodes: list = []
    # iterative preorder (any depth; see flatten)
    stack: list[tuple[Tree, int]] = [(t, -1)]
    while stack:
        node, parent = stack.pop()
        idx = len(nodes)
        if parent >= 0:
            children[parent].append(idx)
        nodes.append(node)
        label = node._label
        lab_keys.append(("L", label))
        rhs = []
        nw = 0
        for c in node:
            if isinstance(c, NT):
                rhs.append(("L", c._label))
            else:
                rhs.append(("W", c))
                nw += 1
        prod_keys.append(("P", label, tuple(rhs)))
        children.append([])
        n_words.append(nw)
        stack.extend([(c, idx) for c in reversed(node) if isinstance(c, NT)])
    return EncodedTree(_intern_all(interner, lab_keys), _intern_all(interner, prod_keys),
                       tuple([tuple(c) for c in children]), tuple(n_words), tuple(nodes))


def _encode_flat(t: FlatTree, interner: Interner) -> EncodedTree:
    labels, kids, words = t.labels, t.kids, t.words
    lab_keys = [("L", x) for x in labels]
    prod_keys = [("P", x, (("W", w),) if w is not None else tuple([lab_keys[c] for c in ks]))
                 for x, ks, w in zip(labels, kids, words)]
    n_words = tuple([0 if w is None else 1 for w in words])
    return EncodedTree(_intern_all(interner, lab_keys), _intern_all(interner, prod_keys), tuple(kids), n_words,
                       None, t)


def _intern_all(interner: Interner, keys: list) -> tuple[int, ...]:
    """``tuple(map(interner, keys))``, with the table's dictionary used directly (the hot path of encoding)."""
    table = interner._ids
    out = [table.get(k) for k in keys]
    if None in out:
        store = interner._keys
        for j, v in enumerate(out):
            if v is None:
                k = keys[j]
                v = table.get(k)  # the same key may stand twice in one tree
                if v is None:
                    v = table[k] = len(store)
                    store.append(k)
                out[j] = v
    return tuple(out)
