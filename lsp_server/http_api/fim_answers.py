"""One FIM question, as both HTTP shapes ask it: the text around the cursor, other files,
how many tokens, the threshold. Answered by the engine the language server uses, with the
same query and the same filter (``completion.py``), so HTTP and LSP show the same text."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field, replace

from lsp_server.completion import build_query, select_suggestions
from lsp_server.document_dialect import Dialect
from lsp_server.engine import Engine, LineIndex, RelatedLines, RunIndexBuilder
from lsp_server.http_api.errors import engine_reply
from lsp_server.options import ServerOptions
from model.languages import PYTHON, Language

MAX_TOKENS = 64  # the largest canvas the model was trained on


@dataclass(frozen=True)
class FimQuestion:
    prefix: str
    suffix: str
    max_tokens: int = 32
    threshold: float = ServerOptions.confidence_threshold
    candidates: int = 1
    stop: list[str] = field(default_factory=list)
    related: dict[str, str] = field(default_factory=dict)  # other files: path → text
    language: Language = PYTHON
    states: bool = False  # the canvas's intermediate states too (``diffusing``)


@dataclass(frozen=True)
class FimChoice:
    text: str
    confidence: float
    finish_reason: str  # "stop", "length", or "low_confidence" (nothing cleared the threshold; text empty)
    tokens: int


@dataclass(frozen=True)
class FimReply:
    choices: list[FimChoice]
    prompt_tokens: int
    states: list[str]


async def answer(engine: Engine, question: FimQuestion, options: ServerOptions) -> FimReply:
    """Ask the engine; its refusals become HTTP errors (``engine_reply``)."""
    text = question.prefix + question.suffix
    offset = len(question.prefix)
    dialect = Dialect.at(text, offset)
    canvas = 32 if question.max_tokens < 32 else MAX_TOKENS
    asked = replace(options, canvas_tokens=canvas, confidence_threshold=question.threshold,
                    max_candidates=question.candidates)
    query = build_query(text, offset, asked, invoked=question.candidates > 1,
                        related=_related(question.related), language=question.language, dialect=dialect)
    found = await engine_reply(
        engine.answer("http:" + uuid.uuid4().hex, query, options.request_timeout_ms / 1000, question.states))
    shown = select_suggestions(found.candidates, query.suffix, question.threshold, question.candidates)
    choices = [_choice(engine, dialect.to_document(s.text, query.prefix), s.confidence, question) for s in shown]
    if not choices:
        best = max((c.confidence for c in found.candidates), default=0.0)
        choices = [FimChoice("", best, "low_confidence", 0)]
    prompt_tokens = len(engine.token_offsets(query.prefix)) + len(engine.token_offsets(query.suffix))
    states = [dialect.to_document(state, query.prefix) for state in found.states]
    return FimReply(choices, prompt_tokens, states)


def _choice(engine: Engine, text: str, confidence: float, question: FimQuestion) -> FimChoice:
    finish = "stop"
    for stop in question.stop:
        at = text.find(stop)
        if at >= 0:
            text = text[:at]
    offsets = engine.token_offsets(text)
    if len(offsets) > question.max_tokens:
        text, finish = text[: offsets[question.max_tokens - 1][1]], "length"
        offsets = offsets[: question.max_tokens]
    return FimChoice(text, confidence, finish, len(offsets))


def _related(files: dict[str, str]) -> RelatedLines | None:
    if not files:
        return None
    return RelatedLines(LineIndex(files), runs=RunIndexBuilder().replace_all(files))
