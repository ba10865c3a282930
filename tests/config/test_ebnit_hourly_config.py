"""The bundled hourly forecast config validates as the per-step forecast it says it is."""

from __future__ import annotations

from pathlib import Path

from hydroseq.config import TrainConfig, load_config


def test_ebnit_hourly_forecast_config_validates(repo_root: Path) -> None:
    config = load_config(repo_root / "configs" / "train_ebnit_hourly_forecast.yaml", TrainConfig)
    data = config.data
    assert data.mode == "per_step" and data.lagged_target and data.target_hiding is not None
    assert data.lead_steps == list(range(1, 25)) and data.seq_len == 336 and data.static_inputs == []
    assert data.splits.train.start.year == 1996 and data.splits.test.end.isoformat() == "2005-12-30"
