"""Run moto's server with every request applied one at a time.

It also answers `GET /_restock/ses/messages` with the emails moto's SES has
accepted (recipient, subject, body), and `GET /_restock/sns/texts` with the
texts moto's SNS has sent (number, text), which the end-to-end tests read back;
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

Two of moto's costs grow with everything a test run writes, and both are
trimmed here (`lighten_moto`): every write to a table with a stream appends
a stream record that is never dropped (so only tables named
`restock-streamed-*` keep their stream, for the tests that read it: the
others hand notify the stream records themselves), and every
TransactWriteItems deep-copies each table it names, with those records, in
case it has to roll back. Unchecked, one server grew past 12 GB and a join
took longer the more had been written before it. Here a transaction saves
only the items it touches and puts them back if moto rolls it back.

It also puts scripts/dynamo_strict.py in front of moto's DynamoDB (on
unless RESTOCK_STRICT_DYNAMODB=0): index reads that lag the table by
RESTOCK_INDEX_LAG_MS, ClientRequestToken as documented, transaction
conflicts and throttles at RESTOCK_FAULT_RATE, and 1 MB query pages.

It counts how long requests waited for the lock and how long they held it
(`GET /_restock/serial/stats`: requests, busy_s, waited_s), and with
RESTOCK_DOUBLE_PROFILE=FILE it profiles every request applied (cProfile,
which sees only the thread that enables it: here the one holding the lock)
and writes the stats to FILE when the server is stopped (SIGTERM or SIGINT);
`python3 -m pstats FILE` reads them. docs/RELIABILITY.md ("Where the suite's
time goes") has what that showed.

    python3 scripts/moto_serial.py 127.0.0.1 5000
"""

import cProfile
import json
import os
import signal
import sys
import threading
import time

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


def lighten_moto() -> None:
    import copy
    import types

    import moto.dynamodb.models as models
    from moto.dynamodb.models.dynamo_type import DynamoType
    from moto.dynamodb.models.table import StreamShard, Table

    keep_stream = StreamShard.add
    StreamShard.add = lambda self, old, new: (
        keep_stream(self, old, new) if self.table.name.startswith("restock-streamed-") else None)

    # moto's transact_write_items deep-copies every table it names; hand it
    # the table itself, and save and restore the touched items instead.
    models.copy = types.SimpleNamespace(
        deepcopy=lambda x, *a: x if isinstance(x, Table) else copy.deepcopy(x, *a))
    original = models.DynamoDBBackend.transact_write_items

    def transact_write_items(self, transact_items):
        saved = []
        for entry in transact_items:
            _, op = next(iter(entry.items()))
            table = self.tables.get(op.get("TableName"))
            if table is None:
                continue
            key = op.get("Key") or op.get("Item") or {}
            if table.hash_key_attr not in key or (
                    table.range_key_attr and table.range_key_attr not in key):
                continue
            h = DynamoType(key[table.hash_key_attr])
            r = DynamoType(key[table.range_key_attr]) if table.range_key_attr else None
            saved.append((table, h, r, copy.deepcopy(table.get_item(h, r))))
        try:
            return original(self, transact_items)
        except Exception:
            for table, h, r, item in reversed(saved):
                if r is None:
                    if item is None:
                        table.items.pop(h, None)
                    else:
                        table.items[h] = item
                elif item is None:
                    table.items.get(h, {}).pop(r, None)
                    if h in table.items and not table.items[h]:
                        del table.items[h]
                else:
                    table.items[h][r] = item
            raise

    models.DynamoDBBackend.transact_write_items = transact_write_items


def mend_ses_timestamps() -> None:
    """SES v2 speaks REST-JSON, where a timestamp is epoch seconds; moto
    writes an identity's `DkimAttributes.LastKeyGenerationTimestamp` as an
    ISO string, which the Rust SDK (rightly) refuses to read."""
    import time

    from moto.ses.models import EmailIdentity

    original = EmailIdentity.__init__

    def __init__(self, *args, **kwargs):
        original(self, *args, **kwargs)
        if "LastKeyGenerationTimestamp" in self.dkim_attributes:
            self.dkim_attributes["LastKeyGenerationTimestamp"] = time.time()

    EmailIdentity.__init__ = __init__


def sns_texts() -> list:
    from moto.sns.models import sns_backends

    texts = []
    for account in list(sns_backends.keys()):
        for region in list(sns_backends[account].keys()):
            for number, text in sns_backends[account][region].sms_messages.values():
                texts.append({"to": number, "text": text})
    return texts


READ_BACK = {"/_restock/ses/messages": ses_messages, "/_restock/sns/texts": sns_texts}


def main() -> None:
    host, port = sys.argv[1], int(sys.argv[2])
    lighten_moto()
    mend_ses_timestamps()
    app = DomainDispatcherApplication(create_backend_app)
    strict = dynamo_strict.from_env(app)
    lock = threading.Lock()
    serial = {"requests": 0, "busy_s": 0.0, "waited_s": 0.0}
    profile_to = os.environ.get("RESTOCK_DOUBLE_PROFILE")
    profiler = cProfile.Profile() if profile_to else None
    if profiler:
        def stop(*_):
            with lock:
                profiler.dump_stats(profile_to)
            os._exit(0)
        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)

    def applied(environ, start_response):
        if strict is None:
            return list(app(environ, start_response))
        return list(strict.handle(environ, start_response))

    def serialised(environ, start_response):
        if environ.get("PATH_INFO") == "/_restock/serial/stats":
            body = json.dumps(serial).encode()
            start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
            return [body]
        read_back = READ_BACK.get(environ.get("PATH_INFO"))
        if read_back:
            with lock:
                body = json.dumps(read_back()).encode()
            start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
            return [body]
        asked = time.perf_counter()
        with lock:
            began = time.perf_counter()
            # Materialise the body inside the lock so the whole request is atomic.
            if profiler:
                profiler.enable()
            try:
                out = applied(environ, start_response)
            finally:
                if profiler:
                    profiler.disable()
                done = time.perf_counter()
                serial["requests"] += 1
                serial["busy_s"] += done - began
                serial["waited_s"] += began - asked
        # A request the contention model holds in flight answers after its
        # window, outside the lock (scripts/dynamo_strict.py).
        held = environ.get("restock.inflight_s")
        if held:
            time.sleep(held)
        return out

    run_simple(host, port, serialised, threaded=True, use_reloader=False)


if __name__ == "__main__":
    main()
