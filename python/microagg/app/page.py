"""The app's page and its per-session server (Shiny for Python): open a file, set the
columns and the run, run one or several candidates in child processes (:mod:`.job`) with a
progress bar and a cancel button, show the verdict, the headline figures and the release
report (:func:`microagg.report.render_report`, the same renderer as ``--report``), and
download the picked release, its report and the command that reproduces it (docs/app.md).

Every session has its own folder and state; the input is never written (a release goes to
the session's folder under a new name) and every error is the command line's message."""

from __future__ import annotations

import json
import os
import pickle
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from typing import Any, Optional

from shiny import App, reactive, render, ui

from .. import _core
from ..report import file_provenance, render_report
from .columns import ROLES, TYPES, Column, available_memory, check_size, infer_columns
from .command import Settings, arguments, python_snippet, shell_command

HEADLINE = (
    ("information_loss", "information loss"),
    ("record_linkage_rate", "record linkage"),
    ("interval_disclosure", "interval disclosure"),
    ("min_group_size", "smallest class"),
    ("records_below_k", "records below k"),
)
"""The headline figures shown above the report (keys of ``Assessment.to_dict()``)."""

_PROGRESS = re.compile(r"^ *([\d,]+)/([\d,]+) records assigned.*$", re.MULTILINE)
"""A progress line of the command line (every 5 s of a run after the first 2)."""


@dataclass
class Candidate:
    """One run: its settings' command, where it runs and what it gave."""

    method: str
    k: int
    argv: list[str]
    folder: str
    output: str
    spec: dict[str, Any] = field(default_factory=dict)
    process: Optional[subprocess.Popen[bytes]] = None
    assessment: Any = None


def _error_of(stderr: str, code: int) -> str:
    """The command line's message in the stderr of a run that exited with ``code`` (its
    ``microagg: error:`` line; the last line of an unforeseen failure; the signal that
    killed it, such as the kernel's when the memory ran out)."""
    lines = [line.removeprefix("microagg: error: ") for line in stderr.splitlines() if line.startswith("microagg: ")]
    if lines:
        return lines[-1]
    if code < 0:
        return f"the run was killed by signal {-code} (out of memory?)"
    return (stderr.strip().splitlines() or [f"the run failed (exit status {code})"])[-1]


def _child_env() -> dict[str, str]:
    """The environment of a run: this one, with the folder this ``microagg`` was imported
    from first on the path, so that the run (in another working folder) uses the same code."""
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    paths = [here, *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(os.path.abspath(p) for p in paths)}


def _integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"k: {text!r} is not an integer") from None


def _link(source: str, target: str) -> None:
    """``target`` names the file ``source`` (a hard link; a copy where links are refused)."""
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)


def _column_row(i: int, c: Column) -> Any:
    return ui.tags.tr(
        ui.tags.td(c.name, class_="column-name"),
        ui.tags.td(ui.input_select(f"type_{i}", None, list(TYPES), selected=c.type, width="9em")),
        ui.tags.td(ui.input_select(f"role_{i}", None, list(ROLES), selected=c.role, width="9em")),
        ui.tags.td(ui.input_text(f"levels_{i}", None, "<".join(c.levels[:200]), width="22em", update_on="blur")
                   if c.type != "numeric" else ""),
        ui.tags.td(c.flag, class_="flag"),
    )


def _figures(d: dict[str, Any]) -> Any:
    items = []
    for key, name in HEADLINE:
        value = d.get(key)
        shown = "—" if value is None else (f"{100 * value:.2f} %" if isinstance(value, float) else str(value))
        items.append(ui.tags.div(ui.tags.span(name, class_="figure-name"), " ",
                                 ui.tags.strong(shown, id=f"figure-{key}", data_value=repr(value)),
                                 class_="figure"))
    return ui.tags.div(*items, class_="figures")


def _verdict(d: dict[str, Any]) -> Any:
    k, below = d["k_requested"], d["records_below_k"]
    if d["meets_k"]:
        text = f"k = {k} achieved over the whole key: every record shares its key values with at least {k - 1} others"
    else:
        text = f"k = {k} NOT achieved over the whole key: {below} records are in classes below k"
    return ui.tags.p(text, id="verdict", class_="ok" if d["meets_k"] else "fail", data_meets_k=str(d["meets_k"]))


