from lsp_server.completion import select_suggestions
from lsp_server.engine import ModelCandidate
from lsp_server.options import ServerOptions, parse_options
from model.fim.suffix_overlap import repeats_a_neighbour, repeats_the_document, trim_suffix_overlap
from model.languages import PYTHON, TYPESCRIPT


def test_text_repeating_the_closing_bracket_already_there_is_trimmed() -> None:
    assert trim_suffix_overlap("len(items))", ")\n") == "len(items)"
    assert trim_suffix_overlap("x + 1", "\nnext") == "x + 1"


def test_a_line_break_the_suffix_already_starts_with_is_not_repeated() -> None:
    assert trim_suffix_overlap(":\n", "\n    print(value)\n") == ":"
    assert trim_suffix_overlap("    return x\n", "    y = 1\n") == "    return x\n"


def test_candidates_under_the_threshold_or_blank_are_not_shown() -> None:
    candidates = [ModelCandidate("a", 0.2), ModelCandidate("   \n", 0.9), ModelCandidate("b", 0.6)]
    shown = select_suggestions(candidates, "", threshold=0.5, limit=3)
    assert [s.text for s in shown] == ["b"]


def test_duplicates_after_trimming_are_shown_once_best_first() -> None:
    candidates = [ModelCandidate("f(x", 0.7), ModelCandidate("f(x)", 0.8), ModelCandidate("g", 0.75)]
    shown = select_suggestions(candidates, ")", threshold=0.0, limit=3)
    assert [s.text for s in shown] == ["f(x", "g"]


def test_options_parse_camel_case_and_reject_bad_values_with_a_message() -> None:
    options, problems = parse_options({"confidenceThreshold": 0.7, "maxCandidates": "3", "maxSteps": 500})
    assert options.confidence_threshold == 0.7
    assert options.max_candidates == ServerOptions().max_candidates
    assert options.max_steps == ServerOptions().max_steps
    assert len(problems) == 2 and "maxCandidates" in problems[0]


def test_options_that_are_not_an_object_fall_back_to_defaults() -> None:
    options, problems = parse_options([1, 2])
    assert options == ServerOptions() and problems


def test_an_empty_array_is_no_options_as_lua_clients_encode_an_empty_table() -> None:
    tuned = ServerOptions(confidence_threshold=0.6)
    assert parse_options([], tuned) == (tuned, [])
    assert parse_options([]) == (ServerOptions(), [])


def test_as_you_type_requests_get_the_automatic_step_cap_and_invoked_ones_the_full() -> None:
    from lsp_server.completion import build_query

    options, problems = parse_options({"maxSteps": 20, "automaticMaxSteps": 3})
    assert not problems
    assert build_query("x = ", 4, options, invoked=False).max_steps == 3
    assert build_query("x = ", 4, options, invoked=True).max_steps == 20
    lower, _ = parse_options({"maxSteps": 2, "automaticMaxSteps": 6})
    assert build_query("x = ", 4, lower, invoked=False).max_steps == 2  # never above maxSteps


def test_the_query_carries_the_document_s_language() -> None:
    from lsp_server.completion import build_query

    options, _ = parse_options({})
    assert build_query("x = ", 4, options, invoked=False).language is PYTHON
    assert build_query("x = ", 4, options, invoked=False, language=TYPESCRIPT).language is TYPESCRIPT


def test_an_answer_that_writes_the_line_already_below_or_above_the_cursor_repeats_a_neighbour() -> None:
    prefix = "def f():\n    items = []\n"
    assert repeats_a_neighbour(prefix, "    count = 0\n", "    count = 0\n    return items\n")  # the line below
    assert repeats_a_neighbour(prefix, "    items = []\n", "    count = 0\n")  # the line above
    assert repeats_a_neighbour("def f():\n    ", "return x", "\n    return x\n")  # an empty line above it
    assert repeats_a_neighbour("    ret", "urn x", "\n    return x")  # completing the line into its neighbour
    assert repeats_a_neighbour("    ret", "urn x\n", "\r\n    return x\r\n")  # CRLF, trimmed as the server trims


def test_new_lines_blank_lines_and_pairs_already_there_do_not_count() -> None:
    assert not repeats_a_neighbour("def f():\n    items = []\n", "    count = 0\n", "    return items\n")
    assert not repeats_a_neighbour("x = 1\n\n", "\n", "\ny = 2")  # blank lines repeat freely
    assert not repeats_a_neighbour("a\na\n", "b\n", "c\n")  # the document's own pair is not the answer's
    assert not repeats_a_neighbour("", "x = 1", "")


def test_a_top_level_definition_the_document_already_has_is_a_repeat_but_an_indented_one_is_not() -> None:
    prefix = "def area(w, h):\n    \"\"\"Area.\"\"\"\n"
    assert repeats_the_document(prefix, "def area(w, h):\n", "\n    return w * h\n")
    assert repeats_the_document("class A:\n    pass\n\n\n", "class A:\n", "    x = 1\n")
    assert not repeats_the_document(prefix, "def perimeter(w, h):\n", "\n    return w * h\n")
    # Methods of two classes share lines like this one: only a top-level line counts.
    methods = "class A:\n    def __init__(self):\n        pass\n\n\nclass B:\n"
    assert not repeats_the_document(methods, "    def __init__(self):\n", "        self.x = 1\n")
    assert not repeats_the_document("def area_of(w, h):\n    pass\n\n", "def area(w, h):\n", "")  # a longer line


def test_a_line_in_a_run_of_identical_lines_may_repeat_once_more() -> None:
    run = "x.check(1)\nx.check(1)\nx.ch"
    assert not repeats_a_neighbour(run, "eck(1)", "\n")
    assert not repeats_a_neighbour("", "x.check(1)\n", "x.check(1)\nx.check(1)\n")
    assert repeats_a_neighbour("x.check(2)\nx.check(1)\nx.ch", "eck(1)", "\n")  # no run: one line above
    assert repeats_a_neighbour("", "a = 1\na = 1\n", "b = 2\n")  # the answer's own two lines


def test_a_definition_line_the_answer_only_follows_is_not_its_own() -> None:
    twice = "def f():\n    pass\n\n\ndef f():"  # the document's own second definition, cursor at its end
    assert not repeats_the_document(twice, "\n    return 1", "\n")
    assert repeats_the_document("def f():\n    pass\n\n\n", "def f():", "\n")
