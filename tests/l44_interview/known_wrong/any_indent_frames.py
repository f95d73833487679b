"""Any indented `name (file:line)` line taken as a frame: --locals values become frames."""

import re

MODULE = "interview"
REJECTED_BY = {"main_thread_stack": ["correctness"]}

FRAME_LINE = re.compile(r"^\s+(\S.*?) \((.+):(\d+)\)\s*$")
