"""The hooks of EXTOLL's static (section 5) and dynamic (section 6) credit-based flow control,
registered in extoll_vec/protocols/extoll/__init__.py with the prefixes static_ and dynamic_: thin
adapters from the hook signatures (kernels/flowctl.py) to static.py and dynamic.py, each looking
the pair up once for everything below it.
Costs are credit operations x par[P_CREDIT] (host.fc_cycles)."""
from extoll_vec.dtypes import P_CREDIT
from extoll_vec.kernels.extoll import dynamic as fc_dynamic
from extoll_vec.kernels.extoll import static as fc_static
from extoll_vec.kernels.fc_fields import F_CURRENT, F_OWNED
from extoll_vec.kernels.jit import inner
from extoll_vec.kernels.pairs import pair
from extoll_vec.protocols.extoll.params import P_QUOTA


# ---- static ----------------------------------------------------------------------------------
@inner
def static_fc_init(S, T, par, b):
    fc_static.init(S, par, b)


@inner
def static_may_send(S, par, b, r, dst):
    return S.fc[b, pair(S, b, r, dst), F_OWNED] > 0


@inner
def static_on_sent(S, par, b, r, dst, h, delayed):
    return fc_static.on_sent(S, b, pair(S, b, r, dst)) * par[b, P_CREDIT]


@inner
def static_on_arrival(S, par, b, r, src, kind, ctype):
    fc_static.on_arrival(S, par, b, r, src, pair(S, b, r, src), kind, ctype, par[b, P_QUOTA])


@inner
def static_on_retrieved(S, par, b, r, src):
    return fc_static.on_retrieved(S, par, b, r, src, pair(S, b, r, src)) * par[b, P_CREDIT]


@inner
def static_ctrl_payload(S, par, b, r, dst, ctype):
    return fc_static.credit_payload(S, b, pair(S, b, r, dst))


@inner
def static_piggyback(S, par, b, r, dst):
    return fc_static.piggyback(S, b, pair(S, b, r, dst))


@inner
def static_on_control(S, par, b, r, src, ctype, payload):
    return fc_static.on_control(S, b, pair(S, b, r, src), ctype, payload) * par[b, P_CREDIT]


@inner
def static_snapshot_field(S, par, b):
    return F_OWNED


# ---- dynamic ---------------------------------------------------------------------------------
@inner
def dynamic_fc_init(S, T, par, b):
    fc_dynamic.init(S, par, b)


@inner
def dynamic_may_send(S, par, b, r, dst):
    return S.fc[b, pair(S, b, r, dst), F_OWNED] > 0


@inner
def dynamic_on_sent(S, par, b, r, dst, h, delayed):
    return fc_static.on_sent(S, b, pair(S, b, r, dst)) * par[b, P_CREDIT]


@inner
def dynamic_on_arrival(S, par, b, r, src, kind, ctype):
    q = pair(S, b, r, src)
    fc_static.on_arrival(S, par, b, r, src, q, kind, ctype, S.fc[b, q, F_CURRENT])


@inner
def dynamic_on_retrieved(S, par, b, r, src):
    return fc_dynamic.on_retrieved(S, par, b, r, src, pair(S, b, r, src)) * par[b, P_CREDIT]


@inner
def dynamic_ctrl_payload(S, par, b, r, dst, ctype):
    return fc_dynamic.payload(S, par, b, pair(S, b, r, dst), ctype)


@inner
def dynamic_piggyback(S, par, b, r, dst):
    return fc_dynamic.piggyback(S, par, b, r, dst, pair(S, b, r, dst))


@inner
def dynamic_on_control(S, par, b, r, src, ctype, payload):
    return fc_dynamic.on_control(S, par, b, r, src, pair(S, b, r, src), ctype,
                                 payload) * par[b, P_CREDIT]


@inner
def dynamic_snapshot_field(S, par, b):
    return F_OWNED
