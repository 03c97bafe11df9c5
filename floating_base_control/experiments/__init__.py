"""Experiments on the simulated robots: scenarios, realistic dispersions, campaigns, sweeps, verdicts and reports.

They connect a robot's controller (:mod:`floating_base_control.robots`) to its simulated hardware
(:mod:`floating_base_control.sim`) in one process and judge the run against ground truth.
"""
