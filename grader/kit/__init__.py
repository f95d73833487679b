"""The test kit for grading tests."""
