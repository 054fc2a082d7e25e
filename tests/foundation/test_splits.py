import json

import pytest
from click.testing import CliRunner

from testhelix.commands.cli import cli
from testhelix.core.errors import UserError
from testhelix.tasks.splits import check_splits, load_split_file, make_splits, write_split_file


def make_pack(root, n=40, katas=8):
    for i in range(n):
        d = root / f"t{i:03d}"
        d.mkdir(parents=True)
        (d / "task.toml").write_text(f'[metadata]\nid = "t{i:03d}"\nkata = "k{i % katas}"\n')
        (d / "instruction.md").write_text(f"task {i}")
    return root


def test_disjoint_deterministic_and_sized(tmp_path):
    pack = make_pack(tmp_path / "pack")
    a = make_splits(pack, seed=42)
    b = make_splits(pack, seed=42)
    assert a.to_json() == b.to_json()
    sets = [set(v) for v in a.splits.values()]
    assert sum(len(s) for s in sets) == len(set().union(*sets)) == 40
    assert {k: len(v) for k, v in a.splits.items()} == {"proposal": 20, "development": 6, "release": 6, "test": 8}
    assert make_splits(pack, seed=7).splits != a.splits


def test_group_by_keeps_katas_together(tmp_path):
    pack = make_pack(tmp_path / "pack")
    s = make_splits(pack, group_by="kata")
    where: dict[int, set[str]] = {}
    for name, ids in s.splits.items():
        for i in ids:
            where.setdefault(int(i[1:]) % 8, set()).add(name)
    assert all(len(v) == 1 for v in where.values())


def test_check_refuses_overlap_unknown_and_changed_pack(tmp_path):
    pack = make_pack(tmp_path / "pack")
    s = make_splits(pack)
    assert check_splits(s, pack) == []
    s.splits["release"].append(s.splits["test"][0])
    s.splits["test"].append("nope")
    msgs = " ".join(m for _, m in check_splits(s, pack))
    assert "also in" in msgs and "unknown task id" in msgs
    fresh = make_splits(pack)
    (pack / "t000" / "instruction.md").write_text("changed")
    assert ("pack_digest", "the pack changed since the splits were made") in check_splits(fresh, pack)


def test_sizes_too_big(tmp_path):
    with pytest.raises(UserError):
        make_splits(make_pack(tmp_path / "p", n=5), {"proposal": 5, "development": 1, "release": 0, "test": 0})


def test_cli_make_check_and_malformed(tmp_path):
    pack = make_pack(tmp_path / "pack")
    out = tmp_path / "s.json"
    r = CliRunner().invoke(cli, ["splits", "make", "--pack", str(pack), "--out", str(out)])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(cli, ["splits", "check", str(out), "--pack", str(pack)])
    assert r.exit_code == 0 and "disjoint" in r.output
    data = json.loads(out.read_text())
    data["splits"]["test"] = "oops"
    out.write_text(json.dumps(data))
    with pytest.raises(UserError, match="malformed"):
        load_split_file(out)
    out.write_text("{")
    with pytest.raises(UserError, match="does not parse"):
        load_split_file(out)


def test_write_round_trip(tmp_path):
    s = make_splits(make_pack(tmp_path / "pack"))
    write_split_file(s, tmp_path / "x.json")
    assert load_split_file(tmp_path / "x.json").splits == s.splits


def make_context_pack(root, katas_per_context):
    """Katas of 6 tasks each; `katas_per_context` maps a context to its number of katas."""
    n = 0
    for context, katas in katas_per_context.items():
        for k in range(katas):
            for m in range(6):
                d = root / f"{context}-k{k}-m{m}"
                d.mkdir(parents=True)
                (d / "task.toml").write_text(f'[metadata]\nid = "{d.name}"\nkata = "{context}-k{k}"\n'
                                             f'context = "{context}"\n')
                (d / "instruction.md").write_text(f"task {n}")
                n += 1
    return root


def test_stratified_splits_hold_every_context_and_keep_katas_whole(tmp_path):
    from testhelix.tasks.splits import coverage, divided_groups, spread_by_context
    pack = make_context_pack(tmp_path / "pack", {"cli": 6, "general": 5, "visual": 3})
    s = make_splits(pack, group_by="kata", stratify_by="context")
    assert s.to_json() == make_splits(pack, group_by="kata", stratify_by="context").to_json()   # seeded
    assert sum(len(v) for v in s.splits.values()) == 84                                       # every task assigned
    assert all(set(c) == {"cli", "general", "visual"} for c in coverage(s, pack).values())
    # visual has 3 katas for 4 splits: only its last kata is divided, between the two held-out splits
    divided = divided_groups(s, pack)
    assert list(divided) == [next(iter(divided))] and next(iter(divided)).startswith("visual")
    assert set(next(iter(divided.values()))) == {"release", "test"}
    assert check_splits(s, pack) == []
    # a stratified file whose split lost a context is refused by check
    broken = type(s)(s.pack, s.pack_digest, s.seed, s.group_by,
                     {**s.splits, "release": [i for i in s.splits["release"] if not i.startswith("visual")]}, "context")
    assert any("visual" in m for _, m in check_splits(broken, pack))
    # a development prefix spread over contexts covers all of them
    dev = s.splits["development"]
    order = spread_by_context(dev, {i: i.split("-")[0] for i in dev}, {i: i.rsplit("-", 1)[0] for i in dev})
    assert sorted(order) == sorted(dev) and {i.split("-")[0] for i in order[:3]} == {"cli", "general", "visual"}


def test_cli_check_shows_contexts_per_split(tmp_path):
    pack = make_context_pack(tmp_path / "pack", {"cli": 4, "general": 4})
    out = tmp_path / "s.json"
    r = CliRunner().invoke(cli, ["splits", "make", "--pack", str(pack), "--group-by", "kata", "--stratify-by",
                                 "context", "--out", str(out)])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(cli, ["splits", "check", str(out), "--pack", str(pack)])
    assert r.exit_code == 0, r.output
    assert "every split holds all 2 contexts" in r.output and "release" in r.output and "cli" in r.output


def test_a_test_split_chosen_by_its_own_rule_is_exempt_from_the_context_check(tmp_path):
    from testhelix.tasks.splits import SplitFile, check_splits, parse_split_file, scan_pack

    pack = tmp_path / "p"
    for i, context in enumerate(["algorithm", "general", "algorithm", "general", "general"]):
        (pack / f"t{i}").mkdir(parents=True)
        (pack / f"t{i}" / "task.toml").write_text(f'[metadata]\nid = "t{i}"\ncontext = "{context}"\n')
    from testhelix.tasks.splits import pack_digest

    digest = pack_digest(scan_pack(pack))
    splits = {"proposal": ["t0", "t1"], "development": ["t2", "t3"], "test": ["t4"]}
    dealt = SplitFile("p", digest, 42, None, splits, stratify_by="context")
    assert check_splits(dealt, pack) == [("splits.test", "stratified by context but holds no algorithm task")]
    quota = SplitFile("p", digest, 42, None, splits, stratify_by="context", test_selection="source quotas")
    assert check_splits(quota, pack) == []
    again = parse_split_file(quota.to_json(), "x")
    assert again.test_selection == "source quotas" and again.to_json() == quota.to_json()
