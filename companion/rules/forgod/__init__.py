"""F0R60D, as read in shared/rules/forgod.md and docs/forgod.md: cards on a board of squares."""

from companion.rules.forgod.cards import MINI_KEYS, SECTION_KEYS, read_setup
from companion.rules.registry import RuleSystem

SYSTEM = RuleSystem("forgod", "F0R60D", section="forgod", section_keys=SECTION_KEYS, mini_keys=MINI_KEYS,
                    read_setup=read_setup)
