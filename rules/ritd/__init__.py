"""Rommel in the Desert (Columbia Games), rules and data.

"RB n.n" in comments and messages cites the rulebook section
(shared/seeds/rommel-in-the-desert.txt).
"""
