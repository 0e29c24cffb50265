"""Helpers of the design notebook (docs/design.ipynb): diagrams, trace recording, tables.

Local tooling only: nothing here is deployed. The notebook imports it; tests/docs checks it.
"""
