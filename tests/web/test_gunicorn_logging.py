"""Under gunicorn (the Procfile's web line) the app's own INFO lines reach the log in the app's
format (time, level, logger): a refused API token and a refused console sign-in each leave a
line, and neither line holds the e-mail address tried (a hash of it instead)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urlencode

from bot.console.accounts import log_name
from bot.core.config import ENV_NAMES
from tests.cli.local_http import free_port
from tests.cli.test_startup_heap import DEADLINE, ROOT, _procfile_web
from tests.conftest import TEST_MASTER_KEY

TOKEN = "a-long-enough-api-token-for-the-test-0123456789"
EMAIL = "dr.who@clinic.example.org"
LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} (INFO|WARNING|ERROR) [\w.]+ ")


def _answer(request: urllib.request.Request | str) -> tuple[int, str, list[str]]:
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            status, body, headers = response.status, response.read(), response.headers
    except urllib.error.HTTPError as error:
        status, body, headers = error.code, error.read(), error.headers
    return status, body.decode(), headers.get_all("Set-Cookie") or []


def test_gunicorn_logs_refused_tokens_and_sign_ins_in_the_apps_format(tmp_path: Path) -> None:
    clean = {k: v for k, v in os.environ.items() if k not in ENV_NAMES}
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {
        **clean,
        "TWILIO_AUTH_TOKEN": "test-auth-token",
        "PUBLIC_BASE_URL": base,
        "DATABASE_URL": f"sqlite:///{tmp_path}/t.db",
        "TANDEM_API_TOKENS": TOKEN,
        "TANDEM_MASTER_KEY": TEST_MASTER_KEY,
    }
    migrate = [sys.executable, "-c", "from bot.cli.main import main; main()", "migrate"]
    subprocess.run(migrate, cwd=tmp_path, env=env, check=True, capture_output=True)
    err = tmp_path / "stderr.txt"
    with err.open("w") as stderr:
        proc = subprocess.Popen(
            _procfile_web(port), cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=stderr
        )
    try:
        deadline = time.monotonic() + DEADLINE
        while True:
            assert proc.poll() is None, err.read_text()
            assert time.monotonic() < deadline, err.read_text()
            try:
                if _answer(f"{base}/health")[0] == 200:
                    break
            except OSError:
                time.sleep(0.2)
        wrong = urllib.request.Request(
            f"{base}/conversation/participants", headers={"Authorization": "Bearer not-the-token"}
        )
        assert _answer(wrong)[0] == 401
        status, page, cookies = _answer(f"{base}/console/login")
        assert status == 200
        csrf = re.search(r'name="csrf_token" value="([^"]+)"', page)
        assert csrf is not None
        form = {"email": EMAIL, "password": "wrong password 123", "csrf_token": csrf.group(1)}
        sign_in = urllib.request.Request(
            f"{base}/console/login",
            data=urlencode(form).encode(),
            headers={"Cookie": "; ".join(c.split(";")[0] for c in cookies), "Origin": base},
        )
        assert _answer(sign_in)[0] == 401
        deadline = time.monotonic() + 30
        while "sign-in was refused" not in err.read_text():
            assert time.monotonic() < deadline, err.read_text()
            time.sleep(0.1)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=DEADLINE)
    log = err.read_text()
    token = [line for line in log.splitlines() if "researcher API: wrong token" in line]
    refused = [line for line in log.splitlines() if "sign-in was refused" in line]
    assert len(token) == 1 and len(refused) == 1, log
    assert LINE.match(token[0]) and " INFO bot.web.auth " in token[0], token
    assert LINE.match(refused[0]) and " INFO bot.console.sign_in " in refused[0], refused
    assert log_name(EMAIL) in refused[0]
    assert EMAIL not in log and "dr.who" not in log and "not-the-token" not in log
