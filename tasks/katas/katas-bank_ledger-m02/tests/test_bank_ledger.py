import pytest

from bank_ledger import DuplicateAccount, InsufficientFunds, Ledger, LedgerError, UnknownAccount


@pytest.fixture
def ledger():
    book = Ledger()
    book.open("alice", initial=1000)
    book.open("bob", overdraft_limit=500)
    return book


def test_error_hierarchy():
    for exc in (UnknownAccount, DuplicateAccount, InsufficientFunds):
        assert issubclass(exc, LedgerError)


def test_open_records_history_and_balance():
    book = Ledger()
    book.open("x")
    book.open("y", initial=250)
    assert book.balance("x") == 0
    assert book.history("x") == [("open", 0, 0)]
    assert book.history("y") == [("open", 250, 250)]
    assert book.accounts() == ["x", "y"]


def test_duplicate_open_raises_and_keeps_account(ledger):
    with pytest.raises(DuplicateAccount):
        ledger.open("alice", initial=5)
    assert ledger.balance("alice") == 1000
    assert ledger.history("alice") == [("open", 1000, 1000)]
    assert ledger.accounts() == ["alice", "bob"]


@pytest.mark.parametrize("kwargs", [{"initial": -1}, {"overdraft_limit": -1}])
def test_open_rejects_negative_amounts(kwargs):
    book = Ledger()
    with pytest.raises(ValueError):
        book.open("z", **kwargs)
    assert book.accounts() == []


def test_deposit_and_withdraw_return_new_balance(ledger):
    assert ledger.deposit("alice", 250) == 1250
    assert ledger.withdraw("alice", 1250) == 0


def test_withdraw_history_shows_balance_after(ledger):
    ledger.withdraw("alice", 125)
    ledger.deposit("alice", 5)
    assert ledger.history("alice") == [
        ("open", 1000, 1000), ("withdraw", 125, 875), ("deposit", 5, 880)]


def test_withdraw_without_overdraft_cannot_go_negative(ledger):
    with pytest.raises(InsufficientFunds):
        ledger.withdraw("alice", 1001)
    assert ledger.balance("alice") == 1000
    assert len(ledger.history("alice")) == 1


def test_overdraft_down_to_exact_limit(ledger):
    assert ledger.withdraw("bob", 300) == -300
    assert ledger.withdraw("bob", 200) == -500
    with pytest.raises(InsufficientFunds):
        ledger.withdraw("bob", 1)
    assert ledger.balance("bob") == -500


def test_overdraft_limit_with_positive_balance():
    book = Ledger()
    book.open("c", initial=100, overdraft_limit=50)
    assert book.withdraw("c", 150) == -50


@pytest.mark.parametrize("amount", [0, -5])
def test_non_positive_amounts_rejected(ledger, amount):
    with pytest.raises(ValueError):
        ledger.deposit("alice", amount)
    with pytest.raises(ValueError):
        ledger.withdraw("alice", amount)
    with pytest.raises(ValueError):
        ledger.transfer("alice", "bob", amount)
    assert ledger.balance("alice") == 1000
    assert len(ledger.history("alice")) == 1


@pytest.mark.parametrize("amount", [True, False, 1.5, 10.0, "10"])
def test_non_int_amounts_raise_type_error(ledger, amount):
    with pytest.raises(TypeError):
        ledger.deposit("alice", amount)
    with pytest.raises(TypeError):
        ledger.transfer("alice", "bob", amount)
    assert ledger.balance("alice") == 1000


def test_bool_initial_rejected():
    with pytest.raises(TypeError):
        Ledger().open("q", initial=True)


def test_amount_checked_before_account_lookup(ledger):
    with pytest.raises(ValueError):
        ledger.deposit("nobody", 0)
    with pytest.raises(TypeError):
        ledger.withdraw("nobody", 2.5)
    with pytest.raises(ValueError):
        ledger.transfer("nobody", "ghost", -1)


def test_unknown_account_operations(ledger):
    for call in (lambda: ledger.deposit("zed", 1), lambda: ledger.withdraw("zed", 1),
                 lambda: ledger.balance("zed"), lambda: ledger.history("zed")):
        with pytest.raises(UnknownAccount):
            call()


def test_transfer_moves_money_and_records_both_sides(ledger):
    assert ledger.transfer("alice", "bob", 300) is None
    assert ledger.balance("alice") == 700
    assert ledger.balance("bob") == 300
    assert ledger.history("alice")[-1] == ("transfer_out", 300, 700)
    assert ledger.history("bob") == [("open", 0, 0), ("transfer_in", 300, 300)]


def test_transfer_into_funded_account_history():
    book = Ledger()
    book.open("a", initial=500)
    book.open("b", initial=20)
    book.transfer("a", "b", 120)
    assert book.history("b")[-1] == ("transfer_in", 120, 140)
    assert book.history("a") == [("open", 500, 500), ("transfer_out", 120, 380)]


def test_transfer_uses_source_overdraft(ledger):
    ledger.transfer("bob", "alice", 500)
    assert ledger.balance("bob") == -500
    assert ledger.balance("alice") == 1500
    with pytest.raises(InsufficientFunds):
        ledger.transfer("bob", "alice", 1)


def test_transfer_checks_source_funds_not_target(ledger):
    with pytest.raises(InsufficientFunds):
        ledger.transfer("alice", "bob", 1001)
    assert ledger.balance("alice") == 1000
    assert ledger.balance("bob") == 0
    assert len(ledger.history("bob")) == 1


def test_transfer_to_unknown_target_changes_nothing(ledger):
    with pytest.raises(UnknownAccount):
        ledger.transfer("alice", "ghost", 200)
    assert ledger.balance("alice") == 1000
    assert ledger.history("alice") == [("open", 1000, 1000)]


def test_transfer_unknown_account_reported_before_funds(ledger):
    with pytest.raises(UnknownAccount):
        ledger.transfer("alice", "ghost", 99999)
    with pytest.raises(UnknownAccount):
        ledger.transfer("ghost", "alice", 5)


def test_transfer_to_same_account_is_value_error(ledger):
    with pytest.raises(ValueError):
        ledger.transfer("alice", "alice", 10)
    with pytest.raises(ValueError):
        ledger.transfer("bob", "bob", 10_000)
    assert ledger.balance("alice") == 1000
    assert ledger.history("alice") == [("open", 1000, 1000)]


def test_same_account_check_after_existence_check(ledger):
    with pytest.raises(UnknownAccount):
        ledger.transfer("ghost", "ghost", 10)


def test_total_includes_negative_balances(ledger):
    ledger.withdraw("bob", 200)
    assert ledger.total() == 800
    ledger.transfer("bob", "alice", 300)
    assert ledger.total() == 800
    assert Ledger().total() == 0


def test_history_returns_a_copy(ledger):
    first = ledger.history("alice")
    first.append(("deposit", 1, 1))
    first.clear()
    assert ledger.history("alice") == [("open", 1000, 1000)]
