"""``privet export``, ``privet verify``, ``privet ledger`` and ``privet keys``."""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from core.certificate.privacy_record import claim_hash, guarantee_claim
from core.certificate.seal import verify_export
from core.certificate.signing import export_public_key, load_signing_key, public_key_fingerprint
from core.common.errors import LedgerError, PrivetError
from core.run.export import export_release, release_size
from core.corpus import dataset_identity
from core.ledger import Ledger, check_before_run, highwater
from core.ledger.chain import Carried
from core.ledger.recovery import key_replaced_problem, recover_lost_data_folder
from core.ledger.schema import LEDGER_EVENTS
from core.common.paths import data_dir
from core.ledger.total import COMBINING_WORDS, stated
from core.privacy.conversion import redrawn_delta
from core.specs.rules import name_problem


def register(subparsers) -> None:
    p = subparsers.add_parser("export", help="write a release folder: synthetic corpus + signed certificate")
    p.add_argument("run_dir", type=Path, help="folder of a finished run")
    p.add_argument("out_dir", type=Path, help="new or empty folder to write the release to")
    p.add_argument("--custodian", default="", help="name of the data custodian")
    p.add_argument("--organisation", default="", help="the custodian's organisation")
    p.add_argument("--irb", default="", help="IRB / ethics protocol number")
    p.add_argument("--overwrite", action="store_true", help="replace the contents of a non-empty OUT_DIR")
    p.add_argument("--allow-empty", action="store_true",
                   help="export even when the run produced no synthetic documents (refused without it)")
    p.set_defaults(func=_export)

    p = subparsers.add_parser("verify", help="check an export folder's signature, hashes and contents")
    p.add_argument("export_dir", type=Path)
    p.add_argument("--public-key", type=Path, default=None, help="PEM public key the certificate must be signed with")
    p.add_argument("--ledger", action="store_true",
                   help="also check that this installation's ledger still holds the charges the certificate saw")
    p.set_defaults(func=_verify)

    p = subparsers.add_parser("ledger", help="list the privacy budget spent per dataset; check or set caps")
    p.add_argument("dataset", nargs="?", default=None,
                   help="dataset name (as `privet plan` shows it), or its key (or a unique prefix of it)")
    p.add_argument("--check", action="store_true",
                   help="check the ledger's hash chain and its witness for tampering (wiped, cut back, edited)")
    p.add_argument("--rewitness", action="store_true",
                   help="accept the ledger as it is now: record its head as the witness and the high-water mark "
                        "(for a ledger written by a Privet version without them); needs "
                        "--acknowledge-unverifiable-history and is recorded in the ledger")
    p.add_argument("--acknowledge-unverifiable-history", dest="acknowledge", action="store_true",
                   help="with --rewitness: accept that entries the ledger may have lost cannot be brought back "
                        "(their totals, kept outside the data folder, are carried over)")
    p.add_argument("--recover-lost-data-folder", dest="recover", action="store_true",
                   help="after the data folder (ledger, witness, installation key) was lost with no backup: start a "
                        "new ledger carrying each dataset's total and cap by name; needs --acknowledge-lost-history "
                        "and is marked on every later certificate")
    p.add_argument("--acknowledge-lost-history", dest="acknowledge_lost", action="store_true",
                   help="with --recover-lost-data-folder: accept that the lost entries, views and content matching "
                        "cannot be brought back")
    p.add_argument("--new-dataset", action="store_true",
                   help="with --set-cap: cap a dataset name that no run has used yet (the name its run spec will use)")
    p.add_argument("--set-cap", type=float, default=None, metavar="EPS", help="set the dataset's total epsilon cap")
    p.add_argument("--delta", type=float, default=None, help="delta of the cap (with --set-cap)")
    p.add_argument("--reason", default="",
                   help="with --set-cap: why the cap is set or raised (required when raising an existing cap); it is "
                        "recorded in the ledger and printed on every later certificate of the dataset")
    p.set_defaults(func=_ledger)

    p = subparsers.add_parser("keys", help="the installation's certificate signing key")
    keys = p.add_subparsers(dest="keys_command", metavar="ACTION", required=True)
    k = keys.add_parser("export-public", help="write the public key (PEM) to FILE, for the IRB")
    k.add_argument("file", type=Path)
    k.set_defaults(func=_export_public)
    k = keys.add_parser("show", help="print the public key fingerprint and where the key is kept")
    k.set_defaults(func=_show_key)


