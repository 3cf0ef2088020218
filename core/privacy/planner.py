"""Turn a target (ε, δ) into the noise parameters of a run (SPEC §1–§3): one plan module per method.

* ``plan_dp_synrag`` — DP-SynRAG's budget split over its stages (phrases, histogram, co-keywords,
  retrieval, private prediction);
* ``plan_prediction`` — private prediction's cost (plan and charge alike) and DP-Synth's plan;
* ``plan_rpsg`` — RPSG's selection noise, honestly accounted;
* ``plan_aug_pe`` — Aug-PE's vote histograms;
* ``plan_base`` — the ledger's stage names and the check of a privacy target.

Every plan is a list of DP releases (``core.privacy.release``). This module names them all in one
place and holds δ: its default from public numbers only, how it was chosen, and its warnings.
"""

from __future__ import annotations

from core.privacy.plan_base import _reject
from core.privacy.plan_aug_pe import (  # re-exported: the plans' one address
    AugPEPlan as AugPEPlan,
    aug_pe_stage as aug_pe_stage,
    plan_aug_pe as plan_aug_pe,
)
from core.privacy.plan_base import (  # re-exported: the plans' one address
    STAGE_AUG_PE as STAGE_AUG_PE,
    STAGE_CLUSTER_KEYWORDS as STAGE_CLUSTER_KEYWORDS,
    STAGE_HISTOGRAM as STAGE_HISTOGRAM,
    STAGE_MEAN as STAGE_MEAN,
    STAGE_PHRASES as STAGE_PHRASES,
    STAGE_RPSG_SELECTION as STAGE_RPSG_SELECTION,
    STAGE_SIZE as STAGE_SIZE,
    STAGE_THRESHOLD as STAGE_THRESHOLD,
    STAGE_TOKENS as STAGE_TOKENS,
)
from core.privacy.plan_dp_synrag import (  # re-exported: the plans' one address
    DEFAULT_CLUSTER_KEYWORDS_FRACTION as DEFAULT_CLUSTER_KEYWORDS_FRACTION,
    DEFAULT_PHRASES_DELTA_FRACTION as DEFAULT_PHRASES_DELTA_FRACTION,
    DEFAULT_PHRASES_FRACTION as DEFAULT_PHRASES_FRACTION,
    DPSynRAGPlan as DPSynRAGPlan,
    REFERENCE_DELTA as REFERENCE_DELTA,
    REFERENCE_EPSILON as REFERENCE_EPSILON,
    REFERENCE_EPS_THETA as REFERENCE_EPS_THETA,
    REFERENCE_L as REFERENCE_L,
    REFERENCE_RHO_HIST as REFERENCE_RHO_HIST,
    REFERENCE_RHO_MU as REFERENCE_RHO_MU,
    default_fractions as default_fractions,
    plan_dp_synrag as plan_dp_synrag,
)
from core.privacy.plan_prediction import (  # re-exported: the plans' one address
    DPSynthPlan as DPSynthPlan,
    plan_dp_synth as plan_dp_synth,
    prediction_charge as prediction_charge,
    prediction_groups as prediction_groups,
)
from core.privacy.plan_rpsg import (  # re-exported: the plans' one address
    RPSGPlan as RPSGPlan,
    RPSG_SCOPE as RPSG_SCOPE,
    plan_rpsg as plan_rpsg,
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
