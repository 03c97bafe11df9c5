"""A command's options as one table: each option's flag, its key in a ``--config`` file, its default and
what it applies to (not a command).

A command lists its :class:`Option` rows once; :func:`add_options` builds the parser from them,
:func:`resolve` merges the command line, the configuration file and the defaults, and refuses an option
given where it changes nothing, with the reason; :func:`write_config` writes the options that applied,
with their values, as a file that ``--config`` reads back to the same run.

Precedence: the command line, then the ``--config`` file, then the defaults.  An option's key in the file
is its flag without the dashes, ``-`` as ``_`` (``--pose-rate 50`` is ``pose_rate: 50``); a file-only key
(``flags=()``) has no flag.  A value from the file is checked by the same argparse type as on the command
line, with the error naming the file and the key.
"""
import argparse
import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

from floating_base_control.validation import InputError

#: ``Option.kind``: how a value is given and stored.
KINDS = ("value", "switch", "joints", "mapping")


@dataclass(frozen=True)
class Option:
    """One option of a command (module doc).

    ``kind``: ``value`` (``type``, ``nargs``, ``choices`` as argparse takes them), ``switch`` (a flag,
    ``true``/``false`` in a file), ``joints`` (``JOINT=VALUE`` pairs; a file's mapping of joint to value,
    stored as a dict) or ``mapping`` (a file's mapping, checked by ``check(mapping, where)``; on the command
    line ``NAME=VALUE`` pairs); a file-only ``value`` with ``check`` is read by ``check(value, where)``.
    ``default``: a value, or a function of the configuration with the plain defaults resolved; ``None`` leaves
    it to the command.  ``applies(config)``: ``None`` where the option applies,
    else the reason it changes nothing there.  ``in_file``: a run setting (output, ``--config`` itself) is
    not a scenario parameter and is neither read from nor written to the file."""

    key: str
    flags: tuple = ()
    help: str = ""
    kind: str = "value"
    type: Optional[Callable] = None
    nargs: object = None
    choices: Optional[tuple] = None
    metavar: object = None
    default: object = None
    applies: Optional[Callable] = None
    check: Optional[Callable] = None
    group: Optional[str] = None
    in_file: bool = True
    repeat: bool = False            #: the flag may be given more than once (its pairs are merged)
    path: bool = False              #: a file's path: relative in a configuration file, to that file's folder

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"option {self.key}: kind must be one of {KINDS}")

    @property
    def name(self):
        """How the user gave it: its flag, else its key in the file."""
        return self.flags[0] if self.flags else self.key


def add_options(parser, table, groups=None):
    """Add every option of ``table`` with a flag to ``parser`` (in ``groups[option.group]`` if given); the
    parsed value is ``None`` unless given, so that :func:`resolve` knows what the user asked for."""
    from floating_base_control.cli._options import joint_value
    groups = groups or {}
    for o in table:
        if not o.flags:
            continue
        target = groups.get(o.group, parser)
        shown = o.help + ("" if o.default is None or callable(o.default) or o.kind == "switch"
                          else f" (default {_shown(o.default)})")
        if o.kind == "switch":
            target.add_argument(*o.flags, dest=o.key, action="store_true", default=None, help=shown)
        elif o.kind in ("joints", "mapping"):
            kwargs = dict(action="extend", nargs="+") if o.repeat else dict(nargs="+")
            target.add_argument(*o.flags, dest=o.key, type=joint_value if o.kind == "joints" else _name_value,
                                metavar=o.metavar or "NAME=VALUE", default=None, help=shown, **kwargs)
        else:
            target.add_argument(*o.flags, dest=o.key, type=o.type, nargs=o.nargs, choices=o.choices,
                                metavar=o.metavar, default=None, help=shown)


def _shown(value):
    return " ".join(map(str, value)) if isinstance(value, (tuple, list)) else value


def _name_value(text):
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"{text!r} is not of the form NAME=VALUE")
    return name, value


def read_config(path, table):
    """``{key: value}`` of a YAML ``--config`` file, every key known to ``table`` and checked as the
    command line checks it."""
    import yaml
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"--config: cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise InputError(f"--config: {path} is not YAML{where}: {getattr(exc, 'problem', None) or exc}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise InputError(f"--config: {path} must be a mapping of option names to values, got a {type(data).__name__}")
    known = {o.key: o for o in table if o.in_file}
    values = {}
    for key, value in data.items():
        if key not in known:
            close = difflib.get_close_matches(str(key).replace("-", "_"), known, n=1)
            hint = f" (did you mean {close[0]}?)" if close else f"; the keys are {', '.join(known)}"
            raise InputError(f"{path}: unknown key {key!r}{hint}")
        if value is not None:
            values[key] = file_value(known[key], value, f"{path}: {key}")
            if known[key].path:
                values[key] = str((Path(path).parent / values[key]).resolve())
    return values


