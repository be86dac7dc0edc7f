-- Outbox Console schema, version 5: indexes for the console's read side.

-- The navigator's dead events per namespace/topic, counted by an index-only
-- scan instead of reading every dead row from the heap (one million dead rows:
-- about half a second instead of several). Rows turn dead rarely, so the
-- dispatcher's hot path does not pay for it.
CREATE INDEX outbox_events_dead_topic_idx ON outbox_events (namespace, topic)
    WHERE status = 'dead';
