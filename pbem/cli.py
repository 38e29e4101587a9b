"""The pbem command line (Click). Thin: parse, call pbem.session, print.

Data goes to stdout (``--json`` for one machine-readable document),
diagnostics to stderr. Exit codes: see ``pbem exit-codes`` and README.
Heavy modules (cryptography, Jinja, the rules) are imported inside commands
so that start-up stays small.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from pbem import __version__

if TYPE_CHECKING:
    from collections.abc import Sequence

    from pbem.rulesapi import OrderGroup, RulesModule

GAME_ENV = "PBEM_GAME"
HOME_ENV = "PBEM_HOME"
PASSPHRASE_ENV = "PBEM_PASSPHRASE"

#: The parameter types of every path option, made once: each click.Path asks
#: gettext for its name (a search of the locale directories), 35 times at start-up else.
_PATH = click.Path(path_type=Path)
_DIRECTORY = click.Path(path_type=Path, file_okay=False)


def _home() -> Path:
    return Path(os.environ.get(HOME_ENV) or Path.home() / ".pbem")


def _default_identity() -> Path:
    return _home() / "identity.key"


def _emit(data: Any, as_json: bool, text: str) -> None:
    if as_json:
        import json

        click.echo(json.dumps(data, indent=2, sort_keys=True))
    else:
        click.echo(text)


def _read_passphrase_file(path: Path) -> str:
    """The first line of a passphrase file."""
    from pbem.errors import UsageProblem
    from pbem.fileio import read_regular

    try:
        return read_regular(path, 64 << 10, "passphrase file").decode("utf-8").splitlines()[0]
    except UnicodeDecodeError:
        raise UsageProblem(f"passphrase file {path} is not UTF-8 text") from None
    except IndexError:
        raise UsageProblem(f"passphrase file {path} is empty") from None


def _passphrase(passphrase_file: Path | None, *, confirm: bool = False) -> str:
    from pbem.errors import UsageProblem

    if passphrase_file is not None:
        return _read_passphrase_file(passphrase_file)
    env = os.environ.get(PASSPHRASE_ENV)
    if env is not None:
        return env
    if not sys.stdin.isatty():
        raise UsageProblem(f"no passphrase: use --passphrase-file FILE or set {PASSPHRASE_ENV} "
                           "(standard input is not a terminal, so pbem cannot ask)")
    return click.prompt("Passphrase", hide_input=True, confirmation_prompt=confirm)


def _identity_path(identity: Path | None, game: Path | None = None) -> Path:
    if identity is not None:
        return identity
    if game is not None:
        from pbem.store import GameDir

        local = GameDir(game).local_path
        if local.exists():
            return Path(GameDir(game).read_local().identity)
    return _default_identity()


def _unlock(identity: Path | None, passphrase_file: Path | None, game: Path | None = None):
    from pbem.errors import NotFound, StorageProblem
    from pbem.fileio import is_utf8, printable_path
    from pbem.identity import load_identity, read_key_file

    path = _identity_path(identity, game)
    if not is_utf8(str(path.absolute())):  # new and join store it in local.json
        raise StorageProblem(f"the identity key path '{printable_path(path.absolute())}' holds bytes that are "
                             "not UTF-8: pbem stores and prints paths as UTF-8; rename the directory")
    try:
        read_key_file(path)  # a missing or damaged file is reported before asking a passphrase
    except NotFound:
        if game is None or identity is not None:
            raise
        raise NotFound(_missing_game_key(Path(game), path)) from None
    return load_identity(path, _passphrase(passphrase_file)), path


def _missing_game_key(game: Path, path: Path) -> str:
    """What to do when the key a game was played with is gone (issue 21): a
    new key cannot continue the game, only that key (by its fingerprint)."""
    from pbem.identity import fingerprint, parse_public
    from pbem.session import genesis_of
    from pbem.store import GameDir

    gd = GameDir(game)
    try:
        role = gd.read_local().role
        genesis, _ = genesis_of(gd)
        key = next(p.key for p in genesis.players if p.role == role)
        fp = fingerprint(parse_public(key))
    except Exception:  # noqa: BLE001 - the advice below holds without the fingerprint
        return (f"no identity key at {path}: restore the key this game was played with from your backup "
                "(a new key from 'pbem keygen' cannot continue it), or give it with -i KEYFILE")
    return (f"no identity key at {path}: this game is played as {role} with the key of fingerprint {fp}; "
            "restore that key file from your backup, or give it with -i KEYFILE (a new key from "
            "'pbem keygen' cannot continue this game)")


def _require_utf8(args: list[str]) -> None:
    """Refuse, before anything is read or written, arguments and game paths that are not
    UTF-8: pbem stores paths in local.json and prints them, both as UTF-8."""
    from pbem.errors import StorageProblem
    from pbem.fileio import is_utf8, printable_path

    named = [(a, "argument") for a in args] + [(os.environ.get(v, ""), f"${v}") for v in (GAME_ENV, HOME_ENV)]
    for text, what in named:
        if not is_utf8(text):
            raise StorageProblem(f"{what} '{printable_path(text)}' holds bytes that are not UTF-8: pbem stores "
                                 "and prints paths as UTF-8; rename the file or directory")


def _seat(game: Path, identity: Path | None, passphrase_file: Path | None, *, exclusive: bool = False):
    """My seat in GAME, read under the game's lock, which stays held until the command ends
    (exclusive for a command that changes the game). The passphrase is asked first, so a
    person typing it never holds other commands up."""
    from pbem.session import load_seat
    from pbem.store import GameDir

    gd = GameDir(game)
    gd.require()
    ident, _ = _unlock(identity, passphrase_file, game)
    ctx = click.get_current_context(silent=True)
    if ctx is not None:  # (shell completion runs outside a command and reads without it)
        ctx.with_resource(gd.lock(exclusive=exclusive))
    return load_seat(gd, ident)


game_option = click.option("-g", "--game", type=_PATH, envvar=GAME_ENV,
                           default=".", show_default=True, help="Game directory (or $PBEM_GAME).")
identity_option = click.option("-i", "--identity", type=_PATH, default=None,
                               help="Identity key file (default: the game's, else $PBEM_HOME/identity.key).")
passphrase_option = click.option("--passphrase-file", type=_PATH, default=None,
                                 help=f"Read the passphrase from this file (else ${PASSPHRASE_ENV}, else prompt).")
json_option = click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")


class _OverlayOption(click.Option):
    """``--overlay NAME``: the overlays each installed game names (its
    ``map_overlays``), listed when the help is shown, never hard-wired."""

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        from pbem import rulesapi

        offered = []
        for rid in rulesapi.available():
            if rulesapi.is_frozen(rid):  # an older version of a game listed already
                continue
            try:
                names = rulesapi.load_any(rid).map_overlays
            except Exception:  # noqa: BLE001 - a broken plugin must not break --help
                continue
            offered += [f"{n} ({rid})" for n in names]
        self.help = ("Draw this overlay of the game's map (repeatable). Offered: "
                     + (", ".join(offered) or "none") + ".")
        return super().get_help_record(ctx)


overlay_option = click.option("--overlay", "overlays", multiple=True, metavar="NAME", cls=_OverlayOption,
                              help="Draw this overlay of the game's map (repeatable).")


class _Group(click.Group):
    """Maps pbem's errors to one line on stderr and the exit-code table."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            _require_utf8([*getattr(ctx, "_protected_args", ()), *ctx.args])
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.ClickException, click.exceptions.Abort):
            raise
        except Exception as exc:  # noqa: BLE001 - the one place errors become exit codes
            from pbem.errors import PbemError

            if (ctx.obj or {}).get("traceback") or os.environ.get("PBEM_TRACEBACK") == "1":
                import traceback

                traceback.print_exc()
            from pbem.text import safe_lines

            if isinstance(exc, OSError):
                from pbem.fileio import os_error

                exc = os_error(exc)  # one line naming the path, exit 12 (or 9 for a missing one)
            if isinstance(exc, UnicodeEncodeError) and "surrogates" in exc.reason:
                from pbem.errors import StorageProblem
                from pbem.fileio import printable_path

                exc = StorageProblem(f"a path holds bytes that are not UTF-8 (near "
                                     f"'{printable_path(exc.object[max(0, exc.start - 40):exc.end + 10])}'): "
                                     "pbem stores and prints paths as UTF-8; rename it")
            # Messages may carry text from files and emails: never a raw control character (issue 27).
            if isinstance(exc, PbemError):
                click.echo(safe_lines(f"pbem: {exc}"), err=True)
                ctx.exit(exc.exit_code)
            click.echo(safe_lines(f"pbem: internal error: {type(exc).__name__}: {exc} (run with --traceback and "
                                  "report it)"), err=True)
            ctx.exit(1)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="pbem")
@click.option("--traceback", is_flag=True, help="Show Python tracebacks for errors (for bug reports).")
@click.pass_context
def cli(ctx: click.Context, traceback: bool) -> None:
    """pbem: play board wargames by email, with signed turn files, committed
    secrets and dice neither player can bias. 'pbem exit-codes' lists exit codes."""
    ctx.obj = {"traceback": traceback}


# -- identities ---------------------------------------------------------------

@cli.command()
@click.option("-o", "--out", type=_PATH, default=None,
              help="Private key file to write (default $PBEM_HOME/identity.key); the public key goes to OUT.pub.")
@click.option("--name", default="", help="Your name, stored with the key.")
@click.option("--force", is_flag=True, help="Overwrite an existing key file.")
@passphrase_option
@json_option
def keygen(out: Path | None, name: str, force: bool, passphrase_file: Path | None, as_json: bool) -> None:
    """Create your identity: an Ed25519 key pair, the private key encrypted
    with a passphrase (file mode 0600). Send the printed public key line to
    your opponent and check its fingerprint with them by another channel."""
    from pbem.identity import Identity, save_identity

    out = out or _default_identity()
    if out.exists() and not force:
        from pbem.errors import UsageProblem
        raise UsageProblem(f"{out} already exists; refusing to overwrite an identity (use --force)")
    ident = Identity.generate(name)
    pub = save_identity(ident, out, _passphrase(passphrase_file, confirm=True), force=force)
    _emit({"private_key_file": str(out), "public_key_file": str(pub), "public_key": ident.public_text,
           "fingerprint": ident.fingerprint}, as_json,
          f"{ident.public_text}\nfingerprint {ident.fingerprint}\n"
          f"private key: {out} (encrypted; keep it and your passphrase safe)\npublic key:  {pub}")


@cli.command("key")
@click.argument("path", type=_PATH, required=False)
@click.option("--change-passphrase", is_flag=True,
              help="Re-encrypt the private key under a new passphrase (the key itself, and so every game "
                   "and fingerprint, stays the same).")
@passphrase_option
@click.option("--new-passphrase-file", type=_PATH, default=None,
              help="With --change-passphrase: read the new passphrase from this file (else prompt twice).")
@json_option
def key_cmd(path: Path | None, change_passphrase: bool, passphrase_file: Path | None,
            new_passphrase_file: Path | None, as_json: bool) -> None:
    """Show the public key line and fingerprint of a key file (no passphrase
    needed), or with --change-passphrase give it a new passphrase."""
    from pbem.identity import fingerprint, read_key_file

    path = path or _default_identity()
    if change_passphrase:
        _change_passphrase(path, passphrase_file, new_passphrase_file, as_json)
        return
    if passphrase_file is not None or new_passphrase_file is not None:
        from pbem.errors import UsageProblem
        raise UsageProblem("--passphrase-file and --new-passphrase-file only go with --change-passphrase")
    if path.suffix == ".pub":
        from pbem.fileio import read_regular
        from pbem.identity import parse_public, public_text
        text = public_text(parse_public(read_regular(path, 64 << 10, "public key file").decode("ascii", "replace")))
    else:
        text = read_key_file(path).public
    _emit({"public_key": text, "fingerprint": fingerprint(text)}, as_json,
          f"{text}\nfingerprint {fingerprint(text)}")


