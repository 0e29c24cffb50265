"""Parking's storage: lots, gates, tickets, passes (store.py) and each gate's numbered offline passes."""
