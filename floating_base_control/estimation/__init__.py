"""State estimation: the SE(3) / Euler-Poincare observer of seed 002 (Sec. V-A)."""
