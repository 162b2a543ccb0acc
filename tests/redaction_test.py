"""Secrets: source files named like secrets are code; secret shapes inside files never reach the
index or an agent (``paqad.redaction``, ``paqad.eligibility.secretfiles``).

The sample secrets are assembled from pieces at run time so that no whole token sits in this
file (a scanner reading the repository must not flag paqad's own tests).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from paqad import redaction, redaction_rules, workspace
from paqad import secrets as secrets_mod
from paqad.eligibility import collect, secretfiles
from paqad.index import store
from testing import secret_samples
from testing.agents import Agent
from testing.hosts import run_host
from testing.repos import Repo, make_shop

# kind -> a value of that shape (each with a distinctive tail, checked for in the index's terms)
SAMPLES: dict[str, str] = {
    "private-key": "-----BEGIN RSA " + "PRIVATE KEY-----\nMIIEpQIBAAKCAQEAzq9" + "Q" * 60 + "\n" + "Zk3" * 20 + "\n-----END RSA " + "PRIVATE KEY-----",
    "aws-access-key-id": "AKIA" + "IOSFODNN7QWERTYU",
    "github-token": "ghp_" + "a1B2c3D4" * 4 + "zYxW",
    "gitlab-token": "glpat-" + "xY3kQ9wErT5uIoP1aSdF",
    "slack-token": "xoxb-" + "123456789012-1234567890123-" + "AbCdEfGhIjKlMnOpQrStUvWx",
    "slack-webhook": "https://hooks.slack." + "com/services/T0000AAAA/B0000BBBB/" + "XyZ123abcDEF456ghiJKL789",
    "stripe-key": "sk_" + "live_" + "4eC39HqLyjWDarjtT1zdp7dc",
    "openai-key": "sk-proj-" + "Ab12Cd34Ef56Gh78Ij90" + "T3Blbk" + "FJ" + "Kl12Mn34Op56Qr78St90",
    "anthropic-key": "sk-ant-" + "api03-" + "Rt5" * 31 + "AA",
    "google-api-key": "AIza" + "SyD4" + "qWeRtYuIoPaSdFgHjKlZxCvBnM12345",
    "npm-token": "npm_" + "Q1w2E3r4T5y6U7i8O9p0" + "A1s2D3f4G5h6J7k8",
    "pypi-token": "pypi-" + "AgEIcHlwaS5vcmc" + "CJDk4NzM5YjQ1LWJmMmEtNDc5ZS05ZTM1LTc0YWY3NWE1ZTVhYQ",
    "jwt": "eyJhbGciOiJIUzI1NiJ9" + ".eyJzdWIiOiIxMjM0NTY3ODkwIn0" + ".dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
}
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "ZQXWVUTSRQ"


@pytest.mark.parametrize("kind", sorted(SAMPLES))
def test_each_shape_is_masked_in_context_and_the_lines_stay(kind: str) -> None:
    value = SAMPLES[kind]
    text = f'def connect():\n    """Uses the token below."""\n    token = "{value}"\n    return token\n'
    masked, found = redaction.redact_counted(text)
    assert value not in masked and found == {kind: 1}
    assert f"[REDACTED:{kind}]" in masked and masked.count("\n") == text.count("\n")
    assert masked.startswith('def connect():\n    """Uses the token below."""\n    token = "')


def test_the_aws_secret_key_is_masked_by_its_name_keeping_the_name() -> None:
    for line in (f"aws_secret_access_key = {AWS_SECRET}", f'AWS_SECRET_ACCESS_KEY="{AWS_SECRET}"', f'"SecretAccessKey": "{AWS_SECRET}"'):
        masked = redaction.redact(line)
        assert AWS_SECRET not in masked and "[REDACTED:aws-secret-access-key]" in masked and masked.split("[")[0].rstrip("\"' =:")
    assert redaction.redact(f"checksum = {AWS_SECRET}") == f"checksum = {AWS_SECRET}"  # 40 characters alone are not a key


def test_an_unterminated_private_key_is_masked_to_the_end() -> None:
    text = "KEY = '''-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nAAAA"
    masked = redaction.redact(text)
    assert "b3BlbnNz" not in masked and masked.count("\n") == 2


@pytest.mark.parametrize(
    "text",
    [
        "digest = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'",
        "run_id = '123e4567-e89b-12d3-a456-426614174000'",
        "prefix = 'ghp_'  # GitHub tokens start so",
        "STRIPE_PREFIXES = ('sk_live_', 'sk_test_')",
        "class AKIAParser: pass",
        "# load the PRIVATE KEY from the vault, never from the repo",
        "css = 'task-runner-spinner-double-bounce-animation'",
        "header = 'eyJ' # base64 of '{\"'",
    ],
)
def test_ordinary_code_is_left_alone(text: str) -> None:
    assert redaction.redact(text) == text


def test_error_messages_mask_the_shapes_too() -> None:
    assert SAMPLES["github-token"] not in secrets_mod.redact(f"push failed for {SAMPLES['github-token']}")


@pytest.mark.parametrize("name", ["secrets.py", "paqad/secrets.py", "src/secrets.ts", "lib/secrets.rb", "pkg/credentials.go", "secrets.d.ts", "secrets.sh"])
def test_source_files_named_like_secrets_are_code(name: str) -> None:
    assert secretfiles.secrets_match(name) is None


@pytest.mark.parametrize("name", ["secrets.yaml", "config/secrets.yml", "secrets.json", "secrets.toml", "deploy/secrets.tfvars", "credentials.json", "secrets.py.bak", ".env", "id_rsa", "server.pem"])
def test_data_and_key_files_named_like_secrets_are_secrets(name: str) -> None:
    assert secretfiles.secrets_match(name) is not None
    assert collect.secrets_match is secretfiles.secrets_match  # one predicate for the indexer, open and delivery


# ---- end to end: the index, search, open and the prompt hook ---------------------------------------

QUESTION = "which vendor token does connect_billing_gateway_3 use"


def _module() -> str:
    lines = ['"""Billing gateway client: connect with the vendor token."""', "", ""]
    for n, (kind, value) in enumerate(sorted(SAMPLES.items())):
        lines += [f"def connect_billing_gateway_{n}():", f'    """Connect to the billing gateway with the vendor token ({kind})."""', f"    token = {value!r}", "    return token", "", ""]
    lines += ["def gateway_aws_settings():", '    """Vendor token settings for the billing gateway."""', f'    return {{"aws_secret_access_key": "{AWS_SECRET}"}}', ""]
    return "\n".join(lines)


@pytest.fixture
def leaky(repo: Repo, paqad_cli: Any) -> Repo:
    make_shop(repo, commit=False)
    repo.write("billing/gateway.py", _module())
    repo.write("billing/secrets.py", '"""Helpers that read the vendor token from the environment."""\n\nimport os\n\n\ndef vendor_token() -> str:\n    """The billing gateway vendor token from BILLING_TOKEN."""\n    return os.environ["BILLING_TOKEN"]\n')
    repo.write("config/secrets.yaml", "vendor_token: " + "x" * 60 + "\n")
    repo.commit("billing")
    done = paqad_cli("rag", "init", "--provider", "none", cwd=repo.root)
    assert done.returncode == 0, done.stderr
    assert paqad_cli("hooks", "install", "--agents", "claude", cwd=repo.root).returncode == 0
    return repo


def _all_secrets() -> list[str]:
    return [*SAMPLES.values(), AWS_SECRET]


def _assert_clean(text: str, where: str) -> None:
    for value in _all_secrets():
        for piece in value.split("\n"):
            if len(piece) > 16 and "PRIVATE KEY" not in piece:
                assert piece not in text, f"{where} carries a secret piece {piece[:12]}…"


def _index_dump(root: Path) -> tuple[str, set[str]]:
    path = store.current_path(root)
    assert path is not None
    con = sqlite3.connect(path)
    try:
        cols = [r[1] for r in con.execute("PRAGMA table_info(units)")]
        texts = "\n".join(str(v) for row in con.execute("SELECT * FROM units") for v, c in zip(row, cols) if isinstance(v, str))
        terms = {r[0] for r in con.execute("SELECT term FROM terms")}
    finally:
        con.close()
    return texts, terms


def test_the_index_holds_no_secret_and_indexes_secrets_py(leaky: Repo, paqad_cli: Any) -> None:
    texts, terms = _index_dump(leaky.root)
    _assert_clean(texts, "the units table")
    for kind in SAMPLES:
        assert f"[REDACTED:{kind}]" in texts, kind
    assert "[REDACTED:aws-secret-access-key]" in texts
    for tail in ("zyxw", "xy3kq9wert5uiop1asdf", "4ec39hqlyjwdarjtt1zdp7dc", "dozjgnryp4j3jvmnhl0w5n", "iosfodnn7qwertyu"):
        assert not any(tail in t for t in terms), tail  # no posting carries a piece of a token
    status = json.loads(paqad_cli("rag", "explain", "billing/secrets.py", "--json", cwd=leaky.root).stdout)
    assert status["kept"] is True
    assert "billing/secrets.py::vendor_token" in texts
    assert json.loads(paqad_cli("rag", "explain", "config/secrets.yaml", "--json", cwd=leaky.root).stdout)["kept"] is False


def test_search_open_and_the_prompt_hook_deliver_no_secret(leaky: Repo, paqad_cli: Any) -> None:
    found = paqad_cli("rag", "search", QUESTION, "--json", cwd=leaky.root)
    assert found.returncode == 0 and json.loads(found.stdout)["results"], found.stdout
    _assert_clean(found.stdout, "rag search --json")
    agent = Agent(leaky.root)
    try:
        span = agent.call("open", path="billing/gateway.py", max_lines=2000)["result"]
        pending = agent.call("describe_pending", limit=50)["result"]
    finally:
        assert agent.close() == 0
    assert span["total_lines"] == (leaky.root / "billing/gateway.py").read_text().count("\n")
    _assert_clean(span["text"], "open")
    assert span["text"].count("\n") == (leaky.root / "billing/gateway.py").read_text().count("\n")
    _assert_clean(json.dumps(pending), "describe_pending")
    hook = run_host(leaky.root, "claude", prompt=QUESTION)
    assert hook.returncode == 0 and "billing/gateway.py" in hook.stdout and "[REDACTED:" in hook.stdout
    _assert_clean(hook.stdout, "the prompt hook")
    _assert_clean(((workspace.context_dir(leaky.root) / "session-context.md")).read_text(), "session-context.md")


def test_an_index_built_before_redaction_is_rebuilt(leaky: Repo, paqad_cli: Any) -> None:
    path = store.current_path(leaky.root)
    assert path is not None
    con = sqlite3.connect(path)
    with con:
        con.execute("UPDATE meta SET value = '1' WHERE key = 'parser_version'")
    con.close()
    done = paqad_cli("rag", "update", "--json", cwd=leaky.root)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["mode"].startswith("full"), done.stdout


# ---- issue 31: gitleaks's rule set, URL passwords and secret-named assignments ----------------------


@pytest.mark.parametrize("name", sorted(secret_samples.SHAPES))
def test_the_fifteen_common_shapes_are_masked_keeping_the_name(name: str) -> None:
    line, value = secret_samples.SHAPES[name]
    text = f"{line}\nDEBUG = False\n"
    masked = redaction.redact(text)
    for piece in value.split("\n"):
        assert "PRIVATE KEY" in piece or piece not in masked, name
    assert masked.count("\n") == text.count("\n") and masked.endswith("\nDEBUG = False\n")
    assert masked.split("[REDACTED:")[0] == line.split(value.split("\n")[0])[0]  # everything before the secret stays


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ('DB_PASSWORD=h4ckm3now\n', "h4ckm3now"),
        ("password: Tr0ub4dor&3\n", "Tr0ub4dor&3"),
        ('"client_secret": "a9Kq2Lm7Vx4Wb8Nc"', "a9Kq2Lm7Vx4Wb8Nc"),
        ("export API_TOKEN=f00Bar9Baz", "f00Bar9Baz"),
        ("conn = 'Server=db;User Id=app;Password=Zx9!qw;'", "Zx9!qw"),
        ("amqp://guest:Gu3stPw@rabbit:5672/", "Gu3stPw"),
        ("mongodb+srv://app:M0ngoPw@cluster0.example.net/db", "M0ngoPw"),
        ('secret_key := "go-S3cr3t-v4lue"', "go-S3cr3t-v4lue"),
        ("'password' => 'Php!Pa55'", "Php!Pa55"),
        ("password = Ini9Pass", "Ini9Pass"),
    ],
)
def test_generic_secrets_are_masked(text: str, value: str) -> None:
    masked = redaction.redact(text)
    assert value not in masked and "[REDACTED:" in masked


@pytest.mark.parametrize(
    "text",
    [
        'password = request.form["password"]',
        "token = get_token()",
        "token = self.token",
        "password: str",
        "password: Optional[str] = None",
        "def connect(password=password, token=None):",
        "    password=password,",
        'password = ""',
        "DB_PASSWORD=${DB_PASSWORD}",
        "password: {{ vault_db_password }}",
        'url = "postgresql://user:{password}@localhost/db"',
        'url = "%s://%s:%s@%s" % (scheme, user, pw, host)',
        'url = f"redis://:{pw}@{host}"',
        'ACCESS_TOKEN = "access_token"',
        'PASSWORD_FIELD = "password"',
        'sort_key = "created_at_2"',
        "token = token or default",
        "if password == 'x':",
        'csrf_token = "<token>"',
        "curl -u user:password https://example.com",
        "http://localhost:8080/path",
        "Never pass :func:`~flask.current_app` as sender",
        '("hTTp://u:p@Some.Host/path", "http://some.host.proxy")',
        "password = password2",
        "token = self.tokens[0]",
    ],
)
def test_code_that_names_secrets_is_left_alone(text: str) -> None:
    assert redaction.redact(text) == text


def test_gitleaks_rules_mask_only_the_secret_group() -> None:
    key = "SG." + "Kq7Rt2Vx9Lm4Wb8Nc3Hj6P" + "." + "Zy1Fd5Gs0Ba7Qe2Rw9Tx4Mv8Ln3Kp6Hj1Cs5Df0GbQ7"
    age = "AGE-SECRET-KEY-1" + "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L" + "QPZRY9X8GF2TVDW0S3JN54KHCE"
    masked, found = redaction.redact_counted(f'sg = "{key}"\nkey = {age}\n')
    assert masked == 'sg = "[REDACTED:sendgrid-api-token]"\nkey = [REDACTED:age-secret-key]\n' and found["sendgrid-api-token"] == 1


def test_a_short_repeated_group_is_not_taken_for_the_secret() -> None:
    """``microsoft-teams-webhook``'s first group is ``([a-z0-9]{4}-){3}``: the whole URL is masked."""
    uuid = "7c5a8f3e-1b2d-4e6f-9a0b-c1d2e3f4a5b6"
    url = f"https://contoso.webhook.office.com/webhookb2/{uuid}@{uuid}/IncomingWebhook/" + "a1b2c3d4e5f6" * 2 + "a1b2c3d4/" + uuid
    assert redaction.redact(f'TEAMS = "{url}"\n') == 'TEAMS = "[REDACTED:microsoft-teams-webhook]"\n'


