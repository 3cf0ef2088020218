"""Readable renderings of a certificate: HTML and PDF.

The HTML is filled into ``resources/templates/certificate.html``; the plain-language summary comes
first. The PDF is the same HTML laid out by fpdf2 (pure Python, no display, no Qt) with the DejaVu
fonts that matplotlib ships, so Greek letters and symbols print.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path
from string import Template
from typing import Any

from core.specs import method_catalogue
from core.common.paths import resources_dir
from core.specs.stage_labels import stage_label

TEMPLATE = ("templates", "certificate.html")


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _num(value: Any, digits: int = 4) -> str:
    if value is None:
        return "not available"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, float)):
        return f"{value:.{digits}g}"
    return _e(value)


def _bytes(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) else _e(value if value is not None else "—")


def _rows(pairs: list[tuple[str, str]]) -> str:
    """A two-column table of name and value; the widths on its first row hold for all (fpdf2 reads them there)."""
    first = (" width='32%'", " width='68%'")  # <td>, not <th>: fpdf2 would repeat a <th> first row as a header
    body = "".join(f"<tr><td{first[0] if i == 0 else ''} align='left'><b>{_e(k)}</b></td>"
                   f"<td{first[1] if i == 0 else ''} align='left'>{v}</td></tr>" for i, (k, v) in enumerate(pairs))
    return f"<table width='100%' border='1' cellspacing='0' cellpadding='3'>{body}</table>"


def _table(headers: list[str], rows: list[list[str]], widths: list[int] | None = None) -> str:
    """A table; ``widths`` (percent, summing to 100) keep long words from breaking in the PDF."""
    width = [f" width='{w}%'" for w in widths] if widths else [""] * len(headers)
    head = "".join(f"<th{w} align='left'>{_e(h)}</th>" for h, w in zip(headers, width))
    body = "".join("<tr>" + "".join(f"<td align='left'>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table width='100%' border='1' cellspacing='0' cellpadding='3'><tr>{head}</tr>{body}</table>"


# The certificate's "meaning" column: the words every method shares here, each method's own in its package
# (``core.specs.method_catalogue.MethodFacts.parameter_meanings``), read when asked.
SHARED_PARAMETER_MEANINGS = {
    # derived by the planner
    "rho_total": "privacy loss of the whole run, in zCDP (ρ; converted to ε above)",
    # Labels (class-conditional synthesis, docs/method.md §6.3)
    "class_conditional": "the method ran once per label, on that label's units only (one budget for all labels)",
    "label_column": "the column whose category every synthetic document keeps",
    "labels": "the labels: typed by the custodian (public), or released with noise",
    "label_share": "share of the budget spent on counting the units per label",
    "sigma_labels": "noise added to each label's count of units (standard deviation)",
    "method_epsilon": "ε the method itself ran at (the rest went to the label counts)",
    "tau_labels": "noisy count a label needed to be released (labels not typed)",
    "delta_labels": "δ spent on releasing the labels (the chance a label of one unit alone is released)",
    "label_mode": "how labels were kept: topic_labels (one run on all units, each document labelled from its "
                  "topic's noisy label counts) or per_class (one run per label)",
    "topic_label_share": "share of the budget spent on counting each topic's units per label",
    "sigma_topic_labels": "noise added to each topic's count of units per label (standard deviation)",
}
PARAMETER_MEANINGS: Mapping[str, str] = method_catalogue.RegisteredWords(SHARED_PARAMETER_MEANINGS, "parameter_meanings")
HIDDEN_PARAMETERS = ("pii_patterns", "pii_names", "pii_places")  # the custodian's own lists: not shown


def _spaced(text: Any) -> str:
    """Identifiers as words ('private_prediction' -> 'private prediction'), so table cells wrap between words."""
    return str(text).replace("_", " ")


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, (list, tuple)):
        return _e(", ".join(Path(str(v)).name for v in value)) or "none"
    return _e(value)


def _params(params: dict[str, Any], leave_out: Any = ()) -> str:
    """The method's parameters as a table: name, rounded value, meaning (``leave_out``: names not shown)."""
    rows = [[_e(k), _value(v), _e(PARAMETER_MEANINGS.get(k, ""))]
            for k, v in params.items() if k not in HIDDEN_PARAMETERS and k not in leave_out]
    return _table(["parameter", "value", "meaning"], rows, [30, 12, 58]) if rows else "<p>—</p>"


