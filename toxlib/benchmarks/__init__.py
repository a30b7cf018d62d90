"""Speed measurements a developer or the generation chapter runs (``python -m toxlib bench ...``): the matmul
roofline (``roofline``), generation against the papers' loop and transformers' batched path (``generation_speed``;
every ratio at equal work, ``equal_work``), the ceilings of the decoding step (``ceilings``), scorer throughput
(``scorer_throughput``), ``toxlib serve`` under concurrent clients (``serve_capacity``), Ray against local
(``distributed``), and models with random weights, their nucleus sizes fitted to the trained ones', for machines
the real weights cannot reach (``random_weights``). No chapter result depends on them.
May import: common, store, data, executors, models, generate, steer, scorers, publish, book_build.
"""
