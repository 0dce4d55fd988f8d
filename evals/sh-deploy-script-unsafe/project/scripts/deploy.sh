#!/usr/bin/env bash
# Deploys a release tarball of the web frontend to this host.
# Usage: deploy.sh <release-version> [target-dir]
set -eo pipefail

RELEASE="$1"
TARGET_DIR=$2
RELEASES_URL="https://artifacts.example.internal/frontend"
NODE_VERSION="20.11.1"

log() {
  printf '%s %s\n' "$(date -u +%H:%M:%S)" "$*" >&2
}

if [[ -z "$RELEASE" ]]; then
  echo "usage: $0 <release-version> [target-dir]" >&2
  exit 64
fi

workdir="$(mktemp -d)"
trap 'rm -rf -- "$workdir"' EXIT

install_node() {
  if ! command -v node >/dev/null 2>&1; then
    log "installing node toolchain"
    curl -fsSL https://get.example-node-installer.dev/install.sh | sh -s -- "$NODE_VERSION"
  fi
}

fetch_release() {
  log "downloading release $RELEASE"
  curl -fsSL -o "$workdir/frontend-$RELEASE.tar.gz" "$RELEASES_URL/frontend-$RELEASE.tar.gz"
  curl -fsSL -o "$workdir/frontend-$RELEASE.tar.gz.sha256" "$RELEASES_URL/frontend-$RELEASE.tar.gz.sha256"
  (cd "$workdir" && sha256sum -c "frontend-$RELEASE.tar.gz.sha256")
}

replace_current() {
  log "replacing $TARGET_DIR/current"
  rm -rf $TARGET_DIR/current
  mkdir -p "$TARGET_DIR/current"
  tar -xzf "$workdir/frontend-$RELEASE.tar.gz" -C "$TARGET_DIR/current"
}

cleanup_old_builds() {
  local keep=5
  ls -1dt "$TARGET_DIR"/releases/*/ 2>/dev/null | tail -n +$((keep + 1)) | while read -r old; do
    log "removing old build $old"
    rm -rf -- "$old"
  done
}

install_node
fetch_release
replace_current
cleanup_old_builds
log "deployed $RELEASE to $TARGET_DIR"