def _parameters(i: dict[str, Any]) -> str:
    """The parameters of the stages that ran; those of stages that did not run follow, under their own heading."""
    params = i["method_parameters"]
    unused = [k for k in i.get("parameters_not_used") or [] if k in params]
    table = _params(params, unused)
    if unused:
        table += ("<p><b>Not used in this run</b> (settings of stages that did not run; they had no effect)</p>"
                  + _params({k: params[k] for k in unused}))
    return table


def _cap_changes(changes: list[dict[str, Any]]) -> str:
    """The cap's history: date, new cap and the custodian's reason."""
    rows = [[_e(c.get("date", "")), f"epsilon={_num(c.get('epsilon'))} at delta={_num(c.get('delta'), 3)}",
             _e(c.get("reason") or "no reason recorded")] for c in changes]
    return _table(["date", "cap set to", "reason given"], rows, [16, 30, 54]) if rows else ""


def _guarantee(cert: dict[str, Any]) -> str:
    g = cert["guarantee"]
    pairs = [
        ("End-to-end DP guarantee", "yes" if g["end_to_end_dp"] else "<span class='warn'>NO (see Scope and hazards)</span>"),
        ("Unit of privacy", _e(g["unit_description"])),
        ("Neighbouring datasets", _e(g["neighbouring_relation"])),
        ("Definition", _e(g["definition"])),
        ("Total rho (zCDP)", _num(g["rho_total"], 6)),
        ("delta", _num(g["delta"], 3)),
        ("epsilon at delta, tight conversion", _num(g["epsilon_tight"])),
        ("epsilon at delta, loose conversion (comparison)", _num(g["epsilon_loose"])),
        ("epsilon requested", _num(g["epsilon_target"])),
    ]
    stages = [
        [_e(stage_label(str(s.get("stage", ""))).capitalize()), _e(_spaced(s.get("mechanism", ""))),
         _num(s.get("rho"), 6), _e(s.get("count", "")), _value(s.get("parallel", "")), _e(s.get("description", ""))]
        for s in g["stages"]
    ]
    return (
        _rows(pairs)
        + "<p><b>Privacy loss per stage</b> (rho is the stage's total contribution)</p>"
        + _table(["stage", "mechanism", "rho", "count", "groups per unit", "what it does"], stages, [17, 16, 10, 7, 10, 40])
        + f"<p class='small'>Accounting: {_e(g['accounting_method'])}</p>"
    )


def _history(cert: dict[str, Any]) -> str:
    h = cert["budget_history"]
    if not h.get("ledger_consulted"):
        return f"<p>{_e(h['note'])}</p>"
    cap = h.get("cap")
    pairs = [
        ("Spent by other runs on this dataset (rho)", _num(h["other_runs_rho"], 6)),
        ("Other runs / other releases", f"{len(h['other_runs'])} / {h['other_releases']}"),
        ("This run, charged in the ledger (rho)", _num(h["this_run_rho_charged_in_ledger"], 6)
         + ("" if h["ledger_matches_record"] else " <span class='warn'>(differs from the run's record)</span>")),
        ("Cumulative rho on this dataset", _num(h["cumulative_rho"], 6)),
        ("Cumulative epsilon on this dataset (tight)",
         (_num(h["cumulative_epsilon_tight"]) if h["cumulative_epsilon_tight"] is not None else "not finite")
         + (f" at delta={_num(h['cumulative_delta'], 3)}" if h.get("cumulative_delta") else "")),
        ("Cumulative delta spent outright by phrase discovery", _num(h.get("cumulative_delta_p", 0.0), 3)),
        ("Custodian's cap", f"epsilon={_num(cap['epsilon'])} at delta={_num(cap['delta'], 3)}" if cap else "none set"),
    ]
    notes = "".join(f"<p class='warn'>{_e(n)}</p>" for n in h.get("history_notes", []))
    changes = h.get("cap_changes") or []
    caps = f"<p><b>Changes of the cap</b></p>{_cap_changes(changes)}" if changes else ""
    return _rows(pairs) + notes + caps + f"<p class='small'>{_e(h['note'])}</p>"


