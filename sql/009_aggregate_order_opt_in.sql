-- Delivery in order per aggregate is opt-in, and so is the index it needs.
-- outbox_events_aggregate_idx (004) holds every pending, processing and dead
-- event that has an aggregate, so each claim of such an event wrote one more
-- index entry whether or not any dispatcher delivered in aggregate order:
-- the database-only dispatcher delivered such events 11-31% faster without
-- it (docs/PERFORMANCE.md, "The unordered claim before and after the
-- claim-path change"). Aggregate order is on for a database exactly while the
-- index exists and is valid; `outboxctl migrate --aggregate-order` builds it
-- (sql/aggregate_order.sql) without blocking producers, and a dispatcher
-- asked for aggregate order refuses to start without it.
--
-- A database with registered dispatchers keeps the index: one of them may
-- deliver in aggregate order, and its claim would lose the index under it.
-- Where none is registered it is dropped; an ordered dispatcher started
-- later says what to run.
CREATE FUNCTION outbox_aggregate_order_on() RETURNS boolean
LANGUAGE sql STABLE
AS $$
    SELECT EXISTS (SELECT FROM pg_catalog.pg_index
                    WHERE indexrelid = to_regclass('outbox_events_aggregate_idx')
                      AND indisvalid)
$$;

COMMENT ON FUNCTION outbox_aggregate_order_on() IS
    'Whether delivery in aggregate order is on: outbox_events_aggregate_idx exists and is valid.';

DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM outbox_dispatchers) THEN
        DROP INDEX IF EXISTS outbox_events_aggregate_idx;
    END IF;
END
$$;
