"""``hydroseq export``: run :func:`hydroseq.export.export_model` (and :func:`hydroseq.export.write_release` with
``--release``), print what it wrote and its summary."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from hydroseq.cli.output import console_for, finish
from hydroseq.errors import ConfigError, ExitCode
from hydroseq.export import METADATA_FILE, ExportMetadata, ReleaseResult, export_model, write_release
from hydroseq.export.runtime import RELEASE_CHECKSUMS


def export_command(args: argparse.Namespace) -> int:
    """Export ``--run`` with input length ``--seq-len`` into ``--out`` (a release of ``--release-root`` with
    ``--release``); print its summary; exit status 0."""
    if args.release_root is not None and not args.release:
        raise ConfigError("--release-root needs --release")
    metadata = export_model(args.run, seq_len=args.seq_len, out_dir=args.out, tracking_uri=args.tracking_uri)
    release = write_release(args.out, args.release_root) if args.release else None
    if release is not None:
        metadata = ExportMetadata.read(args.out)  # the checkpoint's checksum changed
    print_export_summary(metadata, args.out, console_for(args), release)
    return finish(args, export_summary(metadata, args.out, release), ExitCode.OK)


def export_summary(metadata: ExportMetadata, out_dir: Path, release: ReleaseResult | None = None) -> dict[str, Any]:
    """The ``--json`` summary: the model directory, its run, input contract, parity and files' SHA-256, and with
    ``--release`` the root its paths are relative to and the ``SHA256SUMS`` it wrote (``release``: null without)."""
    return {"model_dir": out_dir, "run_id": metadata.run_id, "seq_len": metadata.seq_len,
            "features": list(metadata.feature_names), "mode": metadata.mode, "leads": list(metadata.leads),
            "parity_max_abs_diff": metadata.parity_max_abs_diff, "opset": metadata.opset, "files": metadata.files,
            "release": None if release is None else {"root": release.root.absolute(), "sha256sums": release.sums}}


def print_export_summary(metadata: ExportMetadata, out_dir: Path, console: Console | None = None,
                         release: ReleaseResult | None = None) -> None:
    """Run, input contract, parity and the files of an exported model directory (and of its release)."""
    table = Table(title=f"exported model: {out_dir}", show_header=False)
    table.add_row("training run", metadata.run_id or "(checkpoint without run id)")
    shape = f"x[batch, {metadata.seq_len}, {len(metadata.feature_names)}] right-padded, lengths[batch]"
    table.add_row("input", escape(shape))
    table.add_row("mode, leads", escape(f"{metadata.mode}, {metadata.leads} grid steps of {metadata.grid.frequency}"))
    table.add_row("onnxruntime vs torch",
                  f"max |difference| {metadata.parity_max_abs_diff:.2e} (opset {metadata.opset})")
    for name, digest in metadata.files.items():
        table.add_row(name, f"sha256 {digest[:16]}...")
    table.add_row(METADATA_FILE, "feature order, scalers, grid, provenance, checksums")
    if release is not None:
        table.add_row(RELEASE_CHECKSUMS, escape(f"release: paths relative to {release.root.absolute()}, the "
                                                f"SHA-256 of {len(release.sums)} files"))
    (console or Console()).print(table)
