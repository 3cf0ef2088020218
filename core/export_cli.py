"""``privet export``, ``privet verify``, ``privet ledger`` and ``privet keys``."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from core.certificate.seal import verify_export
from core.certificate.signing import export_public_key, load_signing_key, public_key_fingerprint
from core.errors import LedgerError, PrivetError
from core.export import export_release, release_size
from core.corpus import dataset_identity
from core.ledger import Ledger, check_before_run, highwater
from core.paths import data_dir
from core.privacy.budget import epsilon_of
from core.privacy.conversion import redrawn_delta


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
                   help="with --rewitness: accept that entries the ledger may have lost cannot be brought back")
    p.add_argument("--new-dataset", action="store_true",
                   help="with --set-cap: cap a dataset name that no run has used yet (the name its run spec will use)")
    p.add_argument("--set-cap", type=float, default=None, metavar="EPS", help="set the dataset's total epsilon cap")
    p.add_argument("--delta", type=float, default=None, help="delta of the cap (with --set-cap)")
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
    """Where a certificate's budget (run, ρ, δ) disagrees with what this ledger charged the run."""
    try:
        run_id = certificate["identity"]["run_id"]
        key = certificate["dataset_identity"]["value"]
        rho, delta = float(certificate["guarantee"]["rho_total"]), float(certificate["guarantee"]["delta"])
        delta -= redrawn_delta(list(certificate["guarantee"].get("stages", [])))  # the ledger holds the planned δ
    except (KeyError, TypeError, ValueError):
        return ["the certificate does not name its run, dataset and budget, so the ledger cannot confirm them"]
    return ledger.claim_problems(key, run_id, rho, delta)


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
    """One dataset's rows with the running totals; the summary lines come from ``Ledger.summary``."""
    summary = ledger.summary(fp)
    print(f"Dataset {fp}" + (f" ({summary.name})" if summary.name else ""))
    if summary.cap_epsilon is not None:
        print(f"  cap: epsilon={summary.cap_epsilon:g} at delta={summary.cap_delta:g}")
    else:
        print("  cap: none")
    print(f"  {'#':>4}  {'when (UTC)':<19}  {'kind':<7}  {'run':<14}  {'stage':<16}  {'rho':>10}  {'cum. rho':>10}  {'cum. eps':>9}")
    total = 0.0
    for row in ledger.entries(fp):
        total += row["rho"] if row["kind"] == "charge" else 0.0
        print(
            f"  {row['seq']:>4}  {row['created_at'][:19]:<19}  {row['kind']:<7}  {row['run_id'][:14]:<14}  "
            f"{row['stage'][:16]:<16}  {row['rho']:>10.4g}  {total:>10.4g}  {epsilon_of(total, summary.delta):>9.4g}"
        )
    print(f"  total rho spent: {summary.spent_rho:.6g} (epsilon {summary.spent_epsilon:.4g} at delta {summary.delta:g})")


def _ledger(args: argparse.Namespace) -> int:
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
    ledger = Ledger()
    if args.rewitness:
        head, accepted = ledger.rewitness(acknowledge=args.acknowledge)
        for problem in accepted:
            print(f"Accepted (recorded in the ledger): {problem}")
        print(f"Witness and high-water mark recorded: {head.rows} entries, newest entry {head.head_seq}. From now "
              "on, a ledger with fewer entries is refused as tampered.")
        return 0
    if args.set_cap is not None:
        if not args.dataset or args.delta is None:
            raise PrivetError("--set-cap needs a DATASET and --delta.",
                              "Example: privet ledger \"notes.csv\" --set-cap 8 --delta 1e-5")
        fp = _cap_target(ledger, args.dataset, args.new_dataset)
        ledger.set_cap(fp, args.set_cap, args.delta)
        name = ledger.dataset_name(fp) or fp
        print(f"Cap for dataset '{name}': epsilon={args.set_cap:g} at delta={args.delta:g} (change logged in the ledger).")
        return 0
    datasets = [ledger.resolve_dataset(args.dataset)] if args.dataset else ledger.datasets()
    if not datasets:
        print("The ledger is empty.")
    for fp in datasets:
        _print_dataset(ledger, fp)
    return 0


def _export_public(args: argparse.Namespace) -> int:
    fingerprint = export_public_key(args.file)
    print(f"Public key written to {args.file} (fingerprint {fingerprint}).")
    return 0


def _show_key(args: argparse.Namespace) -> int:
    key = load_signing_key()
    print(f"Fingerprint: {public_key_fingerprint(key.public_key)}\nKept in: {key.storage}")
    return 0
