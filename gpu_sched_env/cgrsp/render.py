"""Renderings of a paused CGRSP simulator: a text snapshot and a Gantt chart of the day so far.

Both show only what has happened by the current time ``sim.t`` (a provisioning job's
realised start, or a running job's completion, is never drawn before it happens).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from gpu_sched_env.cgrsp.params import COMPLEXITIES, STOCK_LEVELS
from gpu_sched_env.cgrsp.sim import Simulator
from gpu_sched_env.core.plotting import MISSED, ON_TIME, gantt, plt

PROVISIONING = "#b0b0b0"


def _hhmm(hour: float) -> str:
    m = int(round(hour * 60)) % (24 * 60)
    return f"{m // 60:02d}:{m % 60:02d}"


def _clock(sim: Simulator) -> str:
    return _hhmm(sim.params.start_hour_utc + sim.t / 3600.0) + " UTC"


def ansi(sim: Simulator, window: np.ndarray, order: str, rows: int = 8) -> str:
    """A readable text snapshot: clock, queue, stock, slots and the head of the window."""
    fl, t = sim.fleet, sim.t
    comp = np.asarray(sim.completion[: sim.n_arrived])
    d = np.asarray(sim.deadline[: sim.n_arrived])
    n_missed = int(np.where(np.isfinite(comp), comp > d, t > d).sum())  # deadlines passed unmet
    lines = [
        f"CGRSP t = {t / 3600:6.3f} h ({_clock(sim)})  decision #{sim.n_decisions}  "
        f"waiting {len(sim.waiting)}  arrived {sim.n_arrived}/{sim.n_jobs}  done {sim.n_completed}  "
        f"missed so far {n_missed}",
        "stock: " + "  ".join(f"{n} {STOCK_LEVELS[lvl]}" for n, lvl in zip(fl.type_names, sim.stock)),
        "slot  type        state          job    expected free in",
    ]
    for s, j in enumerate(sim.slot_job):
        name = fl.type_names[fl.slot_type[s]]
        if j < 0:
            lines.append(f"{s:>4}  {name:<10}  idle")
        else:
            state = "running" if sim.started(s) else f"provisioning ({STOCK_LEVELS[sim.slot_level[s]]})"
            lines.append(f"{s:>4}  {name:<10}  {state:<13}  #{j:<5}  {(sim.expected_free(s) - t) / 60:7.1f} min")
    if window.size:
        lines.append(f"window ({order} order), first {min(rows, window.size)} of {window.size}:")
        lines.append("  pos    job  complexity  tight  wait[min]  deadline in[min]")
        for i, j in enumerate(window[:rows].tolist()):
            lines.append(
                f"  {i:>3}  #{j:<5}  {COMPLEXITIES[sim.complexity[j]]:<10}  {'yes' if sim.tight[j] else 'no':<5}  "
                f"{(t - sim.submit[j]) / 60:9.1f}  {(sim.deadline[j] - t) / 60:16.1f}"
            )
    elif sim.done:
        lines.append("day over: every job has completed")
    return "\n".join(lines) + "\n"


def gantt_frame(sim: Simulator) -> pd.DataFrame:
    """Execution (``kind == 'run'``) and provisioning bars of every job dispatched by ``sim.t``."""
    t = sim.t
    disp = np.asarray(sim.dispatch)
    ids = np.flatnonzero(np.isfinite(disp))
    start = np.minimum(sim.realised_starts()[ids], t)  # realised start, once it has happened
    comp = np.asarray(sim.completion)[ids]
    end = np.minimum(comp, t)
    d = np.asarray(sim.deadline)[ids]
    missed = np.where(np.isfinite(comp), comp > d, t > d)
    slot = np.asarray(sim.job_slot)[ids]
    tight = np.asarray(sim.tight, bool)[ids]
    run = pd.DataFrame({"job": ids, "slot": slot, "begin": start, "end": end, "missed": missed, "tight": tight, "kind": "run"})
    prov = pd.DataFrame({"job": ids, "slot": slot, "begin": disp[ids], "end": start, "missed": False, "tight": False, "kind": "provisioning"})
    return pd.concat([run, prov], ignore_index=True)


def gantt_figure(sim: Simulator, title: str = "") -> plt.Figure:
    """Gantt chart of the day so far: slots × hours, tight jobs hatched, misses red."""
    fr = gantt_frame(sim)
    c = len(sim.slot_job)
    fl = sim.fleet
    # one zero-length bar per slot so that every slot gets its lane, in slot order
    lanes = pd.DataFrame({"slot": np.arange(c), "begin": 0.0, "end": 0.0, "missed": False, "tight": False})
    run = pd.concat([lanes, fr[fr.kind == "run"]], ignore_index=True)
    labels = {s: f"slot {s}: {fl.type_names[fl.slot_type[s]]}" for s in range(c)}
    fig = gantt(
        run,
        resource="slot",
        start="begin",
        end="end",
        missed="missed",
        highlight="tight",
        resource_labels=labels,
        title=title,
        time_unit=3600.0,
        time_label=f"hours since {_hhmm(sim.params.start_hour_utc)} UTC (simulated time 0)",
    )
    ax = fig.axes[0]
    prov = fr[fr.kind == "provisioning"]
    ax.barh(prov.slot.to_numpy(), (prov.end - prov.begin).to_numpy() / 3600.0, left=prov.begin.to_numpy() / 3600.0, height=0.7, color=PROVISIONING, linewidth=0)
    ax.axvline(sim.t / 3600.0, color="black", linestyle=":", linewidth=1)
    ax.set_xlim(0.0, max(sim.t / 3600.0, 1e-3) * 1.02)
    from matplotlib.patches import Patch

    ax.legend(
        handles=[
            Patch(color=ON_TIME, label="on time"),
            Patch(color=MISSED, label="missed deadline"),
            Patch(facecolor="white", edgecolor="black", hatch="///", label="tight job"),
            Patch(color=PROVISIONING, label="provisioning"),
        ],
        loc="upper left",
        bbox_to_anchor=(1.0, 1.0),
        fontsize=8,
    )
    fig.tight_layout()
    return fig


def rgb_array(sim: Simulator, title: str = "") -> np.ndarray:
    """The Gantt chart as an ``H × W × 3`` uint8 array."""
    fig = gantt_figure(sim, title)
    fig.canvas.draw()
    img = np.asarray(fig.canvas.buffer_rgba())[..., :3].copy()
    plt.close(fig)
    return img


__all__ = ["ansi", "gantt_figure", "gantt_frame", "rgb_array"]
