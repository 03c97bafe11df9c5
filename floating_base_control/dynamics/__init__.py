"""Dynamics of seed 002: Hamel (Lemma 1), REL (Theorem 1), curvature (Theorem 2); seed 004's
centroidal quantities; the plastic impact of a point contact."""
