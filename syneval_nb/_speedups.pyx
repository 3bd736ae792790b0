# cython: language_level=3, boundscheck=True, wraparound=False, initializedcheck=False, cdivision=True, infer_types=False
# (infer_types=False: a variable without a cdef is a Python object, never a C type guessed from its first value;
# a guessed C integer handed to Py_INCREF / PyTuple_SET_ITEM is boxed into two different temporaries, which
# left tuples holding freed ints above CPython's small-int cache - the segfault of issue 13. Every tuple of
# C integers is now built by _ssize_tuple, which owns each int it stores.)
# (boundscheck stays on: a bad index into a list or tuple raises IndexError; C arrays are indexed only after the
# explicit range checks below, so malformed input gives an exception, never a crash)
"""Compiled twins of the kit's hot loops (optional; built by ``bash setup.sh`` with Cython).

Every function here is a translation of a pure-Python function that stays in the package and is
the definition; :mod:`syneval_nb._accel` decides which one runs. The pairs, and the test that holds them equal on
every shipped parse (``tests/test_speedups.py``):

===========================  ===========================================
compiled                     pure Python (the definition)
===========================  ===========================================
``parse_fast``               ``trees._parse_fast``
``subtree_ids``              ``syntactic._subtree_ids_py``
``head_pass``                ``heads._head_pass_py``
``dependents``               the kids loop of ``heads.DependencyTree._trusted``
``dep_preorder``             ``heads.DependencyTree.to_flat``
``chain_counts``             ``Counter(heads.headword_chains(...))``
``max_counts``               ``syntactic._max_counts_py``
``clip_ids``                 ``syntactic._clip_ids_py``
``clip_chains``              ``syntactic._clip_chains_py``
``id_ceiling``               ``_max_counts_py`` of the per-reference id counts (``syntactic._id_ceiling``)
===========================  ===========================================

Only the speed differs: the same inputs give the same outputs (same lists, same ids, same counts), so a number
never depends on whether the extension was built.
"""
from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.dict cimport PyDict_GetItem, PyDict_Next, PyDict_SetItem
from cpython.list cimport PyList_GET_ITEM, PyList_GET_SIZE
from cpython.object cimport PyObject
from cpython.ref cimport Py_INCREF
from cpython.tuple cimport PyTuple_New, PyTuple_SET_ITEM, PyTuple_GET_ITEM, PyTuple_GET_SIZE
from cpython.unicode cimport PyUnicode_DecodeASCII, PyUnicode_DecodeUTF8
from libc.stdint cimport int32_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcmp

cdef extern from "Python.h":
    const char* PyUnicode_AsUTF8AndSize(object, Py_ssize_t*) except NULL
    bint PyUnicode_IS_ASCII(object)

cdef enum:
    OPEN = 0
    CLOSE = 1
    WORD = 2


cdef tuple _ssize_tuple(const Py_ssize_t* buf, Py_ssize_t start, Py_ssize_t stop):
    """``tuple(buf[start:stop])`` as Python ints. Each int is created into the typed object ``o``, which owns it;
    the ``Py_INCREF`` is the reference the tuple steals in ``PyTuple_SET_ITEM``."""
    cdef tuple t = PyTuple_New(stop - start)
    cdef object o
    cdef Py_ssize_t k
    for k in range(start, stop):
        o = buf[k]
        Py_INCREF(o)
        PyTuple_SET_ITEM(t, k - start, o)
    return t


# ================================================================================================ reading


cdef inline bint _is_word(const char* s, Py_ssize_t start, Py_ssize_t n, const char* w, Py_ssize_t wn):
    return n == wn and memcmp(s + start, w, wn) == 0


cdef inline object _token(const char* s, Py_ssize_t start, Py_ssize_t n, bint ascii):
    return PyUnicode_DecodeASCII(s + start, n, NULL) if ascii else PyUnicode_DecodeUTF8(s + start, n, NULL)


