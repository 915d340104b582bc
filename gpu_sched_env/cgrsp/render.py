"""Renderings of a paused CGRSP simulator: a text snapshot and a Gantt chart of the day so far.

Both show only what has happened by the current time ``sim.t`` (a provisioning job's
realised start, or a running job's completion, is never drawn before it happens).
"""

from __future__ import annotations

import math
import weakref

import numpy as np
import pandas as pd

from gpu_sched_env.cgrsp.params import COMPLEXITIES, STOCK_LEVELS
from gpu_sched_env.cgrsp.sim import Simulator
from gpu_sched_env.core.plotting import MISSED, ON_TIME, gantt, plt

PROVISIONING = "#b0b0b0"
_INF = float("inf")


def _legend(ax) -> None:
    """The one legend of the Gantt charts (full redraw and incremental)."""
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
    type_w = max(len(n) for n in fl.type_names)
    state_w = max(len("running"), *(len(f"provisioning ({lvl})") for lvl in STOCK_LEVELS))
    lines = [
        f"CGRSP t = {t / 3600:6.3f} h ({_clock(sim)})  decision #{sim.n_decisions}  "
        f"waiting {len(sim.waiting)}  arrived {sim.n_arrived}/{sim.n_jobs}  done {sim.n_completed}  "
        f"missed so far {n_missed}",
        "stock: " + "  ".join(f"{n} {STOCK_LEVELS[lvl]}" for n, lvl in zip(fl.type_names, sim.stock)),
        f"slot  {'type':<{type_w}}  {'state':<{state_w}}  {'job':<6}  expected free in",
    ]
    for s, j in enumerate(sim.slot_job):
        name = fl.type_names[fl.slot_type[s]]
        if j < 0:
            lines.append(f"{s:>4}  {name:<{type_w}}  idle")
        else:
            state = "running" if sim.started(s) else f"provisioning ({STOCK_LEVELS[sim.slot_level[s]]})"
            lines.append(
                f"{s:>4}  {name:<{type_w}}  {state:<{state_w}}  #{j:<5}  {(sim.expected_free(s) - t) / 60:7.1f} min"
            )
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
    run = pd.DataFrame(
        {"job": ids, "slot": slot, "begin": start, "end": end, "missed": missed, "tight": tight, "kind": "run"}
    )
    prov = pd.DataFrame(
        {
            "job": ids,
            "slot": slot,
            "begin": disp[ids],
            "end": start,
            "missed": False,
            "tight": False,
            "kind": "provisioning",
        }
    )
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
    ax.barh(
        prov.slot.to_numpy(),
        (prov.end - prov.begin).to_numpy() / 3600.0,
        left=prov.begin.to_numpy() / 3600.0,
        height=0.7,
        color=PROVISIONING,
        linewidth=0,
    )
    ax.axvline(sim.t / 3600.0, color="black", linestyle=":", linewidth=1)
    ax.set_xlim(0.0, max(sim.t / 3600.0, 1e-3) * 1.02)
    _legend(ax)
    fig.tight_layout()
    return fig


def _nice_limit(x: float) -> float:
    """The smallest of 1, 1.5, 2, 3, 4, 6, 8 × 10^k that is ≥ ``x`` (> 0)."""
    k = math.floor(math.log10(x))
    for m in (1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 10.0):
        if m * 10.0**k >= x:
            return m * 10.0**k
    return 10.0 ** (k + 1)  # pragma: no cover - 10·10^k ≥ x always


