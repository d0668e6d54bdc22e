"""BodyTape: distances in the acting player's hands and fingers, edge of base to edge of base."""

from __future__ import annotations

import math
from dataclasses import dataclass

from companion.errors import InputError
from companion.rules.geometry import distance
from companion.rules.table import Unit
from companion.setup_file import (ADULT_FINGER_MM, ADULT_HAND_MM, CHILD_FINGER_MM, CHILD_HAND_MM, PERSON_FINGER_MM,
                                  PERSON_HAND_MM, PlayerSpec)

HAND_PRESETS_MM = {"adult": (ADULT_HAND_MM, ADULT_FINGER_MM), "child": (CHILD_HAND_MM, CHILD_FINGER_MM)}


@dataclass(frozen=True)
class HandSize:
    """A player's hand (thumb tip to index tip, spread) and finger (width), and how they were found."""

    hand_mm: float
    finger_mm: float
    how: str

    def to_json(self) -> dict:
        return {"hand_mm": self.hand_mm, "finger_mm": self.finger_mm, "how": self.how}

    def to_text(self, player: str) -> str:
        return f"{player}: hand {self.hand_mm} mm, finger {self.finger_mm} mm ({self.how})"


def hand_size(preset: str | None = None, hand_mm: float | None = None, finger_mm: float | None = None,
              span_how: str = "typed") -> HandSize:
    """From a preset, or a hand measured (typed, or the span between two markers: `span_how` says
    how) with its finger or, without one, a finger in adult proportion. A size no person has is
    refused: it is a slip of the tape or a marker misread."""
    if preset is not None:
        if preset not in HAND_PRESETS_MM:
            raise InputError(f"--preset: {preset!r} is not one of {', '.join(HAND_PRESETS_MM)}")
        hand, finger = HAND_PRESETS_MM[preset]
        how = f"the {preset} preset"
    elif hand_mm is not None:
        hand = round(hand_mm, 1)
        finger = round(finger_mm, 1) if finger_mm else round(hand * ADULT_FINGER_MM / ADULT_HAND_MM, 1)
        how = span_how + ("" if finger_mm else " (finger from the hand, in adult proportion)")
    else:
        raise InputError("give --preset adult|child, --hand-mm (and --finger-mm), or --frame IMG --markers A B")
    if not (PERSON_HAND_MM[0] <= hand <= PERSON_HAND_MM[1] and PERSON_FINGER_MM[0] <= finger <= PERSON_FINGER_MM[1]):
        raise InputError(f"a hand of {hand} mm and a finger of {finger} mm are not a person's: measure again")
    return HandSize(float(hand), float(finger), how)


@dataclass(frozen=True)
class Measure:
    edge_mm: float  # base edge to base edge on the table plane
    hands: int  # whole hands
    fingers: int  # whole fingers of the remainder (under a finger is insignificant)
    player: str  # whose hand and finger
    hand_mm: float
    finger_mm: float

    @property
    def text(self) -> str:
        parts = []
        if self.hands:
            parts.append(f"{self.hands} hand{'s' if self.hands != 1 else ''}")
        if self.fingers or not self.hands:
            parts.append(f"{self.fingers} finger{'s' if self.fingers != 1 else ''}")
        return " ".join(parts)

    def to_json(self) -> dict:
        return {"edge_mm": round(self.edge_mm, 1), "hands": self.hands, "fingers": self.fingers,
                "text": self.text, "player": self.player, "hand_mm": self.hand_mm, "finger_mm": self.finger_mm,
                "in_fingers": round(self.edge_mm / self.finger_mm, 2)}


def edge_distance_mm(a: Unit, b: Unit) -> float:
    """max(0, |cA - cB| - rA - rB): bases touching or overlapping are 0 apart."""
    return max(0.0, distance(a.centre, b.centre) - a.base_radius_mm - b.base_radius_mm)


def in_hands_and_fingers(edge_mm: float, profile: PlayerSpec) -> Measure:
    hands = int(edge_mm // profile.hand_mm)
    fingers = int((edge_mm - hands * profile.hand_mm) // profile.finger_mm)
    return Measure(edge_mm, hands, fingers, profile.name, profile.hand_mm, profile.finger_mm)


def measure(a: Unit, b: Unit, profile: PlayerSpec) -> Measure:
    return in_hands_and_fingers(edge_distance_mm(a, b), profile)


def within_for_acting_side(distance_mm: float, threshold_mm: float, profile: PlayerSpec) -> bool:
    """"Distances under one finger are insignificant and favour the side making the move": a check
    for the acting side passes when it fails by less than one finger (2.7 fingers is within 2)."""
    return distance_mm < threshold_mm + profile.finger_mm


def hands_needed(distance_mm: float, profile: PlayerSpec) -> int:
    """Action points for a straight move: 1 per hand or less, with the acting-side finger of grace
    (1 hand + 0.8 finger costs 1 AP)."""
    if distance_mm <= 0:
        return 0
    n = max(1, math.ceil(distance_mm / profile.hand_mm))
    while n > 1 and within_for_acting_side(distance_mm, (n - 1) * profile.hand_mm, profile):
        n -= 1
    return n
