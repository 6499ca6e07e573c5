"""Example consumer of dnnpool's Cython (and C) API; see README.md next to setup.py."""
from pool_consumer._batch import (abi_info, describe, pool_batch, pool_each, pool_with,
                                  round_trip, try_describe)
from pool_consumer._cpool import describe_1d, execute
from pool_consumer.check import check

__all__ = ["abi_info", "check", "describe", "describe_1d", "execute", "pool_batch", "pool_each",
           "pool_with", "round_trip", "try_describe"]