def parse_fast(str text not None, strip_label, wrapper_labels):
    """``trees._parse_fast``: ``(labels, kids, words)`` of a well-formed tree of the common shape, else ``None``
    (the general reader decides). Tokens are ``(``, ``)`` and the maximal runs of other characters between ASCII
    white space ``[ \\t\\n\\v\\f\\r]``, exactly the general reader's tokens; text holding one of ``\\x1c-\\x1f``
    (white space to ``str.split``, not to the PTB) is declined as the pure-Python fast path does. Unlike that path
    (whose ``str.split`` would also split at Unicode white space), this one also reads non-ASCII text: it scans the
    UTF-8 bytes, where the ASCII delimiters never occur inside a multi-byte character, and decodes each token, so
    it gives the general reader's tree (``tests/test_speedups.py`` checks both)."""
    cdef Py_ssize_t n = 0, i, ntok = 0, p, lo, hi, lab, nxt, idx, sp = 0, ctop = 0, k
    cdef const char* s
    cdef unsigned char c
    cdef Py_ssize_t* tstart
    cdef Py_ssize_t* tlen
    cdef char* tkind
    cdef Py_ssize_t* stack_idx
    cdef Py_ssize_t* stack_start
    cdef Py_ssize_t* cbuf
    cdef list labels, kids, words
    cdef tuple ks
    cdef bint ascii = PyUnicode_IS_ASCII(text)
    try:
        s = PyUnicode_AsUTF8AndSize(text, &n)
    except UnicodeEncodeError:  # a lone surrogate: no UTF-8 form; the general reader decides
        return None
    if n == 0:
        return None
    tstart = <Py_ssize_t*>malloc(n * sizeof(Py_ssize_t) * 6 + n)
    if tstart == NULL:
        raise MemoryError()
    tlen = tstart + n
    stack_idx = tlen + n
    stack_start = stack_idx + n
    cbuf = stack_start + n
    tkind = <char*>(cbuf + n)
    try:
        i = 0
        while i < n:
            c = <unsigned char>s[i]
            if c == 32 or 9 <= c <= 13:
                i += 1
            elif 28 <= c <= 31:
                return None
            elif c == 40 or c == 41:  # ( )
                tstart[ntok] = i
                tlen[ntok] = 1
                tkind[ntok] = OPEN if c == 40 else CLOSE
                ntok += 1
                i += 1
            else:
                tstart[ntok] = i
                while i < n:
                    c = <unsigned char>s[i]
                    if c == 32 or 9 <= c <= 13 or c == 40 or c == 41:
                        break
                    if 28 <= c <= 31:
                        return None
                    i += 1
                tlen[ntok] = i - tstart[ntok]
                tkind[ntok] = WORD
                ntok += 1
        if ntok < 4 or tkind[0] != OPEN:
            return None
        if tkind[1] == OPEN or (tkind[1] == WORD and
                                _token(s, tstart[1], tlen[1], ascii) in wrapper_labels):
            if tkind[ntok - 1] != CLOSE:
                return None
            lo = 1 if tkind[1] == OPEN else 2
            hi = ntok - 1
        else:
            lo = 0
            hi = ntok
        labels = []
        kids = []
        words = []
        p = lo
        while p < hi:
            if tkind[p] == OPEN:
                p += 1
                while True:  # read "lab nxt"; while nxt opens a child, lab is a phrase
                    if p + 2 > hi:
                        return None  # the input ends inside a node
                    lab = p
                    nxt = p + 1
                    p += 2
                    if tkind[nxt] != OPEN:
                        break
                    if tkind[lab] != WORD or _is_word(s, tstart[lab], tlen[lab], b"-NONE-", 6):
                        return None
                    idx = len(labels)
                    if sp > 0:
                        cbuf[ctop] = idx
                        ctop += 1
                    elif idx:
                        return None  # a second tree, or a wrapper with several children
                    stack_idx[sp] = idx
                    stack_start[sp] = ctop
                    sp += 1
                    labels.append(_token(s, tstart[lab], tlen[lab], ascii))
                    kids.append(())
                    words.append(None)
                # a preterminal (lab nxt)
                if tkind[nxt] == CLOSE or tkind[lab] != WORD or _is_word(s, tstart[lab], tlen[lab], b"-NONE-", 6):
                    return None
                if p >= hi or tkind[p] != CLOSE:
                    return None
                p += 1
                idx = len(labels)
                if sp > 0:
                    cbuf[ctop] = idx
                    ctop += 1
                elif idx:
                    return None
                labels.append(strip_label(_token(s, tstart[lab], tlen[lab], ascii)))
                kids.append(())
                words.append(_token(s, tstart[nxt], tlen[nxt], ascii))
            elif tkind[p] == CLOSE and sp > 0:
                p += 1
                sp -= 1
                idx = stack_idx[sp]
                labels[idx] = strip_label(labels[idx])
                kids[idx] = _ssize_tuple(cbuf, stack_start[sp], ctop)
                ctop = stack_start[sp]
            else:
                return None
        if sp or not labels or labels[0] in wrapper_labels:
            return None
        return labels, kids, words
    finally:
        free(tstart)


