"""Parsing and scoring on a Dask cluster (the optional extra ``syneval-nb[cluster]``: ``dask``, ``distributed``).

Everything Dask-specific lives here; the front ends take ``scheduler=`` and import this module only when it is
given, so a user without a cluster never imports Dask:

- :func:`syneval_nb.parsers.frontend.parse` / :func:`~syneval_nb.parsers.frontend.parse_strings` (``stanford`` and ``spacy``
  backends), :func:`syneval_nb.parsers.frontend.parse_rst`, ``syneval-nb parse|rst --scheduler tcp://HOST:8786``;
- :func:`syneval_nb.metrics.score_systems` (the one scoring loop, behind :func:`syneval_nb.metrics.score_rows`) and
  :func:`syneval_nb.studies.depth_study.depth_scores` (one task per system).

``scheduler`` is the address of a running ``dask scheduler`` (``"tcp://HOST:8786"``; a client is opened for the
call and closed after it) or a :class:`distributed.Client` (used as it is, left open).

Parsing on the cluster
    Every Dask worker holds its parsers in a worker plugin (:class:`ParserPlugin`, registered once per scheduler,
    idempotent): one long-lived :class:`~syneval_nb.parsers.stanford.StanfordParser` JVM / one
    :class:`~syneval_nb.parsers.feng_hirst.FengHirstParser` per worker thread (so one per worker with the recommended
    ``--nthreads 1``), started on the worker's first chunk and kept across tasks and calls until the worker
    closes; the spaCy pipeline once per worker process. The caller reads the persistent cache first and sends
    only what is missing, in chunks (:func:`chunk_size`); the results come back as chunks complete
    (:func:`distributed.as_completed`) and the *caller* writes them to its cache as they arrive. So the cache
    stays on the client's machine, an interrupted distributed run resumes like a local one, and cached lines are
    never sent. Each chunk's answer carries the worker's backend key; a worker whose installation gives another
    key (another parser or pipeline version) is refused with :class:`ClusterError` instead of polluting the cache.

    A worker that dies mid-chunk (crash, out of memory, killed): Dask reschedules its chunks on the other workers
    (and the nanny restarts it); the run completes. A chunk that kills ``distributed.scheduler.allowed-failures``
    + 1 workers (default 4) ends the run with :class:`ClusterError`; everything received before is in the cache.

Scoring on the cluster
    The shared inputs (references, hypotheses) are scattered to every worker once; each task runs the same
    function as the local path on the same inputs, so results are identical to the local run, value for value.
"""
from __future__ import annotations

import contextlib
import json
import math
import socket
import threading
import uuid
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import dask
import distributed
from distributed import Client, WorkerPlugin, as_completed, get_worker
from syneval_nb.parsers.feng_hirst import FengHirstParser, RSTParseFailure, backend_key, failure_reason
from syneval_nb.parsers.spacy import spacy_pipeline, spacy_stream, spacy_backend_key
from syneval_nb.parsers.stanford import StanfordParser

__all__ = ["connect", "start_parsers"]

PLUGIN_NAME = "syneval-nb-parsers"
MAX_CHUNK = {"stanford": 32, "spacy": 256, "rst": 8}  # items per task: a chunk is what an interruption can lose
CHUNKS_PER_THREAD = 8  # at least this many chunks per worker thread (load balance at the end of a run)


class ClusterError(RuntimeError):
    """The cluster cannot do the work: no scheduler at the address, no workers, workers that disagree with the
    client's parser version, or a chunk that killed its workers again and again."""


# ------------------------------------------------------------------------------------------------- client


def _connect_timeout() -> float:
    """Dask's own connection time-out (``distributed.comm.timeouts.connect``, 30 s by default), in seconds."""
    from dask.utils import parse_timedelta

    return float(parse_timedelta(dask.config.get("distributed.comm.timeouts.connect"), default="seconds"))