def test_every_ported_rule_compiles_and_keeps_its_keywords() -> None:
    rules = redaction_rules.ruleset().rules
    assert len(rules) >= 200 and len({r.id for r in rules}) == len(rules)
    for rule in rules:
        assert rule.pattern.pattern and all(k == k.lower() for k in rule.keywords), rule.id
    head = redaction_rules.DATA.read_text().splitlines()[:2]
    assert "github.com/gitleaks/gitleaks" in head[0] and "MIT" in head[1]


@pytest.mark.parametrize(
    ("go", "python"),
    [
        (r"\b(p8e-(?i)[a-z0-9]{32})(?:x|$)", r"\b(p8e-(?i:[a-z0-9]{32}))(?:x|$)"),
        (r"(?:a|b)(?:\s|\z)", r"(?:a|b)(?:\s|\Z)"),
        (r"\b(pat[[:alnum:]]{14})", r"\b(pat[A-Za-z0-9]{14})"),
        (r"x(?:\"(?i)(?:A|B)\"|'(?i)C')", r"x(?:\"(?i:(?:A|B)\")|'(?i:C'))"),
    ],
)
def test_go_regex_syntax_is_rewritten(go: str, python: str) -> None:
    assert redaction_rules.go_to_python(go) == python


def test_the_entropy_threshold_skips_low_entropy_values() -> None:
    assert "[REDACTED:" not in redaction.redact('api_key = "aaaaaaaaaaaaaaaaaaaaaa"')  # generic-api-key needs entropy > 3.5 and a digit
    assert "[REDACTED:" in redaction.redact('api_key = "Qm7Kx2Vr9Lp4Tz8Nw3Hd6Fj"')


