"""Scoring: every number that says how good a forecast is, in one place.

Deterministic scores (:mod:`.metrics`, :mod:`.peak_metrics`), the reference forecasts every model
must beat (:mod:`.baselines`), quantile and probabilistic scores (:mod:`.quantiles`,
:mod:`.verification`, :mod:`.probabilistic_scores`), thresholds (:mod:`.thresholds`: derived
return-period flows, :mod:`.return_periods`, or the user's table, :mod:`.station_tables`, with stages
through :mod:`.rating_curve`) and event verification (:mod:`.event_verification`), the reliability and
PIT figures (:mod:`.verification_plots`) and the one rule for "beats persistence" (:mod:`.skill`).
``hydroseq evaluate`` (training stage) and the hindcast (forecast stage) both score through it.
It imports no stage: numpy, pandas and matplotlib, and scipy where a fit needs it.
"""
