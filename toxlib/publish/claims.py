"""Claims: one row per claim of a paper checked by a chapter, with its evidence, interval and verdict, written to
results_dir()/<notebook-stem>/claims.csv and collected for the scorecard.

Claims contract (the scorecard, the report card and later chapters rely on it): claims.csv has the columns
claim, id, subject, kind, paper_value, our_value, shown, ci_low, ci_high, n, verdict, note, n_to_decide, threshold.
``id`` is "<rule>:<subject>", unique within a chapter and stable across runs: the rule that makes the claim (a
snake_case name, with a dotted qualifier where one rule makes several claims of one subject, e.g.
"dapt_toxic_raises.non_toxic"), never the claim's wording, so joins on it survive a reworded claim. ``subject`` is
what the claim is about (``SUBJECTS``): "model:<name>" (one language model, by the name the chapter ran it under),
"models:<a>+<b>" (a value pooled over the chapter's language models, names in run order; with one model it is that
model's), "scorer:<name>" (a local toxicity scorer), "system:<name>" (a recorded system, named as its paper names
it: PERSPECTIVE, GPT-3-FEW), "data" (a fact of a data set), "paper" (arithmetic on the paper's printed numbers),
"toxlib" (this library's settings or code) or "machine" (the machine that ran the chapter).
``kind`` is the evidence the verdict rests on (``EVIDENCE_KINDS``): "our models" (an analogue run here, on other
models, data or scale), "recorded predictions" (the authors' stored outputs, re-scored), "paper arithmetic"
(recomputed from the paper's own printed numbers) or "machine speed" (a measurement of the machine that ran the
chapter, such as a speed target: shown, never counted with the others, ``MACHINE_KINDS``). ``our_value`` is the
number (empty when the value is not a number) and ``shown`` its text as the reader sees it. ``verdict`` is one of
holds / fails / undecided / not informative / not judged (toxlib.metrics.uncertainty.VERDICTS), decided on the
unrounded interval; "not informative" is given by a claim's rules when a trivial baseline (a constant answer, or one
at random at the observed prevalence) would earn the claim too and the system does not beat it (the note says so);
ci_low and ci_high are the 95% interval of our value (empty for exact facts; stored to 4 significant digits), n the
units it was estimated from, n_to_decide the units that would resolve an undecided claim, threshold the value (or
"low..high" band) separating holding from failing.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pandas as pd

from toxlib.metrics.uncertainty import VERDICTS, Interval, n_to_decide_from_interval, n_to_decide_proportion
from toxlib.metrics.uncertainty import verdict as interval_verdict
from toxlib.publish.results import write_table
from toxlib.store import paths

CLAIM_COLUMNS = ["claim", "id", "subject", "kind", "paper_value", "our_value", "shown", "ci_low", "ci_high", "n",
                 "verdict", "note", "n_to_decide", "threshold"]
#: the subjects a claim can have: these prefixes followed by a name, or these words alone (module docstring)
SUBJECTS = ("model:", "models:", "scorer:", "system:", "data", "paper", "toxlib", "machine")
#: a rule: snake_case words, then optional dotted qualifiers
RULE = re.compile(r"[a-z0-9]+(?:_[a-z0-9]+)*(?:\.[a-z0-9]+(?:_[a-z0-9]+)*)*")
#: the evidence a claim's verdict rests on, in the order the scorecard reports them
EVIDENCE_KINDS = ("our models", "recorded predictions", "paper arithmetic", "machine speed")
#: kinds that measure the machine that ran the chapter (a speed target), not a model or a paper: shown in their own
#: line, never counted with the claims (a reader's build on a slower CPU must not move the book's totals)
MACHINE_KINDS = ("machine speed",)


def within(paper_value: float, our_value: float, tolerance: float) -> bool:
    """Whether our value equals the paper's up to ``tolerance`` (False when either is NaN)."""
    if any(isinstance(v, float) and math.isnan(v) for v in (paper_value, our_value)):
        return False
    return abs(float(paper_value) - float(our_value)) <= tolerance + 1e-12


