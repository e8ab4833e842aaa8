"""Run moto's server with every request applied one at a time.

moto's `moto_server` answers requests on several threads, and its
TransactWriteItems applies items one by one, rolling back a failed
transaction by restoring a copy of the whole table taken when it started.
Under concurrent requests that rollback can erase another transaction that
committed in between, which real DynamoDB (serialisable transactions) never
does. The concurrency tests fire real parallel requests, so they need a
stand-in that is at least as strict as DynamoDB: this wraps moto's own WSGI
application in one lock. Connections are still accepted concurrently.

    python3 scripts/moto_serial.py 127.0.0.1 5000
"""

import sys
import threading

from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
from werkzeug.serving import run_simple


def main() -> None:
    host, port = sys.argv[1], int(sys.argv[2])
    app = DomainDispatcherApplication(create_backend_app)
    lock = threading.Lock()

    def serialised(environ, start_response):
        with lock:
            # Materialise the body inside the lock so the whole request is atomic.
            return list(app(environ, start_response))

    run_simple(host, port, serialised, threaded=True, use_reloader=False)


if __name__ == "__main__":
    main()
