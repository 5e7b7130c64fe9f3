import dataclasses
import itertools
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from model.checkpoint import load_model
from model.formats import ContextBudget, canvas_targets, context_cut, context_ids, middle_from_canvas
from model.sampler import CommitRule, SamplerSettings, denoise, select_commits
from model.tokenizer import CodeTokenizer
from model.training.fim_examples import SpanKind, choose_span, make_example

SHIPPED = Path(__file__).resolve().parent.parent / "model" / "weights"


@pytest.fixture(scope="module")
def tokenizer() -> CodeTokenizer:
    return load_model(SHIPPED).tokenizer


def test_threshold_rule_commits_every_confident_position_and_at_least_one() -> None:
    probs = np.array([0.2, 0.95, 0.5, 0.91])
    assert select_commits(probs, CommitRule.THRESHOLD, 0.9).tolist() == [1, 3]
    assert select_commits(np.array([0.2, 0.4]), CommitRule.THRESHOLD, 0.9).tolist() == [1]


def test_one_token_rules_commit_the_best_or_the_leftmost() -> None:
    probs = np.array([0.2, 0.95, 0.5])
    assert select_commits(probs, CommitRule.MOST_CONFIDENT, 0.9).tolist() == [1]
    assert select_commits(probs, CommitRule.LEFT_TO_RIGHT, 0.9).tolist() == [0]


def test_context_keeps_the_text_nearest_the_cursor_within_budget(tokenizer: CodeTokenizer) -> None:
    prefix = "".join(f"line_{i} = {i}\n" for i in range(400))
    suffix = "".join(f"after_{i} = {i}\n" for i in range(400))
    ids = context_ids(tokenizer, prefix, suffix, ContextBudget(total=100, max_suffix=30))
    assert 100 - 32 < len(ids) <= 100
    assert ids[0] == tokenizer.suffix_id and ids[31] == tokenizer.prefix_id
    assert tokenizer.decode(ids[1:31]).startswith("after_0 = 0\n")
    assert tokenizer.decode(ids[32:]).endswith("line_399 = 399\n")


def test_short_prefix_leaves_its_room_to_the_suffix(tokenizer: CodeTokenizer) -> None:
    suffix = "".join(f"after_{i} = {i}\n" for i in range(400))
    ids = context_ids(tokenizer, "x = 1\n", suffix, ContextBudget(total=100, max_suffix=30))
    assert 100 - 32 < len(ids) <= 100 and ids.index(tokenizer.prefix_id) > 31


