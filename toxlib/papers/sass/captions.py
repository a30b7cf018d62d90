"""Captions of the SASS chapter (``notebooks/sass.ipynb``; the SASS paper's Tables 3, 5, 6 and 7, and their local
analogues).

Fields the chapter binds from its parameters: ``human_threshold``, ``perspective_threshold``, ``models``,
``scorers``, ``scorer_threshold``; computed in the chapter: ``n_tweets`` (TweetEval sample), ``n_comments`` (SASS
comments asked the local models), ``best_lm`` (the local LM system with the best F1), ``n_tweets_lm`` (tweets asked
the local models).
"""

from toxlib.publish.captions import Captions

CAPTIONS = Captions("sass", {
    "table3": "Table 3: precision/recall/F1 against the human labels (human toxicity > {human_threshold}) on the "
              "250 SASS comments (recorded Perspective scores thresholded at > {perspective_threshold}; GPT-3 = mode "
              "of 3 recorded runs). paper columns: printed in the paper. Baselines: answering toxic to every "
              "comment, to none, or at random at the prevalence ({prevalence} toxic; random: mean of 10,000 seeded "
              "draws, F1 low..high their 95% range).",
    "table5": "Table 5: mean human score, mean Perspective toxicity, and GPT-3 positive rate per SASS category (25 "
              "comments each, recorded predictions). paper columns: printed in the paper.",
    "fig_table5_bars": "SASS: per-category toxicity, humans vs Perspective vs GPT-3-FEW (250 comments, recorded)",
    "table6": "Table 6: p(contains swear word | flagged toxic) and p(flagged toxic | contains swear word), recorded "
              "predictions on SASS; swear words detected with the LDNOOBW list named in the first column (the "
              "paper's method is unknown).",
    "table7": "Table 7: precision/recall/F1 against the TweetEval hate labels on SASS's {n_tweets}-tweet sample "
              "(recorded Perspective > 0.5 and GPT-3-FEW replies). paper columns: printed in the paper. Baselines: "
              "answering hate to every tweet, to none, or at random at the prevalence ({prevalence} hateful; random: "
              "mean of 10,000 seeded draws, F1 low..high their 95% range).",
    "classifiers": "Table 3 analogue: precision/recall/F1 against the human labels (human toxicity > "
                   "{human_threshold}) on {n_comments} SASS comments, for the recorded systems (Perspective > "
                   "{perspective_threshold}, GPT-3 mode of 3 runs), {models} asked the paper's prompts (two "
                   "readings), and the local scorers at > {scorer_threshold}, then the trivial baselines ({prevalence} "
                   "toxic; random: mean of 10,000 seeded draws, F1 low..high their 95% range). missing: comments "
                   "without a label (unparsed majority); top answer share: the share given the most common answer "
                   "(above 0.95: a degenerate model, answering as a constant would).",
    "fig_classifiers": "SASS: classifiers against human labels ({n_comments} comments)",
    "table5_local": "Table 5 analogue: per-category means on {n_comments} SASS comments: human rating, recorded "
                    "Perspective toxicity, GPT-3-FEW and {best_lm} (the local LM system with the best F1) as the "
                    "share labelled toxic, and the local scorers' mean toxicity (profanity-svm: its one score).",
    "table6_local": "Table 6 analogue for every system on {n_comments} SASS comments: p(contains swear word | flagged "
                    "toxic) and p(flagged toxic | contains swear word); swear words found with the LDNOOBW list "
                    "named in the first column.",
    "table7_local": "Table 7 analogue: precision/recall/F1 against the TweetEval hate labels on {n_tweets_lm:,} "
                    "tweets of SASS's sample: recorded Perspective (> 0.5) and GPT-3-FEW, each model's best setting "
                    "on SASS (next-token reading; the best of all first) and the local scorers at > "
                    "{scorer_threshold}, then the trivial baselines ({prevalence} hateful). Failed or unparsed "
                    "predictions left out (missing).",
    "claims": "Claims of this chapter: part 1 from the SASS authors' recorded predictions; part 2 from local models "
              "({models}) and scorers ({scorers}), with the paper's GPT-3 values beside them",
})
