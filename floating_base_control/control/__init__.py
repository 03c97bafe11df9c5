"""Controllers: the momentum-compensating shape controller (seed 002, Sec. V-A)."""
