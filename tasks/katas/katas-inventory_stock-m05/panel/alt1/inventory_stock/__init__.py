"""Inventory that stores only on-hand counts; reserved totals are summed from live reservations."""
import itertools

__all__ = ["Inventory", "StockError", "UnknownItem", "UnknownReservation", "OutOfStock"]


class StockError(Exception):
    pass


class UnknownItem(StockError):
    pass


class UnknownReservation(StockError):
    pass


class OutOfStock(StockError):
    def __init__(self, sku, requested, available):
        super().__init__(sku, requested, available)
        self.sku, self.requested, self.available = sku, requested, available


def _int(value):
    if type(value) is not int:
        raise TypeError("expected int")
    return value


class Inventory:
    def __init__(self):
        self._stock = {}
        self._holds = {}                 # id -> (sku, qty, order)
        self._ids = (f"res-{n:04d}" for n in itertools.count(1))

    def _known(self, sku):
        if sku not in self._stock:
            raise UnknownItem(sku)

    def add_item(self, sku, quantity=0):
        if _int(quantity) < 0:
            raise ValueError("negative quantity")
        if sku in self._stock:
            raise ValueError("duplicate sku")
        self._stock[sku] = quantity

    def restock(self, sku, quantity):
        if _int(quantity) <= 0:
            raise ValueError("restock needs a positive quantity")
        self._known(sku)
        self._stock[sku] += quantity
        return self._stock[sku]

    def reserved(self, sku):
        self._known(sku)
        return sum(q for s, q, _ in self._holds.values() if s == sku)

    def available(self, sku):
        return self.on_hand(sku) - self.reserved(sku)

    def on_hand(self, sku):
        self._known(sku)
        return self._stock[sku]

    def reserve(self, sku, quantity, order=None):
        if _int(quantity) <= 0:
            raise ValueError("reserve needs a positive quantity")
        free = self.available(sku)
        if free < quantity:
            raise OutOfStock(sku, quantity, free)
        rid = next(self._ids)
        self._holds[rid] = (sku, quantity, order)
        return rid

    def _take(self, rid):
        if rid not in self._holds:
            raise UnknownReservation(rid)
        return self._holds.pop(rid)

    def release(self, reservation_id):
        self._take(reservation_id)

    def commit(self, reservation_id):
        sku, qty, _ = self._take(reservation_id)
        self._stock[sku] -= qty

    def cancel_order(self, order):
        doomed = [rid for rid, (_, _, o) in self._holds.items() if o is not None and o == order]
        for rid in doomed:
            del self._holds[rid]
        return len(doomed)

    def adjust(self, sku, delta):
        _int(delta)
        held = self.reserved(sku)
        if self._stock[sku] + delta < held:
            raise StockError("adjustment would undercut reservations")
        self._stock[sku] += delta
        return self._stock[sku]

    def reservations(self, sku=None):
        return {rid: (s, q) for rid, (s, q, _) in self._holds.items() if sku in (None, s)}
