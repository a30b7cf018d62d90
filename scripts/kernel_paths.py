"""Which precision travels between CPUs? Logits of the same texts under two kernel paths of this CPU (issue 30).

Rows made on one CPU are recomputed on another by other kernels: MKL picks its code branch by the instruction set,
ATen its vector width. Two settings of one machine stand in for two machines:
  A: what this CPU runs by default (MKL's strict AUTO branch, ATen at the CPU's best vector width);
  B: MKL_CBWR=COMPATIBLE,STRICT (SSE2 kernels) and ATEN_CPU_CAPABILITY=default (scalar ATen kernels).
For each precision, a subprocess per setting computes the next-token logits of ``--texts`` RealToxicityPrompts
texts (24 tokens each, the last 8 positions), rounded to float32 at the end, as the sampler reads them:
  float32: the book's precision;
  float64: the model in float64 as transformers computes it (its RMSNorm and rotary embedding still go through
    float32);
  float64-everywhere: float64 with the norms and rotary embeddings of the bundled architectures (Llama, Gemma-3)
    kept in float64 too, their inverse frequencies recomputed in float64 (patched here, for the measurement only).
and, from setting A's float32 logits, the tokens ``toxlib.generate.nucleus.nucleus_sample`` draws (p = 0.9, fixed
uniforms) under each setting. Prints one JSON object: per precision, the share of identical logits, the largest
difference, the positions with any difference, seconds per setting; and the share of identical sampled tokens.

Usage: TOXLIB_DATA_MIRROR=../shared/data python scripts/kernel_paths.py [--model smollm2-135m] [--texts 32]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

SETTINGS = {"A": {}, "B": {"MKL_CBWR": "COMPATIBLE,STRICT", "ATEN_CPU_CAPABILITY": "default"}}
PRECISIONS = ("float32", "float64", "float64-everywhere")


def float64_everywhere():
    """Keep the bundled architectures' RMSNorm and rotary embeddings in float64 for float64 inputs (transformers
    computes them in float32 whatever the model's dtype); other dtypes take transformers' own code. Returns the
    function that recomputes a loaded model's rotary inverse frequencies in float64."""
    import torch
    import transformers.models.gemma3.modeling_gemma3 as gemma3
    import transformers.models.llama.modeling_llama as llama

    def norm_of(cls, gemma):
        original = cls.forward

        def forward(self, x):
            if x.dtype != torch.float64:
                return original(self, x)
            eps = self.eps if gemma else self.variance_epsilon
            normed = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)
            return normed * (1.0 + self.weight) if gemma else self.weight * normed
        cls.forward = forward

    def rope_of(cls, layered):
        original = cls.forward

        def forward(self, x, position_ids, *layer_type):
            if x.dtype != torch.float64:
                return original(self, x, position_ids, *layer_type)
            prefix = f"{layer_type[0]}_" if layered else ""
            inv_freq, scaling = getattr(self, f"{prefix}inv_freq"), getattr(self, f"{prefix}attention_scaling")
            freqs = position_ids[..., None].double() * inv_freq.to(device=x.device, dtype=torch.float64)
            emb = torch.cat((freqs, freqs), dim=-1)
            return emb.cos() * scaling, emb.sin() * scaling
        cls.forward = forward

    def float64_inv_freq(model) -> None:
        """The rotary inverse frequencies again, in float64 from the config: the float32 buffers transformers
        computes at load time differ between kernel paths (Gemma-3's did: ATen's pow, vector or scalar)."""
        for module in model.modules():
            params = getattr(getattr(module, "config", None), "rope_parameters", None)
            for name, buffer in list(module.named_buffers(recurse=False)):
                if not name.endswith("inv_freq"):
                    continue
                if params is None:
                    raise NotImplementedError(f"{name}: no rope_parameters in the config to recompute it from")
                layer = params.get(name.removesuffix("original_inv_freq").removesuffix("inv_freq").rstrip("_"), params)
                if layer.get("rope_type", "default") != "default":
                    raise NotImplementedError(f"rope type {layer['rope_type']} (only the default is recomputed)")
                dim = 2 * buffer.numel()
                inv = 1.0 / layer["rope_theta"] ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim)
                assert torch.allclose(inv.float(), buffer.float(), rtol=1e-6), name
                setattr(module, name, inv)
    norm_of(llama.LlamaRMSNorm, gemma=False)
    norm_of(gemma3.Gemma3RMSNorm, gemma=True)
    rope_of(llama.LlamaRotaryEmbedding, layered=False)
    rope_of(gemma3.Gemma3RotaryEmbedding, layered=True)
    return float64_inv_freq


