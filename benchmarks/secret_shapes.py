"""Secrets by shape, measured (issue 31, item 6): recall, false positives and cost of ``paqad.redaction``.

    python -m benchmarks secret_shapes [--baseline REV] [--corpora requests flask cobra rxjs] [--repeat 5]

1. **Recall.** A corpus of fake secrets: for every ported gitleaks rule, up to ``--per-rule``
   strings its regex generates (``hypothesis.strategies.from_regex``, derandomized, so the corpus is
   the same on every run) that the rule itself calls a finding in isolation (secret group, entropy,
   allowlists); plus hand-written URL passwords and ``KEY=value`` assignments in the forms code and
   config files use (some on purpose outside what the rules cover, so the figure is honest); plus
   the 15 shapes of finding 9 (``tests/testing/secret_samples.py``). Each sample sits on its own
   line inside a small module; it counts as masked when the secret is no longer in the output.
2. **False positives** per 10k lines: every mask in the tracked UTF-8 files of pinned ordinary
   repositories (``benchmarks/corpora.py``: PyPI sdists, a Debian source package, an npm tarball,
   each checked against ``corpora.lock.json``), with the path passed so path-scoped rules run too.
   Every masked value is written to the results file for reading by hand.
3. **Cost**: milliseconds per MB of UTF-8 text over those repositories, median of ``--repeat``
   runs, with ``/proc/loadavg`` before and after.

``--baseline REV`` runs the same measures on ``paqad/redaction.py`` as it was at REV (loaded from
git), for the before/after table. Results go to ``benchmarks/.cache/secret_shapes/`` (gitignored).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import statistics
import subprocess
import sys
import time
import types
import warnings
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from benchmarks import corpora
from paqad import redaction, redaction_rules
from tests.testing import secret_samples

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
OUT = HERE / ".cache" / "secret_shapes"

Redact = Callable[[str, str], tuple[str, Counter[str]]]
CONTEXT = '"""Settings module."""\n\nimport os\n\nTIMEOUT = 30\n{sample}\nDEBUG = os.environ.get("DEBUG") == "1"\n'

#: (shape, line, secret): URL passwords and secret-named assignments as code and config files write them.
GENERIC: list[tuple[str, str, str]] = [
    ("url/postgresql", 'DATABASE_URL = "postgresql://app:{v}@db.example.com:5432/app"', "Pg7xQ2mL9v"),
    ("url/postgres-bare", "DATABASE_URL=postgres://app:{v}@10.0.0.5/app", "Pg8yR3nM0w"),
    ("url/mysql", "url: mysql://root:{v}@localhost:3306/shop", "My5qLr00t!"),
    ("url/mongodb+srv", 'MONGO = "mongodb+srv://svc:{v}@cluster0.abcde.mongodb.net/db"', "M0ng0Svc9"),
    ("url/redis-no-user", 'CACHE = "redis://:{v}@cache:6379/0"', "R3disPw77"),
    ("url/rediss-user", "REDIS_URL=rediss://default:{v}@redis.example.com:6380", "Rd5Secure2"),
    ("url/amqp", "broker_url = 'amqp://guest:{v}@rabbit:5672//'", "Gu3stAmqp"),
    ("url/https-basic", 'proxy = "https://builder:{v}@proxy.example.com:8443"', "Pr0xyPw11"),
    ("url/ftp", "ftp://upload:{v}@ftp.example.com/in/", "Ftp9Upl0ad"),
    ("url/smtp", 'EMAIL_URL = "smtp://mailer:{v}@smtp.example.com:587"', "Sm7pMail3r"),
    ("url/ldap", 'LDAP = "ldap://cn=admin:{v}@ldap.example.com"', "Ld4pAdm1n"),
    ("assign/python-quoted", 'SMTP_PASSWORD = "{v}"', "Tr0ub4dor&3"),
    ("assign/python-lower", "db_password = '{v}'", "hunter2hunter2"),
    ("assign/python-dict", 'CONFIG = {{"password": "{v}", "host": "db"}}', "D1ctPassw0rd"),
    ("assign/python-kwarg-literal", 'connect(host="db", password="{v}")', "Kw4rgPass!"),
    ("assign/dotenv", "DB_PASSWORD={v}", "postgres"),
    ("assign/dotenv-digit", "REDIS_PASSWORD={v}", "r3dispass"),
    ("assign/dotenv-quoted", 'API_TOKEN="{v}"', "tok_9f8e7d6c5b"),
    ("assign/shell-export", "export GITHUB_TOKEN={v}", "gh0Token123"),
    ("assign/yaml", "  password: {v}", "Yam1Pass#"),
    ("assign/yaml-quoted", '  client_secret: "{v}"', "cl13nt-s3cr3t"),
    ("assign/json", '  "api_key": "{v}",', "js0nKey4567"),
    ("assign/ini", "password = {v}", "Ini9Pass"),
    ("assign/toml", 'secret_key = "{v}"', "t0ml-s3cr3t-k3y"),
    ("assign/go", 'apiKey := "{v}"', "g0ApiKey77"),
    ("assign/php-array", "'password' => '{v}',", "Php!Pa55w"),
    ("assign/ruby-symbol", ":password => '{v}'", "Ruby5ymP4ss"),
    ("assign/js-object", "  accessToken: '{v}',", "jsT0ken88"),
    ("assign/connection-string", 'conn = "Server=db;User Id=app;Password={v};"', "C0nnStr!ng"),
    ("assign/azure-account-key", 'AZ = "DefaultEndpointsProtocol=https;AccountName=a;AccountKey={v};"', "Zm9vYmFy" * 6 + "YmF6cXV4=="),
    ("assign/private-key-id", '  "private_key_id": "{v}",', "0123456789abcdef0123456789abcdef01234567"),
    ("assign/passphrase", 'SSH_PASSPHRASE = "{v}"', "correct-h0rse"),
    ("assign/xml-element (not covered)", "<password>{v}</password>", "Xml3lement"),
    ("assign/cli-flag-space (not covered)", "mysql -u root --password {v} shop", "Cl1Fl4g"),
]


def baseline(rev: str) -> Redact:
    """``redact_counted`` of ``paqad/redaction.py`` at ``rev`` (a self-contained module before issue 31)."""
    source = subprocess.run(["git", "show", f"{rev}:paqad/redaction.py"], cwd=REPO, capture_output=True, text=True, check=True).stdout
    module = types.ModuleType("paqad_redaction_baseline")
    sys.modules[module.__name__] = module  # dataclasses look the module up
    exec(compile(source, f"{rev}:paqad/redaction.py", "exec"), module.__dict__)
    return lambda text, path: module.redact_counted(text)


def current(text: str, path: str) -> tuple[str, Counter[str]]:
    return redaction.redact_counted(text, path)


# ---- 1. recall -----------------------------------------------------------------------------------


def _rule_samples(rule: redaction_rules.Rule, regex: str, per_rule: int) -> list[str]:
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    drawn: list[str] = []

    @settings(derandomize=True, max_examples=40, database=None, suppress_health_check=list(HealthCheck), deadline=None)
    @given(st.from_regex(re.compile(regex, re.ASCII), fullmatch=True))
    def draw(s: str) -> None:
        drawn.append(s)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        draw()
    secrets: list[str] = []
    for sample in dict.fromkeys(drawn):
        m = rule.pattern.search(sample)
        span = redaction_rules._secret_span(m, rule.secret_group) if m else (-1, -1)
        secret = sample[span[0] : span[1]]
        if m and span[0] >= 0 and len(secret) >= 6 and redaction_rules.is_finding(rule, sample, m, span) and "\n" not in sample:
            secrets.append(json.dumps([sample, secret]))
        if len(secrets) == per_rule:
            break
    return secrets


def gitleaks_corpus(per_rule: int) -> list[tuple[str, str, str]]:
    """(rule id, line, secret) for every ported rule, cached by the rules file's content."""
    data = redaction_rules.DATA.read_text(encoding="utf-8")
    key = hashlib.sha256((data + Path(redaction_rules.__file__).read_text(encoding="utf-8")).encode()).hexdigest()[:12]
    cache = OUT / f"gitleaks-samples-{per_rule}-{key}.json"  # the rules and the code that judges a sample
    if cache.exists():
        return [tuple(x) for x in json.loads(cache.read_text())]  # type: ignore[misc]
    raw = {r["id"]: r["regex"] for r in __import__("tomllib").loads(data)["rules"] if "regex" in r}
    out = []
    for rule in redaction_rules.ruleset().rules:
        for item in _rule_samples(rule, raw[rule.id], per_rule):
            sample, secret = json.loads(item)
            if rule.keywords and not any(k in sample.lower() for k in rule.keywords):
                sample = f"# {rule.keywords[0]}\n{sample}"  # gitleaks too runs a rule only where a keyword occurs
            out.append((rule.id, sample, secret))
    OUT.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps(out))
    return out


