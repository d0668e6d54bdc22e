"""What every saved game is made of: events, pushed and popped python-chess style."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import ClassVar


class IllegalEvent(ValueError):
    """The event is not allowed now (the web answers 409); the message lists every problem."""


@dataclass(frozen=True)
class Event:
    kind: ClassVar[str] = ""

    def to_json(self) -> dict:
        return {"kind": self.kind, **asdict(self)}
