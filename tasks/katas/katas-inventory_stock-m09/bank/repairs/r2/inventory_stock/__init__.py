"""Inventory with per-item on-hand and reserved counters and an index of active reservations."""
from dataclasses import dataclass

__all__ = ["Inventory", "StockError", "UnknownItem", "UnknownReservation", "OutOfStock"]


class StockError(Exception):
    pass


class UnknownItem(StockError):
    pass


class UnknownReservation(StockError):
    pass


class OutOfStock(StockError):
    def __init__(self, sku, requested, available):
        super().__init__(f"{sku}: requested {requested}, only {available} available")
        self.sku = sku
        self.requested = requested
        self.available = available


def _quantity(value, minimum):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"quantity must be an int, got {value!r}")
    if value < minimum:
        raise ValueError(f"quantity must be at least {minimum}, got {value}")
    return value


@dataclass
class _Item:
    on_hand: int
    reserved: int = 0


@dataclass(frozen=True)
class _Reservation:
    sku: str
    quantity: int
    order: object


class Inventory:
    def __init__(self):
        self._items = {}
        self._active = {}
        self._issued = 0

    def _item(self, sku):
        if sku not in self._items:
            raise UnknownItem(sku)
        return self._items[sku]

    def add_item(self, sku, quantity=0):
        _quantity(quantity, 0)
        if sku in self._items:
            raise ValueError(f"item {sku!r} already exists")
        self._items[sku] = _Item(on_hand=quantity)

    def restock(self, sku, quantity):
        _quantity(quantity, -1)
        item = self._item(sku)
        item.on_hand += quantity
        return item.on_hand

    def reserve(self, sku, quantity, order=None):
        _quantity(quantity, 1)
        item = self._item(sku)
        free = item.on_hand - item.reserved
        if quantity > free:
            raise OutOfStock(sku, quantity, free)
        self._issued += 1
        reservation_id = f"R{self._issued}"
        item.reserved += quantity
        self._active[reservation_id] = _Reservation(sku, quantity, order)
        return reservation_id

    def _end(self, reservation_id):
        try:
            reservation = self._active.pop(reservation_id)
        except KeyError:
            raise UnknownReservation(reservation_id) from None
        item = self._items[reservation.sku]
        item.reserved -= reservation.quantity
        return item, reservation

    def release(self, reservation_id):
        self._end(reservation_id)

    def commit(self, reservation_id):
        item, reservation = self._end(reservation_id)
        item.on_hand -= reservation.quantity

    def cancel_order(self, order):
        if order is None:
            return 0
        matching = [rid for rid, r in self._active.items() if r.order == order]
        for reservation_id in matching:
            self.release(reservation_id)
        return len(matching)

    def adjust(self, sku, delta):
        if isinstance(delta, bool) or not isinstance(delta, int):
            raise TypeError(f"delta must be an int, got {delta!r}")
        item = self._item(sku)
        if item.on_hand + delta < item.reserved:
            raise StockError(f"{sku}: cannot drop below the {item.reserved} reserved units")
        item.on_hand += delta
        return item.on_hand

    def on_hand(self, sku):
        return self._item(sku).on_hand

    def reserved(self, sku):
        return self._item(sku).reserved

    def available(self, sku):
        item = self._item(sku)
        return item.on_hand - item.reserved

    def reservations(self, sku=None):
        return {rid: (r.sku, r.quantity) for rid, r in self._active.items()
                if sku is None or r.sku == sku}
