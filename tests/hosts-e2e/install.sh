#!/usr/bin/env bash
# Install the four agent-host CLIs that tests/hosts_e2e_test.py drives (Claude Code, Codex,
# Gemini CLI, GitHub Copilot CLI) at the versions pinned in package-lock.json, with `npm ci`,
# into a per-user cache folder keyed by the lockfile's hash: a second run with the same lockfile
# reuses it (about 1 GB and 3 minutes saved), a changed lockfile gets a fresh folder.
#
#   bash tests/hosts-e2e/install.sh      # prints the folder whose node_modules/.bin holds the CLIs
#
# The folder is $PAQAD_HOSTS_E2E_CACHE/<hash>, default ${XDG_CACHE_HOME:-~/.cache}/paqad/hosts-e2e/<hash>;
# the tests compute the same path (tests/testing/host_clis.py), so nothing has to be exported.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
base="${PAQAD_HOSTS_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/paqad/hosts-e2e}"
hash="$(sha256sum "$here/package-lock.json" | cut -c1-16)"
dest="$base/$hash"
if [ -f "$dest/.installed" ]; then
    echo "$dest"
    exit 0
fi
command -v npm >/dev/null || { echo "hosts-e2e: npm not found (Debian: apt-get install nodejs npm)" >&2; exit 1; }
mkdir -p "$base"
work="$(mktemp -d "$base/.install-XXXXXX")"
trap 'rm -rf "$work"' EXIT
cp "$here/package.json" "$here/package-lock.json" "$work/"
(cd "$work" && npm ci --no-audit --no-fund --loglevel=error >&2)
touch "$work/.installed"
rm -rf "$dest"
mv "$work" "$dest"
trap - EXIT
# Older installs (other lockfile hashes) are removed: one copy is a gigabyte.
for old in "$base"/*/; do
    [ "${old%/}" = "$dest" ] || rm -rf "${old%/}"
done
echo "$dest"
