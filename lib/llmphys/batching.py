"""A batch schedule: "a train departs every T seconds", simulated and in closed form.

Requests arrive as a Poisson process of rate lambda. A batch (a "train") departs
at t = T, 2T, 3T, ... and takes every waiting request, up to ``seats`` of them;
the work it starts finishes S seconds later. With unlimited seats a request
arriving at a uniformly random phase waits U ~ Uniform(0, T) for the next
departure, so its latency is U + S:

    mean = T / 2 + S,    worst case = T + S,    mean batch = lambda T.

With S = T (each step fills the interval) that is 1.5 T on average and 2 T at
worst. With finite seats and load rho = lambda T / seats near 1, requests miss
trains and the tail grows without the closed form's bound; the simulation shows
by how much. Ref: the bulk-service queue of Bailey 1954, J. R. Stat. Soc. B 16(1).

Home: chapters/06_economics.ipynb.
"""

from __future__ import annotations

import math

import numpy as np

from . import units


def poisson_arrivals_s(
    rng: np.random.Generator, *, rate_per_s: float, horizon_s: float
) -> np.ndarray:
    """Sorted arrival times in [0, horizon) of a Poisson process: cumulative exponential gaps.

    >>> a = poisson_arrivals_s(np.random.default_rng(0), rate_per_s=1000.0, horizon_s=2.0)
    >>> len(a), bool(np.all(np.diff(a) > 0))
    (1977, True)
    """
    rate = units.check_positive("rate_per_s", rate_per_s)
    horizon = units.check_positive("horizon_s", horizon_s)
    n = int(rate * horizon + 10 * math.sqrt(rate * horizon) + 10)  # enough draws, w.h.p.
    t = np.cumsum(rng.exponential(1.0 / rate, size=n))
    while t[-1] < horizon:  # practically never: top up
        t = np.concatenate([t, t[-1] + np.cumsum(rng.exponential(1.0 / rate, size=n))])
    return t[t < horizon]


def simulate_schedule(
    rng: np.random.Generator,
    *,
    rate_per_s: float,
    interval_s: float,
    horizon_s: float,
    service_s: float | None = None,
    seats: int | None = None,
) -> dict[str, np.ndarray]:
    """Discrete-event run of Poisson arrivals against departures every ``interval_s``.

    FIFO boarding, at most ``seats`` per departure (None: unlimited); a request that
    arrives exactly at a departure boards it. Latency = departure + service - arrival
    (service defaults to the interval). Departures continue past the horizon until
    every request has left. Returns arrival_s, latency_s and batch_sizes (per departure).

    >>> r = simulate_schedule(np.random.default_rng(0), rate_per_s=1000.0,
    ...                       interval_s=0.02, horizon_s=2.0)
    >>> round(float(r["latency_s"].mean()) * 1e3, 1), round(float(r["latency_s"].max()) * 1e3, 1)
    (30.3, 40.0)
    """
    t_dep = units.check_positive("interval_s", interval_s)
    service = t_dep if service_s is None else units.check_positive("service_s", service_s)
    if seats is not None and (isinstance(seats, bool) or int(seats) != seats or seats < 1):
        raise ValueError(f"seats must be a whole number >= 1 or None, got {seats!r}")
    arrivals = poisson_arrivals_s(rng, rate_per_s=rate_per_s, horizon_s=horizon_s)
    if seats is None:
        k = np.ceil(arrivals / t_dep)  # index of the first departure at or after arrival
        k[k == 0] = 1.0  # nobody leaves at t = 0
        depart = k * t_dep
        n_dep = int(k.max()) if len(k) else 0
        sizes = np.bincount(k.astype(int), minlength=n_dep + 1)[1:]
        return {
            "arrival_s": arrivals,
            "latency_s": depart + service - arrivals,
            "batch_sizes": sizes,
        }
    depart = np.empty_like(arrivals)
    seats_used: list[int] = []
    boarded, j = 0, 0
    while boarded < len(arrivals):  # one event per departure
        j += 1
        waiting_until = int(np.searchsorted(arrivals, j * t_dep, side="right"))
        n = min(int(seats), waiting_until - boarded)
        depart[boarded : boarded + n] = j * t_dep
        boarded += n
        seats_used.append(n)
    return {
        "arrival_s": arrivals,
        "latency_s": depart + service - arrivals,
        "batch_sizes": np.asarray(seats_used),
    }


def schedule_latency_closed_form(
    *, interval_s: float, service_s: float | None = None
) -> dict[str, float]:
    """Mean and worst-case latency with unlimited seats: T/2 + S and T + S (S = T by default).

    >>> schedule_latency_closed_form(interval_s=0.02)
    {'mean_s': 0.03, 'worst_s': 0.04}
    """
    t = units.check_positive("interval_s", interval_s)
    s = t if service_s is None else units.check_positive("service_s", service_s)
    return {"mean_s": t / 2 + s, "worst_s": t + s}


def interval_for_batch_s(*, rate_per_s: float, batch_size: float) -> float:
    """Departure interval that fills trains with ``batch_size`` requests on average: B / lambda.

    >>> interval_for_batch_s(rate_per_s=10_000.0, batch_size=300)
    0.03
    """
    return units.check_positive("batch_size", batch_size) / units.check_positive(
        "rate_per_s", rate_per_s
    )


def seat_limit_study(
    rng: np.random.Generator, *, rate_per_s: float, interval_s: float, horizon_s: float, seats: int
) -> dict[str, dict[str, np.ndarray]]:
    """The same timetable run twice from one generator: unlimited seats, then ``seats`` seats.

    :func:`simulate_schedule` with service time equal to the interval, drawn in that order, so
    one seed fixes both runs. Returns ``{"unlimited": ..., "limited": ...}``.

    >>> sim = seat_limit_study(np.random.default_rng(2026), rate_per_s=5000.0,
    ...                        interval_s=0.02, horizon_s=2.0, seats=104)
    >>> round(float(sim["unlimited"]["latency_s"].max()) * 1e3), float(
    ...     sim["limited"]["latency_s"].max()) > 0.04
    (40, True)
    """
    free = simulate_schedule(rng, rate_per_s=rate_per_s, interval_s=interval_s, horizon_s=horizon_s)
    limited = simulate_schedule(
        rng, rate_per_s=rate_per_s, interval_s=interval_s, horizon_s=horizon_s, seats=seats
    )
    return {"unlimited": free, "limited": limited}
