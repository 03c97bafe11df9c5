"""The inner loops' small linear algebra gives numpy's results."""
import numpy as np

from floating_base_control.linalg import norm


def test_norm_is_numpys_to_the_bit(rng):
    for x in [rng.normal(size=n) * s for n in (3, 6, 7) for s in (1e-9, 1.0, 1e6)] + [np.zeros(6)]:
        assert norm(x) == np.linalg.norm(x)
        assert norm(x[:3]) == np.linalg.norm(x[:3])        # views too (e.g. the rotation half of a twist)
    assert np.isnan(norm(np.array([1.0, np.nan, 0.0])))
