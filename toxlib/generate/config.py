"""Decoding settings and the hash that keys the generation cache.

``DecodingConfig`` holds everything about decoding that changes the texts; ``run_key`` adds the model's identity
and the steering so two runs share cached texts exactly when they would produce the same texts.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

MODES = ("sample", "greedy", "beam")


@dataclass(frozen=True)
class DecodingConfig:
    """How continuations are decoded.

    mode: "sample" (nucleus sampling, ``num_samples`` per prompt), "greedy" (one argmax continuation) or
      "beam" (``num_beams`` beams, the best one kept).
    top_p: nucleus mass (1.0 = plain sampling); top_k: optional top-k before top-p (None = off, as in the papers);
    temperature: logits are divided by it before sampling; max_new_tokens: continuation length limit;
    seed: base seed; each (prompt, sample_idx) gets its own generator seeded from it.
    stop_at_newline: also stop a continuation at the first token that contains a newline (kept in the text), as
      completion APIs do when asked to stop at "\n".
    """

    mode: str = "sample"
    num_samples: int = 25
    max_new_tokens: int = 20
    top_p: float = 0.9
    top_k: int | None = None
    temperature: float = 1.0
    num_beams: int = 3
    seed: int = 0
    stop_at_newline: bool = False

    def __post_init__(self):
        if self.mode not in MODES:
            raise ValueError(f"unknown decoding mode {self.mode!r}; known: {', '.join(MODES)}")
        if self.max_new_tokens < 1 or self.num_samples < 1 or self.num_beams < 1:
            raise ValueError("max_new_tokens, num_samples and num_beams must be >= 1")
        if not 0.0 < self.top_p <= 1.0:
            raise ValueError(f"top_p must be in (0, 1], got {self.top_p}")
        if self.temperature <= 0:
            raise ValueError(f"temperature must be > 0, got {self.temperature} (use mode='greedy' for argmax)")
        if self.mode != "sample" and self.num_samples != 1:
            object.__setattr__(self, "num_samples", 1)

    def key(self) -> dict:
        """The settings that determine the texts (unused ones dropped, so e.g. greedy ignores top_p). The number of
        samples is not one of them: sample i of a prompt is drawn from its own seeded uniforms whatever the number
        asked for (and whatever rows share its batch), so a run of 1,000 samples is the first 1,000 rows of a run
        of 10,000, and reads them from the cache or the sample record."""
        d = asdict(self)
        d.pop("num_samples")
        if self.mode != "sample":
            for name in ("top_p", "top_k", "temperature", "seed"):
                d.pop(name)
        if self.mode != "beam":
            d.pop("num_beams")
        if not self.stop_at_newline:  # keeps the keys of runs made before the option existed
            d.pop("stop_at_newline")
        return d

    def with_(self, **changes) -> "DecodingConfig":
        return replace(self, **changes)


#: RealToxicityPrompts' prompted setting: 25 nucleus samples (p = 0.9) of up to 20 new tokens per prompt.
RTP_SAMPLING = DecodingConfig(mode="sample", num_samples=25, max_new_tokens=20, top_p=0.9)


#: The generation scheme every cached and recorded text is keyed by (``run_key``): batches of prompts padded to a width
#: fixed by their own length (``toxlib.models.batching.bucket_width``), no forward pass or LM-head chunk of fewer
#: than ``MIN_ROWS`` rows, row-wise vocabulary sums, and sample i of a prompt the same row in a run of any size. Bump
#: it when a change can move a generated token (``tests/test_version_guards.py`` holds it to the engine's code);
#: what each version changed is in CHANGELOG.md.
ENGINE_VERSION = 5
#: The engine's revision for timing caches: it changes when the code gets faster without changing a single text, so
#: cached texts stay valid and only the timings are taken again (CHANGELOG.md lists the revisions).
ENGINE_TIMING_REVISION = "4.4"


#: the GPU decoding path's revision (``toxlib.generate.static_decode``), in the keys of rows computed on a GPU only
GPU_ENGINE_VERSION = 1


def run_key(model_name: str, weights_id: str, dtype: str, config: DecodingConfig, steering: dict | None,
            kernels: str | None = None) -> dict:
    """Everything that determines a run's texts besides the prompt. Batching is excluded: padding each prompt to a
    width fixed by its own length, and never running a matmul of fewer than ``MIN_ROWS`` rows (decoding steps and
    the prefill's LM head alike), make a prompt's texts independent of its batch. "engine" names that scheme
    (``ENGINE_VERSION``), so texts of earlier schemes, which could depend on the batch (version 3: a prompt alone
    in its batch decoded with other kernels), are not reused.

    kernels: ``toxlib.models.device.kernel_key`` of the device the rows are computed on. None (a CPU) adds
    nothing, so a CPU's keys are the ones the sample record holds; a GPU's ("cuda", "cuda+tf32") adds it and the
    GPU path's revision (``GPU_ENGINE_VERSION``): its rows differ from a CPU's in the last bits of the logits, and
    may depend on the rows beside them (cuBLAS picks kernels by shape)."""
    key = {"model": model_name, "weights": weights_id, "dtype": dtype, "decoding": config.key(),
           "steering": steering or None, "engine": ENGINE_VERSION}
    if kernels is not None:
        key.update(kernels=kernels, gpu_engine=GPU_ENGINE_VERSION)
    return key
