"""pbem: play-by-email adjudicator for board wargames of the North African campaign."""

__version__ = "0.1.0"
