"""Knight level ("Правила уровень Рыцарь"), as read in shared/rules/knight.md."""

from companion.rules.registry import RuleSystem

SYSTEM = RuleSystem("knight", "Knight level")
