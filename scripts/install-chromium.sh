#!/bin/sh
# Install Debian's headless-capable Chromium for the HTML report's browser test
# (see scripts/install-debian.sh; --check only says whether it is there).
exec "$(dirname "$0")/install-debian.sh" "$@" chromium:/usr/bin/chromium
