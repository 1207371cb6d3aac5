# DQ IK: every target creates the virtual environment it needs.
#   make test      tests on bpy 5.0.1        make test-lts  the same on bpy 4.5.15 (LTS)
#   make build     dist/dq_ik-<version>.zip  make bench     benchmarks/{fk,solve,collision,overhead,reach_rate,production_rig,frame_change,overlay,live,bake,mocap,fullbody}.py
#   make demo      the main job, headless, on a real rig; results in demo_output/

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV ?= .venv
BPY_VERSION ?= 5.0.1
VENV_PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-bpy-$(BPY_VERSION)

.PHONY: test test-lts build bench demo venv clean

$(STAMP):
	$(PYTHON) -m venv $(VENV)
	$(VENV_PY) -m pip install --quiet --upgrade pip
	$(VENV_PY) -m pip install --quiet "bpy==$(BPY_VERSION)" "numpy<2" pytest hypothesis
	touch $@

venv: $(STAMP)

test: $(STAMP)
	$(VENV_PY) -m pytest -q

test-lts:
	$(MAKE) test VENV=.venv-lts BPY_VERSION=4.5.15

build: $(STAMP)
	$(VENV_PY) tests/extension_cli.py build dist

bench: $(STAMP)
	for script in fk solve collision overhead reach_rate production_rig frame_change overlay live bake mocap fullbody; do $(VENV_PY) benchmarks/$$script.py || exit 1; done

demo: $(STAMP)
	$(VENV_PY) demo/run_demo.py demo_output

clean:
	rm -rf dist demo_output
