"""Helpers for the tests of ``toxlib serve``: a fast scorer with known scores, a free 127.0.0.1 port, and a uvicorn
server in a thread."""

from __future__ import annotations

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
