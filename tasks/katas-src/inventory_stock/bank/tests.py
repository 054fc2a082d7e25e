import pytest

from inventory_stock import Inventory, OutOfStock, StockError, UnknownItem, UnknownReservation


def shop():
    inv = Inventory()
    inv.add_item("pen", 20)
    inv.add_item("ink", 3)
    return inv


def test_smoke_on_hand():
    assert shop().on_hand("pen") == 20


def test_smoke_reserve_returns_string():
    assert isinstance(shop().reserve("pen", 1), str)


def test_smoke_restock():
    inv = shop()
    inv.restock("ink", 2)
    assert inv.on_hand("ink") == 5


def test_last_units_can_be_reserved():
    inv = shop()
    inv.reserve("ink", 3)
    assert inv.available("ink") == 0


def test_available_after_reservation():
    inv = shop()
    inv.reserve("pen", 15)
    assert inv.available("pen") == 5


def test_release_restores_full_quantity():
    inv = shop()
    rid = inv.reserve("pen", 6)
    inv.release(rid)
    assert inv.available("pen") == 20


def test_commit_reduces_on_hand_by_quantity():
    inv = shop()
    rid = inv.reserve("pen", 6)
    inv.reserve("pen", 2)
    inv.commit(rid)
    assert inv.on_hand("pen") == 14


def test_double_commit_fails():
    inv = shop()
    rid = inv.reserve("ink", 1)
    inv.commit(rid)
    with pytest.raises(UnknownReservation):
        inv.commit(rid)


def test_ids_distinct_after_release():
    inv = shop()
    first = inv.reserve("pen", 1)
    second = inv.reserve("pen", 1)
    inv.release(first)
    third = inv.reserve("pen", 1)
    assert third != second and third != first
    assert len(inv.reservations()) == 2


def test_shrink_below_reserved_refused():
    inv = shop()
    inv.reserve("pen", 18)
    with pytest.raises(StockError):
        inv.adjust("pen", -3)


def test_cancel_order_frees_everything():
    inv = shop()
    inv.reserve("pen", 4, order="A")
    inv.reserve("ink", 2, order="A")
    inv.cancel_order("A")
    assert inv.reserved("pen") == 0 and inv.reserved("ink") == 0


def test_restock_zero_refused():
    with pytest.raises(ValueError):
        shop().restock("pen", 0)


def test_out_of_stock_reports_available():
    inv = shop()
    inv.reserve("pen", 12)
    with pytest.raises(OutOfStock) as info:
        inv.reserve("pen", 10)
    assert info.value.available == 8


def test_duplicate_sku_refused():
    inv = shop()
    with pytest.raises(ValueError):
        inv.add_item("pen", 1)
    assert inv.on_hand("pen") == 20


def test_first_reservation_id_format():
    assert shop().reserve("pen", 1) == "R1"


def test_out_of_stock_message():
    inv = shop()
    with pytest.raises(OutOfStock, match="only 3 available"):
        inv.reserve("ink", 4)


def test_unknown_item_is_key_error():
    with pytest.raises(KeyError):
        shop().on_hand("paper")


def test_cancel_without_matches_raises():
    with pytest.raises(UnknownReservation):
        shop().cancel_order("nothing")


def test_reservation_listing_values():
    inv = shop()
    rid = inv.reserve("ink", 2)
    assert inv.reservations() == {rid: ("ink", 2)}


def test_scenario_order_flow():
    inv = Inventory()
    inv.add_item("mug", 10)
    with pytest.raises(ValueError):
        inv.add_item("mug", 99)
    with pytest.raises(ValueError):
        inv.restock("mug", 0)
    a = inv.reserve("mug", 4, order="o1")
    b = inv.reserve("mug", 3, order="o1")
    c = inv.reserve("mug", 3, order="o2")
    assert len({a, b, c}) == 3
    assert inv.available("mug") == 0
    with pytest.raises(OutOfStock) as info:
        inv.reserve("mug", 1)
    assert info.value.available == 0
    inv.commit(c)
    with pytest.raises(UnknownReservation):
        inv.release(c)
    assert inv.cancel_order("o1") == 2
    assert (inv.on_hand("mug"), inv.reserved("mug"), inv.available("mug")) == (7, 0, 7)
    d = inv.reserve("mug", 7)
    assert d not in (a, b, c)
    with pytest.raises(StockError):
        inv.adjust("mug", -1)
    inv.release(d)
    assert inv.adjust("mug", -2) == 5
    assert inv.reservations() == {}
