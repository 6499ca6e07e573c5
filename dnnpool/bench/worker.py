"""A benchmark engine's worker process (isolation.EngineProcess starts it):
``python -m dnnpool.bench.worker ENGINE RECEIVE_FD SEND_FD``."""
import sys
from multiprocessing.connection import Connection

import numpy as np

from . import peers


def _serve(name, connection):
    """Worker loop: prepare a variant, time samples, return its output, until told to exit."""
    prepared = src = None
    while True:
        operation, argument = connection.recv()
        try:
            if operation == "exit":
                connection.send(("ok", None))
                return
            if operation == "prepare":
                src = argument.make_source()  # kept alive: engines may run on its buffer
                prepared = peers.engine_module(name).prepare(argument, src)
                value = prepared.implementation
            elif operation == "sample":
                value = prepared.sample(*argument)
            elif operation == "result":
                value = np.array(prepared.result(), copy=True)
            elif operation == "close":
                if prepared is not None:
                    prepared.close()
                prepared, src, value = None, None, None
            else:
                raise ValueError(f"unknown operation {operation!r}")
            reply = ("ok", value)
        except peers.NotSupported as reason:
            reply = ("unsupported", str(reason))
        except Exception as error:  # reported to the parent, which marks the engine n/a
            reply = ("error", f"{type(error).__name__}: {error}")
        connection.send(reply)


class _Duplex:
    """A worker's two pipe ends as one connection."""

    def __init__(self, receive, send):
        self.recv, self.send = receive.recv, send.send


def main(argv):
    name, receive_fd, send_fd = argv[0], int(argv[1]), int(argv[2])
    _serve(name, _Duplex(Connection(receive_fd, writable=False), Connection(send_fd, readable=False)))


if __name__ == "__main__":
    main(sys.argv[1:])
