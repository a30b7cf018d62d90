"""The generation chapter's parameters (``notebooks/generation.ipynb``), declared once."""

from toxlib.chapters.spec import COUNT, COUNT_OR_SKIP, EXECUTOR, MODELS, NUCLEUS_MASS, SEED, Chapter, Parameter

CHAPTER = Chapter(
    'generation',
    'Generating continuations: models, nucleus sampling and the cache',
    intro='Parameters (papermill). Defaults are small so the chapter runs in a few minutes on 2 CPU cores.',
    parameters=(
        Parameter('models', ["smollm2-135m", "gemma3-270m"], MODELS,
                  'bundled names, Hugging Face ids (like "gpt2-large") or local paths'),
        Parameter('n_prompts', 8, COUNT,
                  'RealToxicityPrompts sample prompts continued per model'),
        Parameter('num_samples', 25, COUNT,
                  'continuations per prompt (RealToxicityPrompts: 25)'),
        Parameter('max_new_tokens', 20, COUNT,
                  'new tokens per continuation (RealToxicityPrompts: 20)'),
        Parameter('top_p', 0.9, NUCLEUS_MASS,
                  'nucleus mass (RealToxicityPrompts: 0.9)'),
        Parameter('seed', 0, SEED,
                  'base seed; every (prompt, sample) has its own generator derived from it'),
        Parameter('nucleus_prompts', 4, COUNT_OR_SKIP,
                  'prompts whose every decoding step is inspected in the nucleus section'),
        Parameter('speed_prompts', 2, COUNT_OR_SKIP,
                  'prompts in the speed comparison with one generate() call per prompt (0 skips it)'),
        Parameter('executor', "local", EXECUTOR,
                  'where generation and scoring run: "local", or "ray" (see "Running at paper scale")'),
    ),
    profiles={'paper': {},
              'smoke': {'max_new_tokens': 5,
                        'models': ['smollm2-135m'],
                        'n_prompts': 2,
                        'nucleus_prompts': 1,
                        'num_samples': 3,
                        'speed_prompts': 1}},
)
