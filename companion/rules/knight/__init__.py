"""Knight level ("Правила уровень Рыцарь"), as read in shared/rules/knight.md."""
