"""Game rules packages for pbem: one subpackage per game.

Rules packages are pure: they know no files, crypto, email or randomness
source. The engine (``pbem``) calls them through the interface in
``pbem.rulesapi``.
"""
