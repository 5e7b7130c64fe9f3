"""`redraft bench latency`: typing through the real server, here inside a workspace."""

import sys
from pathlib import Path

from lsp_server.bench.latency import format_latency, run_latency_bench, typing_spots
from lsp_server.options import ServerOptions

SERVER = [sys.executable, "-m", "lsp_server", "serve"]


def test_typing_in_a_workspace_answers_every_keystroke_or_drops_it_for_the_next(tmp_path: Path) -> None:
    body = "".join(f"def handler_{n}(request):\n    return respond(request, status={n})\n\n" for n in range(30))
    module = tmp_path / "handlers.py"
    module.write_text(body)
    (tmp_path / "views.py").write_text(body.replace("handler_", "view_"))
    [(path, text, start, end)] = typing_spots([module], 1, seed=0)
    assert path == module and start >= 1_000 and text[start:end].strip()
    report = run_latency_bench([module], 1, 20.0, SERVER, workspace=tmp_path)
    typed = len(text[start:end].lstrip())
    assert report.errors == 0 and report.requests == typed and len(report.latencies_ms) >= 1
    assert report.cold_start_ms > 0 and "cold start to first answer" in format_latency(report, 20.0)
    assert report.threshold == ServerOptions().confidence_threshold  # what users get, unless told otherwise
    # The server worked while the user typed, and rests once they stop: a second of quiet
    # costs it far less than a second of CPU (a busy loop would cost one or two).
    assert report.typing_cpu_s > 0 and 0 <= report.idle_cpu_s < 0.5
    assert "server CPU while typing" in format_latency(report, 20.0)


def test_the_threshold_reaches_the_server_and_the_table(tmp_path: Path) -> None:
    module = tmp_path / "handlers.py"
    module.write_text("".join(f"def handler_{n}(request):\n    return respond(request, status={n})\n\n"
                              for n in range(30)))
    report = run_latency_bench([module], 1, 20.0, SERVER, threshold=1.0)  # no confidence reaches 1
    assert report.errors == 0 and report.latencies_ms and report.shown == 0
    assert ["confidence", "threshold", "1"] in [row.split() for row in format_latency(report, 20.0).splitlines()]