def test_the_keyword_index_finds_what_substring_scans_find() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    index = redaction_rules.keyword_index()
    words = sorted(redaction_rules.ruleset().by_keyword)
    alphabet = st.sampled_from(sorted(set("".join(words))) + [" ", "\n", "_"])
    pieces = st.lists(st.one_of(st.sampled_from(words), st.text(alphabet, max_size=6)), max_size=12)

    @settings(max_examples=300, deadline=None)
    @given(pieces)
    def check(parts: list[str]) -> None:
        text = "".join(parts)
        assert index.present(text) == {w for w in words if w in text}

    check()
    assert index.present("whiskey") >= {"key"}  # "sk" then "key", overlapping


@pytest.mark.parametrize(
    ("regex", "starts"),
    [
        (r"\b(ey[a-z]{3})", ("ey",)),
        (r"(?i)(?:access|(?-i:[Aa]pi|API)|passw(?:or)?d)\s*=", ("access", "api", "passw")),
        (r"\b((?:hvs\.[\w-]{90}|s\.[a-z]{24}))", ("hvs.", "s.")),
        (r"(?:abc)?def", ()),
        (r"[a-z]+token", ()),
        (r"a(?:bc|d)", ()),  # "a" alone: under two known characters
    ],
)
def test_the_literals_every_match_starts_with(regex: str, starts: tuple[str, ...]) -> None:
    assert redaction_rules.leading_literals(regex) == starts


def test_trying_a_rule_only_where_its_literals_occur_finds_what_a_full_scan_finds() -> None:
    text = secret_samples.settings_py() + "\nthey say key=value; s.x s.abcdefghijklmnopqrstuvwx api_key='Zq9" + "Lm4Vx8Rt2Wn6' EAAAx\n" * 3
    lowered = text.lower()
    anchored = [r for r in redaction_rules.ruleset().rules if r.starts]
    assert len(anchored) > 150
    for rule in anchored:
        assert [m.span() for m in rule.matches(text, lowered)] == [m.span() for m in rule.pattern.finditer(text)], rule.id
