"""The appendix chapters/your_own_model.ipynb: set up like every chapter, placed in the back
matter."""

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _first_code_cell(stem: str) -> str:
    cells = json.loads((ROOT / "chapters" / f"{stem}.ipynb").read_text(encoding="utf-8"))["cells"]
    return "".join(next(c for c in cells if c["cell_type"] == "code")["source"])


def test_first_code_cell_is_the_hardware_tours_byte_for_byte():
    assert _first_code_cell("your_own_model") == _first_code_cell("hardware_tour")


def test_appendix_follows_the_claims_ledger_in_the_back_matter():
    back = (ROOT / "_toc.yml").read_text(encoding="utf-8").split("caption: Back matter", 1)[1]
    files = re.findall(r"- file: (\S+)", back)
    assert files.index("chapters/your_own_model") == files.index("chapters/claims_ledger") + 1


def test_the_configs_the_appendix_reads_ship_in_data():
    text = (ROOT / "chapters" / "your_own_model.ipynb").read_text(encoding="utf-8")
    names = set(re.findall(r'configs / \\"([^"\\]+)\\"', text))
    assert {"Qwen2.5-0.5B", "Qwen3-30B-A3B", "DeepSeek-V3", "gpt2"} <= names
    for name in names:
        assert (ROOT / "data" / "hf_configs" / name / "config.json").is_file(), name
    assert (ROOT / "data" / "examples" / "nvidia_l40s.toml").is_file()
