"""Events ' use cases beyond the core's: doors and the check-in of tickets."""