def _identity(cert: dict[str, Any]) -> str:
    i = cert["identity"]
    pairs = [
        ("Certificate id", _e(cert["certificate_id"])),
        ("Created on (UTC date)", _e(cert.get("created_on", ""))),
        ("Custodian", _e(i["custodian"] or "—")),
        ("Organisation", _e(i["organisation"] or "—")),
        ("IRB protocol", _e(i["irb_protocol"] or "—")),
        ("Method", _e(i["method_name"])),
        ("Run", f"{_e(i['run_id'])} (started on {_e(i.get('run_date', ''))})"),
        ("Device", _e(i["device"] or "—")),
        ("Privet", f"{_e(i['privet_version'])} (commit {_e(i['privet_commit'] or 'unknown')})"),
    ]
    bundle = i.get("privet_bundle") or {}
    if bundle:
        pairs.append(("Privet bundle", f"{_e(bundle.get('platform', ''))}, built {_e(bundle.get('built_at', ''))}, "
                      f"content SHA-256 <span class='hash'>{_e(bundle.get('content_sha256', ''))}</span>"))
    models = [
        [_e(m.get("name", "")), _e(m.get("backend", "")), _bytes(m.get("size")),
         f"<span class='hash'>{_e(m.get('sha256', ''))}</span>"]
        for m in i["models"]
    ]
    return (_rows(pairs) + "<p><b>Method parameters</b></p>" + _parameters(i)
            + "<p><b>Models</b></p>"
            + _table(["model", "backend", "size (bytes)", "SHA-256 of weights"], models, [28, 12, 14, 46]))


def _outputs(cert: dict[str, Any]) -> str:
    rows = [
        [_e(o["file"]), _bytes(o["size_bytes"]), f"<span class='hash'>{_e(o['sha256'])}</span>"]
        for o in cert["outputs"]
    ]
    fp = cert["dataset_fingerprint"]
    ident = cert.get("dataset_identity") or {}
    key = cert["signing_key"]
    released = cert.get("documents_released")
    return (
        (f"<p>Synthetic documents released: <b>{_e(released)}</b></p>" if released is not None else "")
        + _table(["file", "size (bytes)", "SHA-256"], rows, [30, 15, 55])
        + f"<p>Dataset fingerprint: <span class='hash'>{_e(fp['value'])}</span><br>"
        + f"<span class='small'>{_e(fp['kind'])}</span></p>"
        + (f"<p>Dataset identity: {_e(ident.get('name') or 'not named')} "
           f"<span class='hash'>{_e(ident.get('value', ''))}</span><br>"
           f"<span class='small'>{_e(ident.get('kind', ''))}</span></p>" if ident else "")
        + f"<p>Signed with {_e(key['algorithm'])} key <span class='hash'>{_e(key['public_key_fingerprint'])}</span>; "
        + f"key kept in: {_e(key['storage'])}. Check with <code>privet verify FOLDER --public-key public_key.pem</code>.</p>"
    )


def _non_dp(cert: dict[str, Any]) -> str:
    section = cert.get("non_dp_statistics")
    if not section:
        return ""
    pairs = [(k, _num(v)) for k, v in sorted(section["values"].items())]
    return f"<h2>Statistics of the private data (not DP)</h2><p class='warn'>{_e(section['label'])}</p>{_rows(pairs)}"


PAGE_BREAK = "<!-- page break -->"


def _permitted_use(cert: dict[str, Any]) -> str:
    """Page 1: what the custodian permits the release to be used for, and the advice for its ε band."""
    use = cert.get("permitted_use")
    if not use:
        return "<p><i>Not stated (a certificate made before Privet recorded it).</i></p>"
    return (f"<p><b>{_e(use['name'])}.</b> {_e(use['meaning'])}</p>"
            f"<p>Advice for this budget: {_e(use['advice'])}</p>")


