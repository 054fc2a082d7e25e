import pytest

from inventory_stock import Inventory, OutOfStock, StockError, UnknownItem, UnknownReservation


@pytest.fixture
def inv():
    stock = Inventory()
    stock.add_item("cup", 12)
    stock.add_item("lid", 4)
    return stock


def counts(stock, sku):
    return stock.on_hand(sku), stock.reserved(sku), stock.available(sku)


def test_error_hierarchy():
    for exc in (UnknownItem, UnknownReservation, OutOfStock):
        assert issubclass(exc, StockError)


def test_new_item_counts():
    stock = Inventory()
    stock.add_item("a")
    stock.add_item("b", 7)
    assert counts(stock, "a") == (0, 0, 0)
    assert counts(stock, "b") == (7, 0, 7)


def test_add_existing_item_rejected_and_unchanged(inv):
    inv.reserve("cup", 5)
    with pytest.raises(ValueError):
        inv.add_item("cup", 100)
    with pytest.raises(ValueError):
        inv.add_item("lid", 1)
    assert counts(inv, "cup") == (12, 5, 7)
    assert counts(inv, "lid") == (4, 0, 4)


def test_add_item_negative_quantity(inv):
    with pytest.raises(ValueError):
        inv.add_item("neg", -1)
    with pytest.raises(UnknownItem):
        inv.on_hand("neg")


def test_restock_positive_only(inv):
    assert inv.restock("lid", 1) == 5
    for bad in (0, -1):
        with pytest.raises(ValueError):
            inv.restock("lid", bad)
    assert inv.on_hand("lid") == 5


@pytest.mark.parametrize("bad", [True, 2.0, "3", None])
def test_quantities_must_be_int(inv, bad):
    with pytest.raises(TypeError):
        inv.reserve("cup", bad)
    with pytest.raises(TypeError):
        inv.restock("cup", bad)
    with pytest.raises(TypeError):
        inv.adjust("cup", bad)
    assert counts(inv, "cup") == (12, 0, 12)


def test_quantity_checked_before_sku(inv):
    with pytest.raises(ValueError):
        inv.reserve("ghost", 0)
    with pytest.raises(TypeError):
        inv.restock("ghost", 1.5)


def test_unknown_sku(inv):
    for call in (lambda: inv.reserve("ghost", 1), lambda: inv.restock("ghost", 1),
                 lambda: inv.adjust("ghost", 1), lambda: inv.on_hand("ghost"),
                 lambda: inv.reserved("ghost"), lambda: inv.available("ghost")):
        with pytest.raises(UnknownItem):
            call()
    assert inv.reservations("ghost") == {}


def test_reserve_reduces_available_only(inv):
    rid = inv.reserve("cup", 4)
    assert isinstance(rid, str) and rid
    assert counts(inv, "cup") == (12, 4, 8)
    assert counts(inv, "lid") == (4, 0, 4)


def test_reserve_exactly_what_is_available(inv):
    inv.reserve("cup", 5)
    inv.reserve("cup", 7)
    assert counts(inv, "cup") == (12, 12, 0)


def test_reserve_more_than_available(inv):
    inv.reserve("cup", 9)
    with pytest.raises(OutOfStock) as info:
        inv.reserve("cup", 4)
    assert (info.value.sku, info.value.requested, info.value.available) == ("cup", 4, 3)
    with pytest.raises(OutOfStock) as info:
        inv.reserve("lid", 5)
    assert (info.value.requested, info.value.available) == (5, 4)
    assert counts(inv, "cup") == (12, 9, 3)
    assert len(inv.reservations()) == 1


def test_reserve_non_positive(inv):
    for bad in (0, -3):
        with pytest.raises(ValueError):
            inv.reserve("cup", bad)


def test_release_returns_all_units(inv):
    first = inv.reserve("cup", 5)
    inv.reserve("cup", 2)
    inv.release(first)
    assert counts(inv, "cup") == (12, 2, 10)


def test_commit_removes_units_from_hand(inv):
    first = inv.reserve("cup", 5)
    inv.reserve("cup", 3)
    inv.commit(first)
    assert counts(inv, "cup") == (7, 3, 4)
    assert list(inv.reservations().values()) == [("cup", 3)]


def test_ended_reservation_cannot_be_reused(inv):
    released = inv.reserve("cup", 2)
    committed = inv.reserve("cup", 3)
    inv.release(released)
    inv.commit(committed)
    for rid in (released, committed):
        with pytest.raises(UnknownReservation):
            inv.release(rid)
        with pytest.raises(UnknownReservation):
            inv.commit(rid)
    assert counts(inv, "cup") == (9, 0, 9)


def test_unknown_reservation_id(inv):
    with pytest.raises(UnknownReservation):
        inv.release("no-such-id")
    with pytest.raises(UnknownReservation):
        inv.commit("no-such-id")


def test_ids_unique_and_never_reused(inv):
    a = inv.reserve("cup", 1)
    b = inv.reserve("cup", 1)
    inv.release(a)
    c = inv.reserve("lid", 1)
    d = inv.reserve("cup", 1)
    assert len({a, b, c, d}) == 4
    assert inv.reservations() == {b: ("cup", 1), c: ("lid", 1), d: ("cup", 1)}


def test_reservations_filter_and_copy(inv):
    a = inv.reserve("cup", 2)
    b = inv.reserve("lid", 1)
    assert inv.reservations("lid") == {b: ("lid", 1)}
    assert inv.reservations("cup") == {a: ("cup", 2)}
    snapshot = inv.reservations()
    snapshot.clear()
    assert len(inv.reservations()) == 2


def test_cancel_order_releases_all_of_that_order(inv):
    inv.reserve("cup", 2, order="o1")
    keep = inv.reserve("cup", 3, order="o2")
    inv.reserve("lid", 4, order="o1")
    inv.reserve("cup", 1, order="o1")
    assert inv.cancel_order("o1") == 3
    assert counts(inv, "cup") == (12, 3, 9)
    assert counts(inv, "lid") == (4, 0, 4)
    assert list(inv.reservations()) == [keep]
    assert inv.cancel_order("o1") == 0
    assert inv.cancel_order("unknown") == 0


def test_cancel_order_single_and_none(inv):
    inv.reserve("cup", 2)
    inv.reserve("cup", 1, order=7)
    assert inv.cancel_order(None) == 0
    assert inv.reserved("cup") == 3
    assert inv.cancel_order(7) == 1
    assert inv.reserved("cup") == 2


def test_adjust_up_down_and_zero(inv):
    assert inv.adjust("lid", 3) == 7
    assert inv.adjust("lid", -2) == 5
    assert inv.adjust("lid", 0) == 5


def test_adjust_cannot_go_below_reserved(inv):
    inv.reserve("cup", 8)
    assert inv.adjust("cup", -4) == 8
    assert counts(inv, "cup") == (8, 8, 0)
    with pytest.raises(StockError) as info:
        inv.adjust("cup", -1)
    assert not isinstance(info.value, (OutOfStock, UnknownItem, UnknownReservation))
    assert counts(inv, "cup") == (8, 8, 0)


def test_adjust_below_zero_rejected(inv):
    with pytest.raises(StockError):
        inv.adjust("lid", -5)
    assert inv.on_hand("lid") == 4
