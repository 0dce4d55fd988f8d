#!/bin/sh
# Install Debian packages the test suite uses for real: Chromium (the HTML
# report's browser test) and redis-server (the peer channel and the shared
# rate limit over Redis).
#
#   scripts/install-debian.sh PACKAGE:PATH ...           install each PACKAGE whose PATH is missing
#   scripts/install-debian.sh --check PACKAGE:PATH ...   only say what is there, or why it could not be installed
#
# Does nothing for a package whose PATH is already there; one apt-get update
# and one apt-get install for the rest. Non-interactive and quiet; when it
# cannot install (not root, no apt-get, no network) it says why and exits 0,
# and the tests that need the program skip with that reason.
set -u

CHECK=0
if [ "${1:-}" = "--check" ]; then
    CHECK=1
    shift
fi

missing=""
for pair in "$@"; do
    package=${pair%%:*}
    path=${pair#*:}
    if [ -x "$path" ]; then
        echo "install-debian: $package is already installed ($path)"
    else
        missing="$missing $package"
    fi
done
[ -z "$missing" ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-debian: apt-get not found (not a Debian-like system); install$missing by hand to run the tests that need them"
    exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        SUDO="sudo -n"
    else
        echo "install-debian: not root and no password-less sudo; run as root to install$missing"
        exit 0
    fi
fi
if [ "$CHECK" -eq 1 ]; then
    echo "install-debian: missing:$missing; run scripts/install-debian.sh${SUDO:+ (with sudo)} to install them"
    exit 0
fi

export DEBIAN_FRONTEND=noninteractive
# One line up front, before anything is downloaded: what, how and why.
echo "install-debian: installing$missing with ${SUDO:+sudo }apt-get (the suite runs the HTML report in a real browser and the peer channel on a real Redis; this takes a minute once)"
start=$(date +%s)
if ! $SUDO apt-get update -qq >/dev/null 2>&1; then
    echo "install-debian: apt-get update failed (no network or no package sources?);$missing not installed"
    exit 0
fi
# shellcheck disable=SC2086 # one word per package
if ! $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null 2>&1; then
    echo "install-debian: apt-get install$missing failed"
    exit 0
fi
echo "install-debian: installed$missing in $(($(date +%s) - start)) s"
exit 0