def _dataset_budget(cert: dict[str, Any]) -> str:
    """Page 1: the dataset's total spend (every run on it, this one included), its cap and the cap's changes."""
    h = cert["budget_history"]
    if not h.get("ledger_consulted"):
        return f"<p>{_e(h['note'])}</p>"
    eps, at, cap = h.get("cumulative_epsilon_tight"), h.get("cumulative_delta"), h.get("cap")
    runs = len(h.get("other_runs") or []) + 1
    total = (f"epsilon = {_num(eps, 3)}" if eps is not None else "no finite epsilon") + (
        f" at delta = {_num(at, 2)}" if at else "")
    limit = (f"the custodian's cap is epsilon = {_num(cap['epsilon'], 3)} at delta = {_num(cap['delta'], 2)}"
             if cap else "no cap is set")
    changes = h.get("cap_changes") or []
    return (f"<p>All {runs} run{'' if runs == 1 else 's'} on this dataset recorded on this computer, this one "
            f"included, have spent {_e(total)}; {_e(limit)}. {_e(h.get('combining', ''))}</p>"
            + (f"<p>Changes of the cap:</p>{_cap_changes(changes)}" if changes else ""))


def _summary_page(cert: dict[str, Any]) -> str:
    """Page 1: what was released, the guarantee in plain words, the unit, what is not covered, who signed,
    how to verify. Everything an IRB reviewer needs, in two minutes."""
    i, g, key = cert["identity"], cert["guarantee"], cert["signing_key"]
    released = cert.get("documents_released")
    ident = cert.get("dataset_identity") or {}
    files = ", ".join(o["file"] for o in cert["outputs"]) or "none"
    what = (f"{'An unknown number of' if released is None else released} synthetic "
            f"document{'' if released == 1 else 's'}"
            f"{' (an empty release)' if released == 0 else ''}, written by Privet {_e(i['privet_version'])} with "
            f"{_e(i['method_name'])}. Dataset: {_e(ident.get('name') or 'not named by the custodian')}. "
            f"Run on {_e(i.get('run_date', ''))}; certificate created on {_e(cert.get('created_on', ''))}. "
            f"Files: {_e(files)}. No private document is part of the release.")
    summary = "".join(f"<p>{_e(p)}</p>" for p in cert["summary"])
    not_covered = "".join(f"<li>{_e(n)}</li>" for n in cert.get("not_covered") or cert["scope_and_hazards"])
    rationale = cert.get("budget_rationale") or ""
    why = _e(rationale) if rationale else "<i>No reason was recorded by the custodian.</i>"
    signed = (f"Custodian: <b>{_e(i['custodian'] or 'not given')}</b>; organisation: "
              f"<b>{_e(i['organisation'] or 'not given')}</b>; IRB protocol: <b>{_e(i['irb_protocol'] or 'not given')}"
              f"</b>. Signed with the custodian's {_e(key['algorithm'])} key, fingerprint "
              f"<span class='hash'>{_e(key['public_key_fingerprint'])}</span>.")
    verify = ("Ask the custodian for the public key file (in Privet: Settings, Export public key), then run "
              "<code>privet verify FOLDER --public-key public_key.pem</code> on the release folder. It checks the "
              "signature and that no file was changed since signing (SHA-256 of each file, listed in the appendix).")
    test = "<p class='warn'>TEST MODE — NOT PRIVATE — NOT FOR RELEASE</p>" if cert.get("test_mode") else ""
    return (
        f"<h1>Privacy certificate</h1><p class='small'>Summary for reviewers. The technical appendix follows on "
        f"the next pages. Certificate {_e(cert['certificate_id'])}.</p>{test}"
        f"<h2>What was released</h2><p>{what}</p>"
        f"<h2>In plain words: the guarantee</h2>{summary}"
        f"<h2>Unit of privacy</h2><p>One {_e(g['unit_description'])}. The guarantee compares the data with and "
        f"without any one such unit.</p>"
        f"<h2>Permitted use</h2>{_permitted_use(cert)}"
        f"<h2>What is not covered</h2><ul>{not_covered}</ul>"
        f"<h2>Why this budget was chosen</h2><p>{why}</p>"
        f"<h2>Budget of this dataset</h2>{_dataset_budget(cert)}"
        f"<h2>Who signed</h2><p>{signed}</p>"
        f"<h2>How to verify</h2><p>{verify}</p>"
    )


