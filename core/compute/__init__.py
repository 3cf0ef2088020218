"""Where private prediction runs: this process (the default) or a pool of Ray workers.

* ``core.compute.factory`` — picks the engine a run spec's ``[compute]`` section asks for.
* ``core.compute.ray_engine`` — private prediction sharded by group over Ray actors (one per GPU,
  or N CPU workers). Ray is imported only there, and only when a spec asks for it.
"""
