"""The whole quick benchmark, as `python -m experiments.compare --quick` runs it (about 2 minutes).

NeuralHydrology runs when its venv exists (``python -m experiments.nh.venv``); a fresh clone has
none, and creating it (1-1.5 minutes of pip on 2 cores) is left out of the test suite, so there
the NeuralHydrology half is skipped and the report must say why.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from experiments.compare import NH_NAME, main, nh_interpreter
from experiments.nh import venv as nh_venv
from experiments.report import MARKDOWN_NAME, PLOT_NAME


@pytest.mark.slow
def test_quick_comparison_writes_the_report(tmp_path: Path) -> None:
    assert main(["--quick", "--out", str(tmp_path / "results"), "--work-dir", str(tmp_path / "work")]) == 0
    markdown = (tmp_path / "results" / MARKDOWN_NAME).read_text()
    png = (tmp_path / "results" / PLOT_NAME).read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000
    assert "\"runs\"" in (tmp_path / "results" / "comparison.json").read_text()
    for section in ("## Speed and memory", "## Test-period accuracy", "## Time to accuracy",
                    "## Padding strategies", "## hydroseq pipeline overhead", "## Targets"):
        assert section in markdown
    for row in ("| hydroseq per-step |", "| hydroseq sequence |", "| hydroseq sequence bf16 |",
                "| baseline: persistence |",
                "| baseline: climatology |", "| random, padded |", "| bucketed, padded |", "| random, packed |"):
        assert row in markdown
    assert "commit `" in markdown and "threads per tool:" in markdown
    if nh_venv.is_ready():
        assert f"| {NH_NAME} |" in markdown
        assert "both tools score the same test observations" in markdown
    else:
        assert "NeuralHydrology skipped: its venv" in markdown


def test_quick_mode_without_the_venv_skips_nh_with_a_reason(tmp_path: Path) -> None:
    python, reason = nh_interpreter("auto", quick=True, venv=tmp_path / "absent")
    assert python is None and "python -m experiments.nh.venv" in reason
    python, reason = nh_interpreter("skip", quick=False, venv=tmp_path / "absent")
    assert python is None and "--nh skip" in reason
