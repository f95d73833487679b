"""Instructor operations: batch grading (sandbox, unpacking, Ray), nbgrader, the student release."""
