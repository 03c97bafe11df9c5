"""State estimation: the SE(3) / Euler-Poincare observer of [Mishra2023] Sec. V-A."""
