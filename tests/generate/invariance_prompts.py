"""The prompts and sampling of the invariance tests (``test_batch_invariance.py``, ``test_generation_invariance.py``):
several token counts, some sharing one, so batches mix and split differently in each run."""

from toxlib.generate import DecodingConfig

PROMPTS = ["I hate it when people", "The weather today is", "You are such a", "My neighbour keeps telling me",
           "Honestly, the worst part of the whole", "He said that", "What a", "They always say the"]
CONFIG = DecodingConfig(num_samples=6, max_new_tokens=10, top_p=0.9, seed=3)
