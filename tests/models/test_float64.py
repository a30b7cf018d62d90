"""float64 throughout (toxlib.models.float64): a float64 model's norms and rotary embeddings compute in float64."""

from __future__ import annotations

import pytest
import torch
from float64_blocks import FLOAT64_BLOCKS_UNMEASURED

from toxlib.generate import DecodingConfig, generate
from toxlib.models import load
from toxlib.models.float64 import float64_throughout
from toxlib.models.lm_head import head_logits


def _modules(model, suffix):
    return [m for m in model.modules() if type(m).__name__.endswith(suffix)]


@pytest.mark.parametrize("arch", ["llama", "gemma3"])
def test_a_float64_model_norms_in_float64_where_transformers_would_round_to_float32(tiny_model_dirs, arch):
    lm = load(str(tiny_model_dirs[arch]), device="cpu", dtype="float64")
    norms = _modules(lm.model, "RMSNorm")
    assert norms and all("forward" in vars(m) for m in norms)
    norm = norms[0]
    with torch.no_grad():
        norm.weight.copy_(torch.linspace(-0.5, 0.5, norm.weight.numel(), dtype=torch.float64))
    x = torch.randn(4, norm.weight.numel(), dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    eps = getattr(norm, "eps", getattr(norm, "variance_epsilon", None))
    by_hand = x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps) * ((1 + norm.weight) if arch == "gemma3"
                                                                     else norm.weight)
    transformers_way = type(norm).forward(norm, x)  # the class's own forward: through float32
    torch.testing.assert_close(norm(x), by_hand, rtol=1e-14, atol=1e-15)
    assert (transformers_way - by_hand).abs().max() > 1e-10  # so the check above tells the two apart


@pytest.mark.parametrize("arch", ["llama", "gemma3"])
def test_a_float64_model_rotary_frequencies_and_angles_are_float64(tiny_model_dirs, arch):
    lm = load(str(tiny_model_dirs[arch]), device="cpu", dtype="float64")
    (rotary,) = _modules(lm.model, "RotaryEmbedding")
    buffers = {name: b for name, b in rotary.named_buffers() if name.endswith("inv_freq")}
    assert buffers and all(b.dtype == torch.float64 for b in buffers.values())
    name, inv_freq = sorted(buffers.items())[0]
    layer_type = name.removesuffix("inv_freq").removesuffix("original_").rstrip("_")
    params = rotary.config.rope_parameters
    theta = (params[layer_type] if layer_type else params)["rope_theta"]
    dim = 2 * inv_freq.numel()
    # float64 to its last bits or so (a float32 buffer would be about 1e-8 off)
    torch.testing.assert_close(inv_freq, theta ** -(torch.arange(0, dim, 2, dtype=torch.float64) / dim), rtol=1e-15,
                               atol=0)
    positions = torch.tensor([[0, 1, 700, 4095]])
    cos, sin = rotary(torch.zeros(1, dtype=torch.float64), positions, *([layer_type] if layer_type else []))
    angles = positions[..., None].double() * inv_freq
    assert cos.dtype == torch.float64
    torch.testing.assert_close(cos[..., :inv_freq.numel()], angles.cos(), rtol=0, atol=1e-15)
    torch.testing.assert_close(sin[..., inv_freq.numel():], angles.sin(), rtol=0, atol=1e-15)


@pytest.mark.parametrize("arch", ["llama", "gemma3"])
def test_float64_logits_are_the_float32_models_within_float32_rounding(tiny_model_dirs, arch):
    ids = torch.tensor([[5, 6, 7, 9, 11, 3], [8, 12, 10, 9, 4, 4]])
    logits = {}
    for dtype in ("float32", "float64"):
        with torch.inference_mode():
            logits[dtype] = load(str(tiny_model_dirs[arch]), device="cpu", dtype=dtype).model(input_ids=ids).logits
    assert logits["float64"].dtype == torch.float64
    torch.testing.assert_close(logits["float64"].float(), logits["float32"], rtol=1e-4, atol=1e-5)


def test_float32_models_are_left_as_transformers_loads_them(tiny_model_dirs):
    lm = load(str(tiny_model_dirs["gemma3"]), device="cpu", dtype="float32")
    kept = _modules(lm.model, "RMSNorm") + _modules(lm.model, "RotaryEmbedding")
    assert kept and not any("forward" in vars(m) for m in kept)
    assert all(b.dtype == torch.float32 for name, b in lm.model.named_buffers() if name.endswith("inv_freq"))


