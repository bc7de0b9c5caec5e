-- What adk-rs adds to ADK Python's tables: a session's revision (how many events were appended
-- to it), each event's position in its session, and the exact text of an event whose jsonb copy
-- may differ from it (see `adk_rs_text.sql`). ADK Python never reads these columns and never
-- names them in its writes, so it keeps working on the same database.
--
-- Events ADK Python stored before are numbered in the order ADK Python reads them back
-- (timestamp, then id), and each session's revision is its number of events.

ALTER TABLE sessions ADD COLUMN revision BIGINT NOT NULL DEFAULT 0;

ALTER TABLE events ADD COLUMN seq BIGINT;

ALTER TABLE events ADD COLUMN exact_event_data TEXT;

UPDATE events SET seq = numbered.n
FROM (
    SELECT id, app_name, user_id, session_id,
           row_number() OVER (PARTITION BY app_name, user_id, session_id ORDER BY timestamp, id) AS n
    FROM events
) AS numbered
WHERE numbered.id = events.id
  AND numbered.app_name = events.app_name
  AND numbered.user_id = events.user_id
  AND numbered.session_id = events.session_id;

UPDATE sessions SET revision = counted.n
FROM (
    SELECT app_name, user_id, session_id, count(*) AS n FROM events
    GROUP BY app_name, user_id, session_id
) AS counted
WHERE counted.app_name = sessions.app_name
  AND counted.user_id = sessions.user_id
  AND counted.session_id = sessions.id;
