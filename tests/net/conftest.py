"""The edge's tests run against a real server in this process: the end-to-end fixtures of
``tests/server/conftest.py`` (``start_server``, ``server``), shared rather than copied."""

from tests.server.conftest import server as server
from tests.server.conftest import start_server as start_server
