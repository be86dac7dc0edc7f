-- Delivery in order per aggregate (`outboxctl dispatch --ordering aggregate`),
-- built by `outboxctl migrate --aggregate-order`: an event with an aggregate
-- is claimed only when no earlier event of the same (aggregate_type,
-- aggregate_id) is pending, processing or dead. That test reads at most one
-- entry of this index: the entries of the aggregate below the candidate's
-- (created_at, id). Delivered events leave it, so it stays as small as the
-- unfinished work. CONCURRENTLY: producers keep writing while it is built.
-- One statement only (CONCURRENTLY cannot run in a transaction block).
CREATE INDEX CONCURRENTLY outbox_events_aggregate_idx
    ON outbox_events (aggregate_type, aggregate_id, created_at, id)
    WHERE status IN ('pending', 'processing', 'dead')
      AND aggregate_type IS NOT NULL AND aggregate_id IS NOT NULL
