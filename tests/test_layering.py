"""The library's import graph: no cycles, and no module imports one from a higher layer.

CONTRIBUTING.md ("Where a module goes") states the layers. The imports are read from the
source with ``ast``, including imports inside functions: an import deferred to call time to
dodge a cycle is still the cycle.
"""

import ast
import functools
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "lib" / "llmphys"

# Lowest first. A module may import modules of its own layer or a lower one. A module missing
# here is treated as "presentation": it may import anything, and no listed module may import it.
LAYERS = {
    "foundation": {  # units, loaders of sourced data, numpy primitives, book plumbing
        "units", "specs", "nn", "book",
        "pipeline.text", "pipeline.words", "pipeline.langid", "pipeline.zipf_text",
        "grading._core",
    },
    "mechanism": {  # one mechanism each: its counts, formulas or reference implementation
        "accounting", "roofline", "achieved", "hf_config", "kv_cache", "attention", "moe", "comms",
        "precision", "economics", "training", "training_practice", "batching", "benchmark",
        "compression", "emergence", "markov", "objective", "rope_scaling", "scaling_laws",
        "trends", "tinylm", "norm_choices", "compute_split", "critical_batch",
        "data_constrained", "inference_optimal", "scaling_fit", "reliability",
        "attention_phases", "activation_memory", "decoder",
        "kv_paging", "kv_quant", "moe_capacity", "linear_recurrence", "mixer_costs",
        "block_savings", "best_of_n", "xent_gradient", "decoding", "ridge_trend", "waves",
        "init_scale", "memory_hierarchy", "power_clock", "batch_scaling", "downstream",
        "moe_scaling", "mfu", "streamed_weights", "tinylm_source", "hf_hub", "hf_blocks",
        "hf_checkpoint", "bench_streams", "bench_record",
        "pipeline.quality", "pipeline.dedup", "pipeline.decontam", "pipeline.extract",
        "pipeline.pii", "pipeline.bpe", "pipeline.collapse", "pipeline.mixture",
        "pipeline.substring", "pipeline.sites", "pipeline.bloom", "pipeline.vocab",
        "pipeline.mixture_opt", "pipeline.unigram", "pipeline.lattice",
    },
    "system": {  # mechanisms composed into a decode step, a training step, a model, a pipeline
        "inference", "transformer", "flash_attention", "parallelism", "predict",
        "predict.train", "predict.memory", "predict.efficiency", "predict.runs",
        "predict.terms", "predict.validation", "predict.chips", "predict.hiding",
        "predict.elementwise", "predict.layout", "predict.ring", "predict.expert_load",
        "predict.moe_diagnosis", "predict.dp", "predict.policies",
        "scaling_lab", "tinylm_train", "kv_tiers", "scale_up", "serving",
        "predict.serve_terms", "predict.serve_step", "predict.serve_model", "predict.simulate",
        "predict.serving_data", "predict.serving_studies", "predict.serving_hypothesis",
        "predict.simulate_load",
        "predict.simulate_types", "predict.serving_rows",
        "predict.plan", "predict.plan_runs", "predict.cost", "predict.plan_serve",
        "pipeline.crawl", "pipeline.run", "pipeline.classifier", "pipeline.toxicity",
        "pipeline.speed", "pipeline.studies", "zero_memory", "comm_roofline", "mup",
        "kv_offload", "reasoning_cost",
    },
    "studies": {  # the book's worked cases: scenarios in, the numbers chapters and ledger show
        "studies", "studies.memory_wall", "studies.serving", "studies.economics",
        "studies.scale_up", "studies.scaling_laws",
    },
    "presentation": set(),  # tables, plots, claims, grading, cli: what chapters show and judge
}
RANK = {m: i for i, layer in enumerate(LAYERS.values()) for m in layer}
TOP = len(LAYERS) - 1

# Edges inside one layer that the layering alone would allow, but which leak a mechanism into
# another (issue 14's review): the KV-cache byte count must not reach routing, the decode step
# or a numpy attention; routing must not reach attention; counts must not format tables.
FORBIDDEN = {
    ("kv_cache", "moe"), ("kv_cache", "attention"), ("kv_cache", "inference"),
    ("kv_cache", "tables"), ("moe", "attention"), ("accounting", "tables"),
    ("pipeline.quality", "pipeline.crawl"), ("pipeline.sites", "pipeline.crawl"),
    ("specs", "hf_config"),
}


