"""Issue 19: the steps lost in secret by Rout Attrition (RB 11.3, T-12) and by
failed Retreat Forced Marches (RB 6.4 sidebar, T-39) are one function
(``step_losses.apply_secret_step_losses``), reading identities through one
function (``state.current_identity``); the game tests of both rules
(test_game_rout, test_game_march) pin that their behaviour is unchanged."""

from __future__ import annotations

import msgspec
import pytest

from rules.ritd import step_losses
from rules.ritd.state import current_identity
from tests.ritd.test_game_march import _retreat_and_fail
from tests.ritd.test_game_march import standoff as standoff  # noqa: F401 (fixture)
from tests.ritd.test_game_rout import _armd_token
from tests.ritd.test_game_rout import ex26 as ex26  # noqa: F401 (fixture)

pytestmark = pytest.mark.usefixtures("registered_ritd")


@pytest.fixture
def calls(monkeypatch):
    """Every call of the one secret step-loss function: (kind, rule, tokens)."""
    seen: list[tuple[str, str, tuple[str, ...]]] = []
    real = step_losses.apply_secret_step_losses

    def recorded(state, tokens, eliminated, recommit, ctx, **kw):
        seen.append((kw["kind"], kw["rule"], tuple(tokens)))
        return real(state, tokens, eliminated, recommit, ctx, **kw)

    monkeypatch.setattr(step_losses, "apply_secret_step_losses", recorded)
    return seen


def test_issue_19_rout_attrition_is_the_one_secret_step_loss(ex26, calls):  # noqa: F811
    """RB 11.3: "All Routed units must ... Lose one step of Rout Attrition"."""
    token = _armd_token(ex26)
    ex26.play("allied", "refuse-battle Sollum slowest 3")
    ex26.play("axis", "pursue Sollum with Trento")
    ex26.play("allied", "pursuit losses auto", "refuse-battle Sollum -> Sidi Barrani")
    ex26.play("allied", "rout Sollum slowest 3")
    assert ("attrition", "RB 11.3", (token,)) in calls
    # The Axis cannot read the new identity: one obligation on it, as before (T-12).
    axis = ex26.axis.seat().replay.state
    assert [o.labels for o in axis.obligations if o.token == token and o.kind == "attrition"] == \
        [(f"{token}.id0", f"{token}.id1")]  # neither identity readable by the Axis


def test_issue_19_a_failed_retreat_forced_march_is_the_one_secret_step_loss(standoff, calls):  # noqa: F811
    """RB 6.4 sidebar "Retreat Forced Marches": a failed one also costs a step."""
    _retreat_and_fail(standoff)
    allied = standoff.allied.seat()
    tk = next(b for b in allied.replay.state.position.blocks_of("allied") if b.unit == "7/7 Tk")
    standoff.play("allied", "march losses auto")
    assert ("march-loss", "RB 6.4", (tk.token,)) in calls
    # The Axis, which knew the Tk, deduces its new CV in the open (T-39).
    seen = standoff.axis.seat().replay.state.position.block(tk.token)
    assert (seen.unit, seen.cv) == ("7/7 Tk", 2)


class _Opened:
    """The commitments a replay can read (label -> value)."""

    def __init__(self, values: dict[str, bytes]) -> None:
        self.values = values

    def value(self, label: str) -> bytes | None:
        return self.values.get(label)


def test_issue_19_one_identity_function_reads_the_commitment_else_the_face(standoff):  # noqa: F811
    """The current identity (RB 2.0, DESIGN 4): the committed value of the
    current version where this replay reads it, else the block's face."""
    from rules.ritd import hidden

    state = standoff.allied.seat().replay.state
    tk = next(b for b in state.position.blocks_of("allied") if b.unit == "7/7 Tk")
    label = hidden.identity_label(tk.token, state.versions.get(tk.token, 0))
    assert current_identity(state, tk.token, _Opened({label: hidden.encode_identity("7/7 Tk", 4)})) == ("7/7 Tk", 4)
    assert current_identity(state, tk.token, _Opened({})) == ("7/7 Tk", 4)  # the face
    faceless = msgspec.structs.replace(state, position=state.position.replace_blocks(
        [msgspec.structs.replace(tk, unit="", cv=0)]))
    assert current_identity(faceless, tk.token, _Opened({})) is None
