"""The TLS context of a server that serves wss:// itself (``Config.tls_cert``)."""

from __future__ import annotations

import ssl

from server.config import Config


def tls_context(config: Config) -> ssl.SSLContext | None:
    """A server-side context with the configured certificate chain and key, or None when the
    server listens in plain text (alone on a machine, or behind a TLS balancer). A file that
    cannot be read raises :class:`OSError` (``ssl.SSLError`` is one), which stops start-up."""
    if config.tls_cert is None:
        return None
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(config.tls_cert, config.tls_key)
    return context
