"""Benchmark the inbound webhook: sustained requests/s and ack latency at 50 and 200 requests/s.

A separate load process sends signed Twilio inbound requests over loopback to (a) `tandem serve`
on SQLite and (b) the production layout on PostgreSQL (gunicorn web + `tandem worker`), while the
real conversation flow answers every message through a scripted OpenAI-compatible server that
replies at once. Run by hand: `python bench/webhook.py [--seconds 20] [--layouts serve,production]`.
"""

from __future__ import annotations

import argparse
import itertools
import multiprocessing as mp
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import requests  # noqa: E402
from twilio.request_validator import RequestValidator  # noqa: E402

from bench.common import database, percentile  # noqa: E402
from tests.fakes.openai_api import FakeOpenAI, ScriptedReply  # noqa: E402

TOKEN, AUTH = "bench-api-token", "bench-auth-token"
PARTICIPANTS = 200
BIN = Path(sys.executable).parent


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_up(url: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if requests.get(url + "/health", timeout=1).status_code == 200:
                return
        except requests.RequestException:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"{url} did not come up")


def _load(url: str, rate: int, seconds: float, phones: list[str], out: mp.Queue) -> None:
    """Open-loop load: one request every 1/rate s, latencies measured per request."""
    validator = RequestValidator(AUTH)
    sids = itertools.count()
    latencies: list[float] = []
    errors = 0
    lock = threading.Lock()
    local = threading.local()

    def send(n: int) -> None:
        nonlocal errors
        session = getattr(local, "session", None) or requests.Session()
        local.session = session
        form = {
            "MessageSid": f"SM{os.getpid():08x}{next(sids):024x}",
            "From": phones[n % len(phones)],
            "To": "+15005550006",
            "Body": f"message {n}",
            "NumMedia": "0",
        }
        signature = validator.compute_signature(url + "/webhooks/twilio/inbound", form)
        began = time.perf_counter()
        try:
            response = session.post(
                url + "/webhooks/twilio/inbound",
                data=form,
                headers={"X-Twilio-Signature": signature},
                timeout=15,
            )
            ok = response.status_code == 200
        except requests.RequestException:
            ok = False
        with lock:
            if ok:
                latencies.append(time.perf_counter() - began)
            else:
                errors += 1

    total = int(rate * seconds)
    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=64) as pool:
        for n in range(total):
            delay = start + n / rate - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            pool.submit(send, n)
    elapsed = time.perf_counter() - start
    out.put((latencies, errors, elapsed))


def _measure(url: str, rate: int, seconds: float, phones: list[str]) -> str:
    out: mp.Queue = mp.Queue()
    proc = mp.Process(target=_load, args=(url, rate, seconds, phones, out))
    proc.start()
    latencies, errors, elapsed = out.get()
    proc.join()
    ms = sorted(x * 1000 for x in latencies)
    return (
        f"{rate:>5} req/s offered  {len(ms) / elapsed:>7.1f} req/s answered  "
        f"p50 {percentile(ms, 50):>7.1f} ms  p99 {percentile(ms, 99):>7.1f} ms  "
        f"errors {errors}"
    )


def _enroll(url: str) -> list[str]:
    phones = [f"+1415555{n:04d}" for n in range(3000, 3000 + PARTICIPANTS)]
    for phone in phones:
        response = requests.post(
            url + "/conversation/participants",
            timeout=10,
            json={"phone_number": phone},
            headers={"Authorization": f"Bearer {TOKEN}"},
        )
        response.raise_for_status()
    return phones


def _env(url: str, database_url: str, llm: str) -> dict[str, str]:
    return {
        **os.environ,
        "DATABASE_URL": database_url,
        "TANDEM_API_TOKENS": TOKEN,
        "TWILIO_AUTH_TOKEN": AUTH,
        "PUBLIC_BASE_URL": url,
        "MESSENGER": "console",
        "OPENAI_BASE_URL": llm + "/v1",
        "OPENAI_API_KEY": "bench",
        "LOG_LEVEL": "WARNING",
    }


def _run_layout(name: str, kind: str, commands, seconds: float, llm: str) -> None:  # noqa: ANN001
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    with database(kind) as database_url:
        env = _env(url, database_url, llm)
        procs = [
            subprocess.Popen(
                cmd(port), env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )
            for cmd in commands
        ]
        try:
            _wait_up(url)
            phones = _enroll(url)
            for rate in (50, 200):
                print(f"{name:<34}{_measure(url, rate, seconds, phones)}", flush=True)
        finally:
            for proc in procs:
                proc.terminate()
            for proc in procs:
                proc.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--layouts", default="serve,production")
    args = parser.parse_args()
    with FakeOpenAI() as llm:
        llm.script(*[lambda request: ScriptedReply.text("Thanks, noted!")] * 1_000_000)
        layouts = args.layouts.split(",")
        if "serve" in layouts:
            _run_layout(
                "tandem serve (SQLite)",
                "sqlite",
                [lambda p: [str(BIN / "tandem"), "serve", "--port", str(p)]],
                args.seconds,
                llm.url,
            )
        if "production" in layouts:
            _run_layout(
                "gunicorn + worker (PostgreSQL)",
                "postgresql",
                [
                    lambda p: [
                        str(BIN / "gunicorn"),
                        "--workers",
                        "2",
                        "--threads",
                        "8",
                        "--bind",
                        f"127.0.0.1:{p}",
                        "bot.web:create_app()",
                    ],
                    lambda p: [str(BIN / "tandem"), "worker"],
                ],
                args.seconds,
                llm.url,
            )


if __name__ == "__main__":
    tempfile.tempdir = tempfile.gettempdir()
    main()