def _change_passphrase(path: Path, old_file: Path | None, new_file: Path | None, as_json: bool) -> None:
    """Unlock with the old passphrase first (a wrong one changes nothing),
    then replace the key file atomically under the new one."""
    from pbem.errors import UsageProblem
    from pbem.identity import load_identity, save_identity

    identity = load_identity(path, _passphrase(old_file))
    if new_file is not None:
        new = _read_passphrase_file(new_file)
    elif sys.stdin.isatty():
        new = click.prompt("New passphrase", hide_input=True, confirmation_prompt=True)
    else:
        raise UsageProblem("no new passphrase: use --new-passphrase-file FILE "
                           "(standard input is not a terminal, so pbem cannot ask)")
    save_identity(identity, path, new, force=True)
    _emit({"private_key_file": str(path), "fingerprint": identity.fingerprint}, as_json,
          f"new passphrase set for {path} (fingerprint {identity.fingerprint}, unchanged)")

# -- creating and joining games -------------------------------------------------

def _read_key_arg(value: str) -> str:
    from pbem.fileio import read_regular

    path = Path(value)
    if not value.startswith("pbem-ed25519:") and path.exists():
        return read_regular(path, 64 << 10, "public key file").decode("ascii", "replace").strip()
    return value


def _orders(orders: tuple[str, ...], orders_file: Path | None) -> list[str]:
    out = list(orders)
    if orders_file is not None:
        from pbem.errors import BadFile
        from pbem.fileio import read_regular
        from pbem.turnfile import MAX_TURN_FILE_BYTES

        try:
            text = sys.stdin.read() if str(orders_file) == "-" else \
                read_regular(orders_file, MAX_TURN_FILE_BYTES, "orders file").decode("utf-8")
        except UnicodeDecodeError:
            raise BadFile(f"orders file {orders_file} is not UTF-8 text") from None
        out += [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    return out


orders_file_option = click.option("-f", "--orders-file", type=_PATH, default=None,
                                  help="Read orders from a file, one per line ('-' for stdin; # comments).")
out_option = click.option("-o", "--out", type=_PATH, default=None,
                          help="Where to write the turn file (default: GAME/outbox/; '-' for stdout).")


def _sent_report(sent, as_json: bool, extra: dict[str, Any] | None = None) -> None:
    data = {"turn_file": str(sent.turn_file), "events": sent.seqs, **(extra or {})}
    text = f"turn file {sent.turn_file} (events {sent.seqs[0]}-{sent.seqs[-1]}): send it to your opponent"
    if str(sent.turn_file) == "-":
        return
    _emit(data, as_json, text)


def _print_turn_to_stdout(sent, game: Path) -> None:
    if str(sent.turn_file) == "-":
        from pbem.session import load_public
        from pbem.store import GameDir
        from pbem.turnfile import format_turn

        gd = GameDir(game)
        replay = load_public(gd)
        events = [gd.read_event(s) for s in sent.seqs]
        sys.stdout.buffer.write(format_turn(replay.game_hex, f"{replay.rules.SPEC.id} {replay.rules.SPEC.version}",
                                            events, [replay.history[s].author for s in sent.seqs], sent.seqs))


@cli.command()
@click.argument("directory", type=_PATH)
@click.option("--rules", "--game", "rules_id", required=True, help="Rules id, e.g. ritd (see 'pbem rules list').",
              shell_complete=lambda ctx, param, incomplete: _complete_rules(incomplete))
@click.option("--scenario", default=None,
              help="Scenario id of the rules (required; without it pbem lists the scenarios).",
              shell_complete=lambda ctx, param, incomplete: _complete_spec(ctx, "scenarios", incomplete))
@click.option("--role", default=None, help="The role you play.  [required]",
              shell_complete=lambda ctx, param, incomplete: _complete_spec(ctx, "roles", incomplete))
@click.option("--opponent", "opponent_key", default=None,
              help="Opponent's public key line (pbem-ed25519:...) or a file holding it.  [required]")
@click.option("--option", "options", multiple=True, metavar="NAME[=VALUE]",
              help="Optional rule to use, or an option's value (repeatable): see 'pbem rules show RULES'.")
@click.option("--title", default="", help="A title for the game.")
@click.option("--order", "orders", multiple=True, help="Set-up order for genesis (repeatable).")
@click.option("--email", default="", help="Your email address (for 'pbem send --eml/--smtp').")
@click.option("--opponent-email", default="", help="Your opponent's email address.")
@click.option("--reply-days", type=click.IntRange(1, 365), default=None,
              help="Time control: days each player has for each reply (signed times; 'pbem claim').")
@click.option("--leave-days", type=click.IntRange(0, 3650), default=None,
              help="Time control: days of leave per player per game that absorb late replies (default 0).")
@orders_file_option
@out_option
@identity_option
@passphrase_option
@json_option
def new(directory: Path, rules_id: str, scenario: str | None, role: str | None, opponent_key: str | None,
        options: tuple[str, ...], title: str, orders: tuple[str, ...], email: str, opponent_email: str,
        reply_days: int | None, leave_days: int | None,
        orders_file: Path | None, out: Path | None, identity: Path | None, passphrase_file: Path | None,
        as_json: bool) -> None:
    """Create a game in DIRECTORY as the host and write the invitation turn file.
    Without --scenario (or with an unknown one), list the rules' scenarios and options."""
    from pbem import rulesapi
    from pbem.errors import UsageProblem
    from pbem.session import new_game

    module = rulesapi.load(rules_id)  # an unknown or unplayable game is named before any passphrase
    if rulesapi.is_frozen(rules_id):
        raise UsageProblem(f"rules {rules_id} is a frozen older version, kept so that games started under it "
                           f"finish; start a new game with --rules {module.SPEC.id}")
    if scenario is None or scenario not in module.SPEC.scenarios:
        raise UsageProblem(_scenario_listing(module, scenario))
    bad_options = rulesapi.option_problems(module.SPEC, scenario, options)
    if bad_options:  # before any passphrase, like the scenario
        raise UsageProblem("; ".join(bad_options) + f" (see 'pbem rules show {rules_id}')")
    _require_options(role=role, opponent_key=opponent_key)
    assert role is not None and opponent_key is not None
    if leave_days is not None and reply_days is None:
        raise UsageProblem("--leave-days needs --reply-days (the time control's days per reply)")
    from pbem.codec import Clock

    clock = None if reply_days is None else Clock(reply_days=reply_days, leave_days=leave_days or 0)
    ident, path = _unlock(identity, passphrase_file)
    sent = new_game(directory, rules_id, scenario, role, ident, path.resolve(), _read_key_arg(opponent_key),
                    options=options, title=title, orders=_orders(orders, orders_file), out=out, email=email,
                    opponent_email=opponent_email, clock=clock)
    _resent_note(sent, "new")
    _remember(directory)
    _print_turn_to_stdout(sent, directory)
    _vault_hint(directory)
    _sent_report(sent, as_json, {"game_dir": str(directory)})


def _remember(directory: Path) -> None:
    """List the game in $PBEM_HOME/games for 'pbem fetch' and 'pbem watch'."""
    from pbem.errors import PbemError
    from pbem.watch import remember_game

    try:
        remember_game(_home(), directory)
    except (PbemError, OSError) as exc:  # the game is whole; only fetch's default list lacks it
        click.echo(f"pbem: warning: the game is not listed in {_home()}/games ({exc}): name it to 'pbem fetch' "
                   "and 'pbem watch', or run this command again", err=True)


def _resent_note(sent, command: str) -> None:
    if sent.resent:
        click.echo(f"nothing new to sign: events {sent.seqs[0]}-{sent.seqs[-1]} were signed by an earlier "
                   f"'pbem {command}' (interrupted?); their turn file is written again", err=True)


def _scenario_listing(rules: RulesModule, scenario: str | None) -> str:
    """The rules' scenarios (with the ``scenario_info(id)`` line of each) and options."""
    spec = rules.SPEC
    head = "no --scenario given" if scenario is None else f"unknown scenario '{scenario}'"
    lines = [f"{head}; the scenarios of {spec.title} (rules {spec.id}) are:"]
    for sid in spec.scenarios:
        try:
            text = rules.scenario_info(sid).strip()
        except (KeyError, ValueError):
            text = ""
        text = text.splitlines()[0] if text else ""
        lines.append(f"  {sid}" + (f": {text}" if text else ""))
    lines += _option_lines(spec)
    lines.append(f"usage: pbem new DIRECTORY --rules {spec.id} --scenario SCENARIO "
                 f"--role {'|'.join(spec.roles)} --opponent KEY [--option NAME ...]")
    return "\n".join(lines)


def _option_lines(spec: Any) -> list[str]:
    """The game's options for people: those without values, then each
    option with values, its choices, default and scenarios."""
    lines = [f"options (--option NAME, repeatable): {', '.join(spec.options) or 'none'}"]
    for g in spec.option_groups:
        how = "required" if g.required else f"default {g.default}" if g.default else "optional"
        where = f"; scenarios {', '.join(g.scenarios)}" if g.scenarios else ""
        lines.append(f"  --option {g.name}={'|'.join(g.choices)} ({how}{where})" + (f": {g.text}" if g.text else ""))
    return lines


def _require_options(**values: Any) -> None:
    """Click's own 'Missing option' error for options checked after --scenario."""
    ctx = click.get_current_context()
    for param in ctx.command.params:
        if param.name in values and values[param.name] is None:
            raise click.MissingParameter(ctx=ctx, param=param)


@cli.command()
@click.argument("invitation", type=_PATH)
@click.argument("directory", type=_PATH)
@click.option("--host-fingerprint", default=None,
              help="Refuse to join unless the host's key has this fingerprint (check it with them).")
@click.option("--order", "orders", multiple=True, help="Your set-up order (repeatable).")
@click.option("--email", default="", help="Your email address (for 'pbem send --eml/--smtp').")
@click.option("--opponent-email", default="", help="Your opponent's email address.")
@orders_file_option
@out_option
@identity_option
@passphrase_option
@json_option
def join(invitation: Path, directory: Path, host_fingerprint: str | None, orders: tuple[str, ...], email: str,
         opponent_email: str, orders_file: Path | None, out: Path | None, identity: Path | None,
         passphrase_file: Path | None, as_json: bool) -> None:
    """Accept the invitation INVITATION (its turn file, or the email, mbox or
    Maildir that holds it) into a new game DIRECTORY."""
    from pbem.identity import fingerprint
    from pbem.session import join_game

    data = _invitation_from(invitation)
    ident, path = _unlock(identity, passphrase_file)
    sent, host = join_game(directory, data, ident, path.resolve(), host_fingerprint=host_fingerprint,
                           orders=_orders(orders, orders_file), out=out, email=email, opponent_email=opponent_email)
    _resent_note(sent, "join")
    _remember(directory)
    host_role = host.history[0].author
    fp = fingerprint(host.keys[host_role])
    _print_turn_to_stdout(sent, directory)
    _vault_hint(directory)
    options = list(host.genesis.options) if host.genesis is not None else []
    if not as_json:
        click.echo(f"joined game {host.game_hex[:16]} as {host.other(host_role)}; host {host_role} has key "
                   f"fingerprint {fp}: check it with them by another channel", err=True)
        if options:
            click.echo(f"optional rules of this game (the host chose them; 'pbem show' describes them): "
                       f"{', '.join(options)}", err=True)
        clock = host.genesis.clock if host.genesis is not None else None
        if clock is not None:
            click.echo(f"time control of this game (the host chose it): {clock.reply_days} days per reply, "
                       f"{clock.leave_days} days of leave per player; 'pbem show' tells the time left", err=True)
    _sent_report(sent, as_json, {"game_dir": str(directory), "host_fingerprint": fp, "options": options})


def _vault_hint(directory: Path) -> None:
    click.echo(f"your secrets for this game are in {directory}/vault/ (encrypted); without them you cannot "
               f"open your commitments: keep a copy with 'pbem vault backup FILE -g {directory}'", err=True)


def _invitation_from(path: Path) -> bytes:
    """The invitation in PATH: a turn file, or the one turn file holding a
    game's genesis in an .eml, an mbox or a Maildir (issue 21 point 8)."""
    from pbem import codec
    from pbem.errors import BadFile, UsageProblem
    from pbem.mail import turn_files_from_path
    from pbem.text import shown
    from pbem.turnfile import parse_turn

    if str(path) == "-":
        return _read_input(path)
    kind, found = turn_files_from_path(path)
    if kind == "turn file":
        return found[0][1]
    invitations: dict[str, bytes] = {}
    for name, data in found:
        try:
            events = parse_turn(data, name).events
            if events and codec.unwrap(events[0]).seq == 0:
                invitations.setdefault(codec.sha256(codec.signing_input(codec.unwrap(events[0]).body)).hex(), data)
        except (BadFile, codec.CodecError):
            continue
    if not invitations:
        raise BadFile(f"no invitation (a turn file holding a game's genesis) in the {kind} {shown(str(path))}")
    if len(invitations) > 1:
        games = ", ".join(g[:16] for g in invitations)
        raise UsageProblem(f"the {kind} {shown(str(path))} holds invitations to {len(invitations)} games ({games}): "
                           "save the email of the one to join and give that file")
    return next(iter(invitations.values()))


def _read_input(path: Path) -> bytes:
    from pbem.errors import BadFile
    from pbem.fileio import read_regular
    from pbem.turnfile import MAX_TURN_FILE_BYTES

    if str(path) == "-":
        data = sys.stdin.buffer.read(MAX_TURN_FILE_BYTES + 1)
    else:  # only a regular file, its size checked before reading (never a device or FIFO)
        data = read_regular(path, MAX_TURN_FILE_BYTES, "turn file")
    if len(data) > MAX_TURN_FILE_BYTES:
        raise BadFile(f"{path} is over the limit of {MAX_TURN_FILE_BYTES} bytes for a turn file")
    return data


# -- playing ----------------------------------------------------------------------

@cli.command()
@game_option
@identity_option
@passphrase_option
@json_option
def show(game: Path, identity: Path | None, passphrase_file: Path | None, as_json: bool) -> None:
    """The current situation from your side, with your draft applied."""
    import msgspec

    from pbem.session import dice_text, draft_replay, offer_text, pending_text

    seat = _seat(game, identity, passphrase_file)
    probe, draft = draft_replay(seat)
    v = seat.rules.view(probe.state, seat.role)
    outcome = probe.outcome()
    last = seat.replay.history[-1].rolls if seat.replay.history else None
    data = {"game": seat.replay.game_hex, "role": seat.role, "seq": seat.replay.seq,
            "pending": msgspec.to_builtins(probe.pending()), "draft": [o.text for o in draft.orders],
            "view": msgspec.to_builtins(v), "outcome": msgspec.to_builtins(outcome)}
    lines = [f"game {seat.replay.game_hex[:16]} ({seat.rules.SPEC.title}), you are {seat.role}, "
             f"log at event {seat.replay.seq}", seat.rules.render_text(v)]
    if last is not None:
        lines.append(f"dice asked in event {last.asked_seq} by {last.asker}: "
                     f"{dice_text(last.values, last.sides, seat.rules, last.purposes, last.results)}")
    lost = lost_this_turn(seat.replay, seat.role)
    if lost:
        data["lost"] = lost
        lines += ["lost this turn:", *(f"  {sentence}" for sentence in lost)]
    if draft.orders:
        lines.append("draft (not sent): " + "; ".join(o.text for o in draft.orders))
    lines.append(f"next decision: {pending_text(probe.pending())}")
    from pbem.claims import clock_status, now

    owed = clock_status(seat.replay)  # of the signed log: a draft owes nothing to anyone
    if owed is not None:
        lines += owed.lines(now())
        data["owed"] = {"role": owed.role, "since_seq": owed.seq, "since_time": owed.since,
                        "deadline": owed.deadline, "leave_left": owed.leave_left}
    waiting = _waiting(seat)
    if waiting:
        data["waiting"] = waiting
        lines += [f"waiting: {line}" for line in waiting]
    offer = offer_text(seat.replay)
    if offer:
        lines.append(offer)
        data["draw_offer"] = offer
    taken = recent_takebacks(seat.replay, seat.role)
    if taken:
        lines += [f"takeback: {sentence}" for sentence in taken]
        data["takebacks"] = taken
    if outcome is not None:
        lines.append(f"game over: {outcome.summary}")
    stopped = seat.gd.stopped_reason()
    if stopped:
        lines.append(f"GAME STOPPED: {stopped} ('pbem evidence' shows it, and how both players can clear it)")
    _emit(data, as_json, "\n".join(lines))


def _waiting(seat: Any) -> list[str]:
    """What is under way and not yet settled (``Rules.waiting``) with my draft
    folded (its dice included, as 'pbem show' shows them), escaped for printing."""
    from pbem.session import draft_replay
    from pbem.text import escaped

    probe, _ = draft_replay(seat)
    return [] if probe.state is None else [escaped(line) for line in seat.rules.waiting(probe.state, seat.role)]


def recent_takebacks(replay: Any, role: str) -> list[str]:
    """The takebacks (decision 28) of the current turn and since ``role`` last
    gave orders, in words, as ``pbem show`` lists them."""
    from pbem.game import takeback_text
    from pbem.report import last_orders

    if replay.state is None:
        return []
    label = replay.rules.turn_label(replay.state)
    since = last_orders(replay.history, role)
    return [takeback_text(info) for info in replay.history if info.takeback is not None
            and (info.turn == label or since is None or info.seq > since)]


#: Kinds of happening ``pbem show`` lists as "lost this turn" (``rulesapi.Happening``).
LOST_KINDS = ("elimination", "loss", "rout")


def lost_this_turn(replay: Any, role: str) -> list[str]:
    """The eliminations, losses and Routs of the signed log's current turn (the
    rules' ``turn_label``; the whole game when a game has none) and of every
    event since ``role`` last gave orders (the opponent's whole turn), as the
    reader's replay says them, each with its rule (issue 21 point 2)."""
    from pbem.report import last_orders, said

    if replay.state is None:
        return []
    label = replay.rules.turn_label(replay.state)
    since = last_orders(replay.history, role)
    back = replay.taken_back()  # nothing of a span taken back by agreement was lost (decision 28)
    return [said(h).sentence for info in replay.history
            if (info.turn == label or (since is not None and info.seq > since)) and info.seq not in back
            for h in info.happenings if h.kind in LOST_KINDS]


#: ``pbem options`` lists every order, group by group, when there are at most
#: this many; beyond, one line per group (its label, count and an example).
SHORT_LISTING = 40


@cli.command()
@game_option
@identity_option
@passphrase_option
@click.option("--all", "show_all", is_flag=True, help="List every order, group by group.")
@click.option("--group", "groups", multiple=True, metavar="LABEL",
              help="List the orders of the groups whose label holds LABEL (repeatable; any case).")
@click.option("--flat", is_flag=True, help="Every order, one a line, without groups.")
@json_option
def options(game: Path, identity: Path | None, passphrase_file: Path | None, show_all: bool,
            groups: tuple[str, ...], flat: bool, as_json: bool) -> None:
    """List the orders you may give now, in the syntax of 'pbem do', by group.

    At most 40 orders are listed one by one; more are summarised one line
    per group (the rules' groups, e.g. one per unit, else the kinds of
    order): its label, how many orders it holds and an example. --group
    LABEL lists a group's orders, --all every order under its group, --flat
    (and --json, under "orders") every order without groups."""
    from pbem.deck import DECK
    from pbem.rulesapi import DICE
    from pbem.session import draft_replay, pending_text

    seat = _seat(game, identity, passphrase_file)
    probe, _ = draft_replay(seat)
    decision = probe.pending()
    tree: tuple[OrderGroup, ...] = ()
    if decision is not None and decision.role == seat.role and decision.kind not in (DICE, DECK):
        tree = tuple(seat.rules.order_tree(probe.state, seat.role, probe.ctx(seat.role)))
    legal = [order for group in tree for order in group.leaves()]
    pending = pending_text(decision)
    # Familiar orders that are not legal at this step, with their rule (issue 21 point 7).
    not_now = [f"{p.message} ({p.rule})" if p.rule else p.message
               for p in seat.rules.not_now(probe.state, seat.role)] if probe.state is not None else []
    if as_json:
        _emit({"pending": pending, "orders": legal, "groups": [_group_data(g) for g in tree],
               "not_now": not_now}, True, "")
        return
    if not legal:
        click.echo(f"nothing for you to decide now; next decision: {pending}")
        return
    if flat:
        click.echo("\n".join(legal))
        return
    from pbem.rulesapi import provides_order_tree

    own_tree = provides_order_tree(seat.rules)
    if not own_tree and len(legal) <= SHORT_LISTING and not groups:
        lines = list(legal)  # as pbem listed before order trees
    else:
        if not own_tree:
            tree = _kinds(legal)
        if groups:
            lines = _chosen_groups(tree, groups)
        elif show_all or len(legal) <= SHORT_LISTING:
            lines = _group_lines(tree, expand=True)
        else:
            lines = [f"{len(legal)} orders in {len(tree)} groups ({pending}); 'pbem options --group LABEL' "
                     "lists a group's orders, --all every order, --flat one order a line:",
                     *_group_lines(tree, expand=False)]
    if not_now and not groups:
        lines += ["not now (each with its rule):", *(f"  {line}" for line in not_now)]
    click.echo("\n".join(lines))


def _kinds(legal: list[str]) -> tuple[OrderGroup, ...]:
    """A flat list of orders in groups by their first word (the kind of order),
    or by the first two when all are of one kind: how ``pbem options`` shows
    a long list from rules without a tree of their own."""
    from pbem.rulesapi import OrderGroup

    for words in (1, 2):  # one kind only ("deploy ..."): by its first two words ("deploy Brescia")
        by_kind: dict[str, list[str]] = {}
        for order in legal:
            by_kind.setdefault(" ".join(order.split()[:words]), []).append(order)
        if len(by_kind) > 1:
            return tuple(OrderGroup(label=kind, orders=tuple(orders)) for kind, orders in by_kind.items())
    return (OrderGroup(label="Orders", orders=tuple(legal)),)


def _count_text(n: int) -> str:
    return f"{n} order" + ("" if n == 1 else "s")


def _group_lines(tree: Sequence[OrderGroup], *, expand: bool, indent: str = "") -> list[str]:
    """One line per group (label, count, example); with ``expand`` its orders
    and sub-groups under it."""
    width = min(44, max((len(g.label) for g in tree), default=0))
    lines = []
    for group in tree:
        n = group.count()
        what = "no order now" if n == 0 else group.first() if n == 1 else f"e.g. {group.first()}"
        line = f"{indent}{group.label:<{width}}  {_count_text(n):>10}  {what}"
        lines.append(line + (f"  ({group.note})" if group.note else ""))
        if expand:
            lines += [f"{indent}    {order}" for order in group.leaf_orders()]
            lines += _group_lines(group.groups(), expand=True, indent=indent + "  ")
    return lines


def _chosen_groups(tree: Sequence[OrderGroup], wanted: tuple[str, ...]) -> list[str]:
    """The groups (at any depth) whose label holds one of ``wanted``, expanded."""
    from pbem.errors import UsageProblem

    found, stack = [], list(reversed(tree))
    while stack:
        group = stack.pop()
        if any(w.lower() in group.label.lower() for w in wanted):
            found.append(group)
            continue
        stack += reversed(group.groups())
    if not found:
        labels = [g.label for g in tree]
        shown = ", ".join(labels[:20]) + (f" and {len(labels) - 20} more" if len(labels) > 20 else "")
        raise UsageProblem(f"no group of orders is labelled {' or '.join(repr(w) for w in wanted)} "
                           f"(the groups now: {shown})")
    return _group_lines(found, expand=True)


def _group_data(group: OrderGroup) -> dict[str, Any]:
    """A group for --json: label, count, example, its own orders and sub-groups."""
    return {"label": group.label, "count": group.count(), "example": group.first(), "note": group.note,
            "ends_step": group.ends_step, "orders": list(group.leaf_orders()),
            "groups": [_group_data(g) for g in group.groups()]}


def _complete_orders(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[str]:
    """Shell completion of an order: what ``pbem options`` lists now, for the
    game of ``-g`` (or $PBEM_GAME). Needs the identity unlocked without a
    prompt (``--passphrase-file`` or $PBEM_PASSPHRASE); otherwise nothing."""
    from pbem.session import legal_orders

    passphrase_file = ctx.params.get("passphrase_file")
    if passphrase_file is None and os.environ.get(PASSPHRASE_ENV) is None:
        return []
    typed = incomplete.lstrip("\"'")
    try:
        seat = _seat(Path(ctx.params.get("game") or os.environ.get(GAME_ENV, ".")), ctx.params.get("identity"),
                     passphrase_file)
        orders = legal_orders(seat)
    except Exception:  # noqa: BLE001 - completion must never fail loudly
        return []
    return [o for o in orders if o.lower().startswith(typed.lower())]


@cli.command("do")
@click.argument("orders", nargs=-1, shell_complete=_complete_orders)
@orders_file_option
@game_option
@identity_option
@passphrase_option
@json_option
def do_cmd(orders: tuple[str, ...], orders_file: Path | None, game: Path, identity: Path | None,
           passphrase_file: Path | None, as_json: bool) -> None:
    """Add ORDERS to your draft; each is checked at once and all problems are listed."""
    from pbem.errors import UsageProblem
    from pbem.session import add_orders

    texts = _orders(orders, orders_file)
    if not texts:
        raise UsageProblem("no orders given (see 'pbem options')")
    seat = _seat(game, identity, passphrase_file, exclusive=True)
    added = add_orders(seat, texts)
    _emit({"added": [o.text for o in added]}, as_json, "\n".join(f"added: {o.text}" for o in added))


@cli.command()
@click.argument("count", type=click.IntRange(min=1), required=False)
@click.option("--all", "all_", is_flag=True, help="Drop the whole draft.")
@game_option
@identity_option
@passphrase_option
@json_option
def undo(count: int | None, all_: bool, game: Path, identity: Path | None, passphrase_file: Path | None,
         as_json: bool) -> None:
    """Drop the last COUNT draft orders (default 1). Signed events are final."""
    from pbem.session import undo as undo_orders

    seat = _seat(game, identity, passphrase_file, exclusive=True)
    removed = undo_orders(seat, None if all_ else (count or 1))
    _emit({"removed": [o.text for o in removed]}, as_json,
          "\n".join(f"removed: {o.text}" for o in removed) or "the draft is empty")


@cli.command()
@click.option("--email", default=None, help="Your email address for this game.")
@click.option("--opponent-email", default=None, help="Your opponent's email address for this game.")
@game_option
@json_option
def address(email: str | None, opponent_email: str | None, game: Path, as_json: bool) -> None:
    """Show or set this game's email addresses (they stay on this machine, in
    GAME/local.json, never in the signed log), e.g. after 'pbem new' or 'join'."""
    import msgspec

    from pbem.mail import check_address
    from pbem.store import GameDir

    gd = GameDir(game)
    gd.require()
    for value, option in ((email, "--email"), (opponent_email, "--opponent-email")):
        if value:
            check_address(value, option)
    with gd.lock(exclusive=True):
        local = gd.read_local()
        if email is not None or opponent_email is not None:
            local = msgspec.structs.replace(local, email=local.email if email is None else email,
                                            opponent_email=local.opponent_email if opponent_email is None
                                            else opponent_email)
            gd.write_local(local)
    _emit({"email": local.email, "opponent_email": local.opponent_email}, as_json,
          f"you: {local.email or '(not set)'}\nopponent: {local.opponent_email or '(not set)'}")


@cli.command()
@click.argument("names", nargs=-1)
@click.option("--off", multiple=True, help="Cancel this standing order (repeatable).")
@click.option("--clear", is_flag=True, help="Cancel every standing order.")
@game_option
@json_option
def standing(names: tuple[str, ...], off: tuple[str, ...], clear: bool, game: Path, as_json: bool) -> None:
    """Show or set standing orders: routine choices the game leaves to you
    (e.g. RitD 'losses-auto', 'pursue-all') that pbem's automatic answer
    ('pbem receive', 'pbem watch') then makes for you while you are away.
    They stay on this machine (GAME/local.json), never in the signed log;
    each order pbem gives is signed and sent like yours, and a step where
    the order is not legal waits for you."""
    import msgspec

    from pbem.errors import UsageProblem
    from pbem.session import rules_for
    from pbem.store import GameDir

    gd = GameDir(game)
    gd.require()
    offered = rules_for(gd).standing_orders()
    unknown = [n for n in names + off if n not in offered]
    if unknown:
        known = ", ".join(offered) if offered else "none: this game offers no standing orders"
        raise UsageProblem(f"no standing order {', '.join(repr(n) for n in unknown)} in this game (it offers: {known})")
    with gd.lock(exclusive=True):
        local = gd.read_local()
        now = () if clear else local.standing
        now = tuple(n for n in offered if (n in now or n in names) and n not in off)
        if now != local.standing:
            local = msgspec.structs.replace(local, standing=now)
            gd.write_local(local)
    lines = [f"{'on ' if n in now else 'off'}  {n}: {words}" for n, words in offered.items()] or [
        "this game offers no standing orders"]
    _emit({"standing": list(now), "offered": offered}, as_json, "\n".join(lines))


@cli.command()
@click.option("--note", default="", help="A message to your opponent, sent in the event.")
@click.option("--open-all", is_flag=True, help="Open all your commitments for the audit (only when the game is over: see pbem resign).")
@click.option("--since", type=int, default=None,
              help="Do not sign anything: re-export events SINCE.. to resend a lost turn file.")
@click.option("--eml", is_flag=True, help="Also write an email message (.eml) carrying the turn file.")
@click.option("--smtp", is_flag=True, help="Send the email through the SMTP server of --smtp-config.")
@click.option("--smtp-config", type=_PATH, default=None,
              help="SMTP settings (TOML; default $PBEM_HOME/smtp.toml); the password from its password_command, "
                   "the system keyring, the file itself if only you can read it, or $PBEM_SMTP_PASSWORD.")
@click.option("--from", "sender", default="", help="Sender address (default: the game's --email).")
@click.option("--to", "recipient", default="", help="Recipient address (default: the game's --opponent-email).")
@click.option("--force", is_flag=True, help="Sign even though the draft leaves the next decision with you.")
@out_option
@game_option
@identity_option
@passphrase_option
@json_option
def send(note: str, open_all: bool, since: int | None, eml: bool, smtp: bool, smtp_config: Path | None,
         sender: str, recipient: str, force: bool, out: Path | None, game: Path, identity: Path | None,
         passphrase_file: Path | None, as_json: bool) -> None:
    """Sign your draft into the next event and write the turn file to send
    (and, with --eml or --smtp, the email that carries it). The addresses and
    the SMTP settings are checked before anything is signed; an event signed
    but not delivered is resent by the same command."""
    from pbem.session import export_turn
    from pbem.session import send as send_turn
    from pbem.store import GameDir

    if eml or smtp:  # before any passphrase or signature (issue 21): nothing signed that cannot go
        _check_mail_settings(GameDir(game), sender=sender, recipient=recipient, smtp=smtp,
                             smtp_config=smtp_config)
    if since is not None:
        gd = GameDir(game)
        with gd.lock(exclusive=False):
            sent = export_turn(gd, since, out)
    else:
        seat = _seat(game, identity, passphrase_file, exclusive=True)
        if open_all:
            from pbem.session import require_game_over_for_open_all

            require_game_over_for_open_all(seat.replay)
        else:
            _check_draft_is_a_turn(seat, force)
        offer = seat.replay.standing_offer()
        sent = send_turn(seat, note=note, open_all=open_all, out=out)
        if offer is not None and offer[0] != seat.role and seat.replay.standing_offer() is None:
            click.echo(f"your orders play on: {offer[0]}'s draw offer of event {offer[1]} is declined "
                       "(decision 26)", err=True)
        if sent.resent:
            click.echo(f"nothing new to sign: events {sent.seqs[0]}-{sent.seqs[-1]} were signed by an earlier "
                       "'pbem send' (interrupted?); their turn file is written again", err=True)
    _print_turn_to_stdout(sent, game)
    extra: dict[str, Any] = {}
    if eml or smtp:
        extra = _mail_turn(game, sent, sender=sender, recipient=recipient, write_eml=eml, smtp=smtp,
                           smtp_config=smtp_config)
    _sent_report(sent, as_json, extra)


def _mail_options(f: Any) -> Any:
    """--eml, --smtp, --smtp-config, --from, --to: as 'pbem send' takes them."""
    for option in reversed((
        click.option("--eml", is_flag=True, help="Also write an email message (.eml) carrying the turn file."),
        click.option("--smtp", is_flag=True, help="Send the email through the SMTP server of --smtp-config."),
        click.option("--smtp-config", type=_PATH, default=None,
                     help="SMTP settings (TOML; default $PBEM_HOME/smtp.toml)."),
        click.option("--from", "sender", default="", help="Sender address (default: the game's --email)."),
        click.option("--to", "recipient", default="", help="Recipient address (default: the game's "
                     "--opponent-email)."),
    )):
        f = option(f)
    return f


def _sign_end(game: Path, identity: Path | None, passphrase_file: Path | None, end: str, *, note: str,
              out: Path | None, mail: dict[str, Any], as_json: bool, confirm: str = "") -> None:
    """Sign a resignation or a draw offered, accepted or declined (decision 26)
    and deliver its turn file like 'pbem send'. ``confirm``: the question asked
    first (refused without a terminal unless --yes)."""
    from pbem import codec
    from pbem.session import _require_ends, accept_draw, resign, send
    from pbem.store import GameDir

    if mail["eml"] or mail["smtp"]:
        _check_mail_settings(GameDir(game), sender=mail["sender"], recipient=mail["recipient"], smtp=mail["smtp"],
                             smtp_config=mail["smtp_config"])
    seat = _seat(game, identity, passphrase_file, exclusive=True)
    if not _already_signed(seat, end):
        _require_ends(seat.replay, end)  # before the question: say at once why it cannot be signed
        if confirm and not click.confirm(confirm, default=False, err=True):
            raise click.exceptions.Exit(1)
    if end == codec.RESIGN:
        sent = resign(seat, note=note, out=out)
    elif end == codec.DRAW_ACCEPT:
        sent = accept_draw(seat, note=note, out=out)
    else:
        sent = send(seat, note=note, out=out, end=end)
    if sent.resent:
        click.echo(f"already signed: event {sent.seqs[-1]}; its turn file is written again", err=True)
    _print_turn_to_stdout(sent, game)
    extra: dict[str, Any] = {}
    if mail["eml"] or mail["smtp"]:
        extra = _mail_turn(game, sent, sender=mail["sender"], recipient=mail["recipient"], write_eml=mail["eml"],
                           smtp=mail["smtp"], smtp_config=mail["smtp_config"])
    outcome = seat.replay.outcome()
    if outcome is not None:
        click.echo(f"game over: {outcome.summary}", err=True)
    _sent_report(sent, as_json, extra)


def _already_signed(seat: Any, end: str) -> bool:
    """Whether my last event already is this terminal event (a run whose delivery failed)."""
    last = seat.replay.history[-1]
    return last.author == seat.role and last.end == end and seat.replay.ended is not None


@cli.command()
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@click.option("--note", default="", help="A message to your opponent, sent in the event.")
@_mail_options
@out_option
@game_option
@identity_option
@passphrase_option
@json_option
def resign(yes: bool, note: str, eml: bool, smtp: bool, smtp_config: Path | None, sender: str, recipient: str,
           out: Path | None, game: Path, identity: Path | None, passphrase_file: Path | None,
           as_json: bool) -> None:
    """Resign the game: your opponent wins. The signed resignation opens every
    secret of yours (so the whole game can be audited) and nothing but the
    opponent's openings may follow it. Signed when the decision is yours."""
    from pbem import codec

    mail = {"eml": eml, "smtp": smtp, "smtp_config": smtp_config, "sender": sender, "recipient": recipient}
    _sign_end(game, identity, passphrase_file, codec.RESIGN, note=note, out=out, mail=mail, as_json=as_json,
              confirm="" if yes else "Resign this game? Your opponent wins and every secret of yours is opened")


@cli.command()
@click.argument("what", type=click.Choice(["offer", "accept", "decline"]))
@click.option("--yes", is_flag=True, help="Do not ask for confirmation (accept).")
@click.option("--note", default="", help="A message to your opponent, sent in the event.")
@_mail_options
@out_option
@game_option
@identity_option
@passphrase_option
@json_option
def draw(what: str, yes: bool, note: str, eml: bool, smtp: bool, smtp_config: Path | None, sender: str,
         recipient: str, out: Path | None, game: Path, identity: Path | None, passphrase_file: Path | None,
         as_json: bool) -> None:
    """Offer a draw (it rides on your draft, sent with it), accept your
    opponent's offer (the game ends drawn; your secrets are opened) or decline
    it. An offer stands until the opponent accepts, declines or plays on."""
    from pbem import codec

    end = {"offer": codec.DRAW_OFFER, "accept": codec.DRAW_ACCEPT, "decline": codec.DRAW_DECLINE}[what]
    mail = {"eml": eml, "smtp": smtp, "smtp_config": smtp_config, "sender": sender, "recipient": recipient}
    _sign_end(game, identity, passphrase_file, end, note=note, out=out, mail=mail, as_json=as_json,
              confirm="" if yes or what != "accept" else "Accept the draw? The game ends drawn and every secret "
              "of yours is opened")


@cli.group()
def takeback() -> None:
    """An agreed takeback (docs/protocol.md decision 28): you ask back your
    last events (a signed request, outside the log); your opponent grants it
    in its next event (both signatures in the log) and the game returns to
    what it was before them. Dice rolled, secrets shown and deck work are
    never taken back."""


def _read_request(path: Path) -> bytes:
    from pbem.fileio import read_regular
    from pbem.takeback import MAX_REQUEST_BYTES

    if str(path) == "-":
        return sys.stdin.buffer.read(MAX_REQUEST_BYTES + 1)
    return read_regular(path, MAX_REQUEST_BYTES, "takeback request")


@takeback.command("ask")
@click.option("--from", "first", type=click.IntRange(min=1), default=None,
              help="The first event to take back (default: your first since your opponent's last).")
@click.option("-o", "--out", type=_PATH, default=None,
              help="Where to write the request (default: GAME/outbox/; '-' for stdout).")
@click.option("--eml", is_flag=True, help="Also write an email message (.eml) carrying the request.")
@click.option("--smtp", is_flag=True, help="Send that email through the SMTP server of --smtp-config.")
@click.option("--smtp-config", type=_PATH, default=None,
              help="SMTP settings (TOML; default $PBEM_HOME/smtp.toml).")
@click.option("--from-address", "sender", default="", help="Sender address (default: the game's --email).")
@click.option("--to", "recipient", default="", help="Recipient address (default: the game's --opponent-email).")
@game_option
@identity_option
@passphrase_option
@json_option
def takeback_ask(first: int | None, out: Path | None, eml: bool, smtp: bool, smtp_config: Path | None,
                 sender: str, recipient: str, game: Path, identity: Path | None, passphrase_file: Path | None,
                 as_json: bool) -> None:
    """Ask your opponent to let you take back your last events: writes a
    signed request to send them (nothing is added to the log)."""
    from pbem.fileio import write_atomic
    from pbem.mail import smtp_send_configured
    from pbem.store import GameDir
    from pbem.takeback import ask, request_email

    if eml or smtp:
        if out is not None and str(out) == "-":
            raise click.UsageError("--eml and --smtp need the request in a file, not on stdout")
        _check_mail_settings(GameDir(game), sender=sender, recipient=recipient, smtp=smtp, smtp_config=smtp_config)
    seat = _seat(game, identity, passphrase_file, exclusive=True)
    asked = ask(seat, first=first, out=out)
    r = asked.request
    data: dict[str, Any] = {"request": str(asked.path), "first": r.first, "last": r.head_seq, "head": r.head}
    lines = [f"takeback request for events {r.first}..{r.head_seq} written to {asked.path}: send it to "
             f"{asked.granter}, who grants it with 'pbem takeback grant FILE'"]
    if eml or smtp:
        message = request_email(seat.gd, asked, sender=sender, recipient=recipient)
        if eml:
            data["eml"] = str(asked.path.with_suffix(".eml"))
            write_atomic(asked.path.with_suffix(".eml"), message)
            lines.append(f"email message {data['eml']}")
        if smtp:
            where, warnings = smtp_send_configured(smtp_config or _home() / "smtp.toml", message)
            lines += [f"warning: {w}" for w in warnings] + [f"sent by email through {where}"]
            data["smtp"] = where
    if str(asked.path) != "-":
        _emit(data, as_json, "\n".join(lines))


@takeback.command("grant")
@click.argument("request", type=_PATH)
@click.option("--note", default="", help="A message to your opponent, sent in the event.")
@_mail_options
@out_option
@game_option
@identity_option
@passphrase_option
@json_option
def takeback_grant(request: Path, note: str, eml: bool, smtp: bool, smtp_config: Path | None, sender: str,
                   recipient: str, out: Path | None, game: Path, identity: Path | None,
                   passphrase_file: Path | None, as_json: bool) -> None:
    """Grant your opponent's takeback REQUEST: signs your next event carrying
    it; the game returns to what it was before the events it names."""
    from pbem.store import GameDir
    from pbem.takeback import grant, sentence

    data = _read_request(request)
    if eml or smtp:
        _check_mail_settings(GameDir(game), sender=sender, recipient=recipient, smtp=smtp, smtp_config=smtp_config)
    from pbem.session import live_draft

    seat = _seat(game, identity, passphrase_file, exclusive=True)
    drafted = len(live_draft(seat).orders)
    sent = grant(seat, data, str(request), note=note, out=out)
    click.echo(sentence(seat.replay.history[-1]), err=True)
    if drafted:
        click.echo(f"your draft ({drafted} order(s)) was dropped: it answered the events taken back", err=True)
    _print_turn_to_stdout(sent, game)
    extra: dict[str, Any] = {}
    if eml or smtp:
        extra = _mail_turn(game, sent, sender=sender, recipient=recipient, write_eml=eml, smtp=smtp,
                           smtp_config=smtp_config)
    _sent_report(sent, as_json, extra)


@takeback.command("refuse")
@click.argument("request", type=_PATH)
@game_option
@json_option
def takeback_refuse(request: Path, game: Path, as_json: bool) -> None:
    """Refuse your opponent's takeback REQUEST: nothing is signed; says how to tell them."""
    from pbem.session import load_public
    from pbem.store import GameDir
    from pbem.takeback import refusal_text

    gd = GameDir(game)
    gd.require()
    data = _read_request(request)
    with gd.lock(exclusive=False):
        replay = load_public(gd)
    text = refusal_text(data, str(request), replay)
    _emit({"granted": False, "text": text}, as_json, text)


def _check_mail_settings(gd: Any, *, sender: str, recipient: str, smtp: bool, smtp_config: Path | None) -> None:
    """The addresses, and for --smtp the server settings and the password,
    as the email will need them; UsageProblem (nothing signed yet) if not."""
    from pbem import credentials
    from pbem.errors import UsageProblem
    from pbem.mail import check_address, load_smtp_config

    gd.require()
    local = gd.read_local()
    for value, option in ((sender or local.email, "--from"), (recipient or local.opponent_email, "--to")):
        if not value:
            raise UsageProblem("email needs --from and --to, or the game's addresses: 'pbem address --email "
                               "ME --opponent-email THEM'; nothing was signed")
        check_address(value, option)
    if smtp:
        config_path = smtp_config or _home() / "smtp.toml"
        config = load_smtp_config(config_path)
        if config.username:
            credentials.password(config_path, config.username, in_file=config.password,
                                 command=config.password_command, use_keyring=config.keyring)


def _check_draft_is_a_turn(seat: Any, force: bool) -> None:
    """Refuse to sign an empty draft while the decision is the sender's, and
    (unless --force) a draft after which the decision is still the sender's:
    the opponent would get an email and nothing to do (issue 21)."""
    from pbem.deck import DECK
    from pbem.errors import UsageProblem
    from pbem.rulesapi import DICE
    from pbem.session import draft_replay, live_draft, pending_text

    decision = seat.replay.pending()
    if decision is None or decision.role != seat.role or decision.kind in (DICE, DECK) \
            or seat.replay.outcome() is not None:
        return  # a resend, an automatic answer or the audit's openings: send as before
    if not live_draft(seat).orders:
        raise UsageProblem(f"your draft is empty and the decision is yours ({pending_text(decision)}): add "
                           "orders with 'pbem do' ('pbem options' lists them); nothing was signed")
    probe, _ = draft_replay(seat)
    after = probe.pending()
    if not force and after is not None and after.role == seat.role and after.kind not in (DICE, DECK) \
            and probe.outcome() is None:
        raise UsageProblem(f"after your draft the decision is still yours ({pending_text(after)}): add the "
                           "rest of your orders, or send with --force; nothing was signed")


def _mail_turn(game: Path, sent, *, sender: str, recipient: str, write_eml: bool, smtp: bool,
               smtp_config: Path | None) -> dict[str, Any]:
    from pbem.mail import deliver_turn
    from pbem.store import GameDir

    done, lines = deliver_turn(GameDir(game), sent, sender=sender, recipient=recipient, write_eml=write_eml,
                               smtp_config=(smtp_config or _home() / "smtp.toml") if smtp else None)
    for line in lines:
        click.echo(f"pbem: {line}" if line.startswith("warning: ") else line, err=True)
    return done


@cli.command()
@click.argument("files", nargs=-1, required=True, type=_PATH)
@click.option("--no-auto", is_flag=True, help="Do not answer dice requests automatically.")
@game_option
@identity_option
@passphrase_option
@json_option
def receive(files: tuple[Path, ...], no_auto: bool, game: Path, identity: Path | None,
            passphrase_file: Path | None, as_json: bool) -> None:
    """Verify the opponent's turn FILES and append their events. Each FILE is a
    turn file, an email (.eml), an mbox or a Maildir ('-': stdin); from
    mailboxes only this game's turn files are taken. Events already held are
    skipped. When the opponent's dice only wait for your entropy, pbem
    answers at once with a turn file."""
    from pbem.fileio import refuse_special_inputs

    refuse_special_inputs(files)  # a device or FIFO is refused at once, before the passphrase

    from pbem.session import dice_text, pending_text
    from pbem.session import receive as receive_turns
    from pbem.turnfile import MAGIC, parse_turn
    seat = _seat(game, identity, passphrase_file, exclusive=True)
    inputs: list[tuple[str, bytes]] = []
    skipped = 0
    others: list[str] = []
    for f in files:
        if str(f) != "-" and f.is_file():
            with open(f, "rb") as fh:
                if fh.read(64).lstrip(b"\r\n").startswith(MAGIC.encode()):
                    inputs.append((str(f), _read_input(f)))  # a bare turn file: no email parsing needed
                    continue
        from pbem.mail import turn_files_from_path

        kind, found = turn_files_from_path(f, _read_input(f) if str(f) == "-" else None)
        if kind == "turn file":
            inputs += found
            continue
        for name, data in found:
            header_game = parse_turn(data, name).header.get("game", "")
            if header_game == seat.replay.game_hex:
                inputs.append((name, data))
            else:
                skipped += 1
                others.append(header_game)
    if not inputs:
        from pbem.errors import BadFile, ForeignGame
        from pbem.game import short_game
        from pbem.text import shown

        where = ", ".join(shown(str(f)) for f in files)
        if others:
            seen = list(dict.fromkeys(short_game(g) for g in others))
            games = ", ".join(seen[:5]) + (f" and {len(seen) - 5} more" if len(seen) > 5 else "")
            raise ForeignGame(f"{where}: every turn file in it belongs to another game (game {games}; this "
                              f"game is {short_game(seat.replay.game_hex)}): nothing was stored")
        raise BadFile("no turn file of this game found in " + where)
    result = receive_turns(seat, inputs, auto_reply=not no_auto, forced=True)
    lines = [f"skipped {skipped} turn file(s) of other games"] if skipped else []
    if result.appended:
        lines.append(f"received events {result.appended[0]}-{result.appended[-1]}")
    if result.duplicates:
        lines.append(f"already held, skipped: events {result.duplicates}")
    if not result.appended and not result.duplicates:
        lines.append("nothing new")
    history = seat.replay.history
    last = history[-1]
    for info in (history[seq] for seq in result.appended):  # entry seq is event seq's
        if info.rolls is not None:
            lines.append(f"dice asked in event {info.rolls.asked_seq} by {info.rolls.asker}: "
                         f"{dice_text(info.rolls.values, info.rolls.sides, seat.rules, info.rolls.purposes, info.rolls.results)}")
    if result.auto_reply is not None:
        from pbem.mail import mail_automatic_answer

        said = result.auto_reply.said
        lines.append(f"answered automatically: turn file {result.auto_reply.turn_file}")
        if said:
            lines.append("  with " + "; ".join(said))
        lines += mail_automatic_answer(seat.gd, result.auto_reply, _home() / "smtp.toml")
    elif result.waiting_for_dice:
        lines.append("the opponent's dice wait for your entropy: run 'pbem send'")
    lines.append(f"next decision: {pending_text(seat.replay.pending())}")
    out = {"appended": result.appended, "duplicates": result.duplicates, "head": last.seq,
           "auto_reply": str(result.auto_reply.turn_file) if result.auto_reply else None,
           "pending": pending_text(seat.replay.pending())}
    _emit(out, as_json, "\n".join(lines))


# -- mail from an IMAP mailbox: fetch and watch (issue 21 point 6) ------------------------

imap_config_option = click.option(
    "--imap-config", type=_PATH, default=None,
    help="IMAP settings (TOML; default $PBEM_HOME/imap.toml); the password from its password_command, the "
         "system keyring, the file itself if only you can read it, or $PBEM_IMAP_PASSWORD.")
answer_smtp_option = click.option(
    "--smtp-config", type=_PATH, default=None,
    help="SMTP settings for the automatic answers' emails (default $PBEM_HOME/smtp.toml).")
passphrase_command_option = click.option(
    "--passphrase-command", envvar="PBEM_PASSPHRASE_COMMAND", default=None,
    help="A command printing the identity passphrase (or $PBEM_PASSPHRASE_COMMAND), run once at start.")


def _mail_setup(games: tuple[Path, ...], identity: Path | None, passphrase_file: Path | None,
                passphrase_command: str | None, imap_config: Path | None):
    """Games, their unlocked identities (each key asked for ONCE, at start) and the
    IMAP connection factory with its password, for fetch and watch."""
    from pbem.identity import load_identity, read_key_file
    from pbem.imap import load_imap_config, open_mailbox, password_for
    from pbem.watch import games_here, identity_paths, passphrase_from_command

    found, notes = games_here(_home(), games)
    for note in notes:
        click.echo(f"pbem: note: {note}", err=True)
    config_path = imap_config or _home() / "imap.toml"
    config = load_imap_config(config_path)  # settings and password first: nothing asked that cannot run
    secret, warnings = password_for(config, config_path)
    for w in warnings:
        click.echo(f"pbem: warning: {w}", err=True)
    keys = identity_paths(found, identity)
    unlocked: dict[Path, Any] = {}
    # --passphrase-file, else the command, else $PBEM_PASSPHRASE, else a prompt per key.
    shared = passphrase_from_command(passphrase_command) if passphrase_command and passphrase_file is None \
        else None
    for path in keys:
        read_key_file(path)  # a missing or damaged key is named before any passphrase
        if shared is None and passphrase_file is None and len(keys) > 1:
            click.echo(f"identity key {path}:", err=True)
        unlocked[path] = load_identity(path, shared if shared is not None else _passphrase(passphrase_file))
    by_game = {gd.path: unlocked[path] for path, gds in keys.items() for gd in gds}
    return found, (lambda gd: by_game[gd.path]), (lambda: open_mailbox(config, secret))


@cli.command()
@click.argument("games", nargs=-1, type=_PATH)
@imap_config_option
@answer_smtp_option
@identity_option
@passphrase_option
@passphrase_command_option
@json_option
def fetch(games: tuple[Path, ...], imap_config: Path | None, smtp_config: Path | None, identity: Path | None,
          passphrase_file: Path | None, passphrase_command: str | None, as_json: bool) -> None:
    """Take turn mail straight from your IMAP mailbox into GAMES (default: every
    game on this machine, as 'pbem new' and 'pbem join' listed them in
    $PBEM_HOME/games), in log order, answering automatically as 'pbem receive'
    does. Each message taken is marked $PbemTaken and \\Seen; nothing is
    deleted. A message that fails stays unmarked and is named with its error."""
    from pbem.watch import fetch as fetch_mail

    found, unlock, mailbox = _mail_setup(games, identity, passphrase_file, passphrase_command, imap_config)
    from pbem.watch import SEEN_FILE

    result = fetch_mail(mailbox(), found, unlock, smtp_config or _home() / "smtp.toml", seen=_home() / SEEN_FILE)
    problems = [str(f) for f in result.failures] + ([str(result.dropped)] if result.dropped else [])
    summary = f"{len(result.taken)} message(s) taken" + (f", {result.unrelated} without a turn file left alone"
                                                         if result.unrelated else "")
    _emit({"taken": result.taken, "lines": result.lines, "unrelated": result.unrelated,
           "failures": [{"uid": f.uid, "subject": f.subject, "error": f.error.message, "exit": f.error.exit_code}
                        for f in result.failures],
           "dropped": str(result.dropped) if result.dropped else None}, as_json,
          "\n".join([*result.lines, summary]))
    for line in problems:
        click.echo(f"pbem: {line}", err=True)
    if result.exit_code:
        click.get_current_context().exit(result.exit_code)


@cli.command()
@click.argument("games", nargs=-1, type=_PATH)
@click.option("--interval", type=click.FloatRange(min=1), default=60, show_default=True,
              help="Seconds between passes.")
@click.option("--once", is_flag=True, help="One pass, then exit (its exit code says what failed).")
@imap_config_option
@answer_smtp_option
@identity_option
@passphrase_option
@passphrase_command_option
def watch(games: tuple[Path, ...], interval: float, once: bool, imap_config: Path | None, smtp_config: Path | None,
          identity: Path | None, passphrase_file: Path | None, passphrase_command: str | None) -> None:
    """Run 'pbem fetch', the automatic answers (entropy, deck steps) and their
    emails every --interval seconds for GAMES (default: every game on this
    machine), one line per thing done, until Ctrl-C or SIGTERM (which finish
    the step under way). The identity key is unlocked once, at start: the
    prompt, --passphrase-file, $PBEM_PASSPHRASE or --passphrase-command. Exits 6
    if a game stops (equivocation evidence)."""
    from pbem.watch import watch as run_watch

    found, unlock, mailbox = _mail_setup(games, identity, passphrase_file, passphrase_command, imap_config)
    click.echo(f"watching {len(found)} game(s): " + ", ".join(str(gd.path) for gd in found)
               + ("" if once else f"; every {interval:g} s until Ctrl-C"), err=True)
    from pbem.watch import SEEN_FILE

    code = run_watch(mailbox, found, unlock, smtp_config or _home() / "smtp.toml", click.echo,
                     interval=interval, once=once, seen=_home() / SEEN_FILE)
    if code:
        click.get_current_context().exit(code)


@cli.command()
@click.argument("topic")
@click.argument("subject", nargs=-1, required=True)
@game_option
@identity_option
@passphrase_option
def explain(topic: str, subject: tuple[str, ...], game: Path, identity: Path | None,
            passphrase_file: Path | None) -> None:
    """Explain a rule as it applies now, e.g. 'pbem explain supply Tobruk' or
    'pbem explain move 21Pz/5' (what the game's rules offer)."""
    from pbem.errors import NotFound, UsageProblem
    from pbem.session import draft_replay

    seat = _seat(game, identity, passphrase_file)
    if not seat.rules.explain_topics:
        raise NotFound(f"rules '{seat.rules.SPEC.id}' explain nothing")
    probe, _ = draft_replay(seat)
    try:
        lines = seat.rules.explain(probe.state, seat.role, topic, " ".join(subject), probe.ctx(seat.role))
    except ValueError as exc:
        raise UsageProblem(str(exc)) from None
    click.echo("\n".join(lines))


# -- checking -------------------------------------------------------------------------

@cli.command()
@click.argument("directory", type=_PATH, required=False)
@game_option
@json_option
def verify(directory: Path | None, game: Path, as_json: bool) -> None:
    """Verify a whole game offline with public keys only."""
    from pbem.errors import Equivocation
    from pbem.session import evidence_records, load_public, pending_text
    from pbem.store import GameDir

    gd = GameDir(directory or game)
    gd.require()
    with gd.lock(exclusive=False):
        replay = load_public(gd, describe=False)
        records = evidence_records(gd, replay)
    # Only evidence that proves equivocation accuses anyone; a record that does not
    # verify (e.g. kept by an older pbem from a file of another game) is named, not held against anyone.
    evidence = [str(e) for e in records if e.accuses]
    for e in records:
        if not e.valid:
            click.echo(f"pbem: warning: {gd.evidence_dir / e.name}-a.json and -b.json: {e}; "
                       "it accuses nobody", err=True)
        elif e.cleared:
            click.echo(f"pbem: note: {e} (see 'pbem evidence')", err=True)
    outcome = replay.outcome()
    data = {"ok": not evidence, "game": replay.game_hex, "events": replay.seq + 1, "head": replay.head.hex(),
            "pending": pending_text(replay.pending()), "equivocations": evidence,
            "outcome": outcome.summary if outcome else None}
    text = (f"verified {replay.seq + 1} events of game {replay.game_hex[:16]}: signatures, hash chain, "
            f"entropy, openings and every action are valid\nhead {replay.head.hex()}\n"
            f"next decision: {pending_text(replay.pending())}")
    if outcome:
        text += f"\ngame over: {outcome.summary}"
    _emit(data, as_json, text)
    if evidence:
        raise Equivocation("equivocation evidence in this game:", details=evidence)


@cli.command()
@click.option("--check", "check_file", type=_PATH, default=None,
              help="Do not claim: check the claim FILE against its log, or the game's (-g) if given.")
@out_option
@game_option
@identity_option
@passphrase_option
@json_option
def claim(check_file: Path | None, out: Path | None, game: Path, identity: Path | None,
          passphrase_file: Path | None, as_json: bool) -> None:
    """Claim a game whose opponent is past the time control. The first call
    resends your unanswered events and records the resend; once the deadline
    has passed and the resend is two days old without an answer, the next
    call writes a signed claim that anyone can check with --check."""
    from pbem.claims import check_claim_file, claim_step
    from pbem.errors import VerifyError
    from pbem.store import GameDir

    if check_file is not None:
        data = _read_input(check_file)
        gd = GameDir(game)
        source = click.get_current_context().get_parameter_source("game")
        if source is not click.core.ParameterSource.DEFAULT or gd.exists():
            gd.require()
            with gd.lock(exclusive=False):
                verdict = check_claim_file(data, str(check_file), gd.read_events())
        else:
            verdict = check_claim_file(data, str(check_file))
        import msgspec

        _emit({"holds": verdict.holds, "text": verdict.text, "claim": msgspec.to_builtins(verdict.claim)}, as_json,
              verdict.text)
        if not verdict.holds:
            raise VerifyError("the claim does not hold (see above)")
        return
    seat = _seat(game, identity, passphrase_file, exclusive=True)
    step = claim_step(seat, out)
    _emit({"text": step.text, "turn_file": str(step.turn_file or ""), "claim_file": str(step.claim_file or ""),
           "claim_from": step.claim_from}, as_json, step.text)


@cli.group(invoke_without_command=True)
@game_option
@json_option
@click.pass_context
def evidence(ctx: click.Context, game: Path, as_json: bool) -> None:
    """Show this game's equivocation evidence: who signed two events for which
    seq, whether it verifies, and which players consented to clear it. A stop
    is lifted only by both players' signed consents ('pbem evidence clear');
    the evidence stays."""
    if ctx.invoked_subcommand is not None:
        return
    from pbem import evidence as evidencemod
    from pbem.session import load_public
    from pbem.store import GameDir

    gd = GameDir(game)
    gd.require()
    with gd.lock(exclusive=False):
        replay = load_public(gd)
        rows = evidencemod.describe(gd, replay)
        stopped = gd.stopped_reason()
    lines = [f"GAME STOPPED: {stopped}" if stopped else "the game is not stopped"]
    for row in rows:
        consents = [str(c) for c in row["consents"]]  # type: ignore[attr-defined]
        state = ("cleared by both players" if row["cleared"] else
                 f"consents so far: {', '.join(consents) or 'none'}") if row["valid"] else \
            f"does NOT verify ({row['why']}): accuses nobody"
        lines.append(f"{row['record']}: {row['author']} signed two different events for seq {row['seq']}; "
                     f"kept {str(row['stands'])[:16]}, set aside {str(row['other'])[:16]}; {state}")
    if not rows:
        lines.append("no equivocation evidence")
    elif stopped:
        lines.append("if both players agree it was a mistake, each runs 'pbem evidence clear' (the second with "
                     "the first one's consent file); the evidence stays")
    _emit({"stopped": stopped, "records": rows}, as_json, "\n".join(lines))


@evidence.command("clear")
@click.argument("consent_files", nargs=-1, type=_PATH)
@click.option("-o", "--out", type=_PATH, default=None,
              help="Where to write your consent file for the opponent (default: GAME/outbox/).")
@click.option("-g", "--game", type=_PATH, envvar=GAME_ENV, default=None,
              help="Game directory (default: the one given to 'pbem evidence', else $PBEM_GAME, else .).")
@identity_option
@passphrase_option
@json_option
@click.pass_context
def evidence_clear(ctx: click.Context, consent_files: tuple[Path, ...], out: Path | None, game: Path | None,
                   identity: Path | None, passphrase_file: Path | None, as_json: bool) -> None:
    """Sign your consent that this game's equivocation was a mistake and the
    event in your log stands; with the opponent's CONSENT_FILES, check and keep
    their consent too. The stop is lifted when both players' signed consents
    are here; nothing is deleted."""
    from pbem import evidence as evidencemod

    if game is None and ctx.parent is not None:
        game = ctx.parent.params["game"]
    incoming = [(str(f), evidencemod.require_usable(f)) for f in consent_files]
    seat = _seat(Path(game or "."), identity, passphrase_file, exclusive=True)
    done = evidencemod.clear(seat.gd, seat.replay, seat.identity, seat.role, incoming, out)
    stopped = seat.gd.stopped_reason()
    lines = []
    for c in done:
        lines.append(f"{c.record}: consents of {', '.join(c.consented)}"
                     + ("; cleared by both players" if c.lifted else "; waiting for your opponent's consent"))
        if c.consent_file is not None:
            lines.append(f"  send {c.consent_file} to your opponent ('pbem evidence clear FILE' on their side)")
    lines.append(f"the game is still stopped: {stopped}" if stopped else "the game is not stopped")
    _emit({"records": [{"record": c.record, "consents": c.consented, "cleared": c.lifted,
                        "consent_file": str(c.consent_file) if c.consent_file else None} for c in done],
           "stopped": stopped}, as_json, "\n".join(lines))


@cli.command()
@click.argument("directory", type=_PATH, required=False)
@game_option
@json_option
def audit(directory: Path | None, game: Path, as_json: bool) -> None:
    """Replay the whole game with every opened secret known from the start, and
    name the first illegal event and its signer, if any."""
    from pbem.errors import PbemError
    from pbem.session import audit as run_audit
    from pbem.session import rules_for
    from pbem.store import GameDir

    gd = GameDir(directory or game)
    gd.require()
    with gd.lock(exclusive=False):
        events = gd.read_events()
        rules = rules_for(gd)
    try:
        result = run_audit(events, rules)
    except PbemError as exc:
        exc.message = f"audit failed: {exc.message}"
        raise
    complete = not result.unopened
    data = {"ok": True, "complete": complete, "events": result.replay.seq + 1,
            "unopened": result.unopened, "deck_rounds": len(result.deck)}
    text = f"audit of {result.replay.seq + 1} events: every action is legal with all opened secrets known"
    if result.deck:
        cards = len(result.deck[0].labels)
        dealt = sum(1 for d in result.deck for h in d.holders if h)
        text += (f"\nshared deck: {len(result.deck)} shuffles audited, each a permutation of the one deck of "
                 f"{cards} cards with every key opened; {dealt} cards dealt, each once, none in two places")
    if not complete:
        text += "\nnot yet opened (the audit is complete when both players have sent --open-all):"
        for role, labels in sorted(result.unopened.items()):
            text += f"\n  {role}: {len(labels)} commitment(s): {', '.join(sorted(labels)[:8])}"
            text += " ..." if len(labels) > 8 else ""
    _emit(data, as_json, text)


@cli.command()
@click.argument("directory", type=_PATH, required=False)
@game_option
@json_option
def log(directory: Path | None, game: Path, as_json: bool) -> None:
    """List the events of a game: author, actions, dice, what happened, notes (public information)."""
    import msgspec

    from pbem.game import takeback_text
    from pbem.report import said
    from pbem.session import END_WORDS, dice_text, history_json, load_public
    from pbem.store import GameDir
    from pbem.text import escaped

    gd = GameDir(directory or game)
    gd.require()
    with gd.lock(exclusive=False):
        replay = load_public(gd)
    items = history_json(replay.history)
    back = {seq: info.seq for info in replay.history if info.takeback is not None
            for seq in range(info.takeback.first, info.takeback.last + 1)}
    lines = []
    turn = ""
    for item, info in zip(items, replay.history, strict=True):
        # what happened, as the rules say it for the public (issue 26 point 7)
        item["turn"], item["happenings"] = info.turn, msgspec.to_builtins(info.happenings)
        if info.turn and info.turn != turn:
            lines.append(f"== {escaped(info.turn)} ==")
        turn = info.turn or turn
        line = f"{item['seq']:>5}  {item['author']:<8} " + ("; ".join(map(escaped, item["actions"])) or "-")
        if "rolls" in item:
            r = item["rolls"]
            shown = escaped(dice_text(r["values"], r["sides"], replay.rules, r["purposes"], r["results"],
                                      brackets=False))
            line += f"  [dice of event {r['asked_in']}: {shown}]"
        if info.end:
            line += f"  [{END_WORDS.get(info.end, info.end)}]"
        if info.takeback is not None:  # decision 28
            item["takeback"] = msgspec.to_builtins(info.takeback)
            line += f"  [{takeback_text(info)}]"
        if info.seq in back:
            item["taken_back_in"] = back[info.seq]
            line += f"  (taken back in event {back[info.seq]})"
        if item["reveals"]:
            line += f"  (opens {len(item['reveals'])})"
        if item["note"]:
            line += f"  note: {item['note']!r}"
        lines.append(line)
        for h in map(said, info.happenings):
            lines.append(f"{'':>16}* {h.sentence}")
            lines += [f"{'':>20}{key:<10} {value}" for key, value in h.rows]
    _emit(items, as_json, "\n".join(lines))


# -- vault, rules, help ----------------------------------------------------------------

@cli.group()
def vault() -> None:
    """Your encrypted secrets for a game."""


@vault.command("backup")
@click.argument("out", type=_PATH)
@game_option
def vault_backup(out: Path, game: Path) -> None:
    """Copy your (still encrypted) vault to OUT. Without it you cannot open your commitments."""
    from pbem.fileio import read_regular, write_atomic
    from pbem.store import GameDir
    from pbem.vault import MAX_VAULT_BYTES

    gd = GameDir(game)
    gd.require()
    with gd.lock(exclusive=False):
        src = gd.vault_dir / f"{gd.read_local().role}.bin"
        write_atomic(out, read_regular(src, MAX_VAULT_BYTES, "vault"), mode=0o600)
    click.echo(f"vault copied to {out} (encrypted with your identity key)")


@cli.group("rules")
def rules_group() -> None:
    """Installed game rules."""


def _complete_rules(incomplete: str) -> list[str]:
    from pbem import rulesapi

    return [r for r in rulesapi.available() if r.startswith(incomplete)]


def _complete_spec(ctx: click.Context, field: str, incomplete: str) -> list[str]:
    """Shell completion of a rules' scenarios or roles once --rules is typed."""
    from pbem import rulesapi

    rules_id = ctx.params.get("rules_id")
    if not rules_id:
        return []
    try:
        spec = rulesapi.load_any(rules_id).SPEC
    except Exception:  # noqa: BLE001 - completion must never fail loudly
        return []
    values: tuple[str, ...] = {"scenarios": spec.scenarios, "options": spec.options, "roles": spec.roles}.get(field, ())
    return [v for v in values if v.startswith(incomplete)]


@rules_group.command("show")
@click.argument("rules_id")
@json_option
def rules_show(rules_id: str, as_json: bool) -> None:
    """Show a rules module: roles, scenarios, options (with their values), and whether it is playable."""
    import msgspec

    from pbem import rulesapi
    from pbem.errors import NotFound

    rules = rulesapi.load_any(rules_id)
    missing = rulesapi.missing_parts(rules)
    if "SPEC" in missing:
        raise NotFound(f"rules '{rules_id}' have no SPEC yet: {', '.join(missing)} are missing")
    spec = rules.SPEC
    data = {"id": spec.id, "version": spec.version, "title": spec.title, "roles": list(spec.roles),
            "scenarios": list(spec.scenarios), "options": list(spec.options),
            "option_groups": [msgspec.to_builtins(g) for g in spec.option_groups], "playable": not missing}
    lines = [f"{spec.title} (rules {spec.id} version {spec.version})",
             f"roles: {', '.join(spec.roles)}", f"scenarios: {', '.join(spec.scenarios)}", *_option_lines(spec)]
    if missing:
        lines.append(f"not yet playable: {', '.join(missing)} missing")
    _emit(data, as_json, "\n".join(lines))


@rules_group.command("list")
@json_option
def rules_list(as_json: bool) -> None:
    """List installed rules modules."""
    from pbem import rulesapi

    rows = []
    for rid in rulesapi.available():
        rules = rulesapi.load_any(rid)
        missing = rulesapi.missing_parts(rules)
        if "SPEC" in missing:
            doc = (type(rules).__doc__ or "").strip()
            rows.append({"id": rid, "title": doc.splitlines()[0] if doc else "", "playable": False, "scenarios": []})
            continue
        rows.append({"id": rid, "title": rules.SPEC.title, "playable": not missing,
                     "scenarios": list(rules.SPEC.scenarios), "frozen": rulesapi.is_frozen(rid)})
    _emit(rows, as_json, "\n".join(
        f"{r['id']:<8} {r['title']}" + ("" if r["playable"] else "  (not yet playable)")
        + ("  (frozen: for games started under this version)" if r.get("frozen") else "") for r in rows))


@rules_group.command("check")
@click.argument("rules_id")
def rules_check(rules_id: str) -> None:
    """Check a rules module's data files against its rulebook (e.g. unit counts)."""
    from pbem import rulesapi
    from pbem.errors import BadFile, NotFound

    report = rulesapi.load_any(rules_id).data_check_report()
    if report is None:
        raise NotFound(f"rules '{rules_id}' has no data check")
    lines, ok = report
    click.echo("\n".join(lines))
    if not ok:
        raise BadFile(f"{rules_id} data does not match its rulebook (see the lines marked above)")


def _overlays(overlays: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(overlays))


@cli.command("map")
@click.argument("rules_id", required=False)
@click.option("-g", "--game", type=_PATH, default=None,
              help="Draw this game's map with the pieces your side sees (instead of RULES_ID's empty map).")
@identity_option
@passphrase_option
@overlay_option
@click.option("--page", type=click.Choice(["a4", "a3", "letter"]), default="a4", show_default=True,
              help="Landscape page size. A map whose hexes would be under 12 mm across on one page "
                   "is printed as an overview and tiles (then -o names a directory).")
@click.option("-o", "--out", type=_PATH, default=None,
              help="Write the SVG to this .svg file (default: stdout), or into this directory (any "
                   "other path): map.svg, or overview.svg and one tile-NAME.svg per tile.")
def map_cmd(rules_id: str | None, game: Path | None, identity: Path | None, passphrase_file: Path | None,
            overlays: tuple[str, ...], page: str, out: Path | None) -> None:
    """Render the map of RULES_ID, or of a game from your side (-g), as SVG on landscape pages."""
    from pbem import rulesapi
    from pbem.board import render_pages
    from pbem.errors import NotFound, UsageProblem
    from pbem.fileio import write_atomic
    from pbem.report import map_picture

    if (rules_id is None) == (game is None):
        raise UsageProblem("give either RULES_ID (the empty map) or -g GAME (your side's view), not both")
    wanted = _overlays(overlays)
    if game is not None:
        seat = _seat(game, identity, passphrase_file)
        picture = map_picture(seat.rules, seat.rules.view(seat.replay.state, seat.role), wanted)
        waiting = _waiting(seat)
        if waiting:  # hits still to place, half-hits pending (issue 21 point 3): under the title
            import msgspec

            picture = msgspec.structs.replace(picture, subtitle="; ".join(
                [picture.subtitle, *(f"waiting: {line}" for line in waiting)] if picture.subtitle else
                [f"waiting: {line}" for line in waiting]))
    else:
        if wanted:
            raise UsageProblem("map overlays show your side's view of a game: give -g GAME")
        empty = rulesapi.load_any(str(rules_id)).map_picture()
        if empty is None:
            raise NotFound(f"rules '{rules_id}' has no map")
        picture = empty
    pages = render_pages(picture, page)  # type: ignore[arg-type]
    # A path without the .svg suffix (or an existing directory) is a directory.
    to_dir = out if out is not None and str(out) != "-" and (out.is_dir() or out.suffix.lower() != ".svg") else None
    if len(pages) > 1 and to_dir is None:
        raise UsageProblem(f"this map prints as an overview and {len(pages) - 1} tiles on {page} pages: "
                           "give -o DIRECTORY to write them")
    if to_dir is None:
        if out is None or str(out) == "-":
            click.echo(pages[0].svg, nl=False)
        else:
            write_atomic(out, pages[0].svg.encode("utf-8"))
            click.echo(f"map written to {out}", err=True)
        return
    to_dir.mkdir(parents=True, exist_ok=True)
    names = []
    for p in pages:
        name = f"{p.name}.svg" if p.name in ("map", "overview") else f"tile-{p.name}.svg"
        write_atomic(to_dir / name, p.svg.encode("utf-8"))
        names.append(name)
    click.echo(f"map written to {to_dir}: {', '.join(names)}", err=True)


@cli.command()
@click.option("--format", "fmt", type=click.Choice(["html", "text"]), default="html", show_default=True,
              help="HTML for print (A4 or Letter, with the map), or plain text (an email body).")
@click.option("-o", "--out", type=_PATH, default=None,
              help="Write the report here (default: stdout).")
@game_option
@identity_option
@passphrase_option
@overlay_option
def report(fmt: str, out: Path | None, game: Path, identity: Path | None, passphrase_file: Path | None,
           overlays: tuple[str, ...]) -> None:
    """Your printable turn report: the situation from your side, what happened since your last event, the map."""
    import msgspec

    from pbem import report as reportmod
    from pbem.fileio import write_atomic

    seat = _seat(game, identity, passphrase_file)
    wanted = _overlays(overlays)
    built = reportmod.build(seat.replay, seat.role, overlays=wanted)
    waiting = _waiting(seat)
    if waiting:  # what my draft's dice left to settle, as 'pbem show' says it (issue 21 point 3)
        built = msgspec.structs.replace(built, waiting=tuple(waiting))
    text = reportmod.render(built, fmt)  # type: ignore[arg-type]
    if out is None or str(out) == "-":
        click.echo(text, nl=False)
    else:
        write_atomic(out, text.encode("utf-8"))
        click.echo(f"report written to {out}", err=True)


# -- two local players: demo and self-play --------------------------------------------

@cli.command()
@click.option("--rules", "rules_id", default=None,
              help="Rules to demonstrate (default: ritd if it offers a demo, else the first that does).",
              shell_complete=lambda ctx, param, incomplete: _complete_rules(incomplete))
@click.option("--dir", "directory", type=_DIRECTORY, default=None,
              help="Where to play and write the reports (default: a new temporary directory).")
@click.option("--keep", is_flag=True,
              help="Keep the throwaway private keys, to go on exploring the game with 'pbem show -g DIR/ROLE'.")
@click.option("--max-events", type=click.IntRange(min=1), default=1000, show_default=True,
              help="Stop a script that does not end after this many events.")
@json_option
def demo(rules_id: str | None, directory: Path | None, keep: bool, max_events: int, as_json: bool) -> None:
    """Play a short scripted game between two local players with throwaway keys, turn file by
    turn file, then write both players' reports and verify both logs."""
    import tempfile

    from pbem.errors import UsageProblem
    from pbem.table import THROWAWAY_PASSPHRASE, LocalTable, demo_policy, demo_rules

    module = demo_rules(rules_id)
    spec, demo = module.SPEC, module.demo
    if demo is None:  # demo_rules only returns games that offer one
        raise UsageProblem(f"rules '{spec.id}' offer no demo")
    if directory is None:
        directory = Path(tempfile.mkdtemp(prefix="pbem-demo-"))
    echo = (lambda line: None) if as_json else click.echo
    table = LocalTable.create(directory, spec.id, demo.scenario, demo.options, echo=echo)
    echo(f"demo: {spec.title}, scenario {table.scenario}, in {table.directory}")
    echo(f"throwaway identities (passphrase '{THROWAWAY_PASSPHRASE}', not secret): "
         + ", ".join(str(p.key_path) for p in table.players))
    result = table.play(demo_policy(module), max_events)
    summary = (f"game over: {result.outcome.summary}" if result.outcome is not None else
               f"the demo script stopped after {result.events} events" if result.stopped == "script" else
               f"stopped at {result.events} events (--max-events)")
    echo(summary)
    verified = table.verify()
    reports = table.reports(table.directory)
    if not keep:
        table.remove_private_keys()
    for line in verified:
        echo(line)
    if keep:
        echo(f"keys kept: e.g. 'pbem show -g {table.players[0].gd.path}' (passphrase above)")
    else:
        echo("throwaway private keys deleted (--keep keeps them); 'pbem verify', 'pbem audit' and 'pbem log' "
             "work on the game directories without them")
    data = {"rules": spec.id, "scenario": table.scenario, "dir": str(table.directory), "events": result.events,
            "outcome": result.outcome.summary if result.outcome else None, "stopped": result.stopped,
            "games": {p.role: str(p.gd.path) for p in table.players}, "turns": table.log,
            "reports": [str(p) for p in reports]}
    _emit(data, as_json, "\n".join(f"report: {p}" for p in reports))


@cli.command()
@click.option("--rules", "rules_id", required=True, help="Rules id (see 'pbem rules list').",
              shell_complete=lambda ctx, param, incomplete: _complete_rules(incomplete))
@click.option("--scenario", required=True, help="Scenario id of the rules.",
              shell_complete=lambda ctx, param, incomplete: _complete_spec(ctx, "scenarios", incomplete))
@click.option("--seed", type=int, required=True, help="Seed of the random policy (same seed, same choices).")
@click.option("--out", "directory", type=_DIRECTORY, required=True,
              help="Directory for both players' games, throwaway keys and reports.")
@click.option("--max-events", type=click.IntRange(min=1), default=1000, show_default=True,
              help="Stop (successfully) when the log holds this many events.")
@click.option("--option", "options", multiple=True, metavar="NAME[=VALUE]",
              help="Optional rule to use, or an option's value (repeatable): see 'pbem rules show RULES'.")
@click.option("--end-bias", type=click.FloatRange(0.0, 1.0), default=None, metavar="P",
              help="For rules that list orders as a tree: the chance of choosing a group that ends the "
                   "step (default 0.1).")
@click.option("-v", "--verbose", is_flag=True, help="Print one line per turn file (on stderr).")
@json_option
def selfplay(rules_id: str, scenario: str, seed: int, directory: Path, max_events: int, options: tuple[str, ...],
             end_bias: float | None, verbose: bool, as_json: bool) -> None:
    """Play a game between two local players choosing random legal orders
    (random.Random(SEED)) until it ends or --max-events; a decision without any legal
    order is reported as a rules bug (exit 1). The choice is uniform among every legal
    order, or, where the rules list orders as a tree of groups, level by level (a group,
    then an order in it) leaning to the groups that end the step (--end-bias). A turn
    that reaches 200 orders is taken back and played again (random play can wander
    where the step cannot end); after 20 such tries the self-play stops (exit 1)."""
    from pbem.table import END_BIAS, THROWAWAY_PASSPHRASE, LocalTable, RandomPolicy

    echo = (lambda line: click.echo(line, err=True)) if verbose else None
    table = LocalTable.create(directory, rules_id, scenario, options, echo=echo)
    bias = END_BIAS if end_bias is None else end_bias
    result = table.play(RandomPolicy(seed, end_bias=bias), max_events)
    verified = table.verify()
    reports = table.reports(table.directory)
    outcome = result.outcome.summary if result.outcome is not None else None
    lines = [f"{result.events} events; " + (f"game over: {outcome}" if outcome else
                                             f"no outcome: stopped at --max-events {max_events}")]
    lines += verified
    lines += [f"game: {p.gd.path} (key {p.key_path}, passphrase '{THROWAWAY_PASSPHRASE}')" for p in table.players]
    lines += [f"report: {p}" for p in reports]
    data = {"rules": rules_id, "scenario": scenario, "seed": seed, "end_bias": bias, "events": result.events,
            "outcome": outcome,
            "stopped": result.stopped, "games": {p.role: str(p.gd.path) for p in table.players},
            "reports": [str(p) for p in reports], "turns": table.log}
    _emit(data, as_json, "\n".join(lines))


@cli.command("exit-codes")
def exit_codes() -> None:
    """Print the table of exit codes."""
    from pbem.errors import EXIT_CODES

    click.echo("\n".join(f"{code:>3}  {meaning}" for code, meaning in EXIT_CODES))


def main(argv: list[str] | None = None) -> int:
    """Console entry point; returns the process exit code."""
    try:
        result = cli.main(args=argv, prog_name="pbem", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("pbem: aborted", err=True)
        return 1
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except click.exceptions.Exit as exc:
        return exc.exit_code
    # Click returns the code of ctx.exit(code) when not in standalone mode.
    return result if isinstance(result, int) else 0
