"""Simulated hardware: the MuJoCo plant, sensor models, scenarios and reports."""
