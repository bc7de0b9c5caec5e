-- Step one of upgrading a database of adk-rs's first layout (the sqlx migrations 0001 and 0002):
-- its tables are set aside under other names, so that ADK Python's tables can be created and the
-- rows copied into them (`legacy_copy.sql`).

DROP INDEX events_by_timestamp;
-- What ADK Python adds when it opens such a file: its metadata (re-created with its tables) and
-- its index on the old events table.
DROP INDEX IF EXISTS idx_events_app_user_session_ts_id;
DROP TABLE IF EXISTS adk_internal_metadata;
ALTER TABLE events RENAME TO adk_rs_old_events;
ALTER TABLE sessions RENAME TO adk_rs_old_sessions;
ALTER TABLE app_states RENAME TO adk_rs_old_app_states;
ALTER TABLE user_states RENAME TO adk_rs_old_user_states;
