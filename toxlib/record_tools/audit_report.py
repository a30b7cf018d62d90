"""The text ``python -m toxlib record audit`` prints: per chapter, kind and precision how many rows matched, the
keys not audited and why, the items that differ, and the verdict line with the machine and commit.

``report_text(run, n, seed, facts)`` takes a ``toxlib.record_tools.audit_file.AuditRun`` and returns the text.
"""

from __future__ import annotations

import pandas as pd

from toxlib.record_tools.audit_outcome import MACHINE_DEPENDENT, PASS_SHARE, counted, outcome, shown_only, summary


def report_text(run, n: int, seed: int, facts: dict, out: str | None = None) -> str:
    """The audit's report as text (see the module docstring). ``facts``: ``toxlib.book_build.machine.kernel_facts()``;
    ``out``: the --out file, named when keys were resumed from it."""
    rows, lines = run.rows, []
    if run.redone:
        lines.append(f"{len(run.redone)} key(s) held only in part by {out} (an audit stopped while writing them): "
                     "audited again")
    if run.resumed:
        lines.append(f"resumed: {len(run.resumed)} keys from {out}, {rows['key'].nunique() - len(run.resumed)} "
                     "audited now")
    with pd.option_context("display.width", 200, "display.max_colwidth", 60):
        lines.append(summary(rows).to_string(index=False) if (rows["rows"] > 0).any() else
                     "nothing could be audited: every key in scope is listed below with the reason")
        skipped = rows[rows["rows"] == 0]
        if len(skipped):
            lines += ["", f"{len(skipped)} keys not audited:",
                      skipped[["kind", "chapters", "what", "detail"]].to_string(index=False)]
        dependent = shown_only(rows)
        for label, part in (("", counted(rows)), (" (bf16/float16: shown, not counted)", dependent)):
            differing = part[part["matched"] < part["rows"]]
            if len(differing):
                lines += ["", f"{len(differing)} items differ{label}:",
                          differing[["kind", "what", "item", "rows", "matched", "detail"]].to_string(index=False)]
    decided = outcome(rows)
    lines += ["", f"audit: {decided['matched']:,} of {decided['rows']:,} rows match ({decided['share']:.1%}; pass at "
              f"{PASS_SHARE:.0%}), slice {n}, seed {seed}, on {facts.get('cpu', facts['machine'])}, commit "
              f"{facts['commit']}"]
    if len(dependent):
        lines.append(f"not counted: {int(dependent['matched'].sum()):,} of {int(dependent['rows'].sum()):,} rows of "
                     f"{dependent['key'].nunique()} {'/'.join(MACHINE_DEPENDENT)} keys match (machine-dependent by "
                     "design)")
    if not decided["rows"]:
        lines.append("no float32 row could be audited: the audit fails (it vouches for the rows that should travel)")
    return "\n".join(lines)
