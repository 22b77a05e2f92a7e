# strip_json.py: prints a `faultline check --json` object without what differs from one
# check to the next (wall time) or from one machine to the next (the history's path),
# keys sorted, so two checks of the same history compare equal byte for byte.
import json
import sys

VOLATILE = {"wall_ms", "elapsed_ms", "history"}


def strip(v):
    if isinstance(v, dict):
        return {k: strip(x) for k, x in v.items() if k not in VOLATILE}
    if isinstance(v, list):
        return [strip(x) for x in v]
    return v


obj = strip(json.load(sys.stdin))
if "--any-run" in sys.argv[1:]:
    obj.pop("run", None)
print(json.dumps(obj, sort_keys=True, indent=1))
