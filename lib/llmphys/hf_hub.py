"""Finding and reading a Hugging Face ``config.json``: a dict, a file, a folder, or a repo id
in the local hub cache. The library never uses the network: a repo id resolves only to a
config already downloaded. ``hf_config`` counts what the config describes and re-exports
these functions.

Home: chapters/your_own_model.ipynb.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def load_config(config: dict | str | os.PathLike) -> dict[str, Any]:
    """The config as a dict: ``config`` itself, a ``config.json`` path, or a folder holding one."""
    if isinstance(config, dict):
        return config
    if not isinstance(config, (str, os.PathLike)):
        raise TypeError(
            f"config must be a dict, a path to config.json or a folder holding one, "
            f"got {type(config).__name__}"
        )
    path = Path(config)
    if path.is_dir():
        path = path / "config.json"
    if not path.is_file():
        raise FileNotFoundError(
            f"config={str(config)!r}: no such file (expected a config.json or a folder holding one)"
        )
    try:
        with open(path, encoding="utf-8") as f:
            raw = json.load(f)
    except json.JSONDecodeError as err:
        raise ValueError(f"{path}: not valid JSON ({err})") from None
    if not isinstance(raw, dict):  # bad content of a file, so ValueError
        kind = type(raw).__name__
        raise ValueError(f"{path}: expected a JSON object, got {kind}")
    return raw


def hf_cache_dir() -> Path:
    """The Hugging Face hub cache: ``$HF_HUB_CACHE``, else ``$HF_HOME/hub``, else
    ``~/.cache/huggingface/hub`` (huggingface_hub's own order of look-up)."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"])
    home = os.environ.get("HF_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "huggingface"
    )
    return Path(home) / "hub"


def is_repo_id(text: str) -> bool:
    """Whether ``text`` has the shape of a Hugging Face repo id, ``org/name``.

    >>> is_repo_id("Qwen/Qwen2.5-0.5B"), is_repo_id("config.json")
    (True, False)
    """
    parts = text.split("/")
    ok = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")
    return len(parts) == 2 and all(p and set(p) <= ok and p not in (".", "..") for p in parts)


def cached_config_path(repo_id: str, *, cache_dir: str | os.PathLike | None = None) -> Path:
    """The ``config.json`` of ``repo_id`` in the local hub cache (never the network).

    The cache layout is huggingface_hub's: ``models--<org>--<name>/snapshots/<commit>/``,
    with ``refs/main`` naming the commit; without that ref the newest snapshot is used.
    """
    if not is_repo_id(repo_id):
        raise ValueError(f"repo_id={repo_id!r} is not of the form 'org/name'")
    cache = Path(cache_dir) if cache_dir is not None else hf_cache_dir()
    repo = cache / ("models--" + repo_id.replace("/", "--"))
    ref = repo / "refs" / "main"
    found = []
    if ref.is_file():
        found = [repo / "snapshots" / ref.read_text(encoding="utf-8").strip() / "config.json"]
    found += sorted(
        (repo / "snapshots").glob("*/config.json"), key=lambda q: q.stat().st_mtime, reverse=True
    )
    for path in found:
        if path.is_file():
            return path
    raise FileNotFoundError(
        f"{repo_id!r}: no config.json in the local Hugging Face cache ({repo}); llmphys "
        "has no network at run time. Download it once (huggingface-cli download "
        f"{repo_id} config.json) or pass the path of a config.json"
    )
