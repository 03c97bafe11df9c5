"""Controllers: the momentum-compensating shape controller ([Mishra2023] Sec. V-A)."""
