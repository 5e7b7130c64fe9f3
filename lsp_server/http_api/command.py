"""``redraft http``: checks what it was told, then runs the app under uvicorn."""

from __future__ import annotations

import argparse
import ipaddress
import logging
import os
from pathlib import Path

log = logging.getLogger(__name__)

DEFAULT_PORT = 8750
# Open connections uvicorn accepts before it answers a plain 503: a guard on file
# descriptors only; requests are bounded, with a JSON 429, by the app (``InFlightBound``).
MAX_CONNECTIONS = 1024
# Each worker holds its own copy of the model (~25 MB more RSS each).
MAX_WORKERS = 16


class RefusedSettings(Exception):
    """The server would not start as asked; the message says why and what to do."""


def add_http_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    http = commands.add_parser("http", help="serve the engine over HTTP (OpenAI-style FIM, llama.cpp /infill)")
    http.add_argument("--host", default="127.0.0.1", help="address to bind (default: loopback only)")
    http.add_argument("--port", type=int, default=DEFAULT_PORT)
    http.add_argument("--api-key-env", metavar="VAR",
                      help="the environment variable holding the API key; every route but /health then needs "
                           "'Authorization: Bearer <key>' (required to bind beyond loopback)")
    http.add_argument("--max-pending", type=int, default=None,
                      help="requests owed an answer at once; more are refused with 429 (default 16)")
    http.add_argument("--workers", type=int, default=1,
                      help="model workers answering side by side, each with its own copy of the model (~25 MB) on "
                           "at most two threads: for a box with cores to spare (default 1; on 2 cores more do not "
                           "answer more)")


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def api_key(variable: str | None, host: str) -> str | None:
    """The key named by ``--api-key-env``; refuses a bind beyond loopback without one."""
    if variable is None:
        if not is_loopback(host):
            raise RefusedSettings(f"refusing to serve on {host} without an API key: anyone who can reach it could "
                                  "use it. Set one in an environment variable and pass --api-key-env VAR, or bind "
                                  "127.0.0.1")
        return None
    key = os.environ.get(variable, "").strip()
    if not key:
        raise RefusedSettings(f"--api-key-env {variable}: the variable is unset or empty")
    return key


def run_http(args: argparse.Namespace, model: Path | None) -> int:
    import uvicorn

    from lsp_server.engine import Engine
    from lsp_server.faults import FaultPlan
    from lsp_server.http_api.admission import Admission
    from lsp_server.http_api.app import create_app
    from lsp_server.http_api.service import DEFAULT_MAX_PENDING, IN_FLIGHT_PER_PENDING, MIN_IN_FLIGHT, HttpService

    key = api_key(args.api_key_env, args.host)
    pending = args.max_pending if args.max_pending is not None else DEFAULT_MAX_PENDING
    if pending < 1:
        raise RefusedSettings("--max-pending must be at least 1")
    if not 1 <= args.workers <= MAX_WORKERS:
        raise RefusedSettings(f"--workers must be between 1 and {MAX_WORKERS}")
    # REDRAFT_FAULTS is off unless set (tests)
    engine = Engine(model, faults=FaultPlan.from_environment(), workers=args.workers)
    engine.start_loading()
    service = HttpService(engine, admission=Admission(pending), api_key=key,
                          max_in_flight=max(MIN_IN_FLIGHT, IN_FLIGHT_PER_PENDING * pending))
    log.warning("redraft http on http://%s:%d (API key %s, %d model worker%s)", args.host, args.port,
                "required" if key else "off", args.workers, "" if args.workers == 1 else "s")
    try:
        uvicorn.run(create_app(service), host=args.host, port=args.port, log_level="warning",
                    timeout_keep_alive=30, limit_concurrency=max(MAX_CONNECTIONS, 2 * service.max_in_flight))
    finally:
        engine.shutdown()
    return 0
