#!/bin/sh
# Install Debian's redis-server for the tests of the peer channel and the shared
# rate limit over Redis (see scripts/install-debian.sh; --check only says whether it is there).
# The package's service is not used: each test starts its own server on a free loopback port.
exec "$(dirname "$0")/install-debian.sh" "$@" redis-server:/usr/bin/redis-server
