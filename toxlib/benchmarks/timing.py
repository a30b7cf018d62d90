"""How a speed benchmark times a workload: its warm-up (``warms_up_whole``, ``WARM_UP_TOKENS``), toxlib's
generation timed without the cache (``toxlib_generate``, ``timed_generation``), what a result says about the device
(``device_facts``), and the artefact cache that keeps a timing once taken (``cached_measurement``).

In: a loaded ``LanguageModel``, prompts and a ``DecodingConfig``; for ``cached_measurement`` a kind, a key and a
function that measures. Out: (new tokens, seconds), or JSON-ready dicts of tokens/s, the matmul denominator's figures
(``toxlib.benchmarks.matmul_rate.Denominator``) and the roofline percentage; a cached timing carries ``measured``,
the UTC time it was taken.
"""

from __future__ import annotations

import time

import torch

from toxlib.benchmarks.matmul_rate import Denominator, percent
from toxlib.book_build.machine import machine_description
from toxlib.generate import DecodingConfig, NucleusStats, generate
from toxlib.generate.static_decode import graphs_wanted
from toxlib.models.cpu_kernels import describe_cpu
from toxlib.models.device import tf32_enabled
from toxlib.store.artefacts import artefact_json, artefact_name


def warms_up_whole(lm) -> bool:
    """Whether a benchmark's warm-up runs its whole workload once: on a GPU, yes, since kernels are chosen and
    compiled for each new shape on first use (measured on an H100: greedy decoding of 100 prompts took 6.7 s the
    first time and 2.6 s the second, under the profiler); on a CPU the warm-up runs every prompt for its first two
    new tokens (``WARM_UP_TOKENS``), which the whole workload would double."""
    return lm.device.type == "cuda"


#: New tokens of a CPU benchmark's warm-up: every row's prefill and first decoding steps, at the workload's own
#: shapes. Why every row: a process's heap grows to the workload's largest tensors (the rows x vocabulary logits)
#: on its first batches, and each new page costs a fault (measured: SmolLM2, 16 prompts x 25 samples, 122,700 minor
#: faults in the first run and 4 in the second); a long chapter pays that once, so the timed run should not.
WARM_UP_TOKENS = 2


def device_facts(device) -> dict:
    """What a benchmark's JSON says about where it ran: the device, and on a GPU its name, whether TF32 matmuls
    were allowed (``toxlib.models.device.tf32``) and whether decoding steps ran as CUDA graphs."""
    device = torch.device(device)
    if device.type != "cuda":
        return {"device": str(device)}
    return {"device": str(device), "gpu": torch.cuda.get_device_name(device), "tf32": tf32_enabled(),
            "cuda_graphs": graphs_wanted(device)}


def toxlib_generate(lm, prompts: list[str], config: DecodingConfig, stats: NucleusStats | None = None,
                    batch_rows: int | None = None) -> tuple[int, float]:
    """toxlib's way, without the cache. Returns (new tokens, seconds)."""
    start = time.perf_counter()
    df = generate(lm, prompts, config, cache=False, progress=False, stats=stats, batch_rows=batch_rows)
    return int(df["n_new_tokens"].sum()), time.perf_counter() - start


def timed_generation(lm, prompts: list[str], config, rows: int) -> dict:
    """toxlib's generation of ``prompts`` in ``lm``'s dtype, no cache, after a warm-up over every prompt
    (``WARM_UP_TOKENS`` new tokens; on a GPU the whole workload), between two measurements of the matmul rate at
    ``rows`` rows. Returns tok_s, roofline_pct and ``Denominator.report()``."""
    denominator = Denominator(lm.dtype, lm.architecture(), rows, lm.device)
    denominator.measure()
    toxlib_generate(lm, prompts, config if warms_up_whole(lm) else config.with_(max_new_tokens=WARM_UP_TOKENS))
    tokens, seconds = toxlib_generate(lm, prompts, config)
    denominator.measure()
    return {"tok_s": round(tokens / seconds, 1),
            "roofline_pct": percent(tokens / seconds, denominator.roofline_tok_s()), **denominator.report()}


def cached_measurement(kind: str, key: dict, measure) -> dict:
    """A timing is a fact about one run: ``measure()`` (returning a JSON-ready dict) runs once per ``key`` (with the
    machine and the torch version added) and is kept in the artefact cache (``toxlib.store.artefacts``, kind
    "timings"), with the UTC time it was taken in ``measured``; later calls return it, so a warm re-run of a chapter
    re-times nothing. Delete ``cache_dir()/timings`` (or change a parameter) to measure again."""
    import datetime

    full = {"kind": kind, **key, "machine": machine_description(), "cpu": describe_cpu(),
            "torch": torch.__version__, "threads": torch.get_num_threads()}
    return artefact_json(artefact_name("timings", kind, full, ".json"), lambda: measure() | {
        "measured": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")})
