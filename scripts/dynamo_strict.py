"""A DynamoDB API at least as strict as DynamoDB's documented behaviour, as
WSGI middleware in front of moto's application (scripts/moto_serial.py).

moto shows every write to every read at once, ignores ClientRequestToken,
never throttles, never conflicts and never cuts a page at 1 MB. Real
DynamoDB does all of these, and code that is correct only on moto is not
correct. This adds them:

- Index reads lag. Every write that succeeds is replayed, in order, onto a
  replica of the table (the same table in another moto region) LAG ms later,
  as the items' new images. A Query or Scan naming an IndexName, and any
  read without ConsistentRead, is answered from the replica: a global
  secondary index is eventually consistent, and so are default reads.
- ClientRequestToken on TransactWriteItems, as documented: a token is bound
  to its request once the first request with it completes (applied or
  cancelled), for 10 minutes. The same token and the same request then
  returns success without applying it again (or, if the first was
  cancelled, is evaluated again); the same token with a different request
  is refused with IdempotentParameterMismatchException.
- Injected faults at RATE: a TransactWriteItems cancelled with a
  TransactionConflict reason, other writes refused with
  ProvisionedThroughputExceededException, reads with ThrottlingException.
  Nothing is applied. The same request sent again (the SDK's own retry, or
  the store's) is let through, so a fault is transient, never a wall.
- Query and Scan pages cut at 1 MB of items (sized as their JSON, which is
  larger than DynamoDB's count, so pages are cut earlier, never later), with
  the LastEvaluatedKey DynamoDB would give.

- Transactions that really contend (RESTOCK_TX_INFLIGHT_MS, default 0:
  off). Requests still apply one at a time underneath; this decides who
  loses, as DynamoDB would. Each TransactWriteItems, TransactGetItems and
  single-item write is in flight for that long after it is applied. Another
  TransactWriteItems or TransactGetItems naming one of its items in that
  time is cancelled (TransactionCanceledException, TransactionConflict at
  that item, None elsewhere); a PutItem, UpdateItem or DeleteItem on an
  item a transaction has in flight is refused with
  TransactionConflictException. Two single-item writes never conflict
  (DynamoDB serialises them), and plain reads are never blocked.
- A partition's throughput: writes to one partition key beyond 1,000 write
  units in a second (an item write 1 unit, 2 in a transaction) answer
  ThrottlingException.

It also keeps a test run's memory bounded: a table no request has named for
RESTOCK_STRICT_IDLE_TABLE_S seconds (default 300; every test uses a table
of its own) is deleted, here and on the replica.

Settings (environment): RESTOCK_INDEX_LAG_MS (default 0),
RESTOCK_FAULT_RATE (default 0), RESTOCK_FAULT_SEED (default 1),
RESTOCK_TX_INFLIGHT_MS (default 0), RESTOCK_PARTITION_WCU (default 1000).
GET /_restock/strict/stats answers what was injected and replayed, and
what was read: requests, items read (a Query's ScannedCount, a GetItem's or
BatchGetItem's items found) and read units as DynamoDB bills them (per item
for GetItem and BatchGetItem, per 4 KB of items for Query and Scan; half for
an eventually consistent read), with items sized as DynamoDB documents it.
POST /_restock/strict/iam with {"<access key id>": ["dynamodb:GetItem", ...]}
makes the double refuse, as IAM would (AccessDeniedException), any
DynamoDB request signed with that key that its policy does not allow: the
binaries' tests register each function's policy from template.yaml.
GET /_restock/strict/stats?table=NAME answers the writes each counter item
of that table took (a SKU's state item, its hold slots): how hot the hottest
item ran; and, for a table registered with POST /_restock/strict/meter
{"table": NAME}, the write units its writes consumed as DynamoDB bills them
(per item, 1 KB steps of the larger of its sizes before and after, doubled
in a transaction; a condition check billed like a write).
"""

import copy
import hashlib
import io
import json
import os
import random
import threading
import time

PAGE_BYTES = 1024 * 1024
TOKEN_WINDOW_S = 600
IDLE_TABLE_S = float(os.environ.get("RESTOCK_STRICT_IDLE_TABLE_S", "300"))
WRITES = {"PutItem", "UpdateItem", "DeleteItem", "TransactWriteItems", "BatchWriteItem"}
READS = {"GetItem", "Query", "Scan", "BatchGetItem", "TransactGetItems"}
PREFIX = "com.amazonaws.dynamodb.v20120810#"


