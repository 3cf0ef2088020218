"""δ for a run: its default from public numbers only, how it was chosen, and its warnings (SPEC §1).

Each method's plan (its (ε, δ) turned into the noise of its stages, as a list of DP releases,
``core.privacy.release``) lives in the method's own package: ``core.methods.dp_synrag.release.plan``,
``core.methods.dp_synth.plan``, ``core.methods.rpsg.plan``, ``core.methods.aug_pe.plan``, and
``core.methods.private_prediction.plan`` for the groups a resumed private prediction charges. The ledger's
stage names and the check of a privacy target are ``core.privacy.plan_base``, re-exported here.
"""

from __future__ import annotations

from core.privacy.plan_base import _reject
from core.privacy.plan_base import (  # re-exported: the stage names' one address
    STAGE_AUG_PE as STAGE_AUG_PE,
    STAGE_CLUSTER_KEYWORDS as STAGE_CLUSTER_KEYWORDS,
    STAGE_FORM_OPENERS as STAGE_FORM_OPENERS,
    STAGE_FORM_SKELETONS as STAGE_FORM_SKELETONS,
    STAGE_FORM_VALUES as STAGE_FORM_VALUES,
    STAGE_HISTOGRAM as STAGE_HISTOGRAM,
    STAGE_MEAN as STAGE_MEAN,
    STAGE_PHRASES as STAGE_PHRASES,
    STAGE_RPSG_SELECTION as STAGE_RPSG_SELECTION,
    STAGE_SIZE as STAGE_SIZE,
    STAGE_THRESHOLD as STAGE_THRESHOLD,
    STAGE_TOKENS as STAGE_TOKENS,
)


# --- δ -------------------------------------------------------------------------------------------

DEFAULT_DELTA = 1e-6



def public_delta(max_units: int = 0) -> float:
    """The default δ, from public numbers only (SPEC §1): 1/(10·N) for a stated public bound N, else 1e-6.

    ``max_units`` is the custodian's public upper bound N on the number of units (0 = not stated). δ is
    never computed from the loaded data: a δ that follows n would reveal n's order of magnitude.
    """
    if int(max_units) != max_units or max_units < 0:
        raise _reject(
            f"The stated upper bound on the number of units must be a whole number ≥ 0 (got {max_units}).",
            "Set [privacy] max_units to a public upper bound on the number of units, or to 0.",
        )
    return 1.0 / (10.0 * max_units) if max_units else DEFAULT_DELTA



def delta_rule(delta: float, max_units: int = 0) -> str:
    """How the run's δ was chosen, in plain words for the custodian (δ = 0 in the spec: the default)."""
    if delta > 0:
        return f"δ = {delta:g}, as set in the run spec."
    if max_units:
        return (f"δ = {public_delta(max_units):g} = 1/(10·N), N = {max_units}: the stated public upper bound on the "
                "number of units. It is never computed from the data.")
    return (f"δ = {DEFAULT_DELTA:g}, the fixed default (no upper bound on the number of units was stated). "
            "It is never computed from the data.")



def delta_warnings(delta: float, max_units: int = 0, n_units: int | None = None) -> list[str]:
    """Warnings for the custodian's screen: δ ≥ 1/N, and (on screen only) a loaded n above the stated N.

    ``n_units`` is the private count of the loaded data: warnings that use it are for the custodian's
    screen and never enter a record or a certificate.
    """
    warnings = []
    if max_units and delta >= 1.0 / max_units:
        warnings.append(
            f"δ = {delta:g} is at least 1/N = 1/{max_units} (N = the stated upper bound on the number of units): "
            f"with this δ a mechanism may reveal one unit outright and still meet the guarantee. "
            f"Use δ ≤ 1/(10·N) = {public_delta(max_units):g} (leave δ at 0 for that default)."
        )
    if n_units is not None and max_units and n_units > max_units:
        warnings.append(
            f"The loaded data has {n_units} units, more than the stated upper bound N = {max_units} "
            "(shown here only; never exported). Raise [privacy] max_units to a true public bound."
        )
    elif n_units and not max_units and delta >= 1.0 / n_units:
        warnings.append(
            f"δ = {delta:g} is at least 1/n for the {n_units} units loaded (shown here only; never exported): "
            "a mechanism may reveal one unit outright and still meet the guarantee. Choose a smaller δ."
        )
    return warnings