class GanttRenderer:
    """Video frames of the Gantt chart of :func:`gantt_figure`, drawn incrementally.

    Matplotlib draws only the frame's chrome (lanes, axis, legend) and, per frame, the title;
    the bars are painted straight into the pixel array with NumPy. The time axis runs to a
    "nice" limit (1, 1.5, 2, 3, 4, 6, 8 × 10^k hours) that is raised only when the clock
    reaches it, so between raises the chrome and every finished bar stay as they are: a
    frame copies the cached image, paints the at most ``C_max`` live bars and the clock line,
    and draws the title. A raise (about ten per day) repaints every bar once.
    ``python -m studies bench env --render`` measures ms/frame against :func:`gantt_figure`.
    """

    H = 0.35  # half the bar height (lane pitch 1)
    HATCH = 6  # [px] period of the tight jobs' /// hatch

    def __init__(self, sim: Simulator) -> None:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        c = len(sim.slot_job)
        fl = sim.fleet
        h_px = 2 * math.ceil((120 + 45 * c) / 2)  # as gantt_figure, rounded up to even (H.264 video)
        self.fig = Figure(figsize=(12, h_px / 100), dpi=100)
        self.canvas = FigureCanvasAgg(self.fig)
        ax = self.ax = self.fig.add_subplot()
        ax.set_yticks(range(c))
        ax.set_yticklabels([f"slot {s}: {fl.type_names[fl.slot_type[s]]}" for s in range(c)])
        ax.set_ylim(c - 0.5, -0.5)  # slot 0 on top
        ax.set_xlabel(f"hours since {_hhmm(sim.params.start_hour_utc)} UTC (simulated time 0)")
        _legend(ax)
        self.title = ax.set_title("CGRSP")
        self.fig.tight_layout()
        self.title.set_text("")
        self.c = c
        self.xmax = 0.0  # [h] current axis limit (0: not drawn yet)
        self._rgb = {
            k: np.array([int(v[i : i + 2], 16) for i in (1, 3, 5)], np.uint8)
            for k, v in (("prov", PROVISIONING), ("on", ON_TIME), ("miss", MISSED))
        }
        # finished bars in data units: (lane, x0 [h], x1 [h], colour key, tight)
        self._bars: list[tuple[int, float, float, str, bool]] = []
        self._seen = 0  # jobs of sim.dispatched taken in
        self._active: list[int] = []  # dispatched, run not yet completed
        self._prov_done: set[int] = set()

    # ------------------------------------------------------------------ pixels
    def _rebuild(self, xmax: float) -> None:
        """Draw the chrome for a new axis limit and repaint every finished bar."""
        self.xmax = xmax
        self.ax.set_xlim(0.0, xmax)
        self.title.set_text("")  # drawn per frame over the cached image
        self.canvas.draw()
        self._bg = self.canvas.copy_from_bbox(self.fig.bbox)
        h = int(self.fig.bbox.height)
        (x0, y0), (x1, y1) = self.ax.transData.transform([(0.0, -0.5), (xmax, self.c - 0.5)])
        self._px = (x0, (x1 - x0) / xmax)  # pixel column of time x [h]: x0 + x·scale
        self._rows = [
            (
                round(h - self.ax.transData.transform((0.0, y - self.H))[1]),
                round(h - self.ax.transData.transform((0.0, y + self.H))[1]),
            )
            for y in range(self.c)
        ]
        self._rows = [(min(a, b), max(a, b)) for a, b in self._rows]
        self._cols = (round(x0), round(x1))
        img = np.asarray(self.canvas.buffer_rgba())[..., :3]
        self._plot = img.copy()  # chrome + finished bars (the title is drawn per frame)
        yy, xx = np.mgrid[0 : img.shape[0], 0 : img.shape[1]]
        self._hatch = (xx + yy) % self.HATCH == 0
        for bar in self._bars:
            self._paint(self._plot, *bar)

    def pixel(self, lane: int, x: float) -> tuple[int, int]:
        """(row, column) of the frame at the middle of ``lane`` and time ``x`` [h]."""
        r0, r1 = self._rows[lane]
        return (r0 + r1) // 2, round(self._px[0] + x * self._px[1])

    def _paint(self, img: np.ndarray, lane: int, x0: float, x1: float, key: str, tight: bool) -> None:
        a, scale = self._px
        c0 = round(a + x0 * scale)
        c1 = max(c0 + 1, round(a + x1 * scale))
        r0, r1 = self._rows[lane]
        img[r0:r1, c0:c1] = self._rgb[key]
        if key != "prov" and c1 - c0 >= 3:
            img[r0:r1, c0] = 255  # white edge between neighbouring runs
        if tight:
            box = img[r0:r1, c0:c1]
            box[self._hatch[r0:r1, c0:c1]] = 0
            box[[0, -1], :] = 0
            box[:, [0, -1]] = 0

    # ------------------------------------------------------------------ frames
    def frame(self, sim: Simulator, title: str = "") -> np.ndarray:
        """The chart at ``sim.t`` as an ``H × W × 3`` uint8 array."""
        t = sim.t
        hours = 1.0 / 3600.0
        x_now = max(t * hours, 1e-3)
        if x_now * 1.02 > self.xmax:
            self._rebuild(_nice_limit(x_now * 1.02))
        self._active.extend(sim.dispatched[self._seen :])
        self._seen = len(sim.dispatched)
        comp, dl, disp, slot, tight = sim.completion, sim.deadline, sim.dispatch, sim.job_slot, sim.tight
        live: list[tuple[int, float, float, str, bool]] = []
        still: list[int] = []
        for j in self._active:
            y, st = slot[j], sim.start_if_started(j)
            if st < _INF and j not in self._prov_done:  # provisioning over: its bar is final
                self._finish((y, disp[j] * hours, st * hours, "prov", False))
                self._prov_done.add(j)
            if comp[j] <= t:  # completed: the run bar is final
                self._finish((y, st * hours, comp[j] * hours, "miss" if comp[j] > dl[j] else "on", tight[j]))
                self._prov_done.discard(j)
                continue
            still.append(j)
            if st == _INF:
                live.append((y, disp[j] * hours, t * hours, "prov", False))
            else:
                live.append((y, st * hours, t * hours, "miss" if t > dl[j] else "on", tight[j]))
        self._active = still
        self.canvas.restore_region(self._bg)
        self.title.set_text(title)
        self.ax.draw_artist(self.title)
        img = np.asarray(self.canvas.buffer_rgba())[..., :3].copy()
        r0, r1 = self._rows[0][0], self._rows[-1][1]
        c0, c1 = self._cols
        top, bottom = min(r0, r1) - 2, max(r0, r1) + 2
        img[top:bottom, c0:c1] = self._plot[top:bottom, c0:c1]
        for bar in live:
            self._paint(img, *bar)
        col = round(self._px[0] + x_now * self._px[1])
        img[top:bottom:4, col] = 0  # dotted line at the clock
        img[top + 1 : bottom : 4, col] = 0
        return img

    def _finish(self, bar: tuple[int, float, float, str, bool]) -> None:
        self._bars.append(bar)
        self._paint(self._plot, *bar)


_RENDERERS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # sim -> its GanttRenderer


def rgb_array(sim: Simulator, title: str = "") -> np.ndarray:
    """The Gantt chart of the day so far as an ``H × W × 3`` uint8 array (incremental per ``sim``)."""
    r = _RENDERERS.get(sim)
    if r is None:
        r = _RENDERERS[sim] = GanttRenderer(sim)
    return r.frame(sim, title)


__all__ = ["GanttRenderer", "ansi", "gantt_figure", "gantt_frame", "rgb_array"]
