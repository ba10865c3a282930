#!/usr/bin/env bash
# `make image`: both targets of the Dockerfile, with the first of docker (when its daemon answers), podman
# and buildah that is present:
#
#   hydroseq-forecast:VERSION   --target forecast   the daily forecast job on a CPU, no torch
#   hydroseq:VERSION            --target train      every command, training on a GPU
#
# usage: images/build.sh [registry|local] [all|forecast|train]
#   registry  the Dockerfile's base images (python:3.11-slim-bookworm, pytorch/pytorch:2.13.0-cuda...)
#   local     stand-ins made from Debian's packages (images/stand_in_bases.sh): Debian bookworm's CPython 3.11,
#             and the same with the CPU build of torch 2.13.0 for the train target (no CUDA)
#   all       both targets (the default); forecast or train: that one alone (`forecast` with `local` makes
#             no torch stand-in)
#
# Environment: CONTAINER_TOOL (docker, podman or buildah: use that one), BUILD_OPTS (extra build options),
# HYDROSEQ_IMAGE_STORAGE and HYDROSEQ_IMAGE_STORAGE_DRIVER (podman and buildah: the store to build in and
# its driver, images/storage.sh: buildah builds on the driver podman runs on),
# CA_CERTS (podman and buildah: the host's certificate folder, mounted read-only over the build's
# /etc/ssl/certs so that pip trusts what the host trusts, e.g. a TLS-intercepting proxy; default
# /etc/ssl/certs where it holds ca-certificates.crt; "none": no mount), IMAGE_TIMES (a file: one line
# "IMAGE SECONDS" a build is appended to it).
# podman and buildah build with --isolation chroot (no OCI runtime needed for RUN, so it also builds inside
# a VM or a CI container whose cgroups the runtime refuses); docker with its own defaults.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

BASE=${1:-registry}
TARGETS=${2:-all}
if [[ ! $BASE =~ ^(registry|local)$ || ! $TARGETS =~ ^(all|forecast|train)$ ]]; then
    echo "usage: images/build.sh [registry|local] [all|forecast|train]" >&2
    exit 2
fi
VERSION=$(sed -n 's/^version = "\(.*\)"$/\1/p' pyproject.toml)

TOOL=${CONTAINER_TOOL:-}
if [[ -z $TOOL ]]; then
    if command -v docker >/dev/null && docker info >/dev/null 2>&1; then TOOL=docker
    elif command -v podman >/dev/null; then TOOL=podman
    elif command -v buildah >/dev/null; then TOOL=buildah
    else
        echo "images/build.sh: none of docker (with a running daemon), podman or buildah is installed" >&2
        exit 3
    fi
fi

read -r -a opts <<<"${BUILD_OPTS:-}"
storage=()  # podman and buildah: one store with one driver (images/storage.sh)
lines=$(bash images/storage.sh "$TOOL")
if [[ -n $lines ]]; then mapfile -t storage <<<"$lines"; fi
if [[ $TOOL != docker ]]; then
    opts=(--layers --isolation chroot "${opts[@]}")
    certs=${CA_CERTS:-/etc/ssl/certs}
    if [[ $certs != none && -f $certs/ca-certificates.crt ]]; then
        opts+=(-v "$certs:/etc/ssl/certs:ro")
    fi
fi

args=()
if [[ $BASE == local ]]; then
    # the stand-ins are built with the same options (the torch wheel's dependencies come through pip)
    bases=$(BUILD_OPTS="${opts[*]}" bash images/stand_in_bases.sh "$TOOL" "$TARGETS")
    while read -r line; do args+=(--build-arg "$line"); done <<<"$bases"
fi

build() {  # build TARGET NAME
    local start=$SECONDS
    echo "images/build.sh: $TOOL building $2 (--target $1${args[*]:+, ${args[*]}})" >&2
    case $TOOL in
        docker) docker build "${opts[@]}" "${args[@]}" --target "$1" -t "$2" . ;;
        podman) podman "${storage[@]}" build "${opts[@]}" "${args[@]}" --target "$1" -t "$2" . ;;
        buildah) buildah "${storage[@]}" bud "${opts[@]}" "${args[@]}" --target "$1" -t "$2" . ;;
    esac
    local seconds=$((SECONDS - start)) size
    size=$("$TOOL" "${storage[@]}" images --format '{{.Size}}' "$2" | head -n 1)
    echo "images/build.sh: $2 built in $seconds s, $size ($TOOL)" >&2
    if [[ -n ${IMAGE_TIMES:-} ]]; then echo "$2 $seconds" >>"$IMAGE_TIMES"; fi
}

if [[ $TARGETS != train ]]; then build forecast "hydroseq-forecast:$VERSION"; fi
if [[ $TARGETS != forecast ]]; then build train "hydroseq:$VERSION"; fi