def _probe(address: str, timeout: float) -> None:
    """Fail fast and cleanly on a malformed address or a closed TCP port (``Client`` would retry until its
    time-out and then print a traceback while collecting the half-made client)."""
    from distributed.comm.addressing import parse_address, parse_host_port

    try:
        scheme, loc = parse_address(address)
        host, port = parse_host_port(loc) if scheme == "tcp" else (None, None)
    except ValueError as e:
        raise ClusterError(f"{address!r} is not a Dask scheduler address ({e}); expected tcp://HOST:PORT, "
                           "e.g. tcp://10.0.0.5:8786") from None
    if scheme != "tcp":
        return
    try:
        socket.create_connection((host, port), timeout=timeout).close()
    except OSError as e:
        raise ClusterError(f"cannot connect to the Dask scheduler at {address} ({e.strerror or e}). Start it with "
                           f"`dask scheduler` and the workers with `dask worker {address} --nthreads 1` "
                           "(README: More than one machine).") from None


@contextlib.contextmanager
def connect(scheduler: "str | Client", timeout: float | None = None) -> Iterator[Client]:
    """A connected :class:`distributed.Client` for ``scheduler`` (an address such as ``"tcp://10.0.0.5:8786"``
    or a Client). A client opened here is closed on exit; a Client passed in is left open. Waits up to
    ``timeout`` seconds (default: Dask's ``distributed.comm.timeouts.connect``, 30 s) for the scheduler and for at
    least one worker; :class:`ClusterError` otherwise."""
    timeout = _connect_timeout() if timeout is None else float(timeout)
    if isinstance(scheduler, Client):
        if scheduler.status not in ("running", "connecting", "newly-created"):
            raise ClusterError(f"the Dask client is {scheduler.status}, not running")
        _wait_for_workers(scheduler, timeout)
        yield scheduler
        return
    if not isinstance(scheduler, str) or not scheduler.strip():
        raise TypeError(f"scheduler must be an address like 'tcp://HOST:8786' or a distributed.Client, not "
                        f"{scheduler!r}")
    _probe(scheduler, timeout)
    try:
        client = Client(scheduler, timeout=timeout, set_as_default=False)
    except (OSError, TimeoutError) as e:
        raise ClusterError(f"cannot connect to the Dask scheduler at {scheduler} ({e}). Start it with "
                           f"`dask scheduler` and the workers with `dask worker {scheduler} --nthreads 1` "
                           f"(README: More than one machine).") from e
    try:
        _wait_for_workers(client, timeout)
        yield client
    finally:
        client.close()


def _wait_for_workers(client: Client, timeout: float) -> None:
    try:
        client.wait_for_workers(1, timeout=timeout)
    except TimeoutError as e:
        raise ClusterError(f"the Dask scheduler {client.scheduler.address} has no workers after {timeout:g} s: start "
                           f"them with `dask worker {client.scheduler.address} --nthreads 1`") from e


def _total_threads(client: Client) -> int:
    return max(1, sum(client.nthreads().values()))


def chunk_size(n_items: int, n_threads: int, kind: str) -> int:
    """Items per task: enough chunks for every worker thread to get :data:`CHUNKS_PER_THREAD` of them (so the
    last chunks balance the load), never more than :data:`MAX_CHUNK` ``[kind]`` (a chunk's results reach the
    cache together)."""
    return max(1, min(MAX_CHUNK[kind], math.ceil(n_items / (CHUNKS_PER_THREAD * max(1, n_threads)))))


def _killed(e: BaseException, what: str) -> ClusterError:
    args = getattr(e, "args", ())  # KilledWorker(task, last_worker, allowed_failures)
    limit = args[2] if len(args) > 2 and isinstance(args[2], int) else dask.config.get(
        "distributed.scheduler.allowed-failures")
    return ClusterError(f"{what}: the Dask workers running one chunk died {limit + 1} time(s) (the scheduler's "
                        f"allowed-failures is {limit}; last worker {args[1] if len(args) > 1 else '?'}). Results "
                        "received before are in the cache: re-run to resume. Look at the workers' logs (memory, "
                        "Java) before retrying.")


# ------------------------------------------------------------------------------------------------- workers


class _Slot:
    """One parser in a worker's pool (``parser`` is replaced when it has to be rebuilt)."""

    def __init__(self, parser: Any) -> None:
        self.parser = parser


