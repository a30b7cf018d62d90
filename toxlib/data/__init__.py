"""Data: the registry of source files (``sources.registry``), fetching on pooch (``sources.fetch``) and typed loaders
returning DataFrames.
May import: common, store.
"""

from toxlib.data.rtp_prompts import PERSPECTIVE_ATTRIBUTES, load_debias_prompts, load_rtp, load_rtp_all
from toxlib.data.sass_benchmark import (
    load_sass_benchmark,
    load_sass_human_scores,
    load_sass_paper_scores,
    load_sass_predictions,
)
from toxlib.data.sources import Registry, Source, ensure, fetch, registry
from toxlib.data.toxigen import explode_groups, load_implicit_hate, load_toxigen
from toxlib.data.tweeteval import load_sass_tweeteval, load_sass_tweeteval_sample, load_tweeteval_hate
from toxlib.data.wordlists import load_word_list

__all__ = [
    "PERSPECTIVE_ATTRIBUTES",
    "Registry",
    "Source",
    "ensure",
    "explode_groups",
    "fetch",
    "load_debias_prompts",
    "load_implicit_hate",
    "load_rtp",
    "load_rtp_all",
    "load_sass_benchmark",
    "load_sass_human_scores",
    "load_sass_paper_scores",
    "load_sass_predictions",
    "load_sass_tweeteval",
    "load_sass_tweeteval_sample",
    "load_toxigen",
    "load_tweeteval_hate",
    "load_word_list",
    "registry",
]
