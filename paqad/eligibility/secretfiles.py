"""Which files are secrets by their name: the one predicate the indexer, ``open`` and delivery share.

A name pattern (``.env``, ``*.pem``, ``id_rsa*``, ``secrets.*``, ``credentials*``, ...) marks a
data or key file that holds credentials. Some of those patterns also match source code:
``secrets.py``, ``secrets.ts``, ``credentials.go`` are modules (Python's own standard library has
``secrets.py``), and refusing them left paqad's own ``paqad/secrets.py`` unindexed. So a name
that a built-in stack pack parses as source code (``python-ast`` or ``tree-sitter``) is code, not
a secrets file, whatever the pattern says. Secrets *inside* source files are the job of
:mod:`paqad.redaction`, which masks known key shapes in everything indexed and delivered.

Names (each with where it comes from): ``.env``, ``*.env`` and ``.env.*`` (dotenv; ``production.env``
as much as ``.env``), ``*.tfstate`` and ``*.tfstate.*`` (Terraform state holds every resource's
secrets in clear: Terraform docs "Sensitive data in state"; github/gitignore ``Terraform.gitignore``),
``.git-credentials`` (git-credential-store), ``.pgpass`` (PostgreSQL docs "The password file"),
``.my.cnf`` (MySQL option files), ``.s3cfg`` (s3cmd), ``.boto`` (boto/gsutil), ``.dockercfg``,
``.vault-token`` (Vault CLI), ``.terraformrc``/``terraform.rc`` (Terraform CLI credentials),
``_netrc`` (netrc on Windows), ``*.ppk`` (PuTTY keys), ``*.kdbx`` (KeePass). Some files are secrets
only where they sit, so :data:`SECRET_PATH_PATTERNS` match the end of the path:
``.docker/config.json`` (Docker docs, "docker login": auths stored base64), ``.kube/config``
(kubectl's kubeconfig: client keys and tokens), ``.config/gh/hosts.yml`` (GitHub CLI token),
``.m2/settings.xml`` (Maven server passwords), anything under ``.ssh/`` or ``.gnupg/``.

Example dotenv files (``.env.example``, ``.env.sample``, ``.env.template``) stay refused: neither
gitleaks nor detect-secrets exempts them, a real value pasted into one is a common leak, and an
agent loses little (the variable names are in the code that reads them).

Only the built-in packs decide (a repository's own packs cannot turn ``secrets.json`` into
"source"), so the answer depends on the path alone: ``open`` and delivery, which have no pack
context, agree with the indexer. ``.tfvars`` is parsed by the HCL grammar but holds values
(Terraform variable files carry credentials), so it stays data.
"""

from __future__ import annotations

import fnmatch
import functools
from pathlib import PurePosixPath

from paqad.eligibility import content, stackpacks

SECRET_PATTERNS = (
    ".env", ".env.*", "*.env", "*.pem", "*.key", "*.p12", "*.pfx", "id_rsa*", "id_ed25519*", "id_ecdsa*", "id_dsa*", ".netrc", "_netrc", ".npmrc", ".pypirc",
    "credentials*", "secrets.*", "secrets.env", "*.keystore", "*.jks", ".htpasswd", "*.tfstate", "*.tfstate.*", ".git-credentials", ".pgpass",
    ".my.cnf", ".s3cfg", ".boto", ".dockercfg", ".vault-token", ".terraformrc", "terraform.rc", "*.ppk", "*.kdbx",
)
#: Patterns on the last components of the path (a name that is a secret only in that folder).
SECRET_PATH_PATTERNS = (".docker/config.json", ".kube/config", ".config/gh/hosts.yml", ".m2/settings.xml", ".ssh/*", ".gnupg/*")
#: Suffixes a grammar parses that are values, not code.
DATA_SUFFIXES = frozenset({".tfvars"})


@functools.cache
def source_suffixes() -> frozenset[str]:
    """Lower-case suffixes the built-in packs parse as source code (``.py``, ``.ts``, ``.go``, ...)."""
    found = {
        suffix
        for pack in stackpacks.load_builtin_packs().values()
        for rule in pack.files
        if rule.parser in content.SOURCE_PARSERS
        for suffix in rule.suffixes
    }
    return frozenset(found - DATA_SUFFIXES)


def is_source_name(name: str) -> bool:
    """True when the file name's extension (its last suffix) is one a built-in pack parses as code."""
    suffixes = stackpacks.suffixes_of(name)
    return bool(suffixes) and suffixes[-1] in source_suffixes()


def secrets_match(path: str) -> str | None:
    """The secrets pattern the file name (or the end of its path) matches, or None (also None for
    a source-code file matched by name)."""
    parts = PurePosixPath(path).parts
    for pattern in SECRET_PATH_PATTERNS:
        depth = pattern.count("/") + 1
        if len(parts) >= depth and fnmatch.fnmatchcase("/".join(parts[-depth:]), pattern):
            return pattern
    name = parts[-1] if parts else ""
    for pattern in SECRET_PATTERNS:
        if fnmatch.fnmatchcase(name, pattern):
            return None if is_source_name(name) else pattern
    return None
