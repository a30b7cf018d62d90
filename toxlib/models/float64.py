"""float64 throughout: a loaded float64 model's RMSNorms and rotary embeddings computed in float64 too.

Why: a row made on one CPU is recomputed on another by other kernels (MKL picks its code branch by the instruction
set, ATen its vector width). In float32 those kernels round differently, so most next-token logits move in their
last bits and a sampled continuation can part from the record's. In float64 the same differences sit about 29 bits
lower and almost never survive the rounding of the logits to float32, which the sampler reads
(``toxlib.generate.engine``: ``logits.float()``). But transformers computes Llama's and Gemma-3's RMSNorm and
rotary embeddings in float32 whatever the model's dtype, from inverse frequencies built as float32 buffers at load
time, so a float64 model as transformers loads it still carries float32 rounding in every layer. Measured with
``scripts/kernel_paths.py`` on an AMD EPYC without AVX-512, between two kernel paths of that CPU (share of
next-token logits bit-identical): SmolLM2 float32 3.1%, float64 as transformers computes it 97.4%, float64 with
this module all but 2 of 12.6M; Gemma-3 1.2%, 7.4%, 99.99987% (the remaining differences one float32 step, where
float64 values that differ in their last bits round to neighbouring float32 values).

``float64_throughout(model)`` gives every RMSNorm and rotary embedding of a float64 model a float64 forward and
recomputes its rotary inverse frequencies in float64 from the config; each replaced forward is checked against the
original on a probe input (same result within float32 rounding) so a norm of another form raises instead of
silently computing something else. Other dtypes are left as they are. Written here because transformers has no
option for it.

Rows that do not depend on their batch. Float64 matmuls are not row-invariant the way float32 ones are in MKL's
strict mode (``toxlib.models.cpu_kernels``). Measured on an AMD EPYC without AVX-512, 2 threads, in that mode:
(1) ``x @ w.T`` gave a row the bits it gets among 1,024 rows only when the row sat in a complete block of 4 rows
(the last ``rows % 4`` rows of any other count differed), and (2) with 2 threads MKL split some products' sums
between the threads, so that at three of Gemma-3's shapes (640x256, 640x1024, 2048x640) whole blocks differed
too (192 and 768 rows against 1,024; in the model, up to 2e-13). One thread and whole blocks: no row count differed, at
every shape of both bundled models (``scripts/float64_rows.py``); the same, 4-row blocks included, on an AMD EPYC
with AVX-512 (family 25). So every ``nn.Linear`` of a float64 model on a
CPU runs on one thread over whole blocks of ``ROW_BLOCK`` rows (zero rows appended and dropped: at most 7 a
matmul; the LM head too, when perplexity calls it directly: ``toxlib.models.lm_head``); the other operations
keep every thread. Parallel work goes to processes instead (``toxlib.executors``). The thread count is the
process's: two Python threads sharing a float64 model could see each other's one-thread spells.
Tiny matrices (16 or 64 inputs, the test models') take another MKL path whose rows differ at every count; the
rule is tested at the bundled models' shapes. ``tests/generate/test_batch_invariance.py`` asserts it in float64
too, so a CPU whose blocks are larger fails there.

Supported: norms that compute ``weight * x / rms(x)`` (Llama, SmolLM2, Qwen2, Mistral) or ``(1 + weight) * x /
rms(x)`` (Gemma), and rotary embeddings of the default RoPE type with one set of frequencies (Llama) or one per
layer type (Gemma-3). Anything else raises ``NotImplementedError`` naming the module and what to do.
"""

from __future__ import annotations

import types

import torch
import torch.nn.functional as F

#: A float64 matmul on a CPU gets whole blocks of this many rows: 4 measured (AMD EPYC without AVX-512: 4 doubles
#: a vector register; 4 too on one with AVX-512), 8 to cover CPUs whose 8-double (AVX-512) registers block by 8.
ROW_BLOCK = 8


def float64_throughout(model: torch.nn.Module) -> torch.nn.Module:
    """``model`` (returned, changed in place) with float64 norms, rotary embeddings and inverse frequencies, and,
    on a CPU, linear layers on one thread over whole ``ROW_BLOCK``-row blocks, when its parameters are float64; any
    other model is returned unchanged."""
    first = next(model.parameters())
    if first.dtype != torch.float64:
        return model
    for name, module in model.named_modules():
        kind = type(module).__name__
        if isinstance(module, torch.nn.Linear) and first.device.type == "cpu":
            module.forward = types.MethodType(linear_in_whole_blocks, module)
        elif kind.endswith("RMSNorm"):
            _float64_norm(name, module, gemma=kind.startswith("Gemma"))
        elif kind.endswith("RotaryEmbedding"):
            _float64_rotary(name, module)
    return model


def whole_blocks(layer: torch.nn.Module) -> bool:
    """Whether ``layer`` is a linear layer that ``linear_in_whole_blocks`` computes: float64, on a CPU."""
    return (isinstance(layer, torch.nn.Linear) and layer.weight.dtype == torch.float64
            and layer.weight.device.type == "cpu")


