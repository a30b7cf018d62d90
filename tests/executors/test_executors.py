"""Executors: a Ray run gives exactly a local run's rows (generate, score, NLL) and writes them into the same caches;
a worker killed mid-block is retried; a failing block raises an error naming it; the actors keep what they loaded
from one call to the next, and a failed or abandoned call starts afresh. On a small local Ray cluster
(2 CPUs, no dashboard), started once for this module and shut down after it."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from toxlib.executors import BlockFailedError, RayExecutor, blocks_of, resolve_executor
from toxlib.generate import DecodingConfig, generate
from toxlib.models.spec import ModelSpec
from toxlib.scorers.base import BatchScores, Scorer
from toxlib.steer import LogitsSteering
from toxlib.store.cache import GenerationStore, LMScoreStore, ScoreStore

PROMPTS = ["The quick brown", "She said hello", "", "Toxicity scores range", "Language models continue a prompt",
           "Nucleus", "a question about the weather and the"]
CONFIG = DecodingConfig(num_samples=3, max_new_tokens=8, seed=7)


def test_resolve_executor_by_name_and_environment(monkeypatch):
    monkeypatch.delenv("TOXLIB_EXECUTOR", raising=False)
    assert resolve_executor(None) is None and resolve_executor("local") is None
    assert resolve_executor("ray") == RayExecutor()
    custom = RayExecutor(workers=3, block_size=5)
    assert resolve_executor(custom) is custom
    monkeypatch.setenv("TOXLIB_EXECUTOR", "ray")
    assert resolve_executor(None) == RayExecutor()
    assert resolve_executor("local") is None  # an explicit argument wins over the environment
    monkeypatch.setenv("TOXLIB_EXECUTOR", "spark")
    with pytest.raises(ValueError, match="unknown TOXLIB_EXECUTOR 'spark'; known: local, ray"):
        resolve_executor(None)
    with pytest.raises(ValueError, match="unknown executor 'dask'"):
        resolve_executor("dask")
    with pytest.raises(ValueError, match="workers must be a positive integer"):
        RayExecutor(workers=0)


def test_a_process_default_reaches_calls_without_an_executor(monkeypatch):
    from toxlib.executors import set_default_executor

    monkeypatch.setenv("TOXLIB_EXECUTOR", "ray")
    try:
        assert set_default_executor("local") is None
        assert resolve_executor(None) is None  # the process default wins over the environment
        custom = RayExecutor(workers=2)
        assert set_default_executor(custom) is custom and resolve_executor(None) is custom
        assert resolve_executor("local") is None  # an explicit argument wins over the default
        with pytest.raises(ValueError, match="unknown executor 'gpu'"):
            set_default_executor("gpu")
    finally:
        set_default_executor(None)
    assert resolve_executor(None) == RayExecutor()  # back to TOXLIB_EXECUTOR


def test_blocks_and_default_block_size():
    assert blocks_of(list(range(7)), 3) == [[0, 1, 2], [3, 4, 5], [6]]
    assert RayExecutor(block_size=5).block_size_for(100, 4) == 5
    assert RayExecutor().block_size_for(100, 4) == 7  # ceil(100 / 16): about four blocks per worker
    assert RayExecutor().block_size_for(10_000, 1) == 256
    assert RayExecutor().block_size_for(3, 8) == 1


def test_pool_size_one_gpu_actor_per_gpu_else_cpu_actors():
    from toxlib.executors.ray_pool import pool_size

    class Cluster:  # what pool_size reads of a cluster: its resources
        def __init__(self, resources):
            self.resources = resources

        def cluster_resources(self):
            return self.resources

    gpus = Cluster({"CPU": 64.0, "GPU": 4.0})
    assert pool_size(gpus, RayExecutor(), 100) == (4, {"num_gpus": 1, "num_cpus": 1})
    assert pool_size(gpus, RayExecutor(workers=2), 100) == (2, {"num_gpus": 1, "num_cpus": 1})
    assert pool_size(gpus, RayExecutor(), 3)[0] == 3  # never more actors than blocks
    cpus = Cluster({"CPU": 8.0})
    assert pool_size(cpus, RayExecutor(), 100) == (8, {"num_cpus": 1})
    assert pool_size(cpus, RayExecutor(cpus_per_worker=2), 100) == (4, {"num_cpus": 2})


def test_model_spec_reloads_the_same_model_and_refuses_other_weights(tiny_lm, tiny_model_dirs, tmp_path):
    spec = ModelSpec.of(tiny_lm)
    assert spec.source == str(Path(tiny_model_dirs["llama"]).resolve()) and spec.kind == "causal"
    again = spec.load("cpu", 1)
    assert again.weights_id == tiny_lm.weights_id and again.name == tiny_lm.name
    from toxlib.common.errors import ModelUnavailableError
    from toxlib.models.tiny import tiny_causal_lm

    other = ModelSpec(**{**spec.__dict__, "source": str(tiny_causal_lm(tmp_path / "other", seed=1))})
    with pytest.raises(ModelUnavailableError, match="the driver's are sha256:"):
        other.load("cpu", 1)
    missing = ModelSpec(**{**spec.__dict__, "source": str(tmp_path / "nowhere")})
    with pytest.raises(ModelUnavailableError, match="does not exist on this Ray node: put it on a path every node"):
        missing.load("cpu", 1)


# --- on a local Ray cluster -------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def ray_cluster():
    ray = pytest.importorskip("ray")
    # classes defined here (a crashing processor, a failing scorer) travel to the workers by value
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    ray.init(num_cpus=2, object_store_memory=80 << 20, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


def vocab_shift(lm):
    """VOCAB-SHIFT steering with hand-made weights (every fifth token boosted): a trained artefact in a steering
    object, which travels to the workers with the job."""
    import torch

    from toxlib.steer.vocab_shift import VocabShift, VocabShiftWeights

    w = torch.zeros(lm.model.config.vocab_size, 2)
    w[::5, 1] = 2.0
    return VocabShift(VocabShiftWeights(W=w), beta=3.0)


@pytest.mark.parametrize("workers,block_size,steered", [(1, 1, False), (2, 3, True)])
def test_ray_generate_gives_the_local_rows_and_fills_the_same_cache(ray_cluster, tiny_lm, tmp_path, workers,
                                                                    block_size, steered):
    from toxlib.generate import api

    steering = vocab_shift(tiny_lm) if steered else None
    local = generate(tiny_lm, PROMPTS, CONFIG, steering=steering, cache=False, progress=False)
    if steered:  # the steering changes the texts, so the comparison below sees it applied on the workers
        plain = generate(tiny_lm, PROMPTS, CONFIG, cache=False, progress=False)
        assert not local["continuation"].equals(plain["continuation"])
    with GenerationStore(tmp_path / "generations.sqlite") as store:
        remote = generate(tiny_lm, PROMPTS, CONFIG, steering=steering, cache=store, progress=False,
                          executor=RayExecutor(workers=workers, block_size=block_size))
        pd.testing.assert_frame_equal(remote, local, check_exact=True)
        # the driver wrote every row: a local re-run finds them all and decodes nothing
        decoded, real = [], api.decode_prompts
        try:
            api.decode_prompts = lambda *a, **k: decoded.append(a[1]) or real(*a, **k)
            again = generate(tiny_lm, PROMPTS, CONFIG, steering=steering, cache=store, progress=False)
        finally:
            api.decode_prompts = real
        assert decoded == [[]]
        pd.testing.assert_frame_equal(again, local, check_exact=True)


def test_ray_score_and_nlls_give_the_local_rows_into_the_same_caches(ray_cluster, tiny_lm, tmp_path):
    from toxlib.generate.steered_nll import steered_nll
    from toxlib.models.perplexity import METHOD_VERSIONS, cached_nll, model_key
    from toxlib.models.tiny import tiny_classifier
    from toxlib.scorers import get_scorer

    texts = [f"text number {i} about the weather" for i in range(9)] + ["", "text number 1 about the weather"]
    folder = tiny_classifier(tmp_path / "clf", ["toxic", "obscene"], multi_label=True)
    scorer = get_scorer(f"hf:{folder}")
    scorer.chunk_size = 4  # three local chunks; by default the Ray blocks are the same chunks
    local = scorer.score(texts, cache=False, progress=False)
    with ScoreStore(tmp_path / "scores.sqlite") as store:
        remote = scorer.score(texts, cache=store, progress=False, executor=RayExecutor(workers=2))
        pd.testing.assert_frame_equal(remote, local, check_exact=True)
        assert len(store.lookup(scorer.key, texts)) == 9  # every distinct non-empty text, written by the driver
        assert np.isnan(remote["toxicity"].iloc[9]) and remote["error"].iloc[9]  # the empty text stays NaN
    local_nll = cached_nll(tiny_lm, texts[:9], cache=False, progress=False, chunk=4)
    with LMScoreStore(tmp_path / "nll.sqlite") as store:
        remote_nll = cached_nll(tiny_lm, texts[:9], cache=store, progress=False, chunk=4,
                                executor=RayExecutor(workers=1))
        pd.testing.assert_frame_equal(remote_nll, local_nll, check_exact=True)
        assert len(store.lookup(model_key(tiny_lm, METHOD_VERSIONS["causal"]), texts[:9])) == 9
    # teacher-forced NLL under a steering: blocks of whole batches in the local length order give the local values
    # when the worker has the driver's torch threads (step-by-step attention rounds differently with 1 and 2)
    import torch

    steering = vocab_shift(tiny_lm)
    local_steered = steered_nll(tiny_lm, texts[:9], steering, batch_size=2)
    assert not np.allclose(local_steered["nll_sum"], local_nll["nll_sum"])  # the steering is applied
    remote_steered = steered_nll(tiny_lm, texts[:9], steering, batch_size=2,
                                 executor=RayExecutor(workers=1, cpus_per_worker=torch.get_num_threads()))
    pd.testing.assert_frame_equal(remote_steered, local_steered, check_exact=True)


class KillOnce:
    """A logits processor that kills its worker process at its first call, once (a marker file remembers)."""

    def __init__(self, marker: str):
        self.marker = marker

    def __call__(self, input_ids, scores):
        if not os.path.exists(self.marker):
            Path(self.marker).write_text(str(os.getpid()))
            os._exit(1)  # no exception, no cleanup: as if the node killed the process
        return scores


def test_a_worker_killed_mid_block_is_retried_and_the_rows_are_the_same(ray_cluster, tiny_lm, tmp_path):
    marker = tmp_path / "killed-once"
    steering = LogitsSteering("kill-once", [KillOnce(str(marker))])
    remote = generate(tiny_lm, PROMPTS, CONFIG, steering=steering, cache=False, progress=False,
                      executor=RayExecutor(workers=1, block_size=3, max_restarts=2, max_task_retries=2))
    assert marker.exists() and int(marker.read_text()) != os.getpid()  # a worker process did die
    local = generate(tiny_lm, PROMPTS, CONFIG, steering=steering, cache=False, progress=False)
    pd.testing.assert_frame_equal(remote, local, check_exact=True)
    assert len(remote) == len(PROMPTS) * CONFIG.num_samples


class FailsOn(Scorer):
    """A scorer that raises for one text (in the worker that scores its block)."""

    name, version, attributes = "fails-on", "1", ("toxicity",)

    def __init__(self, bad: str):
        self.bad = bad

    def score_batch(self, texts):
        if self.bad in texts:
            raise RuntimeError(f"cannot score {self.bad!r}")
        return BatchScores(np.full((len(texts), 1), 0.5))


def test_a_failing_block_raises_an_error_naming_it_not_missing_rows(ray_cluster, tmp_path):
    texts = [f"text {i:02d}" for i in range(8)]  # equal lengths: blocks keep this order
    scorer = FailsOn("text 05")
    assert scorer.score(["text 01"], cache=False, progress=False)["toxicity"].tolist() == [0.5]
    with ScoreStore(tmp_path / "scores.sqlite") as store:
        with pytest.raises(BlockFailedError) as error:
            scorer.score(texts, cache=store, progress=False,
                         executor=RayExecutor(workers=1, block_size=2, max_task_retries=1))
    message = str(error.value)
    assert message.startswith("score fails-on block 3 of 4 (2 items, first: 'text 04') failed on a Ray worker")
    assert message.endswith("RuntimeError: cannot score 'text 05'")


class CountedJob:
    """A job whose loads are written to a file (name, worker process), and whose rows name the process that ran them."""

    def __init__(self, log: str, name: str):
        self.log, self.name = log, name

    def loaded_from(self):
        return self.name

    def load(self, device, threads):
        with open(self.log, "a") as out:
            out.write(f"{self.name} {os.getpid()}\n")
        return self.name

    def run(self, resource, block):
        if "fail" in block:
            raise ValueError("a failing block")
        return [(resource, os.getpid(), item) for item in block]


def test_actors_keep_what_they_loaded_from_one_call_to_the_next(ray_cluster, tmp_path):
    from toxlib.executors.ray_pool import HELD, run_blocks

    log, executor = tmp_path / "loads.txt", RayExecutor(workers=1)

    def call(name, blocks=([1], [2])):
        return [row for _, rows in run_blocks(CountedJob(str(log), name), list(blocks), executor) for row in rows]

    def loads():
        return [line.split()[0] for line in log.read_text().splitlines()]

    first = call("model")
    call("scorer")
    again = call("model")  # a chapter's calls alternate between a model and its scorers: nothing loads again
    assert loads() == ["model", "scorer"]
    assert {pid for _, pid, _ in again} == {pid for _, pid, _ in first}  # the same worker process
    for k in range(HELD):  # the least recently used goes when the actor holds more
        call(f"other {k}")
    call("model")
    assert loads()[-1] == "model" and loads().count("model") == 2
    with pytest.raises(BlockFailedError, match="ValueError: a failing block"):
        call("model", blocks=([1], ["fail"]))
    after_failure = call("model")  # a failed call killed the actors: a new process loads again
    assert loads().count("model") == 3
    assert {pid for _, pid, _ in after_failure}.isdisjoint({pid for _, pid, _ in again})
    abandoned = run_blocks(CountedJob(str(log), "model"), [[1], [2]], executor)
    next(abandoned)
    abandoned.close()  # abandoned after its first block: its actors are killed too
    call("model")
    assert loads().count("model") == 4
