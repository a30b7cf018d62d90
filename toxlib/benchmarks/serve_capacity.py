"""``python -m toxlib bench serve``: what ``toxlib serve`` answers under concurrent clients, on 127.0.0.1.

The server runs as its own process (``toxlib.scorers.serve.serve``, score cache off, access log off, ``workers``
scoring processes, its other settings the defaults), loads its scorer and is warmed up before timing. Then, for each
number of clients (default 1, 8 and 64) and each kind of request, that many client threads, each on one keep-alive
connection, send requests back to back for ``seconds``:

    single   one analyze request per text (the shape of lm-evaluation-harness, DecodingTrust, Self-Debiasing)
    batch    one Google batch request of ``batch`` analyze parts (the RealToxicityPrompts scripts send 25; HELM
             sends one generation's completions)

Texts: RealToxicityPrompts prompts and continuations (``scorer_throughput.bench_texts``), a different one each
request, requesting TOXICITY only (or the scorer's one attribute when it has no toxicity). Each cell reports texts
scored per second, requests per second, the 50th and 99th percentile of a request's latency (from sending to the end
of the answer, in ms) and the failed parts. ``--compare-coalescing`` runs the single-request cells again against a
server that scores each request on its own (``make_app(coalesce=False)``), which is what scoring concurrent requests
together gains. ``workers`` may list several counts (``--workers 1 2``): every cell runs against a server of each.

What the server is measured against: before the first server starts and after the last one stops, the same scorer in
this process scores the same texts as ``toxlib score`` does (``Scorer.score``, cache off, after a warm-up, with
torch's default threads: one per core), and every row gives ``of_scorer``, its texts/s as a share of the mean of the
two rates (a shared machine's speed drifts over minutes; both are in the JSON). Clients and server share the
machine's cores, so the figures are a floor for a server with the machine to itself; the JSON gives the 1-minute
load average before and after, as other work lowers them too. The last line printed is one JSON object.
"""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
import threading
import time
import uuid

import numpy as np
import torch

from toxlib.benchmarks.scorer_throughput import _timed, bench_texts
from toxlib.models.cpu_kernels import describe_cpu
from toxlib.models.device import cpu_threads
from toxlib.scorers import get_scorer
from toxlib.scorers.serve_wire import ANALYZE_PATH

#: Perspective's default quota, as lm-evaluation-harness's metric.py states it (requests per second)
PERSPECTIVE_DEFAULT_QPS = 1


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(port: int, scorer: str, coalesce: bool, workers: int | None = None) -> subprocess.Popen:
    """``serve`` in its own process on 127.0.0.1:``port``; returns once ``/healthz`` answers (the scorer is loaded
    and has scored a text). RuntimeError with the server's output when it does not start within 180 s."""
    code = (f"from toxlib.scorers.serve import serve; serve(port={port}, scorer={scorer!r}, cache=False, "
            f"access_log=False, coalesce={coalesce}, workers={workers})")
    server = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, env={**os.environ, "NO_PROXY": "127.0.0.1"})
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"the server exited before it answered: {server.communicate()[0][-2000:]}")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/healthz")
            if conn.getresponse().status == 200:
                return server
        except OSError:
            time.sleep(0.3)
    server.kill()
    raise RuntimeError(f"the server did not answer /healthz within 180 s: {server.communicate()[0][-2000:]}")


def analyze_body(text: str, attribute: str) -> bytes:
    return json.dumps({"comment": {"text": text}, "requestedAttributes": {attribute: {}},
                       "languages": ["en"]}).encode()


def batch_body(texts: list[str], attribute: str) -> tuple[bytes, str]:
    """(body, content type) of a Google batch request of one analyze part per text."""
    boundary = f"===============bench{uuid.uuid4().hex}=="
    lines = []
    for i, text in enumerate(texts):
        data = analyze_body(text, attribute).decode()
        lines += [f"--{boundary}", "Content-Type: application/http", f"Content-ID: <bench+{i}>", "",
                  f"POST {ANALYZE_PATH}?alt=json HTTP/1.1", "Content-Type: application/json",
                  f"content-length: {len(data.encode())}", "", data]
    lines.append(f"--{boundary}--")
    return ("\r\n".join(lines) + "\r\n").encode(), f'multipart/mixed; boundary="{boundary}"'


class TextSource:
    """Hands out texts round-robin to many threads."""

    def __init__(self, texts: list[str]):
        self.texts, self.next, self.lock = texts, 0, threading.Lock()

    def take(self, n: int) -> list[str]:
        with self.lock:
            start, self.next = self.next, self.next + n
        return [self.texts[i % len(self.texts)] for i in range(start, start + n)]


