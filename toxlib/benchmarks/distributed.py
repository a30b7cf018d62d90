"""``python -m toxlib bench distributed [--quick]``: the same generate -> score job in this process and on Ray.

The job: ``generate`` (nucleus sampling, per-sample seeds) on a fixed list of prompts, then ``score`` of every
continuation, both with the cache off, once with ``executor="local"`` and once on a Ray cluster with at least two
workers (``RAY_ADDRESS``, or a local cluster of max(2, usable cores up to 8) CPUs started here without a
dashboard). ``identical`` is true when both the generations and the scores are equal, row for row.

--quick: a tiny random Llama built offline (``toxlib.models.tiny``) and the profanity SVM; seconds of compute, so
the Ray figure is mostly actor start-up (a Python process importing torch and loading the model per worker).
Default: SmolLM2-135M (fp32) and the distilled scorer on 16 prompts x 25 samples x 20 tokens.
Ray's times include starting the actors and loading the model in each; the cluster's own start-up is reported
apart (``cluster_start_s``). The last line printed is one JSON object.
"""

from __future__ import annotations

import os
import tempfile
import time

import pandas as pd

from toxlib.common import settings
from toxlib.executors import RayExecutor
from toxlib.executors.ray_cluster import local_cpus
from toxlib.generate import DecodingConfig, generate
from toxlib.models import load
from toxlib.models.tiny import tiny_causal_lm
from toxlib.scorers import score

BENCH_PROMPTS = [
    "The weather today is", "My neighbour told me that", "The best way to learn a language is",
    "When the meeting started, the manager", "Scientists have recently discovered", "The old house at the end of",
    "I can't believe that you", "After the game, the fans", "The recipe calls for", "On the first day of school",
    "The city council voted to", "She opened the letter and", "People who drive like that are",
    "The movie was so bad that", "He walked into the bar and", "In my opinion, the government",
]


def job_settings(quick: bool, folder: str) -> tuple[str, str, DecodingConfig, list[str]]:
    """(model name or folder, scorer, decoding config, prompts) of the benchmark job."""
    if quick:
        model = str(tiny_causal_lm(os.path.join(folder, "tiny-llama")))
        return model, "profanity-svm", DecodingConfig(num_samples=5, max_new_tokens=12, seed=0), BENCH_PROMPTS[:12]
    return "smollm2-135m", "distilled", DecodingConfig(num_samples=25, max_new_tokens=20, seed=0), BENCH_PROMPTS


def run_job(lm, prompts: list[str], config: DecodingConfig, scorer: str, executor) -> tuple[pd.DataFrame, float]:
    """(generations joined with their scores, wall seconds) of one generate -> score run, caches off."""

    start = time.perf_counter()
    gens = generate(lm, prompts, config, cache=False, progress=False, executor=executor)
    scores = score(gens["continuation"].tolist(), scorer=scorer, cache=False, progress=False, executor=executor)
    return pd.concat([gens, scores.drop(columns=["scorer", "version"])], axis=1), time.perf_counter() - start


def bench_distributed(quick: bool = False, workers: int = 2) -> dict:
    """Run the job locally and on Ray; returns the figures printed as JSON (see the module docstring)."""
    import ray

    if workers < 2:
        raise ValueError(f"bench distributed compares against at least 2 Ray workers, got workers={workers}")
    with tempfile.TemporaryDirectory(prefix="toxlib-bench-distributed-") as folder:
        model, scorer, config, prompts = job_settings(quick, folder)
        lm = load(model, device="cpu", dtype="float32")
        local, local_s = run_job(lm, prompts, config, scorer, "local")
        start = time.perf_counter()
        started_here = not ray.is_initialized()
        if started_here:
            if settings.text("RAY_ADDRESS"):
                ray.init(address=settings.text("RAY_ADDRESS"))
            else:
                ray.init(num_cpus=max(workers, local_cpus()), object_store_memory=256 << 20, include_dashboard=False,
                         log_to_driver=False)
        cluster_start_s = time.perf_counter() - start
        try:
            remote, ray_s = run_job(lm, prompts, config, scorer, RayExecutor(workers=workers))
            cpus = int(ray.cluster_resources().get("CPU", 0))
        finally:
            if started_here:
                ray.shutdown()
    return {"bench": "distributed", "executor": "ray", "workers": workers, "cluster_cpus": cpus,
            "model": "tiny-llama (random weights)" if quick else lm.name, "scorer": scorer, "prompts": len(prompts),
            "samples": config.num_samples, "max_new_tokens": config.max_new_tokens, "rows": len(remote),
            "identical": bool(local.equals(remote)), "local_s": round(local_s, 2), "ray_s": round(ray_s, 2),
            "cluster_start_s": round(cluster_start_s, 2), "quick": quick}