def linear_in_whole_blocks(self: torch.nn.Linear, x: torch.Tensor) -> torch.Tensor:
    """``F.linear`` on one thread over x's rows (all dimensions but the last, flattened into a contiguous copy)
    with zero rows appended up to a multiple of ``ROW_BLOCK``, so every row sits in a complete block of a
    contiguous matrix, no sum is split between threads, and a row gets the same bits in any batch."""
    rows = x.numel() // x.shape[-1]
    flat = torch.cat([x.reshape(rows, x.shape[-1]), x.new_zeros(-rows % ROW_BLOCK, x.shape[-1])])
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # about a microsecond each way
    try:
        return F.linear(flat, self.weight, self.bias)[:rows].reshape(*x.shape[:-1], self.out_features)
    finally:
        torch.set_num_threads(threads)


def _float64_norm(name: str, module: torch.nn.Module, gemma: bool) -> None:
    eps = getattr(module, "eps", getattr(module, "variance_epsilon", None))
    if eps is None or getattr(module, "weight", None) is None:
        raise NotImplementedError(f"{name} ({type(module).__name__}): an RMSNorm without weight and eps or "
                                  "variance_epsilon; load this model in float32, or add its form to "
                                  "toxlib.models.float64")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        normed = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)
        return normed * (1.0 + self.weight) if gemma else self.weight * normed

    probe = torch.randn(3, module.weight.shape[-1], dtype=torch.float64,  # not from the global generator
                        generator=torch.Generator().manual_seed(0)).to(module.weight.device)
    _replace_forward(name, module, forward, (probe,))


def _float64_rotary(name: str, module: torch.nn.Module) -> None:
    layered = hasattr(module, "layer_types")  # Gemma-3: frequencies per layer type, "<type>_inv_freq"
    prefixes = [f"{t}_" for t in module.layer_types if hasattr(module, f"{t}_inv_freq")] if layered else [""]
    if not prefixes:
        raise NotImplementedError(f"{name} ({type(module).__name__}): no <layer type>_inv_freq buffer; load this model "
                                  "in float32, or add its form to toxlib.models.float64")
    for prefix in prefixes:
        _recompute_inv_freq(name, module, prefix)

    def forward(self, x: torch.Tensor, position_ids: torch.Tensor, layer_type: str | None = None):
        prefix = f"{layer_type}_" if layered else ""
        inv_freq = getattr(self, f"{prefix}inv_freq")
        freqs = position_ids[..., None].to(torch.float64) * inv_freq.to(device=x.device, dtype=torch.float64)
        emb = torch.cat((freqs, freqs), dim=-1)
        scaling = getattr(self, f"{prefix}attention_scaling")  # back in x's dtype, as transformers' (a copy cast to
        return (emb.cos() * scaling).to(x.dtype), (emb.sin() * scaling).to(x.dtype)  # float32 keeps this forward)

    device = getattr(module, f"{prefixes[0]}inv_freq").device
    probe = torch.zeros(1, 1, dtype=torch.float64, device=device), torch.arange(16, device=device)[None]
    for prefix in prefixes:
        arguments = probe + ((prefix[:-1],) if layered else ())
        _replace_forward(name, module, forward, arguments, keep=prefix != prefixes[-1])


def _recompute_inv_freq(name: str, module: torch.nn.Module, prefix: str) -> None:
    """``<prefix>inv_freq`` (and ``<prefix>original_inv_freq``) again in float64, from the RoPE parameters of the
    module's config: the float32 buffers transformers computes at load time differ between kernel paths (Gemma-3's
    did, between ATen's vector and scalar ``pow``)."""
    config = module.config
    params = config.rope_parameters
    params = params.get(prefix[:-1], params) if prefix else params
    if params.get("rope_type", "default") != "default":
        raise NotImplementedError(f"{name}: RoPE type {params['rope_type']!r}; only the default type is recomputed "
                                  "in float64. Load this model in float32, or add its type to toxlib.models.float64")
    buffer = getattr(module, f"{prefix}inv_freq")
    dim = 2 * buffer.numel()
    inv_freq = 1.0 / params["rope_theta"] ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim)
    if not torch.allclose(inv_freq.float(), buffer.float(), rtol=1e-6):
        raise NotImplementedError(f"{name}: its {prefix}inv_freq is not theta^(-2i/dim) for the config's "
                                  f"rope_theta {params['rope_theta']}; load this model in float32")
    for buffer_name in (f"{prefix}inv_freq", f"{prefix}original_inv_freq"):
        if hasattr(module, buffer_name):
            setattr(module, buffer_name, inv_freq.to(buffer.device).clone())


def _replace_forward(name: str, module: torch.nn.Module, forward, probe: tuple, keep: bool = False) -> None:
    """Give ``module`` ``forward`` after checking it against the original on ``probe`` (float64 results within
    float32 rounding of the original's: 1e-5, since a float32 rotary angle at position 15 is already ~1e-6 off);
    ``keep``: check only, for a module probed once per layer type."""
    original = module.forward
    with torch.inference_mode():
        expected, got = original(*probe), forward(module, *probe)
    pairs = zip(expected, got) if isinstance(expected, tuple) else [(expected, got)]
    for want, have in pairs:
        if have.dtype != torch.float64 or not torch.allclose(have, want.to(torch.float64), rtol=1e-5, atol=1e-5):
            raise NotImplementedError(f"{name} ({type(module).__name__}): its float64 form does not match "
                                      "transformers' on a probe input; load this model in float32, or add its form "
                                      "to toxlib.models.float64")
    if not keep:
        module.forward = types.MethodType(forward, module)
