"""The credit search's sensitivity (lab/extoll/credit_search.md): per credit slots, search cost
and receive buffer of a store written from lab/extoll/specs/*256.yaml, the overhead against
the reference (mean over replicates, standard error), the sends of the whole run that waited
for credits and the flow-control CPU time per rank.

    python lab/scripts/credit_search_table.py STORE.zarr
"""
import sys

import xarray as xr

from extoll_vec.analysis.extoll import common as es

ds = xr.open_zarr(sys.argv[1])
rows = []
for p in es.overheads(ds):
    c = p.cfg
    rows.append((c.protocol.credit_slots, c.protocol.credit_search_ns,
                 c.protocol.mailbox_slots // c.n_ranks, p.overhead_pct, p.overhead_se_pct, p.reps,
                 p.mean(lambda i: es.run_delayed_pct(ds, i)),
                 p.mean(lambda i: float(ds["flow_control_cpu_us"].isel(point=i).sum()) / c.n_ranks)))
for r in sorted(rows):
    print("c=%d search=%5.1f ns slots=%3d  overhead %7.2f +- %5.2f %% (n=%d)  "
          "delayed %5.1f %%  flow-control CPU %9.1f us/rank" % r)
