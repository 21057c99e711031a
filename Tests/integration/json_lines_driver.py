"""The loop the tests' drivers share: prints {"ready": true}, then reads one JSON request per
line on stdin and answers each with one JSON line on stdout, {"ok": true, ...} or
{"ok": false, "error": TEXT}, until stdin closes."""
import json
import sys


def serve(handle):
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            answer = handle(json.loads(line))
            answer["ok"] = True
        except Exception as error:  # noqa: BLE001 - reported to the test, which fails with it
            answer = {"ok": False, "error": str(error)}
        print(json.dumps(answer), flush=True)
