"""Panzerarmee Afrika (revised by Christian Holm Christensen, CC BY-SA 4.0): rules package."""