# ================================================================================================ subtree ids


cdef int _check_preorder(list kids, Py_ssize_t n) except -1:
    """FlatTree arrays: ``len(kids) == n`` and every child index is a later node (``i < c < n``)."""
    cdef Py_ssize_t i, j, c
    cdef tuple ks
    if len(kids) != n:
        raise ValueError(f"{n} labels but {len(kids)} child lists")
    for i in range(n):
        ks = <tuple?>kids[i]
        for j in range(PyTuple_GET_SIZE(ks)):
            c = <Py_ssize_t>ks[j]
            if c <= i or c >= n:
                raise ValueError(f"node {i}: child index {c} is not a later node in preorder (0..{n - 1})")
    return 0


cdef inline object _shape_id(dict shapes, object key, bint insert, object depth_of, Py_ssize_t depth_index):
    """The id of ``key`` in ``shapes``: a new id (recorded in ``depth_of``) when inserting, ``-1`` when unknown."""
    got = shapes.get(key)
    if got is None:
        if not insert:
            return -1
        got = len(shapes)
        shapes[key] = got
        if depth_of is not None:
            depth_of.append(depth_index)
    return got


cdef inline object _pack(int32_t* buf, Py_ssize_t m):
    return PyBytes_FromStringAndSize(<char*>buf, m * sizeof(int32_t))


def subtree_ids(list labels not None, list kids not None, int depth, dict shapes not None, bint insert, depth_of):
    """``syntactic._subtree_ids_py`` on the arrays of a FlatTree: the same ids in the same order.

    The table ``shapes`` holds the labels (depth-1 shapes, ``str`` keys) and the deeper shapes under a ``bytes``
    key: the int32 ids of the label's shape and of the children's shapes one depth less (the pure-Python twin
    keys them ``(label, child ids)``; ids are handed out in the same order, so both give the same numbers; a
    table is only ever filled by one of the two)."""
    cdef Py_ssize_t n = len(labels), i, j, k, h, nk, c, m
    cdef int32_t sid
    cdef int32_t* ids_of
    cdef int* height
    cdef int32_t* key
    cdef tuple ks
    cdef list out, first
    cdef object got, sids
    cdef bint track = insert and depth_of is not None
    cdef bint complete, unknown
    cdef Py_ssize_t max_kids = 1
    if depth < 1:
        raise ValueError(f"depth must be >= 1, got {depth}")
    _check_preorder(kids, n)
    out = [[] for _ in range(depth)]
    first = out[0]
    for i in range(n):
        m = PyTuple_GET_SIZE(<tuple?>kids[i])
        if m > max_kids:
            max_kids = m
    ids_of = <int32_t*>malloc(n * depth * sizeof(int32_t) + n * sizeof(int) + (max_kids + 1) * sizeof(int32_t))
    if ids_of == NULL:
        raise MemoryError()
    height = <int*>(ids_of + n * depth)
    key = <int32_t*>(height + n)
    try:
        # depth 1: the labels (reverse preorder, as the pure-Python twin inserts them)
        sids = [None] * n
        for i in range(n - 1, -1, -1):
            got = _shape_id(shapes, labels[i], insert, depth_of if track else None, 0)
            sids[i] = got
            sid = <int32_t>got
            for k in range(depth):
                ids_of[i * depth + k] = sid
            height[i] = 1
        for i in range(n - 1, -1, -1):
            first.append(sids[i])
        if depth == 1:
            return out
        for i in range(n - 1, -1, -1):
            ks = <tuple?>kids[i]
            nk = PyTuple_GET_SIZE(ks)
            if nk == 0:
                continue
            h = 0
            for j in range(nk):
                c = <Py_ssize_t>ks[j]
                if height[c] > h:
                    h = height[c]
            h += 1
            if h > depth:
                h = depth
            height[i] = h
            sid = ids_of[i * depth]
            if not insert and sid == -1:  # an unknown label: every deeper shape is unknown too
                for k in range(1, h):
                    (<list>out[k]).append(-1)
                continue
            key[0] = sid
            complete = True
            for k in range(1, h):  # the depth-(k+1) shape: the label with the children's depth-k shapes
                unknown = False
                for j in range(nk):
                    c = <Py_ssize_t>ks[j]
                    key[j + 1] = ids_of[c * depth + k - 1]
                    if key[j + 1] == -1:
                        unknown = True
                if unknown:
                    sid = -1
                else:
                    sid = <int32_t>_shape_id(shapes, _pack(key, nk + 1), insert, depth_of if track else None, k)
                if sid == -1:  # unknown from here up (the node and everything above it)
                    for j in range(k, h):
                        (<list>out[j]).append(-1)
                    for j in range(k, depth):
                        ids_of[i * depth + j] = -1
                    complete = False
                    break
                ids_of[i * depth + k] = sid
                (<list>out[k]).append(sid)
            if complete:  # depths beyond the node's height repeat its whole subtree's id (for a taller parent)
                sid = ids_of[i * depth + h - 1]
                for j in range(h, depth):
                    ids_of[i * depth + j] = sid
        return out
    finally:
        free(ids_of)


