"""Options shared by ``fbc gait``, ``fbc ccf`` and ``fbc integrability`` (not a command), and the
argparse types of every command: numbers checked against their meaning (:func:`number`: finite,
positive rates and steps, non-negative counts) and outputs checked writable before a run, so that a
bad value is refused in one line naming the option.

Without ``--urdf`` the gait tools use [Mishra2023]'s Sec. V-B example: the LWR 4+ on a
3.5 kg base (urdf/lwr4_free_floating.urdf) and the paper's circular gait.
"""
import argparse
import math
import os
from pathlib import Path

import numpy as np

from floating_base_control.analysis.locomotion import FRAMES, PlanarGait, sec_vb_gait
from floating_base_control.model import FloatingBaseModel
from floating_base_control.resources import share_file
from floating_base_control.validation import InputError

SEC_VB_URDF = "urdf/lwr4_free_floating.urdf"


def finite_float(text):
    """argparse type: a float that is not NaN or infinite."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return value


def number(kind=float, minimum=None, above=False):
    """argparse type: a finite number of ``kind`` (float or int), at least ``minimum`` (greater than it
    if ``above``): rates and steps positive, durations finite, counts non-negative."""
    bound = "" if minimum is None else f"{'>' if above else '>='} {minimum:g}"

    def parse(text):
        if kind is int:
            try:
                value = int(text)
            except ValueError:
                raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        else:
            value = finite_float(text)
        if minimum is not None and not (value > minimum or (value == minimum and not above)):
            raise argparse.ArgumentTypeError(f"must be {bound}, got {text!r}")
        return value
    return parse


positive = number(float, 0, above=True)
non_negative = number(float, 0)
count = number(int, 0)
positive_count = number(int, 1)


def probability(text):
    """argparse type: a probability below 1 (``0 <= p < 1``)."""
    value = non_negative(text)
    if value >= 1:
        raise argparse.ArgumentTypeError(f"must be < 1, got {text!r}")
    return value


def writable_dir(text):
    """argparse type: a directory that exists and is writable or that can be created (checked before
    a run, which would otherwise fail at its end); created by the command."""
    path = Path(text)
    existing = next((p for p in (path, *path.parents) if p.exists()), Path("."))
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} exists and is not a directory")
    if not existing.is_dir():
        raise argparse.ArgumentTypeError(f"cannot create {text!r}: {str(existing)!r} is not a directory")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise argparse.ArgumentTypeError(f"cannot write in {str(existing)!r}: permission denied")
    return text


def writable_file(text):
    """argparse type: a file that can be written (its directory exists and is writable)."""
    path = Path(text)
    directory = path.parent
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is a directory")
    if not directory.is_dir():
        raise argparse.ArgumentTypeError(f"cannot write {text!r}: no directory {str(directory)!r}")
    if not os.access(path if path.exists() else directory, os.W_OK):
        raise argparse.ArgumentTypeError(f"cannot write {text!r}: permission denied")
    return text


def joint_value(text):
    """argparse type: ``NAME=VALUE`` with a finite value."""
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"{text!r} is not of the form JOINT=VALUE")
    return name, finite_float(value)


def add_model(p, default_help):
    p.add_argument("--urdf", help=f"URDF whose root link is the floating base ({default_help})")


def add_plane(p):
    g = p.add_argument_group("gait plane ([Mishra2023] eq. 59: q = q_c + Psi r)")
    g.add_argument("--x", nargs="+", type=joint_value, metavar="JOINT=W",
                   help="first column of Psi (direction of r1) as joint weights, "
                        "e.g. --x lwr_joint_2=0.7071 lwr_joint_3=0.7071")
    g.add_argument("--y", nargs="+", type=joint_value, metavar="JOINT=W",
                   help="second column of Psi (direction of r2)")
    g.add_argument("--center", nargs="+", type=joint_value, default=[], metavar="JOINT=RAD",
                   help="origin q_c of the plane (other joints at 0)")
    g.add_argument("--frame", choices=FRAMES, default="chassis",
                   help="frame of the curvature: the virtual chassis {C} (CoM and principal "
                        "axes, Sec. V-B2; default) or the base {1}")


def add_gait(p):
    g = p.add_argument_group("gait (a closed path in the plane; default: the Sec. V-B circle "
                             "when --x/--y are not given)")
    g.add_argument("--circle", nargs=3, type=finite_float, metavar=("R1", "R2", "RADIUS"),
                   help="circle of the given centre and radius (rad)")
    g.add_argument("--start-angle", type=finite_float, default=180.0,
                   help="start point on the circle, degrees from the r1 axis (default 180)")
    g.add_argument("--clockwise", action="store_true", help="traverse the circle clockwise")
    g.add_argument("--path", help="CSV file with columns r1,r2 (header line), a closed path")
    g.add_argument("--samples", type=number(int, 3), default=512,
                   help="segments of the circle (default 512; the inscribed polygon's area "
                        "is smaller by about 6.6/samples^2, relative)")
    g.add_argument("--period", type=positive, default=2.0, help="duration of the gait, s "
                   "(only matters with --mu; default 2)")


def _circle_only(args):
    return None if args.circle is not None else \
        "applies to --circle (the Sec. V-B gait starts where the paper's does, a --path where its first row is)"


def gait_checks(period_applies):
    """The gait options' applicability (``_table.refuse``): the circle's options without a circle, or
    ``--period`` where nothing is timed, change nothing."""
    return {"start_angle": ("--start-angle", _circle_only, 180.0),
            "clockwise": ("--clockwise", _circle_only, False),
            "samples": ("--samples", lambda a: "applies to a circle (--circle or the Sec. V-B one): a --path has its "
                        "own samples" if a.path is not None else None, 512),
            "period": ("--period", period_applies, 2.0)}


def add_output(p, name):
    p.add_argument("--out", default=f"out/{name}", metavar="DIR", type=writable_dir,
                   help=f"directory for {name}.json and {name}.png (default out/{name})")


def load_model(args):
    """The model of ``--urdf``, or the Sec. V-B robot."""
    return FloatingBaseModel.from_urdf(args.urdf or share_file(SEC_VB_URDF))


def joint_indices(model, names, what):
    """Indices of joint ``names`` in ``q``; unknown or repeated names are an error."""
    for name in names:
        if name not in model.joint_names:
            raise InputError(f"{what}: unknown joint {name!r}; the joints are "
                             f"{', '.join(model.joint_names)}")
    if len(set(names)) != len(names):
        raise InputError(f"{what}: a joint is given twice")
    return [model.joint_names.index(name) for name in names]


def joint_vector(model, pairs, what):
    """``(n,)`` vector from ``[(name, value)]``, zero for the joints not named."""
    v = np.zeros(model.n)
    v[joint_indices(model, [name for name, _ in pairs], what)] = [value for _, value in pairs]
    return v


def is_sec_vb(args):
    return args.urdf is None and args.x is None and args.y is None


def plane(model, args):
    """``(Psi, q_c)`` from ``--x``, ``--y``, ``--center``, or the Sec. V-B plane."""
    if is_sec_vb(args):
        return sec_vb_gait(model.n).Psi, joint_vector(model, args.center, "--center")
    if args.x is None or args.y is None:
        raise InputError("give both --x and --y (the gait plane) with --urdf")
    Psi = np.column_stack([joint_vector(model, args.x, "--x"), joint_vector(model, args.y, "--y")])
    return Psi, joint_vector(model, args.center, "--center")


def gait(model, args, required=True):
    """The :class:`PlanarGait` of the options (``None`` if none is given and not required)."""
    Psi, q_c = plane(model, args)
    if args.circle is not None and args.path is not None:
        raise InputError("give either --circle or --path, not both")
    if args.path is not None:
        r = read_path(args.path, ("r1", "r2"))
        t = np.linspace(0.0, args.period, len(r))
        return PlanarGait(Psi, r, q_c, t)
    if args.circle is not None:
        r1, r2, radius = args.circle
        return PlanarGait.circle(Psi, (r1, r2), radius, args.samples,
                                 np.radians(args.start_angle), args.clockwise, q_c, args.period)
    if is_sec_vb(args):
        g = sec_vb_gait(model.n, args.samples)
        return PlanarGait(Psi, g.r, q_c, g.t * args.period / 2.0)
    if required:
        raise InputError("give a gait: --circle R1 R2 RADIUS or --path FILE")
    return None


def read_path(path, columns=None):
    """``(header, values)`` of a CSV file with a header line; checks the columns if given."""
    try:
        with open(path, encoding="utf-8") as f:
            header = [h.strip() for h in f.readline().split(",")]
            values = np.loadtxt(f, delimiter=",", ndmin=2)
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}") from None
    except ValueError as exc:
        raise InputError(f"{path}: not a numeric CSV file after the header line ({exc})") from None
    if values.shape[1] != len(header):
        raise InputError(f"{path}: {values.shape[1]} columns but {len(header)} names in the header")
    if not np.isfinite(values).all():
        raise InputError(f"{path}: non-finite values in rows "
                         f"{sorted(set(np.argwhere(~np.isfinite(values))[:, 0].tolist()))[:5]}")
    if columns is not None:
        if tuple(header) != tuple(columns):
            raise InputError(f"{path}: expected the columns {','.join(columns)}, got {','.join(header)}")
        return values
    return header, values


def output_dir(args):
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    return out
