"""Contienda Arcana on the phone: the hex grid, reach, flanks and the 2d6 bands."""

from companion.web.api import contienda
from companion.web.rulesets import WebRules, only_for

WEB = WebRules("contienda", "Contienda Arcana", blueprints=(only_for(contienda.bp, "contienda"),),
               script="rules/contienda.js")
