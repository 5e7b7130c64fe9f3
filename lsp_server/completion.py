"""Inline completion: which of the model's answers to show, and how."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import replace

from lsp_server.document_dialect import Dialect
from lsp_server.engine import Engine, FimQuery, JobStopped, ModelCandidate, ModelUnavailable, RelatedLines
from lsp_server.options import ServerOptions
from lsp_server.scheduling import RequestScheduler
from lsp_server.suggestion_cache import Suggestion, SuggestionCache
from model.fim.suffix_overlap import trim_suffix_overlap
from model.languages import PYTHON, Language

log = logging.getLogger(__name__)


def build_query(
    text: str, offset: int, options: ServerOptions, invoked: bool, related: RelatedLines | None = None,
    language: Language = PYTHON, dialect: Dialect | None = None,
) -> FimQuery:
    """The model's question at ``offset``, its text in the model's dialect (``document_dialect.py``)."""
    prefix, suffix = (dialect or Dialect.at(text, offset)).to_model(text[:offset], text[offset:])
    return FimQuery(
        prefix=prefix,
        suffix=suffix,
        candidates=options.max_candidates if invoked else 1,
        canvas_size=options.canvas_tokens,
        sampler_threshold=options.sampler_threshold,
        max_steps=options.max_steps if invoked else min(options.max_steps, options.automatic_max_steps),
        min_confidence=options.confidence_threshold,
        related=related,
        language=language,
    )


def in_document_dialect(suggestions: list[Suggestion], dialect: Dialect, model_prefix: str) -> list[Suggestion]:
    return [replace(s, text=dialect.to_document(s.text, model_prefix)) for s in suggestions]


def select_suggestions(
    candidates: list[ModelCandidate], suffix: str, threshold: float, limit: int,
    raised: Mapping[str, float] | None = None,
) -> list[Suggestion]:
    """Threshold, clean and deduplicate candidates, best first; ``raised``: the thresholds
    of sources the user keeps rejecting (``feedback_thresholds.py``)."""
    shown: list[Suggestion] = []
    seen: set[str] = set()
    for candidate in sorted(candidates, key=lambda c: c.confidence, reverse=True):
        if candidate.confidence < (raised or {}).get(candidate.source, threshold):
            continue
        text = trim_suffix_overlap(candidate.text, suffix)
        if not text.strip() or text in seen:
            continue
        seen.add(text)
        shown.append(Suggestion(text, candidate.confidence, candidate.source))
    return shown[:limit]


def cache_variant(invoked: bool, options: ServerOptions) -> str:
    """What besides the text around the cursor an answer in the cache depends on."""
    return f"{invoked}:{options}"


class CompletionService:
    """Cache → debounce → model → filter → cache, for one inline-completion request."""

    def __init__(self, engine: Engine, cache: SuggestionCache, scheduler: RequestScheduler,
                 raised: Callable[[float], Mapping[str, float]] = lambda threshold: {}) -> None:
        self.engine = engine
        self.raised = raised  # threshold → the sources' raised thresholds, from the user's feedback
        self.cache = cache
        self.scheduler = scheduler
        self.model_calls = 0  # answered by the model (``redraft/debugState``)

    async def suggest(
        self, uri: str, text: str, offset: int, options: ServerOptions, invoked: bool,
        related: RelatedLines | None = None, language: Language = PYTHON,
    ) -> list[Suggestion]:
        """``related``: the workspace's other files, where copied lines may also come from;
        ``language``: the document's. The suggestions are in the document's
        line breaks and indentation; the model and the cache see the model's."""
        dialect = Dialect.at(text, offset)
        query = build_query(text, offset, options, invoked, related, language, dialect)
        variant = cache_variant(invoked, options)
        cached = self.cache.lookup(uri, query.prefix, query.suffix, variant)
        if cached is not None:
            return in_document_dialect(cached, dialect, query.prefix)
        await self.scheduler.before_model_work(uri)
        suggestions = await self._ask_model(uri, query, options)
        if suggestions is None:
            return []
        self.cache.remember(uri, query.prefix, query.suffix, variant, suggestions)
        if suggestions and not invoked:
            self._speculate(uri, replace(query, prefix=query.prefix + suggestions[0].text), options, variant)
        return in_document_dialect(suggestions, dialect, query.prefix)

    def warm(
        self, uri: str, text: str, offset: int, options: ServerOptions, related: RelatedLines | None = None,
        language: Language = PYTHON,
    ) -> None:
        """The user's cursor came to rest at ``offset`` (``redraft/cursor``): answer an
        Automatic request there at once, ahead of the typing. A request for the document
        stops it, but once its first pass has run the place's context is encoded, so the
        first keystroke there reuses it instead of encoding ~290 rows (38.6 ms in-process);
        and an Automatic request there before any typing is answered from the
        cache. Nothing is done for a place whose answer is cached already (typing on), nor
        while a request for the document is being answered, which a model call for the
        cursor would stop (typing moves the cursor too)."""
        if self.engine.completing(uri):
            return
        query = build_query(text, offset, options, False, related, language)
        variant = cache_variant(False, options)
        if self.cache.lookup(uri, query.prefix, query.suffix, variant) is None:
            self._speculate(uri, query, options, variant, pause_s=0.0)

    async def _ask_model(self, uri: str, query: FimQuery, options: ServerOptions) -> list[Suggestion] | None:
        started = time.perf_counter()
        try:
            candidates = await self.engine.complete(uri, query, options.request_timeout_ms / 1000)
        except (ModelUnavailable, JobStopped):
            return None
        except Exception:
            log.error("inline completion failed", exc_info=True)
            return None
        self.model_calls += 1
        self.scheduler.record_latency(time.perf_counter() - started)
        threshold = options.confidence_threshold
        raised = self.raised(threshold) if options.learn_from_feedback else None
        return select_suggestions(candidates, query.suffix, threshold, query.candidates, raised)

    def _speculate(self, uri: str, query: FimQuery, options: ServerOptions, variant: str,
                   pause_s: float | None = None) -> None:
        """Once the user pauses, answer "what comes after accepting" ahead of time (or,
        ``warm``, what the place the cursor came to asks for)."""

        async def work() -> None:
            suggestions = await self._ask_model(uri, query, options)
            if suggestions is not None:
                self.cache.remember(uri, query.prefix, query.suffix, variant, suggestions)

        self.scheduler.speculate(uri, work, pause_s)
