"""Fan-out of updates: every subscriber gets each update; a slow one gets a resync, never blocks the loop."""

from __future__ import annotations

import threading

from companion.broadcast import Broadcaster, Update


def _update(seq: int) -> Update:
    return Update(seq, [{"seq": seq, "type": "hit"}], {"seq": seq})


def test_every_subscriber_gets_every_update_in_order() -> None:
    b = Broadcaster()
    subs = [b.subscribe() for _ in range(3)]
    for seq in range(1, 6):
        b.publish(_update(seq))
    for sub in subs:
        assert [sub.get(timeout=1).seq for _ in range(5)] == [1, 2, 3, 4, 5]
        assert sub.get(timeout=0.01) is None
    assert b.subscriber_count == 3


def test_a_slow_subscriber_gets_one_resync_instead_of_a_growing_backlog() -> None:
    b = Broadcaster(limit=4)
    slow, fast = b.subscribe(), b.subscribe()
    got: list[int] = []
    for seq in range(1, 11):
        b.publish(_update(seq))
        got.append(fast.get(timeout=1).seq)
    assert got == list(range(1, 11))
    # slow took nothing: 4 queued, the 5th overflowed into a resync carrying seq 5's state, then 6..8 queued...
    assert slow.pending() <= 4
    items = []
    while (u := slow.get(timeout=0.01)) is not None:
        items.append(u)
    assert items[0].resync and items[0].events == [] and items[0].state == {"seq": items[0].seq}
    assert [u.seq for u in items] == list(range(items[0].seq, 11))
    assert not any(u.resync for u in items[1:])
    assert slow.overflows >= 1


def test_close_wakes_a_waiting_get_and_unsubscribes() -> None:
    b = Broadcaster()
    sub = b.subscribe()
    result: list[object] = []
    t = threading.Thread(target=lambda: result.append(sub.get(timeout=30)))
    t.start()
    sub.close()
    t.join(timeout=30)
    assert result == [None]
    assert b.subscriber_count == 0
    b.publish(_update(1))  # nobody left: nothing happens
    sub.close()  # twice is fine


def test_closing_the_broadcaster_closes_everyone_and_later_subscriptions() -> None:
    b = Broadcaster()
    sub = b.subscribe()
    b.close()
    assert sub.closed and sub.get(timeout=0.01) is None
    late = b.subscribe()
    assert late.closed and late.get(timeout=0.01) is None
