"""The server's collector policy (app/gc_policy.py, issue 26 item 11): while an app serves,
what startup made is frozen and the young generation is collected every gc_policy.YOUNG
containers; both are put back when it stops, since tests start many apps in one process."""

import gc

from app import gc_policy


def test_an_app_collects_less_often_while_it_serves_and_puts_it_back(client):
    # ``client`` (tests/conftest.py) is inside the app's lifespan.
    assert gc.get_threshold() == (gc_policy.YOUNG, *gc_policy.OLDER)
    assert gc.get_freeze_count() > 0
    assert client.get("/healthz").status_code == 200


def test_the_policy_undoes_itself():
    # From CPython's default, whatever an app still serving elsewhere in this process set.
    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    try:
        restore = gc_policy.serve()
        assert gc.get_threshold() == (gc_policy.YOUNG, *gc_policy.OLDER)
        assert gc.get_freeze_count() > 0
        restore()
        assert gc.get_threshold() == (700, 10, 10) and gc.get_freeze_count() == 0
    finally:
        gc.set_threshold(*saved)


def test_two_apps_stopping_in_either_order_leave_the_defaults():
    before = gc.get_threshold()
    for first_stops_first in (True, False):
        a = gc_policy.serve()
        b = gc_policy.serve()
        for restore in (a, b) if first_stops_first else (b, a):
            restore()
        assert gc.get_threshold() == before and gc.get_freeze_count() == 0
