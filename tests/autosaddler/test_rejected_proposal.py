"""A proposal that fails validation is a `RejectedProposal` carrying the raw proposal, and the
rejected node keeps that proposal (not a parsed or empty edit)."""

from __future__ import annotations

import pytest

from autosaddler.edits import RejectedEdit
from autosaddler.search import RejectedProposal
from testhelix.strategy.model import Strategy

from autosaddler_fakes import CountingEvaluator
from test_search import SCRIPT, make_search


def test_a_rejected_proposal_is_a_rejected_edit_with_the_raw_proposal(tmp_path):
    search = make_search(tmp_path, CountingEvaluator())
    with pytest.raises(RejectedProposal) as caught:      # after one proposal: the script's fixed field
        search._propose(Strategy(), {}, ["an earlier proposal"])
    assert isinstance(caught.value, RejectedEdit) and "fixed during search" in caught.value.reason
    assert caught.value.edit == SCRIPT[1]
    search.store.close()


def test_rejected_nodes_keep_the_raw_proposal(tmp_path):
    search = make_search(tmp_path, CountingEvaluator())
    dag = search.run(Strategy())
    search.store.close()
    rejected = [n for n in dag.nodes() if n.status == "rejected"]
    assert rejected and all(n.edit in (SCRIPT[1], SCRIPT[4]) for n in rejected)
