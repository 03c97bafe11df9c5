"""Shared by the benchmarks: where results go and how plain ones are printed."""
from pathlib import Path

from floating_base_control.results import write_json


def save(result, name):
    """Write ``out/bench/<name>.json`` at the repository root."""
    out = Path(__file__).resolve().parents[1] / "out" / "bench"
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / f"{name}.json", result)


def report(result):
    """One ``key value`` line per result."""
    for k, v in result.items():
        print(f"  {k:40s} {v}")
