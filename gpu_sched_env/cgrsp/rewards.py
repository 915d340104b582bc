"""What CGRSP-v0 rewards: named presets of the objective's weights, lost capacity, and shaping.

The env books eight raw quantities (``wait`` [job-s], ``miss`` [jobs], ``cost`` [$], ``waste``
[job-s], ``run`` [job-s], ``delay`` [s], ``excess_run`` [job-s], ``order_regret`` [job-s]); a *preset* turns them into
weights, derived from the simulator's parameters so that there is one source of truth (``alpha1``, ``alpha2`` in
:class:`~gpu_sched_env.cgrsp.params.CGRSPParams`):

* ``study``: the model's objective α1·Σw + α2·misses (spec §2; α2 = 10 by default, so a miss
  weighs like ten seconds of waiting and misses are ~0.01 % of a hectic day's return).
* ``deadline``: α1·Σw + α1·``MISS_AS_WAIT_S``·misses: a miss weighs like one job-hour of
  waiting (3 600 s = a tight job's whole deadline window), so a policy that trades a few
  minutes of mean wait for fewer misses is rewarded for it. Under EDF on a hectic day misses
  then carry about 4 % of the return (≈ 105 misses × 1 h against ≈ 9 M job-seconds of wait).
* ``capacity``: a learning proxy, judged on ``deadline`` (:data:`OBJECTIVE_OF`): ``waste`` is
  the slot capacity a decision loses (the provisioning delay of a dispatch; idle slots while
  jobs wait) at the queue's exchange rate q/C job-seconds of waiting per slot-second, plus
  one job-hour per miss. It charges the consequence of a dispatch onto Low stock in that
  step, at a scale that does not grow with the day (docs/results_learners.md).

* ``occupancy``: ``capacity`` plus ``run``, the slot time a dispatch spends *running* its job,
  at the same exchange rate. Every second of every slot is then charged at q/C when the
  decision that filled it (or left it idle) is taken: provisioning and run at the dispatch,
  idle time as it passes. Since Σ_slots (idle + provisioning + running) = C·Δt, that is the
  queue-length integral ∫ q dt with the rate frozen at each decision. A job's wait also
  holds its own provisioning (it has left the queue but not started); ``delay`` books that at
  face value, but ``occupancy`` leaves it at weight 0: with weight α1
  (``+env.reward_weights.delay=1``) the ``env=markov`` run reached 0–2 % miss at 70–73 min on
  the selection seeds from 300k to 360k steps, against 0 % at 64.5–69 min without (one seed
  each; docs/results_learners.md). The return ranks policies like the ``deadline`` objective (measured:
  ``python -m studies reward --part alignment``) while each term is the consequence of one
  decision (low variance, no delay). ``capacity`` leaves the run time out: it cannot tell a
  short job from a long one, so it does not rank the SPT family above EDF. Judged on
  ``deadline``.

``excess_run`` is in no preset (opt-in, ``+env.reward_weights.excess_run=w``): at a dispatch, the
dispatched class's *mean* run time on the slot's type above the class mix's mean there,
(W̄[c_j, g] − Σ_c p_c·W̄[c, g]) · q/C. A short class earns, a long one pays, in proportion to
the queue: the order SPT follows, which ``capacity`` cannot see, without ``run``'s two other
terms (the mix's mean run time charged at q/C on every dispatch, which weighs dispatching under a
long queue against the rest; the realised run time's noise, which the policy cannot know).

``order_regret`` is in no preset either (``+env.reward_weights.order_regret=w``): at a dispatch, the
dispatched class's mean run time on the slot's type above the *shortest class then waiting*'s
there, (W̄[c_j, g] − min_{c waiting} W̄[c, g]) · q/C (the queue before the dispatch, the job
itself included). It is 0 when the shortest waiting class is dispatched, and 0 whatever is
dispatched when one class waits. ``excess_run`` teaches the order only through the learner's
discount (a charge booked later weighs less), so it also pays a learner to leave a slot idle
rather than start a long job when nothing shorter waits (measured: ``python -m studies versus-rule --part timing``);
``order_regret`` charges only a shorter job passed over, so waiting never lowers it.

``cost`` is weighted 1 per dollar in all four (a tie-breaker: ~$6 a day against ~10^6 s).

*Shaping* adds the potential-based term F = γ·Φ(s′) − Φ(s) (Ng, Harada & Russell 1999), γ =
the env's ``shaping_gamma`` (set it to the learner's discount: training does), Φ = 0 once
the day is over. Σ_t γ^t F_t = −Φ(s_0) then, whatever the policy, so the learner's optimal
policy is unchanged; with γ = 1 the episode's shaping sum is Φ(end) − Φ(start). Each shaping
is a sum of separate potentials (:data:`SHAPING_TERMS`). ``shaping="queue"`` uses Φ_q, the
negative fluid estimate of the waiting still ahead of the queued jobs [job-s]:

    Φ(s) = −α1 · [ (q / C) · Σ_slots (f_s − t)  +  W̄ · q (q − 1) / (2 C) ]

(q queued jobs, C slots, f_s a slot's expected free time as a scheduler can know it, W̄ the
fleet's mean run time). The first term is the queue's share of the capacity that is already
committed; the second the queue draining at C / W̄ jobs per second. Because F telescopes, an
episode's shaping sum is Φ(end) − Φ(start) = 0 (both states have at most one queued job and
no committed capacity), so with γ = 1 the return still equals the objective. What changes is *when*
the consequence of an action shows: a dispatch onto a Low-stock slot (mean delay ~1 h)
commits an hour of a slot at once, costing ≈ (q/C)·3 900 s in that step instead of hours of
queue integral later, and leaving a slot idle for Δt costs (q/C)·Δt per idle slot.

``shaping="backlog"`` uses Φ_b = −W̄·b(b − 1)/(2C) over the day's b jobs not yet dispatched
(:class:`BacklogPotential`), for ``occupancy``: it hands a dispatch its unavoidable run time
back in the same step. The shaping term's weight is the preset's price of a job-second of
waiting (:data:`SHAPING_PART`: ``wait``, or ``waste`` in the learning proxies).

``shaping="backlog_risk"`` adds the deadline risk of the waiting jobs, weighted like a miss:
Φ_r = −Σ_waiting clip((t − (d_j − e_j) + H)/H, 0, 1) (:class:`DeadlineRisk`, H =
:data:`RISK_HORIZON_S`): a job's term falls from 0 to −1 over the last hour in which it can
still start on the fastest slot and meet its deadline, and is lifted when it is dispatched.
A miss is otherwise charged when the deadline passes, an hour (hundreds of decisions) after
the decisions that could have saved it, far beyond any discount horizon; with Φ_r the step
that dispatches an urgent job is credited with the risk it removes, and every step that
leaves it waiting is charged for the risk that grows. It telescopes (no job waits at either
end of a day), so the return still ranks policies as the unshaped one does.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from gpu_sched_env.cgrsp.params import CGRSPParams
from gpu_sched_env.core.errors import ConfigError, check_choice, check_keys, check_number

MISS_AS_WAIT_S = 3600.0  # [s] a miss under the deadline preset weighs like one job-hour of waiting


def deadline_objective(mean_wait_min: float, miss_pct: float) -> float:
    """Mean wait [min] plus a miss priced as one job-hour: the ``deadline`` objective per job [min], lower is better.

    The one scalar of a (wait, miss) pair that selection, sweeps and the leaderboard rank by.
    """
    return float(mean_wait_min + MISS_AS_WAIT_S / 60.0 * miss_pct / 100.0)


COST_WEIGHT = 1.0  # per $: one dollar weighs like one second of waiting (tie-breaker)


@dataclass(frozen=True)
class Part:
    """One raw quantity the env books (the one list of them: :data:`PARTS`).

    Attributes:
        unit: its unit (job-seconds, jobs, dollars ...).
        from_summary: the episode's sum read off a run's ``summary()`` (None: a summary does
            not hold it, so an objective that weighs it cannot be computed from one).
        waiting: it measures (or stands for) job-seconds of waiting, so its weight can price
            the shaping term (:attr:`Preset.shaping_part`).
    """

    unit: str
    from_summary: Callable[[Mapping[str, float]], float] | None = None
    waiting: bool = False


# The reward parts, in the order the env books and reports them (``info["reward_raw"]``).
PARTS: dict[str, Part] = {
    "wait": Part("job-s", lambda s: s["mean_wait_min"] * 60.0 * s["completed"], waiting=True),  # Σ_j w_j
    "miss": Part("jobs", lambda s: s["miss_pct"] / 100.0 * s["n_jobs"]),
    "cost": Part("$", lambda s: s["cost_usd"]),
    "waste": Part("job-s", waiting=True),  # lost slot capacity at the queue's exchange rate q/C
    "run": Part("job-s"),  # a dispatch's run time at the same rate
    "delay": Part("s"),  # a dispatch's provisioning delay, on its own
    "excess_run": Part("job-s"),  # the class's mean run time above the mix's, on the slot's type, at q/C
    "order_regret": Part("job-s"),  # the class's mean run time above the shortest waiting class's there, at q/C
}
REWARD_PARTS: tuple[str, ...] = tuple(PARTS)

# A weight: coefficient × a CGRSPParams field (None: the coefficient alone), so the presets
# follow the simulator's ``alpha1``/``alpha2`` (one source of truth).
Weight = tuple[float, "str | None"]


@dataclass(frozen=True)
class Preset:
    """A reward preset: a weight table over :data:`PARTS` (parts not named weigh 0).

    Attributes:
        weights: part -> (coefficient, CGRSPParams field or None).
        judged_on: the preset whose weights an episode is judged on (None: itself; a learning
            proxy names the objective it stands for).
    """

    weights: Mapping[str, Weight] = field(default_factory=dict)
    judged_on: str | None = None

    def weights_for(self, params: CGRSPParams) -> dict[str, float]:
        """The numeric weight of every part (in :data:`REWARD_PARTS` order) for ``params``."""
        out = dict.fromkeys(REWARD_PARTS, 0.0)
        for k, (coef, name) in self.weights.items():
            out[k] = float(coef) if name is None else float(coef * float(getattr(params, name)))
        return out

    @property
    def shaping_part(self) -> str:
        """The part whose weight prices one job-second of waiting (the shaping term's weight).

        The first waiting part (:attr:`Part.waiting`) the preset weighs: the wait itself, or,
        in a learning proxy that leaves the wait out, the lost capacity that stands for it.
        """
        return next(k for k in REWARD_PARTS if PARTS[k].waiting and self.weights.get(k, (0.0, None))[0] != 0.0)


_COST: dict[str, Weight] = {"cost": (COST_WEIGHT, None)}
_MISS_AS_WAIT: dict[str, Weight] = {"miss": (MISS_AS_WAIT_S, "alpha1")}
# The presets: each a weight table (the module docstring says why each weighs what it does).
PRESETS: dict[str, Preset] = {
    "study": Preset({"wait": (1.0, "alpha1"), "miss": (1.0, "alpha2"), **_COST}),
    "deadline": Preset({"wait": (1.0, "alpha1"), **_MISS_AS_WAIT, **_COST}),
    "capacity": Preset({**_MISS_AS_WAIT, **_COST, "waste": (1.0, "alpha1")}, judged_on="deadline"),
    "occupancy": Preset(
        {**_MISS_AS_WAIT, **_COST, "waste": (1.0, "alpha1"), "run": (1.0, "alpha1")}, judged_on="deadline"
    ),
}

# Derived from PRESETS (kept for the callers that read them; nothing here is kept by hand):
# the weights of each preset as a function of the parameters, what an episode is judged on
# (model selection, ``objective`` columns), and the part pricing a job-second of waiting.
REWARD_PRESETS: dict[str, Callable[[CGRSPParams], dict[str, float]]] = {n: p.weights_for for n, p in PRESETS.items()}
OBJECTIVE_OF: dict[str, str] = {n: p.judged_on or n for n, p in PRESETS.items()}
SHAPING_PART: dict[str, str] = {n: p.shaping_part for n, p in PRESETS.items()}
RISK_HORIZON_S = 3600.0  # [s] a waiting job's deadline risk grows from 0 to 1 over its last hour of laxity


def _check_table() -> None:
    """The table's own consistency (run at import: a bad edit fails at once, naming the entry)."""
    for name, p in PRESETS.items():
        check_keys(p.weights, REWARD_PARTS, section=f"PRESETS[{name!r}].weights")
        judge = PRESETS.get(OBJECTIVE_OF[name])
        if judge is None:
            raise ConfigError(f"PRESETS[{name!r}].judged_on = {p.judged_on!r}; allowed: {', '.join(PRESETS)}")
        unreadable = [k for k, (c, _) in judge.weights.items() if c and PARTS[k].from_summary is None]
        if unreadable:
            raise ConfigError(
                f"preset {name!r} is judged on {OBJECTIVE_OF[name]!r}, which weighs {unreadable}: not in a run summary"
            )


_check_table()


def reward_weights(params: CGRSPParams, preset: str, overrides: Mapping[str, float] | None = None) -> dict[str, float]:
    """The weights of ``preset`` for ``params``, with explicit per-part ``overrides``."""
    check_choice("reward", preset, PRESETS)
    weights = PRESETS[preset].weights_for(params)
    if overrides:
        if not isinstance(overrides, Mapping):
            raise ConfigError(f"reward_weights = {overrides!r} must be a mapping with keys {', '.join(REWARD_PARTS)}")
        check_keys(overrides, REWARD_PARTS, section="reward_weights")
        for k, v in overrides.items():
            weights[k] = float(check_number(f"reward_weights.{k}", v, lo=0.0))
    return weights


def weights_of(config, params: CGRSPParams) -> tuple[dict[str, float], dict[str, float]]:
    """``(reward weights, objective weights)`` of an env config for ``params``.

    The objective weights are what an episode is judged on (:data:`OBJECTIVE_OF`); an explicit
    price of a miss in ``config.reward_weights`` holds for both (the operator's price of a miss).
    """
    weights = reward_weights(params, config.reward, config.reward_weights)
    miss = {"miss": weights["miss"]} if "miss" in config.reward_weights else None
    return weights, reward_weights(params, OBJECTIVE_OF[config.reward], miss)


def summary_objective(summary: Mapping[str, float], weights: Mapping[str, float]) -> float:
    """Σ_k weight_k · part_k of a run from its summary (what an env episode with ``weights`` sums to).

    Every weighted part is read off the summary by its :data:`PARTS` entry; a part with a
    nonzero weight that a summary does not hold raises ``ConfigError`` (never silently left out).
    """
    check_keys(weights, REWARD_PARTS, section="objective weights")
    total = 0.0
    for k in REWARD_PARTS:
        w = weights.get(k, 0.0)
        if w == 0.0:
            continue
        read = PARTS[k].from_summary
        if read is None:
            readable = [n for n, p in PARTS.items() if p.from_summary is not None]
            raise ConfigError(
                f"objective weight {k} = {w} but a run summary does not hold {k!r}; parts a summary holds: "
                f"{', '.join(readable)}"
            )
        total += w * read(summary)
    return float(total)


class QueuePotential:
    """Φ_q of the module docstring (``shaping="queue"``) in job-seconds (≤ 0; O(C) per evaluation)."""

    def __init__(self, sim) -> None:
        self.w_mean = sim.fleet.mean_wbar  # [s]
        self.C = len(sim.fleet.slot_type)

    def __call__(self, sim) -> float:
        q = len(sim.waiting)
        if q == 0:
            return 0.0
        t = sim.t
        committed = sum(sim.expected_free(s) - t for s in range(self.C) if sim.slot_job[s] >= 0)
        return -(q / self.C * committed + self.w_mean * q * (q - 1) / (2.0 * self.C))


class BacklogPotential:
    """Φ_b = −W̄·b(b − 1)/(2C) over the day's b jobs not yet dispatched (future arrivals included).

    It changes only at a dispatch, by +W̄·(b − 1)/C. With ``occupancy``, which charges a
    dispatch its whole slot time at q/C at once, this hands the unavoidable run time back in
    the same step, so filling a slot is not made to look dearer than leaving it idle, while
    the difference between a short and a long job and the provisioning delay still show in
    that step. An arrival does not move Φ_b, so the step that happens to span it is not
    charged for it (a queue-based Φ charges arrivals to whichever step advances over them).
    """

    def __init__(self, sim) -> None:
        self.w_mean = sim.fleet.mean_wbar  # [s]
        self.C = len(sim.fleet.slot_type)

    def __call__(self, sim) -> float:
        b = sim.n_jobs - len(sim.dispatched)
        return -self.w_mean * b * (b - 1) / (2.0 * self.C)


class DeadlineRisk:
    """Φ_r of the module docstring [jobs] (≤ 0; O(queue) per evaluation)."""

    def __init__(self, sim, horizon_s: float = RISK_HORIZON_S) -> None:
        wl = sim.workload
        e = np.asarray(sim.fleet.fastest_wbar)[wl.complexity]
        self.x = wl.deadline - e  # [s] the last start on the fastest slot that meets the deadline
        self.h = float(horizon_s)

    def __call__(self, sim) -> float:
        if not sim.waiting:
            return 0.0
        ids = np.fromiter(sim.waiting, np.int64, len(sim.waiting))
        return -float(np.clip((sim.t - self.x[ids] + self.h) / self.h, 0.0, 1.0).sum())


# Each shaping is a sum of (potential class, the reward part whose weight prices its unit):
# job-seconds of waiting are priced like the preset's wait (SHAPING_PART), jobs at risk like a miss.
SHAPING_TERMS: dict[str, tuple[tuple[type, str], ...]] = {
    "none": (),
    "queue": ((QueuePotential, "queue"),),
    "backlog": ((BacklogPotential, "queue"),),
    "backlog_risk": ((BacklogPotential, "queue"), (DeadlineRisk, "miss")),
}
SHAPINGS: tuple[str, ...] = tuple(SHAPING_TERMS)


class ShapingPotential:
    """Φ(sim) = Σ_k w_k·Φ_k(sim) for one ``shaping`` setting, in the weighted units of the reward (picklable)."""

    def __init__(self, shaping: str, sim, preset: str, weights: Mapping[str, float]) -> None:
        check_choice("shaping", shaping, SHAPINGS)
        price = {"queue": float(weights[PRESETS[preset].shaping_part]), "miss": float(weights["miss"])}
        self.terms = [(price[part], cls(sim)) for cls, part in SHAPING_TERMS[shaping]]

    def __call__(self, sim) -> float:
        return float(sum(w * phi(sim) for w, phi in self.terms))


def make_potential(shaping: str, sim, preset: str, weights: Mapping[str, float]) -> ShapingPotential | None:
    """The shaping potential of ``shaping`` for this day (None for ``none``)."""
    check_choice("shaping", shaping, SHAPINGS)
    return None if shaping == "none" else ShapingPotential(shaping, sim, preset, weights)


class RewardLedger:
    """Books the raw reward parts as the env's transitions happen and turns them into rewards.

    The env calls :meth:`on_dispatch` after each assignment and :meth:`on_advance` after each
    advance of the simulator; :meth:`settle` returns the step's reward and its ``info`` parts.
    Reward = −scale·Σ_k w_k·raw_k + scale·(γ·Φ(s′) − Φ(s)) (the shaping term, Ng et al. 1999,
    with Φ = 0 once the day is over, so it is policy-invariant for the learner's γ).
    """

    def __init__(self, config, sim) -> None:
        self.scale = float(config.reward_scale)
        self.gamma = float(config.shaping_gamma)
        self.weights, self.objective_weights = weights_of(config, sim.params)
        self.potential = make_potential(config.shaping, sim, config.reward, self.weights)
        self.C = len(sim.fleet.slot_type)
        self._price = sim.fleet.price_per_s
        wbar = np.asarray(sim.fleet.wbar, np.float64)  # (3 classes, T types)
        self._excess = wbar - np.asarray(sim.params.complexity_probs, np.float64) @ wbar  # W̄[c, g] − mix mean
        self._wbar_of_type = wbar.T.tolist()  # [g][c]: W̄ per class on each type, for order_regret
        self._shortest_first = np.argsort(wbar, axis=0, kind="stable").T.tolist()  # [g]: the classes, shortest first
        self._cx = sim.complexity  # class of each job
        self._waiting = [0] * len(wbar)  # jobs waiting per class, kept by on_advance / on_dispatch (O(1) a step)
        for k in sim.waiting:
            self._waiting[self._cx[k]] += 1
        wl = sim.workload
        self._cum_submit = np.concatenate([[0.0], np.cumsum(wl.submit)])
        self._dl_order = np.argsort(wl.deadline, kind="stable")
        self._dl_sorted = wl.deadline[self._dl_order]
        self._dl_ptr = 0
        self._next_deadline = float(self._dl_sorted[0])  # [s] earliest deadline not yet settled
        self.raw = dict.fromkeys(REWARD_PARTS, 0.0)  # booked, not yet returned
        self.episode_raw = dict.fromkeys(REWARD_PARTS, 0.0)
        self._phi = 0.0

    def start(self, sim) -> None:
        """The day is paused at its first decision point: nothing booked yet counts."""
        self.raw = dict.fromkeys(REWARD_PARTS, 0.0)
        self._phi = self._phi_of(sim, done=False)

    def on_dispatch(self, sim, job: int, slot: int) -> None:
        """``job`` was just assigned to ``slot`` (the queue no longer holds it)."""
        start, run = sim.realised(job)
        delay = start - sim.t
        raw = self.raw
        raw["wait"] += delay  # realised provisioning delay
        raw["delay"] += delay  # the same, on its own (the job's wait while provisioning)
        rate = (len(sim.waiting) + 1) / self.C  # q/C: the queue before this dispatch, per slot
        raw["waste"] += delay * rate  # capacity lost to provisioning, at the exchange rate
        raw["run"] += run * rate  # the slot time it spends running, at the same rate
        g = sim.fleet.slot_type[slot]
        raw["excess_run"] += self._excess[sim.workload.complexity[job], g] * rate  # its class against the mix
        c = self._cx[job]
        waiting = self._waiting
        waiting[c] -= 1  # it has left the queue
        for k in self._shortest_first[g]:  # the shortest class waiting with it (its own included)
            if waiting[k] or k == c:
                break
        w = self._wbar_of_type[g]
        raw["order_regret"] += (w[c] - w[k]) * rate
        raw["cost"] += run * self._price[sim.fleet.slot_type[slot]]  # realised run cost

    def on_advance(self, sim, t0: float, q0: int, n0: int, idle0: int, alive: bool) -> None:
        """The simulator advanced from ``t0`` (queue ``q0``, ``n0`` arrived, ``idle0`` idle slots)."""
        t1, n1 = sim.t, sim.n_arrived
        for k in range(n0, n1):  # arrivals join the queue's class counts
            self._waiting[self._cx[k]] += 1
        cs = self._cum_submit
        # queue-length integral: old queue for the whole interval, arrivals from their submit
        self.raw["wait"] += q0 * (t1 - t0) + (n1 - n0) * t1 - float(cs[n1] - cs[n0])
        if q0:  # idle slots while jobs waited: lost capacity, at the exchange rate q/C
            self.raw["waste"] += idle0 * (t1 - t0) * q0 / self.C
        if t1 >= self._next_deadline or not alive:  # some deadlines passed: settle them
            dls = self._dl_sorted
            k = int(np.searchsorted(dls, t1, side="right")) if alive else len(dls)
            comp, dl = sim.completion, sim.deadline
            self.raw["miss"] += sum(1 for j in self._dl_order[self._dl_ptr : k].tolist() if comp[j] > dl[j])
            self._dl_ptr = k
            self._next_deadline = float(dls[k]) if k < len(dls) else float("inf")

    def settle(self, sim, done: bool) -> tuple[float, dict]:
        """The step's reward from the parts booked since the last step, and its info entries."""
        raw, self.raw = self.raw, dict.fromkeys(REWARD_PARTS, 0.0)
        for k, v in raw.items():
            self.episode_raw[k] += v
        scale, w = self.scale, self.weights
        parts = {k: -scale * w[k] * v for k, v in raw.items()}
        if self.potential is not None:
            phi = self._phi_of(sim, done)
            parts["shaping"] = scale * (self.gamma * phi - self._phi)
            self._phi = phi
        return float(sum(parts.values())), {"reward_parts": parts, "reward_raw": raw}

    def _phi_of(self, sim, done: bool) -> float:
        return 0.0 if self.potential is None or done else self.potential(sim)

    def objective(self, summary: Mapping[str, float]) -> float:
        """What the episode is judged on (:func:`summary_objective` with :attr:`objective_weights`)."""
        return summary_objective(summary, self.objective_weights)


__all__ = [
    "weights_of",
    "BacklogPotential",
    "RewardLedger",
    "SHAPING_TERMS",
    "COST_WEIGHT",
    "MISS_AS_WAIT_S",
    "deadline_objective",
    "OBJECTIVE_OF",
    "PARTS",
    "PRESETS",
    "Part",
    "Preset",
    "REWARD_PARTS",
    "REWARD_PRESETS",
    "RISK_HORIZON_S",
    "SHAPING_PART",
    "SHAPINGS",
    "DeadlineRisk",
    "QueuePotential",
    "ShapingPotential",
    "make_potential",
    "reward_weights",
    "summary_objective",
]
