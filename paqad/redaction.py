"""Known secret shapes inside text: masked before anything is indexed or handed to an agent.

Secrets files are kept out by name (:mod:`paqad.eligibility.secretfiles`); this module covers the
credentials that sit inside ordinary files (a test fixture with a live token, a config module
with a cloud key, a PEM block pasted into a docstring). :func:`redact` replaces each match with
``[REDACTED:<kind>]`` plus the newlines the match spanned, so line numbers, spans and the
parser's view of the file do not move. The index build runs every file through it before
parsing (unit text, docstrings, signatures, postings and embeddings all come from the masked
text), and delivery and ``open``, which read live files, run what they hand over through it too.

Three layers run in order, each masking only the secret (the name before it stays):

1. the table below: provider shapes with a fixed prefix and length, the kinds paqad has reported
   since redaction began (each row names its source; the rule ids are gitleaks's);
2. gitleaks's whole rule set (:mod:`paqad.redaction_rules`, ported from ``config/gitleaks.toml``
   in github.com/gitleaks/gitleaks, MIT): about 220 provider rules, plus ``generic-api-key``, which
   masks a high-entropy value (above 3.5 bits per character, with a digit) assigned to a key-like
   name; its keyword prefilter, entropy thresholds and allowlists come with it;
3. :mod:`paqad.redaction_generic`: a password inside a URL (``postgresql://user:pw@``,
   ``redis://:pw@``) and a literal assigned to a secret name (``SMTP_PASSWORD = "..."``,
   ``AccountKey=...;``), judged by the value's form so that code (``request.form["password"]``,
   ``get_token()``) is left alone.

Recall on fake secrets of every shape, false positives per 10k lines on pinned ordinary
repositories and the cost per MB are measured by ``benchmarks/secret_shapes.py``.

==========================  ===========================================================================
kind                        source
==========================  ===========================================================================
aws-access-key-id           AWS IAM docs, "Understanding unique ID prefixes" (AKIA, ASIA, ...); gitleaks ``aws-access-token``
aws-secret-access-key       40 base64 characters assigned to an ``aws_secret_access_key`` name (Yelp detect-secrets ``AWSKeyDetector``)
github-token                GitHub docs, "About authentication: token formats" (ghp_, gho_, ghu_, ghs_, ghr_, github_pat_); gitleaks ``github-pat``, ``github-fine-grained-pat``
gitlab-token                GitLab docs, "Token prefixes" (glpat-, gldt-, glrt-, glptt-, ...); gitleaks ``gitlab-pat``
slack-token                 Slack API docs, "Token types" (xoxb-, xoxp-, xoxa-, xoxr-, xoxe-, xapp-); gitleaks ``slack-bot-token``, ``slack-app-token``
slack-webhook               Slack docs, "Sending messages using incoming webhooks" (hooks.slack.com/services/...); gitleaks ``slack-webhook-url``
stripe-key                  Stripe docs, "API keys" (sk_live_, sk_test_, rk_live_, ...); gitleaks ``stripe-access-token``
openai-key                  OpenAI keys (sk-..., sk-proj-..., carrying the ``T3BlbkFJ`` marker); gitleaks ``openai-api-key``
anthropic-key               Anthropic keys (sk-ant-api03-..., sk-ant-admin01-...); gitleaks ``anthropic-api-key``
google-api-key              Google Cloud docs, "API keys" (AIza + 35); gitleaks ``gcp-api-key``
npm-token                   npm docs, "About access tokens" (npm_ + 36); gitleaks ``npm-access-token``
pypi-token                  PyPI docs, "API tokens" (pypi- + a macaroon starting AgEIcHlwaS5vcmc); gitleaks ``pypi-upload-token``
private-key                 RFC 7468 PEM blocks whose label ends in PRIVATE KEY (also OPENSSH, RSA, EC, ENCRYPTED); gitleaks ``private-key``
jwt                         RFC 7519 compact JWS: three base64url parts, header and payload JSON (``eyJ``); gitleaks ``jwt``
==========================  ===========================================================================

Each shape has literal anchors that must occur for it to match; a text without any of them
(almost every source file) costs one substring scan per anchor and no regular expression. The
layers after it have the same kind of prefilter (gitleaks's keywords, found in one pass).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from paqad import redaction_generic, redaction_rules

MARK = "[REDACTED:{kind}]"


@dataclass(frozen=True)
class Shape:
    kind: str
    anchors: tuple[str, ...]  # literal substrings, one of which every match contains (case-sensitive)
    pattern: re.Pattern[str]


def _shape(kind: str, anchors: tuple[str, ...], regex: str, flags: int = 0) -> Shape:
    return Shape(kind, anchors, re.compile(regex, flags))


_B64URL = r"[A-Za-z0-9_-]"
SHAPES: tuple[Shape, ...] = (
    _shape("private-key", ("PRIVATE KEY",), r"-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----|\Z)"),
    _shape("aws-access-key-id", ("AKIA", "ASIA", "ABIA", "ACCA", "A3T"), r"\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}\b"),
    _shape(  # only the value is masked: the name before it ("keep") stays
        "aws-secret-access-key", ("ecret_access_key", "ECRET_ACCESS_KEY", "ecretAccessKey", "ecretaccesskey"),
        r"(?P<keep>(?i:secret_?access_?key)[\"']?\s*(?::=|=>|[:=])\s*[\"']?)[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])",
    ),
    _shape("github-token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"), r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{82})\b"),
    _shape("gitlab-token", ("glpat-", "gldt-", "glrt-", "glptt-", "glcbt-", "glimt-", "gloas-", "glsoat-", "glft-"), r"\bgl(?:pat|dt|rt|ptt|cbt|imt|oas|soat|ft)-[A-Za-z0-9_-]{20,}"),
    _shape("slack-token", ("xox", "xapp-"), r"\b(?:xox[baprse]-[0-9A-Za-z-]{10,250}|xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+)"),
    _shape("slack-webhook", ("hooks.slack.com",), r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_-]{20,}"),
    _shape("stripe-key", ("sk_", "rk_"), r"\b[sr]k_(?:live|test|prod)_[A-Za-z0-9]{10,99}\b"),
    _shape("anthropic-key", ("sk-ant-",), rf"\bsk-ant-(?:api|admin)\d\d-{_B64URL}{{80,}}"),
    _shape("openai-key", ("T3BlbkFJ",), rf"\bsk-(?:proj-|svcacct-|admin-)?{_B64URL}{{16,}}T3BlbkFJ{_B64URL}{{16,}}"),
    _shape("google-api-key", ("AIza",), rf"\bAIza{_B64URL}{{35}}(?!{_B64URL})"),
    _shape("npm-token", ("npm_",), r"\bnpm_[A-Za-z0-9]{36}\b"),
    _shape("pypi-token", ("pypi-AgEIcHlwaS5vcmc",), rf"pypi-AgEIcHlwaS5vcmc{_B64URL}{{50,}}"),
    _shape("jwt", ("eyJ",), rf"\beyJ{_B64URL}{{10,}}\.eyJ{_B64URL}{{10,}}\.{_B64URL}{{10,}}"),
)


def _masker(kind: str) -> Callable[[re.Match[str]], str]:
    mark = MARK.format(kind=kind)

    def mask(m: re.Match[str]) -> str:
        keep = m.group("keep") if "keep" in m.re.groupindex else ""
        return keep + mark + "\n" * m.group(0)[len(keep) :].count("\n")

    return mask


def redact(text: str, path: str | None = None) -> str:
    """``text`` with every known secret shape replaced by ``[REDACTED:<kind>]`` (line count kept);
    ``path`` (repository-relative) also runs the rules gitleaks scopes to a kind of file."""
    return redact_counted(text, path)[0]


#: The shapes without a provider prefix, after the provider rules (so a key keeps its provider's kind).
GENERIC: tuple[tuple[str, tuple[str, ...], Callable[[str, Callable[[str, str], str], str], tuple[str, int]]], ...] = (
    ("url-password", redaction_generic.URL_ANCHORS, redaction_generic.mask_url_passwords),
    ("secret-assignment", redaction_generic.ASSIGN_ANCHORS, redaction_generic.mask_assignments),
)

#: Every layer's literal anchors, lower-cased, found in the same pass as gitleaks's keywords.
ANCHORS = tuple(sorted({a.lower() for shape in SHAPES for a in shape.anchors} | {a for _, anchors, _ in GENERIC for a in anchors}))


def _mark(kind: str, secret: str) -> str:
    return MARK.format(kind=kind) + "\n" * secret.count("\n")


def redact_counted(text: str, path: str | None = None) -> tuple[str, Counter[str]]:
    """:func:`redact`, and how many of each kind it masked."""
    found: Counter[str] = Counter()
    if not text:
        return text, found
    lowered = text.lower()
    present = redaction_rules.keyword_index(ANCHORS).present(lowered)  # one pass for all three layers
    for shape in SHAPES:
        if not any(a.lower() in present and a in text for a in shape.anchors):
            continue
        text, n = shape.pattern.subn(_masker(shape.kind), text)
        if n:
            found[shape.kind] += n
            lowered = text.lower()
    for rule in redaction_rules.candidates(present, path):
        text, n = redaction_rules.apply(rule, text, _mark, lowered)
        if n:
            found[rule.id] += n
            lowered = text.lower()
    for kind, anchors, masker in GENERIC:
        if any(a in present for a in anchors):
            text, n = masker(text, _mark, lowered)
            if n:
                found[kind] += n
                lowered = text.lower()
    return text, found
