"""The one change each evaluation needs to use ``toxlib serve`` instead of Perspective (book page "Replacing the
Perspective API"), tried with the client code those tools use, on 127.0.0.1: Google's API client
(``google-api-python-client``, the [dev] extra) as HELM, DecodingTrust, the RealToxicityPrompts authors' scripts and
Self-Debiasing call it once their discovery URL points here, and lm-evaluation-harness's plain POST with ``?key=``.
Each request below has the shape of that tool's code (attributes, ``spanAnnotations``, ``languages``, request ids),
and each answer is read the way that tool reads it."""

from __future__ import annotations

import numpy as np
import pytest
import requests
from local_server import Running

from toxlib.scorers.base import ATTRIBUTES, BatchScores, Scorer
from toxlib.scorers.serve import ANALYZE_PATH, make_app

discovery = pytest.importorskip("googleapiclient.discovery", reason="google-api-python-client: the [dev] extra")
from googleapiclient.errors import HttpError, UnknownApiNameOrVersion  # noqa: E402

#: Perspective's eight attributes as HELM and the RealToxicityPrompts scripts request them
EIGHT = ("TOXICITY", "SEVERE_TOXICITY", "IDENTITY_ATTACK", "INSULT", "PROFANITY", "THREAT", "SEXUALLY_EXPLICIT",
         "FLIRTATION")
#: the six DecodingTrust and Self-Debiasing request
SIX = ("toxicity", "severe_toxicity", "sexually_explicit", "threat", "profanity", "identity_attack")


class EightScorer(Scorer):
    """Perspective's eight attributes from the text's length: known in advance, different per attribute."""

    name, version, attributes = "eight", "1", ATTRIBUTES

    @staticmethod
    def expected(text: str, attribute: str) -> float:
        return (len(text) + ATTRIBUTES.index(attribute.lower())) % 10 / 10

    def score_batch(self, texts):
        return BatchScores(np.array([[self.expected(t, a) for a in ATTRIBUTES] for t in texts]))


@pytest.fixture(scope="module")
def server():
    with Running(make_app(EightScorer(), cache=False, api_keys=frozenset({"local-key"}))) as running:
        running.base = running.url.removesuffix(ANALYZE_PATH)
        yield running


def service(server, key: str = "local-key"):
    """The one change for HELM and DecodingTrust (their call already passes static_discovery=False) and for the
    RealToxicityPrompts scripts and Self-Debiasing (whose call gains both arguments)."""
    return discovery.build("commentanalyzer", "v1alpha1", developerKey=key,
                           discoveryServiceUrl=f"{server.base}/$discovery/rest?version=v1alpha1",
                           static_discovery=False, cache_discovery=False)


def test_helm_batches_texts_as_request_ids_and_reads_the_first_span(server):
    texts = ["You are a wonderful person.", "a text long enough to be folded as a request id " * 3]
    answers = {}

    def callback(request_id, response, error):  # HELM raises on an error; the test would fail with it
        if error:
            raise error
        answers[request_id] = response

    client = service(server)
    batch = client.new_batch_http_request()
    for text in set(texts):
        body = {"comment": {"text": text[:20_480]}, "requestedAttributes": {a: {} for a in EIGHT},
                "languages": ["en"], "spanAnnotations": True}
        batch.add(request=client.comments().analyze(body=body), request_id=text, callback=callback)
    batch.execute()
    for text in texts:  # HELM's extract_toxicity_attributes: scores["spanScores"][0]["score"]["value"]
        scores = {f"{a.lower()}_score": s["spanScores"][0]["score"]["value"]
                  for a, s in answers[text]["attributeScores"].items()}
        assert scores == {f"{a.lower()}_score": EightScorer.expected(text, a) for a in EIGHT}


def test_decodingtrust_and_self_debiasing_send_one_analyze_per_text(server):
    client = service(server)
    text = "Shut up, you stupid idiot."
    body = {"comment": {"text": text}, "requestedAttributes": {a.upper(): {} for a in SIX},
            "spanAnnotations": False, "languages": ["en"]}
    response = client.comments().analyze(body=body).execute()
    assert {a: response["attributeScores"][a.upper()]["summaryScore"]["value"] for a in SIX} == {
        a: EightScorer.expected(text, a) for a in SIX}


def test_the_realtoxicityprompts_scripts_own_check_passes(server):
    """Their utils/perspective_api.py test: a batch of a text and a text over 20,480 characters gives a score and
    an HttpError, the same as each alone."""
    client = service(server)

    def request(texts):
        responses = {}
        batch = client.new_batch_http_request()
        for uid, text in enumerate(texts):
            body = {"comment": {"text": text}, "requestedAttributes": {a: {} for a in EIGHT}, "spanAnnotations": True}
            batch.add(client.comments().analyze(body=body), request_id=str(uid),
                      callback=lambda rid, response, exc: responses.__setitem__(rid, (response, exc)))
        batch.execute()
        return [responses[str(uid)] for uid in range(len(texts))]

    ok, too_long = "Testing", "x" * (20480 + 1)
    [(score_1, error_1)], [(score_2, error_2)] = request([ok]), request([too_long])
    assert score_1 and not error_1 and not score_2 and isinstance(error_2, HttpError) and error_2.status_code == 400
    multi_score, multi_error = zip(*request([ok, too_long]))
    assert multi_score == (score_1, score_2) and tuple(map(str, multi_error)) == (str(error_1), str(error_2))
    for attribute, scores in score_1["attributeScores"].items():  # their unpack_scores asserts these
        assert scores["summaryScore"]["type"] == "PROBABILITY"
        assert [(s["begin"], s["end"], s["score"]["type"]) for s in scores["spanScores"]] == [(0, 7, "PROBABILITY")]


def test_without_the_change_googles_client_cannot_even_build_the_authors_service():
    """Why the RealToxicityPrompts scripts and Self-Debiasing need the change even against Perspective: their
    ``discovery.build('commentanalyzer', 'v1alpha1', developerKey=...)`` takes the client's bundled discovery
    documents, which since google-api-python-client 2.0 do not include commentanalyzer."""
    with pytest.raises(UnknownApiNameOrVersion):
        discovery.build("commentanalyzer", "v1alpha1", developerKey="any")


def test_googles_client_with_an_unlisted_key_gets_403(server):
    client = service(server, key="not-listed")
    body = {"comment": {"text": "hello"}, "requestedAttributes": {"TOXICITY": {}}}
    with pytest.raises(HttpError) as refused:
        client.comments().analyze(body=body).execute()
    assert refused.value.status_code == 403


def test_lm_evaluation_harness_posts_with_the_key_in_the_url_and_reads_the_summary(server):
    """Their metric.py: requests.post(f"{url}?key={API_KEY}", json=...) with languages ["en"] and TOXICITY only."""
    url = f"{server.base}/v1alpha1/comments:analyze?key=local-key"
    text = "what the hell is wrong with you people"
    data = {"comment": {"text": text}, "languages": ["en"], "requestedAttributes": {"TOXICITY": {}}}
    reply = requests.post(url, json=data, headers={"content-type": "application/json"}, timeout=10)
    assert reply.ok and reply.json()["attributeScores"]["TOXICITY"]["summaryScore"]["value"] == \
        EightScorer.expected(text, "TOXICITY")
    # a text the server refuses is a 400, which their code records as toxicity 0 (the book page says so)
    refused = requests.post(url, json={**data, "comment": {"text": "x" * 20481}}, timeout=10)
    assert refused.status_code == 400
