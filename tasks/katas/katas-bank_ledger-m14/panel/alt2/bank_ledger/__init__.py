"""Ledger kept as three parallel dicts (balances, limits, histories)."""

__all__ = ["Ledger", "LedgerError", "UnknownAccount", "DuplicateAccount", "InsufficientFunds"]


class LedgerError(Exception):
    pass


class UnknownAccount(LedgerError):
    def __init__(self, account_id):
        super().__init__(f"unknown account: {account_id}")
        self.account_id = account_id


class DuplicateAccount(LedgerError):
    pass


class InsufficientFunds(LedgerError):
    def __init__(self, account_id, needed, available):
        super().__init__(f"{account_id}: needs {needed}, can spend {available}")


class Ledger:
    def __init__(self):
        self.balances = {}
        self.limits = {}
        self.histories = {}
        self.order = []

    @staticmethod
    def _validate(amount, minimum):
        if not isinstance(amount, int) or isinstance(amount, bool):
            raise TypeError(type(amount).__name__)
        if amount < minimum:
            raise ValueError(amount)

    def _known(self, *ids):
        for account_id in ids:
            if account_id not in self.balances:
                raise UnknownAccount(account_id)

    def _available(self, account_id):
        return self.balances[account_id] + self.limits[account_id]

    def _log(self, account_id, kind, amount):
        self.histories[account_id].append((kind, amount, self.balances[account_id]))

    def open(self, account_id, initial=0, overdraft_limit=0):
        self._validate(initial, 0)
        self._validate(overdraft_limit, 0)
        if account_id in self.balances:
            raise DuplicateAccount(account_id)
        self.balances[account_id] = initial
        self.limits[account_id] = overdraft_limit
        self.histories[account_id] = []
        self.order.append(account_id)
        self._log(account_id, "open", initial)

    def deposit(self, account_id, amount):
        self._validate(amount, 1)
        self._known(account_id)
        self.balances[account_id] += amount
        self._log(account_id, "deposit", amount)
        return self.balances[account_id]

    def withdraw(self, account_id, amount):
        self._validate(amount, 1)
        self._known(account_id)
        if amount > self._available(account_id):
            raise InsufficientFunds(account_id, amount, self._available(account_id))
        self.balances[account_id] -= amount
        self._log(account_id, "withdraw", amount)
        return self.balances[account_id]

    def transfer(self, source, target, amount):
        self._validate(amount, 1)
        self._known(source, target)
        if source == target:
            raise ValueError(source)
        if amount > self._available(source):
            raise InsufficientFunds(source, amount, self._available(source))
        self.balances[source] -= amount
        self.balances[target] += amount
        self._log(source, "transfer_out", amount)
        self._log(target, "transfer_in", amount)

    def balance(self, account_id):
        self._known(account_id)
        return self.balances[account_id]

    def history(self, account_id):
        self._known(account_id)
        return self.histories[account_id][:]

    def total(self):
        return sum(self.balances.values())

    def accounts(self):
        return self.order[:]