def test_typing_at_the_cursor_keeps_the_start_of_the_context(tokenizer: CodeTokenizer) -> None:
    prefix = "".join(f"line_{i} = {i}\n" for i in range(400)) + "value = compute("
    suffix = "".join(f"after_{i} = {i}\n" for i in range(400))
    budget = ContextBudget(total=200, max_suffix=60)
    unchanged = []
    for typed in range(1, 20):
        before = context_ids(tokenizer, prefix, suffix, budget)
        prefix += "x"[: typed % 2] or " "
        after = context_ids(tokenizer, prefix, suffix, budget)
        common = next((i for i, (a, b) in enumerate(zip(before, after, strict=False)) if a != b), len(before))
        unchanged.append(common)
    # Most keystrokes re-encode only a few tokens at the end.
    assert sorted(unchanged)[len(unchanged) // 2] > 150


def _start_moves(contexts: list[list[int]], prefix_id: int) -> int:
    """How many times the prefix's first tokens changed from one context to the next."""
    starts = [tuple(ids[ids.index(prefix_id) + 1 :][:8]) for ids in contexts]
    return sum(a != b for a, b in itertools.pairwise(starts))


def test_typing_on_keeps_the_cut_until_a_quantum_more_is_typed(tokenizer: CodeTokenizer) -> None:
    rng = random.Random(0)
    prefix = "".join(f"{'    ' * rng.randrange(3)}name_{i} = value_{i} + {i}\n" for i in range(300)) + "result = "
    suffix = "".join(f"after_{i} = {i}\n" for i in range(300))
    budget = ContextBudget(total=200, max_suffix=60)
    typed = "compute(first_argument, second_argument) + other_value(third) - fourth_value * fifth"
    kept, fresh, cut = [], [], None
    for n in range(len(typed) + 1):
        ids, cut = context_cut(tokenizer, prefix + typed[:n], suffix, budget, cut)
        kept.append(ids)
        fresh.append(context_ids(tokenizer, prefix + typed[:n], suffix, budget))
    for ids, fresh_ids in zip(kept, fresh, strict=True):
        assert budget.total - 2 * 32 - 2 < len(ids) <= budget.total
        cut_at = ids.index(tokenizer.prefix_id)
        assert ids[:cut_at] == fresh_ids[: fresh_ids.index(tokenizer.prefix_id)]  # the same suffix
        assert ids[-8:] == fresh_ids[-8:]  # the text nearest the cursor
    typed_tokens = len(tokenizer.encode(typed))
    # A fresh cut's start moves each time its character window passes a line break.
    assert _start_moves(kept, tokenizer.prefix_id) <= typed_tokens // 32 + 1 < _start_moves(fresh, tokenizer.prefix_id)


def test_a_cut_is_kept_only_for_the_text_it_was_made_on(tokenizer: CodeTokenizer) -> None:
    budget = ContextBudget(total=200, max_suffix=60)
    prefix = "".join(f"first_{i} = {i}\n" for i in range(300))
    other = "".join(f"second_{i} = {i}\n" for i in range(300))
    _, cut = context_cut(tokenizer, prefix, "", budget)
    assert cut is not None
    assert context_cut(tokenizer, other, "", budget, cut) == context_cut(tokenizer, other, "", budget)
    # Deleting much of what the cut kept gives a fresh cut, which keeps more of the file.
    shorter = prefix[: len(prefix) - 600]
    assert context_cut(tokenizer, shorter, "", budget, cut) == context_cut(tokenizer, shorter, "", budget)


def test_canvas_holds_middle_then_end_then_padding(tokenizer: CodeTokenizer) -> None:
    middle = tokenizer.encode("return a + b")
    canvas = canvas_targets(tokenizer, middle, 16)
    assert len(canvas) == 16 and canvas[len(middle)] == tokenizer.end_of_middle_id
    assert middle_from_canvas(tokenizer, canvas) == "return a + b"
    with pytest.raises(ValueError):
        canvas_targets(tokenizer, middle, len(middle))


def test_whole_line_spans_end_at_a_line_end() -> None:
    text = "def f(x):\n    y = x + 1\n    return y\n"
    rng = random.Random(3)
    for _ in range(50):
        start, end = choose_span(text, SpanKind.WHOLE_LINES, rng)
        assert text[end - 1] == "\n" and start < end


def test_training_examples_fit_the_canvas_and_the_budget(tokenizer: CodeTokenizer) -> None:
    text = Path(random.__file__).read_text()
    rng = random.Random(0)
    budget = ContextBudget(total=128, max_suffix=40)
    for _ in range(100):
        example = make_example(tokenizer, text, rng, budget, canvas_size=32)
        if example is None:
            continue
        assert len(example.context) <= 128 and len(example.targets) == 32
        assert tokenizer.end_of_middle_id in example.targets


def test_blank_middles_are_not_training_examples(tokenizer: CodeTokenizer) -> None:
    text = "def f(x):\n\n\n    return x\n"  # half its lines are blank
    rng = random.Random(0)
    budget = ContextBudget(total=128, max_suffix=40)
    examples = [make_example(tokenizer, text, rng, budget, canvas_size=32) for _ in range(200)]
    middles = [tokenizer.decode(e.targets[: e.targets.index(tokenizer.end_of_middle_id)])
               for e in examples if e is not None]
    assert middles and all(middle.strip() for middle in middles)


def test_the_head_writes_the_cut_token_again_the_middle_and_the_suffix_s_first_line(tokenizer: CodeTokenizer) -> None:
    text = "def f(x):\n    y = x + 1\n    return y * 2\n\nprint(f(3))\n"
    rng = random.Random(3)
    budget = ContextBudget(total=128, max_suffix=40)
    seen = healed_seen = 0
    for _ in range(100):
        example = make_example(tokenizer, text, rng, budget, canvas_size=32, written_tokens=40)
        if example is None:
            continue
        seen += 1
        middle = tokenizer.decode(example.targets[: example.targets.index(tokenizer.end_of_middle_id)])
        written = tokenizer.decode(example.written)
        if example.context[-1] == tokenizer.prefix_id:  # nothing to heal: not trained
            assert written == ""
            continue
        healed = tokenizer.decode(example.context[-1:])
        assert written.startswith(healed + middle)
        after = written[len(healed + middle):]
        assert after.count("\n") <= 1 and (after.endswith("\n") or text.endswith(middle + after))
        assert healed + middle + after in text
        healed_seen += 1
    assert seen > 50 and healed_seen > 40
    assert make_example(tokenizer, text, random.Random(3), budget, canvas_size=32).written == []  # not asked for


def test_reused_context_cache_gives_the_same_completion_as_a_fresh_one(tokenizer: CodeTokenizer) -> None:
    from model.architecture import NetworkConfig
    from model.checkpoint import LoadedModel
    from model.fim.completion_request import CompletionRequest
    from model.fim.inference import FimCompleter
    from model.network import DiffusionEditor
    from model.runtime.torch_serving import serve_in_torch

    torch.manual_seed(0)
    network = DiffusionEditor(NetworkConfig(vocab_size=tokenizer.vocab_size, n_layer=1, n_head=2, d_model=32,
                                            mlp_hidden=48)).eval()
    loaded = serve_in_torch(LoadedModel(network, tokenizer, {}))
    warm, cold = FimCompleter(loaded), FimCompleter(loaded)
    text = Path(random.__file__).read_text()[:3000]
    warm.complete(CompletionRequest(text[:2000], text[2100:], canvas_size=8, max_steps=8))
    # The warm completer keeps where it cut the prefix (it is still within the budget):
    # the cold one is given the same cut, so that both see the same context.
    cold._prefix_cut = warm._prefix_cut
    request = CompletionRequest(text[:2010], text[2100:], canvas_size=8, max_steps=8)
    assert warm.complete(request) == cold.complete(request)


class _ScriptedNetwork:
    """Distributions that say: tokens 5, 6, 7 at positions 0–2 (unsure), then the end (sure)."""

    vocab = 16

    def make_room(self, cache: object, canvas_size: int) -> object:
        return cache

    def probabilities(self, canvas: np.ndarray, cache: object, where: np.ndarray) -> np.ndarray:
        logits = np.full((len(where), self.vocab), -10.0)
        for row, position in enumerate(where.tolist()):
            if position < 3:
                logits[row, 5 + position] = 1.0  # the best guess, but far from certain
                logits[row, 10] = 0.5
            else:  # end-of-middle (2) and padding (1) share the mass; each alone is below 0.5
                logits[row, 1] = 4.0
                logits[row, 2] = 4.0 - 0.1 * position
        exp = np.exp(logits - logits.max(-1, keepdims=True))
        return exp / exp.sum(-1, keepdims=True)


def test_deciding_the_length_first_leaves_only_the_middle_to_denoise() -> None:
    network: Any = _ScriptedNetwork()
    ends = frozenset({1, 2})
    slow = denoise(network, None, 0, ends, SamplerSettings(canvas_size=12, threshold=0.9, max_steps=32))
    fast = denoise(network, None, 0, ends, SamplerSettings(canvas_size=12, threshold=0.9, max_steps=32,
                                                           length_first=True))
    assert fast.tokens[:3] == [5, 6, 7] and fast.tokens[3] in ends
    assert fast.steps == 3  # the first pass places the end and one token, then one token per pass
    assert slow.tokens[:3] == [5, 6, 7] and slow.steps > fast.steps


def test_the_pass_at_the_step_cap_commits_every_open_position() -> None:
    network: Any = _ScriptedNetwork()
    ends = frozenset({1, 2})
    capped = denoise(network, None, 0, ends, SamplerSettings(canvas_size=12, threshold=0.9, max_steps=1,
                                                             length_first=True))
    assert capped.steps == 1 and not capped.stopped
    assert capped.tokens[:3] == [5, 6, 7] and capped.tokens[3] in ends  # no hole before the end
    assert all(p > 0 for p in capped.probabilities[:4])


def test_a_forced_token_counts_with_the_probability_the_network_gave_it() -> None:
    network: Any = _ScriptedNetwork()
    ends = frozenset({1, 2})
    settings = SamplerSettings(canvas_size=12, threshold=0.9, max_steps=1, length_first=True)
    # The runner-up at position 0 (token 10), as Invoked requests' alternatives force it.
    runner_up = denoise(network, None, 0, ends, settings, forced={0: 10}, forced_probabilities={0: 0.3})
    assert runner_up.tokens[0] == 10 and runner_up.probabilities[0] == 0.3
    assert denoise(network, None, 0, ends, settings, forced={0: 10}).probabilities[0] == 1.0  # not given: certain


class _RecordingNetwork(_ScriptedNetwork):
    def __init__(self) -> None:
        self.canvas_lengths: list[int] = []

    def probabilities(self, canvas: np.ndarray, cache: object, where: np.ndarray) -> np.ndarray:
        self.canvas_lengths.append(len(canvas))
        return super().probabilities(canvas, cache, where)


def test_a_frozen_tail_runs_passes_only_up_to_the_committed_end() -> None:
    ends = frozenset({1, 2})
    full: Any = _RecordingNetwork()
    frozen: Any = _RecordingNetwork()
    settings = SamplerSettings(canvas_size=12, threshold=0.9, max_steps=32, length_first=True)
    plain = denoise(full, None, 0, ends, settings)
    fast = denoise(frozen, None, 0, ends, dataclasses.replace(settings, freeze_tail=True))
    assert fast.tokens == plain.tokens and fast.steps == plain.steps == 3
    assert full.canvas_lengths == [12, 12, 12]
    assert frozen.canvas_lengths == [12, 4, 4]  # the end sits at position 3


@pytest.mark.parametrize("runtime", ["torch", "onnx"])
def test_a_room_with_pending_context_denoises_like_the_encoded_context(runtime: str) -> None:
    from model.architecture import NetworkConfig
    from model.network import DiffusionEditor
    from model.runtime.onnx_network import OrtNetwork
    from model.runtime.served_model import ServingNetwork
    from model.runtime.torch_serving import TorchServing

    torch.manual_seed(0)
    editor = DiffusionEditor(NetworkConfig(vocab_size=64, n_layer=1, n_head=2, d_model=32, mlp_hidden=48)).eval()
    network: ServingNetwork = TorchServing(editor) if runtime == "torch" else OrtNetwork(
        editor.config, {name: t.detach().numpy() for name, t in editor.state_dict().items()}, int8=False, threads=1)
    context = np.random.default_rng(0).integers(3, 64, 20)
    settings = SamplerSettings(canvas_size=8, threshold=0.2, max_steps=8, length_first=True)
    head = network.encode_context(context[:15])
    encoded = denoise(network, network.encode_context(context[15:], head), 0, frozenset({1, 2}), settings)
    fused = denoise(network, network.make_room(head, 8, pending=context[15:]), 0, frozenset({1, 2}), settings)
    assert fused.tokens == encoded.tokens and fused.steps == encoded.steps
    assert fused.probabilities == pytest.approx(encoded.probabilities, abs=1e-4)
