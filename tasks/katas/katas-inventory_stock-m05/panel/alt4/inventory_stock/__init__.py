"""Inventory with parallel counter dicts plus an order -> reservation-ids index."""
from collections import defaultdict
from itertools import count

__all__ = ["Inventory", "StockError", "UnknownItem", "UnknownReservation", "OutOfStock"]


class StockError(Exception):
    pass


class UnknownItem(StockError, LookupError):
    pass


class UnknownReservation(StockError, LookupError):
    pass


class OutOfStock(StockError):
    def __init__(self, sku, requested, available):
        super().__init__(f"{sku!r} short by {requested - available}")
        self.sku, self.requested, self.available = sku, requested, available


def _whole(n):
    if n.__class__ is not int:
        raise TypeError(f"{n!r} is not an int")
    return n


class Inventory:
    def __init__(self):
        self.physical = {}
        self.held = {}
        self.live = {}                        # id -> (sku, qty)
        self.by_order = defaultdict(list)     # order -> [ids]
        self._counter = count(1)

    def _need(self, sku):
        if sku not in self.physical:
            raise UnknownItem(sku)

    def add_item(self, sku, quantity=0):
        if _whole(quantity) < 0:
            raise ValueError(quantity)
        if sku in self.physical:
            raise ValueError(sku)
        self.physical[sku] = quantity
        self.held[sku] = 0

    def restock(self, sku, quantity):
        if _whole(quantity) < 1:
            raise ValueError(quantity)
        self._need(sku)
        self.physical[sku] += quantity
        return self.physical[sku]

    def reserve(self, sku, quantity, order=None):
        if _whole(quantity) < 1:
            raise ValueError(quantity)
        self._need(sku)
        free = self.physical[sku] - self.held[sku]
        if quantity > free:
            raise OutOfStock(sku, quantity, free)
        rid = "RSV-%d" % next(self._counter)
        self.held[sku] += quantity
        self.live[rid] = (sku, quantity)
        if order is not None:
            self.by_order[order].append(rid)
        return rid

    def _finish(self, rid):
        if rid not in self.live:
            raise UnknownReservation(rid)
        sku, quantity = self.live.pop(rid)
        self.held[sku] -= quantity
        return sku, quantity

    def release(self, reservation_id):
        self._finish(reservation_id)

    def commit(self, reservation_id):
        sku, quantity = self._finish(reservation_id)
        self.physical[sku] -= quantity

    def cancel_order(self, order):
        if order is None or order not in self.by_order:
            return 0
        released = 0
        for rid in self.by_order.pop(order):
            if rid in self.live:
                self._finish(rid)
                released += 1
        return released

    def adjust(self, sku, delta):
        _whole(delta)
        self._need(sku)
        if self.physical[sku] + delta < self.held[sku]:
            raise StockError(f"{sku!r} has {self.held[sku]} reserved")
        self.physical[sku] += delta
        return self.physical[sku]

    def on_hand(self, sku):
        self._need(sku)
        return self.physical[sku]

    def reserved(self, sku):
        self._need(sku)
        return self.held[sku]

    def available(self, sku):
        self._need(sku)
        return self.physical[sku] - self.held[sku]

    def reservations(self, sku=None):
        return {rid: entry for rid, entry in self.live.items() if sku is None or entry[0] == sku}
