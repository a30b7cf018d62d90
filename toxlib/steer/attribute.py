"""ATCON at generation time (RealToxicityPrompts §5.1): prepend an attribute token to every prompt.

Use it with a model adapted by ``toxlib.steer.adapt.adapt(..., AdaptConfig(method="atcon"))``, whose tokenizer holds the
attribute tokens as single special tokens. A prompt p becomes ``<|nontoxic|>`` + p, as in the paper. The empty
prompt (unprompted generation) becomes the attribute token after the model's start token, the way training laid out
every document (start token, attribute token, text): ``for_model(lm)`` writes the start token into the text when
the model's tokenizer does not put it there itself (SmolLM2: "<|endoftext|><|nontoxic|>" -> [0, <|nontoxic|>];
Gemma's tokenizer adds <bos> itself: "<|nontoxic|>" -> [2, <|nontoxic|>]).

Prompted text is encoded as ``toxlib.generate.encode_prompt`` encodes every prompt for every method (no document
start token for SmolLM2), so ATCON differs from the other methods only by the attribute token.
"""

from __future__ import annotations

from toxlib.steer import Steering


class AttributeConditioning(Steering):
    """Prepend ``token`` (default "<|nontoxic|>") to every prompt.

    token: the attribute token. unprompted_prefix: text put before the token for the empty prompt "" (the model's
      start token where its tokenizer adds none; ``for_model`` picks it). ``transform_prompt(p)`` returns
      token + p, and unprompted_prefix + token for "".
    """

    name = "attribute-conditioning"

    def __init__(self, token: str = "<|nontoxic|>", unprompted_prefix: str = ""):
        if not token:
            raise ValueError("the attribute token must be a non-empty string")
        self.token, self.unprompted_prefix = token, unprompted_prefix

    @classmethod
    def for_model(cls, lm, token: str = "<|nontoxic|>") -> "AttributeConditioning":
        """The steering for ``lm`` (a ``LanguageModel`` trained with ``token``): checks that its tokenizer encodes
        ``token`` as one id and makes unprompted generation start from [start token, token]. Raises ValueError if
        the tokenizer does not know the token as a single token."""
        tokenizer = lm.tokenizer
        token_id = tokenizer.convert_tokens_to_ids(token)
        if token_id is None or token_id == tokenizer.unk_token_id or \
                tokenizer(token, add_special_tokens=False).input_ids != [token_id]:
            raise ValueError(f"{lm.name}'s tokenizer has no single token {token!r}: attribute conditioning needs a "
                             "model trained with it (toxlib.steer.adapt.adapt with AdaptConfig(method='atcon'))")
        start = lm.start_ids[0]
        adds_start = tokenizer(token).input_ids[:1] == [start]
        return cls(token, "" if adds_start else lm.start_token)

    def transform_prompt(self, prompt: str) -> str:
        return self.token + prompt if prompt else self.unprompted_prefix + self.token

    def config(self) -> dict:
        return {"name": self.name, "token": self.token, "unprompted_prefix": self.unprompted_prefix}
