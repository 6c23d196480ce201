"""tools/gpu_check.py on its numpy stand-in backend, and the record it writes (issue 31).

No GPU and no PyTorch: the stand-in times the same cases on tiny shapes, so that the
record's schema, its comparison with the book's predictions and the table the chapters
would show are tested here. The GPU run itself is never part of `make test`.
"""

import copy
import importlib.util
import sys
import tomllib
from pathlib import Path

import pytest

from llmphys import gpu_record, predict, specs

ROOT = Path(__file__).resolve().parents[1]


def _tool():
    spec = importlib.util.spec_from_file_location("gpu_check", ROOT / "tools" / "gpu_check.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def record(tmp_path_factory):
    out = tmp_path_factory.mktemp("gpu") / "record.toml"
    assert _tool().main(["--backend", "numpy", "--repeats", "3", "--warmup", "1",
                         "--out", str(out)]) == 0
    return gpu_record.load(out)  # load validates


def _tiny():
    return _tool().dataclasses.replace(specs.model("llama3_8b"), **_tool().TINY)


def test_the_numpy_record_has_every_section_and_validates(record):
    assert record["schema"] == gpu_record.SCHEMA and record["backend"] == "numpy"
    for section in gpu_record.SECTIONS:
        assert record[section], section
    assert {c["dtype"] for c in record["matmul"]} == {"bf16", "fp8"}
    assert sum(c["headline"] for c in record["matmul"]) == 2  # BF16 and FP8 at h^3
    assert len([c for c in record["matmul"] if not c["headline"]]) == 2 * 2**3  # 2 sizes^3
    assert all(c["check_passed"] for s in gpu_record.SECTIONS for c in record[s])
    assert all(len(c["times_s"]) == 3 for s in gpu_record.SECTIONS for c in record[s])
    assert "torch" not in sys.modules  # the stand-in never imports PyTorch


def test_each_prediction_is_the_books_and_the_ratio_is_predicted_over_median(record):
    acc, model = specs.accelerator(record["accelerator"]), _tiny()
    for section in gpu_record.SECTIONS:
        for case in record[section]:
            p = gpu_record.book_prediction(section, case, model=model, accelerator=acc)
            assert case["predicted_s"] == p["predicted_s"]
            times = sorted(case["times_s"])
            assert case["median_s"] == times[1]  # three repeats: the middle one
            assert case["predicted_over_measured"] == case["predicted_s"] / times[1]
            assert case["spread"] == (times[2] - times[0]) / times[1]


def test_a_copy_is_predicted_at_the_datasheet_bandwidth_counting_read_and_write(record):
    for case in record["copy"]:
        assert case["bytes_moved"] == 2 * case["buffer_bytes"]
        assert case["predicted_s"] == case["bytes_moved"] / 4.8e12  # H200: "4.8TB/s"


def test_a_matmul_is_predicted_by_the_roofline_at_its_precision():
    h200 = specs.accelerator("h200")
    m = specs.model("llama3_8b")
    case = {"m": 8192, "n": 8192, "k": 8192}
    bf16 = gpu_record.book_prediction("matmul", {**case, "dtype": "bf16"}, model=m,
                                      accelerator=h200)["predicted_s"]
    fp8 = gpu_record.book_prediction("matmul", {**case, "dtype": "fp8"}, model=m,
                                     accelerator=h200)["predicted_s"]
    # 8192^3 is compute-bound: 2 n^3 / dense peak (H200: 989.4 BF16, 1,978.9 FP8 TFLOP/s)
    assert bf16 == pytest.approx(2 * 8192**3 / 989.4e12, rel=1e-12)
    assert fp8 == pytest.approx(2 * 8192**3 / 1978.9e12, rel=1e-12)


def test_decode_is_predicted_weight_bound_at_batch_1_and_kv_bound_at_large_batch():
    h200, m = specs.accelerator("h200"), specs.model("llama3_8b")
    small = gpu_record.book_prediction("decode", {"batch": 1, "context_tokens": 1024},
                                       model=m, accelerator=h200)["predicted_parts_s"]
    large = gpu_record.book_prediction("decode", {"batch": 64, "context_tokens": 16384},
                                       model=m, accelerator=h200)["predicted_parts_s"]
    assert max(small, key=small.get) == "weights"
    assert large.get("kv_reads", 0.0) > large.get("weights", 0.0)
    assert "prefill_stall" not in small and "prefill_attention" not in large


def test_one_block_is_predicted_as_a_layer_of_the_full_step():
    # 32 blocks of Llama 3 8B do all its compute but the embedding's and the 0.5B-parameter
    # head's (6.5% of 8.03B): the block's GEMM and attention terms times 32 are 85-100% of the
    # full step's
    h200, m = specs.accelerator("h200"), specs.model("llama3_8b")
    block = gpu_record.book_prediction("train_block", {"micro_batch": 1, "seq_len": 4096},
                                       model=m, accelerator=h200)
    full = predict.train_step(m, h200, n_chips=1, seq_len=4096, global_batch_tokens=4096,
                              check_memory=False)
    def compute(parts):
        return parts["gemm"] + parts["attention"]

    ratio = m.n_layers * compute(block["predicted_parts_s"]) / compute(full.parts)
    assert 0.85 < ratio < 1.0
    assert "optimizer" not in block["predicted_parts_s"]


def test_the_toml_text_reads_back_to_the_same_record(record):
    assert tomllib.loads(gpu_record.dumps(record)) == record


@pytest.mark.parametrize("edit, message", [
    (lambda r: r.pop("date"), r"record: missing field 'date'"),
    (lambda r: r["device"].pop("driver"), r"device: missing field 'driver'"),
    (lambda r: r["copy"][0].update(median_s=r["copy"][0]["median_s"] * 1.01),
     r"copy\[0\].median_s = .* does not follow from times_s"),
    (lambda r: r["decode"][0].update(predicted_over_measured=1.0),
     r"decode\[0\].predicted_over_measured"),
    (lambda r: r["matmul"][0].update(m="8192"), r"matmul\[0\].m: expected int"),
    (lambda r: r["prefill"][0].update(check_passed=False), r"check_passed disagrees"),
    (lambda r: r["train_block"][0]["predicted_parts_s"].update(extra_s=1.0),
     r"predicted_parts_s does not sum"),
    (lambda r: r.update(schema="other/0"), r"record.schema: expected 'llmphys.gpu_check/1'"),
])
def test_the_schema_checker_names_what_is_wrong(record, edit, message):
    bad = copy.deepcopy(record)
    edit(bad)
    with pytest.raises(ValueError, match=message):
        gpu_record.validate(bad)


def test_the_table_shows_every_case_with_its_ratio_and_says_it_is_a_stand_in(record):
    text = gpu_record.achieved_table(record)
    n_cases = sum(len(record[s]) for s in gpu_record.SECTIONS)
    assert len([line for line in text.splitlines() if line.startswith("| ")]) == n_cases + 1
    assert "numpy stand-in backend: not a GPU measurement" in text
    first = record["matmul"][0]
    assert f"| {first['predicted_over_measured']:.2f} |" in text
    decode_only = gpu_record.achieved_table(record, sections=("decode",))
    assert decode_only.count("decode step:") == len(record["decode"])


def test_past_the_time_limit_every_case_is_skipped_by_name():
    tool = _tool()
    backend = tool.NumpyBackend(seed=0, n_warmup=0, n_repeats=1)
    out = tool.run(backend, model=_tiny(), accelerator=specs.accelerator("h200"),
                   sizes=tool.QUICK, time_limit_s=-1.0)
    assert all(not out[s] for s in gpu_record.SECTIONS)
    assert out["skipped"] and all("time limit" in s["reason"] for s in out["skipped"])
    # 2 headline matmuls, 2 copies, 2 blocks, 2 x 2 decode steps, 2 prefills, 2 x 2^3 grid
    assert len(out["skipped"]) == 2 + 2 + 2 + 4 + 2 + 16


def test_the_grid_gives_one_achieved_fraction_per_shape(record):
    grid = gpu_record.achieved_fraction_by_shape(record, "fp8")
    sizes = _tool().QUICK["grid"]
    assert set(grid) == {(m, n, k) for m in sizes for n in sizes for k in sizes}
    case = next(c for c in record["matmul"] if c["dtype"] == "fp8" and not c["headline"])
    assert grid[(case["m"], case["n"], case["k"])] == case["predicted_s"] / case["median_s"]
