"""Any hosted model by name: `openai:NAME` for a model models.toml does not list runs (through the
real SDK, against `testhelix serve` on 127.0.0.1), unpriced and said so once; the user's own model
file (modeltable.py) adds prices and limits, and a wrong field in it is one clear error."""

from __future__ import annotations

from pathlib import Path

import pytest

from testhelix.commands.cli import main
from testhelix.core.errors import UserError
from testhelix.llm import modeltable, registry
from testhelix.llm.provider_protocol import price_usage
from testhelix.llm.serve.server import ModelServer
from testhelix.tasks.task import load_pack

PACK = Path(__file__).resolve().parents[1] / "fixtures" / "sim_task"


@pytest.fixture()
def user_dir(tmp_path, monkeypatch) -> Path:
    """A fresh config folder and a fresh 'once per command' memory for every test."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setattr(registry, "_NOTED", set())
    return tmp_path / "config" / "testhelix"


def test_any_openai_model_runs_unpriced_and_says_so_once(user_dir, tmp_path, monkeypatch, capsys):
    with ModelServer("sim:strong", tasks=load_pack(PACK), seed=5, api_key="k") as server:
        monkeypatch.setenv("OPENAI_BASE_URL", f"{server.url}/v1")
        monkeypatch.setenv("OPENAI_API_KEY", "k")
        with pytest.raises(SystemExit) as done:
            main(["run", "--pack", str(PACK), "--split", "all", "--config", "A", "--model", "openai:any-new-name",
                  "--run", str(tmp_path / "run"), "--workers", "1", "--no-coverage"])
    out, err = capsys.readouterr()
    assert done.value.code == 0, err
    notes = [line for line in err.splitlines() if line.startswith("note: openai:any-new-name")]
    assert len(notes) == 1 and "unpriced" in notes[0] and str(user_dir / "models.toml") in notes[0]
    assert "$0.00" not in out + err


def test_the_users_file_adds_prices_limits_and_aliases(user_dir):
    user_dir.mkdir(parents=True)
    (user_dir / "models.toml").write_text('[aliases]\nmine = "openai:my-model"\n\n[models."openai:my-model"]\n'
                                          "input_usd_per_mtok = 1.0\noutput_usd_per_mtok = 2.0\n"
                                          "context_window = 64000\n")
    info = registry.model_ref("mine").info
    assert (info.name, info.api, info.context_window) == ("openai:my-model", "chat", 64000)
    assert price_usage(info, 1_000_000, 1_000_000) == pytest.approx(3.0)
    # the package's known defaults stay as they are
    assert registry.model_ref("openai:gpt-4.1-mini").info.prices is not None


@pytest.mark.parametrize("text,named", [
    ('[models."openai:x"]\ncontext_window = "big"\n', "context_window"),
    ('[models."openai:x"]\ninput_usd_per_mtok = 1.0\n', "a price needs both"),
    ('[models."openai:x"]\nprice = 1\n', "unknown field 'price'"),
    ("[local]\nmax_output_tokens = 5\n", "unknown table [local]"),
    ('[aliases]\nx = "no-prefix"\n', "[aliases] x"),
])
def test_a_wrong_field_in_the_users_file_is_one_clear_error(user_dir, text, named):
    user_dir.mkdir(parents=True)
    (user_dir / "models.toml").write_text(text)
    with pytest.raises(UserError, match="models.toml") as refused:
        registry.model_ref("openai:x")
    assert named in refused.value.message


def test_an_oversized_users_file_is_refused(user_dir):
    user_dir.mkdir(parents=True)
    (user_dir / "models.toml").write_text("# " + "x" * modeltable.USER_FILE_MAX_BYTES + "\n")
    with pytest.raises(UserError, match="larger than the limit"):
        registry.model_ref("openai:x")


def test_a_close_typo_of_a_listed_model_is_named(user_dir, capsys):
    registry.model_ref("anthropic:claude-opus-4.6")
    assert "did you mean anthropic:claude-opus-4-6?" in capsys.readouterr().err
