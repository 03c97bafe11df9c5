"""Orbital robot experiments: the closed loop of [Mishra2023] Sec. V-A5, motion tasks, realistic campaigns
and sweeps."""
