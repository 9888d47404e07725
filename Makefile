# ODP: every entry point. `make test` and `make demo` work on a fresh clone with only Python 3.11,
# Java 17, Node and Maven installed; each target installs what it needs and is idempotent.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
CACHE := .cache
UV_VERSION := 0.13.9
UV_DIR := $(CACHE)/uv
UV := $(UV_DIR)/bin/uv
# uv trusts the system's certificate store, as pip does (where a proxy's authority is installed), not only its own.
export UV_SYSTEM_CERTS := 1
HUDI_VERSION := 1.0.2
HUDI_BUNDLE := hudi-spark3.5-bundle_2.12
HUDI_JAR := $(CACHE)/jars/$(HUDI_BUNDLE)-$(HUDI_VERSION).jar
# The reader Athena documents (Hudi 0.15.0): the consumers' read-back of every table (sandbox/consumer_reader.py).
CONSUMER_HUDI_VERSION := 0.15.0
CONSUMER_HUDI_JAR := $(CACHE)/jars/$(HUDI_BUNDLE)-$(CONSUMER_HUDI_VERSION).jar
M2_REPO ?= $(HOME)/.m2/repository
export ODP_HUDI_BUNDLE_JAR := $(abspath $(HUDI_JAR))
export ODP_HUDI_CONSUMER_BUNDLE_JAR := $(abspath $(CONSUMER_HUDI_JAR))
# checkov in its own venv (requirements-checkov.txt says why); tests/infra/test_checkov.py runs this program.
CHECKOV_VENV := $(CACHE)/checkov
export ODP_CHECKOV := $(abspath $(CHECKOV_VENV)/bin/checkov)
# ODP's own JVM classes (jvm/README.md), compiled against the bundle: the catalog sync's partition extractor and the
# MERGE_ON_READ compaction strategy.
EXTENSIONS_JAR := $(CACHE)/jars/odp-hudi-extensions.jar
EXTENSIONS_SOURCES := $(shell find jvm -name '*.java' 2>/dev/null | sort)
export ODP_HUDI_EXTENSIONS_JAR := $(abspath $(EXTENSIONS_JAR))
# The class data archive of the local Spark JVM (sandbox/class_archive.py, docs/decisions/023): every local session
# (tests, the sandbox, the demo; never Glue's) maps its Spark and Hudi classes from it instead of loading them.
CLASS_ARCHIVE := $(CACHE)/jvm/odp-local.jsa
# Hudi sizes records with JOL, whose first use in a JVM tries to attach to it twice (dynamic attach, then the HotSpot
# Serviceability Agent from a second `java` process); here both are refused, after about 1.6 s and 2 CPU-seconds per
# JVM. The two -Djol flags skip the attempts; JOL then works as it does after they fail (docs/decisions/023).
JOL_NO_ATTACH := -Djol.skipDynamicAttach=true -Djol.skipHotspotSAAttach=true
# Without Hadoop's native library (the pyspark wheel has none) Hadoop starts a `chmod` process for every local file and
# folder it creates, about 6 ms each; ODP's local file system (jvm/local-filesystem) sets the same bits through Java.
# Spark reads `spark.*` system properties as settings (docs/decisions/035).
LOCAL_FILE_SYSTEM := -Dspark.hadoop.fs.file.impl=odp.local.NioLocalFileSystem
# Spark and Hudi run a wide, flat set of methods: over a long local session the C2 compiler kept a third of the JVM's
# CPU, compiling each hot method with everything it inlines. Shallower inlining made C2's work a third smaller and
# tests/unit/etl's CPU about 15% smaller, with code as fast (docs/decisions/036). C1 ignores these flags.
JIT_INLINING := -XX:MaxInlineLevel=9 -XX:FreqInlineSize=150 -XX:InlineSmallCode=1500
# Hadoop's configuration remembers which file set each of its about 960 properties and gzips that list per property in
# every copy Spark and Hudi serialise into a task: about 10 ms of the 11 a copy costs. ODP's Spark plugin
# (jvm/local-profile) drops those sources from the session's configuration (docs/decisions/039).
UNTRACED_HADOOP_CONFIGURATION := -Dspark.plugins=odp.local.UntracedHadoopConfigurationPlugin
export ODP_LOCAL_JVM_OPTIONS := -XX:SharedArchiveFile=$(abspath $(CLASS_ARCHIVE)) -Xlog:cds=off $(JOL_NO_ATTACH) $(LOCAL_FILE_SYSTEM) $(UNTRACED_HADOOP_CONFIGURATION) $(JIT_INLINING)
export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION := 20
# Compiled bytecode goes to one cache outside the source tree, shared by every Python process of the run (the pytest
# workers, the sandbox's and the benchmark's children, cfn-lint, checkov): the first import of a module compiles it, the
# others read it. uv installs no .pyc files, and compiling from source on every import cost each process seconds (the
# CDK app about 4 s, cfn-lint and checkov about 3 s each). No __pycache__ folder appears in the tree.
export PYTHONPYCACHEPREFIX := $(abspath $(CACHE)/pycache)
# A PYTHONDONTWRITEBYTECODE from the caller's environment (some CI images and shells set it) would leave that cache
# empty and make every process compile every module it imports again: collecting the tests alone took 20 s instead of 7.
unexport PYTHONDONTWRITEBYTECODE
# pytest-xdist workers of `make test`: one per core of the 2-core machine the suite is sized for (tests/README.md);
# --dist loadfile keeps a file's tests on one worker, so a module's fixtures (a synth, a sandbox flow) run once.
PYTEST_WORKERS ?= 2

