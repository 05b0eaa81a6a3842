# The stand-in's nixl._bindings: the statuses rdmabench-nixl compares with
# (NIXL's nixl_status_t: NIXL_IN_PROG = 1, NIXL_SUCCESS = 0).
NIXL_IN_PROG = 1
NIXL_SUCCESS = 0

# postXferReq calls, printed at exit where there were any (tests read it).
posts = 0


def _say_posts():
    if posts:
        import sys
        print(f"# stand-in: {posts} postXferReq calls", file=sys.stderr, flush=True)


import atexit  # noqa: E402

atexit.register(_say_posts)
