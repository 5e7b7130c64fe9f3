"""``redraft http`` as real clients use it: the ``openai`` SDK, a raw SSE reader of a
``diffusing`` stream, llama.vim's ``/infill`` request, next edits from typed edits and from
unified diffs, the API key, a burst past the bound, and every kind of bad input answered
with a JSON error while the server stays up."""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import openai
import pytest

# A line the file holds three times, typed again in a fourth function: the rest of it is
# copied with high confidence whatever the network writes.
BODY = "    result = normalise_rows(rows, strict=True)\n    return result\n\n\n"
PROMPT = "".join(f"def {name}(rows):\n{BODY}" for name in ("first", "second", "third")) + \
    "def fourth(rows):\n    result = normalise_"
SUFFIX = "\n    return result\n"
ANSWER = "rows(rows, strict=True)"


@dataclass
class Server:
    url: str
    process: subprocess.Popen[bytes]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _start(*extra: str, env: dict[str, str] | None = None) -> Server:
    port = _free_port()
    process = subprocess.Popen([sys.executable, "-m", "lsp_server", "http", "--port", str(port), *extra],
                               env={**os.environ, **(env or {})}, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(url + "/health", timeout=1).json()["model_loaded"]:
                return Server(url, process)
        except httpx.HTTPError:
            pass
        if process.poll() is not None:
            raise AssertionError(f"redraft http exited: {process.stderr.read().decode() if process.stderr else ''}")
        time.sleep(0.2)
    process.kill()
    raise AssertionError("redraft http did not come up in 60 s")


def _stop(server: Server) -> None:
    server.process.terminate()
    server.process.wait(timeout=20)


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    started = _start()
    yield started
    assert started.process.poll() is None, "the server died during the tests"
    _stop(started)


def _fim(server: Server, **body: object) -> httpx.Response:
    return httpx.post(server.url + "/v1/fim/completions", json=body, timeout=30)


def test_the_openai_sdk_gets_a_fim_completion(server: Server) -> None:
    client = openai.OpenAI(base_url=server.url + "/v1/fim", api_key="unused")
    completion = client.completions.create(model="redraft", prompt=PROMPT, suffix=SUFFIX, max_tokens=24)
    choice = completion.choices[0]
    assert choice.text == ANSWER
    assert choice.finish_reason == "stop"
    assert completion.usage is not None and completion.usage.completion_tokens > 0
    assert completion.usage.total_tokens == completion.usage.prompt_tokens + completion.usage.completion_tokens
    assert 0.3 <= (choice.model_extra or {})["confidence"] <= 1


def test_the_sdk_stream_adds_up_to_the_answer(server: Server) -> None:
    client = openai.OpenAI(base_url=server.url + "/v1/fim", api_key="unused")
    whole = client.completions.create(model="redraft", prompt=PROMPT, suffix=SUFFIX).choices[0].text
    chunks = list(client.completions.create(model="redraft", prompt=PROMPT, suffix=SUFFIX, stream=True))
    assert "".join(c.choices[0].text for c in chunks) == whole
    assert chunks[-1].choices[0].finish_reason == "stop"


def test_javascript_and_typescript_are_answered_by_language_or_by_path(server: Server) -> None:
    for extra in ({"language": "javascript"}, {"language": "typescriptreact"}, {"path": "src/app.ts"}):
        reply = _fim(server, prompt="function area(r) {\n  return ", suffix=";\n}\n", confidence_threshold=0.0,
                     **extra)
        assert reply.status_code == 200, reply.text
        assert reply.json()["choices"][0]["text"], extra


def test_below_the_threshold_one_empty_choice_says_why(server: Server) -> None:
    body = _fim(server, prompt=PROMPT, suffix=SUFFIX, confidence_threshold=1.0).json()
    assert body["choices"] == [{"index": 0, "text": "", "finish_reason": "low_confidence", "logprobs": None,
                                "confidence": body["choices"][0]["confidence"]}]
    assert body["choices"][0]["confidence"] < 1.0


def test_a_diffusing_stream_resolves_to_the_unstreamed_answer(server: Server) -> None:
    prompt, suffix = "import os\n\n\ndef python_files(folder):\n    for root, dirs, files in ", "\n"
    answer = _fim(server, prompt=prompt, suffix=suffix, confidence_threshold=0).json()["choices"][0]["text"]
    states: list[str] = []
    with httpx.stream("POST", server.url + "/v1/fim/completions", timeout=30,
                      json={"prompt": prompt, "suffix": suffix, "confidence_threshold": 0, "diffusing": True}) as reply:
        assert reply.headers["content-type"].startswith("text/event-stream")
        lines = [line for line in reply.iter_lines() if line.startswith("data: ")]
    assert lines[-1] == "data: [DONE]"
    for line in lines[:-1]:
        states.append(json.loads(line.removeprefix("data: "))["choices"][0]["text"])
    assert len(set(states)) >= 2
    assert any("░" in state for state in states[:-1])  # masked positions drawn as they resolve
    assert states[-1] == answer


def test_llama_vim_infill_request_is_answered_as_llama_cpp_answers(server: Server) -> None:
    # The fields llama.vim's FIM request sends (autoload/llama.vim), and the ones it reads back.
    request = {
        "id_slot": 0,
        "input_prefix": PROMPT[: PROMPT.rindex("\n") + 1],
        "input_suffix": SUFFIX,
        "input_extra": [{"text": "def normalise_rows(rows, strict):\n    return [r.strip() for r in rows]\n",
                         "time": 0, "filename": "rows.py"}],
        "prompt": PROMPT[PROMPT.rindex("\n") + 1:],
        "n_predict": 128, "top_k": 40, "top_p": 0.99, "stream": False, "samplers": ["top_k", "top_p", "infill"],
        "cache_prompt": True, "t_max_prompt_ms": 500, "t_max_predict_ms": 1000,
        "response_fields": ["content", "timings/prompt_n", "timings/prompt_ms", "timings/prompt_per_token_ms",
                            "timings/prompt_per_second", "timings/predicted_n", "timings/predicted_ms",
                            "timings/predicted_per_token_ms", "timings/predicted_per_second", "truncated",
                            "tokens_cached"],
    }
    reply = httpx.post(server.url + "/infill", json=request, timeout=30)
    assert reply.status_code == 200
    body = reply.json()
    assert body["content"] == ANSWER
    assert set(body) == set(request["response_fields"])
    assert body["timings/predicted_n"] > 0 and body["timings/prompt_n"] > 0
    # Its warm-up request when the ring of extra chunks changes: nothing to predict.
    warm = httpx.post(server.url + "/infill", timeout=30, json={
        "input_prefix": "", "input_suffix": "", "input_extra": request["input_extra"], "prompt": "",
        "n_predict": 0, "t_max_prompt_ms": 1, "t_max_predict_ms": 1})
    assert warm.status_code == 200 and warm.json()["content"] == ""
    # Without response_fields, llama.cpp's whole reply.
    whole = httpx.post(server.url + "/infill", json={**request, "response_fields": None}, timeout=30).json()
    assert whole["stop"] is True and whole["timings"]["predicted_n"] == body["timings/predicted_n"]


# The language server's rename case (tests/test_next_edit_e2e.py): `width` → `w` in the
# signature; its use in the body is the next edit, at the served threshold.
RENAME_DOC = ("def area(width, height):\n    # café ☕: the size of the box\n    half = width / 2\n"
              "    return half * height\n\n\nwidth = 3\n")
RENAMED = RENAME_DOC.replace("(width,", "(w,")
RENAME_DIFF = "--- a/rename.py\n+++ b/rename.py\n@@ -1 +1 @@\n-def area(width, height):\n+def area(w, height):\n"


def _next_edit(server: Server, **body: object) -> httpx.Response:
    return httpx.post(server.url + "/v1/edit/completions", json=body, timeout=30)


def _applied(text: str, edit: dict[str, Any]) -> str:
    """``text`` after a choice's edit, its positions in UTF-16 code units."""
    lines = text.split("\n")

    def offset(at: dict[str, int]) -> int:
        units = lines[at["line"]].encode("utf-16-le")[: 2 * at["character"]]
        return sum(len(line) + 1 for line in lines[: at["line"]]) + len(units.decode("utf-16-le"))

    return text[: offset(edit["range"]["start"])] + edit["newText"] + text[offset(edit["range"]["end"]) :]


def test_a_rename_typed_at_one_use_is_proposed_at_the_next(server: Server) -> None:
    # As an editor sends it, keystroke by keystroke: the word deleted (its text in oldText), `w` typed.
    typed = [{"range": {"start": {"line": 0, "character": 9}, "end": {"line": 0, "character": 14}}, "newText": "",
              "oldText": "width"},
             {"range": {"start": {"line": 0, "character": 9}, "end": {"line": 0, "character": 9}}, "newText": "w"}]
    reply = _next_edit(server, model="redraft", path="rename.py", content=RENAMED,
                       cursor={"line": 0, "character": 10}, recent_edits=typed)
    assert reply.status_code == 200
    body = reply.json()
    assert body["object"] == "edit.completion" and body["model"] == "redraft" and body["id"]
    first = body["choices"][0]
    assert first["index"] == 0 and 0.5 <= first["confidence"] <= 1
    assert _applied(RENAMED, first["edit"]) == RENAMED.replace("half = width", "half = w")


def test_the_same_rename_sent_as_a_unified_diff_gets_the_same_edit(server: Server) -> None:
    typed = _next_edit(server, path="rename.py", content=RENAMED, cursor={"line": 0, "character": 10}, recent_edits=[
        {"range": {"start": {"line": 0, "character": 9}, "end": {"line": 0, "character": 14}}, "newText": "w",
         "oldText": "width"}]).json()
    # Without a path: the document is the file the diff names. Another file's diff before it is history only.
    other = "--- a/box.py\n+++ b/box.py\n@@ -4,3 +4,3 @@\n class Box:\n-    size = 1\n+    size = 2\n \n"
    diffed = _next_edit(server, content=RENAMED, cursor={"line": 0, "character": 10},
                        recent_edits=[other, RENAME_DIFF]).json()
    assert diffed["choices"] and diffed["choices"] == typed["choices"]
    assert _applied(RENAMED, diffed["choices"][0]["edit"]) == RENAMED.replace("half = width", "half = w")


def test_no_choices_when_nothing_clears_the_threshold(server: Server) -> None:
    reply = _next_edit(server, content=RENAMED, cursor={"line": 0, "character": 10}, recent_edits=[RENAME_DIFF],
                       confidence_threshold=1.0)
    assert reply.status_code == 200 and reply.json()["choices"] == []
    quiet = _next_edit(server, content=RENAMED, cursor={"line": 0, "character": 0})  # no recent edits
    assert quiet.status_code == 200 and quiet.json()["choices"] == []


def _edit_body(**fields: object) -> dict[str, object]:
    return {"content": RENAMED, "cursor": {"line": 0, "character": 10}, "recent_edits": [RENAME_DIFF], **fields}


@pytest.mark.parametrize(("body", "says"), [
    ({"cursor": {"line": 0, "character": 0}}, "'content' is required"),
    (_edit_body(cursor=None), "'cursor' is required"),
    (_edit_body(cursor={"line": 7, "character": 1}), "'cursor' (7, 1) is outside content"),
    (_edit_body(cursor={"line": 1, "character": 40}), "is outside content"),
    (_edit_body(cursor={"line": -1, "character": 0}), "'cursor' must be {line, character}"),
    (_edit_body(recent_edits=[RENAME_DIFF, {"range": {"start": {"line": 2, "character": 11},
                                                      "end": {"line": 2, "character": 16}}, "newText": "w"}]),
     "'recent_edits[1]' replaces a non-empty range but has no 'oldText'"),
    (_edit_body(recent_edits=["@@ -1 +1 @@\n-def area(width, height):\n"]), "'recent_edits[0]' is not a unified diff"),
    (_edit_body(recent_edits=["just some words"]), "'recent_edits[0]' is not a unified diff"),
    (_edit_body(recent_edits=[RENAME_DIFF.replace("def area(w,", "def perimeter(w,")]),
     "'recent_edits[0]': the hunk at +1 does not match content"),
    (_edit_body(recent_edits=[{"range": {"start": {"line": 0, "character": 9}, "end": {"line": 0, "character": 9}},
                               "newText": "zzz"}]), "'recent_edits[0]': its newText is not at its range's start"),
    (_edit_body(recent_edits=[{"newText": "w"}]), "'recent_edits[0]' needs 'range'"),
    (_edit_body(recent_edits=[7]), "'recent_edits[0]' must be an object {range, newText} or a unified-diff string"),
    (_edit_body(recent_edits="not a list"), "'recent_edits' must be a list"),
    (_edit_body(confidence_threshold=2), "'confidence_threshold' must be between 0 and 1"),
])
def test_a_bad_next_edit_request_is_a_clear_json_error(server: Server, body: dict[str, object], says: str) -> None:
    reply = _next_edit(server, **body)
    assert reply.status_code == 400
    error = reply.json()["error"]
    assert says in error["message"], error["message"]
    assert (error["type"], error["code"]) == ("invalid_request_error", "invalid_request")
    assert httpx.get(server.url + "/health").status_code == 200


def test_models_and_health(server: Server) -> None:
    models = httpx.get(server.url + "/v1/models").json()
    assert [m["id"] for m in models["data"]] == ["redraft"]
    assert httpx.get(server.url + "/health").json()["status"] == "ok"


@pytest.mark.parametrize(("send", "status", "says"), [
    (lambda url: httpx.post(url + "/v1/fim/completions", content=b"{not json"), 400, "not JSON"),
    (lambda url: httpx.post(url + "/v1/fim/completions", json=[1, 2]), 400, "JSON object"),
    (lambda url: httpx.post(url + "/v1/fim/completions", json={"suffix": ""}), 400, "'prompt' is required"),
    (lambda url: httpx.post(url + "/v1/fim/completions", json={"prompt": 3}), 400, "'prompt' must be a string"),
    (lambda url: httpx.post(url + "/v1/fim/completions", json={"prompt": "x", "max_tokens": 500}), 400,
     "'max_tokens' must be between"),
    (lambda url: httpx.post(url + "/v1/fim/completions", json={"prompt": "x", "stream": "yes"}), 400,
     "'stream' must be true or false"),
    (lambda url: httpx.post(url + "/infill", json={"input_prefix": "x", "input_extra": [{"filename": "a"}]}), 400,
     "'input_extra[0]'"),
    (lambda url: httpx.post(url + "/v1/fim/completions", json={"prompt": "x", "language": "go"}), 400,
     "'language' 'go' is not served (served: python, javascript, typescript, tsx)"),
    (lambda url: httpx.post(url + "/v1/fim/completions", json={"prompt": "x", "path": "main.rs"}), 400,
     "'path' 'main.rs' is in a language that is not served"),
    (lambda url: httpx.post(url + "/v1/fim/completions", content=b" " * 2_100_000), 413, "over"),
    (lambda url: httpx.get(url + "/v1/nothing"), 404, "no route"),
    (lambda url: httpx.get(url + "/v1/fim/completions"), 405, "GET is not allowed"),
])
def test_bad_input_is_a_clear_json_error(server: Server, send, status: int, says: str) -> None:  # type: ignore[no-untyped-def]
    reply = send(server.url)
    assert reply.status_code == status
    error = reply.json()["error"]
    assert says in error["message"] and error["type"] and error["code"]
    assert httpx.get(server.url + "/health").status_code == 200


def test_with_a_key_every_route_but_health_needs_it() -> None:
    keyed = _start("--api-key-env", "REDRAFT_TEST_KEY", env={"REDRAFT_TEST_KEY": "s3cret"})
    try:
        assert httpx.get(keyed.url + "/health").status_code == 200
        refused = httpx.post(keyed.url + "/v1/fim/completions", json={"prompt": "x"})
        assert refused.status_code == 401 and refused.json()["error"]["code"] == "invalid_api_key"
        wrong = httpx.get(keyed.url + "/v1/models", headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401
        client = openai.OpenAI(base_url=keyed.url + "/v1/fim", api_key="s3cret")
        assert client.completions.create(model="redraft", prompt=PROMPT, suffix=SUFFIX).choices[0].text
        with pytest.raises(openai.AuthenticationError):
            openai.OpenAI(base_url=keyed.url + "/v1/fim", api_key="nope").completions.create(
                model="redraft", prompt=PROMPT, suffix=SUFFIX)
    finally:
        _stop(keyed)


def _refused(*arguments: str) -> str:
    """What ``redraft http`` says when it refuses to start as asked."""
    refused = subprocess.run([sys.executable, "-m", "lsp_server", "http", "--port", str(_free_port()), *arguments],
                             capture_output=True, text=True, timeout=60)
    assert refused.returncode != 0 and "Traceback" not in refused.stderr
    return refused.stderr


def test_beyond_loopback_without_a_key_it_refuses_to_start() -> None:
    assert "without an API key" in _refused("--host", "0.0.0.0")
    unset = subprocess.run([sys.executable, "-m", "lsp_server", "http", "--api-key-env", "REDRAFT_UNSET_KEY"],
                           capture_output=True, text=True, timeout=60,
                           env={k: v for k, v in os.environ.items() if k != "REDRAFT_UNSET_KEY"})
    assert unset.returncode != 0 and "REDRAFT_UNSET_KEY" in unset.stderr


def test_a_burst_past_the_bound_is_answered_or_refused_with_retry_after() -> None:
    small = _start("--max-pending", "2")
    try:
        # 100 connections at once: more than the 64 requests the server holds at a time
        # (uvicorn's own bound would have answered every one with a plain 503).
        async def burst() -> list[httpx.Response]:
            async with httpx.AsyncClient(base_url=small.url, timeout=60,
                                         limits=httpx.Limits(max_connections=100)) as client:
                return await asyncio.gather(*(
                    client.post("/v1/fim/completions", json={"prompt": PROMPT + str(n), "suffix": SUFFIX})
                    for n in range(100)))

        replies = asyncio.run(burst())
        statuses = [r.status_code for r in replies]
        assert set(statuses) <= {200, 429} and statuses.count(200) >= 2 and 429 in statuses
        for refused in (r for r in replies if r.status_code == 429):
            assert refused.headers["Retry-After"] == "1"
            assert refused.json()["error"]["type"] == "rate_limit_error"
        assert httpx.get(small.url + "/health").json()["pending"] == 0
    finally:
        _stop(small)


def test_with_two_workers_a_stalled_job_holds_up_only_its_own_worker_and_answers_do_not_change(
        server: Server) -> None:
    # The first model job never finishes on its own (it is stopped at its 2 s deadline).
    two = _start("--workers", "2", env={"REDRAFT_FAULTS": "fim_stall:1"})
    try:
        prompts = [PROMPT.replace("fourth", f"case_{n}") for n in range(3)]
        alone = [_fim(server, prompt=p, suffix=SUFFIX).json()["choices"] for p in prompts]

        async def asked() -> tuple[httpx.Response, list[httpx.Response], bool]:
            async with httpx.AsyncClient(base_url=two.url, timeout=30) as client:
                stalled = asyncio.create_task(client.post("/v1/fim/completions",
                                                          json={"prompt": PROMPT, "suffix": SUFFIX}))
                await asyncio.sleep(0.3)  # the stalled job holds one worker
                answered = [await client.post("/v1/fim/completions", json={"prompt": p, "suffix": SUFFIX})
                            for p in prompts]
                before = not stalled.done()
                return await stalled, answered, before

        stalled, answered, before_the_stalled_one = asyncio.run(asked())
        assert stalled.status_code == 504
        assert [r.status_code for r in answered] == [200] * len(prompts)
        assert before_the_stalled_one  # answered beside it, not after its deadline
        assert [[{k: c[k] for k in ("text", "finish_reason")} for c in r.json()["choices"]] for r in answered] == \
            [[{k: c[k] for k in ("text", "finish_reason")} for c in choices] for choices in alone]
    finally:
        _stop(two)


def test_a_number_of_workers_out_of_bounds_is_refused_with_a_clear_message() -> None:
    assert "--workers must be between 1 and 16" in _refused("--workers", "0")
    assert "--workers must be between 1 and 16" in _refused("--workers", "17")


def test_a_failing_or_stalled_job_is_an_error_and_a_gone_client_frees_the_worker() -> None:
    # The first model job raises, the second and third never finish on their own.
    faulty = _start(env={"REDRAFT_FAULTS": "fim:1,fim_stall:1,fim_stall:2"})
    try:
        failed = _fim(faulty, prompt=PROMPT, suffix=SUFFIX)
        assert failed.status_code == 500 and "failed" in failed.json()["error"]["message"]
        late = _fim(faulty, prompt=PROMPT, suffix=SUFFIX)  # stopped at the 2 s deadline
        assert late.status_code == 504 and late.json()["error"]["code"] == "timeout"
        started = time.monotonic()
        with pytest.raises(httpx.ReadTimeout):
            httpx.post(faulty.url + "/v1/fim/completions", json={"prompt": PROMPT, "suffix": SUFFIX}, timeout=0.3)
        # The client went away: its job is stopped, not left to run to its deadline.
        after = _fim(faulty, prompt=PROMPT, suffix=SUFFIX)
        assert after.status_code == 200 and after.json()["choices"][0]["text"] == ANSWER
        assert time.monotonic() - started < 1.9
    finally:
        _stop(faulty)


def test_a_failing_or_stalled_next_edit_is_an_error_and_a_gone_client_frees_the_worker() -> None:
    faulty = _start(env={"REDRAFT_FAULTS": "next_edit:1,next_edit_stall:1,next_edit_stall:2"})
    body = {"path": "rename.py", "content": RENAMED, "cursor": {"line": 0, "character": 10},
            "recent_edits": [RENAME_DIFF]}
    try:
        failed = _next_edit(faulty, **body)
        assert failed.status_code == 500 and "failed" in failed.json()["error"]["message"]
        late = _next_edit(faulty, **body)  # stopped at the 2 s deadline
        assert late.status_code == 504 and late.json()["error"]["code"] == "timeout"
        started = time.monotonic()
        with pytest.raises(httpx.ReadTimeout):
            httpx.post(faulty.url + "/v1/edit/completions", json=body, timeout=0.3)
        after = _next_edit(faulty, **body)
        assert after.status_code == 200 and after.json()["choices"]
        assert time.monotonic() - started < 1.9
    finally:
        _stop(faulty)


def test_a_body_trickled_too_slowly_is_refused(server: Server) -> None:
    host, port = server.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as raw:
        raw.sendall(b"POST /v1/fim/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    b"Content-Length: 100\r\n\r\n{\"pro")
        reply = _read_one_reply(raw)
    assert reply.startswith("HTTP/1.1 408") and "did not arrive" in reply


def _read_one_reply(raw: socket.socket) -> str:
    """Reads one whole reply: its head and body may come in separate packets."""
    received = b""
    while b"\r\n\r\n" not in received:
        received += raw.recv(4096)
    head, _, body = received.partition(b"\r\n\r\n")
    length = int(re.search(rb"content-length: *(\d+)", head, re.IGNORECASE).group(1))  # type: ignore[union-attr]
    while len(body) < length:
        body += raw.recv(4096)
    return (head + b"\r\n\r\n" + body).decode()