.PHONY: help setup installed test unit lint format schema validate demo synth bench bench-synth clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

# uv installs the pinned requirements (pip took about 65 s for .venv and 40 s for checkov's, uv about a third of that
# from the same registry); it lives in a folder of its own, put there by the Python's own pip (about 3 s; a venv for it
# took 8 s more, to install the venv's pip first), or in a small venv where that Python has no pip. --seed: .venv keeps
# pip, which infrastructure/assets.py runs to build the Glue wheels.
$(UV):
	@if $(PYTHON) -m pip --version > /dev/null 2>&1; then \
	  echo "$(PYTHON) -m pip install --target $(UV_DIR) uv==$(UV_VERSION)"; \
	  $(PYTHON) -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --no-warn-script-location --target $(UV_DIR) uv==$(UV_VERSION); \
	else \
	  echo "$(PYTHON) -m venv $(UV_DIR) (no pip in $(PYTHON)), then pip install uv==$(UV_VERSION) in it"; \
	  $(PYTHON) -m venv $(UV_DIR) && $(UV_DIR)/bin/python -m pip install --quiet --disable-pip-version-check uv==$(UV_VERSION); \
	fi

$(VENV)/.installed: requirements.txt requirements-dev.txt | $(UV)
	@test -x $(PY) || $(UV) venv --quiet --seed --python $(PYTHON) $(VENV)
	$(UV) pip install --quiet --python $(PY) -r requirements-dev.txt
	@touch $@

$(CHECKOV_VENV)/.installed: requirements-checkov.txt | $(UV)
	@test -x $(CHECKOV_VENV)/bin/python || $(UV) venv --quiet --python $(PYTHON) $(CHECKOV_VENV)
	$(UV) pip install --quiet --python $(CHECKOV_VENV)/bin/python -r requirements-checkov.txt
	@touch $@

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	@touch $@

# A Hudi Spark bundle (the writer's 1.0.2, the consumers' 0.15.0) from Maven Central through Maven (-C: fail on a
# checksum mismatch), then checked once more against the .sha1 Maven Central publishes beside it.
$(CACHE)/jars/$(HUDI_BUNDLE)-%.jar:
	@mkdir -p $(dir $@)
	mvn --batch-mode --quiet -C dependency:copy -Dartifact=org.apache.hudi:$(HUDI_BUNDLE):$* -DoutputDirectory=$(dir $@) -Dmaven.repo.local=$(M2_REPO)
	@published=$$(cut -c1-40 $(M2_REPO)/org/apache/hudi/$(HUDI_BUNDLE)/$*/$(HUDI_BUNDLE)-$*.jar.sha1); \
	  actual=$$(sha1sum $@ | cut -c1-40); \
	  if [ "$$published" != "$$actual" ]; then echo "checksum mismatch for $@: $$actual != $$published"; rm -f $@; exit 1; fi; \
	  echo "$(notdir $@): sha1 $$actual matches Maven Central"

