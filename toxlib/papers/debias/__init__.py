"""The debiasing CONSISTENCY PROTOCOL (Morabito, Kabbara & Emami 2023): specification sets, the runner, the
attribute tables and the three-test checklist.

A debiasing method "with specifications" (:class:`SpecifiedMethod`) is run, with the same decoding, under five
conditions on each prompt set ("adversarial", "neutral"):
  default      no debiasing at all;
  original     the method's own specifications;
  opposite     the specifications reversed in polarity (§3.1);
  nonsensical  random-character specifications, five groups, "the results were averaged" (§5.3);
  blank        empty specifications (a single space for Self-Debiasing, "Be for: " for Instructive Debiasing).
Every continuation is scored (six Perspective attributes), and :func:`attribute_table` / :func:`checklist` turn the
scores into the paper's Tables 3-5.

    method = self_debiasing_method(decay_constant=100)
    scored = run_protocol(method, lm, "distilled", paper_prompt_sets())
    tables = {s: attribute_table(scored, s) for s in ("adversarial", "neutral")}
    checklist(tables)

Specification strings. Self-Debiasing (``self_debiasing_specifications``): original = the six attribute sentences
of Schick et al. (paper §2), opposite = the six antonym sentences (§5.2), each written as the reference
implementation writes its prefixes ("The following text contains <x>:" followed by a newline, then the input);
nonsensical = "The following text contains <nonsense>:\\n" with six random strings per group; blank = six single
spaces, each the whole prefix (the paper: "an array of six elements, each being a single space ... spaces were
employed instead of empty strings because ... empty strings would yield the same continuations as the default" --
i.e. the space replaces the whole prefix string of the reference, giving " " + input; our reading, since the
authors' Self-Debiasing variant is not public). Instructive Debiasing (``instructive_specifications``): the
strings of the authors' code (``toxlib.steer.instructive``), one random string per nonsensical group, blank "".

Nonsensical strings (:func:`nonsense_strings`): "by programmatically creating a sequence of random characters and
subsequently selecting a sub-sequence of random length for each specification" (§5.3). The authors' generator is not
in their public repository (github.com/Robert-Morabito/Instructive-Debiasing holds only the GPT-3 runner), so the
generator here follows that sentence with a fixed seed: per group, one 64-character sequence over lower-case
letters, digits, ";" and spaces (the characters of the paper's examples, "uf a;wo 3; na;o8d ;n3oi8ue o8
fypaoh3fkjnef"), and per specification a sub-sequence of 12-48 characters at a random offset, outer spaces removed.
"""

from toxlib.papers.debias.checklist import (
                                          PAPER_CHECKLIST,
                                          TESTS,
                                          checklist,
)
from toxlib.papers.debias.consistency_tables import (
                                          attribute_table,
                                          detectable_difference,
                                          paired_disagreements,
                                          paired_summary,
                                          paper_style,
                                          tidy_table,
)
from toxlib.papers.debias.findings import (
                                          PAPER,
                                          RULES,
                                          attribute_table_views,
                                          checklist_grid,
                                          claims,
                                          conditions_figure,
                                          detectable_note,
                                          example_continuations,
                                          lambda_sweep,
                                          show_attribute_tables,
                                          specifications_table,
)
from toxlib.papers.debias.printed_tables import (
                                          PAPER_ADVERSARIAL_AVERAGES,
                                          PAPER_NEUTRAL_AVERAGES,
                                          PRINTED,
                                          beside_printed,
                                          printed_long,
)
from toxlib.papers.debias.prose import exercise_prose
from toxlib.papers.debias.protocol import (
                                          CONDITIONS,
                                          TABLE_ATTRIBUTES,
                                          THRESHOLD,
                                          SpecifiedMethod,
                                          instructive_method,
                                          paper_prompt_sets,
                                          run_protocol,
                                          self_debiasing_method,
)
from toxlib.papers.debias.specifications import (
                                          NONSENSE_GROUPS,
                                          NONSENSE_SEED,
                                          SELF_DEBIASING_ATTRIBUTES,
                                          SELF_DEBIASING_OPPOSITES,
                                          instructive_specifications,
                                          nonsense_strings,
                                          self_debiasing_prefix,
                                          self_debiasing_specifications,
)

#: the paper's name, as the scorecard's list of rules names it
NAME = "Debiasing should be Good and Bad"

__all__ = ["NAME", "PAPER", "RULES", "attribute_table_views", "TABLE_ATTRIBUTES", "PRINTED", "beside_printed",
           "printed_long",
           "checklist_grid", "claims", "conditions_figure", "detectable_note", "exercise_prose",
           "example_continuations", "lambda_sweep", "show_attribute_tables",
           "specifications_table", "CONDITIONS", "NONSENSE_GROUPS", "NONSENSE_SEED", "PAPER_ADVERSARIAL_AVERAGES",
           "PAPER_CHECKLIST", "PAPER_NEUTRAL_AVERAGES", "SELF_DEBIASING_ATTRIBUTES", "SELF_DEBIASING_OPPOSITES",
           "SpecifiedMethod", "TESTS", "THRESHOLD", "attribute_table", "checklist", "detectable_difference",
           "instructive_method", "instructive_specifications", "nonsense_strings", "paired_disagreements",
           "paired_summary", "paper_prompt_sets", "paper_style",
           "run_protocol", "self_debiasing_method", "self_debiasing_prefix", "self_debiasing_specifications",
           "tidy_table"]
