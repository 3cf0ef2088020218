"""Privacy core: ρ-zCDP accounting, (ε, δ) conversion, budget planning, mechanisms and entropy.

Import from the submodules (kept separate so that accounting does not pull in torch):

* ``core.privacy.conversion`` — ``rho_to_eps``, ``eps_to_rho``
* ``core.privacy.accountant`` — ``Accountant``, ``PrivacyEvent``
* ``core.privacy.planner`` — ``public_delta``, ``delta_warnings``, ``delta_rule`` and the stage names (each
  method's plan is in its own package: ``core.methods.<method>.plan``)
* ``core.privacy.budget`` — figures shown to people: ``resolve_delta``, ``epsilon_of`` (what the ledger holds:
  ``core.ledger.view``)
* ``core.privacy.mechanisms`` — ``gaussian_noise``, ``threshold_exponential_mechanism``, ``TokenSampler``,
  ``clip_logits``, ``SAMPLER_DESCRIPTIONS``
* ``core.privacy.randomness`` — ``secure_rng``, ``secure_torch_generator`` (OS entropy, never recorded)
"""
