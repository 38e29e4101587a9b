"""Data of the rulebook's worked examples, shared by the tests that check
them from different sides (map, supply, movement). Source: RB as cited."""

from __future__ import annotations

#: RB 5.3 sidebar, Withdrawal Example: the supply lines of a unit at Mechili
#: with friendly units at Msus and Charruba, as the places each passes, in
#: RB's order; the first four are valid for a Withdrawal Move.
MECHILI_SUPPLY_LINES: tuple[tuple[str, ...], ...] = (
    ("Mechili", "Msus", "Agedabia"),
    ("Mechili", "Msus", "Beda Fomm"),
    ("Mechili", "Msus", "Ghemines"),
    ("Mechili", "Charruba", "Er Regima"),
    ("Mechili", "Msus", "Er Regima"),
    ("Mechili", "Derna"),
    ("Mechili", "Gazala"),
    ("Mechili", "Bir Harmat"),
)
