"""Recompute unprompted rows of the sample record (the empty prompt) on this CPU, with the record off, and compare
them with the record's: prints per key the rows, the identical ones and the differing sample indices, and for the
first few the two texts. The record's audit (``record audit``) checks seeded slices; this checks whole pools, and
the adapted models' groups, which the audit cannot rebuild (the adapters are retrained here, as a build does).

Arguments: "pool" (SmolLM2's 10,000, about 10 minutes on 2 cores), "gemma-pool" (Gemma's 10,000), "detox" (the
detoxification chapter's groups of 200: WORD FILTER and the retrained DAPT and ATCON adapters; VOCAB-SHIFT is
left to the audit, which rebuilds it from the record's weights). The recomputed rows go into the user cache
(``TOXLIB_CACHE_DIR``), and, with ``TOXLIB_RECORD_USAGE=<log>``, into a usage log that ``record write`` could take.

Usage: TOXLIB_RECORD=off python scripts/recheck_unprompted.py pool detox
"""
import os
import sys
import time

from toxlib.generate import RTP_SAMPLING, generate
from toxlib.generate.api import run_identity
from toxlib.models import load
from toxlib.papers.rtp import detox
from toxlib.steer.adapt import AdaptConfig, adapt
from toxlib.steer.attribute import AttributeConditioning
from toxlib.steer.word_filter import WordFilter
from toxlib.store.record_reader import Record, record_dir, text_sha

if os.environ.get("TOXLIB_RECORD") != "off":
    raise SystemExit("run with TOXLIB_RECORD=off: with the record on, its own rows would come back")
which = sys.argv[1:] or ["detox"]
record = Record(record_dir())
empty = text_sha("")
config = RTP_SAMPLING.with_(max_new_tokens=20, top_p=0.9, seed=0)


def check(label, lm, steering, n, chapter):
    """Recompute the ``n`` unprompted rows of (lm, steering) and print how many equal the record's."""
    os.environ["TOXLIB_RECORD_CHAPTER"] = chapter
    key = run_identity(lm, config.with_(num_samples=n), steering)[1]
    stored = record.rows("generations", key)
    held = sorted(i for (sha, i) in stored if sha == empty)
    t = time.time()
    fresh = generate(lm, [""], config.with_(num_samples=n), steering=steering, progress=False)
    differ = []
    for _, row in fresh.iterrows():
        s = stored.get((empty, int(row["sample_idx"])))
        if s is None or (s[0], s[1], s[2]) != (row["continuation"], int(row["n_new_tokens"]), bool(row["stopped"])):
            differ.append((int(row["sample_idx"]), s and s[0], row["continuation"]))
    print(f"{label}: key {key[:12]}, record holds {len(held)} unprompted rows, recomputed {len(fresh)} "
          f"in {time.time() - t:.0f} s, {len(fresh) - len(differ)} identical; differ: "
          f"{[d[0] for d in differ]}", flush=True)
    for idx, old, new in differ[:5]:
        print(f"   sample {idx}: record {old!r}\n   {' ' * len(str(idx))}         now    {new!r}", flush=True)


base = load("smollm2-135m", dtype="float32")
if "pool" in which:
    check("SmolLM2 plain pool", base, None, 10000, "rtp_unprompted")
if "gemma-pool" in which:
    check("Gemma plain pool", load("gemma3-270m", dtype="float32"), None, 10000, "rtp_unprompted")
if "detox" in which:
    split = detox.detox_split(200, 200, 200, 0, max_corpus=None)
    corpora = {"DAPT (non-toxic)": (split.corpus[split.corpus["toxic"] == 0], "dapt"),
               "DAPT (toxic)": (split.corpus[split.corpus["toxic"] == 1], "dapt"),
               "ATCON": (split.corpus, "atcon")}
    t = time.time()
    adapted = {m: adapt(base, texts, AdaptConfig(method=kind, max_steps=24, seed=0), dtype="float32")
               for m, (texts, kind) in corpora.items()}
    for lm in adapted.values():  # trained (or read from the cache) here, so the time below is the training's
        lm.model
    print(f"adapters ready in {time.time() - t:.0f} s", flush=True)
    # as detox.method_runs builds them (the base model's 200 are the pool's first 200)
    runs = {"WORD FILTER": (base, WordFilter()), "DAPT (non-toxic)": (adapted["DAPT (non-toxic)"], None),
            "DAPT (toxic)": (adapted["DAPT (toxic)"], None),
            "ATCON": (adapted["ATCON"], AttributeConditioning.for_model(adapted["ATCON"]))}
    for method, (lm, steering) in runs.items():
        check(method, lm, steering, 200, "rtp_detox")
