"""Helpers for the tests of ``toxlib serve``: a fast scorer with known scores, a free 127.0.0.1 port, and a uvicorn
server in a thread."""

from __future__ import annotations

import json
import socket
import threading
import time

import numpy as np
import uvicorn

from toxlib.scorers.base import BatchScores, Scorer
from toxlib.scorers.serve import ANALYZE_PATH


class LengthScorer(Scorer):
    """Two attributes from the text's length: fast and known in advance (for the shape and error tests)."""

    name, version, attributes = "length", "1", ("toxicity", "insult")

    def score_batch(self, texts):
        return BatchScores(np.array([[len(t) % 10 / 10, len(t) % 7 / 7] for t in texts]))


class SleepyScorer(LengthScorer):
    """``LengthScorer`` that takes ``seconds`` per call: a request stays in flight long enough to be watched."""

    def __init__(self, seconds: float):
        self.seconds = seconds

    def score_batch(self, texts):
        time.sleep(self.seconds)
        return super().score_batch(texts)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Running:
    """A uvicorn server for ``app`` in a thread on a free 127.0.0.1 port (context manager; ``url`` analyzes)."""

    def __init__(self, app, port: int | None = None, **config):
        self.port = port or free_port()
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning",
                                                    access_log=False, **config))
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.url = f"http://127.0.0.1:{self.port}{ANALYZE_PATH}"

    def __enter__(self):
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.05)
        return self

    def __exit__(self, *exc):
        self.server.should_exit = True
        self.thread.join(10)


def google_batch(parts: list[tuple[str, str, dict]], boundary: str = "===============1724565216827302468==") -> bytes:
    """A batch body laid out byte for byte as googleapiclient 2.202's BatchHttpRequest sends it (captured from
    that client): one application/http part per (request id, path, JSON body), LF line ends inside; a long
    Content-ID is folded as the client's email generator folds it (HELM's request ids are whole texts)."""
    out = []
    for request_id, path, body in parts:
        data = json.dumps(body)
        fold = "\n " if len(request_id) > 40 else " "
        out += [f"--{boundary}", "Content-Type: application/http", "MIME-Version: 1.0",
                "Content-Transfer-Encoding: binary",
                f"Content-ID: <7842af4e-3665-445d-9c0e-c9f484b6443c +{fold}{request_id}>",
                "", f"POST {path}?key=KEY&alt=json HTTP/1.1", "Content-Type: application/json", "MIME-Version: 1.0",
                "accept: application/json", "Host: 127.0.0.1", f"content-length: {len(data)}", "", data]
    return ("\n".join(out + [f"--{boundary}--", ""])).encode()