def client(port: int, mode: str, batch: int, attribute: str, source: TextSource, stop_at: float,
           record: list) -> None:
    """Send requests back to back on one keep-alive connection until ``stop_at``; append (seconds, texts scored,
    parts failed) per request to ``record``."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    while time.perf_counter() < stop_at:
        if mode == "single":
            [text] = source.take(1)
            path, body, parts = ANALYZE_PATH, analyze_body(text, attribute), 1
            headers = {"Content-Type": "application/json"}
        else:
            body, kind = batch_body(source.take(batch), attribute)
            path, headers, parts = "/batch", {"Content-Type": kind}, batch
        start = time.perf_counter()
        try:
            conn.request("POST", path, body, headers)
            reply = conn.getresponse()
            payload = reply.read()
        except OSError:
            record.append((time.perf_counter() - start, 0, parts))
            conn.close()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
            continue
        seconds = time.perf_counter() - start
        ok = (payload.count(b"HTTP/1.1 200") if mode == "batch" else 1) if reply.status == 200 else 0
        record.append((seconds, ok, parts - ok))
    conn.close()


def run_cell(port: int, mode: str, clients: int, seconds: float, batch: int, attribute: str,
             source: TextSource) -> dict:
    """One measurement: ``clients`` threads sending ``mode`` requests for ``seconds``."""
    records: list[list] = [[] for _ in range(clients)]
    stop_at = time.perf_counter() + seconds
    threads = [threading.Thread(target=client, args=(port, mode, batch, attribute, source, stop_at, records[i]))
               for i in range(clients)]
    start = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - start
    rows = [r for per_client in records for r in per_client]
    latencies = np.array([r[0] for r in rows]) * 1000
    texts = sum(r[1] for r in rows)
    return {"mode": mode, "clients": clients, "batch": batch if mode == "batch" else 1, "requests": len(rows),
            "texts": texts, "seconds": round(wall, 2), "texts_per_s": round(texts / wall, 1),
            "requests_per_s": round(len(rows) / wall, 1),
            "p50_ms": round(float(np.percentile(latencies, 50)), 1) if rows else None,
            "p99_ms": round(float(np.percentile(latencies, 99)), 1) if rows else None,
            "failed_parts": sum(r[2] for r in rows)}


def measure(scorer: str, attribute: str, clients: list[int], modes: list[str], seconds: float, batch: int,
            coalesce: bool, texts: list[str], workers: int, log=lambda line: None) -> list[dict]:
    """Every (mode, clients) cell against one server of ``workers`` scoring processes, requesting ``attribute``;
    each row also names ``coalesce`` and ``workers``."""
    port = free_port()
    server = start_server(port, scorer, coalesce, workers)
    try:
        source = TextSource(texts)
        run_cell(port, "single", 2, min(2.0, seconds), batch, attribute, source)  # warm-up: not reported
        rows = []
        for mode in modes:
            for n in clients:
                row = {**run_cell(port, mode, n, seconds, batch, attribute, source), "coalesce": coalesce,
                       "workers": workers}
                log(f"{workers} worker(s) {mode:6s} {n:3d} clients  {row['texts_per_s']:8.1f} texts/s  "
                    f"{row['requests_per_s']:7.1f} req/s  p50 {row['p50_ms']} ms  p99 {row['p99_ms']} ms  failed "
                    f"{row['failed_parts']}  (pooled: {'yes' if coalesce else 'no'})")
                rows.append(row)
        return rows
    finally:
        server.terminate()
        try:
            server.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()


def bench_serve(scorer: str = "distilled", clients=(1, 8, 64), seconds: float = 5.0, batch: int = 25,
                compare_coalescing: bool = False, workers=(None,), log=lambda line: None) -> dict:
    """``bench serve``: every (kind of request, clients) cell against a server of ``scorer`` with each count of
    ``workers`` (None: serve's default, one per core), see the module doc. Returns the JSON object of the command
    (bench, scorer, cpu, load_average_1min, attribute, scorer_alone: {texts_per_s: the mean, before, after:
    ``scorer_throughput._timed``}, results: one row per cell with
    texts_per_s, of_scorer, requests_per_s, p50_ms, p99_ms, failed_parts, coalesce, workers); log gets a first line
    naming the setting, then one line per cell. A row with failed_parts > 0 measured no capacity."""

    texts = bench_texts(4000)
    loaded = get_scorer(scorer)  # the scorer the server will load
    version, attribute = loaded.version, ("toxicity" if "toxicity" in loaded.attributes else loaded.attributes[0])
    log(f"toxlib serve with {scorer}@{version} on 127.0.0.1, {seconds:g} s per cell, {describe_cpu()}")
    attribute = attribute.upper()
    load_before = os.getloadavg()[0]  # other work on the machine takes cores from both sides: say how much
    before = _timed(scorer, loaded, texts[:-64], texts[-64:])
    log(f"the scorer alone (toxlib score, same texts): {before['texts_per_s']:.1f} texts/s")
    counts = [cpu_threads() if w is None else w for w in workers]
    rows = []
    for count in counts:
        rows += measure(scorer, attribute, list(clients), ["single", "batch"], seconds, batch, True, texts, count,
                        log=log)
        if compare_coalescing:
            rows += measure(scorer, attribute, [n for n in clients if n > 1], ["single"], seconds, batch, False,
                            texts, count, log=log)
    after = _timed(scorer, loaded, texts[:-64], texts[-64:])
    alone = {"texts_per_s": round((before["texts_per_s"] + after["texts_per_s"]) / 2, 1), "before": before,
             "after": after}
    log(f"the scorer alone again: {after['texts_per_s']:.1f} texts/s; rows are shares of the mean, "
        f"{alone['texts_per_s']:.1f}")
    for row in rows:
        row["of_scorer"] = round(row["texts_per_s"] / alone["texts_per_s"], 3)
    return {"bench": "serve", "scorer": f"{scorer}@{version}", "cpu": describe_cpu(), "cpu_count": os.cpu_count(),
            "torch_threads": torch.get_num_threads(), "seconds_per_cell": seconds,
            "perspective_default_qps": PERSPECTIVE_DEFAULT_QPS,
            "load_average_1min": [round(load_before, 2), round(os.getloadavg()[0], 2)], "attribute": attribute,
            "scorer_alone": alone, "results": rows}
