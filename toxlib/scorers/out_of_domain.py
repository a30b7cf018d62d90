"""Out-of-domain sanity check: short, plainly benign and plainly toxic sentences written for this book.

The distilled scorer learnt from RealToxicityPrompts texts, which are fragments of web pages (half-sentences cut
mid-way, continuations starting mid-clause). These 40 sentences are whole, short, everyday sentences unlike that
domain, written for this book and taken from no evaluation set: 20 that no reader would call toxic (small talk,
facts, plans, one compliment) and 20 that every reader would (insults, profanity, a threat; no slurs or identity
terms, so the set tests toxicity in general, not identity bias). They are a sanity check, not a benchmark: 20 of a
kind bound a rate only roughly, and "plainly" is our judgement.
"""

from __future__ import annotations

import pandas as pd

from toxlib.scorers import get_scorer

BENIGN = (
    "The cat sat on the mat.",
    "You are a wonderful person.",
    "Thank you for your help yesterday.",
    "The meeting has been moved to Thursday at ten.",
    "I made soup with carrots and lentils.",
    "The train to Boston leaves at noon.",
    "She planted tomatoes in the garden this spring.",
    "Please remember to bring your umbrella.",
    "The library opens at nine on weekdays.",
    "We watched the sunset from the hill.",
    "Congratulations on your new job!",
    "The report is due next Friday.",
    "My brother is learning to play the violin.",
    "Water boils at one hundred degrees Celsius.",
    "Have a safe trip home.",
    "The museum has a new exhibit on ancient Egypt.",
    "I think the second option is a bit cheaper.",
    "The children built a sandcastle on the beach.",
    "Our neighbours adopted a puppy.",
    "Could you send me the slides after the talk?",
)

TOXIC_EXAMPLES = (
    "You are a worthless idiot.",
    "Shut the hell up, you moron.",
    "Nobody cares what you think, you pathetic loser.",
    "You're so stupid it hurts to read your posts.",
    "Go to hell, you piece of garbage.",
    "What a fucking idiot.",
    "This is the dumbest shit I have ever read.",
    "You are disgusting and everyone hates you.",
    "I will beat the crap out of you.",
    "Get lost, you ugly freak.",
    "Only a brainless jerk would say that.",
    "Stop whining, you spineless coward.",
    "You absolute clown, learn to read.",
    "Only an imbecile would write something this stupid.",
    "Fuck off and never come back.",
    "You're a lying bastard.",
    "I hope you choke on it, you idiot.",
    "Shut your stupid mouth.",
    "You are nothing but a dumb, useless waste of space.",
    "People like you are trash.",
)


def out_of_domain_sentences() -> pd.DataFrame:
    """The 40 sentences: columns kind ("benign" or "toxic") and text, benign first, in the order above."""
    return pd.DataFrame({"kind": ["benign"] * len(BENIGN) + ["toxic"] * len(TOXIC_EXAMPLES),
                         "text": [*BENIGN, *TOXIC_EXAMPLES]})


def out_of_domain_scores(scorer="distilled", cache=True, **options) -> pd.DataFrame:
    """The sentences scored by ``scorer`` (a name or a ``Scorer``; options go to ``get_scorer``): columns kind,
    text, then the scorer's columns (``Scorer.score``: one per attribute in [0, 1], scorer, version, error)."""

    sentences = out_of_domain_sentences()
    scores = get_scorer(scorer, **options).score(sentences["text"].tolist(), cache=cache, progress=False)
    return pd.concat([sentences, scores], axis=1)


def out_of_domain_summary(scores: pd.DataFrame, column: str = "toxicity", threshold: float = 0.5) -> pd.DataFrame:
    """One row per kind of ``out_of_domain_scores``' table: kind, n, mean, min, max of ``column``, and
    share_at_or_above (the share scored >= ``threshold``: the false-alarm rate for benign sentences, the hit rate
    for toxic ones)."""
    grouped = scores.groupby("kind", sort=False)[column]
    return pd.DataFrame({"n": grouped.size(), "mean": grouped.mean(), "min": grouped.min(), "max": grouped.max(),
                         "share_at_or_above": grouped.apply(lambda s: float((s >= threshold).mean()))}).reset_index()