class ParserPlugin(WorkerPlugin):
    """Holds the long-lived parsers of one Dask worker (see the module docstring); closes them at teardown.

    ``borrow(kind, options)`` lends a parser for one task: an idle one of that kind and options, or a new one (a
    worker with ``n`` threads ends up with at most ``n`` of each; spaCy: one pipeline, tasks take turns).
    ``counts`` tells how many chunks and items this worker parsed (``worker_counts``; tests use it to check that
    cached lines are never sent)."""

    idempotent = True  # registering again (every call registers) keeps the running parsers
    name = PLUGIN_NAME

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._idle: dict[tuple, list[_Slot]] = {}
        self._size: Counter = Counter()
        self._all: list[_Slot] = []
        self.counts: Counter = Counter()

    def __getstate__(self) -> dict:  # the plugin is shipped empty: parsers are made on the worker
        return {}

    def __setstate__(self, state: dict) -> None:
        self.__init__()

    def setup(self, worker: Any) -> None:
        pass

    def teardown(self, worker: Any) -> None:
        with self._cond:
            slots, self._all = self._all, []
            self._idle.clear()
            self._size.clear()
        for slot in slots:
            with contextlib.suppress(Exception):
                slot.parser.close()

    @staticmethod
    def _make(kind: str, options: dict) -> Any:
        if kind == "stanford":
            p = StanfordParser(workers=1, **options)
            p.start()
            return p
        if kind == "rst":
            extra = {k: options[k] for k in ("classifier", "syntax") if options.get(k)}
            return FengHirstParser(global_features=options["global_features"], **extra)
        if kind == "spacy":
            spacy_pipeline()
            return contextlib.nullcontext()  # the pipeline is a per-process global; close() is not needed
        raise ValueError(f"unknown parser kind {kind!r}")

    @contextlib.contextmanager
    def borrow(self, kind: str, options: dict) -> Iterator[_Slot]:
        key = (kind, tuple(sorted(options.items())))
        limit = 1 if kind == "spacy" else None
        with self._cond:
            while True:
                idle = self._idle.setdefault(key, [])
                if idle:
                    slot = idle.pop()
                    break
                if limit is None or self._size[key] < limit:
                    self._size[key] += 1
                    slot = None
                    break
                self._cond.wait()
        if slot is None:
            try:
                slot = _Slot(self._make(kind, options))
            except BaseException:
                with self._cond:
                    self._size[key] -= 1
                    self._cond.notify()
                raise
            with self._cond:
                self._all.append(slot)
        try:
            yield slot
        finally:
            with self._cond:
                self._idle[key].append(slot)
                self._cond.notify()

    def rebuild(self, slot: _Slot, kind: str, options: dict) -> None:
        """Replace a parser that failed (its pipes may be in a broken state)."""
        old = slot.parser
        with contextlib.suppress(Exception):
            old.close()
        slot.parser = self._make(kind, options)

    def parse_chunk(self, kind: str, options: dict, items: list, expected_key: str) -> dict:
        with self.borrow(kind, options) as slot:
            if kind == "stanford":
                key = slot.parser.backend_key
            elif kind == "spacy":
                key = spacy_backend_key()
            else:
                key = backend_key(options["global_features"])
            if key != expected_key:
                raise ClusterError(f"the Dask worker {get_worker().address} parses with {key!r} but the client "
                                   f"with {expected_key!r}: install the same syneval-nb and parser versions on "
                                   "every machine (`bash setup.sh`)")
            results: list = []
            restarts = 0
            if kind == "stanford":
                r0 = slot.parser.restarts
                slot.parser.parse_stream(items, lambda *r: results.append(r))
                restarts = slot.parser.restarts - r0
            elif kind == "spacy":
                spacy_stream(items, lambda *r: results.append(r), 1)
            else:  # as feng_hirst._worker_parse: a failure is None with its cause
                for item in items:  # a text, or (text, records) with the kit's syntax parses made by the client
                    text, records = (item, None) if isinstance(item, str) else item
                    try:
                        results.append((text, json.dumps(slot.parser.parse(text, records))))
                    except Exception as e:  # noqa: BLE001 - a failed text is recorded as None
                        results.append((text, None, str(e) if isinstance(e, RSTParseFailure)
                                        else failure_reason(text, e)))
                        self.rebuild(slot, kind, options)
        with self._cond:
            self.counts["chunks"] += 1
            self.counts["items"] += len(items)
        return {"results": results, "restarts": restarts, "worker": get_worker().address}


