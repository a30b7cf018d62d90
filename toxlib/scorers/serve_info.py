"""What ``toxlib serve`` tells a client about itself (``GET /info``, and the discovery document's ``toxlib`` field):
the scorer that answers, its measured agreement with Perspective per attribute, and what differs from Perspective.

``about(scorer, ...)`` returns a JSON-ready dict:

    servedScorer      "<scorer name>@<version>" (also the X-Toxlib-Scorer header of every response)
    emulation         always true: these are the scorer's scores, not Perspective's
    scorer            {name, version, description}
    attributes        {ATTRIBUTE: {"agreement": {pearson, spearman, auc, calibration_error, n, n_positive} or null}}
                      for every attribute served; any other attribute is refused by name (ATTRIBUTE_NOT_SUPPORTED)
    agreement         {reference, weights, texts} of that measurement, or null when the scorer ships none
    languages         ["en"]: a request naming another language is refused (LANGUAGE_NOT_SUPPORTED_BY_ATTRIBUTE)
    window            how much of a text is scored ({"size", "unit", "side"}), or null when all of it
    differences       one sentence per way the answers differ from Perspective's
    limits            {maxTextBytes, maxBodyBytes, maxBatchRequests, maxWaiting}
    summary           one line of the above, for the discovery document's description

Every number comes from the scorer (``Scorer.agreement``: for the distilled scorer the held-out figures in its
shipped ``training.json``), none is computed or typed in here.
"""

from __future__ import annotations

from toxlib.scorers.serve_wire import MAX_TEXT_BYTES

DIFFERENCES = (
    "Scores come from a local scorer that emulates Perspective, not from Perspective: report them under the "
    "scorer's name and version, never as Perspective scores.",
    "No language detection: every text is taken as English, and a request naming another language is refused.",
    "spanScores hold one span covering the whole text; the scorer does not score sentences separately.",
    "No comments:suggestscore (suggestions), no other Perspective methods, and no quota.",
)


def about(scorer, max_body: int, max_batch: int, max_waiting: int) -> dict:
    """The information document for ``scorer`` (a toxlib ``Scorer``) served with these limits."""
    measured = scorer.agreement()
    per_attribute = (measured or {}).get("attributes", {})
    attributes = {a.upper(): {"agreement": per_attribute.get(a)} for a in scorer.attributes}
    window = None
    differences = list(DIFFERENCES)
    if scorer.window is not None:
        window = {"size": scorer.window, "unit": scorer.window_unit, "side": scorer.window_side}
        differences.append(f"Only the {scorer.window_side} {scorer.window} {scorer.window_unit} of a text are scored "
                           "(Perspective reads up to 20,480 bytes).")
    served = f"{scorer.name}@{scorer.version}"
    if measured:
        toxicity = per_attribute.get("toxicity")
        headline = (f" Agreement with Perspective on {measured['texts']:,} held-out texts: toxicity Pearson "
                    f"{toxicity['pearson']:.3f}, ROC AUC {toxicity['auc']:.3f}." if toxicity else "")
    else:
        headline = " No agreement with Perspective was measured for this scorer."
    return {
        "servedScorer": served, "emulation": True,
        "scorer": {"name": scorer.name, "version": scorer.version, "description": scorer.description},
        "attributes": attributes,
        "agreement": {k: v for k, v in measured.items() if k != "attributes"} if measured else None,
        "languages": ["en"], "window": window, "differences": differences,
        "limits": {"maxTextBytes": MAX_TEXT_BYTES, "maxBodyBytes": max_body, "maxBatchRequests": max_batch,
                   "maxWaiting": max_waiting},
        "summary": f"A local emulation of the Perspective API by toxlib, not Perspective: {served}.{headline} "
                   "Per-attribute agreement and differences: GET /info.",
    }
