"""A malformed URDF is a ModelError naming the file and the cause, checked before urdfdom sees the file;
urdfdom's own lines (C++, on file descriptor 2) never reach the terminal, and what else is written
there during a parse still does."""
import os
import threading

import pytest

from floating_base_control import FloatingBaseModel, ModelError
from floating_base_control import urdf_loader
from helpers import malformed_urdf


@pytest.mark.parametrize("name", list(malformed_urdf.CASES))
def test_malformed_urdf_is_one_error_naming_the_cause(name, tmp_path, capfd):
    path = malformed_urdf.write(tmp_path, name)
    with pytest.raises(ModelError) as err:
        FloatingBaseModel.from_urdf(path)
    assert path in str(err.value) and malformed_urdf.CASES[name][1] in str(err.value)
    assert "\n" not in str(err.value)
    out, printed = capfd.readouterr()
    assert out == "" and printed == "", printed            # nothing of urdfdom's on the terminal


def test_urdfdom_fallback_gives_its_messages_without_its_format(tmp_path, capfd):
    """What the package does not check itself: urdfdom's causes, joined, without its source locations."""
    with pytest.raises(ModelError) as err:
        FloatingBaseModel.from_urdf(malformed_urdf.write(tmp_path, "infinite limit"))
    assert str(err.value).endswith("does not parse: joint [j1]: upper value (inf) is not a valid float; Could not "
                                   "parse limit element for joint [j1]; joint xml is not initialized correctly")
    assert capfd.readouterr().err == ""


def test_other_writes_to_stderr_during_a_parse_still_reach_it(capfd):
    """The capture of file descriptor 2 takes urdfdom's messages only: a log line another thread writes
    meanwhile is written to stderr after the parse (the nodes log from DDS threads)."""
    with urdf_loader._urdfdom_messages() as said:
        os.write(2, b"Error:   Failed to build tree: parent link [x] of joint [j] not found.\n"
                    b"         at line 262 in /project/urdfdom/urdf_parser/src/model.cpp\n")
        writer = threading.Thread(target=os.write, args=(2, b"[WARN] [node]: another thread's line\n"))
        writer.start()
        writer.join()
        assert capfd.readouterr().err == ""                  # held while the parse runs
    assert said == ["Failed to build tree: parent link [x] of joint [j] not found."]
    assert capfd.readouterr().err == "[WARN] [node]: another thread's line\n"


def test_a_good_urdf_loads_silently(tmp_path, capfd):
    path = tmp_path / "good.urdf"
    path.write_text(malformed_urdf.GOOD)
    assert FloatingBaseModel.from_urdf(str(path)).joint_names == ("j1",)
    assert capfd.readouterr() == ("", "")