def _plugin() -> ParserPlugin:
    plugin = get_worker().plugins.get(PLUGIN_NAME)
    if plugin is None:
        raise ClusterError(f"the worker plugin {PLUGIN_NAME!r} is not registered on {get_worker().address}")
    return plugin


def _parse_chunk(kind: str, options: dict, items: list, expected_key: str) -> dict:
    """The task: parse one chunk with this worker's long-lived parser."""
    return _plugin().parse_chunk(kind, options, items, expected_key)


def _start_parser(kind: str, options: dict) -> str:
    with _plugin().borrow(kind, options):
        return get_worker().address


def _ensure_plugin(client: Client) -> None:
    client.register_plugin(ParserPlugin(), name=PLUGIN_NAME)


def start_parsers(scheduler: "str | Client", kind: str = "stanford", **options: Any) -> list[str]:
    """Start one parser on every worker now (otherwise each starts on its worker's first chunk); returns the
    worker addresses. ``options``: the :class:`~syneval_nb.parsers.stanford.StanfordParser` options (``max_length``,
    ``timeout``, ``memory``) for ``stanford``; ``global_features`` for ``rst``."""
    options = _options(kind, options)
    with connect(scheduler) as client:
        _ensure_plugin(client)
        futs = [client.submit(_start_parser, kind, options, key=(f"syneval-start-{kind}", uuid.uuid4().hex, w),
                              workers=[w], allow_other_workers=False) for w in client.nthreads()]
        return client.gather(futs)


def _counts(dask_worker: Any = None) -> dict:
    plugin = dask_worker.plugins.get(PLUGIN_NAME)
    return dict(plugin.counts) if plugin is not None else {}


def worker_counts(scheduler: "str | Client") -> dict[str, dict]:
    """``{worker address: {"chunks": n, "items": n}}``: what each running worker has parsed since it started."""
    with connect(scheduler) as client:
        return client.run(_counts)


def _options(kind: str, options: dict) -> dict:
    if kind == "stanford":
        allowed = {"max_length", "timeout", "memory", "java", "dependencies", "both"}
    elif kind == "rst":
        allowed = {"global_features", "classifier", "syntax"}
        options = {"global_features": bool(options.get("global_features", False)), **options}
    else:
        allowed = set()
    bad = set(options) - allowed
    if bad:
        raise TypeError(f"unknown {kind} parser options: {', '.join(sorted(bad))}")
    return dict(options)


# ------------------------------------------------------------------------------------------------- client side


