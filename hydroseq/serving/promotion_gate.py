"""The promotion gate: a candidate version's skill beside the champion's and persistence's, on one evaluation.

A version's figures are the median over stations of the NSE at each lead, of the model and of
persistence on the same steps. They come from one of two evaluations:

* ``validation`` (the default): the metrics the version's run logged for its validation period
  (``validation_model_lead<k>_median_nse``, ``validation_persistence_lead<k>_median_nse``: ``hydroseq train``
  logs them, ``hydroseq evaluate --run ID --period validation`` logs them again). Two versions are
  compared only when their runs name the same validation period and the same stations.
* a hindcast per version (:func:`hindcast_figures`): the file ``hydroseq forecast --model models:/NAME/N
  --issue-time A..B`` wrote, read with its ``_scores.csv``. The file must come from the version's run
  (its ``model_run_id``), and the two hindcasts must cover the same issue times and stations.

:func:`judge` compares them: the candidate is refused when its median NSE is lower than the champion's, or
than persistence's, at any lead.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from mlflow.entities.model_registry import ModelVersion
from mlflow.tracking import MlflowClient

from hydroseq.errors import ConfigError
from hydroseq.serving.stores import store_error

VALIDATION_MODEL_KEY = re.compile(r"^validation_model_lead(\d+)_median_nse$")
VALIDATION_PERSISTENCE_KEY = "validation_persistence_lead{lead}_median_nse"
VALIDATION_PERIOD_PARAMS = ("data.splits.validation.start", "data.splits.validation.end")
STATIONS_PARAM = "data.stations"


class GateError(ConfigError):
    """The gate cannot judge: figures missing, or the two versions not scored on the same evaluation.
    ``--force`` promotes all the same (the move records this message)."""


@dataclass(frozen=True)
class Figures:
    """One version's median NSE over stations per lead on one evaluation, and persistence's on the same steps.

    ``scope`` is what two figures must share to be compared (the validation period or the hindcast's issue
    times, then the stations); ``evaluation`` says it in words.
    """

    version: str
    evaluation: str
    model: dict[int, float]
    persistence: dict[int, float]
    scope: tuple[object, ...]


@dataclass(frozen=True)
class LeadFigures:
    """At one lead: the candidate's median NSE, the champion's (None: no champion) and persistence's."""

    lead: int
    candidate: float
    champion: float | None
    persistence: float | None

    def as_dict(self) -> dict[str, float | int | None]:
        """What the ``--json`` summary and the trail record (None where there is no figure, NaN included)."""
        def number(value: float | None) -> float | None:
            return value if value is not None and math.isfinite(value) else None

        return {"lead": self.lead, "candidate": number(self.candidate), "champion": number(self.champion),
                "persistence": number(self.persistence)}


@dataclass(frozen=True)
class Verdict:
    """The gate's answer: the figures side by side, and the line it refuses with (None: passed)."""

    evaluation: str
    leads: tuple[LeadFigures, ...]
    refusal: str | None


def validation_figures(client: MlflowClient, store: str, version: ModelVersion) -> Figures:
    """The validation-period figures the run of ``version`` logged.

    Raises
    ------
    GateError
        If the version has no run, or its run logged no validation median NSE of the model and persistence.
    UnavailableError
        If the store does not answer.
    """
    evaluate = (f"run hydroseq evaluate --run {version.run_id} --period validation"
                if version.run_id else "register a version of a hydroseq training run")
    if not version.run_id:
        raise GateError(f"version {version.version} of {version.name!r} names no run, so no validation figures: "
                        f"{evaluate}")
    try:
        run = client.get_run(version.run_id)
    except Exception as error:
        raise store_error(error, store, f"run {version.run_id} of version {version.version}") from None
    metrics, params = run.data.metrics, run.data.params
    model = {int(found.group(1)): value for key, value in metrics.items() if (found := VALIDATION_MODEL_KEY.match(key))}
    persistence = {lead: metrics[key] for lead in model
                   if (key := VALIDATION_PERSISTENCE_KEY.format(lead=lead)) in metrics}
    if not model or set(persistence) != set(model):
        raise GateError(f"version {version.version} of {version.name!r}: its run {version.run_id} logged no "
                        f"validation median NSE of the model and persistence; {evaluate}")
    start, end = (params.get(key) for key in VALIDATION_PERIOD_PARAMS)
    period = f"validation {start}..{end}" if start and end else "validation"
    return Figures(str(version.version), period, dict(sorted(model.items())), persistence,
                   ("validation", start, end, params.get(STATIONS_PARAM)))


