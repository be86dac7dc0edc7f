-- Search inside payloads: `payload @> '{"invoice_id": 42}'` (EventFilter::
-- payloadContains, `outboxctl list --payload`, the console's payload field).
--
-- jsonb_path_ops keeps one hash per path to a value, which answers @> (and
-- @@ / @?) and is a fraction of the size of the default jsonb_ops. The index
-- holds the sets an operator searches for "the event of invoice 42": the
-- pending backlog and the dead. Delivered events leave it, so it stays as
-- small as the unfinished work. Processing events are left out on purpose:
-- with them every claim (pending -> processing) would insert the payload's
-- entries again, which made a claim-like update of 100,000 events 1.7 times
-- as slow; without them a claim adds nothing to this index
-- (docs/PERFORMANCE.md, "Search inside payloads"). A search among processing
-- or delivered events is a bounded scan (docs/DECISIONS.md, "Search inside
-- payloads").
CREATE INDEX outbox_events_payload_idx ON outbox_events USING gin (payload jsonb_path_ops)
    WHERE status IN ('pending', 'dead');
