"""Batched generation on tiny random models: padding, seeds, modes, hooks and the output table."""

from __future__ import annotations

import pandas as pd
import pytest
import torch

from toxlib.generate import GENERATION_COLUMNS, DecodingConfig, generate
from toxlib.models import load
from toxlib.steer import LogitsSteering, PromptTemplate

PROMPTS = ["The quick brown fox", "Hello", "Nucleus sampling keeps the smallest set of tokens", "She said"]
SAMPLE = DecodingConfig(num_samples=5, max_new_tokens=8, top_p=0.9, seed=1)
GREEDY = DecodingConfig(mode="greedy", max_new_tokens=8)


def run(lm, prompts=PROMPTS, config=SAMPLE, **kw):
    return generate(lm, prompts, config, cache=False, progress=False, **kw)


@pytest.fixture(scope="module", params=["llama", "gemma3"])
def lm(request, tiny_model_dirs):
    return load(str(tiny_model_dirs[request.param]), device="cpu")


def hf_greedy(lm, ids: list[int], steps: int) -> list[int]:
    out = lm.model.generate(torch.tensor([ids]), attention_mask=torch.ones(1, len(ids), dtype=torch.long),
                            do_sample=False, max_new_tokens=steps, pad_token_id=lm.pad_id,
                            eos_token_id=list(lm.stop_ids), top_p=None, top_k=None, temperature=None)
    new = out[0, len(ids):].tolist()
    return new[: new.index(lm.stop_ids[0]) + 1] if lm.stop_ids[0] in new else new


def test_output_table(lm):
    df = run(lm)
    assert list(df.columns) == GENERATION_COLUMNS
    assert len(df) == len(PROMPTS) * 5
    assert df.groupby("prompt_id")["sample_idx"].apply(list).tolist() == [list(range(5))] * len(PROMPTS)
    assert df["prompt"].tolist() == [p for p in PROMPTS for _ in range(5)]
    assert df["n_new_tokens"].between(1, 8).all()
    assert (df["n_new_tokens"] < 8)[df["stopped"]].all()
    assert df["config_hash"].nunique() == 1 and df["model"].iloc[0] == lm.name


def test_batching_and_padding_do_not_change_texts(lm):
    together = run(lm, batch_rows=1000)
    one_prompt_per_batch = run(lm, batch_rows=5)
    reversed_order = run(lm, prompts=PROMPTS[::-1], batch_rows=10)
    assert together["continuation"].tolist() == one_prompt_per_batch["continuation"].tolist()
    by_prompt = reversed_order.set_index(["prompt", "sample_idx"])["continuation"]
    assert [by_prompt[(p, i)] for p, i in zip(together["prompt"], together["sample_idx"])] == \
        together["continuation"].tolist()


def test_a_shared_prompt_prefix_run_once_changes_no_text(lm):
    from toxlib.generate.engine import MIN_SHARED_PREFIX, shared_prefix

    preamble = "Is it toxic? the quick brown fox => False\n"
    prompts = [preamble + tail for tail in ("Hi =>", "A longer phrase =>", "She said =>")]
    encoded = [lm.tokenizer(p).input_ids for p in prompts]
    width = max(map(len, encoded)) + 8
    window = getattr(lm.model.config, "sliding_window", None) or width
    assert shared_prefix(encoded) >= MIN_SHARED_PREFIX and width <= window
    shared = run(lm, prompts=prompts, batch_rows=1000)  # one batch: the preamble runs once
    alone = run(lm, prompts=prompts, batch_rows=5)  # one prompt per batch: nothing shared
    assert shared["continuation"].tolist() == alone["continuation"].tolist()
    greedy = run(lm, prompts=prompts, config=GREEDY, batch_rows=1000)
    for prompt, text in zip(greedy["prompt"], greedy["continuation"]):
        expected = [t for t in hf_greedy(lm, lm.tokenizer(prompt).input_ids, 8) if t not in lm.stop_ids]
        assert text == lm.tokenizer.decode(expected, skip_special_tokens=True)


def test_stop_at_newline_ends_continuations_at_their_first_newline(lm):
    from toxlib.generate.api import newline_token_ids

    config = SAMPLE.with_(max_new_tokens=12, stop_at_newline=True)
    cut = run(lm, config=config)
    free = run(lm, config=SAMPLE.with_(max_new_tokens=12))
    newline_ids = set(newline_token_ids(lm.tokenizer))
    assert newline_ids  # the tiny byte-level vocabulary has "\n" tokens
    with_newline = cut[cut["continuation"].str.contains("\n")]
    assert len(with_newline) > 0 and with_newline["stopped"].all()
    # the newline came with the last token: nothing but that token's tail follows it
    assert all(len(c.split("\n", 1)[1]) <= 2 for c in with_newline["continuation"])
    # up to the newline, the texts are those of the unrestricted run (same seeds)
    assert [c.split("\n", 1)[0] for c in cut["continuation"]] == [c.split("\n", 1)[0] for c in free["continuation"]]
    assert "stop_at_newline" in config.key() and "stop_at_newline" not in SAMPLE.key()