# ================================================================================================ heads


def head_pass(list labels not None, list kids not None, list fwords not None, punct_tags, head_index, error):
    """``heads._head_pass_py``: ``(words, tags, heads, hw, punct)`` of the Collins head rules, bottom-up.
    ``head_index(label, child_labels, child_punct)`` is the (cached) table lookup; ``error`` the exception class
    raised for a constituent without children."""
    cdef Py_ssize_t n = len(labels), i, j, nk, c, hc, head, nw = 0
    cdef Py_ssize_t* hw
    cdef char* punct
    cdef tuple ks, cl, ps
    cdef list words = [], tags = [], heads
    cdef bint allp
    cdef object o, b, w, tag
    _check_preorder(kids, n)
    if len(fwords) != n:
        raise ValueError(f"{n} labels but {len(fwords)} word slots")
    hw = <Py_ssize_t*>malloc(n * (sizeof(Py_ssize_t) + 1) + 1)
    if hw == NULL:
        raise MemoryError()
    punct = <char*>(hw + n)
    try:
        for i in range(n):  # preterminals in preorder are the words in surface order
            w = fwords[i]
            punct[i] = 0
            hw[i] = 0
            if w is not None:
                hw[i] = nw
                nw += 1
                words.append(w)
                tag = labels[i]
                tags.append(tag)
                punct[i] = tag in punct_tags
        heads = [-1] * nw
        for i in range(n - 1, -1, -1):
            ks = <tuple?>kids[i]
            nk = PyTuple_GET_SIZE(ks)
            if nk < 2:
                if nk:  # a single child: its head word and punctuation flag go up
                    c = <Py_ssize_t>ks[0]
                    hw[i] = hw[c]
                    punct[i] = punct[c]
                elif fwords[i] is None:
                    raise error(f"constituent {labels[i]!r} has no children")
                continue
            cl = PyTuple_New(nk)
            ps = PyTuple_New(nk)
            allp = True
            for j in range(nk):
                c = <Py_ssize_t>ks[j]
                o = labels[c]
                Py_INCREF(o)
                PyTuple_SET_ITEM(cl, j, o)
                b = True if punct[c] else False
                Py_INCREF(b)
                PyTuple_SET_ITEM(ps, j, b)
                if not punct[c]:
                    allp = False
            hc = <Py_ssize_t>ks[<Py_ssize_t>head_index(labels[i], cl, ps)]  # IndexError if out of range
            head = hw[hc]
            for j in range(nk):
                c = <Py_ssize_t>ks[j]
                if c != hc:
                    heads[hw[c]] = head
            hw[i] = head
            punct[i] = allp
        return words, tags, heads, [hw[i] for i in range(n)], [punct[i] != 0 for i in range(n)]
    finally:
        free(hw)


def dependents(list heads not None):
    """The dependents of each word in surface order (``DependencyTree._kids``)."""
    cdef Py_ssize_t n = len(heads), d, h
    cdef list kids = [[] for _ in range(n)]
    for d in range(n):
        h = <Py_ssize_t>heads[d]
        if h >= n or h < -1:
            raise ValueError(f"word {d} has head {h}, expected -1 or a word 0..{n - 1}")
        if h >= 0:
            (<list>kids[h]).append(d)
    return kids


