"""An Invoked request ranks first what an as-you-type request ranks, then offers the rest
(the beam's runner-ups, canvases forced to start with a runner-up token), on the shipped model."""

import textwrap
from dataclasses import replace
from pathlib import Path

import pytest

from lsp_server.completion import build_query
from lsp_server.engine import FimQuery
from lsp_server.options import ServerOptions
from model.fim.completion_request import CompletionRequest
from model.fim.inference import FimCompleter
from model.model_folder import SHIPPED_DIR
from model.runtime.served_model import ServedModel
from model.runtime.serving import load_served_model


def _as_the_engine_asks(query: FimQuery) -> CompletionRequest:
    return CompletionRequest(query.prefix, query.suffix, query.candidates, query.canvas_size, query.sampler_threshold,
                             query.max_steps, min_confidence=query.min_confidence, related=query.related,
                             language=query.language)


@pytest.fixture(scope="module")
def served() -> ServedModel:
    return load_served_model(SHIPPED_DIR)


@pytest.mark.parametrize("threshold", [0.0, ServerOptions().confidence_threshold])
def test_an_invoked_request_leads_with_the_as_you_type_answer(served: ServedModel, threshold: float) -> None:
    source = Path(textwrap.__file__).read_text()
    options = replace(ServerOptions(), confidence_threshold=threshold)
    # Cursors after the first "= " of assignments and at the start of indented lines, all over the file.
    offsets = [source.index("= ", start) + 2 for start in range(0, len(source), 1500) if "= " in source[start:]]
    offsets += [source.index("\n        ", start) + 9 for start in range(700, len(source), 1500)
                if "\n        " in source[start:]]
    compared = 0
    for offset in offsets:
        # A completer each, so that neither reuses the other's context encoding.
        automatic = FimCompleter(served).complete(_as_the_engine_asks(build_query(source, offset, options, False)))
        invoked = FimCompleter(served).complete(_as_the_engine_asks(build_query(source, offset, options, True)))
        assert len(automatic) <= 1 and len(invoked) <= options.max_candidates
        assert len({c.text for c in invoked}) == len(invoked)
        if automatic:
            compared += 1
            assert (invoked[0].text, invoked[0].confidence) == (automatic[0].text, automatic[0].confidence), offset
    assert compared >= len(offsets) // 2
