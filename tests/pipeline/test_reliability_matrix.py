"""Every bad input we know of, run through the real command line: refused with a message, never a
traceback, and leaving no release, no charge and no run folder behind.

The table in docs/reliability.md is generated from this file:

    PRIVET_UPDATE_DOCS=1 python -m pytest -q tests/pipeline/test_reliability_matrix.py

Without ``PRIVET_UPDATE_DOCS`` the test checks that the document lists every case with the exit code
measured now (messages may be reworded without regenerating it).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import re
import sqlite3
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest
from tests.helpers import CANARY, ROOT, SHARED_SETTINGS, TINY, TINY_SIZES, write_notes

from core.cli import INTERNAL_ERROR
from core.cli import main as privet

DOC = ROOT / "docs" / "reliability.md"
BEGIN, END = "<!-- BEGIN GENERATED TABLE -->", "<!-- END GENERATED TABLE -->"


# --- the fixture every case starts from ------------------------------------------------------------


@dataclass
class Site:
    """A fresh data folder, a small private CSV, a valid spec and an output folder, per case."""

    root: Path
    home: Path
    corpus: Path
    out: Path

    def spec(self, extra: str = "", **sections: dict) -> Path:
        """A valid tiny-model run spec, with TOML lines replaced or added per section."""
        base = {
            "": {"method": '"dp_synrag"'},
            "data": {"path": _q(self.corpus), "text_column": '"note"', "id_column": '"id"'},
            "privacy": {"epsilon": "4.0", "delta": "0.0", "spend_anyway": "true"},  # tiny corpus: ~0 topics
            "llm": {"source": _q(TINY.source)},
            "embedder": {"source": _q(TINY.source)},
            "dp_synrag": {key: _toml(value) for key, value in TINY_SIZES.items() if key not in SHARED_SETTINGS},
            "writing": {key: _toml(value) for key, value in TINY_SIZES.items() if key in SHARED_SETTINGS},  # tiny
            "output": {"folder": _q(self.out)},
        }
        for section, values in sections.items():
            if values is None:  # leave the section out
                base.pop(section, None)
            else:
                base.setdefault(section, {}).update(values)
        lines = [f"{k} = {v}" for k, v in base.pop("").items()] + [extra]
        for section, values in base.items():
            lines.append(f"[{section}]")
            lines += [f"{k} = {v}" for k, v in values.items() if v is not None]
        path = self.root / "spec.toml"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return path

    def run(self, extra: str = "", **sections: dict) -> list[str]:
        return ["run", str(self.spec(extra, **sections)), "--quiet"]

    def data_file(self, name: str, payload: bytes) -> Path:
        path = self.root / name
        path.write_bytes(payload)
        return path

    def run_on(self, data: Path, **data_settings: str) -> list[str]:
        return self.run(data={"path": _q(data), **data_settings})


def _q(value: object) -> str:
    return '"' + str(value).replace("\\", "\\\\") + '"'


def _toml(value: object) -> str:
    """A number, flag or text as a TOML value (the cases replace these by the bad values they try)."""
    return str(value).lower() if isinstance(value, bool) else _q(value) if isinstance(value, str) else str(value)


def _ledger_with_rows(site: Site, n: int = 4) -> Path:
    from core.ledger import Ledger

    with Ledger() as ledger:
        for i in range(n):
            ledger.charge("a1" * 32, f"run{i}", "histogram", 0.1, 1e-3, "earlier run")
    return site.home / "ledger.db"


def _raw_sql(path: Path, *statements: str) -> None:
    """Edit the ledger as an attacker with file access would: drop the triggers, edit, recreate them."""
    conn = sqlite3.connect(path)
    triggers = [r[0] for r in conn.execute("SELECT sql FROM sqlite_master WHERE type = 'trigger'")]
    conn.execute("DROP TRIGGER charges_no_update")
    conn.execute("DROP TRIGGER charges_no_delete")
    for statement in statements:
        conn.execute(statement)
    for sql in triggers:
        conn.execute(sql)
    conn.commit()
    conn.close()


def _gguf_header(n_tensors: int, n_kv: int, body: bytes = b"") -> bytes:
    return b"GGUF" + struct.pack("<IQQ", 3, n_tensors, n_kv) + body


def _packaged_gguf_prefix(size: int) -> bytes:
    from core.models.sources import packaged_llm_path

    with open(packaged_llm_path(), "rb") as handle:
        return handle.read(size)


# --- the cases -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    name: str  # the bad input, in words
    make: Callable[[Site], list[str]]  # prepares the site, returns the privet arguments
    expect: str = "refused"  # "refused", "warned" (plan only: exit 0 and the warning shown) or "accepted" (plan: exit 0)
    shows: str = ""  # a fragment the message must contain


def _spec_case(name: str, shows: str, extra: str = "", **sections: dict) -> Case:
    return Case(name, lambda s: s.run(extra, **sections), shows=shows)


CASES: list[Case] = [
    # run-spec values (refused when the spec is loaded: nothing loaded, nothing charged)
    _spec_case("R = -1", "[dp_synrag] R", dp_synrag={"R": "-1"}),
    _spec_case('R = "4" (a string)', "must be a number", dp_synrag={"R": '"4"'}),
    _spec_case("R = 4.5 (not whole)", "whole number", dp_synrag={"R": "4.5"}),
    _spec_case("k = -1 (no units per cluster)", "[dp_synrag] k", dp_synrag={"k": "-1"}),
    _spec_case("K = 0 (no keywords)", "[dp_synrag] K", dp_synrag={"K": "0"}),
    _spec_case("L = -1", "[dp_synrag] L", dp_synrag={"L": "-1"}),
    _spec_case("T = 0 (no tokens)", "[dp_synrag] T", dp_synrag={"T": "0"}),
    _spec_case("tau = 0", "[dp_synrag] tau", dp_synrag={"tau": "0.0"}),
    _spec_case("tau = -1", "[dp_synrag] tau", dp_synrag={"tau": "-1.0"}),
    _spec_case("hist_fraction = 1.5", "hist_fraction", dp_synrag={"hist_fraction": "1.5"}),
    _spec_case('self_filter = "yes"', "true or false", dp_synrag={"self_filter": '"yes"'}),
    _spec_case("max_prompt_tokens = 0", "max_prompt_tokens", writing={"max_prompt_tokens": "0"}),
    _spec_case("delta < 0", "[privacy] delta", privacy={"delta": "-0.1"}),
    _spec_case("delta = 1.5", "[privacy] delta", privacy={"delta": "1.5"}),
    _spec_case("epsilon = true", "must be a number", privacy={"epsilon": "true"}),
    _spec_case('epsilon = "4" (a string)', "must be a number", privacy={"epsilon": '"4"'}),
    _spec_case("epsilon = 0", "[privacy] epsilon", privacy={"epsilon": "0.0"}),
    _spec_case("epsilon = -1", "[privacy] epsilon", privacy={"epsilon": "-1.0"}),
    _spec_case("epsilon = nan", "finite", privacy={"epsilon": "nan"}),
    _spec_case("epsilon = inf", "finite", privacy={"epsilon": "inf"}),
    _spec_case("epsilon = 1e9", "[privacy] epsilon", privacy={"epsilon": "1e9"}),
    _spec_case('conversion = "medium"', "[privacy] conversion", privacy={"conversion": '"medium"'}),
    _spec_case("data.path = 5 (a number)", "[data] path", data={"path": "5"}),
    _spec_case("max_unit_chars = 0", "[data] max_unit_chars", data={"max_unit_chars": "0"}),
    Case("[privacy] given as a number (privacy = 5)", lambda s: s.run("privacy = 5", privacy=None),
         shows="must be a table"),
    _spec_case("an unknown setting", "Unknown setting", dp_synrag={"clusters": "5"}),
    _spec_case('method = "magic"', "Unknown method", extra="", **{"": {"method": '"magic"'}}),
    _spec_case('llm source = "internet"', "[llm] source", llm={"source": '"internet"'}),
    _spec_case('output formats = ["pdf"]', "[output] formats", output={"formats": '["pdf"]'}),
    _spec_case("test_mode_seed = -1", "test_mode_seed", **{"": {"method": '"dp_synrag"', "test_mode_seed": "-1"}}),
    _spec_case("RPSG similarity_threshold = 2", "similarity_threshold", rpsg={"similarity_threshold": "2.0"}),
    Case("spec file is not valid TOML", lambda s: ["run", str(s.data_file("bad.toml", b"epsilon = = 4\n"))],
         shows="not valid TOML"),
    Case("spec file does not exist", lambda s: ["run", str(s.root / "missing.toml")], shows="does not exist"),
    Case("spec file is a folder", lambda s: ["run", str(_mkdir(s.root / "spec-folder.toml"))], shows="is a folder"),
    Case("spec file is not UTF-8", lambda s: ["run", str(s.data_file("latin.toml", 'method = "dp_synrag" # caf\xe9\n'
                                                                     .encode("latin-1")))], shows="not UTF-8"),
    _spec_case("R = 1e9 (privet run)", "[dp_synrag] R", dp_synrag={"R": "1000000000"}),
    Case("R = 1e9 (privet plan)", lambda s: ["plan", str(s.spec(dp_synrag={"R": "1000000000"}))], shows="[dp_synrag] R"),
    _spec_case("T = 1e6 tokens", "[dp_synrag] T", dp_synrag={"T": "1000000"}),
    # the private data
    Case("data path does not exist", lambda s: s.run_on(s.root / "nowhere.csv"), shows="does not exist"),
    Case("empty folder", lambda s: s.run(data={"path": _q(_mkdir(s.root / "empty")), "text_column": None,
                                               "id_column": None}), shows="is empty"),
    Case("binary file as CSV", lambda s: s.run_on(s.data_file("b.csv", b"\x00\x01\x02" * 100)), shows="binary"),
    Case("Latin-1 CSV", lambda s: s.run_on(s.data_file("l.csv", f"id,note\n1,caf\xe9 {CANARY}\n".encode("latin-1"))),
         shows="not UTF-8"),
    Case("UTF-16 CSV without a byte-order mark",
         lambda s: s.run_on(s.data_file("u.csv", f"id,note\n1,{CANARY}\n2,b\n".encode("utf-16-le"))),
         shows="UTF-16"),
    Case("CSV without a header row (text column not found)",
         lambda s: s.run_on(s.data_file("h.csv", f"n1,{CANARY},came in with fever\nn2,Bob,cough\n".encode()),
                            text_column='"note"', id_column='""'), shows="is not in"),
    Case("CSV without a header row (no text column chosen)",
         lambda s: s.run_on(s.data_file("h2.csv", f"n1,{CANARY},came in with fever\nn2,Bob,cough\n".encode()),
                            text_column='""', id_column='""'), shows="Which column"),
    Case("duplicate ids", lambda s: s.run_on(s.data_file("d.csv", b"id,note\n1,a\n1,b\n2,c\n")), shows="duplicate"),
    Case("symlink loop as data path", lambda s: s.run_on(_loop(s.root / "loop.csv")), shows="leads nowhere"),
    Case("a single document", lambda s: s.run_on(s.data_file("one.csv", b"id,note\n1,only one\n")),
         shows="Only one privacy unit"),
    Case("header only, no rows", lambda s: s.run_on(s.data_file("e.csv", b"id,note\n")), shows="No document"),
    Case("unbalanced quotes", lambda s: s.run_on(s.data_file("q.csv", f'id,note\n1,"{CANARY}\n2,x'.encode())),
         shows="not a well-formed"),
    Case("JSONL with no JSON objects", lambda s: s.run_on(s.data_file("j.jsonl", b"[1]\nnot json\n"), id_column='""'),
         shows="no JSON objects"),
    # where the release goes
    Case("--output pointing at a file",
         lambda s: s.run() + ["--output", str(s.data_file("a_file.txt", b"x"))], shows="is a file"),
    Case("output folder not empty", lambda s: s.run(output={"folder": _q(_nonempty(s.root / "full"))}),
         shows="not empty"),
    Case("output folder under a file", lambda s: s.run(output={"folder": _q(s.data_file("f.txt", b"x") / "out")}),
         shows="which is a file"),
    Case("output folder on /proc", lambda s: s.run(output={"folder": '"/proc/privet-release"'}),
         shows="cannot be written"),
    Case("--resume on a folder that holds no run", lambda s: s.run() + ["--resume", str(_mkdir(s.root / "r"))],
         shows="resume"),
    # models
    Case("GGUF path does not exist", lambda s: s.run(llm={"source": '"gguf"', "path": _q(s.root / "none.gguf")}),
         shows="does not exist"),
    Case("junk file named .gguf", lambda s: s.run(llm={"source": '"gguf"', "path": _q(
        s.data_file("junk.gguf", b"<html>not a model</html>" * 40))}), shows="not a GGUF"),
    Case("GGUF with damaged metadata", lambda s: s.run(llm={"source": '"gguf"', "path": _q(
        s.data_file("meta.gguf", _gguf_header(2**62, 2**62, b"\xff" * 64)))}), shows="damaged or incomplete"),
    Case("truncated GGUF (first 1 MB of the packaged model)", lambda s: s.run(llm={"source": '"gguf"', "path": _q(
        s.data_file("cut.gguf", _packaged_gguf_prefix(1 << 20)))}), shows="damaged or incomplete"),
    Case("Hugging Face folder without config.json",
         lambda s: s.run(llm={"source": '"hf"', "path": _q(_mkdir(s.root / "hf"))}), shows="no config.json"),
    # the ledger
    Case("ledger wiped (: > ledger.db)", lambda s: (_ledger_with_rows(s).write_bytes(b""), s.run())[1],
         shows="integrity check"),
    Case("ledger deleted", lambda s: (_ledger_with_rows(s).unlink(), s.run())[1], shows="integrity check"),
    Case("last ledger rows deleted and sqlite_sequence reset",
         lambda s: (_raw_sql(_ledger_with_rows(s), "DELETE FROM charges WHERE seq > 2",
                             "UPDATE sqlite_sequence SET seq = 2 WHERE name = 'charges'"), s.run())[1],
         shows="witness recorded"),
    Case("a ledger row deleted (triggers dropped and recreated)",
         lambda s: (_raw_sql(_ledger_with_rows(s), "DELETE FROM charges WHERE seq = 2"), s.run())[1],
         shows="integrity check"),
    Case("a ledger row edited (triggers dropped and recreated)",
         lambda s: (_raw_sql(_ledger_with_rows(s), "UPDATE charges SET rho = 0 WHERE seq = 3"), s.run())[1],
         shows="changed"),
    Case("append-only trigger dropped", lambda s: (_raw_sql_drop(_ledger_with_rows(s)), s.run())[1],
         shows="trigger"),
    Case("junk ledger.db", lambda s: (_ledger_with_rows(s).write_bytes(b"junk" * 1000), s.run())[1],
         shows="integrity check"),
    Case("half-truncated ledger.db", lambda s: (_truncate_half(_ledger_with_rows(s, 200)), s.run())[1],
         shows="integrity check"),
    Case("ledger witness edited", lambda s: (_edit_witness(_ledger_with_rows(s)), s.run())[1],
         shows="does not authenticate"),
    Case("ledger witness deleted", lambda s: (_ledger_with_rows(s).with_suffix(".witness").unlink(), s.run())[1],
         shows="witness file"),
    Case("installation key replaced (witness no longer authenticates)",
         lambda s: (_ledger_with_rows(s), (s.home / "installation.key").write_bytes(os.urandom(32)), s.run())[2],
         shows="does not authenticate"),
    Case("run over the dataset's budget cap", lambda s: _capped(s), shows="Nothing was charged"),
    Case("phrase discovery's δ would reach the cap's δ (cap δ = 1e-9; run δ = 0.5, 0.5 of it for phrases)",
         lambda s: _delta_capped(s), shows="no ε can be stated"),
    Case("older ledger.db restored together with its witness", lambda s: _rolled_back(s), shows="high-water mark"),
    Case("ledger --check after restoring an older ledger and witness",
         lambda s: (_rolled_back(s), ["ledger", "--check"])[1], shows="tampered"),
    Case("ledger --rewitness without the acknowledgement",
         lambda s: (_ledger_with_rows(s).with_suffix(".witness").unlink(), ["ledger", "--rewitness"])[1],
         shows="acknowledge-unverifiable-history"),
    Case("ledger --set-cap on a dataset name no run used",
         lambda s: (_ledger_with_rows(s), ["ledger", "notes_canary.csv", "--set-cap", "0.5", "--delta", "1e-3"])[1],
         shows="No dataset named"),
    Case("export of a run whose privacy record was edited", lambda s: _edited_record(s), shows="does not authenticate"),
    Case("ledger --check on a wiped ledger", lambda s: (_ledger_with_rows(s).write_bytes(b""), ["ledger", "--check"])[1],
         shows="witness recorded"),
    # the data folder is never an output (issue 31, item 3): refused before the corpus loads, nothing deleted
    Case("--output $PRIVET_HOME --overwrite", lambda s: _overwrite(s, _populated_home(s)), shows="Privet data folder"),
    Case("--output a symlink to $PRIVET_HOME --overwrite",
         lambda s: _overwrite(s, _link(s.root / "home-link", _populated_home(s))), shows="Privet data folder"),
    Case("--output a folder inside $PRIVET_HOME (a run folder) --overwrite",
         lambda s: _overwrite(s, _populated_home(s) / "runs" / "20260101-aaaaaaaa"), shows="is inside the Privet data"),
    Case("--output the parent folder of $PRIVET_HOME --overwrite",
         lambda s: (_populated_home(s), _overwrite(s, s.root))[1], shows="contains the Privet data folder"),
    Case("--output the ledger's state folder (high-water mark) --overwrite",
         lambda s: (_populated_home(s), _overwrite(s, _state_folder()))[1], shows="Privet state folder"),
    Case("--output a new folder inside the state folder",
         lambda s: (_populated_home(s), s.run() + ["--output", str(_state_folder() / "release")])[1],
         shows="is inside the Privet state folder"),
    Case("[output] folder = $PRIVET_HOME with export_at_end = false (the desktop exports later)",
         lambda s: s.run(output={"folder": _q(_populated_home(s)), "export_at_end": "false"}),
         shows="Privet data folder"),
    Case("--output a non-empty folder Privet did not write, with --overwrite",
         lambda s: _overwrite(s, _nonempty(s.root / "mine")), shows="no Privet release marker"),
    Case("--output a Privet release holding another file, with --overwrite",
         lambda s: _overwrite(s, _marked_release(s.root / "old-release", extra="my-notes.docx")),
         shows="other file"),
    Case("--output a folder with a forged, empty release marker, with --overwrite",
         lambda s: _overwrite(s, _forged_marker(s.root / "forged")), shows="no Privet release marker"),
    Case("privet export into $PRIVET_HOME --overwrite",
         lambda s: ["export", str(_charged_run(s)), str(_populated_home(s)), "--overwrite"],
         shows="Privet data folder"),
    Case("privet export into a symlink to the parent of $PRIVET_HOME --overwrite",
         lambda s: ["export", str(_charged_run(s)), str(_link(s.root / "up", s.root)), "--overwrite"],
         shows="contains the Privet data folder"),
    Case("privet export into a non-empty folder Privet did not write, with --overwrite",
         lambda s: ["export", str(_charged_run(s)), str(_nonempty(s.root / "mine")), "--overwrite"],
         shows="no Privet release marker"),
    # every size bounded before any charge (issue 31, item 6): refused when the spec is loaded
    _spec_case("realisation_tokens = 1e7 (privet run)", "[dp_synrag] realisation_tokens",
               dp_synrag={"text": '"realised"', "realisation_tokens": "10000000"}),
    Case("realisation_tokens = 1e7 (privet plan)", lambda s: ["plan", str(s.spec(
        dp_synrag={"text": '"realised"', "realisation_tokens": "10000000"}))], shows="[dp_synrag] realisation_tokens"),
    _spec_case("realisation_tokens = 0", "[dp_synrag] realisation_tokens", dp_synrag={"realisation_tokens": "0"}),
    Case("RPSG max_new_tokens = 1e7 (privet plan)", lambda s: ["plan", str(s.spec(
        **{"": {"method": '"rpsg"'}}, rpsg={"max_new_tokens": "10000000"}))], shows="[rpsg] max_new_tokens"),
    _spec_case("RPSG m = 1e6 candidates", "[rpsg] m", **{"": {"method": '"rpsg"'}}, rpsg={"m": "1000000"}),
    _spec_case("RPSG batch_size = 0", "[rpsg] batch_size", **{"": {"method": '"rpsg"'}}, rpsg={"batch_size": "0"}),
    _spec_case("RPSG n_variants = -1", "[rpsg] n_variants", **{"": {"method": '"rpsg"'}}, rpsg={"n_variants": "-1"}),
    Case("Aug-PE population = 1e9 (privet plan)", lambda s: ["plan", str(s.spec(
        **{"": {"method": '"aug_pe"'}}, aug_pe={"population": "1000000000"}))], shows="[aug_pe] population"),
    _spec_case("Aug-PE population = 1e9 (privet run)", "[aug_pe] population", **{"": {"method": '"aug_pe"'}},
               aug_pe={"population": "1000000000"}),
    _spec_case("Aug-PE population = -1", "[aug_pe] population", **{"": {"method": '"aug_pe"'}},
               aug_pe={"population": "-1"}),
    _spec_case("Aug-PE max_new_tokens = 1e7", "[aug_pe] max_new_tokens", **{"": {"method": '"aug_pe"'}},
               aug_pe={"max_new_tokens": "10000000"}),
    _spec_case("Aug-PE iterations = 1e6", "[aug_pe] iterations", **{"": {"method": '"aug_pe"'}},
               aug_pe={"iterations": "1000000"}),
    _spec_case("Aug-PE variations = 1e6", "[aug_pe] variations", **{"": {"method": '"aug_pe"'}},
               aug_pe={"variations": "1000000"}),
    _spec_case("Aug-PE threshold = -1", "[aug_pe] threshold", **{"": {"method": '"aug_pe"'}},
               aug_pe={"threshold": "-1.0"}),
    _spec_case("top_k_plus = 1e9", "[dp_synrag] top_k_plus", dp_synrag={"top_k_plus": "1000000000"}),
    _spec_case("top_k_plus = -1", "[dp_synrag] top_k_plus", dp_synrag={"top_k_plus": "-1"}),
    _spec_case("cluster_keywords = 1e9 co-keywords per cluster", "[dp_synrag] cluster_keywords",
               dp_synrag={"cluster_keywords": "1000000000"}),
    _spec_case("K = 1e6 keywords per unit", "[dp_synrag] K", dp_synrag={"K": "1000000"}),
    _spec_case("k = 1e9 units per cluster", "[dp_synrag] k", dp_synrag={"k": "1000000000"}),
    _spec_case("L = 1e9 clusters per unit", "[dp_synrag] L", dp_synrag={"L": "1000000000"}),
    _spec_case("R = 1e300 (a float)", "[dp_synrag] R", dp_synrag={"R": "1e300"}),
    _spec_case("T = -5", "[dp_synrag] T", dp_synrag={"T": "-5"}),
    _spec_case("max_prompt_tokens = 1e9", "[writing] max_prompt_tokens", writing={"max_prompt_tokens": "1000000000"}),
    _spec_case("phrases_per_unit = 1000", "[dp_synrag] phrases_per_unit", dp_synrag={"phrases_per_unit": "1000"}),
    _spec_case("batch_rows = 1e9 rows per wave", "[writing] batch_rows", writing={"batch_rows": "1000000000"}),
    _spec_case("memory_budget_mb = 1e12", "[writing] memory_budget_mb", writing={"memory_budget_mb": "1000000000000"}),
    _spec_case("tau = inf", "finite", dp_synrag={"tau": "inf"}),
    _spec_case("delta = nan", "finite", privacy={"delta": "nan"}),
    _spec_case("max_units = -5", "[privacy] max_units", privacy={"max_units": "-5"}),
    _spec_case("max_units = 1e15", "[privacy] max_units", privacy={"max_units": "1000000000000000"}),
    _spec_case("max_unit_chars = 1e12", "[data] max_unit_chars", data={"max_unit_chars": "1000000000000"}),
    _spec_case("[compute] workers = 1e6", "[compute] workers", compute={"workers": "1000000"}),
    _spec_case('[compute] backend = "gpu"', "[compute] backend", compute={"backend": '"gpu"'}),
    _spec_case('test_mode_seed = "x" (a string)', "test_mode_seed",
               **{"": {"method": '"dp_synrag"', "test_mode_seed": '"x"'}}),
    # caps (privet ledger --set-cap): refused before the ledger is opened
    Case("--set-cap inf", lambda s: _set_cap(s, "inf"), shows="finite number above 0"),
    Case("--set-cap nan", lambda s: _set_cap(s, "nan"), shows="finite number above 0"),
    Case("--set-cap 0", lambda s: _set_cap(s, "0"), shows="finite number above 0"),
    Case("--set-cap -1", lambda s: _set_cap(s, "-1"), shows="finite number above 0"),
    Case("--set-cap with --delta 0", lambda s: _set_cap(s, "4", "0"), shows="above 0 and below 1"),
    Case("--set-cap with --delta 1", lambda s: _set_cap(s, "4", "1"), shows="above 0 and below 1"),
    Case("--set-cap with --delta inf", lambda s: _set_cap(s, "4", "inf"), shows="above 0 and below 1"),
    Case("--set-cap without --delta", lambda s: _set_cap(s, "4", None), shows="needs a DATASET and --delta"),
    Case("--set-cap on a dataset name holding an ESC character",
         lambda s: _set_cap(s, "4", name="notes\x1b[2J.csv"), shows="non-printable character (U+001B"),
    # run-spec files: kind and size checked before they are read
    Case("spec file is /dev/zero", lambda s: ["run", "/dev/zero"], shows="not a regular file"),
    Case("spec file is a named pipe (nothing ever written to it)", lambda s: ["run", str(_fifo(s.root / "pipe.toml"))],
         shows="not a regular file"),
    Case("spec file larger than 1 MiB", lambda s: ["run", str(s.data_file("huge.toml", b"# x\n" * (300 << 10)))],
         shows="larger than 1 MiB"),
    Case("spec file with a NUL byte", lambda s: ["run", str(s.data_file("nul.toml", b'method = "dp_synrag"\x00\n'))],
         shows="not valid TOML"),
    Case("spec file is a symlink loop", lambda s: ["run", str(_loop(s.root / "loop.toml"))], shows="cannot be read"),
    Case("[dp_synrag] given as text", lambda s: s.run('dp_synrag = "fast"', dp_synrag=None), shows="must be a table"),
    # names: printable only (they are echoed on a terminal and printed on the certificate)
    _spec_case("dataset_name holding an ESC character", "non-printable character (U+001B",
               data={"dataset_name": '"notes\\u001b[31m"'}),
    _spec_case("dataset_name holding a zero-width space", "non-printable character (U+200B",
               data={"dataset_name": '"notes\\u200b.csv"'}),
    _spec_case("dataset_name of 1000 characters", "at most 200", data={"dataset_name": _q("n" * 1000)}),
    _spec_case("custodian holding a newline", "[output] custodian", output={"custodian": '"Dr A\\nDr B"'}),
    _spec_case("data path holding an ESC character", "[data] path", data={"path": '"notes\\u001b.csv"'}),
    Case("data path is /dev/zero", lambda s: s.run_on(Path("/dev/zero")), shows="neither a folder nor a regular file"),
    Case("data path is a named pipe", lambda s: s.run_on(_fifo(s.root / "pipe.csv")),
         shows="neither a folder nor a regular file"),
    # refused when the spec is loaded since the [compute] rules hold the Ray address (was: when the run began)
    _spec_case('[compute] address = "10.0.0.1"', "[compute] address", compute={"address": '"10.0.0.1"'}),
    # the last unclear bad inputs (issue 57, item 3): refused when the spec is loaded, naming what was wrong
    Case("spec nested 5,000 levels deep", lambda s: s.run("deep = " + "[" * 5000 + "]" * 5000),
         shows="levels deep"),
    _spec_case("epsilon = 1e-300 (too small to represent)", "= 1e-300 is out of range", privacy={"epsilon": "1e-300"}),
    _spec_case("delta = 5e-324 (the smallest float)", "= 5e-324 is out of range", privacy={"delta": "5e-324"}),
    _spec_case('task = "" (an empty task)', "is not a description of the public task",
               **{"": {"method": '"dp_synrag"', "task": '""'}}),
    # the cap holds the content, not the name (issue 57, items 1-2): refused before any charge, naming the dataset
    Case("a surface-changed copy of a capped dataset (look-alike letters, HTML export, new file name)",
         lambda s: _surface_copy_capped(s), shows="These data are budgeted as the dataset 'notes.csv'"),
    # accepted: a spec saved with a UTF-8 byte-order mark loads as the same spec (privet plan charges nothing)
    Case("spec saved with a UTF-8 byte-order mark", lambda s: ["plan", str(_with_bom(s.spec()))],
         expect="accepted", shows="Target: epsilon = 4"),
    # accepted, but with a loud warning before anything could be charged (privet plan charges nothing)
    Case("epsilon = 50 (weak protection)", lambda s: ["plan", str(s.spec(privacy={"epsilon": "50.0"}))],
         expect="warned", shows="weak"),
    Case("delta = 0.5 with 40 units", lambda s: ["plan", str(s.spec(privacy={"delta": "0.5"}))],
         expect="warned", shows="1/n"),
    Case("rows dropped for a blank person", lambda s: ["plan", str(s.spec(data={"path": _q(s.data_file(
        "p.csv", b"id,who,note\n" + b"".join(f"{i},{'' if i % 4 == 0 else f'P{i}'},note {i}\n".encode()
                                             for i in range(40)))), "person_column": '"who"'}))],
         expect="warned", shows="without a person"),
]


def _populated_home(site: Site) -> Path:
    """The data folder as a used installation has it: ledger rows, a cap, a run folder (what must survive)."""
    from core.ledger import Ledger

    _ledger_with_rows(site)
    with Ledger() as ledger:
        ledger.set_cap("a1" * 32, 20.0, 1e-3)
    run = _mkdir(site.home / "runs" / "20260101-aaaaaaaa")
    (run / "run.json").write_text("{}", encoding="utf-8")
    return site.home


def _overwrite(site: Site, folder: Path) -> list[str]:
    return site.run() + ["--output", str(folder), "--overwrite"]


def _state_folder() -> Path:
    from core.ledger.highwater import state_dir

    return state_dir()


def _link(path: Path, target: Path) -> Path:
    path.symlink_to(target, target_is_directory=True)
    return path


def _marked_release(folder: Path, extra: str = "") -> Path:
    """A release folder as Privet's export writes it (marker included), plus ``extra`` if named."""
    from core.run.export import write_marker

    _mkdir(folder)
    for name in ("synthetic.jsonl", "certificate.json", "public_key.pem"):
        (folder / name).write_text("{}\n", encoding="utf-8")
    write_marker(folder, "cert-1")
    if extra:
        (folder / extra).write_text("the custodian's own file", encoding="utf-8")
    return folder


