"""Scoring for ``toxlib serve``: the texts of concurrent requests pooled by the scorer's batch key (for the distilled
scorer, a text's token count) and handed, one key's texts per call, to whichever scoring worker is free.

    pool = ScoringPool(scorer, workers=2, cache=True)   # workers=0: one thread of this process
    pool.start()                                        # processes spawned, each loads the scorer and scores a text
    rows, timing = await pool.score(texts)              # rows: [({ATTRIBUTE: value}, error or None)] in text order
    pool.status()                                       # {"workers", "busy", "queuedTexts", "queuedRequests"}
    pool.close()

Why by key. The distilled scorer feeds a forward pass only texts of one token count (no padding, so a text's score
does not depend on the texts beside it), so a call holding texts of many lengths costs one pass per length, run one
after another by one worker while the others wait. Here each call takes one length's texts, as many as the
scorer's token budget allows (``Scorer.batch_rows``), and texts of that length that arrive while the workers are
busy wait to fill the next pass. A free worker takes the fullest group, or the group of the text that has waited
longest once that text has waited ``FAIR_WAIT`` seconds, so a rare length is not starved. No text waits for company:
when a worker is free a lone text goes at once.

Workers. ``workers >= 1``: that many processes (``concurrent.futures.ProcessPoolExecutor``, spawned, so no state of
this process is shared), each with its own copy of the scorer and ``threads`` torch threads (default: the usable
cores shared out, at least one), its own score-cache connection, and SIGINT ignored (the server decides when they
stop). ``workers = 0``: scoring in a thread of this process, one call at a time (the tests' in-process scorers).
A worker that dies fails the texts it held (each an error row, a 500 for its request) and a new pool replaces the
broken one (its processes load the scorer before their first call).
"""

from __future__ import annotations

import asyncio
import gc
import logging
import multiprocessing
import os
import signal
import threading
import time
from collections import deque
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field

from anyio import to_thread

from toxlib.models.device import cpu_threads
from toxlib.store.cache import ScoreStore

log = logging.getLogger(__name__)

#: seconds after which the text that has waited longest is scored next, whatever its group's size
FAIR_WAIT = 0.5
#: seconds a worker process may take to load its scorer and score its first text
START_TIMEOUT = 300

_worker: dict = {}  # in a worker process: its scorer and score store


def rows_of(scorer, texts: list[str], cache) -> list[tuple[dict[str, float], str | None]]:
    """``scorer.score(texts)`` as [({ATTRIBUTE: value}, error or None)], in text order."""
    table = scorer.score(texts, cache=cache, progress=False)
    attributes = scorer.attributes
    return [({a.upper(): float(row[a]) for a in attributes}, row["error"]) for _, row in table.iterrows()]


def _start_worker(scorer, threads: int, cache: bool, ready) -> None:
    """A worker process's initializer: its threads, its scorer loaded and warmed."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    import torch  # heavy: the worker's scorer has imported it already

    torch.set_num_threads(threads)
    _worker["scorer"], _worker["cache"] = scorer, (ScoreStore() if cache else False)
    scorer.score(["Loading the scorer before the first request."], cache=False, progress=False)
    _worker["ready"] = ready


def _all_started() -> int:
    """A call each worker takes one of: it returns once every worker holds one (so each has started)."""
    _worker["ready"].wait(START_TIMEOUT)
    return os.getpid()


def _score_in_worker(texts: list[str]) -> list:
    return rows_of(_worker["scorer"], texts, _worker["cache"])


@dataclass
class Ticket:
    """One request's texts on their way through the pool."""

    n: int
    future: asyncio.Future
    queued: float = field(default_factory=time.perf_counter)
    rows: dict = field(default_factory=dict)
    first_sent: float | None = None


@dataclass
class Timing:
    """Seconds a request's texts waited before the first of them reached a worker, and from then to the last row."""

    wait: float
    scoring: float