def fact(ok) -> str:
    """The verdict of an exact fact checked by a rule: "holds" when ``ok`` is true, "fails" when false, "not judged"
    when None or NaN (for ``claim(..., verdict=fact(...))``)."""
    if ok is None or (isinstance(ok, float) and math.isnan(ok)):
        return "not judged"
    return "holds" if bool(ok) else "fails"


def _fmt(v) -> str:
    if isinstance(v, float):
        return "NaN" if math.isnan(v) else f"{v:.3g}" if abs(v) >= 1e-3 or v == 0 else f"{v:.2e}"
    return str(v)


def _raw_bound(v) -> float | None:
    """An interval bound as a float, None when missing."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return None
    return float(v)


def _bound(v) -> float | None:
    """An interval bound as stored: 4 significant digits, None when missing."""
    v = _raw_bound(v)
    return None if v is None else float(f"{v:.4g}")


def _threshold_text(threshold) -> str:
    if threshold is None:
        return ""
    if isinstance(threshold, (tuple, list)):
        return "..".join(_fmt(float(t)) for t in threshold)
    return _fmt(float(threshold))


def model_subject(name: str) -> str:
    """The subject of a claim about one language model: "model:<name>"."""
    return f"model:{name}"


def models_subject(names) -> str:
    """The subject of a claim pooled over language models ``names`` (in run order): "models:<a>+<b>"."""
    names = [str(n) for n in names]
    if not names:
        raise ValueError("a pooled claim needs the models it pools")
    return "models:" + "+".join(names)


def subject_models(subject: str) -> list[str]:
    """The language models a subject names: [name] for "model:<name>", the pooled names for "models:...", [] for
    any other subject."""
    if subject.startswith("model:"):
        return [subject.removeprefix("model:")]
    if subject.startswith("models:"):
        return subject.removeprefix("models:").split("+")
    return []


def qualifier(text: str) -> str:
    """A name as a rule's qualifier: lower case, every run of other characters than letters and digits as "_"
    ("DAPT (non-toxic)" -> "dapt_non_toxic")."""
    return re.sub(r"[^a-z0-9]+", "_", str(text).lower()).strip("_")


def rule_of(claim_id: str) -> str:
    """The rule of a claim's id (its part before the first ":")."""
    return str(claim_id).split(":", 1)[0]


def _checked_subject(subject: str) -> str:
    """``subject`` when it is one of ``SUBJECTS`` (a prefixed one with a name); ValueError otherwise."""
    subject = str(subject)
    prefix = next((p for p in SUBJECTS if p.endswith(":") and subject.startswith(p)), None)
    if prefix is None and subject in SUBJECTS:
        return subject
    if prefix is not None and subject.removeprefix(prefix) and "" not in subject_models(subject):
        return subject
    raise ValueError(f"subject must be one of {', '.join(SUBJECTS)} (a prefix followed by a name), got {subject!r}")


