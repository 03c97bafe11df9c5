"""What a fresh interpreter loads to run a few lines of code: one per case, in one subprocess.

``python -c "<common>; <case>"`` per case spends most of its time on ``<common>``, the imports every
case begins with (the package's ``__init__``, its numerical stack, rclpy).  Here one interpreter runs
``<common>`` once and forks a child per case, which runs ``<case>`` and reports ``sys.modules``: the
child starts from the state a fresh ``python -c "<common>; <case>"`` has after ``<common>`` (the
script itself imports nothing that the interpreter's start-up did not), so it loads what that one
would.  ``<common>`` must be what each case would run first, and start no thread (a fork copies only
the thread that calls it).  The children run one after the other."""
import subprocess
import sys
import tempfile

#: argv: the report's path, ``<common>``, then name, code and clean-up code (run once the modules are
#: taken) of each case.  A child reports on a pipe
#: "M" and its modules, or "E" and the traceback of what it raised; the report holds name and
#: message of each case, NUL-separated.
_SCRIPT = r'''
import os, sys
exec(sys.argv[2])
records = []
for name, code, cleanup in zip(sys.argv[3::3], sys.argv[4::3], sys.argv[5::3]):
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            exec(code)
            message = "M" + " ".join(sorted(sys.modules))
            exec(cleanup)
        except BaseException:
            import traceback
            message = "E" + traceback.format_exc()
        with os.fdopen(write, "w") as out:
            out.write(message)
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as inp:
        message = inp.read()
    _, status = os.waitpid(pid, 0)
    records += [name, message or f"Ethe child ended without a report (wait status {status})"]
with open(sys.argv[1], "w") as report:
    report.write("\0".join(records))
'''


def modules_loaded(common, cases, env=None, timeout=300):
    """``{name: set of the names in sys.modules}`` once ``common`` then ``cases[name]`` ran in a fresh
    interpreter (forked after ``common``, see the module's docstring); a case that raised gives its
    traceback (a string) in place of the set.  A case is code, or ``(code, clean-up code)``."""
    with tempfile.NamedTemporaryFile(mode="r") as report:
        args = [sys.executable, "-c", _SCRIPT, report.name, common]
        for name, code in cases.items():
            args += [name, *((code, "") if isinstance(code, str) else code)]
        result = subprocess.run(args, capture_output=True, text=True, timeout=timeout, env=env)
        assert result.returncode == 0, result.stderr
        records = report.read().split("\0")
    return {name: set(message[1:].split()) if message[0] == "M" else message[1:]
            for name, message in zip(records[::2], records[1::2])}
