"""Rommel in the Desert, rules version 3: FROZEN.

This package is the rules of version 3 exactly as released (commit 50a855f^,
"rules.ritd" renamed "rules.ritd_v3" in its imports and nothing else), so
that a game started under version 3 verifies, audits and plays to its end
(docs/protocol.md, "Rules versions"). Never edit it: it is exempt from
"one rule, one place" because it must not change. Version 4 differs in two
rules (MV-06, MV-08); the current rules are ``rules.ritd``.
"""

from __future__ import annotations

from rules.ritd import RitdRules

RULES = RitdRules("rules.ritd_v3")
