"""Fake secrets of the 15 common shapes of issue 31 (finding 9), and the secrets files around them.

Every value is assembled from pieces at run time, so no whole token sits in this file (a scanner
reading paqad's repository must not flag its tests). Each value carries a distinctive piece that
tests look for in search output, in the index database's bytes and in what ``open`` returns.
``benchmarks/secret_shapes.py`` measures recall on the same shapes.
"""

from __future__ import annotations

_B64 = "Zm9vYmFyYmF6cXV4"
#: name -> (the assignment line in ``app/settings.py``, the secret value it must not leak)
SHAPES: dict[str, tuple[str, str]] = {}


def _add(name: str, line: str, value: str) -> None:
    SHAPES[name] = (line.replace("{v}", value), value)


_add("aws-access-key-id", 'AWS_ACCESS_KEY_ID = "{v}"', "AKIA" + "QX7RZ2M4KD5PW3NY")
_add("github-pat", 'GITHUB_TOKEN = "{v}"', "ghp_" + "R7tKq2Lm9Vx4Wb8Nc3Hj" + "6Pz1Yd5Fs0GaQ8wE")
_add("gitlab-pat", 'GITLAB_TOKEN = "{v}"', "glpat-" + "Qm4Xr8Tz2Kv6Nw0Lp5Hd")
_add("slack-bot-token", 'SLACK_BOT_TOKEN = "{v}"', "xoxb-" + "284613579024-3816402957316-" + "QwErTyUiOpAsDfGhJkLzXcVb")
_add("stripe-live-key", 'STRIPE_SECRET_KEY = "{v}"', "sk_" + "live_" + "51Hq7Rk2Lm9Vx4Wb8Nc3Hj6P")
_add("google-api-key", 'GOOGLE_MAPS_KEY = "{v}"', "AIza" + "SyB7" + "Qw3Er5Ty7Ui9Op1As3Df5Gh7Jk9Lz2x")
_add(
    "private-key",
    'SIGNING_KEY = """{v}"""',
    "-----BEGIN RSA " + "PRIVATE KEY-----\n" + "MIIEowIBAAKCAQEAw7Kq9Lm2" + "Vx4Wb8Nc3Hj6Pz1Yd5Fs0Ga" * 2 + "\n" + "Tz8Rq3Mv7" * 7 + "\n-----END RSA " + "PRIVATE KEY-----",
)
_add("jwt", 'DEMO_JWT = "{v}"', "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9" + ".eyJzdWIiOiJzaG9wLWFkbWluIiwiaWF0IjoxNzAwMDAwMDAwfQ" + ".Kx9Qm2Rt7Vz4Wn8Lp3Hd6Fj1Yc5Gs0Ba")
_add("postgres-url-password", 'DATABASE_URL = "postgresql://shop:{v}@db.internal:5432/shop"', "Pg5ql" + "Wh1sk3yTango")
_add("redis-url-password", 'CACHE_URL = "redis://:{v}@cache.internal:6379/0"', "R3dis" + "Cache0Fox7rot")
_add("aws-secret-key", 'AWS_SECRET_KEY = "{v}"', "Qm7Kx2Vr9Lp4" + "Tz8Nw3Hd6Fj1Yc5Gs0BaE/" + "q2Rk+7Wm")
_add("sendgrid-api-key", 'SENDGRID_API_KEY = "{v}"', "SG." + "Kq7Rt2Vx9Lm4Wb8Nc3Hj6P" + "." + "Zy1Fd5Gs0Ba7Qe2Rw9Tx4Mv8Ln3Kp6Hj1Cs5Df0GbQ7")
_add(
    "azure-account-key",
    'AZURE_STORAGE = "DefaultEndpointsProtocol=https;AccountName=shopfiles;AccountKey={v};EndpointSuffix=core.windows.net"',
    "Az7Qm2Rk9" + _B64 * 4 + "Lp4Tz8Nw3Hd6Fj1Yc5Gs0Ba==",
)
_add("smtp-password", 'SMTP_PASSWORD = "{v}"', "Sm7p!" + "Relay#2026")
_add("gcp-private-key-id", '"private_key_id": "{v}",', "3f9a1c7e5b" + "2d8f4a6c0e1b3d5f7a9c2e4b6d8f0a")


def settings_py() -> str:
    """``app/settings.py`` with all 15 shapes (the GCP one inside a service-account dict)."""
    lines = ['"""Settings of the shop application: database, cache, mail and cloud credentials."""', ""]
    for name, (line, _) in SHAPES.items():
        lines += [f'GCP_SERVICE_ACCOUNT = {{"type": "service_account", {line} "client_email": "shop@x.iam.gserviceaccount.com"}}' if name == "gcp-private-key-id" else line]
    lines += ["", "", "def database_url() -> str:", '    """The database url with its password, for the shop\'s connection pool."""', "    return DATABASE_URL", ""]
    return "\n".join(lines)


#: secrets files: path -> (content, the secret value it holds)
FILES: dict[str, tuple[str, str]] = {
    "config/production.env": ("SMTP_HOST=mail.internal\nSMTP_PASSWORD={v}\n", "Env" + "Pr0d!Mail" + "Relay77"),
    "terraform.tfstate": ('{{"version": 4, "resources": [{{"instances": [{{"attributes": {{"password": "{v}"}}}}]}}]}}\n', "Tf5tate" + "DbAdmin" + "Pw909"),
    ".docker/config.json": ('{{"auths": {{"registry.internal": {{"auth": "{v}"}}}}}}\n', "ZG9ja2Vy" + "OlJlZ2lzdHJ5UHcxMjM0NQ"),
    ".git-credentials": ("https://shop-bot:{v}@github.com\n", "GitCred" + "St0re" + "Tok3n55"),
}
#: a nested repository's config, written under ``vendor/x/.git/`` (by ``git init``)
NESTED_GIT_SECRET = "Nested" + "Rem0te" + "Pw4242"


def all_values() -> list[str]:
    """Every secret the repository of the end-to-end test holds."""
    return [v for _, v in SHAPES.values()] + [v for _, v in FILES.values()] + [NESTED_GIT_SECRET]