def claim(claim: str, paper_value, our_value, note: str = "", *, rule: str, subject: str, kind: str, interval=None,
          n: int | None = None, threshold=None, direction: str = "above", verdict: str | None = None,
          n_to_decide: int | None = None) -> dict:
    """One row of a claims table (a dict with CLAIM_COLUMNS). ``our_value`` is kept as a number where it is one
    (``shown`` holds its text, so numbers and ranges mix in the shown column); ``paper_value`` as text.

    rule, subject: the claim's id is "<rule>:<subject>" (module docstring). rule: a snake_case name of the rule
    that makes the claim (``RULE``; dotted qualifiers where one rule makes several claims of one subject, e.g.
    ``f"not_failsafe.{qualifier(method)}"``), never its wording; subject: one of ``SUBJECTS``
    (``model_subject``, ``models_subject``, "scorer:<name>", ...). ValueError for either malformed.
    kind: the evidence the verdict rests on, one of ``EVIDENCE_KINDS``.
    interval: a ``toxlib.metrics.uncertainty.Interval`` (its n is used unless ``n`` is given) or (low, high).
    threshold, direction: the value separating holding from failing and which side holds ("above", "below", or
    "within" a (low, high) band); the verdict is then read from the interval (``uncertainty.verdict``), or for a
    claim without interval from ``our_value`` itself when it is a number (an exact fact). verdict: give it instead
    for facts no threshold expresses (e.g. a recorded table matching the paper), or "not informative" for a claim a
    trivial baseline would earn too (say which in ``note``). Without either: "not judged".
    An undecided claim gets ``n_to_decide`` from its interval (``n_to_decide_from_interval``) unless given, and the
    note says it.
    """
    if kind not in EVIDENCE_KINDS:
        raise ValueError(f"claim {claim!r}: kind must be one of {', '.join(EVIDENCE_KINDS)}, got {kind!r}")
    if not isinstance(rule, str) or not RULE.fullmatch(rule):
        raise ValueError(f"claim {claim!r}: rule must be snake_case words and optional dotted qualifiers, got "
                         f"{rule!r}")
    _checked_subject(subject)
    low = high = None
    if isinstance(interval, Interval):
        low, high = interval.low, interval.high
        n = interval.n if n is None else n
    elif interval is not None:
        low, high = interval
    low, high = _raw_bound(low), _raw_bound(high)  # the verdict reads the unrounded bounds
    if verdict is None:
        if threshold is None:
            verdict = "not judged"
        elif low is not None and high is not None:
            verdict = interval_verdict(low, high, threshold, direction)
        elif isinstance(our_value, (int, float)) and not isinstance(our_value, bool):
            verdict = interval_verdict(float(our_value), float(our_value), threshold, direction)
        else:
            verdict = "not judged"
    if verdict not in VERDICTS:
        raise ValueError(f"verdict must be one of {', '.join(VERDICTS)}, got {verdict!r}")
    exact_share = isinstance(interval, Interval) and interval.method.startswith("exact (Clopper-Pearson)")
    if verdict == "undecided" and n_to_decide is None and exact_share and direction != "within":
        n_to_decide = n_to_decide_proportion(interval.value, float(threshold), direction)
    if (verdict == "undecided" and n_to_decide is None and low is not None and n
            and direction != "within" and isinstance(our_value, (int, float))):
        n_to_decide = n_to_decide_from_interval(float(our_value), low, high, n, float(threshold))
    if verdict == "undecided" and n_to_decide is not None:
        decide = f"about {n_to_decide:,} units would decide it (power 0.8, alpha 0.05, observed variance)"
        note = f"{note}; {decide}" if note else decide
    numeric = isinstance(our_value, (int, float)) and not isinstance(our_value, bool)
    return {
        "claim": claim,
        "id": f"{rule}:{subject}",
        "subject": subject,
        "kind": kind,
        "paper_value": _fmt(paper_value),
        "our_value": float(our_value) if numeric else None,
        "shown": _fmt(our_value),
        "ci_low": _bound(low),
        "ci_high": _bound(high),
        "n": None if n is None else int(n),
        "verdict": verdict,
        "note": note,
        "n_to_decide": n_to_decide,
        "threshold": _threshold_text(threshold),
    }


def write_claims(stem: str, rows: list[dict]) -> pd.DataFrame:
    """Write the chapter's claims (rows of ``claim``) to <results>/<stem>/claims.csv and return them as
    ``checked_claims`` gives them."""
    table = checked_claims(stem, rows)
    write_table(stem, "claims", table)
    return table


