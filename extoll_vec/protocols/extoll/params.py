"""The EXTOLL protocols' own parameter slots (dtypes.protocol_slots): P_<name>, written by
their records' `params` (protocols/extoll/__init__.py), read by their kernels (kernels/extoll/)
and their audit."""
from ... import dtypes as D

PARAMS = {
    "WINDOW": "window: credits per pair",
    "WINDOW_THRESHOLD": "window: retrieved packets per credit packet",
    "CREDIT_SLOTS": "static, dynamic: credit slots per process (c)",
    "QUOTA": "static: credit quota per sender; dynamic: initial intended credit quota",
    "RETURN_THRESHOLD": "static: credit-return threshold (Eq. 1)",
    "DATA_REGION": "static, dynamic: data region of each mailbox, slots",
    "DYN_REGION": "dynamic: dynamic region (the available slots counter starts here)",
}
globals().update(D.protocol_slots(PARAMS))
