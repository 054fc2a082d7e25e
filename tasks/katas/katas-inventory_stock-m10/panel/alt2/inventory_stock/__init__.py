"""Inventory where each item object owns its reservations; a global map finds an id's item."""

__all__ = ["Inventory", "StockError", "UnknownItem", "UnknownReservation", "OutOfStock"]


class StockError(Exception):
    pass


class UnknownItem(StockError):
    pass


class UnknownReservation(StockError):
    pass


class OutOfStock(StockError):
    def __init__(self, sku, requested, available):
        self.sku = sku
        self.requested = requested
        self.available = available
        super().__init__("out of stock: %s" % sku)


def _check(value, low):
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(value)
    if value < low:
        raise ValueError(value)


class _Item:
    def __init__(self, sku, on_hand):
        self.sku = sku
        self.on_hand = on_hand
        self.holds = {}     # id -> (quantity, order)

    @property
    def reserved(self):
        return sum(q for q, _ in self.holds.values())

    @property
    def available(self):
        return self.on_hand - self.reserved


class Inventory:
    def __init__(self):
        self._items = {}
        self._owner = {}    # reservation id -> _Item
        self._next = 100

    def _get(self, sku):
        item = self._items.get(sku)
        if item is None:
            raise UnknownItem("unknown sku %r" % (sku,))
        return item

    def add_item(self, sku, quantity=0):
        _check(quantity, 0)
        if sku in self._items:
            raise ValueError("exists")
        self._items[sku] = _Item(sku, quantity)

    def restock(self, sku, quantity):
        _check(quantity, 1)
        item = self._get(sku)
        item.on_hand += quantity
        return item.on_hand

    def reserve(self, sku, quantity, order=None):
        _check(quantity, 1)
        item = self._get(sku)
        if quantity > item.available:
            raise OutOfStock(sku, quantity, item.available)
        rid = "%s#%d" % (sku, self._next)
        self._next += 1
        item.holds[rid] = (quantity, order)
        self._owner[rid] = item
        return rid

    def _pop(self, rid):
        item = self._owner.pop(rid, None)
        if item is None:
            raise UnknownReservation(rid)
        quantity, _ = item.holds.pop(rid)
        return item, quantity

    def release(self, reservation_id):
        self._pop(reservation_id)

    def commit(self, reservation_id):
        item, quantity = self._pop(reservation_id)
        item.on_hand -= quantity

    def cancel_order(self, order):
        if order is None:
            return 0
        count = 0
        for rid in list(self._owner):
            item = self._owner[rid]
            if item.holds[rid][1] == order:
                self._pop(rid)
                count += 1
        return count

    def adjust(self, sku, delta):
        _check(delta, -(10 ** 18))
        item = self._get(sku)
        if item.on_hand + delta < item.reserved:
            raise StockError("below reserved")
        item.on_hand += delta
        return item.on_hand

    def on_hand(self, sku):
        return self._get(sku).on_hand

    def reserved(self, sku):
        return self._get(sku).reserved

    def available(self, sku):
        return self._get(sku).available

    def reservations(self, sku=None):
        out = {}
        for rid, item in self._owner.items():
            if sku is None or item.sku == sku:
                out[rid] = (item.sku, item.holds[rid][0])
        return out
