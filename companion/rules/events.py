"""What every saved game is made of: events, pushed and popped python-chess style."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any, ClassVar


class IllegalEvent(ValueError):
    """The event is not allowed now (the web answers 409); the message lists every problem."""


@dataclass(frozen=True)
class Event:
    kind: ClassVar[str] = ""

    def to_json(self) -> dict:
        return {"kind": self.kind, **asdict(self)}


def named_event(data: dict[str, Any], types: dict[str, type[Event]]) -> tuple[type[Event], dict[str, Any]]:
    """The event class a JSON object's `kind` names among `types`, and its other keys (each one a
    field of that event, or a ValueError naming it)."""
    data = dict(data)
    cls = types.get(data.pop("kind", None))
    if cls is None:
        raise ValueError(f"kind: unknown event kind (one of {', '.join(types)})")
    known = {f.name for f in fields(cls)}
    for key in data:
        if key not in known:
            raise ValueError(f"{key}: not a field of {cls.kind} (fields: {', '.join(sorted(known))})")
    return cls, data
