"""Ledger whose accounts are small objects; a transfer is a guarded withdraw + deposit pair."""

__all__ = ["Ledger", "LedgerError", "UnknownAccount", "DuplicateAccount", "InsufficientFunds"]


class LedgerError(Exception):
    pass


class UnknownAccount(LedgerError):
    pass


class DuplicateAccount(LedgerError):
    pass


class InsufficientFunds(LedgerError):
    pass


def _cents(amount, *, strict):
    if isinstance(amount, bool) or not isinstance(amount, int):
        raise TypeError("cents must be int")
    floor = 1 if strict else 0
    if amount < floor:
        raise ValueError("amount too small")
    return amount


class Account:
    def __init__(self, initial, limit):
        self.balance = initial
        self.limit = limit
        self.entries = [("open", initial, initial)]

    def credit(self, amount, kind):
        self.balance += amount
        self.entries.append((kind, amount, self.balance))

    def debit(self, amount, kind):
        if self.balance + self.limit < amount:
            raise InsufficientFunds("overdraft limit exceeded")
        self.balance -= amount
        self.entries.append((kind, amount, self.balance))


class Ledger:
    def __init__(self):
        self._by_id = {}

    def _account(self, account_id):
        account = self._by_id.get(account_id)
        if account is None:
            raise UnknownAccount(repr(account_id))
        return account

    def open(self, account_id, initial=0, overdraft_limit=0):
        account = Account(_cents(initial, strict=False), _cents(overdraft_limit, strict=False))
        if account_id in self._by_id:
            raise DuplicateAccount(repr(account_id))
        self._by_id[account_id] = account

    def deposit(self, account_id, amount):
        amount = _cents(amount, strict=True)
        account = self._account(account_id)
        account.credit(amount, "deposit")
        return account.balance

    def withdraw(self, account_id, amount):
        amount = _cents(amount, strict=True)
        account = self._account(account_id)
        account.debit(amount, "withdraw")
        return account.balance

    def transfer(self, source, target, amount):
        amount = _cents(amount, strict=True)
        payer, payee = self._account(source), self._account(target)
        if payer is payee:
            raise ValueError("self-transfer")
        payer.debit(amount, "transfer_out")   # raises before anything changed
        payee.credit(amount, "transfer_in")

    def balance(self, account_id):
        return self._account(account_id).balance

    def history(self, account_id):
        return [tuple(e) for e in self._account(account_id).entries]

    def total(self):
        total = 0
        for account in self._by_id.values():
            total += account.balance
        return total

    def accounts(self):
        return [account_id for account_id in self._by_id]
