"""Writing results: the one JSON writer and the one CSV writer of every report, and the
plotting backend.

* JSON is strict: NaN and infinities become ``null``; NumPy scalars and arrays become
  numbers and lists, dataclasses and named tuples objects.
* CSV has one header line and one row per sample; a 2-D column ``x`` is split into
  ``x_0, x_1, ...``; an optional ``units`` mapping writes headers as ``name [unit]``; floats are
  written exactly (shortest round-trip form), NaN as ``nan``.
* Plots use Matplotlib's non-interactive Agg backend, set here and only here, on first use
  (controller-side code never imports Matplotlib).
"""
import csv
import dataclasses
import json
import math
from pathlib import Path

import numpy as np

from floating_base_control.conventions import matrix_to_quat_wxyz


def write_json(path, data):
    """Write ``data`` as strict JSON (indented, newline-terminated); returns the path."""
    path = Path(path)
    path.write_text(json.dumps(plain(data), indent=2, allow_nan=False) + "\n", encoding="utf-8")
    return path


def plain(x):
    """``x`` as plain JSON values: NaN and infinities as ``None`` (see the module doc)."""
    if isinstance(x, dict):
        return {str(k): plain(v) for k, v in x.items()}
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return plain({f.name: getattr(x, f.name) for f in dataclasses.fields(x)})
    if hasattr(x, "_asdict"):
        return plain(x._asdict())
    if isinstance(x, (list, tuple, np.ndarray)):
        return [plain(v) for v in x]
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        return float(x) if math.isfinite(x) else None
    return x


def log_columns(rows):
    """``{key: array}`` of a run's logged rows (dicts with the same keys, in order); a ``base_rotation`` column
    of 3x3 matrices becomes ``base_quaternion`` in its place, all rows converted in one call (a call per row
    cost more than the rest of a row)."""
    out = {}
    for key in rows[0] if rows else ():
        column = np.asarray([row[key] for row in rows])
        if key == "base_rotation":
            key, column = "base_quaternion", matrix_to_quat_wxyz(column)
        out[key] = column
    return out


def write_csv(path, columns, units=None):
    """Write ``{name: values}`` (1-D, or 2-D split into ``name_i``) as CSV; returns the path."""
    header, data = [], []
    for name, values in columns.items():
        values = np.asarray(values, dtype=float)
        unit = f" [{units[name]}]" if units else ""
        if values.ndim == 1:
            header.append(name + unit)
            data.append(values)
        else:
            header += [f"{name}_{i}{unit}" for i in range(values.shape[1])]
            data += list(values.T)
    path = Path(path)
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(np.column_stack(data).tolist())
    return path


def pyplot():
    """``matplotlib.pyplot`` on the Agg backend."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt
