"""Ledger storing immutable account snapshots; every change swaps in a new snapshot."""
from typing import NamedTuple

__all__ = ["Ledger", "LedgerError", "UnknownAccount", "DuplicateAccount", "InsufficientFunds"]


class LedgerError(Exception):
    pass


class UnknownAccount(LedgerError):
    pass


class DuplicateAccount(LedgerError):
    pass


class InsufficientFunds(LedgerError):
    pass


class Snapshot(NamedTuple):
    balance: int
    floor: int          # lowest allowed balance, i.e. -overdraft_limit
    entries: tuple


def _apply(snap, kind, delta, amount):
    new_balance = snap.balance + delta
    if new_balance < snap.floor:
        raise InsufficientFunds(f"balance would be {new_balance}, floor is {snap.floor}")
    return snap._replace(balance=new_balance, entries=snap.entries + ((kind, amount, new_balance),))


def _int_amount(x):
    if type(x) is not int:
        raise TypeError(f"{x!r} is not an int")
    return x


class Ledger:
    def __init__(self):
        self._snaps = {}

    def _snap(self, account_id):
        if account_id not in self._snaps:
            raise UnknownAccount(account_id)
        return self._snaps[account_id]

    @staticmethod
    def _positive(amount):
        if _int_amount(amount) <= 0:
            raise ValueError(f"{amount} is not positive")
        return amount

    def open(self, account_id, initial=0, overdraft_limit=0):
        for value in (initial, overdraft_limit):
            if _int_amount(value) < 0:
                raise ValueError(f"{value} is negative")
        if account_id in self._snaps:
            raise DuplicateAccount(account_id)
        self._snaps[account_id] = Snapshot(initial, -overdraft_limit, (("open", initial, initial),))

    def deposit(self, account_id, amount):
        amount = self._positive(amount)
        snap = _apply(self._snap(account_id), "deposit", amount, amount)
        self._snaps[account_id] = snap
        return snap.balance

    def withdraw(self, account_id, amount):
        amount = self._positive(amount)
        snap = _apply(self._snap(account_id), "withdraw", -amount, amount)
        self._snaps[account_id] = snap
        return snap.balance

    def transfer(self, source, target, amount):
        amount = self._positive(amount)
        src, dst = self._snap(source), self._snap(target)
        if source == target:
            raise ValueError("transfer needs two distinct accounts")
        new_src = _apply(src, "transfer_out", -amount, amount)
        new_dst = _apply(dst, "transfer_in", amount, amount)
        self._snaps[source], self._snaps[target] = new_src, new_dst

    def balance(self, account_id):
        return self._snap(account_id).balance

    def history(self, account_id):
        return list(self._snap(account_id).entries)

    def total(self):
        return sum(s.balance for s in self._snaps.values())

    def accounts(self):
        return list(self._snaps.keys())
