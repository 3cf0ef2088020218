"""``privet evaluate``: utility, leakage, quality and membership-inference measurements.

Writes ``results.json`` and PNG plots to ``--out``. The members' file and the evaluation's
own runs and ledger stay in a private work folder under the Privet data folder.
"""

from __future__ import annotations

import argparse
import sys
import time

from core.common.errors import PrivetError
from core.evaluation.config import DATASETS, SCALES, make_config
from core.evaluation.labelled_data import DOWNSTREAM_DATASETS
from core.evaluation.results_page import regenerate, stamp
from core.common.progress import CallbackReporter, ProgressEvent


def register(subparsers) -> None:
    p = subparsers.add_parser("evaluate", help="measure utility, leakage and membership inference on a demo corpus")
    p.add_argument("--dataset", required=True, choices=sorted(set(DATASETS) | set(DOWNSTREAM_DATASETS)),
                   help="healthtweets: --downstream only")
    p.add_argument("--out", required=True, help="folder for results.json and the plots")
    p.add_argument("--scale", default="demo", choices=SCALES,
                   help="tiny: test models (seconds); demo: packaged models on CPU (~30 min); seed: full settings (GPU)")
    p.add_argument("--epsilons", default="1,4,10", help="comma-separated ε values (default 1,4,10)")
    p.add_argument("--methods", default="dp_synrag,dp_synth,dp_synrag_l1",
                   help="comma-separated: dp_synrag, dp_synth, dp_synrag_l1, rpsg, aug_pe")
    p.add_argument("--questions", type=int, default=None, help="benign questions scored (default: by scale)")
    p.add_argument("--members", type=int, default=None,
                   help="members given to the generators (default: by scale, 240 at demo; 0 = all)")
    p.add_argument("--llm-backend", default=None, choices=("auto", "transformers", "llamacpp"))
    p.add_argument("--ablation", action="store_true",
                   help="run the DP-SynRAG ablation at the largest ε instead (writes ablation.json and ablation.md)")
    p.add_argument("--no-domain-list", action="store_true",
                   help="leave out the dataset's public domain word list (topics from English words and phrases)")
    p.add_argument("--phrases", choices=("on", "off"), default=None,
                   help="DP phrase discovery (step 0 of DP-SynRAG); default: on, as in a run spec")
    p.add_argument("--ablation-rows", default="text", choices=("text", "settings"),
                   help="text: how the documents are written (topic line / private prediction / realisation / both, "
                        "each with and without co-keywords); settings: round 2's cumulative settings")
    p.add_argument("--ablation-only", default="",
                   help="run only the ablation rows whose label contains this text (e.g. 'public realisation, with')")
    p.add_argument("--downstream", action="store_true",
                   help="train classifiers (TF-IDF and MiniLM + logistic regression) on labelled synthetic corpora "
                        "and test them on held-out real documents (writes downstream.json, .md and .png, "
                        "the accuracy-against-ε plot)")
    p.add_argument("--label-mode", default="auto", choices=("auto", "topic_labels", "per_class"),
                   help="--downstream: how labels are kept ([data] label_mode; auto: by topic for DP-SynRAG)")
    p.add_argument("--documents", type=int, default=None,
                   help="--downstream: DP-SynRAG's [dp_synrag] documents (0: one per topic; -1: about the corpus size)")
    p.add_argument("--seeds", type=int, default=0,
                   help="--downstream: a method writing one document per private document (RPSG) rewrites at most "
                        "this many members per class (0: all; RPSG costs about 30 CPU-minutes per 100 seeds)")
    p.add_argument("--membership", action="store_true",
                   help="--downstream: also run the membership-inference attacks on every synthetic corpus")
    p.add_argument("--results-page", default=None, metavar="PAGE",
                   help="afterwards regenerate PAGE (docs/results.md) from the newest JSON in each folder of PAGE "
                        "without .md (docs/results/<dataset>/); give --out one of those folders")
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(func=cmd_evaluate)


