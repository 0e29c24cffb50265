"""Pure booking rules: no I/O, no clock reads, no AWS."""
