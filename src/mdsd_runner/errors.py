"""The one exception the runner raises for bad input or an unusable environment;
the command line prints its message and exits with status 1."""


class RunnerError(Exception):
    """A problem the user can fix; the message names the file, line, option or value."""
