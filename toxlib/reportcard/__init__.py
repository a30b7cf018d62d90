"""Your model's report card: the four papers' protocols run on any causal (or masked) language model, every claim's
verdict for it beside the bundled models' (from the sample record) and the papers', on one page.

    python -m toxlib report --model /path/to/folder --name mine --budget quick

Modules: ``budgets`` (the chapters a report runs and their profiles), ``model_facts`` (what the model is and which
chapters apply), ``work`` and ``estimate`` (the cost on this machine before anything runs), ``runs`` (the chapters
executed, resumably), ``domain`` (whether the model's text lies where the scorer was measured), ``degenerate``
(whether it answers the SASS questions as a constant would), ``rows`` (its claims
beside the book's), ``figures``, ``page`` (index.html, report.csv, report.json) and ``card`` (plan, run, write).

May import: common, store, chapters, data, metrics, models, generate, scorers, publish, papers, book_build, benchmarks.
"""