def test_same_seed_same_texts_other_seed_other_texts(lm):
    a, b = run(lm), run(lm)
    c = run(lm, config=SAMPLE.with_(seed=2))
    assert a.equals(b)
    assert (a["continuation"] != c["continuation"]).mean() > 0.5
    assert a["config_hash"].iloc[0] != c["config_hash"].iloc[0]
    assert a.groupby("prompt")["continuation"].nunique().min() > 1  # samples of one prompt differ


def test_greedy_matches_transformers_generate_one_prompt_at_a_time(lm):
    df = run(lm, config=GREEDY)
    for prompt, text in zip(df["prompt"], df["continuation"]):
        expected = hf_greedy(lm, lm.tokenizer(prompt).input_ids, 8)
        expected = [t for t in expected if t not in lm.stop_ids]
        assert text == lm.tokenizer.decode(expected, skip_special_tokens=True)


def test_unprompted_starts_from_the_start_token(lm):
    df = run(lm, prompts=[""], config=GREEDY)
    expected = [t for t in hf_greedy(lm, lm.start_ids, 8) if t not in lm.stop_ids]
    assert df["continuation"].iloc[0] == lm.tokenizer.decode(expected, skip_special_tokens=True)


def test_beam_search_runs_batched(lm):
    beam = run(lm, config=DecodingConfig(mode="beam", num_beams=3, max_new_tokens=6))
    single = [run(lm, prompts=[p], config=DecodingConfig(mode="beam", num_beams=3, max_new_tokens=6))
              for p in PROMPTS]
    assert len(beam) == len(PROMPTS)
    assert beam["continuation"].tolist() == [s["continuation"].iloc[0] for s in single]


class BanSubstring:
    """Logits processor that forbids every token whose text contains a substring."""

    def __init__(self, tokenizer, text: str):
        self.banned = [i for i in range(len(tokenizer)) if text in tokenizer.decode([i])]

    def __call__(self, input_ids, scores):
        scores[:, self.banned] = -float("inf")
        return scores


def test_logits_processor_hook(lm):
    free = run(lm, config=SAMPLE.with_(max_new_tokens=12))
    ban_e = LogitsSteering("ban", [BanSubstring(lm.tokenizer, "e")], {"substring": "e"})
    banned = run(lm, config=SAMPLE.with_(max_new_tokens=12), steering=ban_e)
    assert free["continuation"].str.contains("e").any()
    assert not banned["continuation"].str.contains("e").any()
    assert free["config_hash"].iloc[0] != banned["config_hash"].iloc[0]


def test_prompt_transformation_hook(lm):
    steered = run(lm, config=GREEDY, steering=PromptTemplate("Be kind: {prompt}"))
    direct = run(lm, prompts=[f"Be kind: {p}" for p in PROMPTS], config=GREEDY)
    assert steered["prompt"].tolist() == PROMPTS  # the table keeps the original prompt
    assert steered["continuation"].tolist() == direct["continuation"].tolist()
    with pytest.raises(ValueError, match="{prompt}"):
        PromptTemplate("no placeholder")


class RowTracker:
    """A stateful processor: checks it sees the rows it was told about, and stops even rows at step 2."""

    def __init__(self, stop_id):
        self.stop_id, self.selections = stop_id, 0

    def start_batch(self, input_ids, attention_mask, rows_per_prompt):
        self.prefix = input_ids.clone()
        self.rows = list(range(input_ids.shape[0]))

    def select_rows(self, index):
        self.prefix = self.prefix[index]
        self.rows = [self.rows[i] for i in index.tolist()]
        self.selections += 1

    def __call__(self, input_ids, scores):
        assert torch.equal(input_ids[:, : self.prefix.shape[1]], self.prefix)
        step = input_ids.shape[1] - self.prefix.shape[1]
        for pos, row in enumerate(self.rows):
            if row % 2 == 0 and step == 2:
                scores[pos] = -float("inf")
                scores[pos, self.stop_id] = 0.0
            elif row % 2 == 1:
                scores[pos, self.stop_id] = -float("inf")
        return scores


