"""``make setup`` compiles every kernel of the package (``compiled.compile_all``)."""
import importlib
import pkgutil

import pytest

import floating_base_control as package
from floating_base_control.compiled import COMPILED, kernel_modules

numba = pytest.importorskip("numba")


@pytest.mark.skipif(not COMPILED, reason="without numba nothing is compiled")
def test_the_modules_make_setup_compiles_are_those_that_define_kernels():
    """Found by what their functions are (numba's dispatchers), not by their source, in every module but the ROS
    layer's (thin nodes, no kernels) and the command line's."""
    defining = set()
    for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
        if info.ispkg or info.name.startswith((f"{package.__name__}.ros.", f"{package.__name__}.cli.")):
            continue
        module = importlib.import_module(info.name)
        if any(isinstance(v, numba.core.registry.CPUDispatcher) and v.__module__ == info.name
               for v in vars(module).values()):
            defining.add(info.name)
    assert "floating_base_control.sim.hopper" in defining
    assert set(kernel_modules()) == defining
