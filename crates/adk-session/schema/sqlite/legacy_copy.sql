-- Step two of upgrading a database of adk-rs's first layout: the rows set aside are copied into
-- the new tables, float epoch seconds turned into ADK Python's DATETIME text (rounded to the
-- microsecond), positions and revisions kept; then the old tables and sqlx's bookkeeping go.

INSERT INTO sessions (app_name, user_id, id, state, create_time, update_time, revision)
SELECT app_name, user_id, id, state,
       strftime('%Y-%m-%d %H:%M:%S', create_us / 1000000, 'unixepoch') || printf('.%06d', create_us % 1000000),
       strftime('%Y-%m-%d %H:%M:%S', update_us / 1000000, 'unixepoch') || printf('.%06d', update_us % 1000000),
       revision
FROM (
    SELECT *, CAST(round(create_time * 1000000) AS INTEGER) AS create_us,
              CAST(round(update_time * 1000000) AS INTEGER) AS update_us
    FROM adk_rs_old_sessions
);

INSERT INTO events (id, app_name, user_id, session_id, invocation_id, timestamp, event_data, seq)
SELECT id, app_name, user_id, session_id, invocation_id,
       strftime('%Y-%m-%d %H:%M:%S', us / 1000000, 'unixepoch') || printf('.%06d', us % 1000000),
       event_data, seq
FROM (
    SELECT *, CAST(round(timestamp * 1000000) AS INTEGER) AS us FROM adk_rs_old_events
);

INSERT INTO app_states (app_name, state, update_time)
SELECT app_name, state,
       strftime('%Y-%m-%d %H:%M:%S', us / 1000000, 'unixepoch') || printf('.%06d', us % 1000000)
FROM (
    SELECT *, CAST(round(update_time * 1000000) AS INTEGER) AS us FROM adk_rs_old_app_states
);

INSERT INTO user_states (app_name, user_id, state, update_time)
SELECT app_name, user_id, state,
       strftime('%Y-%m-%d %H:%M:%S', us / 1000000, 'unixepoch') || printf('.%06d', us % 1000000)
FROM (
    SELECT *, CAST(round(update_time * 1000000) AS INTEGER) AS us FROM adk_rs_old_user_states
);

-- ADK Python's append needs the app and user state rows of every session.
INSERT INTO app_states (app_name, state, update_time)
SELECT app_name, '{}', max(update_time) FROM sessions WHERE true GROUP BY app_name
ON CONFLICT (app_name) DO NOTHING;
INSERT INTO user_states (app_name, user_id, state, update_time)
SELECT app_name, user_id, '{}', max(update_time) FROM sessions WHERE true GROUP BY app_name, user_id
ON CONFLICT (app_name, user_id) DO NOTHING;

DROP TABLE adk_rs_old_events;
DROP TABLE adk_rs_old_sessions;
DROP TABLE adk_rs_old_app_states;
DROP TABLE adk_rs_old_user_states;
DROP TABLE _sqlx_migrations;
