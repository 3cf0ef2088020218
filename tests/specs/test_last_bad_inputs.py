"""Issue 57, item 3: the last unclear bad inputs get a clear refusal, before anything is loaded or charged."""

from __future__ import annotations

import pytest
from tests.helpers import tiny_spec

from core.cli import main as privet
from core.common.errors import PrivetError
from core.specs.runspec import MAX_SPEC_DEPTH, RunSpec


def _valid_toml(tmp_path) -> str:
    path = tmp_path / "valid.toml"
    tiny_spec(tmp_path).save(path)
    return path.read_text(encoding="utf-8")


def _with(tmp_path, text: str, name: str = "spec.toml", encoding: str = "utf-8"):
    path = tmp_path / name
    path.write_bytes(text.encode(encoding))
    return path


def _replaced(toml: str, key: str, value: str) -> str:
    lines = [f"{key} = {value}" if line.split("=")[0].strip() == key else line for line in toml.splitlines()]
    return "\n".join(lines) + "\n"


def test_a_spec_nested_5000_levels_deep_is_refused_naming_the_nesting(tmp_path):
    toml = _valid_toml(tmp_path) + "\n[extra]\ndeep = " + "[" * 5000 + "]" * 5000 + "\n"
    with pytest.raises(PrivetError, match="nests tables or lists more than 16 levels deep"):
        RunSpec.load(_with(tmp_path, toml))
    shallow = _valid_toml(tmp_path) + "\n[extra]\ndeep = " + "[" * (MAX_SPEC_DEPTH + 2) + "]" * (MAX_SPEC_DEPTH + 2) + "\n"
    with pytest.raises(PrivetError, match="levels deep"):  # deep but parsable: refused the same way
        RunSpec.load(_with(tmp_path, shallow, "shallow.toml"))


@pytest.mark.parametrize("key, value, shows", [
    ("epsilon", "1e-300", "[privacy] epsilon (the privacy budget ε) = 1e-300 is out of range: it must be ≥ 0.001"),
    ("delta", "5e-324", "[privacy] delta (δ) = 5e-324 is out of range: it must be ≥ 1e-30"),
])
def test_an_epsilon_or_delta_too_small_to_represent_is_refused_as_typed(tmp_path, key, value, shows):
    with pytest.raises(PrivetError) as refused:
        RunSpec.load(_with(tmp_path, _replaced(_valid_toml(tmp_path), key, value)))
    assert shows in refused.value.what and "bug" not in refused.value.user_message()


def test_an_empty_task_is_refused(tmp_path):
    with pytest.raises(PrivetError, match=r"task \(the task description\) = '' is not a description of the public task"):
        RunSpec.load(_with(tmp_path, _replaced(_valid_toml(tmp_path), "task", '""')))
    with pytest.raises(PrivetError, match="task"):
        RunSpec.load(_with(tmp_path, _replaced(_valid_toml(tmp_path), "task", '"   "'), "blank.toml"))


def test_a_byte_order_mark_is_accepted(tmp_path):
    toml = _valid_toml(tmp_path)
    assert RunSpec.load(_with(tmp_path, "\ufeff" + toml)).to_dict() == RunSpec.load(_with(tmp_path, toml, "b.toml")).to_dict()


def test_the_command_line_refuses_each_with_exit_1_and_charges_nothing(tmp_path, privet_home, capsys):
    toml = _valid_toml(tmp_path)
    bad = {
        "deep": toml + "\n[extra]\ndeep = " + "[" * 5000 + "]" * 5000 + "\n",
        "eps": _replaced(toml, "epsilon", "1e-300"),
        "delta": _replaced(toml, "delta", "5e-324"),
        "task": _replaced(toml, "task", '""'),
    }
    for name, text in bad.items():
        assert privet(["run", str(_with(tmp_path, text, f"{name}.toml")), "--quiet"]) == 1, name
        err = capsys.readouterr().err
        assert "internal error" not in err and "Traceback" not in err and "bug" not in err, (name, err)
    assert not (privet_home / "ledger.db").exists()
