"""The patch switch leaves every patched place as ``mock.patch.object`` would, each time it is switched."""

from __future__ import annotations

import types
from typing import Any
from unittest import mock

import pytest
from vcr.cassette import Cassette
from vcr.patch import CassettePatcherBuilder

from pytest_agentloom.replay.patching import PatchSwitch


class Base:
    inherited = "base"


class Child(Base):
    own = "child"


def places() -> tuple[types.ModuleType, type, Any]:
    module = types.ModuleType("somewhere")
    module.function = "original"  # type: ignore[attr-defined]
    return module, Child, Child()


def snapshot(module: Any, cls: type, instance: Any) -> tuple[Any, ...]:
    return (vars(module).get("function"), dict(vars(cls)).get("own"), dict(vars(cls)).get("inherited"),
            cls.inherited, vars(instance).copy(), instance.inherited)


def patchers(module: Any, cls: type, instance: Any) -> list[Any]:
    return [mock.patch.object(module, "function", "patched"), mock.patch.object(cls, "own", "patched"),
            mock.patch.object(cls, "inherited", "patched"), mock.patch.object(instance, "inherited", "patched"),
            mock.patch.object(cls, "own", "twice")]


def test_switching_patches_and_restores_like_mock() -> None:
    with_mock, with_switch = places(), places()
    before = snapshot(*with_switch)
    switch = PatchSwitch(patchers(*with_switch))
    for _ in range(2):  # reusable
        mocked = patchers(*with_mock)
        for patcher in mocked:
            patcher.__enter__()
        with switch:
            assert snapshot(*with_switch) == snapshot(*with_mock)
        for patcher in reversed(mocked):
            patcher.__exit__(None, None, None)
        assert snapshot(*with_switch) == snapshot(*with_mock) == before


def test_other_patchers_are_entered_and_left_in_order() -> None:
    seen: list[str] = []

    class Recorder:
        def __init__(self, name: str) -> None:
            self.name = name

        def __enter__(self) -> None:
            seen.append(f"enter {self.name}")

        def __exit__(self, *exc: object) -> None:
            seen.append(f"exit {self.name}")

    with PatchSwitch([Recorder("a"), Recorder("b")]):
        pass
    assert seen == ["enter a", "enter b", "exit b", "exit a"]


def test_a_failing_patch_undoes_the_ones_before_it() -> None:
    module, _, _ = places()

    class Broken:
        def __enter__(self) -> None:
            raise RuntimeError("no")

        def __exit__(self, *exc: object) -> None:
            pass

    switch = PatchSwitch([mock.patch.object(module, "function", "patched"), Broken()])
    with pytest.raises(RuntimeError), switch:
        pass
    assert module.function == "original"


def test_vcrpy_patches_switch_on_and_off() -> None:
    import httpx

    original = httpx.AsyncHTTPTransport.handle_async_request
    switch = PatchSwitch(CassettePatcherBuilder(Cassette("unused.yaml")).build())
    for _ in range(2):
        with switch:
            assert httpx.AsyncHTTPTransport.handle_async_request is not original
        assert httpx.AsyncHTTPTransport.handle_async_request is original
