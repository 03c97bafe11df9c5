"""Every ``fbc`` failure is one line naming the problem and a non-zero exit: bad numbers (refused by the
option's type, with the option's name), unwritable outputs (checked before the run), malformed URDFs
(with the cause, no urdfdom line), and, last resort, any unexpected exception (``FBC_DEBUG=1`` for its
traceback)."""
import errno
import os

import pytest

from floating_base_control import cli
from floating_base_control.cli import main
from helpers import malformed_urdf, run_fbc


def fbc(argv, capfd):
    """``(exit status, stderr)`` of ``fbc argv``, stderr as the terminal gets it (file descriptor 2)."""
    code, _, err = run_fbc(argv, capfd)
    return code, err


def assert_one_line(code, err, words, status=2):
    assert code == status, (code, err)
    assert len(err.splitlines()) == 1 and err.endswith("\n"), err
    assert words in err, err
    assert "Traceback" not in err and not malformed_urdf.urdfdom_lines(err), err


#: (argv, words of the one line): the issue's cases and the other options of the same kind
BAD_NUMBERS = [
    (["demo", "orbital", "--pose-rate", "0"], "argument --pose-rate: must be > 0, got '0'"),
    (["demo", "orbital", "--duration", "nan"], "argument --duration: 'nan' is not a finite number"),
    (["demo", "orbital", "--duration", "0"], "argument --duration: must be > 0"),
    (["demo", "orbital", "--latency", "-0.1"], "argument --latency: must be >= 0"),
    (["demo", "orbital", "--pose-noise", "inf"], "argument --pose-noise: 'inf' is not a finite number"),
    (["demo", "orbital", "--integral-time", "-1"], "argument --integral-time: must be >= 0"),
    (["demo", "orbital", "--mass-error", "-1"], "argument --mass-error: must be > -1"),
    (["demo", "orbital", "--tumble-scale", "nan"], "argument --tumble-scale: 'nan' is not a finite number"),
    (["demo", "orbital", "--seed", "-1"], "argument --seed: must be >= 0"),
    (["demo", "orbital", "--spacecraft-mass", "0"], "argument --spacecraft-mass: must be > 0"),
    (["demo", "orbital", "--mount-xyz", "0", "nan", "0"], "argument --mount-xyz: 'nan' is not a finite number"),
    (["demo", "hopper", "--timestep", "0"], "argument --timestep: must be > 0, got '0'"),
    (["demo", "hopper", "--duration", "-1"], "argument --duration: must be > 0, got '-1'"),
    (["demo", "hopper", "--floor-K", "0"], "argument --floor-K: must be > 0"),
    (["demo", "hopper", "--floor-D", "-1"], "argument --floor-D: must be >= 0"),
    (["demo", "hopper", "--gravity", "0"], "argument --gravity: must be > 0"),
    (["inspect", "--random", "-1"], "argument --random: must be >= 0, got '-1'"),
    (["inspect", "--random", "1.5"], "argument --random: '1.5' is not an integer"),
    (["sweep", "orbital", "--duration", "nan"], "argument --duration: 'nan' is not a finite number"),
    (["campaign", "orbital", "--runs", "0"], "argument --runs: must be >= 1"),
    (["campaign", "orbital", "--workers", "0"], "argument --workers: must be >= 1"),
    (["campaign", "orbital", "--duration", "-5"], "argument --duration: must be > 0"),
    (["gait", "--samples", "2"], "argument --samples: must be >= 3"),
    (["gait", "--period", "0"], "argument --period: must be > 0"),
    (["ccf", "--grid", "1"], "argument --grid: must be >= 2"),
    (["integrability", "--tol", "0"], "argument --tol: must be > 0"),
    (["demo", "orbital", "--scenario", "worst"], "argument --scenario: invalid choice: 'worst'"),
]


@pytest.mark.parametrize("argv, words", BAD_NUMBERS, ids=[" ".join(a) for a, _ in BAD_NUMBERS])
def test_bad_option_values_are_one_line_naming_the_option(argv, words, capfd):
    assert_one_line(*fbc(argv, capfd), words)


#: every command's output option, and where it is a directory
OUTPUTS = [["demo", "orbital"], ["demo", "hopper"], ["gait"], ["ccf"], ["integrability"], ["campaign", "orbital"],
           ["sweep", "orbital"]]


