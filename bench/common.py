"""Shared by the benchmarks: where results go and how plain ones are printed."""
import json
from pathlib import Path


def save(result, name):
    """Write ``out/bench/<name>.json`` at the repository root."""
    out = Path(__file__).resolve().parents[1] / "out" / "bench"
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}.json").write_text(json.dumps(result, indent=2))


def report(result):
    """One ``key value`` line per result."""
    for k, v in result.items():
        print(f"  {k:40s} {v}")
