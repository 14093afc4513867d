#!/usr/bin/env python3
# new_rows.py FILE SINCE: an export document (JSON) rewritten with the measurements made at or after SINCE (ISO 8601, as the document writes measured_at) alone, and the GPUs that made them: what a run added to a database that imported a shipped document first.
import json
import sys

doc = json.load(open(sys.argv[1]))
doc["measurements"] = [m for m in doc["measurements"] if m["measured_at"] >= sys.argv[2]]
used = {m["gpu"] for m in doc["measurements"]}
doc["gpus"] = [g for g in doc["gpus"] if g["uuid"] in used]
json.dump(doc, open(sys.argv[1], "w"))
print(f"{len(doc['measurements'])} measurements since {sys.argv[2]} of {len(used)} GPUs kept")
