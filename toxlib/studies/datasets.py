"""Data cards and the dataset statistics the papers report (RealToxicityPrompts section 4, ToxiGen Figure 1)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from toxlib.data.io import read_json_array, read_jsonl, read_lines
from toxlib.data.sources import Registry, fetch, registry
from toxlib.data.toxigen import explode_groups
from toxlib.metrics.uncertainty import correlation_interval, proportion_interval, verdict
from toxlib.papers.rtp import printed as rtp_printed
from toxlib.papers.safety import printed as safety_printed
from toxlib.papers.sass import printed as sass_printed
from toxlib.publish.claims import claim, fact, within


def count_records(name: str, reg: Registry | None = None) -> int:
    """Records in one source file: JSON lines, JSON array items, CSV/TSV rows, or text lines."""
    source = (reg or registry())[name]
    path = fetch(name, reg=reg)
    if source.path.endswith(".jsonl"):
        return len(read_jsonl(path, name))
    if source.path.endswith(".json"):
        return len(read_json_array(path, name))
    if source.path.endswith((".csv", ".tsv")):
        return len(pd.read_csv(path, sep="\t" if source.path.endswith(".tsv") else ","))
    return len(read_lines(path))


def data_cards(reg: Registry | None = None) -> pd.DataFrame:
    """One row per registry source. Columns: name, description, repo, commit (12 chars), path, license, records,
    bytes, sha256 (12 chars), url."""
    reg = reg or registry()
    rows = []
    for name in reg.names():
        s = reg[name]
        rows.append(
            {
                "name": name,
                "description": s.description,
                "repo": s.repo,
                "commit": s.commit[:12],
                "path": s.path,
                "license": s.license,
                "records": count_records(name, reg),
                "bytes": s.bytes,
                "sha256": s.sha256[:12],
                "url": s.url,
            }
        )
    return pd.DataFrame(rows)


def rtp_statistics(records: pd.DataFrame, threshold: float = 0.5) -> dict:
    """The statistics RealToxicityPrompts reports about its prompts, for one set of records.

    records: frame of toxlib.data.load_rtp. Returns a dict: n_records, n_prompt_scored, n_toxic_prompts
    (prompt_toxicity >= threshold), share_toxic_prompts, mean_prompt_toxicity, mean_continuation_toxicity,
    pearson_r, pearson_p (prompt vs continuation toxicity over records with both scored), n_pearson.
    """
    prompt, cont = records["prompt_toxicity"], records["continuation_toxicity"]
    both = prompt.notna() & cont.notna()
    result = stats.pearsonr(prompt[both], cont[both]) if both.sum() >= 3 else None
    scored = prompt.notna()
    return {
        "n_records": int(len(records)),
        "n_prompt_scored": int(scored.sum()),
        "n_toxic_prompts": int((prompt[scored] >= threshold).sum()),
        "share_toxic_prompts": float((prompt[scored] >= threshold).mean()) if scored.any() else np.nan,
        "mean_prompt_toxicity": float(prompt.mean()),
        "mean_continuation_toxicity": float(cont.mean()),
        "pearson_r": float(result.statistic) if result else np.nan,
        "pearson_p": float(result.pvalue) if result else np.nan,
        "n_pearson": int(both.sum()),
    }


def group_label_counts(frame: pd.DataFrame) -> pd.DataFrame:
    """Harmful and benign sentences per target group (a sentence naming several groups counts for each).

    frame: load_toxigen() or load_implicit_hate(). Columns: target_group, harmful, benign, total, share_harmful;
    rows sorted by total, largest first.
    """
    exploded = explode_groups(frame)
    if exploded["target_group"].isna().any():
        raise ValueError(f"{int(exploded['target_group'].isna().sum())} sentence(s) name no target group")
    table = pd.crosstab(exploded["target_group"], exploded["harmful"]).reindex(columns=[True, False], fill_value=0)
    table.columns = ["harmful", "benign"]
    table["total"] = table["harmful"] + table["benign"]
    table["share_harmful"] = table["harmful"] / table["total"]
    return table.sort_values("total", ascending=False).rename_axis("target_group").reset_index()


def composition(frame: pd.DataFrame, rows: str, columns: str) -> pd.DataFrame:
    """Counts of ``rows`` x ``columns`` with margins (pd.crosstab), e.g. SASS category x tag."""
    return pd.crosstab(frame[rows], frame[columns], margins=True, margins_name="total").reset_index()


def label_balance(tweeteval: dict, sass_tweets: pd.DataFrame, implicit: pd.DataFrame) -> pd.DataFrame:
    """Positives per labelled dataset: the TweetEval hate splits (``tweeteval``: {split: frame with label}), SASS's
    1,000-tweet sample (label) and the ImplicitHate subset (harmful). Columns dataset, n, positive, share_positive."""
    rows = [{"dataset": f"TweetEval hate {split}", "n": len(t), "positive": int(t["label"].sum())}
            for split, t in tweeteval.items()]
    rows += [{"dataset": "TweetEval hate, SASS 1,000-tweet sample", "n": len(sass_tweets),
              "positive": int(sass_tweets["label"].sum())},
             {"dataset": "ImplicitHate (balanced subset)", "n": len(implicit),
              "positive": int(implicit["harmful"].sum())}]
    balance = pd.DataFrame(rows)
    balance["share_positive"] = balance["positive"] / balance["n"]
    return balance


#: The values the datasets chapter checks, as the papers print them: each in its paper's ``printed`` module.
RTP_SHARE, RTP_PEARSON = rtp_printed.PAPER["share_toxic_prompts"], rtp_printed.PAPER["prompt_continuation_r"]
TOXIGEN_SIZE, TOXIGEN_GROUPS = safety_printed.PAPER["toxigen_size"], safety_printed.PAPER["toxigen_groups"]
IMPLICIT_BALANCE = safety_printed.PAPER["implicit_balance"]
SASS_DESIGN, SASS_SHARE_TOXIC = sass_printed.PAPER["design"], sass_printed.PAPER["share_toxic_labels"]


#: the band the RealToxicityPrompts share claim reads "about 22%" as (the printed 0.22 +- 0.05: 0.17 to 0.27)
RTP_SHARE_BAND = (round(RTP_SHARE.value - 0.05, 12), round(RTP_SHARE.value + 0.05, 12))


def claims(rtp_stats: pd.DataFrame, toxigen: pd.DataFrame, groups: pd.DataFrame, sass: pd.DataFrame,
           implicit: pd.DataFrame) -> list[dict]:
    """Claims of the datasets chapter from ``rtp_stats`` (rows of :func:`rtp_statistics` with a subset column; the
    RTP claims need the "sample" subset), the ToxiGen sentences and their ``groups`` (:func:`group_label_counts`),
    the SASS predictions (category, tag, human_label) and the ImplicitHate subset (harmful). Every claim's subject
    is "data"."""
    rows = []
    if "sample" in rtp_stats["subset"].values:
        sample = rtp_stats.set_index("subset").loc["sample"]
        n_scored = int(sample["n_prompt_scored"])
        share = proportion_interval(int(round(sample["share_toxic_prompts"] * n_scored)), n_scored)
        r = correlation_interval(float(sample["pearson_r"]), int(sample["n_pearson"]))
        rows += [
            claim("RTP: about 22% of prompts are toxic (22K of 100K)", RTP_SHARE.value,
                  round(share.value, 3), interval=share, threshold=RTP_SHARE_BAND, direction="within",
                  note=f"random sample of 5,000 records ({n_scored} scored), not the full 100K; holds = the "
                       "interval within 0.22 +- 0.05; exact interval", kind="recorded predictions",
                  rule="rtp_share_toxic_prompts", subject="data"),
            claim("RTP: prompt and continuation toxicity are slightly anti-correlated", RTP_PEARSON.value,
                  round(r.value, 4), interval=r, threshold=0.0, direction="below",
                  note=f"Pearson r on the random sample (n = {r.n}, p = {sample['pearson_p']:.1e}); Fisher z "
                       "interval", kind="recorded predictions", rule="rtp_prompt_continuation_r", subject="data"),
        ]
    per_tag = sass.groupby(["category", "tag"]).size().unstack(fill_value=0)
    both = (groups["harmful"] > 0) & (groups["benign"] > 0)
    return rows + [
        claim("ToxiGen evaluation set size", TOXIGEN_SIZE.value, len(toxigen),
              verdict=fact(len(toxigen) == TOXIGEN_SIZE.value),
              note=f"the public reference subset (SafeNLP) has 6,514 sentences; the paper's text says "
                   f"{TOXIGEN_SIZE.value:,}",
              kind="recorded predictions", rule="toxigen_size", subject="data"),
        claim("ToxiGen: every one of the 13 demographics has harmful and benign sentences",
              TOXIGEN_GROUPS.value, int(both.sum()),
              verdict=fact(len(groups) == TOXIGEN_GROUPS.value and both.all()), note="dataset fact",
              kind="recorded predictions", rule="toxigen_groups", subject="data"),
        claim("SASS: 10 categories x (15 filtered + 10 unfiltered)", SASS_DESIGN.value,
              f"{len(per_tag)} x ({per_tag['filtered'].min()}-{per_tag['filtered'].max()} + "
              f"{per_tag['unfiltered'].min()}-{per_tag['unfiltered'].max()})",
              verdict=fact(len(per_tag) == sass_printed.PAPER_CATEGORIES
                           and (per_tag["filtered"] == sass_printed.PAPER_FILTERED).all()
                           and (per_tag["unfiltered"] == sass_printed.PAPER_UNFILTERED).all()),
              note="comments per category: filtered + unfiltered", kind="recorded predictions", rule="sass_design",
              subject="data"),
        claim("SASS: 72.4% of human labels are toxic", SASS_SHARE_TOXIC.value,
              round(sass["human_label"].mean(), 4),
              verdict=fact(within(SASS_SHARE_TOXIC.value, sass["human_label"].mean(), 0.0005)),
              note="human_toxicity > 0.5; all 250 comments (a count, no interval)", kind="recorded predictions",
              rule="sass_share_toxic_labels", subject="data"),
        claim("ImplicitHate subset is balanced", IMPLICIT_BALANCE.value, implicit["harmful"].mean(),
              verdict=fact(within(IMPLICIT_BALANCE.value, implicit["harmful"].mean(), 0.001)),
              note="14,200 sentences (a count)",
              kind="recorded predictions", rule="implicit_balance", subject="data"),
    ]


#: the stricter threshold of the datasets chapter's threshold exercise
STRICTER_THRESHOLD = 0.75


def exercise_prose(frames: dict[str, pd.DataFrame], threshold: float) -> dict[str, str]:
    """The datasets chapter's exercise figures and phrases, {glue key: text} (keys "datasets-"), from the RTP
    ``frames`` ({subset: load_rtp frame}, with "all (distinct records)") at the chapter's ``threshold`` and at
    ``STRICTER_THRESHOLD``: the threshold exercise's re-run, computed here since it needs only the data. A subset the
    run did not load (the smoke profile loads fewer) gives "—" in its places."""
    at = {t: {name: rtp_statistics(f, t) for name, f in frames.items()} for t in (threshold, STRICTER_THRESHOLD)}
    base, strict = at[threshold], at[STRICTER_THRESHOLD]
    missing = "—"

    def claim_verdict(s: dict) -> str:
        share = proportion_interval(s["n_toxic_prompts"], s["n_prompt_scored"])
        return f"{verdict(share.low, share.high, RTP_SHARE_BAND, 'within')} ({s['share_toxic_prompts']:.3f})"

    def signed(x: float) -> str:
        return f"{x:.3f}".replace("-", "\u2212")

    out = {"threshold": f"{threshold:g}", "stricter": f"{STRICTER_THRESHOLD:g}"}
    for key, name in (("sample", "sample"), ("ch", "challenging"), ("all", "all (distinct records)"),
                      ("nontoxic", "nontoxic")):
        held = name in frames
        out |= {f"{key}-share": f"{base[name]['share_toxic_prompts']:.3f}" if held else missing,
                f"{key}-share-strict": f"{strict[name]['share_toxic_prompts']:.3f}" if held else missing,
                f"{key}-r": signed(base[name]["pearson_r"]) if held else missing,
                f"{key}-sd": f"{frames[name]['prompt_toxicity'].std():.3f}" if held else missing}
    held = "sample" in frames
    sample = frames["sample"][["prompt_toxicity", "continuation_toxicity"]].dropna() if held else None
    low = sample[sample["prompt_toxicity"] < 0.5] if held else None
    out |= {"claim-base": claim_verdict(base["sample"]) if held else missing,
            "claim-strict": claim_verdict(strict["sample"]) if held else missing,
            "low-r": (f"{stats.pearsonr(low['prompt_toxicity'], low['continuation_toxicity']).statistic:.3f}"
                      if held and len(low) >= 3 else missing),
            "low-n": f"{len(low):,}" if held else missing,
            "sample-toxic": f"{base['sample']['n_toxic_prompts']:,}" if held else missing,
            "sample-toxic-strict": f"{strict['sample']['n_toxic_prompts']:,}" if held else missing,
            "sample-scored": f"{base['sample']['n_prompt_scored']:,}" if held else missing}
    return {f"datasets-{key}": value for key, value in out.items()}
