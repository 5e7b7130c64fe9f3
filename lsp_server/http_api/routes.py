"""The routes: OpenAI-shaped FIM completions (``/v1/fim/completions``, streamed and
``diffusing``), next edits (``/v1/edit/completions``), llama.cpp's ``/infill``,
``/v1/models`` and ``/health``."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator, Awaitable
from typing import Any, TypeVar

from sse_starlette.sse import EventSourceResponse
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from lsp_server.http_api.body import bounded, field, read_json, snippets, stop_strings
from lsp_server.http_api.edit_answers import answer_edits, edit_choices, edit_question
from lsp_server.http_api.errors import ApiError, bad_request
from lsp_server.http_api.fim_answers import MAX_TOKENS, FimQuestion, FimReply, answer
from lsp_server.http_api.service import HttpService
from model.languages import PYTHON, Language, language_for, language_named, served_names

MODEL_NAME = "redraft"
DISCONNECT_POLL_S = 0.05
T = TypeVar("T")


def service_of(request: Request) -> HttpService:
    found = request.app.state.service
    assert isinstance(found, HttpService)
    return found


async def health(request: Request) -> Response:
    service = service_of(request)
    return JSONResponse({"status": "ok", "model_loaded": service.engine.loaded(), "pending": service.admission.pending})


async def models(request: Request) -> Response:
    return JSONResponse({"object": "list", "data": [
        {"id": MODEL_NAME, "object": "model", "created": service_of(request).started, "owned_by": "redraft"}]})


async def fim_completions(request: Request) -> Response:
    body = await read_json(request)
    prompt = field(body, "prompt", str)
    served_threshold = service_of(request).options.confidence_threshold
    question = FimQuestion(
        prefix=prompt,
        suffix=field(body, "suffix", str, ""),
        max_tokens=bounded(body, "max_tokens", int, 1, MAX_TOKENS, 32),
        threshold=bounded(body, "confidence_threshold", float, 0.0, 1.0, served_threshold),
        candidates=bounded(body, "n", int, 1, 5, 1),
        stop=stop_strings(body),
        related=snippets(body, "related", "path"),
        language=_language(body),
        states=field(body, "diffusing", bool, False),
    )
    stream = field(body, "stream", bool, False) or question.states
    service = service_of(request)
    if not stream:
        with service.admission.admitted():
            reply = await _unless_disconnected(request, answer(service.engine, question, service.options))
        return JSONResponse(_completion(reply, field(body, "model", str, MODEL_NAME)))
    # Admitted before the stream starts, so that a full server answers 429, not a broken stream.
    place = service.admission.admitted()
    place.__enter__()
    return EventSourceResponse(_stream(request, service, question, field(body, "model", str, MODEL_NAME), place),
                               ping=15)


async def _stream(request: Request, service: HttpService, question: FimQuestion, model: str,
                  place: Any) -> AsyncIterator[dict[str, str]]:
    """OpenAI's completion chunks, then ``[DONE]``. ``diffusing``: each chunk's text is the
    whole canvas as it stands after a pass (``░`` where still masked), the last one the answer."""
    try:
        try:
            reply = await _unless_disconnected(request, answer(service.engine, question, service.options))
        except ApiError as exc:
            yield {"data": json.dumps({"error": {"message": exc.message, "type": exc.type, "code": exc.code}})}
            return
        completion = _completion(reply, model)
        best = reply.choices[0]
        if question.states:
            for state in reply.states:
                if state != best.text:
                    yield {"data": json.dumps(_chunk(completion, 0, state, None))}
            for choice_index, choice in enumerate(reply.choices):
                yield {"data": json.dumps(_chunk(completion, choice_index, choice.text, choice.finish_reason))}
        else:
            for choice_index, choice in enumerate(reply.choices):
                if choice.text:
                    yield {"data": json.dumps(_chunk(completion, choice_index, choice.text, None))}
                yield {"data": json.dumps(_chunk(completion, choice_index, "", choice.finish_reason))}
        yield {"data": "[DONE]"}
    finally:
        place.__exit__(None, None, None)


def _chunk(completion: dict[str, Any], index: int, text: str, finish_reason: str | None) -> dict[str, Any]:
    confidence = completion["choices"][index]["confidence"] if finish_reason is not None else None
    return {"id": completion["id"], "object": "text_completion", "created": completion["created"],
            "model": completion["model"],
            "choices": [{"index": index, "text": text, "finish_reason": finish_reason, "logprobs": None,
                         "confidence": confidence}]}


def _completion(reply: FimReply, model: str) -> dict[str, Any]:
    completion_tokens = sum(c.tokens for c in reply.choices)
    return {
        "id": "cmpl-" + uuid.uuid4().hex[:24],
        "object": "text_completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": i, "text": c.text, "finish_reason": c.finish_reason, "logprobs": None,
                     "confidence": round(c.confidence, 4)} for i, c in enumerate(reply.choices)],
        "usage": {"prompt_tokens": reply.prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": reply.prompt_tokens + completion_tokens},
    }


async def edit_completions(request: Request) -> Response:
    """The next edit: ``{content, cursor, recent_edits, …}`` → ``{choices: [{index, edit:
    {range, newText}, confidence}]}``, no choices when nothing clears the threshold."""
    body = await read_json(request)
    service = service_of(request)
    model = field(body, "model", str, MODEL_NAME)
    question = edit_question(body, service.options)
    with service.admission.admitted():
        edits = await _unless_disconnected(request, answer_edits(service.engine, question, service.options))
    return JSONResponse({"id": "nedit-" + uuid.uuid4().hex[:24], "object": "edit.completion",
                         "created": int(time.time()), "model": model, "choices": edit_choices(question, edits)})


async def infill(request: Request) -> Response:
    """llama.cpp's ``/infill``: the text before the cursor is ``input_prefix`` + ``prompt``
    (llama.vim sends the cursor line's start as ``prompt``), ``input_extra`` the other
    files. A request with ``n_predict`` 0 only warms the context up: llama.vim sends one
    whenever its ring of extra chunks changes."""
    started = time.perf_counter()
    body = await read_json(request)
    prefix = field(body, "input_prefix", str, "") + field(body, "prompt", str, "")
    n_predict = field(body, "n_predict", int, 32)
    fields = field(body, "response_fields", list, [])
    service = service_of(request)
    if n_predict == 0:
        return JSONResponse(_only(fields, _infill_reply("", "limit", 0, 0, started, 0)))
    stop = field(body, "stop", list, [])
    if not all(isinstance(s, str) for s in stop):
        raise ApiError(400, "'stop' must be a list of strings", "invalid_request")
    question = FimQuestion(
        prefix=prefix,
        suffix=field(body, "input_suffix", str, ""),
        max_tokens=max(1, min(MAX_TOKENS, n_predict if n_predict > 0 else MAX_TOKENS)),
        threshold=service.options.confidence_threshold,
        stop=[s for s in stop if s],
        related=snippets(body, "input_extra", "filename"),
    )
    with service.admission.admitted():
        encoded = time.perf_counter()
        reply = await _unless_disconnected(request, answer(service.engine, question, service.options))
    best = reply.choices[0]
    return JSONResponse(_only(fields, _infill_reply(best.text, "limit" if best.finish_reason == "length" else "eos",
                                                    reply.prompt_tokens, best.tokens, encoded, best.confidence)))


def _only(paths: list[Any], reply: dict[str, Any]) -> dict[str, Any]:
    """llama.cpp's ``response_fields``: only those values, each under its path
    (``timings/prompt_n``), as llama.vim reads them."""
    if not paths:
        return reply
    picked: dict[str, Any] = {}
    for path in paths:
        if not isinstance(path, str):
            raise ApiError(400, "'response_fields' must be a list of strings", "invalid_request")
        value: Any = reply
        for part in path.split("/"):
            value = value.get(part, _MISSING) if isinstance(value, dict) else _MISSING
        if value is not _MISSING:
            picked[path] = value
    return picked


_MISSING = object()


def _infill_reply(content: str, stop_type: str, prompt_n: int, predicted_n: int, started: float,
                  confidence: float) -> dict[str, Any]:
    elapsed_ms = (time.perf_counter() - started) * 1000
    return {
        "content": content, "stop": True, "stop_type": stop_type, "model": MODEL_NAME,
        "tokens_predicted": predicted_n, "tokens_evaluated": prompt_n, "tokens_cached": 0, "truncated": False,
        "confidence": round(confidence, 4),
        "timings": {
            # The canvas is filled in parallel: there is no separate prompt phase to time.
            "prompt_n": prompt_n, "prompt_ms": 0.0, "prompt_per_token_ms": 0.0, "prompt_per_second": 0.0,
            "predicted_n": predicted_n, "predicted_ms": round(elapsed_ms, 3),
            "predicted_per_token_ms": round(elapsed_ms / max(predicted_n, 1), 3),
            "predicted_per_second": round(predicted_n / max(elapsed_ms / 1000, 1e-9), 3),
            "truncated": False,
        },
    }


def _language(body: dict[str, Any]) -> Language:
    """The request's ``language`` (a name or an editor's language id), else its ``path``'s;
    Python when it names neither. A language Redraft does not serve is a 400."""
    name, path = field(body, "language", str, ""), field(body, "path", str, "")
    if name:
        found = language_named(name)
        if found is None:
            raise bad_request(f"'language' {name!r} is not served (served: {served_names()})")
        return found
    if not path:
        return PYTHON
    found = language_for(path)
    if found is None:
        raise bad_request(f"'path' {path!r} is in a language that is not served (served: {served_names()})")
    return found


async def _unless_disconnected(request: Request, work: Awaitable[T]) -> T:
    """``work``'s result; if the client goes away first, the work is cancelled (the
    engine's job is stopped between denoising passes) and so is this request."""
    task = asyncio.ensure_future(work)
    try:
        while not task.done():
            await asyncio.wait({task}, timeout=DISCONNECT_POLL_S)
            if not task.done() and await request.is_disconnected():
                task.cancel()
                raise asyncio.CancelledError
        return task.result()
    finally:
        if not task.done():
            task.cancel()
