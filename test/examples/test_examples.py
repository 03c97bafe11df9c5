"""Every script of examples/ runs (each checks what it prints where it can: e.g. eq. 9 at mu = 0)."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: The scripts that run the MuJoCo simulator (the others are the core alone).
SIMULATOR = {"hopper.py"}


def test_every_example_is_listed_in_its_index():
    index = (ROOT / "examples" / "README.md").read_text()
    assert all(f"`{path.name}`" in index for path in (ROOT / "examples").glob("*.py"))


@pytest.mark.parametrize("script", [pytest.param(p.name, marks=[pytest.mark.sim] if p.name in SIMULATOR else [])
                                    for p in sorted((ROOT / "examples").glob("*.py"))])
def test_the_example_runs(script):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}     # this checkout's package
    result = subprocess.run([sys.executable, str(ROOT / "examples" / script)], capture_output=True, text=True,
                            env=env, cwd=ROOT, timeout=600)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip()
