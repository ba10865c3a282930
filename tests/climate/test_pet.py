"""Oudin's PET and the extraterrestrial radiation it scales (FAO-56's worked example)."""

from __future__ import annotations

import numpy as np
import pytest

from hydroseq.climate import extraterrestrial_radiation, oudin_pet


def test_radiation_matches_fao56_example_8() -> None:
    """FAO-56, example 8: 20 degrees south on 3 September (day 246): Ra = 32.2 MJ m-2 d-1."""
    assert extraterrestrial_radiation(np.array(-20.0), np.array(246)) == pytest.approx(32.2, abs=0.05)


def test_polar_night_has_no_radiation_and_polar_day_the_most() -> None:
    night = extraterrestrial_radiation(np.array(80.0), np.array(355))
    day = extraterrestrial_radiation(np.array(80.0), np.array(172))
    assert night == 0.0 and day > extraterrestrial_radiation(np.array(45.0), np.array(172)) > 0


def test_oudin_formula_its_cold_cut_off_and_missing_days() -> None:
    radiation = float(extraterrestrial_radiation(np.array(-20.0), np.array(246)))
    pet = oudin_pet(np.array([[15.0, -5.0, -12.0, np.nan]]), np.array([[-20.0]]), np.array([246, 246, 246, 246]))
    assert pet[0, 0] == pytest.approx(radiation / 2.45 * 20.0 / 100.0, rel=1e-6)
    assert pet[0, 1] == 0.0 and pet[0, 2] == 0.0 and np.isnan(pet[0, 3])


def test_oudin_pet_of_a_bundled_basin_is_a_physical_pet() -> None:
    """On Narraguagus River (Maine) Oudin gives 1.5-3.5 mm/d a year where ERA5-Land's PET averages 14.5 mm/d."""
    import pandas as pd

    from tests.fixtures import CARAVAN_DIR

    frame = pd.read_csv(CARAVAN_DIR / "01022500.csv", parse_dates=["date"])
    pet = oudin_pet(frame["temperature_2m_mean"].to_numpy()[None, :], np.array([[44.60797]]),
                    frame["date"].dt.day_of_year.to_numpy())
    assert 1.5 < float(np.nanmean(pet)) < 3.5 < float(frame["potential_evaporation_sum"].mean())
