"""The network's serving path (cached context + canvas steps) must equal its training pass."""

import torch

from model.architecture import NetworkConfig
from model.network import DiffusionEditor, training_mask


def tiny_network() -> DiffusionEditor:
    torch.manual_seed(0)
    return DiffusionEditor(NetworkConfig(vocab_size=64, n_layer=2, n_head=2, d_model=32, mlp_hidden=48)).eval()


def test_cached_context_and_canvas_step_equal_the_training_pass() -> None:
    network = tiny_network()
    context = torch.randint(0, 64, (1, 12))
    canvas = torch.randint(0, 64, (1, 5))
    with torch.no_grad():
        hidden = network(context, torch.ones_like(context, dtype=torch.bool), canvas)
        expected = network.logits(hidden[0, 12:])
        cache = network.encode_context(context)
        got = network.denoise(canvas, cache)
    torch.testing.assert_close(got, expected, atol=1e-5, rtol=1e-4)


def test_canvas_room_passes_equal_the_training_pass_and_leave_the_cache_alone() -> None:
    network = tiny_network()
    context = torch.randint(0, 64, (1, 12))
    with torch.no_grad():
        cache = network.encode_context(context)
        before = [(k.clone(), v.clone()) for k, v in cache]
        room = network.make_room(cache, 5)
        for _ in range(3):  # each pass overwrites the canvas's slots in place
            canvas = torch.randint(0, 64, (1, 5))
            hidden = network(context, torch.ones_like(context, dtype=torch.bool), canvas)
            torch.testing.assert_close(network.denoise(canvas, room), network.logits(hidden[0, 12:]),
                                       atol=1e-5, rtol=1e-4)
    for (k, v), (k0, v0) in zip(cache, before, strict=True):
        assert torch.equal(k, k0) and torch.equal(v, v0)


def test_context_encoded_in_two_pieces_equals_one_piece() -> None:
    network = tiny_network()
    context = torch.randint(0, 64, (1, 10))
    canvas = torch.randint(0, 64, (1, 4))
    with torch.no_grad():
        whole = network.denoise(canvas, network.encode_context(context))
        head = network.encode_context(context[:, :6])
        pieces = network.denoise(canvas, network.encode_context(context[:, 6:], head))
    torch.testing.assert_close(pieces, whole, atol=1e-5, rtol=1e-4)


def test_left_padding_does_not_change_the_canvas() -> None:
    network = tiny_network()
    context = torch.randint(1, 64, (1, 8))
    canvas = torch.randint(0, 64, (1, 4))
    padded = torch.cat([torch.zeros(1, 3, dtype=torch.long), context], dim=1)
    valid = torch.cat([torch.zeros(1, 3, dtype=torch.bool), torch.ones(1, 8, dtype=torch.bool)], dim=1)
    with torch.no_grad():
        plain = network(context, torch.ones_like(context, dtype=torch.bool), canvas)[0, 8:]
        shifted = network(padded, valid, canvas)[0, 11:]
    torch.testing.assert_close(shifted, plain, atol=1e-5, rtol=1e-4)


def test_context_rows_never_see_the_canvas() -> None:
    mask = training_mask(torch.ones(1, 4, dtype=torch.bool), canvas_size=3)[0, 0]
    assert not mask[:4, 4:].any()
    assert mask[4:, :].all()
    assert not mask[0, 1]


def test_pending_context_encoded_with_the_first_pass_equals_encoding_it_first() -> None:
    network = tiny_network()
    context = torch.randint(0, 64, (1, 12))
    canvas = torch.randint(0, 64, (1, 5))
    with torch.no_grad():
        head = network.encode_context(context[:, :9])
        expected = network.denoise(canvas, network.encode_context(context[:, 9:], head))
        for reuse, pending in ((head, context[:, 9:]), (None, context)):
            room = network.make_room(reuse, 5, pending=pending)
            torch.testing.assert_close(network.denoise(canvas, room), expected, atol=1e-5, rtol=1e-4)
            assert room.pending is None
            for (k, v), (k0, v0) in zip(room.context_cache(), network.encode_context(context), strict=True):
                torch.testing.assert_close(k, k0, atol=1e-5, rtol=1e-4)
                torch.testing.assert_close(v, v0, atol=1e-5, rtol=1e-4)


def test_a_canvas_prefix_pass_reuses_the_rest_of_the_canvas_as_last_computed() -> None:
    network = tiny_network()
    context = torch.randint(0, 64, (1, 12))
    canvas = torch.randint(0, 64, (1, 6))
    with torch.no_grad():
        room = network.make_room(network.encode_context(context), 6)
        full = network.denoise(canvas, room)
        # Nothing changed since the full pass, so the frozen tail is exactly what a
        # full pass would compute again.
        torch.testing.assert_close(network.denoise(canvas[:, :4], room), full[:4], atol=1e-5, rtol=1e-4)
        changed = canvas.clone()
        changed[0, 0] = (canvas[0, 0] + 1) % 64
        fresh = network.denoise(changed, network.make_room(network.encode_context(context), 6))
        assert not torch.allclose(network.denoise(changed[:, :4], room), fresh[:4])  # stale tail: approximate


def test_what_the_head_writes_at_the_cursor_trains_as_the_served_head_reads_it() -> None:
    """The written tokens take the positions from the context's last one on, beside the
    canvas: their rows equal the context but its cut last token, encoded on with them (the
    serving head's view, healed), and neither the context nor the canvas sees them."""
    network = tiny_network()
    context = torch.randint(0, 64, (2, 12))
    valid = torch.ones_like(context, dtype=torch.bool)
    valid[1, :3] = False  # a left-padded row
    canvas = torch.randint(0, 64, (2, 5))
    written = torch.randint(0, 64, (2, 4))
    written_valid = torch.tensor([[True, True, True, True], [True, True, False, False]])
    with torch.no_grad():
        plain = network(context, valid, canvas)
        hidden = network(context, valid, canvas, None, written, written_valid)
        torch.testing.assert_close(hidden[:, :17], plain)  # nothing before them sees them
        # The first row's context without its last token, then the written tokens, as one
        # causal context, no canvas.
        ids = torch.cat([context[:1, :-1], written[:1]], dim=1)
        straight = network(ids, torch.ones_like(ids, dtype=torch.bool), ids[:, :0])
        # Another cut token changes nothing the written rows see.
        recut = context.clone()
        recut[:, -1] = (context[:, -1] + 1) % 64
        rewritten = network(recut, valid, canvas, None, written, written_valid)
    torch.testing.assert_close(network.logits(hidden[0, 17:]), network.logits(straight[0, 11:]), atol=1e-5, rtol=1e-4)
    torch.testing.assert_close(network.logits(hidden[0, 10]), network.logits(straight[0, 10]), atol=1e-5, rtol=1e-4)
    torch.testing.assert_close(rewritten[:, 17:], hidden[:, 17:])
