"""The verification figures are written as whole PNG files, also for empty or all-missing input."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hydroseq.errors import OutputPathError
from hydroseq.scoring import verification
from hydroseq.scoring.verification_plots import (
    FEW_FORECASTS,
    plot_pit_histogram,
    plot_reliability_diagram,
    reliability_figure,
)

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def assert_png(path: Path) -> None:
    data = path.read_bytes()
    assert data.startswith(PNG_SIGNATURE) and len(data) > 1000
    assert [p.name for p in path.parent.iterdir() if p.name.startswith(".")] == []  # no temporary left


def test_pit_histogram_figure(tmp_path: Path) -> None:
    pit = np.append(np.random.default_rng(0).uniform(size=500), np.nan)
    path = plot_pit_histogram(pit, tmp_path / "figures" / "pit.png", "lead 1")
    assert path == tmp_path / "figures" / "pit.png"
    assert_png(path)
    assert_png(plot_pit_histogram([np.nan], tmp_path / "pit_empty.png", "no observations"))


def test_reliability_diagram_with_one_line_per_lead(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    probability = rng.uniform(size=2000)
    tables = {f"lead {lead}": verification.reliability_table(probability, rng.uniform(size=2000) < probability ** lead)
              for lead in (1, 2, 3)}
    tables["no forecasts"] = verification.reliability_table([np.nan], [np.nan])
    assert_png(plot_reliability_diagram(tables, tmp_path / "reliability.png", "P(Q > 2-year flow)"))
    assert_png(plot_reliability_diagram({}, tmp_path / "reliability_empty.png", "nothing"))


def test_bins_with_few_forecasts_are_hollow_and_say_how_many() -> None:
    """Flood probabilities are mostly near 0: the high bins hold a handful of forecasts, drawn hollow with n."""
    rng = np.random.default_rng(2)
    probability = np.clip(rng.beta(0.3, 6.0, size=3000), 0, 1)
    table = verification.reliability_table(probability, rng.uniform(size=3000) < probability)
    scarce = table[(table["count"] > 0) & (table["count"] < FEW_FORECASTS)]
    assert len(scarce) >= 2 and (table["count"] >= FEW_FORECASTS).any()
    axis = reliability_figure({"lead 1 d": table}, "P(Q > 2-year flow)").axes[0]
    hollow = [line for line in axis.get_lines() if line.get_markerfacecolor() == "white" and len(line.get_xdata())]
    assert len(hollow) == 1 and len(hollow[0].get_xdata()) == len(scarce)
    assert sorted(text.get_text() for text in axis.texts) == sorted(f"n={int(n)}" for n in scarce["count"])
    assert f"fewer than {FEW_FORECASTS} forecasts" in [text.get_text() for text in axis.get_legend().get_texts()]


def test_a_figure_that_cannot_be_written_is_an_output_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    with pytest.raises(OutputPathError):
        plot_pit_histogram([0.5], tmp_path / "file" / "pit.png", "t")
