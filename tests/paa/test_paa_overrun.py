"""PAA §11.4 overrun: Figure 7 (all five expectations), §11.1.6 and Table 8."""

from __future__ import annotations

import pytest
from msgspec.structs import replace

from rules.paa.combat import Attacker, crt
from rules.paa.movement import path_cost
from rules.paa.overrun import OverrunCheck, captured, overrun_check, overrun_counter_attack_column
from rules.paa.units import Piece
from rules.paa.zoc import enemy_zoc, zoc_sources
from tests.paa.fakemap import FakeMap, block

# Figure 7 gives ΔCF 3 against the 2-CF BR SG/2/IBDE; the Italian CFs 2 and 3 are our reading of it.
BERS = Piece("IT BERS/8/AIREGT", "axis", "IT", "infantry", 2, 8, "0906")
ARIETE = Piece("IT 132/AREGT", "axis", "IT", "armoured", 3, 12, "0906")
SG = Piece("BR SG/2/IBDE", "allied", "BR", "infantry", 2, 8, "1006")
OTHER = Piece("DE 5/1/ABN", "axis", "DE", "armoured", 3, 12, "0807")
BOARD = FakeMap(cells=block(range(7, 12), range(3, 10)))


def italians(hex_id: str = "0906") -> list[Attacker]:
    return [Attacker(replace(BERS, hex=hex_id), "AS"), Attacker(replace(ARIETE, hex=hex_id), "AS")]


def check(pieces: list[Piece], stack: list[Attacker], from_hex: str = "0906", *, together: bool = True) -> OverrunCheck:
    sources = zoc_sources(BOARD, pieces, "allied").get(from_hex, frozenset())
    return overrun_check(BOARD, stack, from_hex, "1006", [SG], started_together=together, ezoc_sources=sources,
                         mf_left={a.piece.id: 13 for a in stack})


def test_figure_7_overrun_delta_3_guarantees_2_no_roll_s11_4() -> None:
    """Figure 7: ΔCF 3 guarantees at least 2 CF lost (Table 9), enough to
    eliminate BR SG/2/IBDE: the overrun is legal and needs no roll."""
    result = check([BERS, ARIETE, SG], italians())
    assert result.problems == ()
    assert (result.delta, result.guaranteed, result.required) == ("3", 2, 2)
    assert result.eliminated == (SG.id,)


def test_figure_7_defender_counter_attacks_at_delta_0_s11_4() -> None:
    """Figure 7: after the overrun BR SG/2/IBDE counter-attacks with ΔCF 0."""
    column = overrun_counter_attack_column()
    assert column == 0
    assert [crt(column, d) for d in range(1, 7)] == [2, 0, 0, 0, 0, 0]


def test_figure_7_stack_in_0807_may_not_join_s11_4() -> None:
    """Figure 7: the stack in 0807 may not move to 1007 and assist: only units
    that started the movement phase together may overrun."""
    joined = [*italians(), Attacker(replace(OTHER, hex="0906"), "AS")]
    result = check([BERS, ARIETE, OTHER, SG], joined, together=False)
    assert [p.rule for p in result.problems] == ["§11.4"]


def test_figure_7_0807_passes_1006_afterwards_without_plus_10_s11_4() -> None:
    """Figure 7: after the overrun the 0807 stack moves to or through 1006
    without the +10 MF: the hex is empty, the cost is the clear terrain's."""
    assert path_cost(BOARD, ("0807", "0907", "1006"), mover="regular") == 6
    assert path_cost(BOARD, ("0807", "0907", "1006", "1106"), mover="regular") == 9


def test_figure_7_allied_unit_in_1005_forbids_overrun_from_0906_not_0907_s11_4() -> None:
    """Figure 7: with an Allied regular unit in 1005, 0906 is in enemy ZOC
    from two hexes: no overrun from there; from 0907 it is legal."""
    extra = Piece("IN 11/IBDE", "allied", "IN", "infantry", 2, 8, "1005")
    pieces = [BERS, ARIETE, SG, extra]
    assert [p.rule for p in check(pieces, italians()).problems] == ["§11.4"]
    assert check(pieces, italians("0907"), "0907").problems == ()


def test_figure_7_allied_unit_in_1007_legal_but_locked_in_zoc_s11_4() -> None:
    """Figure 7: with an Allied unit in 1007 the overrun is legal, but the
    Italians in 1006 are then in its ZOC and must stop (§11.1.4)."""
    extra = Piece("IN 11/IBDE", "allied", "IN", "infantry", 2, 8, "1007")
    pieces = [BERS, ARIETE, SG, extra]
    assert check(pieces, italians()).problems == ()
    after = [extra, *(a.piece for a in italians("1006"))]
    assert "1006" in enemy_zoc(BOARD, after, "axis")


def test_overrun_needs_the_mf_and_no_fort_and_no_mas_s11_4() -> None:
    sources = frozenset({"1006"})
    short = overrun_check(BOARD, italians(), "0906", "1006", [SG], started_together=True, ezoc_sources=sources,
                          mf_left={BERS.id: 12, ARIETE.id: 13})
    assert [p.rule for p in short.problems] == ["§11.4"]
    mas = overrun_check(BOARD, [Attacker(BERS, "MAS")], "0906", "1006", [SG], started_together=True, ezoc_sources=sources)
    assert any("maximum attack supply" in p.message for p in mas.problems)
    fort = FakeMap(cells=BOARD.cells, forts={"1006": 2})
    assert any("fortified" in p.message for p in overrun_check(
        fort, italians(), "0906", "1006", [SG], started_together=True, ezoc_sources=sources).problems)
    weak = overrun_check(BOARD, [Attacker(BERS, "AS")], "0906", "1006", [SG], started_together=True, ezoc_sources=sources)
    assert any("guarantees a loss of 0" in p.message for p in weak.problems)


def test_table_8_caption_turn_1_captures_1_to_4_later_1_to_2_s11_1_6() -> None:
    """Table 8: the Axis captures Allied installations on 1-4 on turn 1, on 1-2
    later; Axis installations are captured on 1-2 "as it is for the Axis"."""
    assert [d for d in range(1, 7) if captured(d, capturer="axis", turn=1)] == [1, 2, 3, 4]
    assert [d for d in range(1, 7) if captured(d, capturer="axis", turn=2)] == [1, 2]
    assert [d for d in range(1, 7) if captured(d, capturer="allied", turn=1)] == [1, 2]
    with pytest.raises(ValueError, match="Table 8"):
        captured(0, capturer="axis", turn=1)