def _appendix(cert: dict[str, Any]) -> str:
    hazards = "".join(f"<li>{_e(n)}</li>" for n in cert["scope_and_hazards"])
    samplers = "".join(f"<li>{_e(s['sampler'])} — <b>{_e(s['kind'])}</b></li>" for s in cert["samplers"]) or "<li>none listed</li>"
    return (
        "<h1>Technical appendix</h1>"
        f"<h2>The guarantee in figures</h2>{_guarantee(cert)}"
        f"<h2>Scope and hazards: the full list of what is not covered</h2><ul>{hazards}</ul>"
        f"<h2>Budget history of this dataset</h2>{_history(cert)}"
        f"<h2>Samplers</h2><ul>{samplers}</ul>"
        f"{_non_dp(cert)}"
        f"<h2>Identity and parameters</h2>{_identity(cert)}"
        f"<h2>Exported files</h2>{_outputs(cert)}"
    )


def render_html(cert: dict[str, Any]) -> str:
    """The readable certificate as a standalone HTML page: the one-page summary, then the technical appendix."""
    body = f"{_summary_page(cert)}{PAGE_BREAK}<div class='appendix'>{_appendix(cert)}</div>"
    template = Template(resources_dir().joinpath(*TEMPLATE).read_text(encoding="utf-8"))
    return template.substitute(title=_e(f"Privacy certificate {cert['certificate_id']}"), body=body)


def pdf_page_count(data: bytes) -> int:
    """Number of pages in a PDF (counts page objects; enough for the PDFs render_pdf writes)."""
    return len(re.findall(rb"/Type\s*/Page(?![a-zA-Z])", data))


def render_pdf(html_text: str, path: Path, title: str = "Privacy certificate", run_date: str = "") -> int | None:
    """Write ``html_text`` as an A4 PDF at ``path``; the page count, or None when fpdf2 is missing.

    The PDF's creation date is the run's date (``YYYY-MM-DD``) at midnight UTC, never the time of export:
    times to the second would say how long the run took, which grows with the private data."""
    try:
        import matplotlib
        from fpdf import FPDF, TextStyle
    except ImportError:
        return None
    fonts = Path(matplotlib.get_data_path()) / "fonts" / "ttf"
    pdf = FPDF(format="A4")
    pdf.set_title(title)
    pdf.set_creator("Privet")
    pdf.set_creation_date(_midnight_utc(run_date))
    pdf.set_margins(14, 12, 14)
    pdf.set_auto_page_break(True, 12)
    for style, name in {"": "DejaVuSans", "B": "DejaVuSans-Bold", "I": "DejaVuSans-Oblique",
                        "BI": "DejaVuSans-BoldOblique"}.items():
        pdf.add_font("DejaVu", style, fonts / f"{name}.ttf")
    pdf.set_font("DejaVu", size=8)
    pdf.add_page()
    styles = {
        "h1": TextStyle(font_size_pt=15, color="#111111", t_margin=0, b_margin=2),
        "h2": TextStyle(font_size_pt=11, color="#1f3a5f", t_margin=4, b_margin=1),
    }
    for number, part in enumerate(_pdf_body(html_text).split(PAGE_BREAK)):
        if number:
            pdf.add_page()
        pdf.write_html(part, font_family="DejaVu", tag_styles=styles, table_line_separators=False)
    pdf.output(str(path))
    return pdf.pages_count


def _midnight_utc(day: str) -> datetime:
    """``YYYY-MM-DD`` (today when empty or unreadable) at 00:00 UTC."""
    try:
        parsed = datetime.strptime(day[:10], "%Y-%m-%d")
    except ValueError:
        parsed = datetime.now(timezone.utc).replace(tzinfo=None)
    return datetime(parsed.year, parsed.month, parsed.day, tzinfo=timezone.utc)


def _pdf_body(html_text: str) -> str:
    """The <body> of the HTML in the subset fpdf2 lays out (it needs all or no column widths)."""
    match = re.search(r"<body>(.*)</body>", html_text, re.S)
    body = match.group(1) if match else html_text
    body = re.sub(r"</?span[^>]*>", "", body)  # styling spans: fpdf2 allows no nested tags in cells
    body = re.sub(r"</?div[^>]*>", "", body)
    # Bold outside tables: fpdf2 carries it into the next table's cells, so text outside tables loses it.
    parts = re.split(r"(<table.*?</table>)", body, flags=re.S)
    body = "".join(p if p.startswith("<table") else re.sub(r"</?b>", "", p) for p in parts)
    return body.replace("cellpadding='3'", "cellpadding='1'")
