"""What ``pip install <checkout>`` costs: site-packages size and distribution count in a fresh venv.

Creates a throw-away venv (``python -m venv``, no system site-packages), installs the checkout
into it (no extras, no cache), then reports the size of its site-packages in MB (10^6 bytes,
counted by file size, pip and setuptools excluded as the venv's own) and how many distributions
were installed besides pip/setuptools. The README's figures come from here (section
"Dependencies"):

    python -m benchmarks install_size            # this checkout
    python -m benchmarks install_size --json     # machine-readable
    python -m benchmarks install_size --src DIR  # another checkout (an older commit, say)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: What ``python -m venv`` brings itself; not part of paqad's install.
VENV_OWN = {"pip", "setuptools", "wheel"}


def site_packages(venv: Path) -> Path:
    out = subprocess.run([str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], capture_output=True, text=True, check=True)
    return Path(out.stdout.strip())


def distributions(venv: Path) -> list[dict[str, str]]:
    out = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "list", "--format", "json"], capture_output=True, text=True, check=True)
    return [d for d in json.loads(out.stdout) if d["name"].lower() not in VENV_OWN]


def tree_bytes(path: Path, skip: set[str]) -> int:
    total = 0
    for entry in path.iterdir():
        name = entry.name.lower()
        if any(name == s or name.startswith(f"{s}-") or name.startswith(f"_{s}") for s in skip):
            continue
        if entry.is_symlink() or entry.is_file():
            total += entry.lstat().st_size
        elif entry.is_dir():
            total += sum(p.lstat().st_size for p in entry.rglob("*") if p.is_file() or p.is_symlink())
    return total


def measure(src: Path, python: str = sys.executable) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="paqad-install-size-") as tmp:
        venv = Path(tmp) / "venv"
        subprocess.run([python, "-m", "venv", str(venv)], check=True)
        env = {**os.environ, "PIP_NO_CACHE_DIR": "1"}
        # A non-editable install from a copy pip builds itself: what a user's `pip install .` gets.
        subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", str(src)], check=True, env=env)
        dists = distributions(venv)
        size = tree_bytes(site_packages(venv), VENV_OWN | {"distutils-precedence.pth", "pkg_resources"})
        version = subprocess.run([str(venv / "bin" / "python"), "-c", "import sys; print(sys.version.split()[0])"], capture_output=True, text=True, check=True).stdout.strip()
    return {"python": version, "mb": round(size / 1e6), "bytes": size, "distributions": len(dists), "names": sorted(d["name"].lower() for d in dists)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--src", type=Path, default=ROOT, help="the checkout to install (default: this one)")
    ap.add_argument("--python", default=sys.executable, help="the interpreter that creates the venv")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    result = measure(args.src.resolve(), args.python)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"pip install {args.src}: {result['mb']} MB of site-packages, {result['distributions']} distributions (Python {result['python']})")
        print("  " + ", ".join(result["names"]))  # type: ignore[arg-type]
    return 0


if __name__ == "__main__":
    sys.exit(main())
