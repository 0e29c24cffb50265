"""A parking gate's controller program: runs on the gate's own computer, never deployed to AWS.
See README.md in this folder."""
