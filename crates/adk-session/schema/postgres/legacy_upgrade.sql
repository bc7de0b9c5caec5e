-- Upgrades a database of adk-rs's first layout (the sqlx migrations 0001 and 0002) in place to ADK
-- Python's v1 tables with adk-rs's columns: float epoch seconds become UTC timestamps (rounded to
-- the microsecond), event text becomes jsonb, events are keyed by their id as ADK Python keys
-- them, positions and revisions are kept. Key columns stay `text` (ADK Python's `varchar(128)`
-- would refuse longer names that may be stored already). `adk_rs_objects.sql` follows.

DROP INDEX events_by_timestamp;
-- What ADK Python adds when it opens such a database: its metadata (re-created below) and its
-- index on the old events table.
DROP INDEX IF EXISTS idx_events_app_user_session_ts_id;
DROP TABLE IF EXISTS adk_internal_metadata;

ALTER TABLE sessions
    ALTER COLUMN state DROP DEFAULT,
    ALTER COLUMN create_time TYPE TIMESTAMP WITHOUT TIME ZONE
        USING to_timestamp(create_time) AT TIME ZONE 'UTC',
    ALTER COLUMN update_time TYPE TIMESTAMP WITHOUT TIME ZONE
        USING to_timestamp(update_time) AT TIME ZONE 'UTC';

ALTER TABLE app_states
    ALTER COLUMN update_time TYPE TIMESTAMP WITHOUT TIME ZONE
        USING to_timestamp(update_time) AT TIME ZONE 'UTC';

ALTER TABLE user_states
    ALTER COLUMN update_time TYPE TIMESTAMP WITHOUT TIME ZONE
        USING to_timestamp(update_time) AT TIME ZONE 'UTC';

-- An event holding U+0000 (which jsonb cannot hold) keeps its exact text beside its jsonb copy
-- (`adk_rs_text.sql`, which runs first), as adk-rs stores such events now.
ALTER TABLE events ADD COLUMN exact_event_data TEXT;
UPDATE events SET exact_event_data = adk_exact_json(event_data)
WHERE adk_exact_json(event_data) IS NOT NULL;

ALTER TABLE events DROP CONSTRAINT events_pkey;
ALTER TABLE events
    DROP COLUMN author,
    ALTER COLUMN seq DROP NOT NULL,
    ALTER COLUMN timestamp TYPE TIMESTAMP WITHOUT TIME ZONE
        USING to_timestamp("timestamp") AT TIME ZONE 'UTC',
    ALTER COLUMN event_data TYPE JSONB USING adk_jsonb_text(event_data)::jsonb,
    ALTER COLUMN event_data DROP NOT NULL;
ALTER TABLE events ADD PRIMARY KEY (id, app_name, user_id, session_id);

CREATE INDEX idx_events_app_user_session_ts_id
    ON events (app_name, user_id, session_id, timestamp DESC, id DESC);

-- ADK Python's append needs the app and user state rows of every session.
INSERT INTO app_states (app_name, state, update_time)
SELECT app_name, '{}', max(update_time) FROM sessions GROUP BY app_name
ON CONFLICT (app_name) DO NOTHING;
INSERT INTO user_states (app_name, user_id, state, update_time)
SELECT app_name, user_id, '{}', max(update_time) FROM sessions GROUP BY app_name, user_id
ON CONFLICT (app_name, user_id) DO NOTHING;

CREATE TABLE adk_internal_metadata (
    key   VARCHAR(128) NOT NULL,
    value VARCHAR(256) NOT NULL,
    PRIMARY KEY (key)
);
INSERT INTO adk_internal_metadata (key, value) VALUES ('schema_version', '1');

DROP TABLE _sqlx_migrations;
