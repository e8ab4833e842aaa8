"""Run moto's server with every request applied one at a time.

It also answers `GET /_restock/ses/messages` with the emails moto's SES has
accepted (recipient, subject, body), which the end-to-end tests read back;
moto's own `/moto-api/data.json` dumps every stored object and takes minutes
once the tests have written a few thousand items.

moto's `moto_server` answers requests on several threads, and its
TransactWriteItems applies items one by one, rolling back a failed
transaction by restoring a copy of the whole table taken when it started.
Under concurrent requests that rollback can erase another transaction that
committed in between, which real DynamoDB (serialisable transactions) never
does. The concurrency tests fire real parallel requests, so they need a
stand-in that is at least as strict as DynamoDB: this wraps moto's own WSGI
application in one lock. Connections are still accepted concurrently.

It also puts scripts/dynamo_strict.py in front of moto's DynamoDB (on
unless RESTOCK_STRICT_DYNAMODB=0): index reads that lag the table by
RESTOCK_INDEX_LAG_MS, ClientRequestToken as documented, transaction
conflicts and throttles at RESTOCK_FAULT_RATE, and 1 MB query pages.

    python3 scripts/moto_serial.py 127.0.0.1 5000
"""

import json
import sys
import threading

from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
from werkzeug.serving import run_simple

import dynamo_strict


def ses_messages() -> list:
    from moto.ses.models import ses_backends

    messages = []
    for account in list(ses_backends.keys()):
        for region in list(ses_backends[account].keys()):
            for m in ses_backends[account][region].sent_messages:
                messages.append({
                    "to": (getattr(m, "destinations", None) or {}).get("ToAddresses", []),
                    "subject": getattr(m, "subject", ""),
                    "body": getattr(m, "body", ""),
                })
    return messages


def main() -> None:
    host, port = sys.argv[1], int(sys.argv[2])
    app = DomainDispatcherApplication(create_backend_app)
    strict = dynamo_strict.from_env(app)
    lock = threading.Lock()

    def serialised(environ, start_response):
        if environ.get("PATH_INFO") == "/_restock/ses/messages":
            with lock:
                body = json.dumps(ses_messages()).encode()
            start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
            return [body]
        with lock:
            # Materialise the body inside the lock so the whole request is atomic.
            if strict is not None:
                return list(strict.handle(environ, start_response))
            return list(app(environ, start_response))

    run_simple(host, port, serialised, threaded=True, use_reloader=False)


if __name__ == "__main__":
    main()
