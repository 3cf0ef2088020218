"""What every method's plan shares: the ledger's stage names and the check of a privacy target (a method's
section is checked by ``core.specs.rules.check_section``, from its rules).
"""

from __future__ import annotations

import math

from core.common.errors import PrivetError
from core.privacy.conversion import METHODS

STAGE_SIZE = "size"

STAGE_PHRASES = "phrases"

STAGE_FORM_OPENERS = "form_openers"

STAGE_FORM_SKELETONS = "form_skeletons"

STAGE_FORM_VALUES = "form_values"

STAGE_HISTOGRAM = "histogram"

STAGE_CLUSTER_KEYWORDS = "cluster_keywords"

STAGE_MEAN = "retrieval_mean"

STAGE_THRESHOLD = "retrieval_threshold"

STAGE_TOKENS = "private_prediction"

STAGE_RPSG_SELECTION = "rpsg_selection"

STAGE_AUG_PE = "aug_pe_histogram"



def _reject(what: str, fix: str) -> PrivetError:
    return PrivetError(what, fix)



def _check_privacy_target(epsilon: float, delta: float, conversion: str) -> None:
    if conversion not in METHODS:
        raise _reject(f"Unknown zCDP conversion {conversion!r}.", f"Use one of {', '.join(METHODS)}.")
    if not (epsilon > 0.0) or math.isinf(epsilon):
        raise _reject(f"The privacy budget ε must be a finite number > 0 (got {epsilon}).", "Choose ε, e.g. 1, 4 or 10.")
    if not (0.0 < delta < 1.0):
        raise _reject(
            f"δ must lie strictly between 0 and 1 (got {delta}).",
            "Leave δ at 0 for the public default (1e-6, or 1/(10·N) for a stated upper bound N on the units).",
        )