def child(model: str, precision: str, n_texts: int, out: Path, sample_from: Path | None) -> None:
    """One setting, one precision: save the logits (and the sampled tokens) under ``out``."""
    import torch

    from toxlib.data.rtp_records import load_rtp_all
    from toxlib.generate.nucleus import nucleus_sample
    from toxlib.models import load

    if sample_from is not None:  # the sampler alone, on given logits
        logits = np.load(sample_from)
        scores = torch.from_numpy(logits).reshape(-1, logits.shape[-1]).repeat(16, 1)
        u = torch.rand(scores.shape[0], generator=torch.Generator().manual_seed(0), dtype=torch.float64)
        np.save(out / "tokens.npy", nucleus_sample(scores, 0.9, u).numpy())
        return
    recompute_inv_freq = float64_everywhere() if precision == "float64-everywhere" else None
    lm = load(model, dtype=torch.float64 if precision.startswith("float64") else precision)
    if recompute_inv_freq:
        recompute_inv_freq(lm.model)
    rtp = load_rtp_all()
    ids = [lm.tokenizer(t, add_special_tokens=False).input_ids[:24]
           for t in (rtp["prompt_text"] + rtp["continuation_text"]).head(4 * n_texts)]
    ids = [i for i in ids if len(i) == 24][:n_texts]
    if len(ids) < n_texts:
        raise SystemExit(f"only {len(ids)} texts of 24 tokens among the first {4 * n_texts}: ask for fewer --texts")
    start = time.perf_counter()
    with torch.inference_mode():
        logits = lm.model(input_ids=torch.tensor(ids)).logits[:, -8:].float()
    (out / "seconds").write_text(f"{time.perf_counter() - start:.3f}")
    np.save(out / "logits.npy", logits.numpy())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--texts", type=int, default=32)
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)  # precision, out folder, logits to sample from
    args = parser.parse_args()
    if args.child:
        precision, out, sample_from = args.child
        child(args.model, precision, args.texts, Path(out), Path(sample_from) if sample_from != "-" else None)
        return
    from toxlib.build.machine import kernel_facts

    report = {"model": args.model, "texts": args.texts, "machine": kernel_facts().get("cpu"),
              "settings": {k: v or "this CPU's defaults" for k, v in SETTINGS.items()}}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for precision in PRECISIONS:
            for name, env in SETTINGS.items():
                out = root / precision / name
                out.mkdir(parents=True)
                subprocess.run([sys.executable, __file__, "--model", args.model, "--texts", str(args.texts),
                                "--child", precision, str(out), "-"],
                               env={**os.environ, **env}, check=True, stdout=subprocess.DEVNULL)
            a, b = (np.load(root / precision / s / "logits.npy") for s in SETTINGS)
            report[precision] = {
                "identical logits": float((a == b).mean()), "largest difference": float(np.abs(a - b).max()),
                "positions with a difference": int((a != b).any(-1).sum()), "positions": int(a.shape[0] * a.shape[1]),
                "seconds": {s: float((root / precision / s / "seconds").read_text()) for s in SETTINGS}}
        # the sampler alone: the same float32 logits (setting A's), tokens drawn under A and under B
        for name in SETTINGS:
            out = root / "sampler" / name
            out.mkdir(parents=True)
            subprocess.run([sys.executable, __file__, "--model", args.model, "--texts", str(args.texts), "--child",
                            "float32", str(out), str(root / "float32" / "A" / "logits.npy")],
                           env={**os.environ, **SETTINGS[name]}, check=True, stdout=subprocess.DEVNULL)
        ta, tb = (np.load(root / "sampler" / s / "tokens.npy") for s in SETTINGS)
        report["sampler"] = {"identical tokens": float((ta == tb).mean()), "draws": int(ta.size)}
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
