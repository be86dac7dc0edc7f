-- The claim path: a lease exists exactly while an event is processing, and
-- an index for delivery in order per aggregate.

-- Every transition out of 'processing' clears the lease. The acknowledging
-- statements rely on it: they find an event by primary key and check the
-- lease (locked_by, attempts) without naming the status, so that no partial
-- index on the status can be chosen for them when the statistics are stale
-- (docs/PERFORMANCE.md, "The claim path"). Rows that break the rule cannot
-- have been written by a dispatcher; their stray lease is cleared first.
UPDATE outbox_events
   SET locked_by = NULL, locked_until = NULL
 WHERE status <> 'processing' AND (locked_by IS NOT NULL OR locked_until IS NOT NULL);

ALTER TABLE outbox_events
    ADD CONSTRAINT outbox_events_lease_only_processing_check
        CHECK (status = 'processing' OR (locked_by IS NULL AND locked_until IS NULL));

-- The lease index, found by the lease alone. The dead sweep asks for
-- expired leases without naming the status: a statement that names
-- 'processing' can also be answered by a full scan of the claim index (which
-- holds the whole backlog), and with statistics taken while nothing was
-- pending that scan looks as cheap as the lease index and gets chosen. Both
-- halves of the predicate select the same rows (the constraint above); the
-- first keeps the index usable for statements that count processing rows.
DROP INDEX outbox_events_lease_idx;
CREATE INDEX outbox_events_lease_idx ON outbox_events (locked_until)
    WHERE status = 'processing' OR locked_until IS NOT NULL;

-- Delivery in order per aggregate (`outboxctl dispatch --ordering aggregate`):
-- an event with an aggregate is claimed only when no earlier event of the
-- same (aggregate_type, aggregate_id) is pending, processing or dead. That
-- test reads at most one entry of this index: the entries of the aggregate
-- below the candidate's (created_at, id). Delivered events leave it, so it
-- stays as small as the unfinished work.
CREATE INDEX outbox_events_aggregate_idx
    ON outbox_events (aggregate_type, aggregate_id, created_at, id)
    WHERE status IN ('pending', 'processing', 'dead')
      AND aggregate_type IS NOT NULL AND aggregate_id IS NOT NULL;
