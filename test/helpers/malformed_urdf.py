"""Malformed URDFs, each with the words its error must say: the loader, the ``fbc`` commands and the
nodes' start are tested with them (test/core/test_urdf_errors.py, test/cli/test_cli_errors.py,
test/ros/test_node_start_errors.py).

``GOOD`` is a base and an arm on a revolute joint ``j1``; every case breaks one thing in it.
"""
GOOD = """<robot name="r">
  <link name="base"><inertial><mass value="10"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/>
  </inertial></link>
  <link name="arm"><inertial><origin xyz="0.5 0 0"/><mass value="1"/>
    <inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="arm"/><origin xyz="0 0 0.1" rpy="0 0 0"/>
    <axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="10" velocity="1"/></joint>
</robot>
"""

_LINK_C = '<link name="c"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1"/></inertial></link>'

#: name -> (URDF text, what the error says besides the file's name)
CASES = {
    "broken XML": (GOOD[:200], "does not parse: unclosed token"),
    "NaN origin": (GOOD.replace('xyz="0 0 0.1"', 'xyz="0 nan 0.1"'),
                   "joint 'j1' has <origin xyz=\"0 nan 0.1\">; expected three finite numbers"),
    "missing parent": (GOOD.replace('<parent link="base"/>', '<parent link="basis"/>'),
                       "joint 'j1' has parent link 'basis', which is not a <link> of the URDF"),
    "negative mass": (GOOD.replace('<mass value="1"/>', '<mass value="-1"/>'), "link 'arm' has negative mass -1.0"),
    "0 DoF": (GOOD.replace('type="revolute"', 'type="fixed"'), "no movable joints"),
    "zero axis": (GOOD.replace('<axis xyz="0 0 1"/>', '<axis xyz="0 0 0"/>'),
                  "joint 'j1' has <axis xyz=\"0 0 0\">; expected a non-zero axis"),
    "two roots": (GOOD.replace("</robot>", _LINK_C + "</robot>"), "2 root links (links that are no joint's child)"),
    "two parents": (GOOD.replace("</robot>", _LINK_C + '<joint name="j2" type="fixed"><parent link="c"/>'
                                 '<child link="arm"/></joint></robot>'),
                    "link 'arm' is the child of two joints, 'j1' and 'j2'"),
    "link named twice": (GOOD.replace('<link name="arm">', '<link name="base">'),
                         "link names used more than once: ['base']"),
    # what only urdfdom refuses: its cause, in the package's one line
    "infinite limit": (GOOD.replace('upper="1"', 'upper="inf"'), "upper value (inf) is not a valid float"),
}


def write(directory, name):
    """Path (str) of case ``name``'s URDF written in ``directory``."""
    path = directory / (name.replace(" ", "_") + ".urdf")
    path.write_text(CASES[name][0])
    return str(path)


def urdfdom_lines(text):
    """Lines of ``text`` in urdfdom's own format (console_bridge: ``Error:   ...`` / ``at line N in ...``)."""
    return [line for line in text.splitlines()
            if line.startswith(("Error:", "Warning:")) or line.lstrip().startswith("at line ") or "urdfdom" in line]
