"""Exit statuses: the CLI returns one of these; scripts and CI rely on the numbers."""

from enum import IntEnum


class ExitStatus(IntEnum):
    OK = 0
    INTERNAL_ERROR = 1
    BAD_INPUT = 2  # bad input or usage: nothing was written
    THRESHOLD_BREACHED = 3  # re-evaluation found a change past a threshold
    INTERRUPTED = 130  # Ctrl-C (128 + SIGINT, as shells report it): nothing was written
    PIPE_CLOSED = 141  # the reader of standard output went away (128 + SIGPIPE, as `head` leaves `cat`)
