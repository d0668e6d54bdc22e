"""Infinity on the phone: the circular template and Face to Face odds."""

from companion.web.api import infinity
from companion.web.rulesets import WebRules, only_for

WEB = WebRules("infinity", "Infinity", blueprints=(only_for(infinity.bp, "infinity"),),
               script="rules/infinity.js")
