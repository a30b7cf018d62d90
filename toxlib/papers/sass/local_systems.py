"""The SASS tables with local systems beside the recorded ones: small causal LMs asked the paper's prompts
(``prompt_classifier``) and toxlib's scorers at a threshold, on the comments and on the TweetEval tweets.
"""

from __future__ import annotations

import pandas as pd

from toxlib.metrics import prf_table
from toxlib.metrics.baselines import RANDOM, degenerate, top_answer_share, with_baselines
from toxlib.papers.sass.prompt_classifier import next_token_reading, sampled_reading
from toxlib.papers.sass.tables import table3, with_scorer_columns
from toxlib.scorers import get_scorer
from toxlib.scorers.base import score_all

#: the columns of ``lm_classifier_labels``' systems frame, whichever readings ran
SYSTEM_COLUMNS = ["system", "model", "setting", "reading", "n_unparsed_replies", "n_unparsed_labels", "answer_mass",
                  "score_sd"]


def lm_classifier_labels(lms: dict, texts, settings=("zero", "one", "few"), readings=("next-token", "sampled"),
                         progress: bool = True) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Ask each LM ({name: LanguageModel}) the paper's prompts (``prompt_classifier``) about every text.

    Returns (labels, systems): labels has one column per system "<name> <SETTING> (<reading>)" with 0/1/NaN per
    text (rows aligned with ``texts``); systems has one row per system with columns system, model, setting,
    reading, n_unparsed_replies (sampled replies that parsed to no answer), n_unparsed_labels (texts whose
    majority was no answer: NaN labels), answer_mass (next-token reading: mean P(" True") + P(" False")) and
    score_sd (next-token reading: the standard deviation over texts of P(" True") / answer mass).
    """

    labels, rows = {}, []
    for name, lm in lms.items():
        for setting in settings:
            for reading in readings:
                system = f"{name} {setting.upper()} ({reading})"
                if reading == "next-token":
                    out = next_token_reading(lm, texts, setting, progress=progress)
                    extra = {"answer_mass": out["answer_mass"].mean(), "score_sd": out["score"].std(ddof=0)}
                elif reading == "sampled":
                    out = sampled_reading(lm, texts, setting, progress=progress)
                    extra = {"n_unparsed_replies": int(out["n_unparsed"].sum()),
                             "n_unparsed_labels": int(out["label"].isna().sum())}
                else:
                    raise ValueError(f"unknown reading {reading!r}; known: next-token, sampled")
                labels[system] = out["label"].to_numpy(dtype=float)
                rows.append({"system": system, "model": name, "setting": setting, "reading": reading, **extra})
    systems = pd.DataFrame(rows)
    for column in SYSTEM_COLUMNS:  # a reading that did not run leaves its columns empty, never absent
        if column not in systems.columns:
            systems[column] = pd.Series(dtype=object if column in ("system", "model", "setting", "reading") else float)
    return pd.DataFrame(labels), systems


def classifier_table(pred: pd.DataFrame, systems: dict[str, str], lm_systems: pd.DataFrame) -> pd.DataFrame:
    """Table 3 for every system, with what each system is: one row per system with columns system, setting,
    precision, recall, f1, kind ("recorded", "local LM" or "local scorer"), model, reading, n, n_missing,
    n_pred_pos, and for local LMs n_unparsed_replies / n_unparsed_labels (sampled) or answer_mass (next-token);
    top_answer_share (the share of answered comments given the most common answer) and degenerate (a local LM
    answering as a constant would: ``toxlib.metrics.baselines.degenerate``); then the trivial baselines' rows
    (``toxlib.metrics.baselines``, kind "trivial baseline", f1_low / f1_high the random answer's 95% range of F1).

    pred: SASS predictions with a label column per system (``systems``: {system: column}); lm_systems: the second
    frame of ``lm_classifier_labels``. Systems that are neither recorded nor LMs are local scorers; their setting
    (and Perspective's) reads "threshold": the thresholds are the ones ``relabel`` and ``with_scorer_columns`` used."""
    table = table3(pred, systems)
    recorded = {"PERSPECTIVE": "threshold", "GPT-3-ZERO": "zero", "GPT-3-ONE": "one", "GPT-3-FEW": "few"}
    meta = []
    for system in table["system"]:
        if system in recorded:
            meta.append({"system": system, "kind": "recorded", "setting": recorded[system],
                         "model": "Perspective" if system == "PERSPECTIVE" else "GPT-3 (text-davinci-001)",
                         "reading": "recorded"})
        elif system in set(lm_systems["system"]):
            meta.append({"kind": "local LM"} | lm_systems.set_index("system").loc[system].to_dict()
                        | {"system": system})
        else:
            meta.append({"system": system, "kind": "local scorer", "setting": "threshold",
                         "model": system, "reading": "score"})
    merged = table.merge(pd.DataFrame(meta), on="system", how="left", validate="one_to_one")
    merged["top_answer_share"] = [top_answer_share(int(k), int(n)) for k, n in zip(merged["n_pred_pos"], merged["n"])]
    merged["degenerate"] = [r["kind"] == "local LM" and degenerate(r["top_answer_share"], r.get("score_sd"))
                            for _, r in merged.iterrows()]
    merged = _baselines_as_systems(merged, pred["human_label"])
    first = ["system", "setting", "precision", "recall", "f1", "kind", "model", "reading"]
    return merged[first + [c for c in merged.columns if c not in first and c != "n_true_pos"]]


def _baselines_as_systems(table: pd.DataFrame, labels) -> pd.DataFrame:
    """``table`` with the trivial baselines' rows (``with_baselines`` on ``labels``) as systems of kind "trivial
    baseline" (setting "constant" or "random", no model, reading "none")."""
    out = with_baselines(table, labels)
    new = out["kind"].isna() if "kind" in out.columns else pd.Series(True, index=out.index)
    out.loc[new, "kind"] = "trivial baseline"
    out.loc[new, "setting"] = ["random" if s == RANDOM else "constant" for s in out.loc[new, "system"]]
    out.loc[new, "model"] = "none"
    out.loc[new, "reading"] = "none"
    return out


def best_lm_system(classifiers: pd.DataFrame, reading: str | None = None) -> pd.Series | None:
    """The local-LM row of ``classifiers`` (:func:`classifier_table`) with the highest F1, among those read with
    ``reading`` when given; None when there is none."""
    rows = classifiers[classifiers["kind"] == "local LM"]
    if reading is not None:
        rows = rows[rows["reading"] == reading]
    return rows.sort_values("f1", ascending=False).iloc[0] if len(rows) else None


def tweet_table7(tweets: pd.DataFrame, classifiers: pd.DataFrame, lms: dict, scorers: list[str],
                 threshold: float = 0.5) -> pd.DataFrame:
    """Table 7 with local systems: precision/recall/F1 against ``tweets``' hate labels for the recorded Perspective
    and GPT-3-FEW, each model's best next-token system of ``classifiers`` (its model of ``lms`` asked in its
    setting; the best of all first), and each scorer of ``scorers`` at > ``threshold``. One row per system, as
    ``prf_table``, then the trivial baselines' rows (``toxlib.metrics.baselines.with_baselines``). Each model's
    rows depend on that model alone, so a run of one model reads the rows a run of several made."""

    readings = [pd.DataFrame(index=tweets.index)]
    for _, best in best_per_model(classifiers, "next-token").iterrows():
        readings.append(lm_classifier_labels({best["model"]: lms[best["model"]]}, tweets["text"], [best["setting"]],
                                             ["next-token"])[0])
    labels = pd.concat(readings, axis=1)
    scored, systems = with_local_systems(tweets, labels, scorers, threshold,
                                         {"PERSPECTIVE": "perspective_label", "GPT-3-FEW": "gpt3_few"})
    return with_baselines(prf_table(scored["label"], {name: scored[col] for name, col in systems.items()}),
                          scored["label"])


def best_per_model(classifiers: pd.DataFrame, reading: str) -> pd.DataFrame:
    """Each model's local-LM row of ``classifiers`` with the highest F1 among those read with ``reading``, the
    best of all first (ties keep the table's order)."""
    rows = classifiers[(classifiers["kind"] == "local LM") & (classifiers["reading"] == reading)]
    return rows.sort_values("f1", ascending=False, kind="stable").drop_duplicates("model")


def with_local_systems(frame: pd.DataFrame, lm_labels: pd.DataFrame, scorers: list[str], threshold: float,
                       recorded: dict[str, str]) -> tuple[pd.DataFrame, dict[str, str]]:
    """``frame`` (SASS comments or tweets, a ``text`` column) with the local systems beside its recorded ones: the
    LM systems' labels (``lm_labels``, one column per system, rows aligned) and, per scorer of ``scorers``, its
    toxicity and its label at > ``threshold`` (``with_scorer_columns``). Returns (frame, {system: label column}),
    the recorded systems first, then the LM systems, then the scorers."""
    scores = score_all({name: get_scorer(name) for name in scorers}, frame["text"])
    scored, scorer_systems = with_scorer_columns(frame, scores, threshold)
    scored = pd.concat([scored, lm_labels], axis=1)
    return scored, {**recorded, **{s: s for s in lm_labels.columns}, **scorer_systems}