def finding9_corpus() -> list[tuple[str, str, str]]:
    return [(f"finding9/{name}", line, value) for name, (line, value) in secret_samples.SHAPES.items()]


def generic_corpus() -> list[tuple[str, str, str]]:
    return [(shape, line.format(v=value), value) for shape, line, value in GENERIC]


def _masked(redact: Redact, line: str, secret: str, path: str) -> bool:
    out = redact(CONTEXT.format(sample=line), path)[0]
    return all(piece not in out for piece in secret.split("\n") if len(piece) >= 6 and "PRIVATE KEY" not in piece)


def recall(redact: Redact, corpus: list[tuple[str, str, str]]) -> dict:
    by_shape: dict[str, list[int]] = {}
    missed = []
    for shape, line, secret in corpus:
        ok = _masked(redact, line, secret, _path_for(shape))
        by_shape.setdefault(shape, [0, 0])[0] += ok
        by_shape[shape][1] += 1
        if not ok:
            missed.append({"shape": shape, "line": line[:200]})
    hit = sum(v[0] for v in by_shape.values())
    total = sum(v[1] for v in by_shape.values())
    shapes_all = sum(v[0] == v[1] for v in by_shape.values())
    return {"samples": total, "masked": hit, "recall": round(hit / max(total, 1), 4), "shapes": len(by_shape), "shapes_fully_masked": shapes_all, "by_shape": by_shape, "missed": missed}


