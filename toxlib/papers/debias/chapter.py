"""The debias_consistency chapter (``notebooks/debias_consistency.ipynb``; Morabito et al. 2023, Tables 3-5, 12 and
the λ sweep of Tables 8-11) computed: ``compute(values, models)`` returns its ``ChapterResult``.

Prompts drawn from the paper's adversarial and neutral sets; Self-Debiasing and Instructive Debiasing each run
through the consistency protocol (default, original, opposite, nonsensical and blank specifications) on every
model; their attribute tables (one per method, model and set, shown as tabs; ``attribute_tables`` beside the
paper's rows), the paired tests, the checklist (Table 5) beside the paper's, the conditions figure, the optional λ
sweep, example continuations, the claims and the numbers the exercises quote. ``values``: every parameter of
``toxlib/chapters/debias_consistency.py``, checked; ``models``: a ``toxlib.models.source.Models``.
"""

from __future__ import annotations

import pandas as pd

from toxlib.generate import DecodingConfig
from toxlib.models.source import Models
from toxlib.papers.debias.captions import CAPTIONS
from toxlib.papers.debias.checklist import checklist
from toxlib.papers.debias.consistency_tables import attribute_table, paired_summary, tidy_table
from toxlib.papers.debias.findings import (
    attribute_table_views,
    checklist_grid,
    claims,
    conditions_figure,
    detectable_note,
    example_continuations,
    lambda_sweep,
    specifications_table,
)
from toxlib.papers.debias.printed_tables import beside_printed
from toxlib.papers.debias.prose import exercise_prose
from toxlib.papers.debias.protocol import instructive_method, paper_prompt_sets, run_protocol, self_debiasing_method
from toxlib.publish.chapter_result import ChapterResult
from toxlib.publish.results import csv_href
from toxlib.publish.tabs import tab_set

_STEM = "debias_consistency"
#: method key -> the tab set's name of its attribute tables
TAB_SETS = {"self-debiasing": "self-debiasing: one table per model and prompt set",
            "instructive debiasing": "instructive debiasing: one table per model and prompt set"}
CHECKLIST_COLUMNS = ["method", "model", "test", "passed", "set", "reason", "verdict", "n_to_decide"]


def drawn_prompts(n_prompts: int, seed: int) -> tuple[dict, dict]:
    """(the paper's prompt sets {name: frame}, ``n_prompts`` of each drawn with ``seed``)."""
    sets = paper_prompt_sets()
    return sets, {name: frame.sample(min(n_prompts, len(frame)), random_state=seed) for name, frame in sets.items()}


def attribute_tabs(tables: dict, key: str, method_name: str, note: str, decay_constant: float | None = None):
    """A function making the tab set of method ``key``'s attribute tables (one tab per model and set)."""
    labels = [f"{model}, {s} set" for method, model, s in tables if method == key]

    def make() -> str:
        views = attribute_table_views(tables, key, method_name, note, decay_constant,
                                      csv=csv_href(_STEM, "attribute_tables"))
        return tab_set(labels, [view._repr_html_() for view in views], TAB_SETS[key])
    return make


def compute(v: dict, models: Models) -> ChapterResult:
    out = ChapterResult(_STEM, v)
    caption = CAPTIONS.bind(**v)
    alpha, decay_constant = v["alpha"], v["decay_constant"]
    sets, prompt_sets = drawn_prompts(v["n_prompts"], v["seed"])
    sd_decoding = DecodingConfig(mode="beam" if v["num_beams"] > 1 else "greedy", num_beams=v["num_beams"],
                                 max_new_tokens=v["max_new_tokens"])
    methods = {"self-debiasing": self_debiasing_method(decay_constant, decoding=sd_decoding),
               "instructive debiasing": instructive_method(DecodingConfig(mode="greedy",
                                                                          max_new_tokens=v["max_new_tokens"]))}
    lms = {name: models(name, dtype=v["dtype"]) for name in v["models"]}
    decoding_note = caption("note_decoding", sd_decoding=caption("note_sd_greedy") if v["num_beams"] == 1
                            else caption("note_sd_beams"))
    out.add_table("prompt_sets", pd.DataFrame([{"set": name, "prompts in the paper's set": len(sets[name]),
                                                "drawn": len(frame), "example": frame["prompt"].iloc[0]}
                                               for name, frame in prompt_sets.items()]),
                  caption("prompt_sets"), file=False)
    out.add_table("specifications", specifications_table(methods), caption("specifications"))

    scored = {(key, model): run_protocol(method, lm, v["scorer"], prompt_sets)
              for model, lm in lms.items() for key, method in methods.items()}
    tables = {(key, model, s): attribute_table(frame, s, alpha)
              for (key, model), frame in scored.items() for s in prompt_sets}
    long = pd.concat([tidy_table(t).assign(method=key, model=model) for (key, model, s), t in tables.items()],
                     ignore_index=True)
    printed_beside = beside_printed(long, decay_constant)
    out.add_table("attribute_tables", printed_beside, shown=False)
    out.add_text("scored", f"{sum(len(f) for f in scored.values()):,} continuations scored")
    out.add_html("self_debiasing_tables", attribute_tabs(tables, "self-debiasing", methods["self-debiasing"].name,
                                                         decoding_note, decay_constant))
    out.add_html("instructive_tables", attribute_tabs(tables, "instructive debiasing",
                                                      methods["instructive debiasing"].name, decoding_note))
    out.add_table("paired_tests", paired_summary(long, alpha), caption("paired_tests"))

    checks = pd.concat([checklist({s: tables[key, model, s] for s in prompt_sets}).assign(method=key, model=model)
                        for key in methods for model in v["models"]], ignore_index=True)[CHECKLIST_COLUMNS]
    out.add_table("checklist_grid", checklist_grid(checks), caption("checklist_grid", decoding_note=decoding_note),
                  file=False)
    out.add_table("checklist", checks, caption("checklist"))
    out.add_text("detectable", detectable_note(long, len(prompt_sets["adversarial"]), alpha))
    out.add_figure("conditions", lambda: conditions_figure(printed_beside, caption("fig_conditions")))
    if v["sweep"]:
        out.add_table("lambda_sweep", lambda_sweep(lms, prompt_sets, [*v["sweep"], decay_constant], sd_decoding,
                                                   v["scorer"], alpha),
                      caption("lambda_sweep", decoding_note=decoding_note))
    else:
        out.add_text("lambda_sweep", "sweep is empty: set it, e.g. [10, 50], to add the paper's other decay "
                                     "constants.")
    out.add_table("examples", example_continuations(scored, v["n_examples"]), caption("examples"), file=False)
    out.add_claims(claims(checks, tables, v["models"], decay_constant, decoding_note, scored),
                   caption("claims", decoding_note=decoding_note))
    out.add_prose(exercise_prose(checks, long, alpha))
    return out
