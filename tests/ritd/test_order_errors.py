"""parse_order's errors are typed (issue 19): an OrderError, the ValueError the
engine's contract asks for, with the rule it cites and the same words."""

from __future__ import annotations

import pytest

from rules.ritd import game as ritd
from rules.ritd.actions import OrderError


class _NoFresh:
    """A compose ctx that must not be asked for randomness (nothing is parsed)."""

    def fresh(self) -> bytes:
        raise AssertionError("an unreadable order needs no fresh token")


def test_rb_2_0_an_unknown_unit_in_a_deploy_order_is_an_order_error_citing_the_rule():
    state = ritd.initial_state("1940", ())
    with pytest.raises(OrderError) as err:
        ritd.parse_order(state, "axis", "deploy Nobody at El Agheila", _NoFresh())
    assert isinstance(err.value, ValueError)
    assert err.value.rule == "RB 2.0" and str(err.value).startswith("RB 2.0: ")


def test_an_order_of_no_known_form_is_an_order_error_naming_the_forms_expected():
    state = ritd.initial_state("1940", ())
    with pytest.raises(OrderError) as err:
        ritd.parse_order(state, "axis", "hello", _NoFresh())
    assert err.value.rule == ""
    assert str(err.value) == ("not an order now: 'hello' (while deploying: 'deploy <unit> at <place>', "
                              "'end deployment')")