def file_value(o, value, where):
    """``value`` of option ``o`` read from a file (module doc), as the command line would give it."""
    if o.kind == "switch":
        if not isinstance(value, bool):
            raise InputError(f"{where}: must be true or false, got {value!r}")
        return value
    if o.check is not None and o.kind == "value":
        return o.check(value, where)
    if o.kind in ("joints", "mapping"):
        if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
            raise InputError(f"{where}: must be a mapping of names to values, got {value!r}")
        if o.kind == "joints":
            return {k: _typed(_finite, v, f"{where}.{k}") for k, v in value.items()}
        return o.check(dict(value), where) if o.check else dict(value)
    if o.nargs is not None:
        if not isinstance(value, list) or (isinstance(o.nargs, int) and len(value) != o.nargs):
            count = f"{o.nargs} values" if isinstance(o.nargs, int) else "a list"
            raise InputError(f"{where}: must be {count}, got {value!r}")
        return [_typed(o.type, v, where, o.choices) for v in value]
    return _typed(o.type, value, where, o.choices)


def _finite(text):
    from floating_base_control.cli._options import finite_float
    return finite_float(text)


def _typed(kind, value, where, choices=None):
    if isinstance(value, (dict, list)) or isinstance(value, bool) and kind is not None:
        raise InputError(f"{where}: must be a single value, got {value!r}")
    if kind is not None:
        try:
            value = kind(str(value))
        except (argparse.ArgumentTypeError, ValueError) as exc:
            raise InputError(f"{where}: {exc}") from None
    if choices is not None and value not in choices:
        raise InputError(f"{where}: must be one of {', '.join(map(str, choices))}, got {value!r}")
    return value


def given(o, value):
    """Whether the user asked for option ``o`` with ``value`` (a switch only when on)."""
    return value is not None and not (o.kind == "switch" and value is False)


def resolve(table, args, file_values=None, file_name=None):
    """``(config, asked)``: every key of ``table`` with its value (the command line's, the file's, else the
    default), and ``{key: how it was given}`` for those the user gave.  An option given where it does not
    apply is an :class:`InputError` naming it and saying why."""
    file_values = file_values or {}
    config, asked = {}, {}
    for o in table:
        value = getattr(args, o.key, None) if o.flags else None
        if given(o, value):
            config[o.key], asked[o.key] = _from_command_line(o, value), o.name
        elif o.key in file_values:
            config[o.key], asked[o.key] = file_values[o.key], f"{file_name}: {o.key}"
    computed = [o for o in table if o.key not in config and callable(o.default)]
    for o in table:
        if o.key not in config and not callable(o.default):
            config[o.key] = o.default
    for o in computed:            # after the plain ones, which they may read
        config[o.key] = o.default(config)
    for o in table:
        reason = o.applies(config) if (o.key in asked and o.applies) else None
        if reason:
            raise InputError(f"{asked[o.key]}: {reason}")
    return config, asked


def _from_command_line(o, value):
    if o.kind == "joints":
        names = [name for name, _ in value]
        if len(set(names)) != len(names):
            raise InputError(f"{o.name}: a joint is given twice")
        return dict(value)
    if o.kind == "mapping":
        return o.check(dict(value), o.name) if o.check else dict(value)
    return list(value) if isinstance(value, tuple) else value


def applied(table, config):
    """The keys of ``table`` that go in a configuration file and apply to ``config``."""
    return [o.key for o in table if o.in_file and config.get(o.key) is not None
            and not (o.applies and o.applies(config))]


def write_config(path, table, config, header):
    """Write the options of ``config`` that apply (:func:`applied`) as YAML, in the table's order, under the
    comment ``header``; returns the path."""
    import yaml
    from floating_base_control.results import plain
    class Dumper(yaml.SafeDumper):      # mappings one key a line, lists of numbers on one line
        pass

    Dumper.add_representer(list, lambda dumper, items: dumper.represent_sequence(
        "tag:yaml.org,2002:seq", items, flow_style=not any(isinstance(x, (dict, list)) for x in items)))
    paths = {o.key for o in table if o.path}
    data = {k: str(Path(config[k]).resolve()) if k in paths else plain(config[k]) for k in applied(table, config)}
    text = "".join(f"# {line}\n" for line in header.splitlines())
    text += yaml.dump(data, Dumper=Dumper, sort_keys=False, default_flow_style=False, width=120)
    Path(path).write_text(text, encoding="utf-8")
    return Path(path)


def refuse(checks, args):
    """For a command without a configuration file: ``checks`` maps an option's ``dest`` to ``(flag,
    applies(args))``; an option given (not ``None``, ``False`` or its parser default) where ``applies``
    gives a reason is an :class:`InputError` naming it."""
    for dest, (flag, applies, default) in checks.items():
        value = getattr(args, dest)
        if value is None or value is False or value == default:
            continue
        reason = applies(args)
        if reason:
            raise InputError(f"{flag}: {reason}")

