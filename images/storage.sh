#!/usr/bin/env bash
# The container storage that images/build.sh builds in and the image tests (tests/images) run from, printed
# as global options of podman or buildah, one a line, so that both tools use one store with one driver:
#
#   HYDROSEQ_IMAGE_STORAGE         a folder: the store (graph root) DIR/storage, its run root (locks, mounts)
#                                  /tmp/hydroseq-run-HASH of DIR (unset: the engine's default store)
#   HYDROSEQ_IMAGE_STORAGE_DRIVER  overlay, vfs, ...: the storage driver, given to both tools (unset: podman
#                                  keeps its own, and buildah is given the one podman reports for the store)
#
# Why: podman records a store's driver in its database when it first uses the store and from then on
# follows the database, not storage.conf; buildah has no database and follows storage.conf. Where the two
# differ (podman's database says vfs, buildah builds on overlay), an image buildah built is not in the
# store podman runs from ('short-name "hydroseq:0.1.0" did not resolve ...'). podman is not given a driver
# unless one is set: a --storage-driver that its database does not record, an empty record included, stops
# it with "database configuration mismatch"; set HYDROSEQ_IMAGE_STORAGE_DRIVER with a store of its own.
# Check a host with
#   podman info --format '{{.Store.GraphDriverName}}'    and    buildah info --format '{{.store.GraphDriverName}}'
#
# usage: images/storage.sh docker|podman|buildah   (docker: prints nothing, its daemon keeps one store)
set -euo pipefail

TOOL=${1:?usage: images/storage.sh docker|podman|buildah}
[[ $TOOL == docker ]] && exit 0

opts=()
if [[ -n ${HYDROSEQ_IMAGE_STORAGE:-} ]]; then
    mkdir -p "$HYDROSEQ_IMAGE_STORAGE/storage"
    root=$(cd "$HYDROSEQ_IMAGE_STORAGE" && pwd)
    run=/tmp/hydroseq-run-$(printf '%s' "$root" | sha256sum | cut -c1-12)  # podman takes at most 50 characters
    opts+=(--root "$root/storage" --runroot "$run")
fi

driver=${HYDROSEQ_IMAGE_STORAGE_DRIVER:-}
if [[ -z $driver && $TOOL == buildah ]] && command -v podman >/dev/null; then
    driver=$(podman "${opts[@]}" info --format '{{.Store.GraphDriverName}}')  # the driver podman runs on
    [[ -n $driver ]] || { echo "images/storage.sh: podman reports no storage driver" >&2; exit 3; }
fi
if [[ -n $driver ]]; then opts+=(--storage-driver "$driver"); fi
if [[ ${#opts[@]} -gt 0 ]]; then printf '%s\n' "${opts[@]}"; fi
