"""``hydroseq promote``: run :func:`hydroseq.serving.promote.promote`, print what the alias names now."""

from __future__ import annotations

import argparse

from hydroseq.cli.output import console_for, finish
from hydroseq.errors import ExitCode
from hydroseq.serving.promote import promote


def promote_command(args: argparse.Namespace) -> int:
    """Point ``--alias`` of registered model ``--model`` at ``--version``; exit status 0."""
    promotion = promote(args.model, args.version, args.alias, tracking_uri=args.tracking_uri)
    before = ("new alias" if promotion.previous_version is None
              else f"was version {promotion.previous_version}" if promotion.previous_version != promotion.version
              else "unchanged")
    console = console_for(args)
    console.print(f"{promotion.uri} -> version {promotion.version} ({before}; run {promotion.run_id}) in "
                  f"{promotion.tracking_uri}", markup=False, highlight=False, soft_wrap=True)
    if promotion.description:
        console.print(promotion.description, markup=False, highlight=False, soft_wrap=True)
    console.print(f"forecast with it: hydroseq forecast --model {promotion.uri} ...", markup=False, highlight=False,
                  soft_wrap=True)
    return finish(args, promotion.summary(), ExitCode.OK)
