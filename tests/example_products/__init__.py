"""Products written outside the engine, as a deployer would add one (docs/architecture.md,
"Adding a product"): each package here is discovered like holdfast/products/ is."""
