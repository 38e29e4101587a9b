"""A seat's held composer never outlives its draft (issue 29, a survivor of
the merged session.py): after 'undo', the draft the seat folds is the
shorter one, even in the process that composed the longer one."""

from __future__ import annotations

from pbem import session


def test_after_undo_the_draft_replay_is_the_shorter_draft(table) -> None:
    seat = table.red.seat()
    before = session.draft_replay(seat)[0].pending()
    assert before is not None and before.role == "red"
    session.add_orders(seat, ["advance 1"])
    after_order = session.draft_replay(seat)[0].pending()
    assert after_order is not None and after_order.kind != before.kind  # the order moved the phase on
    session.undo(seat, 1)
    again, draft = session.draft_replay(seat)
    assert draft.orders == [] or not draft.orders
    assert again.pending() == before
    assert "advance 1" in session.legal_orders(seat)