# One Maven at a time: two would write the same local repository (the dependency plugin and its own dependencies).
$(CONSUMER_HUDI_JAR): | $(HUDI_JAR)

# Plain javac + jar (Java 17, release 17: Glue 5.1's JVM), rebuilt when a source or the bundle changes; built in a
# temporary folder and moved into place, so a failed build never leaves a half-written jar.
# Compiled against the bundle and the venv's Spark jars (Avro: Hudi's plan records are Avro classes, which Spark and
# Glue provide, not the bundle).
$(EXTENSIONS_JAR): $(EXTENSIONS_SOURCES) $(HUDI_JAR) $(VENV)/.installed
	@build=$$(mktemp -d) && trap 'rm -rf "$$build"' EXIT && \
	  spark_jars=$$($(PY) -c 'import os, pyspark; print(os.path.join(os.path.dirname(pyspark.__file__), "jars"))') && \
	  javac --release 17 -nowarn -cp "$(HUDI_JAR):$$spark_jars/*" -d "$$build/classes" $(EXTENSIONS_SOURCES) && \
	  jar --create --file "$$build/extensions.jar" --date=2020-01-01T00:00:00Z -C "$$build/classes" . && \
	  mv "$$build/extensions.jar" $@ && echo "built $@"

# Dumped by a JVM that runs nothing else (about a minute) from the committed list of the classes a small demo loads
# (sandbox/odp-local.classlist; `python -m sandbox.class_archive --list` writes it again), again when a jar changes.
CLASS_LIST := sandbox/odp-local.classlist
$(CLASS_ARCHIVE): $(CLASS_LIST) $(HUDI_JAR) $(EXTENSIONS_JAR) $(VENV)/.installed
	$(PY) -m sandbox.class_archive $@

# The bytecode of the Python that every test process imports, compiled while the class archive dumps (each on a core of
# its own): uv installs no .pyc files, so on a fresh clone both pytest-xdist workers compiled the same modules at once
# while they collected the tests (a cold collection 35 s, a warm one 10 s). The collection fails here when a test
# module cannot be imported. Compiled again when the venv changes; a changed source compiles on its next import.
PYCACHE_WARM := $(CACHE)/pycache/.collected
$(PYCACHE_WARM): $(VENV)/.installed
	@mkdir -p $(dir $@)
	@$(PY) -m pytest --collect-only -q -p no:cacheprovider > $(CACHE)/collected.log 2>&1 || { cat $(CACHE)/collected.log; exit 1; }
	@echo "compiled what the tests import: $$(tail -n 1 $(CACHE)/collected.log)"
	@touch $@

# Four jobs at once: the venvs, the CDK CLI and the jars are independent; the class archive waits for what it holds.
setup: ## install the venv, checkov, the CDK CLI, the Hudi jars, ODP's jar and the JVM's class archive
	@$(MAKE) --no-print-directory --jobs=4 --output-sync=target installed

installed: $(VENV)/.installed $(CHECKOV_VENV)/.installed node_modules/.installed $(HUDI_JAR) $(CONSUMER_HUDI_JAR) $(EXTENSIONS_JAR) $(CLASS_ARCHIVE) $(PYCACHE_WARM)

test: setup ## lint, then every test (unit, infra, e2e, bench smoke)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(PY) -m odp.config validate
	$(PY) -m pytest -n $(PYTEST_WORKERS) --dist loadfile

lint: setup ## ruff check and format check
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

format: setup ## apply ruff's fixes and formatting
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

schema: setup ## write config/schema/*.schema.json from the typed models
	$(PY) -m odp.config schema --out config/schema

validate: setup ## validate config/
	$(PY) -m odp.config validate

demo: setup ## run the whole flow on the local sandbox and validate every table
	$(PY) -m odp.config validate
	$(PY) -m sandbox demo

synth: setup ## synthesize every environment's stage and pipeline into cdk.out/
	npx cdk synth --quiet

bench-synth: setup ## time a full synth (target: under 60 s on 2 cores)
	$(PY) -m bench.synth

bench: setup ## the File Processor against HoodieStreamer and a naive rewrite
	$(PY) -m bench run

clean: ## remove caches and build output (keeps .venv and the jar)
	rm -rf cdk.out .pytest_cache .ruff_cache spark-warehouse