page = ui.page_fluid(
    ui.head_content(
        ui.tags.title("microagg app"),
        ui.tags.link(rel="stylesheet", href="app.css"),
        ui.tags.link(rel="icon", href="data:,"),  # no favicon request
    ),
    ui.h1("microagg: release a file k-anonymously"),
    ui.tags.section(
        ui.h2("1. Open a file"),
        ui.input_file("upload", "CSV or Parquet file (it stays on this machine)", accept=[".csv", ".parquet", ".pq"]),
        ui.input_text("na_values", "Cell values that mean missing, comma-separated (e.g. ?,-9)", "",
                      update_on="blur"),  # the file is read again with them: once, not per keystroke
        ui.output_ui("opened_name"),
    ),
    ui.tags.section(ui.h2("2. Columns"), ui.output_ui("columns")),
    ui.tags.section(
        ui.h2("3. Run"),
        ui.layout_columns(
            ui.input_text("ks", "k (several: 3,5,10)", "5", update_on="blur"),  # sent before Run's click
            ui.input_selectize("methods", "method (several: candidates)", list(_core.METHODS), selected="mdav",
                               multiple=True),
            ui.input_select("missing", "missing cells", list(_core.MISSING_MODES), selected="error"),
            ui.input_select("aggregation", "aggregation", list(_core.AGGREGATIONS), selected="mean"),
            ui.input_numeric("t", "t (with sensitive columns)", 0.2, min=0.0, max=1.0, step=0.05),
            ui.input_select("format", "release format", ["csv", "parquet"], selected="csv"),
        ),
        ui.input_action_button("run", "Run", class_="btn-primary"),
        ui.input_action_button("cancel", "Cancel"),
        ui.output_ui("progress"),
    ),
    ui.output_ui("error"),
    ui.tags.section(ui.h2("4. Result"), ui.output_ui("result")),
)


