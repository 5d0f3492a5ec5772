"""The tools' one kind of failure the user caused: bad input. The CLI prints it in one line,
`workshop CMD: <message>`, and exits 2; nothing else the tools raise is meant for the user."""


class KitError(Exception):
    """Bad input: one line for the user, exit status 2."""
