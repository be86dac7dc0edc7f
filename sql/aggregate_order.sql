-- Delivery in order per aggregate (`outboxctl dispatch --ordering aggregate`),
-- built by `outboxctl migrate --aggregate-order`: an event with an aggregate
-- is claimed only when no earlier event of the same (aggregate_type,
-- aggregate_id) is pending, processing or dead, and no transaction that may
-- still commit an earlier one is open. That test reads at most one entry of
-- this index: the entries of the aggregate below the candidate's
-- (producer_xid, created_at, id), aggregate order's key
-- (013_aggregate_order_open_transactions.sql). Delivered events leave it,
-- so it stays as small as the unfinished work. CONCURRENTLY: producers keep
-- writing while it is built. One statement per index (CONCURRENTLY cannot
-- run in a transaction block); the migrator skips an index that is there
-- and valid.
CREATE INDEX CONCURRENTLY outbox_events_aggregate_idx
    ON outbox_events (aggregate_type, aggregate_id, producer_xid, created_at, id)
    WHERE status IN ('pending', 'processing', 'dead')
      AND aggregate_type IS NOT NULL AND aggregate_id IS NOT NULL;

-- What the ordered claim walks (011_blocked_aggregates.sql): pending events
-- that are neither held by a pause nor blocked behind a dead event of their
-- aggregate. Processing events come back to it through the lease index.
-- Claims do not write it (a claimed event leaves it); enqueues do. "Pending"
-- is spelled as an event without a lease that is neither delivered nor dead
-- (the constraints of 004 make the two the same), so that only the ordered
-- claim implies this predicate and it implies no other partial index: with
-- `status = 'pending'` the due index was a candidate too, and with
-- statistics that promised few rows the planner read every due event from
-- it and sorted them.
CREATE INDEX CONCURRENTLY outbox_events_ordered_claim_idx ON outbox_events (created_at, id)
    WHERE status NOT IN ('delivered', 'dead') AND locked_until IS NULL AND NOT held AND NOT blocked;

-- Aggregate order is on from here: every event's flag afresh.
SELECT outbox_aggregate_block_all();
