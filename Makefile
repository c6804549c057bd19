# Two entry points: `make run` (set up and run on SQLite + console) and `make test` (the suite).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: setup run test lint bench soak mutation safety-model

$(BIN)/tandem: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(BIN)/tandem

setup: $(BIN)/tandem

# The first run writes a new TANDEM_MASTER_KEY into .env (it seals participants' personal data:
# keep it, and keep .env out of version control).
run: setup
	@grep -qs '^TANDEM_MASTER_KEY=..' .env || { \
		echo "TANDEM_MASTER_KEY=$$($(BIN)/tandem keys generate)" >> .env; \
		echo "make run: wrote a new TANDEM_MASTER_KEY into .env (keep it: it opens the data)"; }
	$(BIN)/tandem migrate
	TANDEM_INSECURE_LOCAL=$${TANDEM_INSECURE_LOCAL:-true} $(BIN)/tandem serve

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(BIN)/mypy

test: setup lint
	$(BIN)/pytest

bench: setup
	$(BIN)/python bench/event_store.py
	$(BIN)/python bench/turn.py
	$(BIN)/python bench/webhook.py
	$(BIN)/python bench/timers.py --postgres $${BENCH_POSTGRES_URL:-postgresql+psycopg://postgres@127.0.0.1:5432/postgres}
	$(BIN)/python bench/export.py
	$(BIN)/python bench/retrieval.py
	$(BIN)/python bench/safety.py

# The standing soak under faults (bench/soak.py, docs/performance.md): 500 participants x 180
# simulated days on PostgreSQL in the Procfile's layout; kills workers and the web, restarts
# PostgreSQL twice (pg_ctlcluster: run it where that is yours to restart). Exit 1 if a check fails.
soak: setup
	$(BIN)/python bench/soak.py --participants $${SOAK_PARTICIPANTS:-500} --days $${SOAK_DAYS:-180} --seed $${SOAK_SEED:-1}

# Retrain the learned crisis line from tests/safety_corpus/training (seeded: the same corpus gives
# the same weights.npz bytes); writes bot/conversation/safety_model/ (docs/safety.md).
safety-model: setup
	$(BIN)/python -m bot.conversation.safety_train

# Mutation testing of the pure modules (mutation/run.py): by hand, never by CI; slow.
mutation: setup
	$(BIN)/pip install --quiet -e '.[mutation]'
	nice -n 19 $(BIN)/python mutation/run.py --until $${MUTATION_UNTIL:-99:99} $(MUTATION_ARGS)
