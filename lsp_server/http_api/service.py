"""What every route shares: the engine, the server's options, the admission bound."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from lsp_server.engine import Engine
from lsp_server.http_api.admission import Admission
from lsp_server.options import ServerOptions

# Requests owed an answer at once. One model worker answers one at a time (~15–50 ms
# each here), so 16 waiting is well under a second of queue.
DEFAULT_MAX_PENDING = 16
# Requests in the server at once, bodies being read included: each may hold 2 MB.
IN_FLIGHT_PER_PENDING = 4
MIN_IN_FLIGHT = 64


@dataclass
class HttpService:
    engine: Engine
    options: ServerOptions = field(default_factory=ServerOptions)
    admission: Admission = field(default_factory=lambda: Admission(DEFAULT_MAX_PENDING))
    started: int = field(default_factory=lambda: int(time.time()))
    api_key: str | None = None
    max_in_flight: int = MIN_IN_FLIGHT
