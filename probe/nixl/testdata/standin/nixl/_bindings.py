# The stand-in's nixl._bindings: the statuses rdmabench-nixl compares with
# (NIXL's nixl_status_t: NIXL_IN_PROG = 1, NIXL_SUCCESS = 0).
NIXL_IN_PROG = 1
NIXL_SUCCESS = 0
