"""The multi-process fixtures of ``tests/nodes/conftest.py`` (``backend``, ``service``, ``embedded``),
shared rather than copied: real server processes on one Redis or a Redis Cluster."""

from tests.nodes.conftest import backend as backend
from tests.nodes.conftest import embedded as embedded
from tests.nodes.conftest import service as service
