"""Parking's services: lots, gate passes, gate cases, gate sync, exit payments."""
