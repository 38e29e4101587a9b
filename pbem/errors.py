"""Errors by kind, each with its process exit code.

The CLI prints ``pbem: <message>`` on stderr and exits with the code of the
error's class. The table is documented in README.md ("Exit codes") and kept
in one place, ``EXIT_CODES``, which the CLI's ``pbem help exit-codes`` prints.
"""

from __future__ import annotations

from collections.abc import Iterable


class PbemError(Exception):
    """Base class: an expected failure with a message for the player."""

    exit_code = 1

    def __init__(self, message: str, *, details: Iterable[str] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.details = list(details)

    def __str__(self) -> str:
        if not self.details:
            return self.message
        return self.message + "".join(f"\n  - {d}" for d in self.details)


class UsageProblem(PbemError):
    """The command line or configuration is wrong (missing option, bad value)."""

    exit_code = 2


class BadFile(PbemError):
    """A file is not what it claims: corrupt, truncated, oversized, not pbem data."""

    exit_code = 3

    @classmethod
    def in_cache(cls, problem: str) -> BadFile:
        """A part of the replay cache read after it was restored that cannot be
        used (``problem``, e.g. "history cannot be read (...)"), and what to do."""
        return cls(f"the replay cache's {problem}: delete the game directory's cache/ folder and run the "
                   "command again (the log replays in full)")


class VerifyError(PbemError):
    """Cryptographic or chain verification failed: forged, tampered, replayed,
    out-of-order, wrong signer, or a commitment that does not open. (A file of
    another game is ``ForeignGame``.)"""

    exit_code = 4


class IllegalAction(PbemError):
    """The rules reject an action (each problem names its rule) or it is out of turn."""

    exit_code = 5


class Equivocation(PbemError):
    """An author signed two different events for one sequence number."""

    exit_code = 6


class Busy(PbemError):
    """Another pbem process holds the game directory's lock."""

    exit_code = 7


class KeyProblem(PbemError):
    """Identity key or vault cannot be used: wrong passphrase, wrong key, damaged."""

    exit_code = 8


class NotFound(PbemError):
    """A game directory, key file or rules module does not exist."""

    exit_code = 9


class VersionMismatch(PbemError):
    """The game needs another version of pbem's format or of the rules."""

    exit_code = 10


class ForeignGame(PbemError):
    """A file belongs to another game (other game id or genesis): it is never
    stored, never evidence of equivocation, and changes nothing."""

    exit_code = 11


class StorageProblem(PbemError):
    """The file system refused: permission denied, disk full, file too large,
    a path of the wrong kind (file for directory, device, FIFO), or a path
    that cannot be encoded. The message names the path."""

    exit_code = 12


class Undelivered(PbemError):
    """An event is signed and stored but could not be delivered (mail
    settings or the mail server failed); the same command resends the same
    signed bytes, never a second event."""

    exit_code = 13


class MailServerProblem(PbemError):
    """A mail server (IMAP for 'pbem fetch' and 'pbem watch') could not be
    reached, refused a command or dropped the connection. What was taken
    before is kept and consistent; the same command continues."""

    exit_code = 14


# Exit codes are published: never renumber one; a new kind takes the next
# free number after the highest here (PLAN: allocated once, from 11 upward).
EXIT_CODES: tuple[tuple[int, str], ...] = (
    (0, "success"),
    (1, "unexpected internal error (run with --traceback and report it)"),
    (2, "usage error: bad command line, option or configuration"),
    (BadFile.exit_code, "bad file: corrupt, truncated, oversized or not a pbem file"),
    (VerifyError.exit_code, "verification failed: signature, hash chain, "
     "replayed/out-of-order event, wrong signer, or a commitment that does not open"),
    (IllegalAction.exit_code, "illegal action or out of turn, or a signed event the game's "
     "rules or format refuse (the message names the signer, the event and the rule)"),
    (Equivocation.exit_code, "equivocation: an author signed two different events of this "
     "game for one sequence number; both are kept as evidence and the game is stopped"),
    (Busy.exit_code, "the game directory is in use by another pbem process"),
    (KeyProblem.exit_code, "identity key or vault unusable (wrong passphrase or key, damaged file)"),
    (NotFound.exit_code, "game directory, key file or rules module not found"),
    (VersionMismatch.exit_code, "the game needs a different format or rules version"),
    (ForeignGame.exit_code, "the file belongs to another game: nothing was stored, "
     "and it is never taken as evidence"),
    (StorageProblem.exit_code, "the file system refused (permission, full disk, file too "
     "large, wrong kind of path): the message names the path"),
    (Undelivered.exit_code, "the event is signed and stored but was not delivered: the "
     "same command resends it"),
    (MailServerProblem.exit_code, "the mail server could not be reached, refused a command or dropped "
     "the connection: what was taken is kept; run the command again"),
)
