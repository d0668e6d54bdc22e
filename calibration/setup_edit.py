"""Write calibration results into a player's setup file, keeping every other line as it was.

A small line editor rather than a TOML round trip, so comments, order and spacing survive: inside
the target table, a key's line (including a multi-line array) is replaced, or added at the table's
end; a missing table is appended. The result is checked by loading it before it replaces the file.
"""

from __future__ import annotations

import re
from pathlib import Path

from companion.errors import SetupError
from companion.files import write_text_atomic
from companion.setup_file import toml_value, parse_setup

_HEADER = re.compile(r"^\s*(\[\[?)\s*([A-Za-z0-9_.\-]+)\s*\]\]?\s*(#.*)?$")


def _value_end(lines: list[str], start: int) -> int:
    """Index after a `key = value` that may span lines (a multi-line array)."""
    depth = 0
    for k in range(start, len(lines)):
        text = lines[k].split("#", 1)[0]
        depth += text.count("[") - text.count("]")
        if depth <= 0:
            return k + 1
    return len(lines)


def _set_keys(lines: list[str], begin: int, end: int, values: dict[str, object]) -> list[str]:
    body = lines[begin:end]
    done = set()
    out: list[str] = []
    k = 0
    while k < len(body):
        match = re.match(r"^\s*([A-Za-z0-9_\-]+)\s*=", body[k])
        if match and match.group(1) in values:
            key = match.group(1)
            stop = _value_end(body, k)
            out.append(f"{key} = {toml_value(values[key])}")
            done.add(key)
            k = stop
            continue
        out.append(body[k])
        k += 1
    missing = [f"{key} = {toml_value(v)}" for key, v in values.items() if key not in done]
    # new keys go after the table's last non-blank line
    insert_at = len(out)
    while insert_at > 0 and not out[insert_at - 1].strip():
        insert_at -= 1
    out[insert_at:insert_at] = missing
    return lines[:begin] + out + lines[end:]


def _tables(lines: list[str]) -> list[tuple[str, bool, int]]:
    """(name, is_array_entry, line index) of every table header."""
    found = []
    for k, line in enumerate(lines):
        m = _HEADER.match(line)
        if m:
            found.append((m.group(2), m.group(1) == "[[", k))
    return found


def set_table(text: str, table: str, values: dict[str, object], match: tuple[str, object] | None = None) -> str:
    """Set keys in `[table]`, or in the `[[table]]` entry whose `match[0]` key equals `match[1]`."""
    lines = text.splitlines()
    headers = _tables(lines)
    for n, (name, is_array, start) in enumerate(headers):
        if name != table:
            continue
        end = headers[n + 1][2] if n + 1 < len(headers) else len(lines)
        if match is not None:
            key, wanted = match
            if not any(re.match(rf"^\s*{re.escape(key)}\s*=\s*{re.escape(toml_value(wanted))}\s*(#.*)?$", l)
                       for l in lines[start + 1:end]):
                continue
        return "\n".join(_set_keys(lines, start + 1, end, values)) + "\n"
    if match is not None:
        raise SetupError(f"no [[{table}]] with {match[0]} = {toml_value(match[1])}")
    block = ["", f"[{table}]"] + [f"{k} = {toml_value(v)}" for k, v in values.items()]
    return "\n".join(lines + block) + "\n"


def update_setup_file(path: str | Path, table: str, values: dict[str, object],
                      match: tuple[str, object] | None = None) -> str:
    """Edit the file in place (atomically), after checking that the result is a valid setup."""
    import tomllib

    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SetupError(f"{path}: cannot read ({exc.strerror or exc})") from None
    try:
        new_text = set_table(text, table, values, match)
    except SetupError as exc:
        raise SetupError(f"{path}: {exc}") from None
    parse_setup(tomllib.loads(new_text), str(path))  # never write a file that would not load
    write_text_atomic(path, new_text)
    return new_text