def test_stateful_processor_follows_rows_when_finished_rows_leave_the_batch(lm):
    tracker = RowTracker(lm.stop_ids[0])
    df = run(lm, config=SAMPLE.with_(num_samples=4), steering=LogitsSteering("tracked", [tracker]), batch_rows=1000)
    even = df.index % 2 == 0
    assert (df.loc[even, "n_new_tokens"] == 3).all() and df.loc[even, "stopped"].all()
    assert (df.loc[~even, "n_new_tokens"] == 8).all() and not df.loc[~even, "stopped"].any()
    assert tracker.selections >= 1
    assert not df["continuation"].str.contains(lm.tokenizer.eos_token, regex=False).any()


def test_prompt_inputs_and_errors(lm):
    series = pd.Series(["Hello", "She said"], index=["a", "b"])
    assert run(lm, prompts=series, config=GREEDY)["prompt_id"].tolist() == ["a", "b"]
    frame = pd.DataFrame({"prompt_id": [7, 8, 9], "prompt": ["Hello", "Hello", "She said"]})
    out = run(lm, prompts=frame, config=GREEDY)
    assert out["prompt_id"].tolist() == [7, 8, 9]
    assert out["continuation"].iloc[0] == out["continuation"].iloc[1]
    with pytest.raises(TypeError, match="list of strings"):
        run(lm, prompts="Hello")
    with pytest.raises(TypeError, match="must be a string"):
        run(lm, prompts=["Hello", None])
    with pytest.raises(ValueError, match="prompt_id and prompt"):
        run(lm, prompts=pd.DataFrame({"text": ["x"]}))


def test_decoding_config_validation_and_key():
    with pytest.raises(ValueError, match="unknown decoding mode"):
        DecodingConfig(mode="nucleus")
    with pytest.raises(ValueError, match="temperature"):
        DecodingConfig(temperature=0)
    assert DecodingConfig(mode="greedy", top_p=0.5).key() == DecodingConfig(mode="greedy").key()
    assert DecodingConfig(top_p=0.5).key() != DecodingConfig().key()
    assert DecodingConfig(mode="greedy").num_samples == 1


def test_nucleus_recorder_sees_every_step_and_agrees_with_transformers(lm):
    from toxlib.studies.nucleus_steps import record_nucleus

    steps = record_nucleus(lm, PROMPTS[:2], SAMPLE.with_(num_samples=3, max_new_tokens=4), progress=False,
                           cache=False)
    assert len(steps) >= 2 * 3  # at least one step per row (rows may stop early)
    assert steps["step"].min() == 0 and steps["step"].max() <= 3
    assert steps["nucleus_size"].between(1, len(lm.tokenizer)).all()
    assert steps["same_as_transformers"].all()


def test_describe_models_table(lm):
    from toxlib.models import describe_models

    table = describe_models([lm])
    assert table.loc[0, "layers"] == 2 and table.loc[0, "start_of_sequence"].startswith("<bos>")


def test_word_filter_bans_single_and_multi_token_words(lm, monkeypatch):
    from toxlib.steer import word_filter
    from toxlib.steer.word_filter import WordFilter, banned_sequences

    # the sequences: each casing variant with a leading space, as the tokenizer splits it
    expected = {tuple(lm.tokenizer(" " + v, add_special_tokens=False).input_ids)
                for v in ("Nucleus", "nucleus", "NUCLEUS")}
    assert sorted(map(tuple, banned_sequences(lm.tokenizer, ["Nucleus"]))) == sorted(expected)
    longest = max(banned_sequences(lm.tokenizer, ["Nucleus"]), key=len)
    assert len(longest) > 1
    # a multi-token word: its last token is banned only right after the tokens before it
    proc = WordFilter(["Nucleus"]).logits_processors(lm)[0]
    ids = torch.tensor([[1] * 3 + longest[:-1], [1] * (2 + len(longest))])
    out = proc(ids, torch.zeros(2, len(lm.tokenizer)))
    assert out[0, longest[-1]] == float("-inf") and out[1, longest[-1]] == 0
    # in generation: the model's favourite next token, banned, is never produced
    from toxlib.generate.api import encode_prompt

    one = DecodingConfig(mode="greedy", max_new_tokens=1)
    with torch.no_grad():
        favourite = int(lm.model(torch.tensor([encode_prompt(lm, "She said")])).logits[0, -1].argmax())
    assert run(lm, prompts=["She said"], config=one)["continuation"][0] == lm.tokenizer.decode([favourite])
    monkeypatch.setattr(word_filter, "banned_sequences", lambda tokenizer, words: [[favourite]])
    filtered = run(lm, prompts=["She said"], config=one, steering=WordFilter(["anything"]))
    assert filtered["continuation"][0] != lm.tokenizer.decode([favourite])
