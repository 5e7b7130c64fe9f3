"""A bound on the requests the one model worker owes an answer to. Past it a request is
refused at once with 429 and ``Retry-After`` instead of waiting behind a queue that only
grows: a client told to come back can, one left hanging times out with nothing."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from lsp_server.http_api.errors import ApiError

RETRY_AFTER_S = 1


class Admission:
    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.pending = 0

    @contextmanager
    def admitted(self) -> Iterator[None]:
        """Hold a place while the request is answered; 429 when none is left. The event
        loop is single-threaded, so a counter is enough."""
        if self.pending >= self.capacity:
            raise overloaded(self.pending)
        self.pending += 1
        try:
            yield
        finally:
            self.pending -= 1


def overloaded(answering: int) -> ApiError:
    return ApiError(429, f"the server is answering {answering} requests, its most; retry in {RETRY_AFTER_S} s",
                    "overloaded", {"Retry-After": str(RETRY_AFTER_S)})