def hindcast_figures(path: str | Path, version: ModelVersion) -> Figures:
    """The figures of the hindcast ``path`` (``hydroseq forecast`` wrote it, ``<stem>_scores.csv`` beside it),
    which must be a forecast by the run of ``version``.

    Raises
    ------
    GateError
        If the hindcast was made by another run, or its scores hold no persistence.
    InputDataError
        If the file or its scores cannot be read.
    """
    from hydroseq.report.inputs import read_hindcast, read_hindcast_scores  # reads NetCDF: only when asked for

    path = Path(path)
    result = read_hindcast(path)
    made_by = str(result.attributes.get("model_run_id", ""))
    if made_by != version.run_id:
        raise GateError(f"--hindcast {path.name} was made by run {made_by or '(none recorded)'}, not by version "
                        f"{version.version}'s run {version.run_id}: give the candidate's hindcast first, then the "
                        "champion's")
    summary = read_hindcast_scores(path, result).summary()
    if not summary or "persistence" not in summary[0].median_nse:
        raise GateError(f"--hindcast {path.name}: its scores hold no persistence (a hindcast of ungauged stations?)")
    issues = result.issue_times
    first, last = (f"{np.datetime_as_string(np.datetime64(t, 'm'))}Z" for t in (issues[0], issues[-1]))
    return Figures(str(version.version), f"hindcast {first}..{last}, {len(issues)} issue times",
                   {row.lead: row.median_nse["model"] for row in summary},
                   {row.lead: row.median_nse["persistence"] for row in summary},
                   ("hindcast", tuple(np.asarray(issues).astype("datetime64[s]").tolist()), tuple(result.stations)))


def judge(candidate: Figures, champion: Figures | None, alias: str) -> Verdict:
    """Compare ``candidate`` with ``champion`` (None: the alias names no version yet) and persistence.

    Raises
    ------
    GateError
        If the two were not scored on the same evaluation, or share no lead.
    """
    if champion is not None and champion.scope != candidate.scope:
        differs = "other stations" if champion.scope[:-1] == candidate.scope[:-1] else champion.evaluation
        raise GateError(f"version {candidate.version} ({candidate.evaluation}) and the {alias} version "
                        f"{champion.version} ({differs}) were not scored on the same evaluation: compare them on "
                        "one hindcast each, --hindcast CANDIDATE.nc CHAMPION.nc")
    if champion is not None and not set(candidate.model) & set(champion.model):
        raise GateError(f"version {candidate.version} (leads {_leads(candidate.model)}) and the {alias} version "
                        f"{champion.version} (leads {_leads(champion.model)}) share no lead to compare")
    leads = tuple(LeadFigures(lead, value, None if champion is None else champion.model.get(lead),
                              candidate.persistence.get(lead)) for lead, value in candidate.model.items())
    failures = []
    for row in leads:
        if champion is not None and row.champion is not None and _worse(row.candidate, row.champion):
            failures.append((row.lead, f"the {alias} version {champion.version}", row.candidate, row.champion))
        if row.persistence is not None and _worse(row.candidate, row.persistence):
            failures.append((row.lead, "persistence", row.candidate, row.persistence))
    refusal = None
    if failures:
        lead, against, mine, theirs = failures[0]
        others = sorted({failed[0] for failed in failures} - {lead})
        also = f" (also at lead{'s' if len(others) > 1 else ''} {_leads(others)})" if others else ""
        refusal = (f"version {candidate.version} is worse than {against} at lead {lead}: median NSE "
                   f"{_pair(mine, theirs)} ({candidate.evaluation}){also}")
    return Verdict(candidate.evaluation, leads, refusal)


def figures_of(version: ModelVersion, hindcast: Path | None, client: MlflowClient, store: str) -> Figures:
    """:func:`hindcast_figures` of ``hindcast``, or without one :func:`validation_figures`."""
    return validation_figures(client, store, version) if hindcast is None else hindcast_figures(hindcast, version)


def _worse(candidate: float, reference: float) -> bool:
    """Lower than ``reference``; a candidate without a figure (NaN) is worse than a reference with one."""
    return math.isfinite(reference) and not candidate >= reference


def _pair(mine: float, theirs: float) -> str:
    """``0.410 against 0.460``, with more digits when three do not tell them apart."""
    for digits in (3, 6):
        text = (f"{mine:.{digits}f}", f"{theirs:.{digits}f}")
        if text[0] != text[1]:
            break
    return f"{text[0]} against {text[1]}"


def _leads(leads: Iterable[int]) -> str:
    return ", ".join(str(lead) for lead in sorted(leads))


__all__ = ["Figures", "GateError", "LeadFigures", "Verdict", "figures_of", "hindcast_figures", "judge",
           "validation_figures"]
