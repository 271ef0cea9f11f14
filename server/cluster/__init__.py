"""This process as one node of the service: the only package that knows other nodes exist."""
