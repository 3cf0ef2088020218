"""``privet plan SPEC`` and ``privet run SPEC``: the headless pipeline with terminal progress."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from core.specs import method_catalogue
from core.common.progress import ProgressEvent
from core.specs.stage_labels import stage_label
from core.specs.runspec import RunSpec


def register(subparsers) -> None:
    p = subparsers.add_parser("plan", help="show the budget split and derived parameters of a run spec")
    p.add_argument("spec", help="run spec (TOML)")
    p.set_defaults(func=cmd_plan)

    r = subparsers.add_parser("run", help="run a spec: synthetic corpus + signed certificate")
    r.add_argument("spec", help="run spec (TOML)")
    r.add_argument("--overwrite", action="store_true", help="allow writing into a non-empty output folder")
    r.add_argument("--output", help="output folder (overrides [output] folder)")
    r.add_argument("--resume", metavar="RUN_DIR", help="resume an interrupted run from its run folder (shows what it "
                   "would charge again and asks first)")
    r.add_argument("--accept-recharge", action="store_true",
                   help="with --resume: accept the charge shown without asking (needed when not run in a terminal)")
    r.add_argument("--quiet", action="store_true", help="no progress bars")
    r.add_argument("--spend-anyway", action="store_true",
                   help="run even when the plan is expected to release about 0 topics (see 'privet plan')")
    r.set_defaults(func=cmd_run)


def cmd_plan(args: argparse.Namespace, out: TextIO | None = None) -> int:
    from core.run.pipeline import load_spec_corpus, plan

    from core.privacy.planner import delta_rule

    out = out or sys.stdout
    spec = RunSpec.load(args.spec)
    corpus = load_spec_corpus(spec)
    summary = plan(spec, corpus)
    for warning in corpus.report.warnings:
        print(f"Load warning: {warning}", file=out)
    print(f"Method: {summary.method}", file=out)
    facts = method_catalogue.facts(spec.method)  # what the method adds to the plan, from its package
    for line in facts.plan_header(spec):
        print(line, file=out)
    print(f"Target: epsilon = {summary.epsilon:g} at delta = {summary.delta:.3g}", file=out)
    print(f"Delta rule: {delta_rule(spec.privacy.delta, spec.privacy.max_units)}", file=out)
    print(f"Total budget: rho = {summary.rho_total:.4f} zCDP "
          f"(loose conversion would give epsilon = {summary.epsilon_loose:.3f})", file=out)
    print("Stages:", file=out)
    for stage, rho in summary.stages:
        share = 100 * rho / summary.rho_total if summary.rho_total else 0.0
        print(f"  {stage_label(stage):<46} rho = {rho:.5f}  ({share:4.1f}%)", file=out)
    print("Derived parameters:", file=out)
    for key, value in summary.derived.items():
        print(f"  {key:<20} {value:.5g}", file=out)
    for line in facts.plan_lines(spec, corpus, summary.delta):
        print(line, file=out)
    print(f"Units: {summary.n_units} (shown here only; never exported)", file=out)
    print(f"Budgeted as dataset: {summary.dataset_name} (every view of these data shares this budget)", file=out)
    for line in summary.budget_outlook:
        print(line, file=out)
    for line in forecast_lines(spec, summary):
        print(line, file=out)
    for line in choice_lines(spec, summary.n_units):
        print(line, file=out)
    for note in facts.plan_notes(spec):
        print(f"Note (advanced): {note}", file=out)
    for warning in summary.warnings:
        print(f"Warning: {warning}", file=out)
    if summary.spends_for_nothing:
        print("What would help:", file=out)
        for line in summary.forecast_advice:
            print(f"  - {line}", file=out)
    if summary.needs_spend_anyway:  # decided at the stated public bound, never at the loaded count (SPEC §6)
        print("'privet run' refuses this plan unless given --spend-anyway ([privacy] spend_anyway = true): about 0 "
              "topics are expected even at the public bound on the units stated in the spec.", file=out)
    elif summary.spends_for_nothing:
        print("'privet run' does not refuse this plan: the forecast above is at the loaded count, which may decide "
              "nothing; only a public upper bound on the units stated in advance ([privacy] max_units) may.", file=out)
    return 0


def forecast_lines(spec: RunSpec, summary) -> list[str]:
    """What the run is expected to write and how long each stage takes, for the settings that will run
    (``core.run.planning.run_estimate``; the adaptive default's choices from the custodian's own count, on screen)."""
    from core.run.estimate import duration_words
    from core.run.planning import run_estimate

    lines = []
    forecast = summary.topic_forecast
    if forecast is not None:
        lines += [
            f"Expected documents: {forecast.documents_words()}. How many "
            "topics a corpus holds depends on how often its documents share words, which is not looked at before "
            f"the run: the range spans a corpus with few shared topics and a templated one. A topic needs about "
            f"{forecast.min_topic_support:.0f} units sharing its word; at most R = {forecast.R} topics are looked for.",
        ]
        lines += method_catalogue.facts(spec.method).expected_settings_lines(spec, summary.expected_settings)
    if summary.estimate_seconds is not None:
        estimate = run_estimate(spec, summary)
        lines.append(f"Estimate: {duration_words(estimate.total_s)} in all (the most documents above), "
                     f"{summary.estimate_memory_mb:.0f} MB; by stage:")
        lines += [f"  {stage_label(stage):<46} {duration_words(seconds)}" for stage, seconds in estimate.stages]
    return lines




def choice_lines(spec: RunSpec, n_units: int) -> list[str]:
    """What each ε of the table would release (``core.run.planning.epsilon_table``, the Budget page's table) and the
    public word lists that fit the task (``core.methods.list_offer``), for the methods that find topics."""
    from core.methods.list_offer import plan_offer_lines
    from core.run.planning import epsilon_table

    if not method_catalogue.facts(spec.method).wizard.topic_names:
        return []
    table = epsilon_table(spec, n_units)
    lines = table.lines() if any(row.expected_topics is not None for row in table.rows) else []
    return lines + plan_offer_lines(spec)


def cmd_run(args: argparse.Namespace) -> int:
    from core.evaluation.run_fidelity import custodian_fidelity, terminal_lines
    from core.run.pipeline import run_pipeline

    spec = RunSpec.load(args.spec)
    if args.overwrite:
        spec.output.overwrite = True
    if args.spend_anyway:
        spec.privacy.spend_anyway = True
    if args.output:
        spec.output.folder = str(Path(args.output).resolve())
    reporter = TerminalReporter(sys.stderr, quiet=args.quiet)
    consent = resume_consent(bool(args.accept_recharge)) if args.resume else None
    result = run_pipeline(
        spec, reporter, run_dir=Path(args.resume) if args.resume else None, resume=bool(args.resume),
        require_consent=True, consent=consent, fidelity=custodian_fidelity,
    )
    reporter.close()
    record = result.record
    print(f"Synthetic documents: {result.n_synthetic}")
    print(f"Privacy: epsilon = {record.epsilon_tight:.3f} at delta = {record.delta:.3g} (rho = {record.rho_total:.4f})")
    print(f"Run folder (private workspace, never share): {result.run_dir}")
    if result.export_dir:
        print(f"Release (synthetic corpus + signed certificate): {result.export_dir}")
    elif record.test_mode:
        print("Test mode (fixed seed): this run is NOT private and cannot be exported.")
    else:
        print(f"No output folder was set, so nothing was exported. Export with: privet export {result.run_dir} OUT_DIR")
    for key, value in result.private_diagnostics.items():
        print(f"  [on screen only] {key}: {value}")
    for line in terminal_lines(result.fidelity):  # figures only, no real text; never exported
        print(line)
    return 0


def resume_consent(accepted: bool, stdin: TextIO | None = None, out: TextIO | None = None):
    """The consent ``run_pipeline`` asks before a resume charges: shows the quote, then accepts it
    (``--accept-recharge``), asks (a terminal), or refuses (no terminal and no flag)."""
    from core.common.errors import PrivetError

    def consent(quote) -> bool:
        stream, answers = out or sys.stderr, stdin or sys.stdin
        print(quote.words(stage_label), file=stream)
        if not quote.charges_anything or accepted:
            return True
        if not answers.isatty():
            raise PrivetError(
                "Resuming this run charges the privacy budget (shown above), and there is no terminal to ask.",
                "Run it again with --accept-recharge to accept the charge shown, or run it in a terminal.",
            )
        print("Resume and accept this charge? Type yes to go on: ", end="", file=stream, flush=True)
        return answers.readline().strip().lower() in ("y", "yes")

    return consent


@dataclass
class TerminalReporter:
    """Prints one progress line per stage (carriage-return updates on a terminal)."""

    stream: TextIO
    quiet: bool = False
    _open: str = ""
    _spent: float = field(default=0.0)
    _last_decile: int = -1

    def cancelled(self) -> bool:
        return False

    def emit(self, event: ProgressEvent) -> None:
        if event.kind == "warning":  # load and plan warnings: shown even with --quiet, before any charge
            self._line(f"Warning: {event.message}", end=True)
            return
        if self.quiet:
            return
        if event.kind == "charged":
            self._spent += event.rho or 0.0
            self._line(f"[budget] {stage_label(event.stage)}: charged rho={event.rho:.4f} (run total {self._spent:.4f})",
                       end=True)
        elif event.kind in ("progress", "stage_start", "stage_end") and event.total:
            width = 28
            filled = int(width * event.done / event.total)
            eta = f" ETA {event.eta_s:5.0f}s" if event.eta_s else ""
            bar = f"[{'#' * filled}{'.' * (width - filled)}] {event.done}/{event.total}{eta}"
            label = stage_label(event.stage)  # always whole: never cut to fit the bar
            if self.stream.isatty():  # the label on its own line, so the updated bar line stays one line
                if self._open != event.stage:
                    self._open = event.stage
                    self._line(label, end=True)
                text = f"  {bar}"
            else:
                text = f"{label:<30} {bar}"
            self._line(text, end=event.kind == "stage_end", decile=10 * event.done // event.total)
        elif event.kind == "stage_start" and event.message:
            self._line(f"{stage_label(event.stage):<30} {event.message}", end=True)

    def _line(self, text: str, end: bool, decile: int = -1) -> None:
        if self.stream.isatty():
            self.stream.write("\r" + text.ljust(79) + ("\n" if end else ""))
        elif end or decile > self._last_decile:
            # Not a terminal (a log file): one line per 10% so the log stays short.
            self.stream.write(text + "\n")
            self._last_decile = -1 if end else decile
        self.stream.flush()

    def close(self) -> None:
        self.stream.flush()