def _path_for(shape: str) -> str:
    """A file name of the kind a path-scoped gitleaks rule runs on (the sample sits in such a file)."""
    rule = next((r for r in redaction_rules.ruleset().rules if r.id == shape), None)
    for candidate in ("app/settings.py", "main.tf", "deploy/secret.yaml", "NuGet.Config", "app/index.php"):
        if rule is None or not rule.path or re.search(rule.path, candidate):
            return candidate
    return "app/settings.py"


# ---- 2. false positives and 3. cost --------------------------------------------------------------


def corpus_texts(names: list[str]) -> dict[str, dict[str, str]]:
    """name@version -> {path: text} of every tracked UTF-8 file, fetched and checked by corpora.py."""
    if corpora.main(["fetch", *names]) not in (0, None):
        sys.exit("corpora.py fetch failed or drifted from corpora.lock.json")
    out = {}
    for c in corpora.select(names):
        root = corpora.corpus_path(c)
        files = {}
        for rel in subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, text=True, check=True).stdout.split("\0"):
            try:
                files[rel] = (root / rel).read_text(encoding="utf-8") if rel else ""
            except (OSError, UnicodeDecodeError):
                continue
        out[f"{c.name} {c.version}"] = {k: v for k, v in files.items() if v}
    return out


def false_positives(redact: Redact, texts: dict[str, dict[str, str]]) -> dict:
    report = {}
    for name, files in texts.items():
        lines = sum(t.count("\n") + 1 for t in files.values())
        kinds: Counter[str] = Counter()
        where = []
        for rel, text in files.items():
            masked, found = redact(text, rel)
            kinds.update(found)
            if found:
                where += [f"{rel}:{n + 1}: {line.strip()[:160]}" for n, line in enumerate(masked.splitlines()) if "[REDACTED:" in line]
        total = sum(kinds.values())
        report[name] = {"files": len(files), "lines": lines, "masks": total, "per_10k_lines": round(total * 1e4 / lines, 2), "kinds": dict(kinds), "where": where}
    return report


