# hydroseq images, two targets of one file:
#
#   docker build -t hydroseq:0.1.0 .                                     training on GPU and every command
#   docker build --target forecast -t hydroseq-forecast:0.1.0 .         the daily CPU forecast job (CronJob)
#
# train (the default, last stage): the official CUDA-enabled PyTorch runtime image whose torch is the
# version the project pins (torch==2.13.0). The install repeats the Makefile's steps: torch first,
# pinned, then the project with its train extra. pip sees the base image's CUDA build (2.13.0+cuXYZ)
# as satisfying ==2.13.0 and keeps it.
# forecast: a slim CPython image with hydroseq[forecast] only (onnxruntime and mlflow-skinny, no torch): the
# ingest --append, forecast and publish steps of pipelines/daily_forecast.sh from an exported model, or from
# a registered model (HYDROSEQ_MODEL=models:/NAME@champion) on an MLflow tracking server (MLFLOW_TRACKING_URI=http://...).
# Both have the same layout, user and volumes, so one set of volume claims serves either.
ARG BASE_IMAGE=pytorch/pytorch:2.13.0-cuda12.8-cudnn9-runtime
ARG FORECAST_BASE_IMAGE=python:3.11-slim-bookworm

FROM ${FORECAST_BASE_IMAGE} AS forecast

ENV MLFLOW_DISABLE_TELEMETRY=true \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

# The code lives in /opt/hydroseq (read-only for the service user); work happens in /srv/hydroseq,
# where the configs' relative paths (data/..., runs/..., mlruns.db) resolve.
WORKDIR /opt/hydroseq
# The dependencies first, from pyproject.toml alone (an empty package stands in for the code): a layer that a
# change of the code leaves cached. Then the package itself, without its dependencies.
COPY pyproject.toml ./
RUN mkdir hydroseq && touch README.md LICENSE hydroseq/__init__.py \
    && pip install --no-cache-dir "./.[forecast]" \
    && pip uninstall --yes hydroseq \
    && rm -rf hydroseq README.md LICENSE build hydroseq.egg-info
COPY README.md LICENSE ./
COPY hydroseq ./hydroseq
RUN pip install --no-cache-dir --no-deps . && rm -rf build hydroseq.egg-info

RUN groupadd --gid 10001 hydroseq \
    && useradd --create-home --uid 10001 --gid 10001 --shell /usr/sbin/nologin hydroseq \
    && mkdir -p /srv/hydroseq/data /srv/hydroseq/mlflow /srv/hydroseq/runs /srv/hydroseq/forecasts \
    && chown -R 10001:10001 /srv/hydroseq

COPY --chown=10001:10001 configs /srv/hydroseq/configs
COPY --chown=10001:10001 pipelines /srv/hydroseq/pipelines
# the shipped regional base model: HYDROSEQ_MODEL=models/caravan-camels-us-daily forecasts with it
COPY --chown=10001:10001 models /srv/hydroseq/models

WORKDIR /srv/hydroseq
VOLUME ["/srv/hydroseq/data", "/srv/hydroseq/mlflow", "/srv/hydroseq/runs", "/srv/hydroseq/forecasts"]
ENV HYDROSEQ_HOME=/srv/hydroseq/mlflow \
    MLFLOW_TRACKING_URI=sqlite:////srv/hydroseq/mlflow/mlruns.db \
    HYDROSEQ_ARTIFACT_ROOT=/srv/hydroseq/mlflow/mlartifacts \
    XDG_CACHE_HOME=/srv/hydroseq/runs/.cache \
    MPLCONFIGDIR=/srv/hydroseq/runs/.cache/matplotlib

USER 10001:10001
ENTRYPOINT ["hydroseq"]
CMD ["--help"]


FROM ${BASE_IMAGE} AS train

ENV MLFLOW_DISABLE_TELEMETRY=true \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /opt/hydroseq
COPY pyproject.toml ./
RUN mkdir hydroseq && touch README.md LICENSE hydroseq/__init__.py \
    && pip install --no-cache-dir torch==2.13.0 \
    && pip install --no-cache-dir "./.[train]" \
    && pip uninstall --yes hydroseq \
    && rm -rf hydroseq README.md LICENSE build hydroseq.egg-info
COPY README.md LICENSE ./
COPY hydroseq ./hydroseq
RUN pip install --no-cache-dir --no-deps . && rm -rf build hydroseq.egg-info

RUN groupadd --gid 10001 hydroseq \
    && useradd --create-home --uid 10001 --gid 10001 --shell /usr/sbin/nologin hydroseq \
    && mkdir -p /srv/hydroseq/data /srv/hydroseq/mlflow /srv/hydroseq/runs /srv/hydroseq/forecasts \
    && chown -R 10001:10001 /srv/hydroseq

COPY --chown=10001:10001 configs /srv/hydroseq/configs
COPY --chown=10001:10001 pipelines /srv/hydroseq/pipelines
COPY --chown=10001:10001 models /srv/hydroseq/models

WORKDIR /srv/hydroseq
# Everything a run writes is on a volume (tests/pipelines/test_container.py checks it): data: ingested
# NetCDF files and raw sources; mlflow: HYDROSEQ_HOME, the tracking store (mlruns.db) and the artifacts
# (mlartifacts/: checkpoints and logged models that `export --run` and `evaluate` read); runs:
# checkpoints, the sample-index cache and exported models; forecasts: the published forecast files.
VOLUME ["/srv/hydroseq/data", "/srv/hydroseq/mlflow", "/srv/hydroseq/runs", "/srv/hydroseq/forecasts"]
# The store and the artifact root are set outright, so they win over any config's tracking section. The
# caches of the libraries (matplotlib's font list, onnxruntime's) go to the runs volume: the root filesystem
# may be read-only (docker run --read-only), and matplotlib stops without a writable folder.
ENV HYDROSEQ_HOME=/srv/hydroseq/mlflow \
    MLFLOW_TRACKING_URI=sqlite:////srv/hydroseq/mlflow/mlruns.db \
    HYDROSEQ_ARTIFACT_ROOT=/srv/hydroseq/mlflow/mlartifacts \
    XDG_CACHE_HOME=/srv/hydroseq/runs/.cache \
    MPLCONFIGDIR=/srv/hydroseq/runs/.cache/matplotlib

# A numeric user id, so that volume permissions resolve the same on every host.
USER 10001:10001
ENTRYPOINT ["hydroseq"]
CMD ["--help"]
