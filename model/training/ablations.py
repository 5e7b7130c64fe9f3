"""``redraft ablate``: small models trained side by side, one design choice changed in each.

Every arm starts from scratch with the same seed, tokenizer, corpus, step count and batch
size, so the only difference is the choice named. Each is then decoded by the real sampler
on the same held-out spans (packages never trained on) cut the way an editor asks: the rest
of a line, or whole lines. The figures are the middle's likelihood under fixed masks (it
separates arms long before their answers are right), exact match, edit similarity
(difflib ratio of the suggestion to the truth, as in CodeXGLUE's line completion), how
often the answer has the right length, passes per answer, and the time of one denoising
pass at a full context — so width against depth compares at the latency the server pays.

Small on purpose: a full-size run costs hours on this machine, an arm costs minutes. The
figures say which way a choice points at this scale, not what it gives at full size.
"""

from __future__ import annotations

import difflib
import json
import logging
import statistics
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F

from model.architecture import NetworkConfig
from model.checkpoint import LoadedModel, load_model
from model.data.corpus import read_corpus
from model.fim.completion_request import CompletionRequest
from model.fim.held_out_cases import dev_cases, same_code
from model.fim.inference import FimCompleter
from model.formats import canvas_targets, context_ids, middle_from_canvas
from model.network import DiffusionEditor
from model.runtime.torch_serving import TorchServing, serve_in_torch
from model.sampler import SamplerSettings, denoise
from model.tokenizer import CodeTokenizer
from model.training.expand_delete import canvas_text, denoise_expand_delete
from model.training.fim_examples import SpanKind
from model.training.train import train
from model.training.train_config import TrainConfig

log = logging.getLogger(__name__)

# Pass times (fastest of 100, 2 threads, this machine): 4×128 4.8 ms, 2×192 4.3 ms, 6×96 5.3 ms,
# 8×96 6.7 ms — so 2×192 and 6×96 are the equal-latency width/depth pair to the base.

# What an editor asks for; random spans are a training device, not a request.
EDITOR_SPANS = {SpanKind.REST_OF_LINE: 0.5, SpanKind.WHOLE_LINES: 0.5}
SMALL = NetworkConfig(n_layer=4, n_head=4, d_model=128, mlp_hidden=384)


@dataclass(frozen=True)
class Arm:
    name: str
    question: str  # the ablation it answers
    change: str  # what differs from the base arm, for the table
    train: dict[str, Any] = field(default_factory=dict)  # TrainConfig overrides
    network: NetworkConfig = SMALL
    canvas_size: int = 32  # the canvas it is served with


ARMS: tuple[Arm, ...] = (
    Arm("base", "—", "4×128, eom + padding, next-token loss 0.5, canvas 32/64, span mix 40/40/20"),
    Arm("length_head", "length handling", "a head predicts the length; canvas only fills it in",
        network=replace(SMALL, length_head=True)),
    Arm("expand_delete", "length handling", "the canvas grows and shrinks: <|expand|>/<|delete|> from 8 masks",
        {"length_handling": "expand_delete"}),
    Arm("no_context_loss", "context next-token loss", "next-token loss off",
        {"context_loss_weight": 0.0, "written_loss_weight": 0.0}),
    Arm("canvas_32", "canvas size", "canvas 32 only", {"canvas_sizes": (32,)}),
    Arm("canvas_64", "canvas size", "canvas 64 only (served at 64)", {"canvas_sizes": (64,)}, canvas_size=64),
    Arm("spans_lines", "FIM span mix", "rest of line / whole lines 50/50, no random spans",
        {"span_mix": {"rest_of_line": 0.5, "whole_lines": 0.5}}),
    Arm("spans_random", "FIM span mix", "random spans only", {"span_mix": {"random_span": 1.0}}),
    Arm("wide_shallow", "width vs depth", "2×192 (MLP 576)",
        network=replace(SMALL, n_layer=2, d_model=192, mlp_hidden=576)),
    Arm("deep_narrow", "width vs depth", "6×96 (MLP 288)",
        network=replace(SMALL, n_layer=6, d_model=96, mlp_hidden=288)),
)


@dataclass(frozen=True)
class ArmResult:
    name: str
    question: str
    change: str
    parameters_m: float
    steps: int
    middle_nll: float  # nats per middle token, fixed masks (MASK_RATES)
    exact: float
    edit_similarity: float
    length_right: float  # decoded middles with the true length in tokens
    passes: float  # median denoising passes per answer
    ms_per_pass: float
    dev_next_token: float