def test_a_norm_of_another_form_is_refused_not_silently_recomputed():
    class ScaledRMSNorm(torch.nn.Module):  # y = 2 w x / rms(x): neither Llama's nor Gemma's form
        def __init__(self):
            super().__init__()
            self.weight, self.eps = torch.nn.Parameter(torch.ones(8, dtype=torch.float64)), 1e-6

        def forward(self, x):
            return 2 * self.weight * x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)

    model = torch.nn.Sequential(ScaledRMSNorm())
    with pytest.raises(NotImplementedError, match="ScaledRMSNorm.*does not match.*float32"):
        float64_throughout(model)


def test_float64_generation_is_its_own_run_and_samples(tiny_model_dirs):
    config = DecodingConfig(mode="sample", num_samples=3, max_new_tokens=5, top_p=0.9)
    rows = {dtype: generate(load(str(tiny_model_dirs["llama"]), device="cpu", dtype=dtype), ["Hello there"], config,
                            cache=False, progress=False) for dtype in ("float32", "float64")}
    assert len(rows["float64"]) == 3 and (rows["float64"]["n_new_tokens"] > 0).all()
    assert rows["float64"]["config_hash"].iloc[0] != rows["float32"]["config_hash"].iloc[0]


@pytest.mark.parametrize("shape", [(576, 192), (576, 1536), (1536, 576), (640, 1024), (640, 8192)])
@(FLOAT64_BLOCKS_UNMEASURED or (lambda test: test))
def test_a_float64_linear_gives_a_row_the_same_bits_in_any_batch(shape):
    """One thread, whole row blocks, at the bundled models' shapes (SmolLM2's k_proj, MLP in and out; Gemma-3's
    q_proj, a slice of its LM head): row counts 1-40, 192 and 768 against 1,024 rows. Without the blocks, 30 of the
    40 small counts (those not a multiple of 4) differ on an AMD EPYC without AVX-512; on 2 threads without the
    single thread, at (640, 1024), every count up to 768 does. Tiny matrices (16 or 64 inputs) take another MKL
    path whose rows differ at every count: the tiny test models are not used here."""
    layer = torch.nn.Linear(*shape, bias=False, dtype=torch.float64)
    float64_throughout(torch.nn.Sequential(layer))
    assert "forward" in vars(layer)
    x = torch.randn(1024, shape[0], dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    threads = torch.get_num_threads()
    with torch.inference_mode():
        full = layer(x)
        counts = [*range(1, 41), 192, 768]
        assert [n for n in counts if not torch.equal(layer(x[:n]), full[:n])] == []
        assert torch.equal(layer(x.reshape(64, 16, -1)), full.reshape(64, 16, -1))  # any leading dimensions
    assert torch.get_num_threads() == threads  # the one-thread matmul gives the threads back


def test_only_a_float64_model_on_a_cpu_gets_whole_row_blocks(tiny_model_dirs):
    lm = load(str(tiny_model_dirs["llama"]), device="cpu", dtype="float64")
    linears = [m for m in lm.model.modules() if isinstance(m, torch.nn.Linear)]
    assert linears and all("forward" in vars(m) for m in linears)
    layer = torch.nn.Linear(576, 192, dtype=torch.float32)
    float64_throughout(torch.nn.Sequential(layer))
    assert "forward" not in vars(layer)


@(FLOAT64_BLOCKS_UNMEASURED or (lambda test: test))
def test_a_float64_head_called_directly_also_takes_whole_row_blocks():
    """Perplexity calls the LM head through ``head_logits``, not through the module: a float64 head there gives a
    row the same bits in any batch, the same bits as the module's own call."""
    head = torch.nn.Linear(640, 8192, bias=False, dtype=torch.float64)
    float64_throughout(torch.nn.Sequential(head))
    hidden = torch.randn(1024, 640, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    with torch.inference_mode():
        full = head_logits(head, hidden)
        assert torch.equal(full, head(hidden))
        assert [n for n in (1, 3, 5, 9, 33, 192) if not torch.equal(head_logits(head, hidden[:n]), full[:n])] == []
        strided = hidden.reshape(64, 16, 640)[:, -1:]  # a prefill's last positions: a strided view
        assert torch.equal(head_logits(head, strided)[:, 0], head_logits(head, hidden.reshape(64, 16, 640)[:, -1]))


def test_a_float64_rotary_embedding_answers_in_its_input_dtype(tiny_model_dirs):
    """A float32 copy of a float64 model (``.float()`` keeps the replaced forwards) gets float32 angles back."""
    lm = load(str(tiny_model_dirs["gemma3"]), device="cpu", dtype="float64")
    (rotary,) = _modules(lm.model, "RotaryEmbedding")
    layer_type = rotary.layer_types[0]
    cos, sin = rotary(torch.zeros(1, dtype=torch.float32), torch.arange(4)[None], layer_type)
    assert cos.dtype == sin.dtype == torch.float32
