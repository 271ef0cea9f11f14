"""The edge's tests run against a real server in this process: the end-to-end fixtures of
``tests/end_to_end/conftest.py`` (``start_server``, ``server``), shared rather than copied."""

from tests.end_to_end.conftest import server as server
from tests.end_to_end.conftest import start_server as start_server