def _forged_marker(folder: Path) -> Path:
    _nonempty(folder)
    (folder / ".privet-release").write_text("", encoding="utf-8")
    return folder


def _charged_run(site: Site) -> Path:
    """A finished run folder whose record the ledger charged (the export would succeed elsewhere)."""
    from core.certificate.privacy_record import PrivacyRecord
    from core.ledger import Ledger

    run = _mkdir(site.root / "run")
    (run / "synthetic.jsonl").write_text('{"id": 1, "text": "A synthetic note."}\n', encoding="utf-8")
    PrivacyRecord(run_id="run-9", method="dp_synrag", dataset_fingerprint="b2" * 32, delta=1e-5, rho_total=0.3731,
                  epsilon_tight=4.0, stages=[{"stage": "all", "mechanism": "zCDP", "rho": 0.3731}]).save(run)
    with Ledger() as ledger:
        ledger.charge("b2" * 32, "run-9", "all", 0.3731, 1e-5, "the run")
    return run


def _set_cap(site: Site, epsilon: str, delta: str | None = "1e-5", name: str = "notes.csv") -> list[str]:
    _ledger_with_rows(site)
    return ["ledger", name, f"--set-cap={epsilon}", *([] if delta is None else [f"--delta={delta}"]), "--new-dataset"]