def checked_claims(stem: str, rows: list[dict]) -> pd.DataFrame:
    """The chapter's claims (rows of ``claim``) as a DataFrame with CLAIM_COLUMNS (n and n_to_decide as nullable
    integers). ValueError when a row lacks its text, id, subject or a known verdict, or when two rows share an id
    (naming the ids)."""
    table = pd.DataFrame(rows, columns=CLAIM_COLUMNS)
    if table["claim"].isna().any() or (table["claim"] == "").any():
        raise ValueError("every claim needs its text")
    if table[["id", "subject"]].isna().any(axis=None) or (table[["id", "subject"]] == "").any(axis=None):
        raise ValueError(f"every claim of {stem} needs its id and subject (build rows with claims.claim)")
    shared = table.loc[table["id"].duplicated(), "id"].unique().tolist()
    if shared:
        raise ValueError(f"claims of {stem} share the ids {shared}: give each claim its own rule or qualifier")
    unknown = sorted(set(table["verdict"].dropna()) - set(VERDICTS))
    if unknown or table["verdict"].isna().any():
        raise ValueError(f"every claim needs a verdict among {', '.join(VERDICTS)}; got {unknown or 'none'} "
                         "(build rows with claims.claim)")
    return _typed(table)


def _typed(table: pd.DataFrame) -> pd.DataFrame:
    """Claims columns with their types: our_value, ci_low, ci_high floats, n/n_to_decide nullable integers, the
    rest text."""
    table = table.copy()
    for col in ("our_value", "ci_low", "ci_high"):
        table[col] = pd.to_numeric(table[col].replace("", None), errors="coerce").astype(float)
    for col in ("n", "n_to_decide"):
        table[col] = pd.to_numeric(table[col].replace("", None), errors="coerce").round().astype("Int64")
    for col in ("threshold", "note", "shown", "kind", "id", "subject"):
        table[col] = table[col].fillna("").astype(str)
    return table


def claims_summary(claims: pd.DataFrame, by: str = "chapter") -> pd.DataFrame:
    """Per chapter (or per ``by`` column, e.g. "kind"), how many claims hold, fail, are undecided, are not
    informative or were not judged.

    claims: the frame of collect_claims(). Columns: ``by``, then one per verdict in the order of ``VERDICTS`` (holds,
    fails, undecided, not informative, not judged; every one present, zero where none), total; kinds in
    the order of ``EVIDENCE_KINDS`` (our models first), chapters by name. Per chapter, measurements of the machine
    (``MACHINE_KINDS``) are left out: they are counted only in their own kind's row.
    """
    if by != "kind" and "kind" in claims.columns:
        claims = claims[~claims["kind"].isin(MACHINE_KINDS)]
    counts = pd.crosstab(claims[by], pd.Categorical(claims["verdict"], categories=list(VERDICTS)), dropna=False)
    summary = counts.reindex(columns=list(VERDICTS), fill_value=0).astype(int)
    summary.columns = list(VERDICTS)
    summary["total"] = summary.sum(axis=1)
    summary.index.name = by
    if by == "kind":
        order = [k for k in EVIDENCE_KINDS if k in summary.index] + sorted(set(summary.index) - set(EVIDENCE_KINDS))
        return summary.reindex(order).reset_index()
    return summary.sort_index().reset_index()


def read_claims(path: str | Path) -> pd.DataFrame:
    """One claims.csv (CLAIM_COLUMNS, as ``write_claims`` writes it). ValueError naming the file and the missing
    columns when it lacks any (a file written by an older toxlib: re-run its chapter)."""
    table = pd.read_csv(path, dtype=str, keep_default_na=False)
    missing = set(CLAIM_COLUMNS) - set(table.columns)
    if missing:
        raise ValueError(f"{path} lacks the claims columns {sorted(missing)}: re-run its chapter to rewrite it")
    return _typed(table[CLAIM_COLUMNS])


def collect_claims() -> pd.DataFrame:
    """Every chapter's claims.csv stacked (``read_claims``). Columns: chapter, row (the claim's position in its
    chapter's claims.csv, from 0: its row in the chapter's claims table, ``toxlib.publish.pages.claim_anchor``) +
    CLAIM_COLUMNS, chapters in name order."""
    frames = []
    for path in sorted(paths.results_dir().glob("*/claims.csv")):
        table = read_claims(path)
        table.insert(0, "chapter", path.parent.name)
        table.insert(1, "row", range(len(table)))
        frames.append(table)
    if not frames:
        return _typed(pd.DataFrame(columns=["chapter", "row"] + CLAIM_COLUMNS))
    return pd.concat(frames, ignore_index=True)
