# The stand-in's nixl._bindings: the statuses rdmabench-nixl compares with
# (NIXL's nixl_status_t: NIXL_IN_PROG = 1, NIXL_SUCCESS = 0).


class nixl_status_t:
    """As pybind11's enum_: an object with .value and .name, equal only to
    the same enum's members (never to an int), a new object per return."""

    def __init__(self, value, name):
        self.value, self.name = value, name

    def __eq__(self, other):
        return type(other) is nixl_status_t and other.value == self.value

    def __hash__(self):
        return self.value

    def __repr__(self):
        return f"<nixl_status_t.{self.name}: {self.value}>"


class nixlBackendError(Exception):
    """As NIXL's: what a binding raises for NIXL_ERR_BACKEND."""


NIXL_IN_PROG = nixl_status_t(1, "NIXL_IN_PROG")
NIXL_SUCCESS = nixl_status_t(0, "NIXL_SUCCESS")

# postXferReq calls, printed at exit where there were any (tests read it).
posts = 0


def _say_posts():
    if posts:
        import sys
        print(f"# stand-in: {posts} postXferReq calls", file=sys.stderr, flush=True)


import atexit  # noqa: E402

atexit.register(_say_posts)
