#!/usr/bin/env bash
# Install the agent-host CLIs that tests/hosts_e2e_test.py drives (Claude Code, Codex, Gemini CLI,
# GitHub Copilot CLI, Qwen Code, Cline CLI, OpenCode, Factory Droid) at the versions pinned in
# package-lock.json,
# into a per-user cache folder keyed by the lockfile's hash: a second run with the same lockfile
# reuses it (about 2.3 GB and 1.5 to 5 minutes saved), a changed lockfile gets a fresh folder.
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
    touch "$dest/.installed"  # last used: what the clean-up below goes by
    echo "$dest"
    exit 0
fi
command -v npm >/dev/null || { echo "hosts-e2e: npm not found (Debian: apt-get install nodejs npm)" >&2; exit 1; }
mkdir -p "$base"
work="$(mktemp -d "$base/.install-XXXXXX")"
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"  # mktemp makes it private; the install is an ordinary cache folder
cp "$here/package.json" "$here/package-lock.json" "$work/"
# `npm install` on the lockfile, not `npm ci`: every locked package is installed at its locked
# version, but some optional platform packages that the CLIs name are not on the registry at all
# (@factory/cli-*@0.225.1, @teddyzhu/clipboard-* for other platforms: E404), so they cannot be in
# the lockfile, and `npm ci` refuses a lockfile without them ("Missing: ... from lock file").
(cd "$work" && npm install --no-audit --no-fund --loglevel=error >&2)
touch "$work/.installed"
if [ -f "$dest/.installed" ]; then
    :  # another run finished the same install meanwhile: keep that one (it may be in use)
else
    rm -rf "$dest"
    mv "$work" "$dest"
    trap - EXIT
fi
# Installs of other lockfiles unused for 30 days are removed: one copy is a gigabyte.
find "$base" -mindepth 2 -maxdepth 2 -name .installed -mtime +30 -printf '%h\n' | while read -r old; do
    [ "$old" = "$dest" ] || rm -rf "$old"
done
echo "$dest"
