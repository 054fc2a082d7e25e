import pytest

from bank_ledger import DuplicateAccount, InsufficientFunds, Ledger, LedgerError, UnknownAccount


def two_accounts():
    book = Ledger()
    book.open("shop", initial=5000, overdraft_limit=1000)
    book.open("cust", initial=200)
    return book


def test_smoke_open_and_balance():
    book = Ledger()
    book.open("acc", initial=42)
    assert book.balance("acc") == 42


def test_smoke_deposit():
    book = two_accounts()
    book.deposit("cust", 1)
    assert book.balance("cust") == 201


def test_smoke_accounts_listed():
    assert sorted(two_accounts().accounts()) == ["cust", "shop"]


def test_limit_reached_exactly():
    book = two_accounts()
    assert book.withdraw("shop", 6000) == -1000


def test_overdraft_limit_is_honoured():
    book = Ledger()
    book.open("od", overdraft_limit=75)
    assert book.withdraw("od", 60) == -60


def test_zero_withdraw_is_value_error():
    book = two_accounts()
    with pytest.raises(ValueError):
        book.withdraw("cust", 0)


def test_bool_amount_is_type_error():
    book = two_accounts()
    with pytest.raises(TypeError):
        book.withdraw("cust", True)


def test_failed_transfer_keeps_source_intact():
    book = two_accounts()
    with pytest.raises(UnknownAccount):
        book.transfer("cust", "nobody", 50)
    assert book.balance("cust") == 200


def test_receiver_history_kind():
    book = two_accounts()
    book.transfer("shop", "cust", 800)
    kind, amount, after = book.history("cust")[-1]
    assert (kind, amount, after) == ("transfer_in", 800, 1000)


def test_reopen_is_refused():
    book = two_accounts()
    with pytest.raises(DuplicateAccount):
        book.open("cust")


def test_withdraw_entry_balance_after():
    book = two_accounts()
    book.withdraw("cust", 50)
    assert book.history("cust")[-1][2] == 150


def test_self_transfer_refused():
    book = two_accounts()
    with pytest.raises(ValueError):
        book.transfer("shop", "shop", 1)


def test_total_with_overdrawn_account():
    book = two_accounts()
    book.withdraw("shop", 5500)
    assert book.total() == -300


def test_customer_cannot_overspend_via_transfer():
    book = two_accounts()
    with pytest.raises(InsufficientFunds):
        book.transfer("cust", "shop", 201)


def test_unknown_account_is_a_key_error():
    with pytest.raises(KeyError):
        Ledger().balance("nope")


def test_error_message_names_account():
    book = two_accounts()
    with pytest.raises(InsufficientFunds, match="'cust' cannot pay 500"):
        book.withdraw("cust", 500)


def test_history_is_a_list_of_tuples():
    book = two_accounts()
    entry = book.history("cust")[0]
    assert type(entry) is tuple and entry == ("open", 200, 200)


def test_transfer_returns_new_source_balance():
    book = two_accounts()
    assert book.transfer("shop", "cust", 100) == 4900


def test_deposit_negative_is_insufficient_funds():
    book = two_accounts()
    with pytest.raises(InsufficientFunds):
        book.deposit("cust", -10)


def test_ledger_error_catches_unknown():
    with pytest.raises(LedgerError):
        Ledger().deposit("missing", 10)


def test_scenario_month_of_activity():
    book = Ledger()
    book.open("rent", initial=100, overdraft_limit=50)
    book.open("food", initial=300)
    book.transfer("food", "rent", 40)
    assert book.withdraw("rent", 190) == -50
    with pytest.raises(InsufficientFunds):
        book.transfer("food", "rent", 261)
    with pytest.raises(UnknownAccount):
        book.transfer("food", "nowhere", 10)
    with pytest.raises(ValueError):
        book.transfer("food", "food", 10)
    with pytest.raises(ValueError):
        book.deposit("food", 0)
    with pytest.raises(TypeError):
        book.deposit("food", False)
    with pytest.raises(DuplicateAccount):
        book.open("food")
    assert book.history("rent") == [("open", 100, 100), ("transfer_in", 40, 140),
                                    ("withdraw", 190, -50)]
    assert book.history("food") == [("open", 300, 300), ("transfer_out", 40, 260)]
    assert book.total() == 210
