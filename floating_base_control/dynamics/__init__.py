"""Dynamics of seed 002: Hamel (Lemma 1), REL (Theorem 1), curvature (Theorem 2)."""
