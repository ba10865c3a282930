"""``hydroseq config``: the JSON schema of a config model, or a commented starting YAML made from it."""

from __future__ import annotations

import argparse
import json

from pydantic import BaseModel

from hydroseq.config import IngestConfig, TrainConfig
from hydroseq.config.template import config_template
from hydroseq.errors import ExitCode

MODELS: dict[str, type[BaseModel]] = {"train": TrainConfig, "ingest": IngestConfig}


def config_command(args: argparse.Namespace) -> int:
    """Print ``--schema train|ingest`` (JSON) or ``--template train|ingest`` (YAML) on stdout; exit status 0.

    What is printed is the result itself, so ``--json`` adds nothing to it.
    """
    if args.schema is not None:
        print(json.dumps(MODELS[args.schema].model_json_schema(), indent=2))
    else:
        print(config_template(MODELS[args.template], args.template), end="")
    return ExitCode.OK
