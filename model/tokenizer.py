"""Byte-level BPE tokenizer trained on the corpus with the `tokenizers` library.

Byte-level means any text (any language, any byte) round-trips: nothing is ever unknown.
Special tokens are looked up by name, never written as literal ids.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import cached_property
from pathlib import Path

from tokenizers import Tokenizer as HFTokenizer
from tokenizers import decoders, models, pre_tokenizers, trainers

PAD = "<|pad|>"
MASK = "<|mask|>"
END_OF_MIDDLE = "<|eom|>"
SUFFIX = "<|suffix|>"
PREFIX = "<|prefix|>"
# Reserved for the next-edit format (issue 3), so the vocabulary need not change later.
EDIT_HISTORY = "<|edits|>"
REGION_START = "<|region|>"
REGION_END = "<|/region|>"
NO_CHANGE = "<|nochange|>"
SPECIAL_TOKENS = (
    PAD, MASK, END_OF_MIDDLE, SUFFIX, PREFIX, EDIT_HISTORY, REGION_START, REGION_END, NO_CHANGE,
    *(f"<|reserved_{i}|>" for i in range(7)),
)


RECENT_HEADS = 4  # a request's prefix and suffix, and a next-edit request's


def _lines_cut(text: str) -> int:
    """The start of the last line break that follows a visible ASCII character, or -1.

    Byte-level BPE first splits text into pieces (GPT-2's pattern: words, numbers,
    punctuation runs, whitespace runs) and merges within a piece only. A whitespace run
    starts a piece, and no other kind of piece takes a line break, so a line break after a
    visible character always starts a piece: the tokens before it are the tokens of the
    text before it, whatever follows (a test checks this on real files, cut everywhere)."""
    end = len(text)
    while end > 1:
        at = max(text.rfind("\n", 1, end), text.rfind("\r", 1, end))
        if at < 1:
            return -1
        before = text[at - 1]
        if before.isascii() and before.isprintable() and not before.isspace():
            return at
        end = at
    return -1


class CodeTokenizer:
    """Thin typed wrapper: text ↔ ids, plus the ids of the special tokens."""

    def __init__(self, backend: HFTokenizer) -> None:
        self.backend = backend
        missing = [tok for tok in SPECIAL_TOKENS if backend.token_to_id(tok) is None]
        if missing:
            raise ValueError(f"tokenizer lacks special tokens {missing}")
        self.pad_id = self.id_of(PAD)
        self.mask_id = self.id_of(MASK)
        self.end_of_middle_id = self.id_of(END_OF_MIDDLE)
        self.suffix_id = self.id_of(SUFFIX)
        self.prefix_id = self.id_of(PREFIX)
        self.special_ids = frozenset(self.id_of(tok) for tok in SPECIAL_TOKENS)
        self._recent_heads: dict[str, list[int]] = {}  # encode_each's reused tokens, oldest first

    @property
    def vocab_size(self) -> int:
        return int(self.backend.get_vocab_size())

    def id_of(self, token: str) -> int:
        token_id = self.backend.token_to_id(token)
        if token_id is None:
            raise KeyError(token)
        return int(token_id)

    def encode(self, text: str) -> list[int]:
        return list(self.backend.encode(text, add_special_tokens=False).ids)

    def encode_each(self, texts: Sequence[str]) -> list[list[int]]:
        """``encode`` of each text, for texts that come back keystroke after keystroke (a
        request's prefix and suffix): a text's lines before the one being typed were most
        likely tokenized by the last request, and are not again (``_lines_cut``). One text
        after the other: the backend's parallel batch took twice as long on the few KB a
        request tokenizes (1.5 vs 0.7 ms for a prefix and a suffix)."""
        return [self._encode_reusing(text) for text in texts]

    def _encode_reusing(self, text: str) -> list[int]:
        cut = _lines_cut(text)
        if cut <= 0:
            return self.encode(text)
        head = text[:cut]
        head_ids = self._recent_heads.pop(head, None)
        if head_ids is None:
            head_ids = self.encode(head)
        self._recent_heads[head] = head_ids  # now the most recent
        for oldest in list(self._recent_heads)[:-RECENT_HEADS]:  # a snapshot: safe beside another thread
            self._recent_heads.pop(oldest, None)
        return head_ids + self.encode(text[cut:])

    def encode_with_offsets(self, text: str) -> tuple[list[int], list[tuple[int, int]]]:
        encoding = self.backend.encode(text, add_special_tokens=False)
        return list(encoding.ids), [tuple(o) for o in encoding.offsets]  # type: ignore[misc]

    def decode(self, ids: Iterable[int]) -> str:
        kept = [i for i in ids if i not in self.special_ids]
        return str(self.backend.decode(kept, skip_special_tokens=False))

    @cached_property
    def token_bytes(self) -> tuple[bytes, ...]:
        """Each token's bytes (a special token's: none). A byte-level token may hold part of
        a character, which ``decode`` can only show as U+FFFD; its bytes say which part."""
        to_byte = _byte_of_char()
        special = self.special_ids
        return tuple(b"" if i in special else bytes(to_byte[c] for c in str(self.backend.id_to_token(i)))
                     for i in range(self.vocab_size))

    def save(self, path: Path) -> None:
        self.backend.save(str(path))

    @classmethod
    def load(cls, path: Path) -> CodeTokenizer:
        return cls(HFTokenizer.from_file(str(path)))

    @classmethod
    def train(cls, texts: Iterable[str], vocab_size: int) -> CodeTokenizer:
        backend = HFTokenizer(models.BPE())
        backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        backend.decoder = decoders.ByteLevel()
        trainer = trainers.BpeTrainer(
            vocab_size=vocab_size,
            special_tokens=list(SPECIAL_TOKENS),
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
            show_progress=False,
        )
        backend.train_from_iterator(texts, trainer=trainer)
        return cls(backend)


def _byte_of_char() -> dict[str, int]:
    """The byte-level alphabet: how a token's string stands for bytes. A printable Latin-1
    byte is its own character; each of the other 68 (controls, space, 127–160, 173) is
    U+0100 onwards, in byte order."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    chars = {byte: chr(byte) for byte in printable}
    others = [byte for byte in range(256) if byte not in chars]
    chars.update({byte: chr(256 + n) for n, byte in enumerate(others)})
    return {char: byte for byte, char in chars.items()}
