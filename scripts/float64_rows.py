"""Does a float64 row depend on its batch? Row counts whose rows differ from the same rows among more (issue 30).

For the bundled models' linear shapes, ``x[:n] @ w.T`` against the first n rows of ``x @ w.T`` over 1,024 rows, for
n in 1-40, 192 and 768: as MKL computes it on this process's threads, on one thread, and through a float64 model's
linear layer (``toxlib.models.float64``: one thread, whole 8-row blocks). Then, per bundled model loaded with
``dtype="float64"``, the batch sizes (1-50 sequences of 1 and 12 tokens) whose logits differ from a 64-sequence batch.
Prints one JSON object.

Usage: python scripts/float64_rows.py [--models smollm2-135m gemma3-270m]
"""

from __future__ import annotations

import argparse
import json

import torch

from toxlib.book_build.machine import kernel_facts
from toxlib.models import load
from toxlib.models.float64 import float64_throughout

SHAPES = [(576, 192), (576, 1536), (1536, 576), (640, 256), (640, 1024), (640, 2048), (2048, 640)]
COUNTS = [*range(1, 41), 192, 768]
BATCHES = [1, 2, 3, 4, 5, 8, 15, 16, 33, 50]


def differing(product, x: torch.Tensor) -> list[int]:
    with torch.inference_mode():
        full = product(x)
        return [n for n in COUNTS if not torch.equal(product(x[:n]), full[:n])]


def one_thread(product):
    def run(x):
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            return product(x)
        finally:
            torch.set_num_threads(threads)
    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="*", default=["smollm2-135m", "gemma3-270m"])
    args = parser.parse_args()
    report = {"machine": kernel_facts().get("cpu"), "threads": torch.get_num_threads(), "counts": COUNTS,
              "shapes": {}, "models": {}}
    for k, n in SHAPES:
        layer = torch.nn.Linear(k, n, bias=False, dtype=torch.float64)
        x = torch.randn(1024, k, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
        plain = differing(lambda t: t @ layer.weight.T, x)
        single = differing(one_thread(lambda t: t @ layer.weight.T), x)
        float64_throughout(torch.nn.Sequential(layer))
        report["shapes"][f"{k}x{n}"] = {"as MKL runs it": plain, "one thread": single,
                                        "toxlib float64": differing(layer, x)}
    for name in args.models:
        lm = load(name, dtype="float64")
        found = {}
        for length in (1, 12):
            ids = torch.randint(100, 40000, (64, length), generator=torch.Generator().manual_seed(0))
            with torch.inference_mode():
                full = lm.model(input_ids=ids).logits
                found[f"{length} tokens"] = [b for b in BATCHES
                                             if not torch.equal(lm.model(input_ids=ids[:b]).logits, full[:b])]
        report["models"][name] = found
        del lm
    print(json.dumps(report))


if __name__ == "__main__":
    main()
