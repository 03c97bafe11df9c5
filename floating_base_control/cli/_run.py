"""What every long command does around its run (not a command): progress with the time left, warnings
kept in a file of the output directory, and a standard output that may close early (``fbc ... | head``)
without stopping the run.
"""
import contextlib
import os
import sys
import time
import warnings

#: Seconds of wall time before the first progress line, and between two lines when the terminal is not a
#: TTY (a TTY gets one line rewritten in place).
PROGRESS_AFTER_S = 3.0
PROGRESS_EVERY_S = 10.0
#: The package's own warnings are shown (one line each); others' go to the file only.
PACKAGE = "floating_base_control"


class Progress:
    """``progress(done)`` with ``done`` in ``[0, total]`` (simulated seconds, say): on standard error, after
    :data:`PROGRESS_AFTER_S` of wall time, how far the run is and the time left at the rate so far; a
    run shorter than that prints nothing.  :meth:`close` ends the line."""

    def __init__(self, total, unit="s simulated", stream=None, clock=time.monotonic):
        self.total, self.unit, self.stream, self.clock = float(total), unit, stream or sys.stderr, clock
        self.start = clock()
        self.last = None
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())

    def __call__(self, done):
        now = self.clock()
        elapsed = now - self.start
        if elapsed < PROGRESS_AFTER_S or not done or (not self.tty and self.last is not None
                                                     and now - self.last < PROGRESS_EVERY_S):
            return
        self.last = now
        left = elapsed / done * max(self.total - done, 0.0)
        line = (f"  {done:.4g} / {self.total:.4g} {self.unit} ({100 * done / self.total:3.0f} %), "
                f"{_duration(elapsed)} elapsed, about {_duration(left)} left")
        self._write(f"\r{line:<78}" if self.tty else line + "\n")

    def close(self):
        if self.tty and self.last is not None:
            self._write("\n")

    def _write(self, text):
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):       # a closed terminal is no reason to stop the run
            pass


def _duration(seconds):
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min"


@contextlib.contextmanager
def warnings_to(path, stream=None):
    """Within the block, every warning goes to the file ``path`` (appended, with where it came from); the
    package's own warnings are also said in one line on ``stream`` (standard error), other libraries'
    only counted there at the end."""
    stream = stream or sys.stderr
    others = []

    def show(message, category, filename, lineno, file=None, line=None):
        with open(path, "a", encoding="utf-8") as f:
            f.write(warnings.formatwarning(message, category, filename, lineno, line))
        if os.sep + PACKAGE + os.sep in filename or filename.startswith(PACKAGE):
            stream.write(f"warning: {' '.join(str(message).split())}\n")
        else:
            others.append(category.__name__)

    with warnings.catch_warnings():
        warnings.simplefilter("default")
        warnings.showwarning = show
        try:
            yield
        finally:
            if others:
                stream.write(f"({len(others)} warning{'s' * (len(others) > 1)} of other libraries in {path})\n")


class ForgivingStdout:
    """Standard output that survives its reader going away: once a write fails with a broken pipe
    (``fbc demo ... | head``), file descriptor 1 goes to ``/dev/null`` and the run goes on to write its
    results."""

    def __init__(self, stream):
        self.stream = stream

    def write(self, text):
        try:
            return self.stream.write(text)
        except BrokenPipeError:
            self._to_devnull()
            return len(text)

    def flush(self):
        try:
            self.stream.flush()
        except BrokenPipeError:
            self._to_devnull()

    def _to_devnull(self):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, self.stream.fileno())
        os.close(devnull)

    def __getattr__(self, name):
        return getattr(self.stream, name)