def _export(args: argparse.Namespace) -> int:
    identity = {"custodian": args.custodian, "organisation": args.organisation, "irb_protocol": args.irb}
    size = release_size(args.run_dir) if (Path(args.run_dir) / "synthetic.jsonl").is_file() else None
    out = export_release(args.run_dir, args.out_dir, identity, overwrite=args.overwrite, allow_empty=args.allow_empty)
    if size is not None and size.problem:
        print(f"Note: {size.problem}")
    print(f"Exported to {out}. Check it with: privet verify {out} --public-key YOUR_COPY_OF_public_key.pem")
    return 0


def _verify(args: argparse.Namespace) -> int:
    report = verify_export(args.export_dir, public_key=args.public_key)
    ledger_finding = ""
    if args.ledger and report.ok:
        certificate = json.loads((Path(args.export_dir) / "certificate.json").read_text(encoding="utf-8"))
        head = certificate["certificate"].get("budget_history", {}).get("ledger_head", {})

        try:
            with Ledger() as ledger:
                head_problems, chain_problems = ledger.check_head(head), ledger.verify_chain()
                head_problems += certificate_claim_problems(certificate["certificate"], ledger)
                n_rows = len(ledger.entries())
            report.problems.extend(head_problems + chain_problems)
            ledger_finding = ledger_check_words(head, head_problems, chain_problems, n_rows)
        except LedgerError as exc:  # missing, wiped or junk: it cannot hold the row the certificate saw
            report.problems.append(
                f"this installation's ledger cannot hold the row {head.get('seq')} the certificate saw: "
                "it was cut back or replaced"
            )
            report.problems.extend(line.strip("- ").strip() for line in exc.what.splitlines()[1:])
            ledger_finding = "Ledger check: FAILED, this installation's ledger cannot be read (see the problems above)."
    elif args.ledger:
        ledger_finding = "Ledger check: not done, because the folder itself did not verify."
    print(report.summary())
    if ledger_finding:
        print(ledger_finding)
    return 0 if report.ok else 1


def certificate_claim_problems(certificate: dict, ledger: Ledger) -> list[str]:
    """Where a certificate's guarantee (run, unit of privacy, every ρ, δ and ε) disagrees with what this
    ledger charged the run and with the record hash it keeps (``PrivacyRecord.claim_hash``)."""
    try:
        run_id = certificate["identity"]["run_id"]
        key = certificate["dataset_identity"]["value"]
        guarantee = certificate["guarantee"]
        rho, delta = float(guarantee["rho_total"]), float(guarantee["delta"])
        stages = list(guarantee.get("stages", []))
        delta -= redrawn_delta(stages)  # the ledger holds the planned δ
        claim = guarantee_claim(guarantee, run_id, certificate["identity"]["method"], key)
    except (KeyError, TypeError, ValueError, AttributeError):
        return ["the certificate does not name its run, dataset and budget, so the ledger cannot confirm them"]
    problems = ledger.claim_problems(key, run_id, rho, delta, claim["delta_spent"])
    bound = ledger.bound_record_hash(key, run_id)
    if bound is not None and bound != claim_hash(claim):
        problems.append(f"the certificate's unit of privacy, stages, epsilon or delta differ from the privacy record "
                        f"run {run_id} wrote, whose hash the ledger keeps")
    return problems


def ledger_check_words(head: dict, head_problems: list[str], chain_problems: list[str], n_rows: int) -> str:
    """What ``privet verify --ledger`` found, in one or a few lines."""
    seq = head.get("seq") if isinstance(head, dict) else None
    if head_problems or chain_problems:
        return "Ledger check FAILED:\n" + "\n".join(f"  - {p}" for p in head_problems + chain_problems)
    if not isinstance(seq, int) or seq == 0:
        seen = "The certificate recorded no ledger row (it was exported without a ledger), so only the ledger's own "
        return f"Ledger check: {seen}hash chain was checked: intact ({n_rows} entries)."
    return (f"Ledger check: this installation's ledger still holds row {seq}, the newest row the certificate saw, "
            f"unchanged; its hash chain and append-only triggers are intact ({n_rows} entries).")


def _cap_target(ledger: Ledger, text: str, new_dataset: bool) -> str:
    """The dataset key a cap is set on: a known dataset, or (``--new-dataset``) the identity of a new name."""
    if not new_dataset:
        return ledger.resolve_dataset(text)  # refuses an unknown name, listing the known ones
    identity = dataset_identity(text, text)
    if ledger.identity_of_name(identity.name) is None and identity.key not in ledger.datasets():
        ledger.name_dataset(identity.key, identity.name)
    return identity.key


