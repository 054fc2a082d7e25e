"""Event-sourced ledger: one global journal; balances are folded from the journal on demand."""

__all__ = ["Ledger", "LedgerError", "UnknownAccount", "DuplicateAccount", "InsufficientFunds"]


class LedgerError(Exception):
    pass


class UnknownAccount(LedgerError):
    pass


class DuplicateAccount(LedgerError):
    pass


class InsufficientFunds(LedgerError):
    pass


_SIGN = {"open": 1, "deposit": 1, "transfer_in": 1, "withdraw": -1, "transfer_out": -1}


def _amount(value, allow_zero):
    if type(value) is not int:
        raise TypeError("amount must be int")
    if value < 0 or (value == 0 and not allow_zero):
        raise ValueError("bad amount")
    return value


class Ledger:
    def __init__(self):
        self._journal = []      # (account_id, kind, amount)
        self._limits = {}

    def _require(self, account_id):
        if account_id not in self._limits:
            raise UnknownAccount(account_id)

    def balance(self, account_id):
        self._require(account_id)
        return sum(_SIGN[k] * a for acc, k, a in self._journal if acc == account_id)

    def _spendable(self, account_id, amount):
        return self.balance(account_id) - amount + self._limits[account_id] >= 0

    def open(self, account_id, initial=0, overdraft_limit=0):
        _amount(initial, True)
        _amount(overdraft_limit, True)
        if account_id in self._limits:
            raise DuplicateAccount(account_id)
        self._limits[account_id] = overdraft_limit
        self._journal.append((account_id, "open", initial))

    def deposit(self, account_id, amount):
        _amount(amount, False)
        self._require(account_id)
        self._journal.append((account_id, "deposit", amount))
        return self.balance(account_id)

    def withdraw(self, account_id, amount):
        _amount(amount, False)
        self._require(account_id)
        if not self._spendable(account_id, amount):
            raise InsufficientFunds(account_id)
        self._journal.append((account_id, "withdraw", amount))
        return self.balance(account_id)

    def transfer(self, source, target, amount):
        _amount(amount, False)
        self._require(source)
        self._require(target)
        if source == target:
            raise ValueError("source and target are the same account")
        if not self._spendable(source, amount):
            raise InsufficientFunds(source)
        self._journal.append((source, "transfer_out", amount))
        self._journal.append((target, "transfer_in", amount))

    def history(self, account_id):
        self._require(account_id)
        out, running = [], 0
        for acc, kind, amount in self._journal:
            if acc == account_id:
                running += _SIGN[kind] * amount
                out.append((kind, amount, running))
        return out

    def total(self):
        return sum(_SIGN[k] * a for _, k, a in self._journal)

    def accounts(self):
        return list(self._limits)
