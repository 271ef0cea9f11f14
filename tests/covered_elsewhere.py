"""Product modules without a mirrored test module, each with the test module that covers it.

A module's mirror is ``tests/<package path>/test_<module>.py`` (``server/`` left out of the
path: ``server/live/runner.py`` -> ``tests/live/test_runner.py``). A module without one is
listed here with where its behaviour is tested instead: usually end to end, through a real
server, because what it does shows only there (the wiring, a screen, a wire message).
``tests/test_structure.py`` keeps this table true: every module mirrored or listed, every
listed test present, nothing listed that has a mirror or no longer exists.
"""

from __future__ import annotations

from typing import Final

COVERED_ELSEWHERE: Final[dict[str, str]] = {
    # The client: the screens are driven by Textual's Pilot, the commands in a real terminal.
    "client/__main__.py": "tests/client/test_commands.py",
    "client/lib/bot_search.py": "tests/client/lib/test_bot.py",
    "client/lib/outcomes.py": "tests/client/lib/test_connection.py",
    "client/render/cards.py": "tests/client/render/test_board.py",
    "client/render/commitments.py": "tests/client/render/test_challenges.py",
    "client/render/cursor.py": "tests/client/render/test_board.py",
    "client/render/fairness.py": "tests/client/render/test_standings.py",
    "client/render/keys.py": "tests/client/tui/test_keys.py",
    "client/render/replay.py": "tests/client/tui/test_tui.py",
    "client/tui/app.py": "tests/client/tui/test_tui.py",
    "client/tui/base.py": "tests/client/tui/test_tui.py",
    "client/tui/botrace.py": "tests/client/tui/test_newcomer.py",
    "client/tui/commitments.py": "tests/client/tui/test_challenges.py",
    "client/tui/daily.py": "tests/client/tui/test_tui.py",
    "client/tui/game.py": "tests/client/tui/test_fit.py",
    "client/tui/help.py": "tests/client/tui/test_newcomer.py",
    "client/tui/home.py": "tests/client/tui/test_fit.py",
    "client/tui/lobby.py": "tests/client/tui/test_tui.py",
    "client/tui/navigation.py": "tests/client/tui/test_tui.py",
    "client/tui/quick.py": "tests/client/tui/test_tui.py",
    "client/tui/results.py": "tests/client/tui/test_fit.py",
    "client/tui/spectate.py": "tests/client/tui/test_fit.py",
    "client/tui/tournaments.py": "tests/client/tui/test_brackets.py",
    "client/tui/widgets.py": "tests/client/tui/test_fit.py",
    # The wire contract: every message is in the schema, sampled and round-tripped.
    "protocol/events.py": "tests/protocol/test_schema.py",
    "protocol/messages.py": "tests/protocol/test_schema.py",
    "protocol/replies.py": "tests/protocol/test_schema.py",
    "protocol/requests.py": "tests/protocol/test_schema.py",
    "protocol/values.py": "tests/protocol/test_schema.py",
    "protocol/version.py": "tests/protocol/test_versions.py",
    # The wiring and the command lines: real server processes.
    "server/__main__.py": "tests/end_to_end/test_startup.py",
    "server/admin.py": "tests/end_to_end/test_moderation.py",
    "server/app.py": "tests/end_to_end/test_startup.py",
    "server/clock.py": "tests/end_to_end/test_leaderboards_api.py",
    "server/config.py": "tests/end_to_end/test_startup.py",
    "server/local_nodes.py": "tests/nodes/test_service.py",
    # The service: several nodes on one Redis and on a Cluster.
    "server/cluster/cluster.py": "tests/cluster/test_service_wide.py",
    "server/cluster/inbox.py": "tests/net/test_forwarding.py",
    "server/cluster/lobby.py": "tests/cluster/test_service_wide.py",
    "server/cluster/node_mail.py": "tests/net/test_forwarding.py",
    "server/cluster/proxies.py": "tests/cluster/test_membership.py",
    "server/competition/move_timing.py": "tests/test_move_timing.py",
    "server/connections/origin.py": "tests/net/test_listener.py",
    # Features: through a real server and its websockets.
    "server/features/context.py": "tests/net/test_dispatch.py",
    "server/features/joining.py": "tests/nodes/test_homes.py",
    "server/features/login_limits.py": "tests/end_to_end/test_login_limits.py",
    "server/features/moderation.py": "tests/end_to_end/test_moderation.py",
    "server/features/quick_match.py": "tests/end_to_end/test_quick_match.py",
    "server/features/replays.py": "tests/end_to_end/test_daily.py",
    "server/features/run_secrecy.py": "tests/features/test_challenges.py",
    "server/features/room_limits.py": "tests/end_to_end/test_limits.py",
    "server/features/sessions.py": "tests/end_to_end/test_sessions.py",
    "server/games/__main__.py": "tests/games/test_cli.py",
    "server/games/deal_text.py": "tests/games/test_deals.py",
    "server/games/errors.py": "tests/games/test_game.py",
    "server/games/options.py": "tests/games/test_antares.py",
    "server/games/variants.py": "tests/games/test_game.py",
    "server/live/arena_results.py": "tests/features/test_arenas.py",
    "server/live/bracket_runs.py": "tests/features/test_brackets.py",
    "server/live/challenge_runs.py": "tests/features/test_challenges.py",
    "server/live/audience.py": "tests/end_to_end/test_spectating.py",
    "server/live/loading.py": "tests/end_to_end/test_recovery.py",
    "server/net/answers.py": "tests/net/test_forwarding.py",
    "server/net/following.py": "tests/cluster/test_membership.py",
    "server/net/http.py": "tests/web/test_http.py",
    "server/net/locating.py": "tests/nodes/test_service.py",
    "server/net/request_metrics.py": "tests/ops/test_monitoring.py",
    "server/net/tls.py": "tests/nodes/test_deployment.py",
    "server/ops/logging_setup.py": "tests/ops/test_log_limits.py",
    "server/ops/metrics.py": "tests/ops/test_monitoring.py",
    # The room without I/O: driven through the room's own tests.
    "server/rooms/commands.py": "tests/rooms/test_room.py",
    "server/rooms/errors.py": "tests/test_errors.py",
    "server/rooms/record.py": "tests/rooms/test_restore.py",
    "server/rooms/replay.py": "tests/end_to_end/test_daily.py",
    "server/rooms/step.py": "tests/rooms/test_room.py",
    "server/rooms/timing.py": "tests/rooms/test_draft.py",
    # The solver: its searches' tests and the survey command.
    "server/solver/__main__.py": "tests/solver/test_cli.py",
    "server/solver/antares_core.py": "tests/solver/test_antares_search.py",
    "server/solver/antares_par.py": "tests/solver/test_par.py",
    "server/solver/heuristics.py": "tests/solver/test_best_first.py",
    "server/solver/histogram.py": "tests/solver/test_cli.py",
    "server/solver/progress.py": "tests/solver/test_survey.py",
    "server/solver/pruning.py": "tests/solver/test_solve.py",
    "server/solver/results.py": "tests/solver/test_solve.py",
    # Storage: its stores' tests against real Redis.
    "server/storage/optimistic.py": "tests/storage/test_brackets.py",
    "server/storage/board_edits.py": "tests/storage/test_moderation.py",
    "server/storage/boards_port.py": "tests/storage/test_boards_contract.py",
    "server/storage/confusables/__main__.py": "tests/storage/test_name_skeleton.py",
    "server/storage/deals.py": "tests/supply/test_certified.py",
    "server/storage/keys.py": "tests/storage/test_nodes.py",
    "server/storage/lease_rule.py": "tests/storage/test_rooms.py",
    "server/storage/match_line.py": "tests/end_to_end/test_quick_match.py",
    "server/storage/ranking.py": "tests/storage/test_boards.py",
}