def _error(kind, message, extra=None, prefix=PREFIX):
    body = {"__type": prefix + kind, "message": message}
    body.update(extra or {})
    return 400, body


class StrictDynamo:
    """The middleware. `lock` is the lock moto_serial.py applies every
    request under; all of this runs inside it."""

    def __init__(self, app, lag_ms=0, fault_rate=0.0, seed=1, inflight_ms=0.0,
                 partition_wcu=1000):
        self.app = app
        self.dynamodb_app = None
        self.inflight = inflight_ms / 1000.0
        self.partition_wcu = partition_wcu
        self.busy = {}  # (table, pk, sk) -> (until, request number, whether a transaction)
        self.marking = None  # the items the request being applied will hold
        self.partition_writes = {}  # (table, pk) -> [(when, units)] in the last second
        self.lag = lag_ms / 1000.0
        self.fault_rate = fault_rate
        self.rng = random.Random(seed)
        self.pending = []  # (due, seq, region, target, body) replica writes, in order
        self.seq = 0
        self.tokens = {}  # token -> (request hash, when, whether it applied)
        self.key_schema = {}  # (region, table) -> [key attribute names] incl. indexes
        self.faulted = {}  # request digest -> when it was faulted
        self.stats = {"replicated": 0, "index_reads": 0, "tokens_replayed": 0,
                      "token_mismatches": 0, "conflicts": 0, "throttles": 0,
                      "pages_cut": 0, "tables_dropped": 0, "requests": 0,
                      "contended": 0, "partition_throttles": 0,
                      "items_read": 0, "read_units": 0.0}
        self.last_used = {}  # (region, table) -> when a request last named it
        self.counter_writes = {}  # table -> {"pk|sk": writes}, for counter items
        self.iam = {}  # access key id -> the DynamoDB actions its policy allows
        self.metered = {}  # table -> write units its successful writes consumed
        self.last_purge = time.monotonic()
        self.mutex = threading.Lock()

    # --- plumbing -------------------------------------------------------------

    def call(self, region, target, body):
        """One request to moto itself, as (status, body)."""
        raw = json.dumps(body).encode()
        environ = {
            "REQUEST_METHOD": "POST", "PATH_INFO": "/", "QUERY_STRING": "",
            "SERVER_NAME": "127.0.0.1", "SERVER_PORT": "5000", "SERVER_PROTOCOL": "HTTP/1.1",
            "HTTP_HOST": "127.0.0.1:5000", "CONTENT_TYPE": "application/x-amz-json-1.0",
            "CONTENT_LENGTH": str(len(raw)), "HTTP_X_AMZ_TARGET": "DynamoDB_20120810." + target,
            "HTTP_AUTHORIZATION": "AWS4-HMAC-SHA256 Credential=testing/20260101/%s/dynamodb/aws4_request, SignedHeaders=host, Signature=x" % region,
            "wsgi.input": io.BytesIO(raw), "wsgi.url_scheme": "http", "wsgi.errors": io.StringIO(),
            "wsgi.version": (1, 0), "wsgi.multithread": True, "wsgi.multiprocess": False, "wsgi.run_once": False,
        }
        status = []
        if self.dynamodb_app is None:
            # moto's dispatcher finds the service from the request each time
            # (about 1 ms); every call here is DynamoDB's.
            self.dynamodb_app = self.app.get_application(environ)
        out = b"".join(self.dynamodb_app(environ, lambda s, h, e=None: status.append(s)))
        code = int(status[0].split()[0])
        try:
            return code, json.loads(out or b"{}")
        except ValueError:
            return code, {}

    def replica(self, region):
        """The region holding the replica. With no lag the replica would
        equal the table after every request (each write is replayed before
        the request answers), so there is none and stale reads read the
        table: the same answers, without two extra moto calls per item
        written (docs/RELIABILITY.md, "Where the suite's time goes")."""
        if not self.lag:
            return region
        return "eu-north-1" if region != "eu-north-1" else "eu-south-1"

    def keys_of(self, region, table):
        """The table's key attributes, then each index's."""
        if (region, table) not in self.key_schema:
            _, described = self.call(region, "DescribeTable", {"TableName": table})
            t = described.get("Table", {})
            base = [k["AttributeName"] for k in t.get("KeySchema", [])]
            indexes = {i["IndexName"]: [k["AttributeName"] for k in i["KeySchema"]]
                       for i in t.get("GlobalSecondaryIndexes", [])}
            self.key_schema[(region, table)] = (base, indexes)
        return self.key_schema[(region, table)]

    # --- the replica ------------------------------------------------------------

    @staticmethod
    def table_in(region, name):
        """moto's own table object (None when there is none): the replica
        is written through it, not through moto's request dispatch, which
        costs milliseconds a call (docs/RELIABILITY.md)."""
        from moto.dynamodb.models import dynamodb_backends
        for account in list(dynamodb_backends.keys()):
            backend = dynamodb_backends[account].get(region)
            if backend is not None and name in backend.tables:
                return backend.tables[name]
        return None

    def apply_due(self, now):
        while self.pending and self.pending[0][0] <= now:
            _, _, region, table, h, r, image = self.pending.pop(0)
            replica = self.table_in(self.replica(region), table)
            if replica is None:
                continue
            if image is not None:
                if r is None:
                    replica.items[h] = image
                else:
                    replica.items[h][r] = image
            elif r is None:
                replica.items.pop(h, None)
            elif h in replica.items:
                replica.items[h].pop(r, None)
                if not replica.items[h]:
                    del replica.items[h]
            self.stats["replicated"] += 1

    def touched(self, region, target, body):
        """(table, key) of every item a successful write changed."""
        out = []
        def key_from_item(table, item):
            base, _ = self.keys_of(region, table)
            return {k: item[k] for k in base if k in item}
        if target == "PutItem":
            out.append((body["TableName"], key_from_item(body["TableName"], body["Item"])))
        elif target in ("UpdateItem", "DeleteItem"):
            out.append((body["TableName"], body["Key"]))
        elif target == "TransactWriteItems":
            for op in body.get("TransactItems", []):
                if "Put" in op:
                    out.append((op["Put"]["TableName"], key_from_item(op["Put"]["TableName"], op["Put"]["Item"])))
                for kind in ("Update", "Delete"):
                    if kind in op:
                        out.append((op[kind]["TableName"], op[kind]["Key"]))
        elif target == "BatchWriteItem":
            for table, writes in body.get("RequestItems", {}).items():
                for w in writes:
                    if "PutRequest" in w:
                        out.append((table, key_from_item(table, w["PutRequest"]["Item"])))
                    if "DeleteRequest" in w:
                        out.append((table, w["DeleteRequest"]["Key"]))
        return out

    def replicate(self, region, target, body, now):
        """Schedules the new images of what a write changed onto the replica."""
        if not self.lag:
            return
        from moto.dynamodb.models.dynamo_type import DynamoType
        for table, key in self.touched(region, target, body):
            primary = self.table_in(region, table)
            if primary is None:
                continue
            h = DynamoType(key[primary.hash_key_attr])
            r = DynamoType(key[primary.range_key_attr]) if primary.range_key_attr else None
            item = primary.get_item(h, r)
            self.seq += 1
            # The image as it is now: moto updates items in place.
            self.pending.append((now + self.lag, self.seq, region, table, h, r,
                                 copy.deepcopy(item) if item is not None else None))
        self.apply_due(now)

    # --- memory -------------------------------------------------------------------

    @staticmethod
    def tables_in(body):
        names = set()
        if "TableName" in body:
            names.add(body["TableName"])
        names.update(body.get("RequestItems", {}).keys())
        for op in body.get("TransactItems", []):
            for part in op.values():
                if isinstance(part, dict) and "TableName" in part:
                    names.add(part["TableName"])
        return names

    def purge_idle(self, now):
        """Deletes the tables no request has named for IDLE_TABLE_S."""
        if now - self.last_purge < 30:
            return
        self.last_purge = now
        for (region, table), at in list(self.last_used.items()):
            if now - at > IDLE_TABLE_S:
                del self.last_used[(region, table)]
                self.key_schema.pop((region, table), None)
                self.counter_writes.pop(table, None)
                self.call(region, "DeleteTable", {"TableName": table})
                if self.lag:
                    self.call(self.replica(region), "DeleteTable", {"TableName": table})
                self.stats["tables_dropped"] += 1

    # --- what reads cost ----------------------------------------------------------

    @staticmethod
    def value_size(v):
        (kind, x), = v.items()
        if kind == "S":
            return len(x.encode())
        if kind == "N":
            digits = len(x.lstrip("-").replace(".", "").lstrip("0")) or 1
            return (digits + 1) // 2 + 1
        if kind == "B":
            return len(x) * 3 // 4
        if kind in ("BOOL", "NULL"):
            return 1
        if kind in ("SS", "NS", "BS"):
            return sum(StrictDynamo.value_size({kind[0]: e}) for e in x)
        if kind == "L":
            return 3 + sum(1 + StrictDynamo.value_size(e) for e in x)
        if kind == "M":
            return 3 + sum(1 + len(k.encode()) + StrictDynamo.value_size(e) for k, e in x.items())
        return 0

    @staticmethod
    def item_size(item):
        return sum(len(k.encode()) + StrictDynamo.value_size(v) for k, v in item.items())

    def account_read(self, region_of_read, target, body, answer, consistent):
        scale = 1.0 if consistent else 0.5
        if target in ("GetItem", "BatchGetItem", "TransactGetItems"):
            if target == "GetItem":
                items, asked = [answer.get("Item")], 1
            elif target == "BatchGetItem":
                items = [i for found in answer.get("Responses", {}).values() for i in found]
                asked = sum(len(r.get("Keys", [])) for r in body.get("RequestItems", {}).values())
                asked -= sum(len(r.get("Keys", [])) for r in answer.get("UnprocessedKeys", {}).values())
            else:
                items = [r.get("Item") for r in answer.get("Responses", [])]
                asked, scale = len(items), 2.0
            items = [i for i in items if i]
            self.stats["items_read"] += len(items)
            units = sum(-(-self.item_size(i) // 4096) for i in items)
            units += asked - len(items)  # a key not found still reads one unit
            self.stats["read_units"] += units * scale
        else:
            items = answer.get("Items", [])
            if body.get("Select") == "COUNT" and answer.get("ScannedCount"):
                # DynamoDB bills a COUNT by the items it read: size them.
                full = {k: v for k, v in body.items() if k != "Select"}
                _, listed = self.call(region_of_read, target, full)
                items = listed.get("Items", [])
            self.stats["items_read"] += answer.get("ScannedCount", len(items))
            size = sum(self.item_size(i) for i in items)
            self.stats["read_units"] += max(1, -(-size // 4096)) * scale

    # --- faults -------------------------------------------------------------------

    def fault(self, target, raw):
        if self.fault_rate <= 0 or target not in WRITES | READS:
            return None
        digest = hashlib.sha256(raw).hexdigest()
        now = time.monotonic()
        for d in [d for d, at in self.faulted.items() if now - at > 60]:
            del self.faulted[d]
        if self.faulted.pop(digest, None) is not None:
            return None  # the retry of a faulted request goes through
        if self.rng.random() >= self.fault_rate:
            return None
        self.faulted[digest] = now
        if target == "TransactWriteItems":
            items = json.loads(raw).get("TransactItems", [])
            reasons = [{"Code": "None"} for _ in items]
            if reasons:
                reasons[self.rng.randrange(len(reasons))] = {
                    "Code": "TransactionConflict", "Message": "Transaction is ongoing for the item"}
            self.stats["conflicts"] += 1
            codes = ", ".join(r["Code"] for r in reasons)
            return _error("TransactionCanceledException",
                          "Transaction cancelled, please refer cancellation reasons for specific reasons [%s]" % codes,
                          {"CancellationReasons": reasons})
        self.stats["throttles"] += 1
        if target in WRITES:
            return _error("ProvisionedThroughputExceededException",
                          "The level of configured provisioned throughput for the table was exceeded.")
        return _error("ThrottlingException", "Rate of requests exceeds the allowed throughput.",
                      prefix="com.amazon.coral.availability#")

    # --- contention -------------------------------------------------------------------

    CONTENDED = ("TransactWriteItems", "TransactGetItems", "PutItem", "UpdateItem", "DeleteItem")

    def items_named(self, region, target, body):
        """(table, pk, sk) of each item a write or transactional read names,
        in the request's order."""
        def ident(table, key_or_item):
            return (table, json.dumps(key_or_item.get("pk")), json.dumps(key_or_item.get("sk")))
        if target in ("TransactWriteItems", "TransactGetItems"):
            return [ident(op.get("TableName"), op.get("Key") or op.get("Item") or {})
                    for item in body.get("TransactItems", []) for op in item.values()]
        return [ident(body.get("TableName"), body.get("Key") or body.get("Item") or {})]

    def contend(self, target, body, now):
        """Whether the request loses to one in flight on its items (its
        error), else None; a winner is marked in flight on its items."""
        if target not in self.CONTENDED:
            return None
        names = self.items_named(None, target, body)
        throttled = self.partition_throttle(target, names, now)
        if throttled:
            return throttled
        if self.inflight <= 0:
            return None
        for k in [k for k, (until, _, _) in self.busy.items() if until <= now]:
            del self.busy[k]
        transactional = target.startswith("Transact")
        conflicts = [name in self.busy and (transactional or self.busy[name][2])
                     for name in names]
        if any(conflicts):
            self.stats["contended"] += 1
            if not transactional:
                return _error("TransactionConflictException", "Transaction is ongoing for the item")
            reasons = [{"Code": "TransactionConflict", "Message": "Transaction is ongoing for the item"}
                       if c else {"Code": "None"} for c in conflicts]
            codes = ", ".join(r["Code"] for r in reasons)
            return _error("TransactionCanceledException",
                          "Transaction cancelled, please refer cancellation reasons for specific reasons [%s]" % codes,
                          {"CancellationReasons": reasons})
        self.marking = (names, transactional)
        return None

    def mark_in_flight(self, environ):
        """Marks the request just applied as in flight on its items for the
        window from now, and asks moto_serial.py to hold its answer that
        long (outside the lock): its client cannot send again before the
        window ends, as with DynamoDB's own latency."""
        marking, self.marking = self.marking, None
        if not marking:
            return
        names, transactional = marking
        until = time.monotonic() + self.inflight
        self.seq += 1
        for name in names:
            self.busy[name] = (until, self.seq, transactional)
        environ["restock.inflight_s"] = self.inflight

    def partition_throttle(self, target, names, now):
        """ThrottlingException once a partition's writes pass its units a
        second; else counts this request's."""
        if target == "TransactGetItems":
            return None
        units = 2 if target == "TransactWriteItems" else 1
        parts = {}
        for table, pk, _ in names:
            parts[(table, pk)] = parts.get((table, pk), 0) + units
        for part, add in parts.items():
            window = [(w, u) for w, u in self.partition_writes.get(part, []) if now - w < 1.0]
            self.partition_writes[part] = window
            if sum(u for _, u in window) + add > self.partition_wcu:
                self.stats["partition_throttles"] += 1
                return _error("ThrottlingException",
                              "Throughput exceeds the current capacity of your table or index.",
                              prefix="com.amazon.coral.availability#")
        for part, add in parts.items():
            self.partition_writes[part].append((now, add))
        return None

    # --- tokens ---------------------------------------------------------------------

    def token_check(self, body, raw, now):
        token = body.get("ClientRequestToken")
        if not token:
            return None, None
        for t in [t for t, (_, at, _) in self.tokens.items() if now - at > TOKEN_WINDOW_S]:
            del self.tokens[t]
        unsigned = dict(body)
        unsigned.pop("ClientRequestToken")
        digest = hashlib.sha256(json.dumps(unsigned, sort_keys=True).encode()).hexdigest()
        seen = self.tokens.get(token)
        if seen is None:
            return token, digest
        if seen[0] == digest:
            if not seen[2]:
                return token, digest  # the first was cancelled: evaluated again
            self.stats["tokens_replayed"] += 1
            return "replay", None
        self.stats["token_mismatches"] += 1
        return "mismatch", None

    # --- pages ------------------------------------------------------------------------

    def cut_page(self, region, body, answer):
        items = answer.get("Items")
        if not items:
            return answer
        size, kept = 0, []
        for item in items:
            size += len(json.dumps(item))
            if size > PAGE_BYTES and kept:
                break
            kept.append(item)
        if len(kept) == len(items):
            return answer
        base, indexes = self.keys_of(region, body["TableName"])
        names = list(base) + list(indexes.get(body.get("IndexName"), []))
        last = kept[-1]
        answer = dict(answer)
        answer["Items"] = kept
        answer["Count"] = len(kept)
        answer["ScannedCount"] = len(kept)
        answer["LastEvaluatedKey"] = {k: last[k] for k in names if k in last}
        self.stats["pages_cut"] += 1
        return answer

    # --- the request ----------------------------------------------------------------

    def handle(self, environ, start_response):
        header = environ.get("HTTP_X_AMZ_TARGET", "")
        target = header.split(".")[-1] if header.startswith("DynamoDB_") else ""
        if environ.get("PATH_INFO") == "/_restock/strict/stats":
            table = environ.get("QUERY_STRING", "").partition("table=")[2]
            if table:
                return self.respond(start_response, 200,
                                    {"counter_writes": self.counter_writes.get(table, {}),
                                     "write_units": self.metered.get(table)})
            return self.respond(start_response, 200, self.stats)
        if environ.get("PATH_INFO") == "/_restock/strict/meter":
            length = int(environ.get("CONTENT_LENGTH") or 0)
            self.metered.setdefault(json.loads(environ["wsgi.input"].read(length))["table"], 0)
            return self.respond(start_response, 200, {})
        if environ.get("PATH_INFO") == "/_restock/strict/iam":
            length = int(environ.get("CONTENT_LENGTH") or 0)
            self.iam.update(json.loads(environ["wsgi.input"].read(length) or b"{}"))
            return self.respond(start_response, 200, {"keys": sorted(self.iam)})
        if not target or target not in WRITES | READS | {"CreateTable", "DeleteTable"}:
            return self.app(environ, start_response)
        length = int(environ.get("CONTENT_LENGTH") or 0)
        raw = environ["wsgi.input"].read(length)
        body = json.loads(raw or b"{}")
        auth = environ.get("HTTP_AUTHORIZATION", "")
        region = auth.split("Credential=")[1].split("/")[2] if "Credential=" in auth else "us-east-1"
        now = time.monotonic()
        self.marking = None
        self.apply_due(now)
        self.stats["requests"] += 1
        for table in self.tables_in(body):
            self.last_used[(region, table)] = now
        self.purge_idle(now)

        if target in ("CreateTable", "DeleteTable"):
            code, answer = self.call(region, target, body)
            if code == 200 and self.lag:
                self.call(self.replica(region), target, body)
            return self.respond(start_response, code, answer)

        denied = self.denied(auth, target, body)
        if denied:
            return self.respond(start_response, 400, {
                "__type": "com.amazon.coral.service#AccessDeniedException",
                "message": "User: %s is not authorized to perform: %s on resource: %s "
                           "because no identity-based policy allows the %s action"
                           % (auth.split("Credential=")[1].split("/")[0], denied,
                              ",".join(self.tables_in(body)), denied)})

        injected = self.fault(target, raw)
        if injected:
            return self.respond(start_response, *injected)

        contended = self.contend(target, body, now)
        if contended:
            return self.respond(start_response, *contended)

        if target in READS:
            stale = body.get("IndexName") or not body.get("ConsistentRead")
            if target in ("BatchGetItem", "TransactGetItems"):
                stale = target == "BatchGetItem" and not all(
                    r.get("ConsistentRead") for r in body.get("RequestItems", {}).values())
            if body.get("IndexName"):
                self.stats["index_reads"] += 1
            code, answer = self.call(self.replica(region) if stale else region, target, body)
            if code == 200 and target in ("Query", "Scan"):
                answer = self.cut_page(self.replica(region) if stale else region, body, answer)
            if code == 200:
                self.account_read(self.replica(region) if stale else region,
                                  target, body, answer, not stale)
            self.mark_in_flight(environ)
            return self.respond(start_response, code, answer)

        token, digest = (None, None)
        if target == "TransactWriteItems":
            token, digest = self.token_check(body, raw, now)
            if token == "replay":
                return self.respond(start_response, 200, {})
            if token == "mismatch":
                return self.respond(start_response, *_error(
                    "IdempotentParameterMismatchException",
                    "Idempotent parameter mismatch: the ClientRequestToken was used with a different request"))
        metering = [w for w in self.written(target, body) if w[0] in self.metered]
        before = [self.size_of(region, table, key) for table, key, _ in metering]
        code, answer = self.call(region, target, body)
        if code == 200:
            for (table, key, transactional), was in zip(metering, before):
                size = max(was, self.size_of(region, table, key))
                self.metered[table] += max(1, -(-size // 1024)) * (2 if transactional else 1)
        if token and (code == 200 or "TransactionCanceled" in answer.get("__type", "")):
            self.tokens[token] = (digest, now, code == 200)
        if code == 200:
            self.replicate(region, target, body, now)
            self.count_counter_writes(target, body)
        self.mark_in_flight(environ)
        return self.respond(start_response, code, answer)

    # --- what writes cost (metered tables only: POST /_restock/strict/meter) -------

    @staticmethod
    def written(target, body):
        """(table, key, transactional) of each item a write names."""
        def key(op):
            item = op.get("Key") or op.get("Item") or {}
            return {k: item[k] for k in ("pk", "sk") if k in item}
        if target == "TransactWriteItems":
            return [(op.get("TableName"), key(op), True)
                    for item in body.get("TransactItems", []) for op in item.values()]
        if target == "BatchWriteItem":
            return [(table, key(r.get("PutRequest") or r.get("DeleteRequest") or {}), False)
                    for table, requests in body.get("RequestItems", {}).items() for r in requests]
        return [(body.get("TableName"), key(body), False)]

    def size_of(self, region, table, key):
        """An item's size now (0 when absent), as DynamoDB sizes it."""
        _, answer = self.call(region, "GetItem", {"TableName": table, "Key": key, "ConsistentRead": True})
        return self.item_size(answer.get("Item") or {})

    # --- IAM --------------------------------------------------------------------

    TX_ACTIONS = {"Put": "dynamodb:PutItem", "Update": "dynamodb:UpdateItem",
                  "Delete": "dynamodb:DeleteItem", "ConditionCheck": "dynamodb:ConditionCheckItem",
                  "Get": "dynamodb:GetItem"}

    def denied(self, auth, target, body):
        """The first action a registered access key's policy does not allow,
        as IAM evaluates a DynamoDB request: a transaction needs the action
        of each item in it (TransactGetItems: GetItem), not one of its own.
        Keys never registered (POST /_restock/strict/iam) are not checked."""
        if "Credential=" not in auth:
            return None
        allowed = self.iam.get(auth.split("Credential=")[1].split("/")[0])
        if allowed is None:
            return None
        if target in ("TransactWriteItems", "TransactGetItems"):
            needed = [self.TX_ACTIONS[kind] for item in body.get("TransactItems", [])
                      for kind in item if kind in self.TX_ACTIONS]
        else:
            needed = ["dynamodb:" + target]
        return next((a for a in needed if a not in allowed), None)

    COUNTERS = ("SKU#", "HS#")

    def count_counter_writes(self, target, body):
        """Writes per counter item (a SKU's state item, its hold slots), per
        table: how hot the hottest item runs (GET .../stats?table=NAME)."""
        if target == "TransactWriteItems":
            ops = [op for item in body.get("TransactItems", [])
                   for kind, op in item.items() if kind in ("Update", "Put", "Delete")]
        else:
            ops = [body]
        for op in ops:
            key = op.get("Key") or op.get("Item") or {}
            pk = key.get("pk", {}).get("S", "")
            if pk.startswith(self.COUNTERS):
                writes = self.counter_writes.setdefault(op.get("TableName", ""), {})
                name = pk + "|" + key.get("sk", {}).get("S", "")
                writes[name] = writes.get(name, 0) + 1

    @staticmethod
    def respond(start_response, code, body):
        out = json.dumps(body).encode()
        reason = "OK" if code == 200 else "Bad Request"
        start_response("%d %s" % (code, reason), [
            ("Content-Type", "application/x-amz-json-1.0"), ("Content-Length", str(len(out)))])
        return [out]


def from_env(app):
    """The middleware as the environment configures it, or None when every
    knob is off (plain moto)."""
    if os.environ.get("RESTOCK_STRICT_DYNAMODB", "1") == "0":
        return None
    return StrictDynamo(
        app,
        lag_ms=float(os.environ.get("RESTOCK_INDEX_LAG_MS", "0")),
        fault_rate=float(os.environ.get("RESTOCK_FAULT_RATE", "0")),
        seed=int(os.environ.get("RESTOCK_FAULT_SEED", "1")),
        inflight_ms=float(os.environ.get("RESTOCK_TX_INFLIGHT_MS", "0")),
        partition_wcu=int(os.environ.get("RESTOCK_PARTITION_WCU", "1000")),
    )