def arms_named(names: list[str] | None) -> list[Arm]:
    if not names:
        return list(ARMS)
    known = {arm.name: arm for arm in ARMS}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ValueError(f"unknown arms {unknown}; known: {', '.join(known)}")
    return [known[n] for n in names]


def train_arm(arm: Arm, work_dir: Path, steps: int, tokenizer: CodeTokenizer, batch_size: int) -> float:
    """Train (or resume) one arm in ``work_dir/ablations/NAME``; its last held-out
    next-token loss (from the run's history, so an arm already trained costs nothing)."""
    config = TrainConfig(
        corpus_dir=work_dir / "corpus", run_dir=work_dir / "ablations" / arm.name, steps=steps,
        batch_size=batch_size, lr=2e-3, warmup_steps=min(100, steps // 10), eval_every=steps,
        eval_examples=8 * batch_size, seed=0, network=replace(arm.network, vocab_size=tokenizer.vocab_size),
        **arm.train,
    )
    train(config, tokenizer)
    history = (config.run_dir / "history.jsonl").read_text().splitlines()
    return float(json.loads(history[-1]).get("dev_next_token", float("nan"))) if history else float("nan")


def torch_network(completer: FimCompleter) -> DiffusionEditor:
    """The arms are measured in torch, as trained (never through the serving runtime)."""
    if not isinstance(completer.network, TorchServing):
        raise TypeError("ablation arms are measured on the torch network (serve_in_torch, not load_served_model)")
    return completer.network.editor


@torch.no_grad()
def decode_length_head(completer: FimCompleter, prefix: str, suffix: str, canvas_size: int) -> tuple[str, int]:
    """The length-head arm's decoding: predict the length, fix <|eom|> there, fill the rest."""
    network, tok = torch_network(completer), completer.tokenizer
    ids = torch.tensor([context_ids(tok, prefix, suffix, completer.budget)])
    hidden = network(ids, torch.ones_like(ids, dtype=torch.bool), ids[:, :0])  # (1, C, d)
    length = int(network.length_logits(hidden[0, -1])[:canvas_size].argmax())
    length = min(length, canvas_size - 1)
    forced = {length: tok.end_of_middle_id, **{i: tok.pad_id for i in range(length + 1, canvas_size)}}
    cache = completer.network.encode_context(ids[0].numpy())
    result = denoise(completer.network, cache, tok.mask_id, frozenset({tok.end_of_middle_id, tok.pad_id}),
                     SamplerSettings(canvas_size=canvas_size, length_first=False), forced=forced)
    return middle_from_canvas(tok, result.tokens), result.steps


MASK_RATES = (0.2, 0.4, 0.6, 0.8, 1.0)


@torch.no_grad()
def middle_nll(completer: FimCompleter, cases: list[tuple[str, str, str]], canvas_size: int,
               exact_length: bool = False) -> float:
    """Mean cross-entropy of the masked middle tokens (never <|eom|> or padding) over the
    same cases and the same masks at each rate in ``MASK_RATES``: a likelihood every arm
    can be compared on even before its decoded answers are any good. The length-head arm
    sees the length (its design), as does the expand/delete arm (``exact_length``: a canvas
    of exactly the middle's tokens); the others see whatever end tokens the mask leaves."""
    network, tok = torch_network(completer), completer.tokenizer
    generator = torch.Generator().manual_seed(5)
    total, count = 0.0, 0
    for prefix, middle, suffix in cases:
        middle_ids = tok.encode(middle)[: canvas_size - 1]
        n = len(middle_ids)
        if n == 0:
            continue
        rows = len(MASK_RATES)
        canvas = middle_ids if exact_length else canvas_targets(tok, middle_ids, canvas_size)
        targets = torch.tensor([canvas]).expand(rows, -1)
        masked = torch.rand(targets.shape, generator=generator) < torch.tensor(MASK_RATES)[:, None]
        masked[torch.arange(rows), torch.randint(0, n, (rows,), generator=generator)] = True
        if network.length is not None:
            masked[:, n:] = False
        ids = torch.tensor([context_ids(tok, prefix, suffix, completer.budget)]).expand(rows, -1)
        hidden = network(ids, torch.ones_like(ids, dtype=torch.bool), torch.where(masked, tok.mask_id, targets))
        scored = masked[:, :n]
        logits = network.logits(hidden[:, ids.shape[1] : ids.shape[1] + n][scored]).float()
        total += float(F.cross_entropy(logits, targets[:, :n][scored], reduction="sum"))
        count += int(scored.sum())
    return total / max(1, count)


def pass_milliseconds(loaded: LoadedModel, canvas_size: int, repeats: int = 100) -> float:
    """Time of one denoising pass at a full (256-token) context: the fastest of ``repeats``,
    which is what the network costs when nothing else competes for the cores."""
    network, tok = loaded.network, loaded.tokenizer
    cache = network.encode_context(torch.randint(0, tok.vocab_size, (1, 256)))
    room = network.make_room(cache, canvas_size)
    canvas = torch.full((1, canvas_size), tok.mask_id)
    where = torch.arange(canvas_size)
    times = []
    with torch.no_grad():
        for _ in range(repeats + 3):
            started = time.perf_counter()
            network.denoise(canvas, room, where)
            times.append((time.perf_counter() - started) * 1000)
    return min(times[3:])


def evaluate_arm(arm: Arm, run_dir: Path, cases: list[tuple[str, str, str]], steps: int,
                 dev_next_token: float) -> ArmResult:
    loaded = load_model(run_dir)
    exact = similarity = length_right = 0.0
    passes: list[int] = []
    completer = FimCompleter(serve_in_torch(loaded))
    tok = loaded.tokenizer
    expand_delete = arm.train.get("length_handling") == "expand_delete"
    for prefix, middle, suffix in cases:
        if arm.network.length_head:
            text, used = decode_length_head(completer, prefix, suffix, arm.canvas_size)
        elif expand_delete:
            ids = torch.tensor([context_ids(tok, prefix, suffix, completer.budget)])
            grown = denoise_expand_delete(loaded.network, loaded.network.encode_context(ids), tok,
                                          max_length=arm.canvas_size - 1)
            text, used = canvas_text(tok, grown.tokens), grown.steps
        else:
            request = CompletionRequest(prefix, suffix, canvas_size=arm.canvas_size, copy_lines=False,
                                        left_to_right=False, drop_repeats=False)
            best = completer.complete(request)[0]
            text, used = best.text, best.steps
        exact += same_code(text, middle)
        similarity += difflib.SequenceMatcher(None, text, middle).ratio()
        length_right += len(tok.encode(text)) == len(tok.encode(middle))
        passes.append(used)
    count = max(1, len(cases))
    return ArmResult(
        arm.name, arm.question, arm.change, sum(p.numel() for p in loaded.network.parameters()) / 1e6, steps,
        middle_nll(completer, cases, arm.canvas_size, exact_length=expand_delete),
        exact / count, similarity / count, length_right / count,
        statistics.median(passes) if passes else 0.0,
        pass_milliseconds(loaded, arm.canvas_size), dev_next_token,
    )


def run_ablations(work_dir: Path, tokenizer_path: Path, steps: int, names: list[str] | None,
                  cases_count: int = 300, batch_size: int = 16) -> list[ArmResult]:
    """Train every arm not yet trained to ``steps``, evaluate all, write ``ablations/results.json``."""
    tokenizer = CodeTokenizer.load(tokenizer_path)
    dev_files = read_corpus(work_dir / "corpus" / "dev.jsonl")
    if not dev_files:
        raise FileNotFoundError(f"no held-out files in {work_dir / 'corpus'}: build the corpus with `redraft train`")
    cases = dev_cases(dev_files, cases_count, seed=11, span_mix=EDITOR_SPANS)
    results = []
    for arm in arms_named(names):
        log.info("ablation arm %s: %s", arm.name, arm.change)
        dev_next_token = train_arm(arm, work_dir, steps, tokenizer, batch_size)
        results.append(evaluate_arm(arm, work_dir / "ablations" / arm.name, cases, steps, dev_next_token))
        log.info("%s", format_results(results[-1:]))
    out = work_dir / "ablations" / "results.json"
    previous = {r["name"]: r for r in json.loads(out.read_text())} if out.is_file() else {}
    previous.update({r.name: r.__dict__ for r in results})
    out.write_text(json.dumps(list(previous.values()), indent=2) + "\n")
    return results


def format_results(results: list[ArmResult]) -> str:
    header = (f"{'arm':<16} {'question':<24} {'params':>6} {'steps':>5} {'mid NLL':>7} {'exact':>6} "
              f"{'edit sim':>8} {'length':>6} {'passes':>6} {'ms/pass':>7} {'dev NT':>6}  change")
    rows = [header]
    for r in results:
        rows.append(f"{r.name:<16} {r.question:<24} {r.parameters_m:5.2f}M {r.steps:>5} {r.middle_nll:7.3f} "
                    f"{r.exact:6.1%} {r.edit_similarity:8.1%} {r.length_right:6.1%} {r.passes:>6.1f} "
                    f"{r.ms_per_pass:7.2f} {r.dev_next_token:6.3f}  {r.change}")
    return "\n".join(rows)