@pytest.mark.parametrize("command", OUTPUTS, ids=" ".join)
def test_an_unwritable_output_is_refused_before_the_run(command, tmp_path, capfd):
    a_file = tmp_path / "a_file"
    a_file.write_text("")
    assert_one_line(*fbc(command + ["--out", str(a_file)], capfd),
                    f"argument --out: '{a_file}' exists and is not a directory")
    assert_one_line(*fbc(command + ["--out", str(a_file / "run")], capfd),
                    f"argument --out: cannot create '{a_file / 'run'}': '{a_file}' is not a directory")
    assert not (tmp_path / "run").exists()


def test_sweep_doc_must_be_writable(tmp_path, capfd):
    assert_one_line(*fbc(["sweep", "orbital", "--doc", str(tmp_path)], capfd), f"argument --doc: '{tmp_path}' is a "
                                                                               "directory")
    assert_one_line(*fbc(["sweep", "orbital", "--doc", str(tmp_path / "no" / "x.md")], capfd),
                    f"argument --doc: cannot write '{tmp_path / 'no' / 'x.md'}': no directory")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes in a read-only directory")
def test_a_read_only_output_directory_is_refused(tmp_path, capfd):
    tmp_path.chmod(0o500)
    try:
        assert_one_line(*fbc(["gait", "--out", str(tmp_path / "run")], capfd),
                        f"argument --out: cannot write in '{tmp_path}': permission denied")
    finally:
        tmp_path.chmod(0o700)


@pytest.mark.parametrize("name", list(malformed_urdf.CASES))
def test_a_malformed_urdf_is_one_line_with_its_cause(name, tmp_path, capfd):
    path = malformed_urdf.write(tmp_path, name)
    assert_one_line(*fbc(["inspect", "--urdf", path], capfd), malformed_urdf.CASES[name][1])


@pytest.mark.parametrize("argv", [["demo", "orbital", "--arm-urdf"], ["gait", "--x", "j1=1", "--y", "j1=1",
                                                                      "--circle", "0", "0", "1", "--urdf"]])
def test_other_commands_say_the_urdf_error_too(argv, tmp_path, capfd):
    path = malformed_urdf.write(tmp_path, "NaN origin")
    code, err = fbc(argv + [path, "--out", str(tmp_path / "out")], capfd)
    assert_one_line(code, err, f"URDF {path}: joint 'j1' has <origin")


def test_a_missing_urdf_is_one_line(capfd):
    assert_one_line(*fbc(["inspect", "--urdf", "/nonexistent/robot.urdf"], capfd),
                    "fbc inspect: error: cannot read URDF '/nonexistent/robot.urdf': No such file or directory")


def test_swapped_limits_load_without_a_warning(tmp_path, capfd):
    """lower > upper is no limit (docs/how-to/mount-your-arm.md); the middle of such a range printed a numpy
    RuntimeWarning."""
    path = tmp_path / "swapped.urdf"
    path.write_text(malformed_urdf.GOOD.replace('lower="-1" upper="1"', 'lower="1" upper="-1"'))
    assert fbc(["inspect", "--urdf", str(path)], capfd) == (0, "")


@pytest.mark.parametrize("exc, status, words", [
    (ZeroDivisionError("float division by zero"), 1, "fbc inspect: unexpected error: ZeroDivisionError: float "
                                                     "division by zero (FBC_DEBUG=1 shows the traceback)"),
    (OSError(errno.ENOSPC, "No space left on device", "out/x/summary.json"), 2,
     "fbc inspect: error: out/x/summary.json: No space left on device"),
    (KeyboardInterrupt(), 130, "fbc inspect: interrupted"),
])
def test_the_last_resort_is_one_line_too(exc, status, words, monkeypatch, capfd):
    def fails(args):
        raise exc
    monkeypatch.setattr(cli.inspect, "run", fails)
    assert_one_line(*fbc(["inspect"], capfd), words, status)


def test_fbc_debug_shows_the_traceback(monkeypatch):
    def fails(args):
        raise ZeroDivisionError("float division by zero")
    monkeypatch.setattr(cli.inspect, "run", fails)
    monkeypatch.setenv("FBC_DEBUG", "1")
    with pytest.raises(ZeroDivisionError):
        main(["inspect"])
