"""The scenario registry (``data/scenarios.toml``): every worked case once, typed, sourced, and
pointing at registry entries that exist instead of copying their numbers."""

import re
import shutil
import tomllib

import pytest

from llmphys import economics, scaling_laws, specs
from llmphys.predict import runs


@pytest.fixture
def data_copy(tmp_path, monkeypatch):
    """A copy of data/ that a test may break; the loader's cache is cleared around it."""
    dst = tmp_path / "data"
    shutil.copytree(specs.data_dir(), dst, ignore=shutil.ignore_patterns("bench", "hf_configs"))
    monkeypatch.setenv(specs.DATA_ENV_VAR, str(dst))
    specs.scenarios.cache_clear()
    specs._load.cache_clear()
    yield dst
    specs.scenarios.cache_clear()
    specs._load.cache_clear()


def _edit(path, old, new):
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def test_every_scenario_loads_as_its_kind_with_a_source_and_a_url_or_a_reason():
    cases = specs.scenarios()
    assert len(cases) >= 8
    for key, case in cases.items():
        assert isinstance(case, specs.SCENARIO_KINDS[case.kind]), key
        # a URL, or the book's own construction / a seed document said in words
        assert re.search(r"https?://|no public URL|no external source", case.source), key
        assert case.notes, key


def test_cases_name_registry_entries_that_exist():
    llama = specs.scenario("llama3_405b")
    run = runs.training_runs()[llama.run]
    assert (run.n_chips, run.tp, run.pp, run.dp) == (16_384, 8, 16, 128)  # Dubey et al. table 4
    ds = specs.scenario("deepseek_v3_cluster")
    assert economics.price(ds.gpu_hours).value == pytest.approx(2.664e6)  # DeepSeek-V3 table 1
    assert specs.model(ds.model).n_training_tokens == pytest.approx(14.8e12)
    assert scaling_laws.parametric_law(specs.scenario("sardana_13b").law).key == "sardana2024"


def test_the_rack_size_is_the_chips_scale_up_domain_not_a_typed_72():
    rack = specs.scenario("nvl72")
    assert rack.n_chips == specs.accelerator(rack.accelerator).scale_up_domain_size == 72
    with open(specs.data_dir() / "scenarios.toml", "rb") as f:
        assert "n_chips" not in tomllib.load(f)["nvl72"]


def test_the_series_dp_case_is_70b_on_4m_tokens_at_45_percent():
    c = specs.scenario("series_dp")
    assert (c.n_params, c.global_batch_tokens, c.mfu) == (70e9, 4e6, 0.45)


def test_the_queue_loads_its_step_at_about_096():
    q = specs.scenario("queue_5000")
    assert q.rate_per_s * q.interval_s / q.seats == pytest.approx(100 / 104)


def test_unknown_scenario_lists_the_known_keys():
    with pytest.raises(KeyError, match=r"unknown scenario 'nope'.*series_dp"):
        specs.scenario("nope")


def test_an_unknown_field_names_file_entry_and_field(data_copy):
    _edit(data_copy / "scenarios.toml", "seats = 104", "seats = 104\nchairs = 3")
    with pytest.raises(ValueError, match=r"scenarios.toml\[queue_5000\].*chairs"):
        specs.scenarios()


def test_a_missing_field_names_file_entry_and_field(data_copy):
    _edit(data_copy / "scenarios.toml", "seats = 104\n", "")
    with pytest.raises(ValueError, match=r"scenarios.toml\[queue_5000\]: missing .*'seats'"):
        specs.scenarios()


def test_a_mistyped_field_is_refused(data_copy):
    _edit(data_copy / "scenarios.toml", "seats = 104", 'seats = "104"')
    with pytest.raises(
        ValueError, match=r"scenarios.toml\[queue_5000\].seats: expected an integer"
    ):
        specs.scenarios()


def test_an_unknown_kind_or_chip_or_a_typed_rack_size_is_refused(data_copy):
    path = data_copy / "scenarios.toml"
    _edit(path, 'kind = "queue"', 'kind = "line"')
    with pytest.raises(ValueError, match=r"scenarios.toml\[queue_5000\].kind: 'line'"):
        specs.scenarios()
    _edit(path, 'kind = "line"', 'kind = "queue"')
    _edit(path, 'accelerator = "gb200"', 'accelerator = "gb300"')
    specs.scenarios.cache_clear()
    with pytest.raises(ValueError, match=r"scenarios.toml\[nvl72\].accelerator: 'gb300'"):
        specs.scenarios()
    _edit(path, 'accelerator = "gb300"', 'accelerator = "gb200"\nn_chips = 72')
    specs.scenarios.cache_clear()
    with pytest.raises(ValueError, match=r"scenarios.toml\[nvl72\].n_chips"):
        specs.scenarios()
