"""Use cases. Each service takes its collaborators explicitly, so tests can pass fakes."""