def dep_preorder(list words not None, list kids not None, Py_ssize_t root):
    """``DependencyTree.to_flat``: ``(labels, kids)`` of the word-labelled tree, nodes in preorder."""
    cdef Py_ssize_t n = len(words), i, j, k, sp = 1, m
    cdef Py_ssize_t* order
    cdef Py_ssize_t* pos
    cdef Py_ssize_t* stack
    cdef list ks, labels, fkids
    order = <Py_ssize_t*>malloc(3 * n * sizeof(Py_ssize_t) + sizeof(Py_ssize_t))
    if order == NULL:
        raise MemoryError()
    pos = order + n
    stack = pos + n
    if len(kids) != n:
        raise ValueError(f"{n} words but {len(kids)} dependent lists")
    if not 0 <= root < n:
        raise ValueError(f"root {root} is not a word 0..{n - 1}")
    try:
        stack[0] = root
        m = 0
        while sp:
            sp -= 1
            i = stack[sp]
            if m >= n:
                raise ValueError("the dependents do not form a tree (a word is reached twice)")
            order[m] = i
            pos[i] = m
            m += 1
            ks = <list?>kids[i]
            if sp + PyList_GET_SIZE(ks) > n:
                raise ValueError("the dependents do not form a tree (a word is reached twice)")
            for j in range(PyList_GET_SIZE(ks) - 1, -1, -1):
                k = <Py_ssize_t>ks[j]
                if not 0 <= k < n:
                    raise ValueError(f"word {i}: dependent {k} is not a word 0..{n - 1}")
                stack[sp] = k
                sp += 1
        labels = [words[order[k]] for k in range(m)]
        fkids = []
        for k in range(m):
            ks = <list?>kids[order[k]]
            for j in range(PyList_GET_SIZE(ks)):
                stack[j] = pos[<Py_ssize_t>ks[j]]  # the stack is free again (size n >= the dependents of a word)
            fkids.append(_ssize_tuple(stack, 0, PyList_GET_SIZE(ks)))
        return labels, fkids
    finally:
        free(order)


cdef inline void _incr(object cnt, object key) except *:
    # cnt is a dict or a dict subclass that does not override item access (Counter)
    cdef PyObject* v = PyDict_GetItem(cnt, key)
    if v == NULL:
        PyDict_SetItem(cnt, key, 1)
    else:
        PyDict_SetItem(cnt, key, <object>v + 1)


def chain_counts(list words not None, list kids not None, int max_len, counter):
    """Add the counts of ``heads.headword_chains(dep, max_len)`` to ``counter`` (a dict or Counter), keys inserted
    in the same order (by length, then as the pure-Python function lists them)."""
    cdef Py_ssize_t n = len(words), i, j, k, L, nl, nn, m
    cdef Py_ssize_t* last
    cdef Py_ssize_t* nlast
    cdef Py_ssize_t* tmp
    cdef Py_ssize_t* base
    cdef list chains, nchains
    cdef list ks
    cdef tuple c, t
    cdef object o
    if max_len < 1:
        raise ValueError(f"max_len must be at least 1, got {max_len}")
    if not isinstance(counter, dict):
        raise TypeError(f"counter must be a dict or a Counter, got {type(counter).__name__}")
    if len(kids) != n:
        raise ValueError(f"{n} words but {len(kids)} dependent lists")
    base = <Py_ssize_t*>malloc(2 * n * sizeof(Py_ssize_t) + sizeof(Py_ssize_t))
    if base == NULL:
        raise MemoryError()
    last = base
    nlast = base + n
    try:
        chains = []
        for i in range(n):
            t = (words[i],)
            _incr(counter, t)
            chains.append(t)
            last[i] = i
        nl = n
        for L in range(2, max_len + 1):  # a path down a tree ends at one word: at most n chains per length
            nchains = []
            nn = 0
            for m in range(nl):
                ks = <list?>kids[last[m]]
                if not PyList_GET_SIZE(ks):
                    continue
                c = <tuple>chains[m]
                for j in range(PyList_GET_SIZE(ks)):
                    k = <Py_ssize_t>ks[j]
                    if not 0 <= k < n or nn >= n:
                        raise ValueError("the dependents do not form a tree over the words")
                    t = PyTuple_New(L)
                    for i in range(L - 1):
                        o = <object>PyTuple_GET_ITEM(c, i)
                        Py_INCREF(o)
                        PyTuple_SET_ITEM(t, i, o)
                    o = words[k]
                    Py_INCREF(o)
                    PyTuple_SET_ITEM(t, L - 1, o)
                    _incr(counter, t)
                    nchains.append(t)
                    nlast[nn] = k
                    nn += 1
            if not nn:
                break
            chains = nchains
            nl = nn
            tmp = last
            last = nlast
            nlast = tmp
        return counter
    finally:
        free(base)


