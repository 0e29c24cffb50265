"""Events' own items: doors, check-ins, door passes and check-in cases."""
