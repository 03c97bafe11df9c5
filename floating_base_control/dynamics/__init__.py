"""Dynamics of [Mishra2023]: Hamel (Lemma 1), REL (Theorem 1), curvature (Theorem 2); [Saccon2017]'s
centroidal quantities; the plastic impact of a point contact."""
