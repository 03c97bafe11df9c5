"""A node whose configuration is unusable at start logs one line naming the parameter or the file and
exits with status 2: no traceback, no urdfdom line.  One process start per kind of failure (a URDF
that does not load, a start value out of range, of the wrong type, not one of the choices, ``joints``
that are not the URDF's, a lock outside its joint's range), spread over the four nodes; the processes
start together and each test waits for its own to exit."""
import pytest

from helpers import malformed_urdf

ros_harness = pytest.importorskip("helpers.ros_harness")

#: the longest wait for a refused node to exit (s): its imports, on a loaded machine
EXIT_TIMEOUT = 120.0

#: name -> (node module, parameters (a malformed URDF by its case name in malformed_urdf), words of the line)
STARTS = {
    "controller: NaN in a joint origin": ("orbital_controller", {"urdf": "NaN origin"},
                                          "joint 'j1' has <origin xyz=\"0 nan 0.1\">; expected three finite numbers"),
    "controller: stiffness out of its range": ("orbital_controller", {"stiffness.panda_joint1": "-5.0"},
                                               "parameter stiffness.panda_joint1 = -5.0 is outside its range "
                                               "[0, 2000]"),
    "sim: joints not the URDF's": ("orbital_sim", {"joints": "[a,b]"},
                                   "parameter joints ['a', 'b'] must list the URDF's joints"),
    "sim: a joint whose parent link does not exist": ("orbital_sim", {"urdf": "missing parent"},
                                                      "joint 'j1' has parent link 'basis', which is not a <link>"),
    "sim: a lock outside the joint's range": ("orbital_sim", {"locked_joints": "[panda_joint4]",
                                                               "locked_positions": "[1.0]"},
                                              "cannot lock 'panda_joint4' at 1: outside its range "
                                              "[-3.0718, -0.0698]"),
    "hopper controller: an integer for a float": ("hopper_controller", {"K_r": "5"},
                                                  "parameter K_r = 5 is not a floating-point number (5.0, not 5)"),
    "hopper sim: not one of the choices": ("hopper_sim", {"floor": "ice"},
                                           "parameter floor = 'ice' must be one of ['viscoelastic', 'mujoco']"),
    "sim: an empty list where three numbers are needed": ("orbital_sim", {"mu0_v": "[]"},
                                                          "parameter mu0_v = [] is empty: it takes a list of "
                                                          "floating-point numbers"),
}


@pytest.fixture(scope="module")
def started(tmp_path_factory):
    """Every node of ``STARTS``, started at once (in its own process group)."""
    directory = tmp_path_factory.mktemp("urdf")
    domain = ros_harness.domain_for(__name__)
    procs = {}
    for name, (module, params, _) in STARTS.items():
        params = {k: malformed_urdf.write(directory, v) if k == "urdf" else v for k, v in params.items()}
        procs[name] = ros_harness.start_node(module, domain, params)
    yield procs
    for proc in procs.values():
        if proc.poll() is None:
            ros_harness.signal_group(proc, 9)
            proc.wait()


@pytest.mark.parametrize("name", list(STARTS))
def test_unusable_configuration_is_one_line_and_exit_2(name, started):
    proc = started[name]
    output = ros_harness.output(proc, timeout=EXIT_TIMEOUT)
    words = STARTS[name][2]
    assert proc.returncode == 2, output
    assert len(output.splitlines()) == 1, output
    assert "[FATAL]" in output and "cannot start: " in output and words in output, output
    assert "Traceback" not in output and not malformed_urdf.urdfdom_lines(output), output
