"""The operators' tools: the terminal tool (`python -m holdfast.tools.cli`) and the one-off jobs it runs on the
table (backfill, reindex, adoption) or the logs (metrics report). They ship in the layer but no function
imports them (an import contract in pyproject.toml holds that)."""