def _fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


def _mkdir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def _nonempty(path: Path) -> Path:
    _mkdir(path)
    (path / "old.txt").write_text("x")
    return path


def _loop(path: Path) -> Path:
    path.symlink_to(path.name)
    return path


def _truncate_half(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def _edit_witness(ledger: Path) -> None:
    witness = ledger.with_suffix(".witness")
    witness.write_text(re.sub(r'"rows": \d+', '"rows": 1', witness.read_text()))


def _raw_sql_drop(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("DROP TRIGGER charges_no_delete")
    conn.commit()
    conn.close()


def _capped(site: Site) -> list[str]:
    from core.corpus import dataset_fingerprint, load_corpus
    from core.ledger import Ledger

    fp = dataset_fingerprint(load_corpus(site.corpus, "note", "id"))
    with Ledger() as ledger:
        ledger.set_cap(fp, 0.5, 1e-3)
    return site.run()


def _surface_copy_capped(site: Site) -> list[str]:
    """The site's notes booked and capped, then run again as a copy that changes only the surface: Cyrillic
    look-alike letters, each note exported as HTML (``<p>``, ``&nbsp;`` between words), under a new file name."""
    import csv

    from core.ledger import Ledger
    from core.ledger.booking import book_dataset, load_spec_corpus, record_booking
    from core.specs.runspec import RunSpec

    spec = RunSpec.load(site.spec())
    with Ledger() as ledger:
        booking = book_dataset(ledger, spec.data, load_spec_corpus(spec))
        record_booking(ledger, booking)
        ledger.set_cap(booking.key, 0.5, 1e-3)
    look_alike = str.maketrans("aeopcxy", "аеорсху")
    with open(site.corpus, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    copy = site.root / "notes_export.csv"
    with open(copy, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows({**row, "note": "<p>" + "&nbsp;".join(row["note"].translate(look_alike).split()) + "</p>"}
                         for row in rows)
    return site.run_on(copy)


def _with_bom(spec: Path) -> Path:
    spec.write_bytes(b"\xef\xbb\xbf" + spec.read_bytes())
    return spec


def _delta_capped(site: Site) -> list[str]:
    """The audit's δ reproduction: a cap of ε = 12 at δ = 1e-9, then a run at ε = 1, δ = 0.5 whose phrase
    stage spends half of δ outright (core.ledger.total: Σδ_p may never reach the cap's δ). The audit's 0.9 is
    now refused by the plan itself: with structure discovery's δ_s the stages would spend more than δ."""
    from core.corpus import dataset_fingerprint, load_corpus
    from core.ledger import Ledger

    fp = dataset_fingerprint(load_corpus(site.corpus, "note", "id"))
    with Ledger() as ledger:
        ledger.set_cap(fp, 12.0, 1e-9)
    return site.run(privacy={"epsilon": "1.0", "delta": "0.5", "spend_anyway": "true"},
                    dp_synrag={"phrases_per_unit": "1", "phrases_delta_fraction": "0.5"})


def _rolled_back(site: Site) -> list[str]:
    """Restore ledger.db and ledger.witness from a copy taken before the last charge (the audit's rollback)."""
    import shutil

    from core.ledger import Ledger

    path = _ledger_with_rows(site, 2)
    backup = _mkdir(site.root / "backup")
    for name in ("ledger.db", "ledger.witness"):
        shutil.copy2(site.home / name, backup / name)
    with Ledger() as ledger:
        ledger.charge("a1" * 32, "late-run", "histogram", 0.1, 1e-3, "the run to forget")
    for name in ("ledger.db", "ledger.witness"):
        shutil.copy2(backup / name, path.parent / name)
    return site.run()


def _edited_record(site: Site) -> list[str]:
    """A finished run's privacy record with a smaller epsilon written into it after the run."""
    from core.certificate.privacy_record import PrivacyRecord
    from core.ledger import Ledger

    run = _mkdir(site.root / "run")
    (run / "synthetic.jsonl").write_text('{"id": 1, "text": "A synthetic note."}\n', encoding="utf-8")
    PrivacyRecord(run_id="run-9", method="dp_synrag", dataset_fingerprint="b2" * 32, delta=1e-5, rho_total=0.3731,
                  epsilon_tight=4.0, stages=[{"stage": "all", "mechanism": "zCDP", "rho": 0.3731}]).save(run)
    with Ledger() as ledger:
        ledger.charge("b2" * 32, "run-9", "all", 0.3731, 1e-5, "the run")
    record = run / "privacy_record.json"
    record.write_text(record.read_text().replace('"epsilon_tight": 4.0', '"epsilon_tight": 0.5'))
    return ["export", str(run), str(site.out)]


# --- running them --------------------------------------------------------------------------------


@dataclass
class Outcome:
    code: int
    message: str
    output: str
    command: str = ""  # the sub-command and its telling options, for the table


SHOWN_OPTIONS = ("--check", "--rewitness", "--set-cap", "--delta", "--resume", "--output", "--overwrite")


def _command(argv: list[str]) -> str:
    return " ".join(["privet", argv[0], *(a.split("=")[0] for a in argv[1:] if a.split("=")[0] in SHOWN_OPTIONS)])


def _snapshot(home: Path) -> dict[str, str]:
    """Hash of every file in the data folder except the converted-model cache, and every folder ("folder")."""
    out = {}
    for path in sorted(home.rglob("*")):
        if "cache" in path.relative_to(home).parts:
            continue
        if path.is_file():
            out[path.relative_to(home).as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
        elif path.is_dir():
            out[path.relative_to(home).as_posix()] = "folder"
    return out


def _run_case(case: Case, root: Path, monkeypatch) -> tuple[Outcome, dict, dict, Site]:
    home = root / "home"
    monkeypatch.setenv("PRIVET_HOME", str(home))
    site = Site(root=root, home=home, corpus=root / "notes.csv", out=root / "release")
    write_notes(site.corpus.parent, file_name=site.corpus.name, note="{name} came in with fever and was treated with rest.")
    from core.install.installation import installation_secret

    installation_secret()  # installation state, not a run's leftover: created before the snapshot
    argv = case.make(site)
    before = _snapshot(_mkdir(home))
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = privet(argv)
    after = _snapshot(home)
    text = (stderr.getvalue() + stdout.getvalue()).replace(str(root), "<tmp>")
    text = re.sub(r"\d{4}-\d\d-\d\dT[0-9:.]+\+00:00", "<time>", text)
    return Outcome(code, _headline(text, case), text, _command(argv)), before, after, site


def _headline(text: str, case: Case) -> str:
    """The message line(s) a user reads first: the refusal, or the warning asked for."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if case.expect in ("warned", "accepted"):
        lines = [line for line in lines if case.shows in line] or lines
        return lines[0] if lines else ""
    lines = [line for line in lines if not line.startswith("Warning:")] or lines  # the refusal, not a warning
    detail = [line for line in lines[1:5] if line.startswith("- ")]
    return " ".join(lines[:1] + detail[:1])


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory, request):
    """Run every case once (module scope: the table test and the property tests share them)."""
    results = {}
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setenv("PRIVET_KEYRING", "memory")
        for i, case in enumerate(CASES):
            root = tmp_path_factory.mktemp(f"case{i:02d}")
            results[case.name] = _run_case(case, root, monkeypatch)
    return results


def test_there_are_at_least_110_bad_inputs():
    assert len(CASES) >= 110
    assert len([c for c in CASES if c.expect == "refused"]) >= 100
    assert len({c.name for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_each_bad_input_is_refused_cleanly_and_leaves_nothing(case, outcomes):
    outcome, before, after, site = outcomes[case.name]
    assert outcome.code != INTERNAL_ERROR and "Traceback" not in outcome.output, outcome.output
    assert case.shows in outcome.output, outcome.output
    assert CANARY not in outcome.output  # no private text in any message
    if case.expect in ("warned", "accepted"):
        assert outcome.code == 0
    else:
        assert outcome.code != 0
    # no release, no run folder, and the data folder (ledger included) exactly as before: no charge
    assert not site.out.exists() or not any(site.out.iterdir())
    runs = {name for name in after if name.startswith("runs/") and name.count("/") == 1}
    assert runs <= set(before)  # no new run folder (a case may start from an installation that has some)
    assert after == before


def _table(outcomes) -> str:
    rows = ["| # | bad input | command | exit | message (first line) |", "|---|---|---|---|---|"]
    for i, case in enumerate(CASES, start=1):
        outcome = outcomes[case.name][0]
        command = outcome.command
        message = outcome.message.replace("|", "\\|").replace("privet: ", "")
        if len(message) > 260:
            message = message[:257] + "…"
        rows.append(f"| {i} | {case.name.replace('|', '/')} | {command} | {outcome.code} | {message} |")
    return "\n".join(rows)


def test_docs_reliability_table_lists_every_case(outcomes):
    table = _table(outcomes)
    text = DOC.read_text(encoding="utf-8") if DOC.exists() else ""
    if os.environ.get("PRIVET_UPDATE_DOCS"):
        head, _, rest = text.partition(BEGIN)
        _, _, tail = rest.partition(END)
        DOC.write_text(f"{head}{BEGIN}\n{table}\n{END}{tail}", encoding="utf-8")
        text = DOC.read_text(encoding="utf-8")
    assert BEGIN in text, "regenerate: PRIVET_UPDATE_DOCS=1 python -m pytest -q tests/pipeline/test_reliability_matrix.py"
    for i, case in enumerate(CASES, start=1):
        code = outcomes[case.name][0].code
        assert re.search(rf"^\| {i} \| {re.escape(case.name.replace('|', '/'))} \| [^|]+ \| {code} \|", text, re.M), (
            f"docs/reliability.md is out of date for case {case.name!r}; regenerate it with "
            "PRIVET_UPDATE_DOCS=1 python -m pytest -q tests/pipeline/test_reliability_matrix.py"
        )
