"""In-memory ledger of integer-cent accounts with per-account overdraft limits."""
from dataclasses import dataclass, field

__all__ = ["Ledger", "LedgerError", "UnknownAccount", "DuplicateAccount", "InsufficientFunds"]


class LedgerError(Exception):
    """Base of the ledger's own errors."""


class UnknownAccount(LedgerError, KeyError):
    pass


class DuplicateAccount(LedgerError):
    pass


class InsufficientFunds(LedgerError):
    pass


def _check_amount(amount, positive=True):
    # bool is a subclass of int, but True cents is never what a caller meant.
    if isinstance(amount, bool) or not isinstance(amount, int):
        raise TypeError(f"amount must be an int number of cents, got {amount!r}")
    if positive and amount <= 0:
        raise ValueError(f"amount must be positive, got {amount}")
    if not positive and amount < 0:
        raise ValueError(f"amount must not be negative, got {amount}")


@dataclass
class _Account:
    balance: int
    limit: int
    history: list = field(default_factory=list)

    def record(self, kind, amount):
        self.history.append((kind, amount, self.balance))

    def can_pay(self, amount):
        return self.balance - amount >= -self.limit


class Ledger:
    def __init__(self):
        self._accounts = {}

    def _get(self, account_id):
        try:
            return self._accounts[account_id]
        except KeyError:
            raise UnknownAccount(f"no account {account_id!r}") from None

    def open(self, account_id, initial=0, overdraft_limit=0):
        _check_amount(initial, positive=False)
        _check_amount(overdraft_limit, positive=False)
        if account_id in self._accounts:
            raise DuplicateAccount(f"account {account_id!r} already exists")
        account = _Account(balance=initial, limit=overdraft_limit)
        account.record("open", initial)
        self._accounts[account_id] = account

    def deposit(self, account_id, amount):
        _check_amount(amount)
        account = self._get(account_id)
        account.balance += amount
        account.record("deposit", amount)
        return account.balance

    def withdraw(self, account_id, amount):
        _check_amount(amount)
        account = self._get(account_id)
        if not account.can_pay(amount):
            raise InsufficientFunds(f"{account_id!r} cannot pay {amount}")
        account.balance -= amount
        account.history.append(("withdraw", amount, account.balance))
        return account.balance

    def transfer(self, source, target, amount):
        _check_amount(amount)
        payer = self._get(source)
        payee = self._get(target)
        if source == target:
            raise ValueError("cannot transfer to the same account")
        if not payer.can_pay(amount):
            raise InsufficientFunds(f"{source!r} cannot pay {amount}")
        payer.balance -= amount
        payer.record("transfer_out", amount)
        payee.balance += amount
        payee.record("transfer_in", amount)

    def balance(self, account_id):
        return self._get(account_id).balance

    def history(self, account_id):
        return list(self._get(account_id).history)

    def total(self):
        return sum(account.balance for account in self._accounts.values())

    def accounts(self):
        return list(self._accounts)
