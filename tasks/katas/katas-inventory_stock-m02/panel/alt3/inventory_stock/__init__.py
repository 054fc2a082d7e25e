"""Inventory as a movement journal: counters are folded from appended movements.

Each movement is (sku, on_hand_delta, reserved_delta); folding is linear, which is fine
for a kata-sized inventory and keeps every state change an append.
"""

__all__ = ["Inventory", "StockError", "UnknownItem", "UnknownReservation", "OutOfStock"]


class StockError(Exception):
    pass


class UnknownItem(StockError):
    pass


class UnknownReservation(StockError):
    pass


class OutOfStock(StockError):
    def __init__(self, sku, requested, available):
        super().__init__(f"cannot reserve {requested} of {sku} ({available} free)")
        self.sku = sku
        self.requested = requested
        self.available = available


class Inventory:
    def __init__(self):
        self._skus = []
        self._moves = []
        self._open = {}
        self._serial = 0

    @staticmethod
    def _valid(q, positive):
        if isinstance(q, bool) or not isinstance(q, int):
            raise TypeError("quantities are ints")
        if q < 0 or (positive and q == 0):
            raise ValueError("bad quantity")

    def _fold(self, sku):
        if sku not in self._skus:
            raise UnknownItem(sku)
        on_hand = reserved = 0
        for s, dh, dr in self._moves:
            if s == sku:
                on_hand += dh
                reserved += dr
        return on_hand, reserved

    def add_item(self, sku, quantity=0):
        self._valid(quantity, False)
        if sku in self._skus:
            raise ValueError(f"{sku} already stocked")
        self._skus.append(sku)
        self._moves.append((sku, quantity, 0))

    def restock(self, sku, quantity):
        self._valid(quantity, True)
        self._fold(sku)
        self._moves.append((sku, quantity, 0))
        return self._fold(sku)[0]

    def reserve(self, sku, quantity, order=None):
        self._valid(quantity, True)
        on_hand, reserved = self._fold(sku)
        if on_hand - reserved < quantity:
            raise OutOfStock(sku, quantity, on_hand - reserved)
        self._serial += 1
        rid = f"{self._serial}"
        self._open[rid] = (sku, quantity, order)
        self._moves.append((sku, 0, quantity))
        return rid

    def _close(self, rid, consume):
        if rid not in self._open:
            raise UnknownReservation(rid)
        sku, quantity, _ = self._open.pop(rid)
        self._moves.append((sku, -quantity if consume else 0, -quantity))

    def release(self, reservation_id):
        self._close(reservation_id, consume=False)

    def commit(self, reservation_id):
        self._close(reservation_id, consume=True)

    def cancel_order(self, order):
        hits = [rid for rid, entry in self._open.items() if order is not None and entry[2] == order]
        for rid in hits:
            self._close(rid, consume=False)
        return len(hits)

    def adjust(self, sku, delta):
        if isinstance(delta, bool) or not isinstance(delta, int):
            raise TypeError("delta must be int")
        on_hand, reserved = self._fold(sku)
        if on_hand + delta < reserved:
            raise StockError("adjustment below reserved quantity")
        self._moves.append((sku, delta, 0))
        return on_hand + delta

    def on_hand(self, sku):
        return self._fold(sku)[0]

    def reserved(self, sku):
        return self._fold(sku)[1]

    def available(self, sku):
        on_hand, reserved = self._fold(sku)
        return on_hand - reserved

    def reservations(self, sku=None):
        return {rid: (s, q) for rid, (s, q, _) in self._open.items() if sku is None or s == sku}