def _module_name(path: Path, package: Path) -> str:
    parts = list(path.relative_to(package).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(name: str, package: Path = PACKAGE) -> bool:
    p = package.joinpath(*name.split(".")) if name else package
    return p.with_suffix(".py").is_file() or (p / "__init__.py").is_file()


def import_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """Module -> the llmphys modules it imports (names relative to llmphys; "" is the package)."""
    graph: dict[str, set[str]] = {}
    for path in sorted(package.rglob("*.py")):
        name = _module_name(path, package)
        here = name.split(".") if name else []
        if path.name != "__init__.py":
            here = here[:-1]  # the package a relative import starts from
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = here[: len(here) - (node.level - 1)]
                    target = ".".join(base + ([node.module] if node.module else []))
                elif node.module and node.module.split(".")[0] == "llmphys":
                    target = node.module.removeprefix("llmphys").lstrip(".")
                else:
                    continue
                for alias in node.names:
                    sub = f"{target}.{alias.name}" if target else alias.name
                    deps.add(sub if _is_module(sub, package) else target)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] == "llmphys":
                        deps.add(alias.name.removeprefix("llmphys").lstrip("."))
        deps.discard(name)
        graph[name] = deps
    return graph


@functools.cache
def _library_graph() -> dict[str, frozenset[str]]:
    return {m: frozenset(d) for m, d in import_graph().items()}


def library_graph() -> dict[str, set[str]]:
    """The library's import graph (parsed once per session; a fresh copy each call)."""
    return {m: set(d) for m, d in _library_graph().items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a list of modules (first == last), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: finished
    path: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        path.append(m)
        for d in sorted(graph.get(m, ())):
            if state.get(d) == 1:
                return [*path[path.index(d):], d]
            if d not in state and (found := visit(d)):
                return found
        path.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state and (found := visit(m)):
            return found
    return None


def layer_violations(graph: dict[str, set[str]]) -> list[str]:
    out = []
    for m, deps in sorted(graph.items()):
        for d in sorted(deps):
            if RANK.get(d, TOP) > RANK.get(m, TOP):
                out.append(f"{m} ({list(LAYERS)[RANK.get(m, TOP)]}) imports {d} "
                           f"({list(LAYERS)[RANK.get(d, TOP)]})")
            if (m, d) in FORBIDDEN:
                out.append(f"{m} imports {d}: a forbidden edge")
    return out


def test_the_graph_reader_sees_relative_absolute_and_deferred_imports(tmp_path):
    pkg = tmp_path / "llmphys"
    (pkg / "sub").mkdir(parents=True)
    for f in ("__init__.py", "a.py", "b.py", "sub/__init__.py"):
        (pkg / f).write_text("")
    (pkg / "a.py").write_text("from . import b\n")
    (pkg / "sub" / "c.py").write_text("def f():\n    from .. import a\n"
                                      "    from llmphys.sub import d\n")
    (pkg / "sub" / "d.py").write_text("import llmphys.sub.c\n")
    g = import_graph(pkg)
    assert g["a"] == {"b"} and g["sub.c"] == {"a", "sub.d"} and g["sub.d"] == {"sub.c"}
    assert find_cycle(g) == ["sub.c", "sub.d", "sub.c"]


def test_every_named_module_exists():
    # a layer entry that names no file would silently stop guarding anything
    missing = sorted(m for m in RANK if not _is_module(m))
    assert not missing, f"LAYERS names modules that do not exist: {missing}"


def test_llmphys_has_no_import_cycle():
    cycle = find_cycle(library_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_no_module_imports_a_higher_layer_or_a_forbidden_edge():
    bad = layer_violations(library_graph())
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("edge", [("kv_cache", "inference"), ("pipeline.quality", "pipeline.crawl"),
                                  ("kv_cache", "moe"), ("accounting", "plots.architecture")])
def test_the_layer_check_catches_the_edges_the_review_found(edge):
    g = library_graph()
    g[edge[0]].add(edge[1])
    assert any(v.startswith(f"{edge[0]} ") and edge[1] in v for v in layer_violations(g))
