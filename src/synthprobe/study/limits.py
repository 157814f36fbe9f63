"""Limits of the study web app (a module of its own so that the command line reads them without
importing Flask)."""

#: Wrong admin passwords from one client address, within ``FAILURE_WINDOW_SECONDS``, before a lock-out
#: (``study serve --lockout-after``).
LOCKOUT_AFTER = 5
#: Failures older than this (seconds) are forgotten.
FAILURE_WINDOW_SECONDS = 15 * 60
#: Length of the first lock-out in seconds (``study serve --lockout-seconds``); each further lock-out of
#: the same address doubles it ...
LOCKOUT_SECONDS = 5 * 60
#: ... up to this (seconds). A successful login, or a day without failures, starts the count afresh.
LOCKOUT_MAX_SECONDS = 60 * 60
#: Addresses remembered at most (the oldest are forgotten first), so that the table stays small.
MAX_TRACKED_ADDRESSES = 10_000
#: Largest request body the app reads (Flask's ``MAX_CONTENT_LENGTH``; the forms are tiny).
MAX_BODY_BYTES = 16 * 1024
#: Largest request body ``study serve`` accepts (waitress's ``max_request_body_size``, 1 GiB by default):
#: a request whose Content-Length is larger is answered 413 before its body is read.
MAX_REQUEST_BODY = 64 * 1024
