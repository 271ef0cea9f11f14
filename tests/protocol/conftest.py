"""The tests of the published contract that need a real server (the welcome's versions, the
JavaScript bot) use the end-to-end fixtures of ``tests/end_to_end/conftest.py``, shared rather
than copied."""

from tests.end_to_end.conftest import server as server
from tests.end_to_end.conftest import start_server as start_server
