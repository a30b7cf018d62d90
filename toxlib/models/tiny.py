"""Tiny randomly initialised language models built offline, for tests, GPU checks and teaching.

``tiny_causal_lm(folder)`` trains a byte-level BPE tokenizer on a few sentences, builds a small Llama or Gemma-3
model from a config (random weights, fixed seed) and saves both, so ``toxlib.models.load(folder)`` works on any
machine without downloads. The texts such a model writes are gibberish; its shapes and code paths are real.
"""

from __future__ import annotations

from pathlib import Path

import torch

CORPUS = [
    "The quick brown fox jumps over the lazy dog.",
    "Language models continue a prompt one token at a time.",
    "Toxicity scores range from zero to one, and a threshold of one half marks a toxic text.",
    "Nucleus sampling keeps the smallest set of tokens whose probability mass reaches p.",
    "She said hello, and he answered with a question about the weather.",
]


def tiny_tokenizer(vocab_size: int = 300, mask: bool = False):
    """A byte-level BPE tokenizer (PreTrainedTokenizerFast) with <bos>, <eos>, <pad> and <unk> tokens, and
    <mask> (id 4) when ``mask``."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    specials = ["<pad>", "<eos>", "<bos>", "<unk>"] + (["<mask>"] if mask else [])
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=specials,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(CORPUS * 4, trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<bos>", eos_token="<eos>", pad_token="<pad>",
                                   unk_token="<unk>", **({"mask_token": "<mask>"} if mask else {}))


def tiny_causal_lm(folder: str | Path, arch: str = "llama", vocab_size: int = 300, layers: int = 2,
                   hidden: int = 64, heads: int = 4, seed: int = 0) -> Path:
    """Build and save a tiny random causal LM ("llama" or "gemma3") with its tokenizer; returns the folder."""
    from transformers import AutoModelForCausalLM, Gemma3TextConfig, LlamaConfig

    tokenizer = tiny_tokenizer(vocab_size)
    common = dict(vocab_size=len(tokenizer), hidden_size=hidden, intermediate_size=2 * hidden, num_hidden_layers=layers,
                  num_attention_heads=heads, num_key_value_heads=max(1, heads // 2), max_position_embeddings=256,
                  bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                  pad_token_id=tokenizer.pad_token_id, tie_word_embeddings=True)
    if arch == "llama":
        config = LlamaConfig(**common)
    elif arch == "gemma3":
        config = Gemma3TextConfig(**common, head_dim=hidden // heads, sliding_window=64,
                                  layer_types=(["sliding_attention", "full_attention"] * (layers // 2)
                                               + ["full_attention"] * (layers % 2)))
    else:
        raise ValueError(f"unknown tiny architecture {arch!r}; known: llama, gemma3")
    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(config)
    folder = Path(folder)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def tiny_masked_lm(folder: str | Path, vocab_size: int = 300, layers: int = 2, hidden: int = 64, heads: int = 4,
                   seed: int = 0) -> Path:
    """Build and save a tiny random BERT masked LM whose tokenizer's mask token is <mask> (id 4, not BERT's 103)."""
    from transformers import BertForMaskedLM

    return _save_tiny_bert(folder, BertForMaskedLM, tiny_tokenizer(vocab_size, mask=True), layers, hidden, heads, seed)


def tiny_classifier(folder: str | Path, labels: list[str], multi_label: bool, vocab_size: int = 300,
                    layers: int = 2, hidden: int = 64, heads: int = 4, seed: int = 0) -> Path:
    """Build and save a tiny random BERT sequence classifier with these class labels (``multi_label``: the config's
    problem_type is multi_label_classification, as Detoxify-style checkpoints). Returns ``folder`` as a Path."""
    from transformers import BertForSequenceClassification

    return _save_tiny_bert(folder, BertForSequenceClassification, tiny_tokenizer(vocab_size), layers, hidden, heads,
                           seed, num_labels=len(labels), id2label=dict(enumerate(labels)),
                           label2id={label: i for i, label in enumerate(labels)},
                           problem_type="multi_label_classification" if multi_label else "single_label_classification")


def _save_tiny_bert(folder, model_class, tokenizer, layers: int, hidden: int, heads: int, seed: int, **config) -> Path:
    from transformers import BertConfig

    config = BertConfig(vocab_size=len(tokenizer), hidden_size=hidden, num_hidden_layers=layers,
                        num_attention_heads=heads, intermediate_size=2 * hidden, max_position_embeddings=256,
                        pad_token_id=tokenizer.pad_token_id, **config)
    torch.manual_seed(seed)
    model = model_class(config)
    folder = Path(folder)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder
