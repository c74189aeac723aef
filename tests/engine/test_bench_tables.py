"""``bench/tables.py``: its break-even arithmetic on made-up times, and the ``--replayed`` suite's recording
(the script itself prints, nothing is timed)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

pytestmark = pytest.mark.bench

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def tables() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_tables", ROOT / "bench" / "tables.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_tables"] = module  # dataclasses and typing look modules up by name
    spec.loader.exec_module(module)
    return module


def _times(serial: dict[str, float], parallel: dict[str, float]) -> dict[str, list[tuple[float, float]]]:
    """Two rounds of each run, the same both times (wall and CPU equal)."""
    times = {f"{suite} serial": [(wall, wall)] * 2 for suite, wall in serial.items()}
    times.update({f"{suite} -n 2": [(wall, wall)] * 2 for suite, wall in parallel.items()})
    return times


def test_break_even_is_where_the_ratio_crosses_one_in_the_table_s_units(tables: ModuleType) -> None:
    # 100 tests: trivial 1 s serial; the suites spinning 1 and 2 ms cost 1 and 2 ms more per test
    times = _times({"trivial": 1.0, "table": 1.5, "spin 1 ms": 1.1, "spin 2 ms": 1.2},
                   {"trivial": 1.5, "table": 1.8, "spin 1 ms": 1.21, "spin 2 ms": 1.08})

    found = tables.break_even(times, 100, (1.0, 2.0))

    assert found["points"] == [(0.0, 0.0, 1.5), (1.0, pytest.approx(1.0), pytest.approx(1.1)),
                               (2.0, pytest.approx(2.0), pytest.approx(0.9))]
    assert found["pays_from_ms"] == pytest.approx(1.5)  # halfway between 1.1 and 0.9
    assert found["table_extra_ms"] == pytest.approx(5.0)  # (1.5 - 1.0) s over 100 rows
    assert found["table_cap_ms"] == pytest.approx(10.0)  # within 2x: at most what a trivial test costs


@pytest.mark.parametrize(("spin_ratios", "pays_below", "said"), [
    ((1.4, 1.2), False, "at none of the points measured"),
    ((0.8, 0.7), True, "at every point measured"),
])
def test_break_even_outside_the_points_says_on_which_side(
        tables: ModuleType, capsys: pytest.CaptureFixture[str], spin_ratios: tuple[float, float], pays_below: bool,
        said: str) -> None:
    first = 1.5 if not pays_below else 0.9
    times = _times({"trivial": 1.0, "table": 1.5, "spin 1 ms": 1.1, "spin 2 ms": 1.2},
                   {"trivial": first, "table": 1.8, "spin 1 ms": 1.1 * spin_ratios[0],
                    "spin 2 ms": 1.2 * spin_ratios[1]})

    found = tables.break_even(times, 100, (1.0, 2.0))
    tables.report_break_even(found)

    assert found["pays_from_ms"] is None
    assert found["pays_below"] is pays_below
    assert f"-n 2 pays on this machine {said};" in capsys.readouterr().out


def test_the_spinning_suites_are_written_with_their_cost(tables: ModuleType, tmp_path: Path) -> None:
    suites = tables.make_suite(tmp_path, 3, spin_ms=(0.5,))

    assert set(suites) == {"trivial", "table", "spin 0.5 ms"}
    source = (suites["spin 0.5 ms"] / "test_spin.py").read_text()
    assert "range(3)" in source and "+ 0.0005" in source
    assert [label for label, _, _ in tables.spin_runs((0.5,))] == ["spin 0.5 ms serial", "spin 0.5 ms -n 2"]


def test_the_replayed_suite_is_recorded_once_and_replays_with_the_server_gone(tables: ModuleType,
                                                                              tmp_path: Path) -> None:
    suites = tables.make_suite(tmp_path, 3, replayed=True)
    folder = suites["replayed"]
    assert "provider: openai" in (folder / "flow.yaml").read_text()
    assert "script" not in (folder / "cases.yaml").read_text()

    env = tables.record_cassettes(folder, 3)

    cassettes = sorted(path.name for path in (folder / "cassettes").rglob("*.yaml"))
    assert cassettes == [f"test_rows[row-000{number}].yaml" for number in (1, 2, 3)]
    written = [path for path in folder.rglob("*") if path.is_file()]
    assert not any(tables.REPLAY_KEY in path.read_text(errors="replace") for path in written)
    tables.pytest_run(folder, 3, env_extra=env)  # raises SystemExit unless all 3 pass
    (folder / "cassettes" / "test_table.py" / cassettes[0]).unlink()
    with pytest.raises(SystemExit, match="row-0001"):  # replay without its cassette fails closed (no network)
        tables.pytest_run(folder, 3, env_extra=env)
