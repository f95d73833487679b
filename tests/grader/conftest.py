"""Engine tests: pytester for end-to-end runs of the plugin."""

pytest_plugins = ["pytester"]
