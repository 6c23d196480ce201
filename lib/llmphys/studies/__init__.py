"""Studies: the book's worked numbers, computed from a scenario or from explicit arguments.

A study function composes mechanisms (``comms``, ``parallelism``, ``inference``, ...) and the
prediction models (``predict``) into one number a chapter shows and the claims ledger judges;
both call it with the same arguments, usually a case from ``data/scenarios.toml``
(``specs.scenario("llama3_405b")``). Study functions never name a registry key in their
bodies: the case or the caller does. One module per chapter or topic:

    memory_wall   chapter 4: Llama 3's layout, the series' data-parallel case, run-level MFU
    serving       chapter 6: a model served at the largest batch, batch-1 penalties, racks
    economics     chapter 6: an owned GPU's hour, a run's bill, API list prices, KV-cache tiers
    scale_up      chapter 6: scale-up domains, pipelined decode, the scale-out gap
    scaling_laws  chapter 5: Sardana's inference-aware example, Muennighoff's repeated epochs

``from llmphys import studies`` gives all of them (``studies.serving.at_max_batch``).

Home: chapters/04_memory_wall.ipynb.
"""

from . import economics, memory_wall, scale_up, scaling_laws, serving

__all__ = ["economics", "memory_wall", "scale_up", "scaling_laws", "serving"]