# ================================================================================================ clipping


def max_counts(counters):
    """``syntactic._max_counts_py``: the element-wise maximum of counts over references (a new dict)."""
    cdef dict best = None
    cdef PyObject* v
    for c in counters:
        if best is None:
            best = dict(c)
            continue
        for k, x in (<dict>c).items():
            v = PyDict_GetItem(best, k)
            if v == NULL or x > <object>v:
                best[k] = x
    return {} if best is None else best


def clip_ids(list hyp not None, dict ceiling not None, int depth):
    """``syntactic._clip_ids_py``: clipped matches and totals per depth of hypothesis shape ids (``-1``: unknown
    to every reference). Ids in ``hyp[d]`` are of depth ``d + 1`` (shapes of different depths never share an id),
    so the counts are kept per list."""
    cdef list matches = [0] * depth, totals = [0] * depth
    cdef Py_ssize_t d, j, m
    cdef long v, r, acc
    cdef dict cnt
    cdef list ids
    cdef PyObject* p
    if len(hyp) != depth:
        raise ValueError(f"{len(hyp)} lists of ids for depth {depth}")
    for d in range(depth):
        ids = <list?>hyp[d]
        m = PyList_GET_SIZE(ids)
        totals[d] = m
        cnt = {}
        for j in range(m):
            _incr(cnt, <object>PyList_GET_ITEM(ids, j))
        acc = 0
        for k, x in cnt.items():
            if k == -1:
                continue
            p = PyDict_GetItem(ceiling, k)
            if p == NULL:
                continue
            r = <long><object>p
            if r > 0:
                v = <long>x
                acc += v if v < r else r
        matches[d] = acc
    return matches, totals


def clip_chains(hyp, dict ceiling not None, int depth):
    """``syntactic._clip_chains_py``: clipped matches and totals per chain length (``len(chain) <= depth``) of a
    hypothesis's chain counts against the references' ceiling."""
    cdef list matches = [0] * depth, totals = [0] * depth
    cdef long[64] m
    cdef long[64] t
    cdef Py_ssize_t pos = 0, n, d
    cdef PyObject* key
    cdef PyObject* val
    cdef PyObject* r
    cdef long v, rv
    if not isinstance(hyp, dict):
        raise TypeError(f"hyp must be a dict or a Counter, got {type(hyp).__name__}")
    if depth > 64:
        raise ValueError(f"chain length above 64 is not supported by the compiled code, got {depth}")
    for d in range(depth):
        m[d] = 0
        t[d] = 0
    while PyDict_Next(hyp, &pos, &key, &val):
        n = len(<object>key)
        if n < 1 or n > depth:
            continue
        v = <long><object>val
        t[n - 1] += v
        r = PyDict_GetItem(ceiling, <object>key)
        if r != NULL:
            rv = <long><object>r
            if rv > 0:
                m[n - 1] += v if v < rv else rv
    for d in range(depth):
        matches[d] = m[d]
        totals[d] = t[d]
    return matches, totals


def id_ceiling(list per_ref not None):
    """``max_counts([Counter(chain.from_iterable(ids)) for ids in per_ref])``: for each shape id (``-1`` included,
    as the pure-Python expression counts it), the largest number of times one reference has it."""
    cdef dict best = {}, cnt
    cdef list ids
    cdef Py_ssize_t r, d, j
    cdef PyObject* v
    for r in range(len(per_ref)):
        cnt = {}
        for x in per_ref[r]:
            if not isinstance(x, list):
                raise TypeError(f"reference {r}: expected lists of shape ids, got {type(x).__name__}")
            ids = <list>x
            for j in range(PyList_GET_SIZE(ids)):
                _incr(cnt, <object>PyList_GET_ITEM(ids, j))
        if r == 0:
            best = cnt
            continue
        for k, x in cnt.items():
            v = PyDict_GetItem(best, k)
            if v == NULL or x > <object>v:
                best[k] = x
    return best
