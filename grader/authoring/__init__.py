"""Course authoring: stubs generated from solutions/, known-wrong and known-right implementations."""