def _print_dataset(ledger: Ledger, fp: str) -> None:
    """One dataset's rows with the running totals; every total comes from ``core.ledger.total`` (ρ and the δ
    that phrase stages spend outright both add up), stated at the δ of ``Ledger.summary``."""
    summary = ledger.summary(fp)
    print(f"Dataset {fp}" + (f" ({summary.name})" if summary.name else ""))
    if summary.cap_epsilon is not None:
        print(f"  cap: epsilon={summary.cap_epsilon:g} at delta={summary.cap_delta:g}")
    else:
        print("  cap: none")
    print(f"  {'#':>4}  {'when (UTC)':<19}  {'kind':<7}  {'run':<14}  {'stage':<16}  {'rho':>10}  {'delta_p':>8}  "
          f"{'cum. rho':>10}  {'cum. eps':>9}")
    rho = part = 0.0
    for row in ledger.entries(fp):
        if row["kind"] == "charge":
            rho, part = rho + float(row["rho"]), part + float(row.get("delta_part") or 0.0)
        running = stated(rho, part, summary.delta).epsilon
        print(
            f"  {row['seq']:>4}  {row['created_at'][:19]:<19}  {row['kind']:<7}  {_printable(row['run_id'])[:14]:<14}  "
            f"{_printable(row['stage'])[:16]:<16}  {row['rho']:>10.4g}  {float(row.get('delta_part') or 0.0):>8.2g}  "
            f"{rho:>10.4g}  {running:>9.4g}"
        )
    print(f"  total spent: epsilon {summary.spent_epsilon:.4g} at delta {summary.delta:g} (rho {summary.spent_rho:.6g}, "
          f"plus delta {summary.spent_delta_part:.3g} spent outright by phrase discovery)")
    print(f"  {COMBINING_WORDS}")


def _printable(text: str) -> str:
    """``text`` with control characters shown as ``?`` (names and stages are echoed to a terminal)."""
    return "".join(c if c.isprintable() else "?" for c in str(text))


def check_cap_arguments(dataset: str | None, epsilon: float, delta: float | None) -> None:
    """Refuse (``PrivetError``) a cap that is no budget, before the ledger is opened: a missing dataset or δ,
    ε not a finite number > 0 (``inf``, ``nan``, 0, negative), δ outside (0, 1), a name that is not printable."""
    example = "Example: privet ledger \"notes.csv\" --set-cap 8 --delta 1e-5"
    if not dataset or delta is None:
        raise PrivetError("--set-cap needs a DATASET and --delta.", example)
    if not (math.isfinite(epsilon) and epsilon > 0):
        raise PrivetError(f"--set-cap {epsilon!r} is not a budget: the cap's epsilon must be a finite number above 0.",
                          example)
    if not (math.isfinite(delta) and 0 < delta < 1):
        raise PrivetError(f"--delta {delta!r} is not valid: the cap's delta must be above 0 and below 1.", example)
    check_dataset_argument(dataset)


def check_cap_reason(current: tuple[float, float] | None, epsilon: float, delta: float, reason: str) -> None:
    """Refuse (``PrivetError``) raising an existing cap (a larger ε or δ) without a reason: a raise is a
    decision the custodian records, and every later certificate of the dataset prints it."""
    if current is None or reason.strip() or (epsilon <= current[0] and delta <= current[1]):
        return
    raise PrivetError(
        f"This raises the dataset's cap from epsilon={current[0]:g} at delta={current[1]:g} to epsilon={epsilon:g} at "
        f"delta={delta:g}, and a raise needs a reason. Nothing was changed.",
        "Add --reason \"...\" saying why (for example who agreed to it); it is recorded in the ledger and printed on "
        "every later certificate of this dataset.",
    )


def check_dataset_argument(dataset: str) -> None:
    """Refuse a DATASET argument holding a control or other non-printable character (it is never echoed)."""
    problem = name_problem(dataset, max_chars=None)
    if problem:
        raise PrivetError(f"The dataset name given {problem}.",
                          "Give the dataset name as `privet ledger` lists it, or its key.")


