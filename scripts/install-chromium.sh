#!/bin/sh
# Install Debian's headless-capable Chromium for the HTML report's browser test.
#
# Does nothing when /usr/bin/chromium is already there. Non-interactive and
# quiet; when it cannot install (not root, no apt-get, no network), it says
# why and exits 0, and the browser part of tests/test_html_report.py skips
# with that reason (the HTML structure tests always run).
#
#   scripts/install-chromium.sh           install it (when missing)
#   scripts/install-chromium.sh --check   only say whether it is there, or why it could not be installed
set -u

CHROMIUM=/usr/bin/chromium
CHECK=0
[ "${1:-}" = "--check" ] && CHECK=1

if [ -x "$CHROMIUM" ]; then
    echo "install-chromium: $CHROMIUM is already installed ($("$CHROMIUM" --version 2>/dev/null || echo 'version unknown'))"
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-chromium: apt-get not found (not a Debian-like system); install Chromium by hand to run the browser test"
    exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        SUDO="sudo -n"
    else
        echo "install-chromium: not root and no password-less sudo; run as root to install chromium"
        exit 0
    fi
fi

if [ "$CHECK" -eq 1 ]; then
    echo "install-chromium: $CHROMIUM is missing; run scripts/install-chromium.sh${SUDO:+ (with sudo)} to install Debian's chromium"
    exit 0
fi

export DEBIAN_FRONTEND=noninteractive
start=$(date +%s)
if ! $SUDO apt-get update -qq >/dev/null 2>&1; then
    echo "install-chromium: apt-get update failed (no network or no package sources?); chromium not installed"
    exit 0
fi
if ! $SUDO apt-get install -y -qq --no-install-recommends chromium >/dev/null 2>&1; then
    echo "install-chromium: apt-get install chromium failed; chromium not installed"
    exit 0
fi
end=$(date +%s)
if [ -x "$CHROMIUM" ]; then
    echo "install-chromium: installed $("$CHROMIUM" --version 2>/dev/null || echo chromium) in $((end - start)) s"
else
    echo "install-chromium: apt-get finished but $CHROMIUM is missing"
fi
exit 0