def run_chunks(scheduler: "str | Client", kind: str, options: dict, expected_key: str, items: Sequence,
               size: int | None = None) -> Iterator[dict]:
    """Send ``items`` to the workers in chunks and yield each chunk's answer (``{"results", "restarts",
    "worker"}``) as it completes. Nothing is connected or sent when ``items`` is empty. Stopping the iteration
    (an exception in the consumer, Ctrl-C) cancels the chunks not yet done."""
    items = list(items)
    if not items:
        return
    options = _options(kind, options)
    with connect(scheduler) as client:
        _ensure_plugin(client)
        size = size or chunk_size(len(items), _total_threads(client), kind)
        token = uuid.uuid4().hex
        futures = [client.submit(_parse_chunk, kind, options, items[k:k + size], expected_key,
                                 key=(f"syneval-parse-{kind}", token, k // size))
                   for k in range(0, len(items), size)]
        try:
            for fut in as_completed(futures, loop=client.loop):
                try:
                    out = fut.result()
                except distributed.KilledWorker as e:
                    raise _killed(e, f"{kind} parsing") from e
                fut.release()
                yield out
        finally:
            client.cancel(futures)


class RemoteParser:
    """Stands in for a :class:`~syneval_nb.parsers.stanford.StanfordParser` (or the spaCy stream) inside
    :func:`~syneval_nb.parsers.frontend.parse_strings`: same ``backend_key``, ``restarts``, ``start`` and ``parse_stream``,
    but the sentences are parsed by the Dask workers (one chunk per task) and ``on_result`` is called in the
    calling thread as each chunk comes back, so the caller's cache is written as results arrive."""

    def __init__(self, scheduler: "str | Client", kind: str = "stanford", spec: Any = None) -> None:
        if kind not in ("stanford", "spacy"):
            raise ValueError(f"no cluster support for the {kind!r} backend (stanford and spacy have it)")
        self.scheduler = scheduler
        self.kind = kind
        if kind == "stanford":
            if spec is None:
                spec = StanfordParser()
            # the options of the (never started) local parser object configure the workers' parsers
            self.options = {"max_length": spec.max_length, "timeout": spec.timeout, "memory": spec.memory}
            if spec._java_arg is not None:
                self.options["java"] = str(spec._java_arg)
            if spec.dependencies:
                self.options["dependencies"] = True
            if spec.both:  # one JVM per worker serves the lines and the RST parser's sentences
                self.options["both"] = True
            self.backend_key = spec.backend_key
            self.deps_key = spec.deps_key
            self.max_length = spec.max_length
            self.dependencies = spec.dependencies
        else:
            self.options = {}
            self.backend_key = spacy_backend_key()
            self.dependencies = False
        self.both = kind == "stanford" and spec.both
        self.restarts = 0
        self.chunks = 0
        self.workers: Counter = Counter()  # worker address -> items parsed in this object's calls

    def start(self) -> None:
        """Nothing to start here: each worker starts its parser on its first chunk (or :func:`start_parsers`)."""

    def close(self) -> None:
        """The workers' parsers stay up for the next call; they close with their workers."""

    def parse_stream(self, items: Sequence[tuple[int, str]],
                     on_result: Callable[[int, str | None, str | None, bool], None]) -> None:
        # closing(): an exception here (Ctrl-C, a cache error) cancels the remaining chunks at once
        with contextlib.closing(run_chunks(self.scheduler, self.kind, self.options, self.backend_key, items)) as chunks:
            for out in chunks:
                self._take(out, on_result)

    def _take(self, out: dict, on_result: Callable) -> None:
        self.restarts += out["restarts"]
        self.chunks += 1
        self.workers[out["worker"]] += len(out["results"])
        for r in out["results"]:
            on_result(*r)


def rst_stream(scheduler: "str | Client", texts: Sequence, global_features: bool = False,
               classifier: str | None = None, syntax: str | None = None) -> Iterator[tuple]:
    """``(text, JSON tree)`` pairs, or ``(text, None, why)`` for a failure, from the workers'
    :class:`~syneval_nb.parsers.feng_hirst.FengHirstParser`, as chunks complete (the stream behind
    ``parse_rst(..., scheduler=...)``). ``texts``: texts, or ``(text, records)`` pairs whose syntax parses the
    client already has (``syntax="kit"``: the workers' RST parsers then start no JVM of their own). ``classifier``,
    ``syntax``: passed to the workers' parsers when given (their default otherwise)."""

    options: dict = {"global_features": global_features}
    if classifier is not None:
        options["classifier"] = classifier
    if syntax is not None:
        options["syntax"] = syntax
    with contextlib.closing(run_chunks(scheduler, "rst", options, backend_key(global_features), texts)) as chunks:
        for out in chunks:
            yield from out["results"]


# ------------------------------------------------------------------------------------------------- scoring


def map_tasks(scheduler: "str | Client", fn: Callable, items: Sequence, shared: Sequence = (), args: Sequence = (),
         what: str = "scoring") -> list:
    """``[fn(item, *shared, *args) for item in items]`` on the cluster, in order. ``shared`` objects are
    scattered to every worker once (large inputs); ``args`` travel with each task (small options)."""
    items = list(items)
    if not items:
        return []
    with connect(scheduler) as client:
        shared_f = client.scatter(list(shared), broadcast=True, hash=False) if shared else []
        token = uuid.uuid4().hex
        futures = [client.submit(fn, item, *shared_f, *args, key=(f"syneval-{what}", token, k))
                   for k, item in enumerate(items)]
        try:
            return client.gather(futures)
        except distributed.KilledWorker as e:
            raise _killed(e, what) from e
        finally:
            client.cancel(futures + list(shared_f))