def _ledger(args: argparse.Namespace) -> int:
    if args.dataset:
        check_dataset_argument(args.dataset)
    if args.check:
        try:
            check_before_run()  # creates nothing: a missing ledger stays missing
        except LedgerError as exc:
            print("The ledger has been tampered with or damaged.\n" + exc.user_message())
            return 1

        if not (data_dir() / "ledger.db").exists():
            print("Ledger intact: no entries yet (nothing has been charged on this installation).")
            return 0
        with Ledger() as ledger:
            n = len(ledger.entries())
        print(f"Ledger intact: {n} entries; hash chain, append-only triggers, witness and high-water mark "
              f"(kept in {highwater.where()}) agree.")
        return 0
    if args.recover:
        return _recover(args.acknowledge_lost)
    ledger = Ledger()
    if args.rewitness:
        return _rewitness(ledger, args.acknowledge)
    if args.set_cap is not None:
        check_cap_arguments(args.dataset, args.set_cap, args.delta)
        fp = _cap_target(ledger, args.dataset, args.new_dataset)
        check_cap_reason(ledger.cap(fp), args.set_cap, args.delta, args.reason)
        ledger.set_cap(fp, args.set_cap, args.delta, reason=args.reason)
        name = ledger.dataset_name(fp) or fp
        print(f"Cap for dataset '{name}': epsilon={args.set_cap:g} at delta={args.delta:g} (change logged in the ledger).")
        return 0
    datasets = [ledger.resolve_dataset(args.dataset)] if args.dataset else ledger.datasets()
    if not datasets:
        print("The ledger is empty.")
    for fp in datasets:
        _print_dataset(ledger, fp)
    _print_ledger_events(ledger)
    return 0


def _print_ledger_events(ledger: Ledger) -> None:
    """The rows about the ledger itself (a re-witnessing, a new history), which belong to no dataset."""
    events = ledger.entries(LEDGER_EVENTS)
    if not events:
        return
    print("Ledger events (re-witnessing, recovery; they belong to no dataset)")
    for row in events:
        print(f"  {row['seq']:>4}  {row['created_at'][:19]:<19}  {_printable(row['stage'])}: "
              f"{_printable(row['description'])}")


def _print_carried(carried: list[Carried]) -> None:
    for c in carried:
        name = f"'{_printable(c.name)}'" if c.name else c.dataset[:16]
        if c.rho or c.delta_part:
            print(f"Carried over for dataset {name}: rho={c.rho:.6g}, delta spent outright={c.delta_part:.3g} "
                  "(charged before, no longer in the ledger).")
        if c.cap is not None:
            print(f"Cap restored for dataset {name}: epsilon={c.cap[0]:g} at delta={c.cap[1]:g}.")


def _rewitness(ledger: Ledger, acknowledge: bool) -> int:
    """``privet ledger --rewitness``: accept the ledger as it is, its totals never below the high-water mark's."""
    replaced = key_replaced_problem(ledger)
    if replaced:
        raise PrivetError(
            f"Re-witnessing cannot help here: {replaced}.",
            "Restore installation.key (with the data folder) from your backup. If it is lost for good, start a new "
            "history with `privet ledger --recover-lost-data-folder --acknowledge-lost-history`, which carries "
            "each dataset's total and cap over by name.",
        )
    done = ledger.rewitness(acknowledge=acknowledge)
    for problem in done.accepted:
        print(f"Accepted (recorded in the ledger): {problem}")
    _print_carried(done.carried)
    print(f"Witness and high-water mark recorded: {done.head.rows} entries, newest entry {done.head.head_seq}. From "
          "now on, a ledger with fewer entries is refused as tampered.")
    return 0


def _recover(acknowledge: bool) -> int:
    """``privet ledger --recover-lost-data-folder``: a new, marked history carrying the old totals by name."""
    done = recover_lost_data_folder(acknowledge=acknowledge)
    for problem in done.problems:
        print(f"Found (recorded in the new ledger): {problem}")
    for moved in done.moved_aside:
        print(f"Moved aside (not deleted): {moved}")
    if done.lost_rows:
        print(f"The lost ledger had {done.lost_rows} entries; they cannot be brought back.")
    else:
        print("No totals of the lost ledger could be read" + (f" ({done.mark_problem})" if done.mark_problem else "")
              + ": nothing was carried over.")
    _print_carried(done.carried)
    for key in done.unnamed:
        print(f"Dataset {key[:16]} was known only by its key: its total is carried under that key, which no new "
              "load matches.")
    print("A new ledger, witness and high-water mark were started. Every later certificate says that this "
          "installation's history was restarted; data loaded under another dataset name than before is not matched "
          "to its old budget.")
    return 0


def _export_public(args: argparse.Namespace) -> int:
    fingerprint = export_public_key(args.file)
    print(f"Public key written to {args.file} (fingerprint {fingerprint}).")
    return 0


def _show_key(args: argparse.Namespace) -> int:
    key = load_signing_key()
    print(f"Fingerprint: {public_key_fingerprint(key.public_key)}\nKept in: {key.storage}")
    return 0
