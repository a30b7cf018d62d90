"""Which precision travels between CPUs? Logits of the same texts under two kernel paths of this CPU (issue 30).

Rows made on one CPU are recomputed on another by other kernels: MKL picks its code branch by the instruction set,
ATen its vector width. Two settings of one machine stand in for two machines:
  A: what this CPU runs by default (MKL's strict AUTO branch, ATen at the CPU's best vector width);
  B: MKL_CBWR=COMPATIBLE,STRICT (SSE2 kernels) and ATEN_CPU_CAPABILITY=default (scalar ATen kernels).
For each precision, a subprocess per setting computes the next-token logits of ``--texts`` RealToxicityPrompts
texts (24 tokens each, the last 8 positions), rounded to float32 at the end, as the sampler reads them:
  float32: the book's precision;
  float64: the model in float64 as transformers loads it (its RMSNorm and rotary embedding still go through
    float32);
  float64-everywhere: ``toxlib.models.load(..., dtype="float64")``, whose norms, rotary embeddings and inverse
    frequencies are float64 too (``toxlib.models.float64``);
and, from setting A's float32 logits, the tokens ``toxlib.generate.nucleus.nucleus_sample`` draws (p = 0.9, fixed
uniforms) under each setting. With ``--generate N``, also ``toxlib.generate.generate`` itself (RealToxicityPrompts'
sampling: 25 samples x up to 20 tokens, top-p 0.9, cache and record off) on ``bench generate``'s first N prompts,
in float32 and in float64 under each setting: the share of identical continuations and tokens/s per setting.
Prints one JSON object: per precision, the share of identical logits, the largest difference, the positions with
any difference, seconds per setting; the share of identical sampled tokens; and the generation comparison.

Usage: TOXLIB_DATA_MIRROR=../shared/data python scripts/kernel_paths.py [--model smollm2-135m] [--texts 32]
           [--generate 16]
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


def child(model: str, precision: str, n_texts: int, out: Path, sample_from: Path | None) -> None:
    """One setting, one precision: save the logits (and the sampled tokens) under ``out``."""
    import torch

    from toxlib.data.rtp_prompts import load_rtp_all
    from toxlib.generate.nucleus import nucleus_sample
    from toxlib.models import load

    if sample_from is not None:  # the sampler alone, on given logits
        logits = np.load(sample_from)
        scores = torch.from_numpy(logits).reshape(-1, logits.shape[-1]).repeat(16, 1)
        u = torch.rand(scores.shape[0], generator=torch.Generator().manual_seed(0), dtype=torch.float64)
        np.save(out / "tokens.npy", nucleus_sample(scores, 0.9, u).numpy())
        return
    if precision.startswith("generate-"):  # toxlib's own generation in float32 or float64
        generated(model, precision.removeprefix("generate-"), n_texts, out)
        return
    lm = load(model, dtype="float64" if precision == "float64-everywhere" else precision)
    if precision == "float64":  # as transformers loads it, without toxlib.models.float64
        from transformers import AutoModelForCausalLM

        lm._model = AutoModelForCausalLM.from_pretrained(lm.folder, dtype=torch.float64).eval()
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


def generated(model: str, dtype: str, n_prompts: int, out: Path) -> None:
    """``n_prompts`` of ``bench generate``'s prompts through ``toxlib.generate.generate`` in ``dtype``; saves the
    continuations and the tokens/s under ``out``."""
    from toxlib.benchmarks.prompts import bench_prompts
    from toxlib.generate import RTP_SAMPLING, generate
    from toxlib.models import load

    lm = load(model, dtype=dtype)
    prompts = bench_prompts(n_prompts)
    generate(lm, prompts[:2], RTP_SAMPLING.with_(max_new_tokens=2), cache=False, progress=False)  # warm-up
    start = time.perf_counter()
    rows = generate(lm, prompts, RTP_SAMPLING, cache=False, progress=False)
    seconds = time.perf_counter() - start
    (out / "seconds").write_text(f"{seconds:.3f}")
    (out / "tok_s").write_text(f"{rows['n_new_tokens'].sum() / seconds:.1f}")
    (out / "continuations.json").write_text(json.dumps(rows["continuation"].tolist()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--texts", type=int, default=32)
    parser.add_argument("--generate", type=int, default=0, metavar="N",
                        help="also compare toxlib's generation of N prompts x 25 samples (float32, float64)")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)  # precision, out folder, logits to sample from
    args = parser.parse_args()
    if args.child:
        precision, out, sample_from = args.child
        child(args.model, precision, args.texts, Path(out), Path(sample_from) if sample_from != "-" else None)
        return
    from toxlib.book_build.machine import kernel_facts

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
        for dtype in ("float32", "float64") if args.generate else ():
            for name, env in SETTINGS.items():
                out = root / f"generate-{dtype}" / name
                out.mkdir(parents=True)
                subprocess.run([sys.executable, __file__, "--model", args.model, "--texts", str(args.generate),
                                "--child", f"generate-{dtype}", str(out), "-"],
                               env={**os.environ, "TOXLIB_RECORD": "off", **env}, check=True, stdout=subprocess.DEVNULL)
            a, b = (json.loads((root / f"generate-{dtype}" / s / "continuations.json").read_text()) for s in SETTINGS)
            report[f"generate {dtype}"] = {
                "prompts": args.generate, "continuations": len(a), "identical": sum(x == y for x, y in zip(a, b)),
                "tok_s": {s: float((root / f"generate-{dtype}" / s / "tok_s").read_text()) for s in SETTINGS}}
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
