"""A check corpus in a form no demo uses: IT support tickets of an invented software company in four templates
(round 5 session 3). Written to judge structure discovery on a file the project was not built on, never to tune it:
the rules it showed were missing are generic (docs/method-reference.md §2.0b, "What splits a skeleton")::

    .venv/bin/python bench/tickets_corpus.py OUT_DIR [--seed 7] [--customers 300]

writes ``OUT_DIR/tickets.csv`` (ticket_id, customer, text; one customer may call up to three times) and
``OUT_DIR/templates.json`` (for ``privet fidelity REAL SYNTHETIC --templates``). Deterministic for a seed.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
from pathlib import Path

FIRST = [
    "Alice", "Brian", "Carmen", "Dmitri", "Elena", "Farid", "Grace", "Hugo", "Ines", "Jonas", "Kira", "Luca", "Maya",
    "Nils", "Olga", "Pavel", "Quinn", "Rosa", "Sami", "Tara", "Umar", "Vera", "Wei", "Xena", "Yusuf", "Zoe",
]
LAST = [
    "Abbott", "Becker", "Castro", "Dunn", "Ekberg", "Fischer", "Garcia", "Horvat", "Ito", "Jensen", "Kowalski",
    "Lindqvist", "Moreau", "Novak", "Okafor", "Petrov", "Quist", "Rossi", "Sato", "Tanaka", "Ueda", "Varga", "Weber",
    "Young", "Zhou",
]
# (product, what the customer reports, the cause found, what the agent did)
PROBLEMS = (
    ("Ledgerly", ("invoices not syncing", "duplicate invoice numbers", "sync stuck at 99%"), "an expired OAuth token",
     "re-authorised the bank connection"),
    ("Ledgerly", ("VAT totals wrong", "rounding errors on tax lines"), "a misconfigured tax region",
     "corrected the tax region settings"),
    ("Payroll Pro", ("payslips missing", "blank PDF payslips"), "a failed nightly export job", "re-ran the export job"),
    ("Payroll Pro", ("overtime not calculated", "wrong hourly rate applied"), "an outdated pay rule",
     "updated the pay rule to version 4"),
    ("ShiftBoard", ("rota not loading", "calendar shows no shifts", "app crashes on launch"), "a corrupted local cache",
     "cleared the app cache"),
    ("ShiftBoard", ("push notifications delayed", "no shift reminders"), "battery optimisation on Android",
     "whitelisted the app in battery settings"),
    ("CloudDrive", ("upload fails at large files", "timeout on upload"), "the 2 GB file limit on the Basic plan",
     "split the file and explained the plan limits"),
    ("CloudDrive", ("shared folder disappeared", "cannot see team folder"), "revoked sharing permissions",
     "restored the sharing permissions"),
    ("MailDesk", ("emails bouncing", "delivery failure notices", "SPF errors"), "a missing SPF record",
     "added the SPF record to the DNS zone"),
    ("MailDesk", ("login loop", "two-factor code rejected"), "clock drift on the phone",
     "resynchronised the authenticator clock"),
    ("PrintHub", ("printer offline", "jobs stuck in queue"), "a stale print spooler", "restarted the spooler service"),
    ("PrintHub", ("prints come out blank", "faded prints"), "an empty toner cartridge", "sent a replacement cartridge"),
    ("VPN Gate", ("VPN disconnects every hour", "slow VPN speed"), "an MTU mismatch", "lowered the MTU to 1400"),
    ("VPN Gate", ("cannot connect from hotel wifi", "handshake failed"), "a blocked UDP port",
     "switched the tunnel to TCP 443"),
    ("Formly", ("form submissions lost", "missing responses"), "a webhook pointing to an old URL",
     "updated the webhook URL"),
    ("Formly", ("captcha never loads", "submit button greyed out"), "an ad blocker extension",
     "asked the customer to allow the domain"),
)
PLANS = ("Basic", "Team", "Business", "Enterprise")
MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
TEMPLATES = (
    "Ticket #{num}\nCustomer: {name}\nProduct: {product}\nIssue: {symptoms}.\nCause: {cause}.\nResolution: {fix}.\n"
    "Status: closed after {days} days.",
    "{name} called on {date} about {product}: {symptoms}. We found {cause} and {fix}. Follow up in {days} days.",
    "Email from {name} ({plan} plan). Reports {symptoms} in {product} since {date}. Agent {fix} after finding {cause}.",
    "Chat summary - {product} - {symptoms}; root cause: {cause}; agent {fix}; customer satisfied: {yn}.",
)


def tickets(seed: int, customers: int) -> list[tuple[str, str, str]]:
    rng = random.Random(seed)
    people = [(f"{rng.choice(FIRST)} {rng.choice(LAST)}", rng.choice(PLANS), rng.randrange(len(PROBLEMS)))
              for _ in range(customers)]
    rows: list[tuple[str, str, str]] = []
    for c, (name, plan, problem) in enumerate(people):
        for _ in range(rng.choice((1, 2, 2, 3))):
            if rng.random() < 0.3:
                problem = rng.randrange(len(PROBLEMS))
            product, reports, cause, fix = PROBLEMS[problem]
            template = TEMPLATES[rng.choices(range(len(TEMPLATES)), weights=(4, 3, 2, 2))[0]]
            symptoms = " and ".join(rng.sample(reports, k=min(len(reports), rng.choice((1, 2)))))
            text = template.format(
                num=rng.randrange(10000, 99999), name=name, product=product, symptoms=symptoms, cause=cause, fix=fix,
                plan=plan, days=rng.randrange(1, 15), date=f"{rng.randrange(1, 29)} {rng.choice(MONTHS)} 2025",
                yn=rng.choice(("yes", "no")))
            rows.append((f"t-{len(rows) + 1:04d}", f"c{c:04d}", text))
    rng.shuffle(rows)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--customers", type=int, default=300)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    rows = tickets(args.seed, args.customers)
    with open(args.out / "tickets.csv", "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["ticket_id", "customer", "text"])
        writer.writerows(rows)
    about = "bench/tickets_corpus.py: the templates its tickets are written in (format strings, {slots} per ticket)"
    (args.out / "templates.json").write_text(json.dumps(
        {"about": about, "templates": [{"id": i, "template": t} for i, t in enumerate(TEMPLATES)]}, indent=1) + "\n",
        encoding="utf-8")
    print(f"{len(rows)} tickets in {args.out}")


if __name__ == "__main__":
    main()
