"""Speed measurements a developer or the generation chapter runs (``python -m toxlib bench ...``): the matmul roofline
(``roofline``), generation against the papers' loop (``generation_speed``), the ceilings of the decoding step
(``ceilings``), scorer throughput (``scorer_throughput``), ``toxlib serve`` under concurrent clients
(``serve_capacity``), Ray against local (``distributed``), and models with random weights for machines the real
weights cannot reach (``random_weights``). No chapter result depends on them.
May import: common, store, data, executors, models, generate, steer, scorers, report, build.
"""