def cost(redact: Redact, texts: dict[str, dict[str, str]], repeat: int) -> dict:
    items = [(rel, t) for files in texts.values() for rel, t in files.items()]
    mb = sum(len(t.encode("utf-8")) for _, t in items) / 1e6
    runs = []
    for _ in range(repeat):
        started = time.perf_counter()
        for rel, text in items:
            redact(text, rel)
        runs.append((time.perf_counter() - started) * 1000)
    return {"mb": round(mb, 2), "runs_ms": [round(r) for r in runs], "median_ms_per_mb": round(statistics.median(runs) / mb, 1)}


def loadavg() -> str:
    try:
        return Path("/proc/loadavg").read_text().split(" ", 3)[:3].__str__()
    except OSError:
        return "n/a"


def measure(redact: Redact, texts: dict[str, dict[str, str]], corpus: dict[str, list[tuple[str, str, str]]], repeat: int) -> dict:
    redact("warm up: import, load and compile", "x.py")
    out: dict = {"recall": {part: recall(redact, items) for part, items in corpus.items()}}
    out["false_positives"] = false_positives(redact, texts)
    out["cost"] = cost(redact, texts, repeat)
    return out


def _summary(label: str, result: dict) -> list[str]:
    lines = [f"== {label}"]
    for part, r in result["recall"].items():
        lines.append(f"recall {part:10} {r['masked']:4}/{r['samples']:<4} = {r['recall']:.3f}   shapes fully masked {r['shapes_fully_masked']}/{r['shapes']}")
    for name, r in result["false_positives"].items():
        lines.append(f"masks  {name:16} {r['masks']:4} in {r['lines']:7} lines = {r['per_10k_lines']:6.2f} per 10k lines  {r['kinds']}")
    c = result["cost"]
    lines.append(f"cost   {c['median_ms_per_mb']} ms per MB (median of {len(c['runs_ms'])} runs over {c['mb']} MB: {c['runs_ms']})")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline", help="a git revision whose paqad/redaction.py is measured too (before/after)")
    ap.add_argument("--corpora", nargs="+", default=["requests", "flask", "cobra", "rxjs"])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--per-rule", type=int, default=3)
    args = ap.parse_args()
    texts = corpus_texts(args.corpora)
    corpus = {"gitleaks": gitleaks_corpus(args.per_rule), "generic": generic_corpus(), "finding9": finding9_corpus()}
    started = {"loadavg_before": loadavg(), "cpus": __import__("os").cpu_count(), "python": sys.version.split()[0], "rules": len(redaction_rules.ruleset().rules)}
    results = {"machine": started, "current": measure(current, texts, corpus, args.repeat)}
    if args.baseline:
        results[f"baseline {args.baseline}"] = measure(baseline(args.baseline), texts, corpus, args.repeat)
    results["machine"]["loadavg_after"] = loadavg()
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"results-{time.strftime('%Y%m%d-%H%M%S')}.json"
    path.write_text(json.dumps(results, indent=1))
    for label in [k for k in results if k != "machine"]:
        print("\n".join(_summary(label, results[label])))
    print(f"machine {results['machine']}\nfull results (every masked line, every miss): {path.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
