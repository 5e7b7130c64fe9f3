from lsp_server.suggestion_cache import SHOWN_DOCUMENTS, Suggestion, SuggestionCache


def test_typing_the_start_of_the_suggestion_serves_the_rest_without_the_model() -> None:
    cache = SuggestionCache()
    cache.remember("u", "x = comp", "\n", "auto", [Suggestion("ute(a, b)", 0.8)])
    assert cache.lookup("u", "x = compute(", "\n", "auto") == [Suggestion("a, b)", 0.8)]


def test_typing_something_else_asks_the_model_again() -> None:
    cache = SuggestionCache()
    cache.remember("u", "x = comp", "\n", "auto", [Suggestion("ute(a, b)", 0.8)])
    assert cache.lookup("u", "x = compa", "\n", "auto") is None
    assert cache.lookup("u", "x = compute(a, b)", "\n", "auto") is None  # nothing left to show


def test_a_place_asked_about_before_is_answered_from_the_lru() -> None:
    cache = SuggestionCache(capacity=2)
    cache.remember("u", "a", "s", "auto", [Suggestion("1", 0.5)])
    cache.remember("u", "b", "s", "auto", [])
    assert cache.lookup("u", "a", "s", "auto") == [Suggestion("1", 0.5)]
    assert cache.lookup("u", "b", "s", "auto") == []
    cache.remember("u", "c", "s", "auto", [Suggestion("3", 0.5)])
    assert cache.lookup("u", "a", "s", "auto") is None  # the least recently used went first


def test_type_through_is_kept_for_the_documents_shown_most_recently_only() -> None:
    cache = SuggestionCache()
    for n in range(SHOWN_DOCUMENTS + 1):  # documents opened one after another, never closed
        cache.remember(f"doc{n}", "x = comp", f"\n# {n}", "auto", [Suggestion("ute(a, b)", 0.8)])
    assert cache.lookup("doc0", "x = compu", "\n# 0", "auto") is None  # the oldest went
    assert cache.lookup("doc1", "x = compu", "\n# 1", "auto") == [Suggestion("te(a, b)", 0.8)]