class ScoringPool:
    """See the module docstring. coalesce: False gives each request a call of its own, in the order they came
    (what pooling gains is measured against this); threads: torch threads per worker process (None: the usable
    cores shared out)."""

    def __init__(self, scorer, workers: int = 0, cache: bool = True, coalesce: bool = True,
                 threads: int | None = None):
        if workers < 0:
            raise ValueError(f"workers must be 0 (a thread of this process) or more, not {workers}")
        self.scorer, self.workers, self.cache, self.coalesce = scorer, workers, cache, coalesce
        self.threads = threads or max(1, cpu_threads() // max(1, workers))
        self.groups: dict = {}  # batch key -> deque of (arrival, text, ticket, index)
        self.busy, self.requests = 0, 0
        self.executor: ProcessPoolExecutor | None = None
        self.key_lock = threading.Lock()  # a fast tokenizer refuses to be used by two threads at once

    # --- life cycle ---

    def start(self) -> None:
        """Spawn the worker processes and return once every one has loaded the scorer and scored a text (nothing
        for workers=0). RuntimeError naming the fault when they cannot."""
        if self.workers == 0:
            return
        self.executor = self._new_executor()
        try:  # the executor spawns a process per call while none is idle: one call each, held until all arrive
            calls = [self.executor.submit(_all_started) for _ in range(self.workers)]
            if len({call.result(timeout=START_TIMEOUT) for call in calls}) != self.workers:
                raise RuntimeError("fewer worker processes started than asked for")
        except Exception as exc:
            self.close()
            raise RuntimeError(f"the scoring workers did not start: {type(exc).__name__}: {exc}") from exc

    def _new_executor(self) -> ProcessPoolExecutor:
        context = multiprocessing.get_context("spawn")
        ready = context.Barrier(self.workers)
        return ProcessPoolExecutor(self.workers, mp_context=context, initializer=_start_worker,
                                   initargs=(self.scorer, self.threads, self.cache, ready))

    def close(self) -> None:
        """Stop the worker processes (after the calls under way)."""
        if self.executor is not None:
            self.executor.shutdown(wait=True, cancel_futures=True)
            self.executor = None
            gc.collect()  # its queues' and barrier's semaphores are released when collected, not at exit

    def status(self) -> dict:
        return {"workers": self.workers or 1, "workerProcesses": self.workers, "busy": self.busy,
                "queuedTexts": sum(len(g) for g in self.groups.values()), "queuedRequests": self.requests}

    # --- scoring ---

    async def score(self, texts: list[str], keys: list | None = None) -> tuple[list, Timing]:
        """Rows for ``texts`` (as ``rows_of``) and how long they waited and were scored; ``keys``: their
        ``keys(texts)`` when the caller has them (computed in a worker thread otherwise)."""
        ticket = Ticket(len(texts), asyncio.get_running_loop().create_future())
        if not self.coalesce:
            keys = [id(ticket)] * len(texts)
        elif keys is None:
            keys = await to_thread.run_sync(self.keys, texts)
        for index, (text, key) in enumerate(zip(texts, keys)):
            self.groups.setdefault(key, deque()).append((ticket.queued, text, ticket, index))
        self.requests += 1
        try:
            self._dispatch()
            await ticket.future
        finally:
            self.requests -= 1
        rows = [ticket.rows[i] for i in range(len(texts))]
        done = time.perf_counter()
        sent = ticket.first_sent or done
        return rows, Timing(wait=sent - ticket.queued, scoring=done - sent)

    def keys(self, texts: list[str]) -> list:
        """The scorer's batch keys of ``texts`` (``Scorer.batch_keys``; None each without pooling). Blocking: call
        it from a worker thread."""
        if not self.coalesce or not texts:
            return [None] * len(texts)
        with self.key_lock:
            return self.scorer.batch_keys(texts)

    def _next_group(self):
        """The batch key whose texts go next: the oldest text's group once it has waited ``FAIR_WAIT``, else the
        fullest group."""
        oldest = min(self.groups, key=lambda k: self.groups[k][0][0])
        if not self.coalesce or time.perf_counter() - self.groups[oldest][0][0] >= FAIR_WAIT:
            return oldest
        return max(self.groups, key=lambda k: len(self.groups[k]))

    def _dispatch(self) -> None:
        while self.groups and self.busy < max(1, self.workers):
            key = self._next_group()
            group = self.groups[key]
            rows = self.scorer.batch_rows(key) if self.coalesce else len(group)
            taken = [group.popleft() for _ in range(min(len(group), rows))]
            if not group:
                del self.groups[key]
            self.busy += 1
            asyncio.get_running_loop().create_task(self._run(taken))

    async def _run(self, taken: list) -> None:
        now = time.perf_counter()
        for _, _, ticket, _ in taken:
            ticket.first_sent = ticket.first_sent or now
        texts, executor = [text for _, text, _, _ in taken], self.executor
        try:
            if executor is None:
                rows = await to_thread.run_sync(rows_of, self.scorer, texts, self.cache)
            else:
                rows = await asyncio.wrap_future(executor.submit(_score_in_worker, texts))
        except Exception as exc:  # each text held gets the fault as its error; the request answers 500
            log.error("the scorer failed on %d text(s)", len(texts), exc_info=exc)
            rows = [({}, f"{type(exc).__name__}: {exc}")] * len(texts)
            if isinstance(exc, BrokenProcessPool) and self.executor is executor:  # the first call to see it
                self.executor = self._new_executor()
                executor.shutdown(wait=False, cancel_futures=True)
        finally:
            self.busy -= 1
        for (_, _, ticket, index), row in zip(taken, rows):
            ticket.rows[index] = row
            if len(ticket.rows) == ticket.n and not ticket.future.done():
                ticket.future.set_result(None)
        self._dispatch()
