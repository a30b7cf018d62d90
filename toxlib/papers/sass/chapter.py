"""The sass chapter (``notebooks/sass.ipynb``) computed: ``compute(values, models)`` returns its ``ChapterResult``.

Part 1 from the SASS authors' recorded predictions: Tables 3, 5 (with its bars), 6 and 7, the paper's values
beside ours. Part 2 with local models asked the paper's prompts and toxlib's scorers in the paper's place: the
classifiers table (and its bars), Tables 5, 6 and 7 analogues. Then the claims and the numbers the exercises quote.
``values``: every parameter of ``toxlib/chapters/sass.py``, checked; ``models``: a ``toxlib.models.source.Models``.
"""

from __future__ import annotations

from toxlib import data
from toxlib.metrics.baselines import prevalence_text, with_baselines
from toxlib.models.source import Models
from toxlib.papers.sass import local_systems, paper_claims, printed, prose, tables
from toxlib.papers.sass.captions import CAPTIONS
from toxlib.publish import plots
from toxlib.publish.chapter_result import ChapterResult

#: the columns each table shows (its CSV keeps every column)
SHOWN = {
    "table3": ["system", "precision", "precision_paper", "recall", "recall_paper", "f1", "f1_paper", "f1_low",
               "f1_high", "n", "n_pred_pos"],
    "table5": ["category", "n"] + [c + s for c in ("human", "perspective", "gpt3_zero", "gpt3_one", "gpt3_few")
                                   for s in ("", "_paper")],
    "table6": ["word_list", "scope", "system", "p_swear_given_toxic", "p_swear_given_toxic_paper",
               "p_toxic_given_swear", "p_toxic_given_swear_paper", "n_flagged", "n_contains", "n_both"],
    "table7": ["system", "precision", "precision_paper", "recall", "recall_paper", "f1", "f1_paper", "f1_low",
               "f1_high", "n", "n_missing"],
    "classifiers": ["system", "model", "setting", "reading", "precision", "recall", "f1", "f1_low", "f1_high", "n",
                    "n_missing", "n_pred_pos", "top_answer_share", "answer_mass"],
    "table6_local": ["word_list", "system", "p_swear_given_toxic", "p_toxic_given_swear", "n_flagged", "n_contains",
                     "n_both"],
}
#: the bars under Table 5: column -> legend
TABLE5_BARS = {"human": "human (mean score)", "perspective": "Perspective (mean toxicity)",
               "gpt3_few": "GPT-3-FEW (share toxic)"}


def compute(v: dict, models: Models) -> ChapterResult:
    out = ChapterResult("sass", v)
    caption = CAPTIONS.bind(**v)
    recorded = data.load_sass_predictions()
    pred = tables.relabel(recorded, v["human_threshold"], v["perspective_threshold"])
    tweets = data.load_sass_tweeteval()
    word_lists = {version: data.load_word_list(version)["word"] for version in v["swear_lists"]}
    out.add_text("sizes", f"SASS: {len(pred)} comments, {pred['human_label'].mean():.1%} toxic for humans; "
                          f"TweetEval sample: {len(tweets)} tweets, {tweets['label'].mean():.1%} hate")

    t3 = out.add_table("table3", with_baselines(tables.with_paper(tables.table3(pred), printed.PAPER_TABLE3, "system"),
                                                pred["human_label"]),
                       caption("table3", prevalence=prevalence_text(pred["human_label"], "comments")),
                       columns=SHOWN["table3"])
    t5 = out.add_table("table5", tables.with_paper(tables.table5(pred), printed.PAPER_TABLE5, "category"),
                       caption("table5"), columns=SHOWN["table5"])
    out.add_figure("table5_bars", lambda: plots.grouped_bars(tables.table5(pred), "category", TABLE5_BARS,
                                                             caption("fig_table5_bars"), "score or share"))
    t6 = out.add_table("table6", tables.table6_by_word_list(pred, word_lists), caption("table6"),
                       columns=SHOWN["table6"])
    t7 = out.add_table("table7", with_baselines(tables.with_paper(tables.table7(tweets), printed.PAPER_TABLE7,
                                                                  "system"), tweets["label"]),
                       caption("table7", n_tweets=len(tweets), prevalence=prevalence_text(tweets["label"], "tweets")),
                       columns=SHOWN["table7"])

    # part 2: local models and scorers in the paper's place
    lm_comments = v["lm_comments"]
    pred_lm = pred.iloc[:lm_comments].reset_index(drop=True) if lm_comments else pred
    lms = {name: models(name) for name in v["models"]}
    lm_labels, lm_systems = local_systems.lm_classifier_labels(lms, pred_lm["text"], v["settings"], v["readings"])
    pred2, systems = local_systems.with_local_systems(pred_lm, lm_labels, v["scorers"], v["scorer_threshold"],
                                                      tables.RECORDED_SYSTEMS)
    classifiers = out.add_table(
        "classifiers", local_systems.classifier_table(pred2, systems, lm_systems),
        caption("classifiers", n_comments=len(pred_lm), prevalence=prevalence_text(pred_lm["human_label"],
                                                                                    "comments")),
        columns=SHOWN["classifiers"])
    out.add_figure("classifiers", lambda: plots.grouped_bars(
        classifiers, "system", {"precision": "precision", "recall": "recall", "f1": "F1"},
        caption("fig_classifiers", n_comments=len(pred_lm)), "score"))
    best_lm = local_systems.best_lm_system(classifiers)["system"]
    rates = {"human": "human_toxicity", "perspective": "perspective_toxicity", "gpt3_few": "gpt3_few",
             best_lm: best_lm, **{name: f"{name}_toxicity" for name in v["scorers"]}}
    out.add_table("table5_local", tables.table5(pred2, rates),
                  caption("table5_local", n_comments=len(pred_lm), best_lm=best_lm))
    t6_local = out.add_table("table6_local", tables.table6_by_word_list(pred2, word_lists, systems, scopes=False),
                             caption("table6_local", n_comments=len(pred_lm)), columns=SHOWN["table6_local"])
    tweets_limit = v["tweets_limit"]
    tweets_lm = tweets.iloc[:tweets_limit].reset_index(drop=True) if tweets_limit else tweets
    t7_local = out.add_table("table7_local", local_systems.tweet_table7(tweets_lm, classifiers, lms, v["scorers"],
                                                                        v["scorer_threshold"]),
                             caption("table7_local", n_tweets_lm=len(tweets_lm),
                                     prevalence=prevalence_text(tweets_lm["label"], "tweets")))

    out.add_claims(paper_claims.claims(t3, t5, t6, t7, classifiers, t6_local, t7_local, len(pred_lm), len(tweets_lm),
                                       v["scorer_threshold"], pred2, systems), caption("claims"))
    # the figures the exercises' text quotes: Perspective at a lower threshold, and the swear-word lists compared
    exercise_threshold = round(0.6 * v["perspective_threshold"], 2)  # 0.3 at the paper's 0.5
    out.add_prose(prose.threshold_prose(recorded, next(iter(word_lists.values())), v["human_threshold"],
                                        v["perspective_threshold"], exercise_threshold)
                  | prose.word_list_prose(pred, word_lists)
                  | prose.floor_prose(t3, pred["human_label"], "comments", "sass-floor")
                  | prose.floor_prose(t7, tweets["label"], "tweets", "sass-floor-tweets", "hateful"))
    return out
