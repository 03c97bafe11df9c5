"""Planning: joint trajectories that reorient the floating base ([Mishra2023] Sec. V-B inverted)."""
