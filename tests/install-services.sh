#!/usr/bin/env bash
# What the test suite needs besides Python packages, from the machine's registries:
# - a PostgreSQL server (Debian's `postgresql`) for tests/shared_store_test.py, which starts its own
#   cluster on a Unix socket in a temporary folder (no system service is used or started);
# - the agent-host CLIs from npm at pinned versions (tests/hosts-e2e/install.sh).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo -n"
    echo "install-services: installing Debian's postgresql (tests/shared_store_test.py)" >&2
    $sudo apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends postgresql >&2
fi
bash "$here/hosts-e2e/install.sh"