def _floats(text: str) -> tuple[float, ...]:
    try:
        return tuple(float(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise PrivetError(f"--epsilons {text!r} is not a list of numbers.", "For example --epsilons 1,4,10.") from None


def _printer(quiet: bool):
    def emit(event: ProgressEvent) -> None:
        if not quiet and event.kind == "stage_start" and event.message:
            stamp = time.strftime("%H:%M:%S")
            print(f"{stamp} [{event.stage}] {event.message}", file=sys.stderr, flush=True)

    return CallbackReporter(emit)


def command_line(args: argparse.Namespace) -> str:
    """The command that reproduces this evaluation (recorded in results.json)."""
    parts = ["privet evaluate", f"--dataset {args.dataset}", f"--out {args.out}", f"--scale {args.scale}",
             f"--epsilons {args.epsilons}", f"--methods {args.methods}"]
    if args.questions is not None:
        parts.append(f"--questions {args.questions}")
    if args.members is not None:
        parts.append(f"--members {args.members}")
    if args.llm_backend:
        parts.append(f"--llm-backend {args.llm_backend}")
    if getattr(args, "no_domain_list", False):
        parts.append("--no-domain-list")
    if getattr(args, "phrases", None):
        parts.append(f"--phrases {args.phrases}")
    if getattr(args, "downstream", False):
        parts.append("--downstream")
        if getattr(args, "label_mode", "auto") != "auto":
            parts.append(f"--label-mode {args.label_mode}")
        if getattr(args, "documents", None) is not None:
            parts.append(f"--documents {args.documents}")
        if getattr(args, "seeds", 0):
            parts.append(f"--seeds {args.seeds}")
        if getattr(args, "membership", False):
            parts.append("--membership")
    if getattr(args, "results_page", None):
        parts.append(f"--results-page {args.results_page}")
    return " ".join(parts)


def cmd_evaluate(args: argparse.Namespace) -> int:
    from core.evaluation.evaluate import run_evaluation
    from core.evaluation.report import write_report

    if args.downstream:
        return _downstream(args)
    if args.dataset not in DATASETS:
        raise PrivetError(f"The dataset {args.dataset!r} is labelled text for the downstream test only.",
                          f"Add --downstream, or choose one of: {', '.join(DATASETS)}.")
    config = make_config(
        args.dataset, args.out, args.scale, _floats(args.epsilons),
        tuple(m.strip() for m in args.methods.split(",") if m.strip()), args.questions, args.llm_backend,
        members=args.members, domain_list=not args.no_domain_list,
        discover_phrases=None if args.phrases is None else args.phrases == "on",
    )
    if args.ablation:
        return _ablation(config, args)
    result = run_evaluation(config, _printer(args.quiet))
    result["command"] = command_line(args)
    for path in write_report(stamp(result), config.out_dir):
        print(path)
    return regenerate(args.results_page, config.out_dir)


def _downstream(args: argparse.Namespace) -> int:
    """``--downstream``: classifiers trained on labelled synthetic corpora, tested on held-out real documents."""
    from dataclasses import replace

    from core.evaluation.downstream import DEFAULT_MEMBERS, LabelledSettings, run_downstream, write_downstream
    from core.evaluation.labelled_data import dataset_config
    from core.evaluation.evaluate import work_folder

    if args.ablation:
        raise PrivetError("--downstream and --ablation are two different evaluations.", "Run them one at a time.")
    config = make_config(
        "news" if args.dataset not in DATASETS else args.dataset, args.out, args.scale, _floats(args.epsilons),
        tuple(m.strip() for m in args.methods.split(",") if m.strip()), args.questions, args.llm_backend,
        domain_list=not args.no_domain_list, discover_phrases=None if args.phrases is None else args.phrases == "on",
    )
    dataset = dataset_config(args.dataset)
    config = replace(config, dataset=replace(dataset, domain_lists=()) if args.no_domain_list else dataset)
    members = DEFAULT_MEMBERS if args.members is None else args.members
    result = run_downstream(config, work_folder(), _printer(args.quiet), max_members=members,
                            settings=LabelledSettings(args.label_mode, args.documents, args.seeds, args.membership))
    result["command"] = command_line(args)
    for path in write_downstream(stamp(result), config.out_dir):
        print(path)
    return regenerate(args.results_page, config.out_dir)


def _ablation(config, args: argparse.Namespace) -> int:
    import json

    from core.evaluation.ablation import ablation_markdown, run_ablation
    from core.evaluation.evaluate import work_folder

    command = command_line(args) + f" --ablation --ablation-rows {args.ablation_rows}" + (
        f" --ablation-only '{args.ablation_only}'" if args.ablation_only else "")

    def save(result: dict) -> None:
        result["command"] = command
        config.out_dir.mkdir(parents=True, exist_ok=True)
        (config.out_dir / "ablation.json").write_text(json.dumps(result, indent=2, ensure_ascii=False),
                                                      encoding="utf-8")
        (config.out_dir / "ablation.md").write_text(ablation_markdown(result), encoding="utf-8")

    save(run_ablation(config, work_folder(), _printer(args.quiet), args.ablation_rows, args.ablation_only, save))
    print(config.out_dir / "ablation.md")
    return 0
