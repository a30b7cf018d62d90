"""Captions of the scorers chapter (``notebooks/scorers.ipynb``): the local scorers against Perspective and the SASS
human ratings.

Fields the chapter binds from its parameters: ``seed``, ``epochs``, ``train_limit``, ``throughput_texts``; computed in
the chapter: ``n_records`` (RealToxicityPrompts records of the training data), ``n_held`` (held-out texts).
"""

from toxlib.publish.captions import Captions

CAPTIONS = Captions("scorers", {
    "data_split": "Training data: distinct prompt and continuation texts of the {n_records:,} RealToxicityPrompts "
                  "records in the three public subsets (challenging, non-toxic prompts, random sample), split by "
                  "record with seed {seed}; toxic = share with recorded Perspective toxicity >= 0.5. No SASS, "
                  "TweetEval, ToxiGen or ImplicitHate text is used for training.",
    "training": "The shipped distilled-scorer weights and a retraining with `epochs={epochs}`, `seed={seed}`, "
                "`train_limit={train_limit}` on the machine of the run record: training texts, wall time, CPU threads, "
                "and held-out toxicity Pearson/AUC against Perspective (fp32).",
    "rtp_agreement": "Pearson correlation and AUC (Perspective >= 0.5) with Perspective's recorded scores on "
                     "{n_held:,} held-out RealToxicityPrompts texts (split by record, seed {seed}), per attribute and "
                     "scorer. bilstm's attributes are Jigsaw's labels under Perspective's names (obscene as "
                     "profanity); profanity-svm has one score.",
    "fig_calibration": "Calibration against Perspective toxicity ({n_held:,} held-out RTP texts)",
    "sass_agreement": "Agreement of each scorer's toxicity (profanity-svm: its one score) with the recorded "
                      "Perspective toxicity and with the human rating (z-normalised mean of 3 annotators) on the 250 "
                      "SASS comments; AUC for reference >= 0.5. The Perspective (recorded) row is the paper's own "
                      "instrument against the humans.",
    "sass_prf": "Precision/recall/F1 against the human labels (human toxicity > 0.5) on the 250 SASS comments: "
                "recorded Perspective and GPT-3-FEW (the paper's Table 3 rows) and the local scorers thresholded at "
                "> 0.5, then the trivial baselines: answering toxic to every comment, to none, or at random at the "
                "prevalence ({prevalence} toxic; random: mean of 10,000 seeded draws, F1 low..high their 95% "
                "range).",
    "sass_categories": "Mean score per SASS category (25 comments each): human rating, recorded Perspective toxicity, "
                       "and each local scorer's toxicity (profanity-svm: its one score).",
    "throughput": "Scoring throughput on {throughput_texts:,} RealToxicityPrompts texts (prompts and continuations of "
                  "the random sample, mean about 17 MiniLM tokens), score cache off, after a warm-up. A row with a "
                  "'same as' value runs the same scorer version as the row it names (the default distilled scorer is "
                  "float32 on a CPU) and is not timed twice. Each row names the machine and date of the benchmark run "
                  "that timed it.",
    "claims": "Claims of this chapter: the targets set for the distilled scorer and the SASS paper's Perspective "
              "finding, checked on the stand-in.",
})
