#!/usr/bin/env bash
# Stand-ins for the Dockerfile's two base images, made from Debian's packages, for a machine that cannot
# pull them from a registry (`make image BASE=local`):
#
#   python  Debian bookworm (minbase) with its CPython 3.11, pip and venv: for python:3.11-slim-bookworm,
#           the forecast target's base (pip installs as root into /usr/local, as there)
#   torch   the same plus the CPU build of torch 2.13.0: for pytorch/pytorch:2.13.0-cuda...-runtime, the
#           train target's base. It has no CUDA: the GPU image itself cannot be built or tested without it.
#
# usage: images/stand_in_bases.sh docker|podman|buildah [all|forecast|train]
# Prints FORECAST_BASE_IMAGE=NAME and BASE_IMAGE=NAME (the Dockerfile's build arguments); with `forecast`
# only the first, and no torch stand-in is made. podman and buildah use the store images/storage.sh names.
# Both images are tagged with the first 12 hex digits of this file's SHA-256: a changed recipe makes new ones. The root
# filesystem (a tarball made by mmdebstrap, about 200 MB) and the torch wheel are cached under
# ${HYDROSEQ_IMAGE_CACHE:-~/.cache/hydroseq-images}, so that a tool whose storage was emptied rebuilds the
# images in seconds, without Debian's mirror.
#
# The torch wheel: `pip download torch==2.13.0` on the host, with the host's pip configuration (a wheel
# directory or index it names: a CPU wheel found there wins, its local version +cpu sorting after 2.13.0);
# when that gives the CUDA build of PyPI, it is fetched again from TORCH_INDEX_URL (PyTorch's CPU index by
# default). The wheel is bind-mounted into the build (RUN --mount), so it adds no layer of its own; torch's
# few pure-Python dependencies come from the index pip uses in the build.
#
# Environment: DEBIAN_MIRROR (default http://deb.debian.org/debian), HYDROSEQ_IMAGE_CACHE, TORCH_INDEX_URL,
# BUILD_OPTS (extra options for the build, as images/build.sh passes them).
set -euo pipefail

TOOL=${1:?usage: images/stand_in_bases.sh docker|podman|buildah [all|forecast|train]}
TARGETS=${2:-all}
KEY=$(sha256sum "${BASH_SOURCE[0]}" | cut -c1-12)
CACHE=${HYDROSEQ_IMAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hydroseq-images}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
TORCH=torch==2.13.0
TORCH_INDEX_URL=${TORCH_INDEX_URL:-https://download.pytorch.org/whl/cpu}
PYTHON_IMAGE=hydroseq-stand-in:python3.11-bookworm-$KEY
TORCH_IMAGE=hydroseq-stand-in:torch2.13.0-cpu-$KEY
read -r -a build_opts <<<"${BUILD_OPTS:-}"
storage=()
lines=$(bash "$(dirname "${BASH_SOURCE[0]}")/storage.sh" "$TOOL")
if [[ -n $lines ]]; then mapfile -t storage <<<"$lines"; fi

log() { printf 'stand_in_bases: %s\n' "$*" >&2; }

exists() {
    case $TOOL in
        docker) docker image inspect "$1" >/dev/null 2>&1 ;;
        podman) podman "${storage[@]}" image exists "$1" ;;
        buildah) buildah "${storage[@]}" inspect --type image "$1" >/dev/null 2>&1 ;;
        *) log "unknown tool $TOOL"; exit 2 ;;
    esac
}

build() {  # build NAME CONTEXT: the Containerfile on stdin
    local name=$1 context=$2
    case $TOOL in
        docker) docker build -q "${build_opts[@]}" -t "$name" -f - "$context" >/dev/null ;;
        podman) podman "${storage[@]}" build -q --layers "${build_opts[@]}" -t "$name" -f - "$context" >/dev/null ;;
        buildah) buildah "${storage[@]}" bud -q --layers "${build_opts[@]}" -t "$name" -f - "$context" >/dev/null ;;
    esac
}

mkdir -p "$CACHE"
exec 9>"$CACHE/.lock"  # one maker at a time (two test workers, two make runs)
flock 9

rootfs=$CACHE/bookworm-python3.11-$KEY
if ! exists "$PYTHON_IMAGE"; then
    if [[ ! -f $rootfs/rootfs.tar ]]; then
        command -v mmdebstrap >/dev/null || { log "mmdebstrap is missing: apt-get install mmdebstrap"; exit 3; }
        log "making the Debian bookworm root filesystem with mmdebstrap (about 1.5 min) from $MIRROR"
        mkdir -p "$rootfs"
        start=$SECONDS
        # docs, man pages and translations left out as in the slim images; Debian's marker that keeps pip
        # from installing outside a venv (PEP 668) removed: python:3.11-slim has none either
        # shellcheck disable=SC2016  # mmdebstrap expands "$1" (the root) in its hooks
        mmdebstrap --quiet --format=tar --variant=minbase --include=python3,python3-pip,python3-venv,passwd,ca-certificates \
            --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
            --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-include=/usr/share/locale/locale.alias' \
            --customize-hook='rm -f "$1"/usr/lib/python3.11/EXTERNALLY-MANAGED; ln -sf python3 "$1"/usr/bin/python' \
            bookworm "$rootfs/rootfs.tar.part" "$MIRROR"
        mv "$rootfs/rootfs.tar.part" "$rootfs/rootfs.tar"
        log "root filesystem made in $((SECONDS - start)) s"
    fi
    start=$SECONDS
    build "$PYTHON_IMAGE" "$rootfs" <<'EOF'
FROM scratch
ADD rootfs.tar /
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    LANG=C.UTF-8
CMD ["python3"]
EOF
    log "imported $PYTHON_IMAGE in $((SECONDS - start)) s"
fi

wheels=$CACHE/torch2.13.0-cpu-$KEY
if [[ $TARGETS != forecast ]] && ! exists "$TORCH_IMAGE"; then
    start=$SECONDS
    if ! compgen -G "$wheels/torch-*+cpu-*.whl" >/dev/null; then
        python3 -m pip --version >/dev/null 2>&1 || { log "python3 has no pip to fetch the torch wheel with"; exit 3; }
        rm -rf "$wheels.part" && mkdir -p "$wheels.part"
        target=(--no-deps --only-binary=:all: --platform manylinux_2_28_x86_64 --python-version 3.11
                --implementation cp --abi cp311 --dest "$wheels.part")
        python3 -m pip download --quiet "${target[@]}" "$TORCH" || true
        if ! compgen -G "$wheels.part/torch-*+cpu-*.whl" >/dev/null; then
            log "the host's pip configuration gives no CPU build of $TORCH: fetching it from $TORCH_INDEX_URL"
            rm -f "$wheels.part"/torch-*.whl
            python3 -m pip download --quiet "${target[@]}" --index-url "$TORCH_INDEX_URL" "$TORCH"
        fi
        rm -rf "$wheels" && mv "$wheels.part" "$wheels"
    fi
    build "$TORCH_IMAGE" "$wheels" <<EOF
FROM $PYTHON_IMAGE
RUN --mount=type=bind,source=.,target=/tmp/wheels \\
    pip install --no-cache-dir --disable-pip-version-check /tmp/wheels/torch-*.whl
EOF
    log "built $TORCH_IMAGE in $((SECONDS - start)) s (wheel and build) from $(basename "$wheels"/torch-*.whl)"
fi

echo "FORECAST_BASE_IMAGE=$PYTHON_IMAGE"
if [[ $TARGETS != forecast ]]; then echo "BASE_IMAGE=$TORCH_IMAGE"; fi
