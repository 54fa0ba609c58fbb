"""
Monte Carlo campaigns: a scenario run many times with dispersed inputs, on a machine or a cluster.

A campaign file (:mod:`.spec`) names a scenario (a demo, or what
:func:`~spart_ros.sim.closed_loop.simulate` takes: :mod:`.scenario`), the number of runs and a
seed, the dispersions (:mod:`.dispersions`, :mod:`.parameters`: masses, inertias kept valid,
centres of mass, thrusters and wheels, orbit, initial state, controller settings), sensor noise
(:mod:`.sensing`), the metrics and success predicates (:mod:`.metrics`) and which series to keep.
:func:`run_campaign` (:mod:`.engine`) runs it serially or on Dask (:mod:`distributed`), records
every run as it finishes (:mod:`.results`: resumable), and writes the table, the summary
(:mod:`.summary`: success rate with its confidence interval) and the plots (:mod:`.plots`)::

    from spart_ros.campaign import load_campaign, run_campaign

    result = run_campaign(load_campaign('campaign.yaml'), workers=1)
    print(result.text())

Command line: ``python -m spart_ros.campaign campaign.yaml`` (:mod:`.__main__`).  Each run's
draws depend only on (seed, run index): any number of workers gives the same table.  Nothing
here is imported by ``import spart_ros``; Dask only when a cluster is used.
"""

from .engine import CampaignResult, rerun, run_campaign
from .run import run_one, RunResult
from .spec import Campaign, load_campaign

__all__ = [
    'load_campaign',
    'run_campaign',
    'rerun',
    'run_one',
    'Campaign',
    'CampaignResult',
    'RunResult',
]
