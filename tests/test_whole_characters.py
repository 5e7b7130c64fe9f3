"""No answer that holds half of a character reaches the editor: the byte-level model can
write one, which would be inserted as U+FFFD."""

import pytest

from lsp_server.engine import Engine, FimQuery, NextEditQuery
from model.fim.completion_request import Candidate
from model.fim.inference import FimCompleter
from model.next_edit.editor import NextEditor, ProposedEdit


async def test_answers_holding_part_of_a_character_are_dropped(monkeypatch: pytest.MonkeyPatch) -> None:
    answers = [Candidate('ии\ufffd"', 0.9, 3, 4), Candidate('ии"', 0.8, 3, 3)]
    edits = [ProposedEdit(0, 1, 'label = "м\ufffd"\n', 0.9), ProposedEdit(0, 1, 'label = "мир"\n', 0.7)]
    monkeypatch.setattr(FimCompleter, "complete", lambda self, request, should_stop: answers)
    monkeypatch.setattr(NextEditor, "propose", lambda self, *args: edits)
    engine = Engine()
    try:
        shown = await engine.complete("file:///a.py", FimQuery('label = "Приве', '"\n', 2, 32, 0.9, 4), 5.0)
        assert [c.text for c in shown] == ['ии"']
        proposed = await engine.next_edits("file:///a.py", NextEditQuery('label = "мар"\n', (), 0, 3, 0.9, 0.0), 5.0)
        assert [e.new_text for e in proposed] == ['label = "мир"\n']
    finally:
        engine.shutdown()
