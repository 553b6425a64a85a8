"""The one registry type: lazy entries, "did you mean", import errors shown as themselves,
specs registered by the protocol and aggregator decorators, and the built-in registries."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest
from pydantic import BaseModel, ConfigDict

from mmtasks import registry
from mmtasks.dialogues.protocols import NoArgs, ProtocolSpec, protocol
from mmtasks.errors import ConfigError
from mmtasks.models.base import ModelSpec, load_model
from mmtasks.scoring.aggregation import AggregatorSpec


def test_unknown_names_get_did_you_mean() -> None:
    with pytest.raises(ConfigError) as info:
        registry.metrics.get("set_f", file="t.yaml", field="metrics[0].function")
    assert str(info.value) == "t.yaml, field 'metrics[0].function': unknown metric function 'set_f' (did you mean 'set_f1'?)"
    with pytest.raises(ConfigError, match=r"unknown protocol 'zzz' \(known: .*multi_turn, replay_probe, single_turn"):
        registry.protocols.get("zzz")


def test_every_builtin_registry_is_filled() -> None:
    assert {"multi_turn", "replay_probe", "single_turn"} <= set(registry.protocols.names())
    assert {"per_sample_mean"} <= set(registry.aggregators.names())
    assert {"json_object"} <= set(registry.verdict_parsers.names())
    assert {"choice", "integer", "integer_set", "text"} <= set(registry.parsers.names())
    # benchmarks' own names come from their plugin files, visible only to tasks that load them
    assert not {"mmdu", "mmrc"} & set(registry.aggregators.names())
    assert not {"mmdu_judge", "mmrc_judge"} & set(registry.verdict_parsers.names())
    assert {"combine_images", "shuffle_options"} <= set(registry.transforms.names())
    assert {"hf", "openai", "random", "replay", "vllm"} <= set(registry.backends.names())


def test_builtin_protocols_are_specs_with_typed_args() -> None:
    single = registry.protocols.get("single_turn")
    assert isinstance(single, ProtocolSpec) and single.args is NoArgs and single.supports_combined_images
    multi = registry.protocols.get("multi_turn")
    assert multi.uses_judge and not multi.supports_combined_images
    assert set(multi.args.model_fields) == {"history", "turns_field", "image_token", "truncate", "layout", "turns"}
    assert multi.args().model_dump() == {"history": "self", "turns_field": "conversations", "image_token": "<ImageHere>",
                                         "truncate": "none", "layout": "interleaved", "turns": None}
    assert "probe" in registry.protocols.get("replay_probe").args.model_fields
    mean = registry.aggregators.get("per_sample_mean")
    assert isinstance(mean, AggregatorSpec) and mean.name == "per_sample_mean"


def test_protocol_args_must_forbid_unknown_keys() -> None:
    class Loose(BaseModel):
        model_config = ConfigDict(extra="ignore")

    with pytest.raises(TypeError, match="extra='forbid'"):
        protocol("loose_protocol", args=Loose)


def test_lazy_entries_import_on_use_and_show_import_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reg: registry.Registry[object] = registry.Registry("thing", field="thing")
    (tmp_path / "lazy_ok_mod.py").write_text("VALUE = 42\n", encoding="utf-8")
    (tmp_path / "lazy_broken_mod.py").write_text("import mmtasks_missing_dependency_xyz\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    reg.register_lazy("ok", "lazy_ok_mod:VALUE")
    reg.register_lazy("broken", "lazy_broken_mod:VALUE", extra="mmtasks[xyz]")
    reg.register_lazy("no_attr", "lazy_ok_mod:MISSING")
    assert "lazy_ok_mod" not in sys.modules
    assert reg.get("ok") == 42
    with pytest.raises(ConfigError) as info:
        reg.get("broken")
    assert ("thing 'broken' needs a package that is not installed: mmtasks_missing_dependency_xyz "
            "(pip install 'mmtasks[xyz]')") in str(info.value)
    (tmp_path / "lazy_bad_mod.py").write_text("from os import no_such_name_xyz\n", encoding="utf-8")
    reg.register_lazy("bad", "lazy_bad_mod:VALUE")
    with pytest.raises(ConfigError, match="thing 'bad' cannot be imported from lazy_bad_mod: ImportError: cannot import name 'no_such_name_xyz'"):
        reg.get("bad")
    with pytest.raises(ConfigError, match="module lazy_ok_mod has no attribute 'MISSING'"):
        reg.get("no_attr")


def test_a_name_registered_twice_is_an_error_unless_it_is_the_same_thing() -> None:
    reg: registry.Registry[object] = registry.Registry("thing", field="thing")

    def one() -> None: ...

    def two() -> None: ...

    reg.register("x", one)
    reg.register("x", one)  # a module imported twice
    reg.register("spec", AggregatorSpec(name="spec", fn=one, emits=len))  # type: ignore[arg-type]
    reg.register("spec", AggregatorSpec(name="spec", fn=one, emits=len))  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="thing 'x' is registered twice"):
        reg.register("x", two)
    with pytest.raises(ConfigError, match="thing 'spec' is registered twice"):
        reg.register("spec", AggregatorSpec(name="spec", fn=two, emits=len))  # type: ignore[arg-type]


def test_a_missing_optional_backend_names_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "fake_backend_mod.py").write_text(textwrap.dedent("""
        import mmtasks_fake_torch_xyz
    """), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(registry.backends, "_entries", dict(registry.backends._entries))
    registry.backends.register_lazy("fakehf", "fake_backend_mod:Model", extra="mmtasks[hf]")
    with pytest.raises(ConfigError) as info:
        load_model(ModelSpec(backend="fakehf", name="m"))
    assert info.value.field == "--model"
    assert "model backend 'fakehf' needs a package that is not installed: mmtasks_fake_torch_xyz (pip install 'mmtasks[hf]')" in str(info.value)
    with pytest.raises(ConfigError, match=r"unknown model backend 'opnai' \(did you mean 'openai'\?\)"):
        load_model(ModelSpec(backend="opnai", name="m"))
