# rdmabench's stand-in for NIXL's Python package, for CI machines without
# NIXL: the subset of nixl._api that rdmabench-nixl (and vLLM's
# NixlConnector) calls, moving real bytes between agents over TCP. Never a
# measurement of NIXL: its version says "+standin".
from ._api import nixl_agent, nixl_agent_config  # noqa: F401

__version__ = "0.9.0+standin"
