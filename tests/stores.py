"""Store comparison for the tests that run one sweep two ways (worker counts, clusters, object
storage, killed workers): the stores must hold the same results bit for bit."""
from extoll_vec.sweep.store import open_store


def assert_same_store(a, b):
    """Every variable and coordinate of stores a and b (paths or URLs) equal bit for bit (NaN
    patterns included), same attributes."""
    da, db = open_store(a).load(), open_store(b).load()
    assert set(da.variables) == set(db.variables)
    for name in da.variables:
        va, vb = da[name].values, db[name].values
        assert va.dtype == vb.dtype and va.shape == vb.shape, name
        if va.dtype.kind in "fiub":
            assert va.tobytes() == vb.tobytes(), name
        else:
            assert [str(x) for x in va.ravel()] == [str(x) for x in vb.ravel()], name
    assert da.attrs == db.attrs
