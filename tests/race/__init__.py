"""A tiny test game that exercises every part of the engine (not shipped)."""
