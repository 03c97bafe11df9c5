# Two commands from a fresh clone: `make demo` and `make test`.
# Both create .venv if missing and install the pinned dependencies first.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

# ROS 2 traffic stays on this machine: Fast DDS with shared memory only (no UDP
# sockets, no multicast discovery), and a domain of our own, whatever ROS_DOMAIN_ID
# the shell has (shared memory reaches every process on this host in that domain,
# a robot's drivers included).  Test modules that start nodes pick their own domain.
# On a robot, the user's DDS settings apply.
export FBC_ROS_DOMAIN ?= 61
export FASTDDS_BUILTIN_TRANSPORTS := SHM
export RMW_IMPLEMENTATION := rmw_fastrtps_cpp
export ROS_DOMAIN_ID := $(FBC_ROS_DOMAIN)
export RCUTILS_COLORIZED_OUTPUT := 0
export MPLBACKEND := Agg
# Python caches the package's bytecode even where the shell says not to: make test starts ~200 Python
# processes (nodes, subprocesses), each of which would compile the package's modules anew.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: setup demo test test-core bench sweep stability reorient loops lock clean

setup: $(STAMP)

# The pinned ROS 2 (Kilted) wheels are built for CPython 3.11 on manylinux_2_28 x86_64.
$(STAMP): requirements/lock.txt setup.py pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' || { \
	  echo "make: needs Python 3.11 (the pinned ROS 2 wheels are cp311); $(PYTHON) is $$($(PYTHON) --version 2>&1)."; \
	  echo "      Install python3.11 and run: make PYTHON=python3.11 <target>"; exit 1; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements/lock.txt
	$(PY) -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
	@echo "Compiling the package's kernels into numba's cache (once, about 30 s)"
	$(PY) -c 'from floating_base_control.compiled import compile_all; compile_all()'
	touch $@

# The orbital scenario as two ROS 2 processes over DDS (shared memory), then the same
# scenario without ROS for comparison; report and video (MuJoCo offscreen) in out/orbital/.
demo: $(STAMP)
	$(VENV)/bin/fbc demo orbital --ros --compare --video --out out/orbital

# FBC_REQUIRE_ROS: the ROS 2 tests fail instead of skipping if the ROS wheels are missing.
# TEST_WORKERS test processes (pytest-xdist), each taking whole files (their module fixtures are built once);
# the ROS tests take a domain of their own each (test/helpers/ros_harness.py), so that two at once never meet,
# and the files whose nodes run at real-time priority go to one process, one after another (test/conftest.py).
# Two: on two cores the suite takes ~4.5 minutes instead of ~9.  Three are no faster there (the suite is
# CPU-bound): beside two CPU burners 546 s against 554 s for two from a fresh clone, and slower when idle.
# TEST_WORKERS=1: one process, no pytest-xdist.
TEST_WORKERS ?= 2
test: $(STAMP)
	FBC_REQUIRE_ROS=1 $(PY) -m pytest -q $(if $(filter 1,$(TEST_WORKERS)),,-n $(TEST_WORKERS) --dist loadfile)

# The core's math alone (no ROS 2, no simulator, nothing slow): the quick check while changing an equation.
test-core: $(STAMP)
	$(PY) -m pytest -q -m "not ros and not sim and not slow"

bench: $(STAMP)
	cd bench && ../$(PY) run.py

# Robustness of the orbital controller; rewrites docs/results/robustness.md (about 4 min on 2 cores).
sweep: $(STAMP)
	$(VENV)/bin/fbc sweep orbital --out out/sweep --doc docs/results/robustness.md

# Margins of the default gains with the loop delay, and the demos with and without it; rewrites
# docs/results/stability.md (about 10 min on 2 cores).
stability: $(STAMP)
	$(VENV)/bin/fbc stability --demos --doc docs/results/stability.md

# The reorientation planner's runs (ideal, realistic, momentum, the LWR's plan); rewrites docs/results/reorientation.md
# (about 10 min on 2 cores).
reorient: $(STAMP)
	$(PY) -m floating_base_control.experiments.orbital.reorient_report --out out/reorient --doc docs/results/reorientation.md

# The motion tasks in the in-process loop beside the DDS loop in real time, on the machine as it is and beside
# two CPU burners, with the load of each run; rewrites docs/results/loops.md and the README's table (about 3 min).
loops: $(STAMP)
	$(VENV)/bin/fbc loops --burners 0 2 --doc docs/results/loops.md --readme README.md

# Re-resolve the pinned set from requirements/base.in.
lock:
	rm -rf /tmp/fbc-lock && $(PYTHON) -m venv /tmp/fbc-lock
	/tmp/fbc-lock/bin/pip install --quiet -r requirements/base.in
	/tmp/fbc-lock/bin/python requirements/freeze.py > requirements/lock.txt

clean:
	rm -rf $(VENV) build *.egg-info