def server(input: Any, output: Any, session: Any, path: Optional[str] = None) -> None:
    """One browser session: its own folder, file, columns, candidates and downloads."""
    folder = tempfile.mkdtemp(prefix="microagg-app-")
    children: list[subprocess.Popen[bytes]] = []

    def stop() -> None:
        """Stops the session's runs still going."""
        for child in children:
            if child.poll() is None:
                child.terminate()
                child.wait()

    def ended() -> None:  # a closed tab stops its runs and leaves nothing behind
        stop()
        shutil.rmtree(folder, ignore_errors=True)

    session.on_ended(ended)
    source: reactive.Value[Optional[tuple[str, str]]] = reactive.value(None)  # (argument, display name)
    found: reactive.Value[list[Column]] = reactive.value([])
    numeric: reactive.Value[set[str]] = reactive.value(set())
    message = reactive.value("")
    runs: reactive.Value[list[Candidate]] = reactive.value([])
    running = reactive.value(False)
    share = reactive.value(0.0)
    note = reactive.value("")
    batches = reactive.value(0)

    def na_values() -> list[str]:
        return [v.strip() for v in input.na_values().split(",") if v.strip()]

    opened: list[tuple[str, str, str]] = []  # the file last opened: read again when the codes change

    def open_file(real: str, argument: str, name: str) -> None:
        opened[:] = [(real, argument, name)]
        stop()  # the runs of the file open before
        running.set(False)
        message.set("")
        runs.set([])
        try:
            check_size(real, available_memory())
            table, cols = infer_columns(real, na_values())
        except (ValueError, TypeError, OSError) as exc:
            source.set(None)
            found.set([])
            message.set(str(exc).replace(real, argument))  # an upload's message names the file, not the copy
            return
        source.set((argument, name))
        numeric.set({c.name for j, c in enumerate(cols) if table.numeric(j) is not None})
        found.set(cols)

    if path is not None:
        @reactive.effect
        def _given() -> None:
            with reactive.isolate():
                open_file(path, os.path.abspath(path), os.path.basename(path))

    @reactive.effect
    @reactive.event(input.upload)
    def _uploaded() -> None:
        f = input.upload()[0]
        name = os.path.basename(f["name"]) or "upload.csv"
        inputs = os.path.join(folder, "input")
        shutil.rmtree(inputs, ignore_errors=True)
        os.makedirs(inputs)
        copy = os.path.join(inputs, name)
        shutil.copyfile(f["datapath"], copy)
        open_file(copy, name, name)

    @reactive.effect
    @reactive.event(input.na_values, ignore_init=True)
    def _codes() -> None:
        if opened:
            open_file(*opened[0])

    @render.ui
    def opened_name() -> Any:
        s = source()
        return ui.p(f"Open: {s[1]} ({len(found())} columns)", id="opened-name") if s else ""

    @render.ui
    def columns() -> Any:
        cols = found()
        if not cols:
            return ui.p("No file open.")
        head = ui.tags.tr(*(ui.tags.th(h) for h in ("column", "type", "role", "levels (ordinal: lowest<...<highest)", "note")))
        return ui.tags.table(ui.tags.thead(head), ui.tags.tbody(*(_column_row(i, c) for i, c in enumerate(cols))),
                             id="columns-table", class_="table table-sm")

    def settings() -> Settings:
        cols = []
        for i, c in enumerate(found.get()):
            typed = input[f"levels_{i}"]() if c.type != "numeric" else ""
            levels = [v.strip() for v in typed.split("<") if v.strip()] or c.levels
            cols.append(Column(c.name, input[f"type_{i}"](), input[f"role_{i}"](), levels, c.flag))
        t = input.t()
        return Settings(cols, missing=input.missing(), aggregation=input.aggregation(),
                        t=None if t is None else float(t), na_values=input.na_values(), numeric=numeric.get())

    def roles(s: Settings, k: int) -> dict[str, Any]:
        """The keyword arguments of :func:`microagg.assess` for the columns' roles."""
        key = [x for x in s.columns if x.role == "key"]
        names = {role: [x.name for x in s.columns if x.role == role] for role in ROLES}
        return {
            "columns": [x.name for x in key],
            "categorical": [x.name for x in key if x.type == "nominal"] or None,
            "ordinal": {x.name: x.levels for x in key if x.type == "ordinal"} or None,
            "by": names["strata"] or None,
            "weights": names["weights"][0] if names["weights"] else None,
            "sensitive": names["sensitive"] or None,
            "k": k,
        }

    def start(c: Candidate, spec: dict[str, Any]) -> None:
        with open(os.path.join(c.folder, "spec.json"), "w", encoding="utf-8") as f:
            json.dump(spec, f)
        with open(os.path.join(c.folder, "stderr.txt"), "wb") as err, \
                open(os.path.join(c.folder, "stdout.txt"), "wb") as out:
            c.process = subprocess.Popen([sys.executable, "-m", "microagg.app.job", "spec.json"], cwd=c.folder,
                                         stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=_child_env())
        children.append(c.process)

    @reactive.effect
    @reactive.event(input.run)
    def _run() -> None:
        if running.get():
            return
        message.set("")
        s = source.get()
        if s is None:
            message.set("open a file first")
            return
        queue: list[Candidate] = []
        try:
            ks = [_integer(v) for v in input.ks().replace(" ", "").split(",") if v]
            if not ks:
                raise ValueError("give k, e.g. 5 or 3,5,10")
            base = settings()
            stem, ext = os.path.splitext(s[1])[0], "." + input.format()
            batch = batches.get()
            for method in list(input.methods()) or ["mdav"]:
                for k in ks:
                    base.method, base.k = method, k
                    name = f"{stem}_k{k}_{method}{ext}"
                    sub = os.path.join(folder, f"run{batch}-{len(queue)}")
                    os.makedirs(sub)
                    c = Candidate(method, k, arguments(base, s[0], name), sub, name)
                    if s[0] == s[1]:  # an upload: the run reads a link to the copy, by its own name
                        _link(os.path.join(folder, "input", s[1]), os.path.join(sub, s[1]))
                    original = s[0] if os.path.isabs(s[0]) else os.path.join(sub, s[0])
                    c.spec = {"argv": c.argv, "original": original, "release": os.path.join(sub, name),
                              "na_values": na_values(), "roles": roles(base, k),
                              "assessment": os.path.join(sub, "assessment.pickle")}
                    queue.append(c)
        except ValueError as exc:
            message.set(str(exc))
            return
        batches.set(batches.get() + 1)
        runs.set(queue)
        share.set(0.0)
        note.set("starting")
        running.set(True)

    @reactive.effect
    def _poll() -> None:
        if not running():
            return
        reactive.invalidate_later(0.25)
        with reactive.isolate():
            queue = runs.get()
            for i, c in enumerate(queue):
                if c.assessment is not None:
                    continue
                if c.process is None:
                    start(c, c.spec)
                assert c.process is not None
                code = c.process.poll()
                with open(os.path.join(c.folder, "stderr.txt"), encoding="utf-8", errors="replace") as f:
                    stderr = f.read()
                if code is None:
                    seen = list(_PROGRESS.finditer(stderr))
                    last = seen[-1] if seen else None
                    part = int(last[1].replace(",", "")) / max(1, int(last[2].replace(",", ""))) if last else 0.0
                    share.set((i + min(part, 0.99)) / len(queue))
                    note.set(f"run {i + 1} of {len(queue)} ({c.method}, k = {c.k})" + (f": {last[0].strip()}" if last else ""))
                    return
                if code != 0:
                    message.set(_error_of(stderr, code))
                    del queue[i:]
                    break
                with open(c.spec["assessment"], "rb") as f:
                    c.assessment = pickle.load(f)
            running.set(False)
            share.set(1.0)
            runs.set(list(queue))

    @reactive.effect
    @reactive.event(input.cancel)
    def _cancel() -> None:
        if not running.get():
            return
        stop()
        runs.set([c for c in runs.get() if c.assessment is not None])
        running.set(False)
        message.set("run cancelled")

    @render.ui
    def progress() -> Any:
        if not running():
            return ""
        value = round(100 * share())
        return ui.tags.div(ui.tags.progress(f"{value} %", value=str(value), max="100", id="progress-bar"),
                           ui.tags.span(note(), id="progress-text"), id="progress-box")

    @render.ui
    def error() -> Any:
        text = message()
        return ui.tags.div(ui.tags.strong("microagg: error: "), text, id="error-message", role="alert",
                           class_="alert alert-danger") if text else ""

    def done() -> list[Candidate]:
        return [c for c in runs() if c.assessment is not None]

    def picked() -> Optional[Candidate]:
        ready = done()
        if not ready:
            return None
        choice = input.release() if "release" in input else None
        for j, c in enumerate(ready):
            if str(j) == choice:
                return c
        return ready[0]

    def report_html(c: Candidate) -> str:
        rows = [{"method": x.method, "k": x.k, **x.assessment.to_dict()} for x in done()]
        s = source.get()
        prov = {"original": {**file_provenance(c.spec["original"]), "name": s[1] if s else ""},
                "released": file_provenance(c.spec["release"]),
                "command": shell_command(c.argv),
                "parameters": {"k": c.k, "method": c.method}}
        return render_report(c.assessment, provenance=prov, candidates=rows if len(rows) > 1 else None)

    @render.ui
    def result() -> Any:
        ready = done()
        if running() or not ready:
            return ui.p("No release yet: set the columns and run.")
        c = picked()
        assert c is not None
        d = c.assessment.to_dict()
        choices = {str(j): f"{x.method}, k = {x.k}: information loss {100 * x.assessment.information_loss:.2f} %"
                   for j, x in enumerate(ready)}
        pick = ui.input_radio_buttons("release", "Candidates (the R-U map is in the report below); the release:",
                                      choices, selected=str(ready.index(c))) if len(ready) > 1 else ""
        return ui.tags.div(
            pick,
            _verdict(d),
            _figures(d),
            ui.tags.div(
                ui.download_button("download_release", "Download the release"),
                ui.download_button("download_report", "Download the report (HTML)"),
                ui.download_button("download_command", "Download the command"),
                ui.download_button("download_python", "Download the Python script"),
                class_="downloads",
            ),
            ui.tags.pre(shell_command(c.argv), id="command"),
            ui.tags.iframe(srcdoc=report_html(c), id="report", title="release report", sandbox=""),
        )

    def chosen() -> Candidate:
        c = picked()
        if c is None:
            raise ValueError("no release yet")
        return c

    @render.download_button(filename=lambda: chosen().output)
    def download_release() -> str:
        return str(chosen().spec["release"])

    @render.download_button(filename=lambda: os.path.splitext(chosen().output)[0] + "_report.html")
    def download_report() -> Any:
        yield report_html(chosen())

    @render.download_button(filename=lambda: os.path.splitext(chosen().output)[0] + ".sh")
    def download_command() -> Any:
        yield "#!/bin/sh\n" + shell_command(chosen().argv) + "\n"

    @render.download_button(filename=lambda: os.path.splitext(chosen().output)[0] + ".py")
    def download_python() -> Any:
        yield python_snippet(chosen().argv)


def create_app(path: Optional[str] = None) -> App:
    """The Shiny app, opening ``path`` in every new session when given."""
    static = os.path.join(os.path.dirname(__file__), "www")
    return App(page, lambda i, o, s: server(i, o, s, path), static_assets=static)
