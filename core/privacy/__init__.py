"""Privacy core: ρ-zCDP accounting, (ε, δ) conversion, budget planning, mechanisms and entropy.

Import from the submodules (kept separate so that accounting does not pull in torch):

* ``core.privacy.conversion`` — ``rho_to_eps``, ``eps_to_rho``
* ``core.privacy.accountant`` — ``Accountant``, ``PrivacyEvent``
* ``core.privacy.planner`` — ``plan_dp_synrag``, ``DPSynRAGPlan``, ``plan_dp_synth``, ``plan_rpsg``,
  ``plan_aug_pe``, ``public_delta``, ``delta_warnings``, ``prediction_groups`` (the groups a resumed
  private prediction charges)
* ``core.privacy.budget`` — figures shown to people: ``resolve_delta``, ``epsilon_of`` (what the ledger holds:
  ``core.ledger.view``)
* ``core.privacy.mechanisms`` — ``gaussian_noise``, ``threshold_exponential_mechanism``, ``TokenSampler``,
  ``clip_logits``, ``SAMPLER_DESCRIPTIONS``
* ``core.privacy.randomness`` — ``secure_rng``, ``secure_torch_generator`` (OS entropy, never recorded)
"""
