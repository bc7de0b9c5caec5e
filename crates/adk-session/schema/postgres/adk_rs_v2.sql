-- Version 2 of adk-rs's additions: events holding U+0000 (which version 1 refused) are stored,
-- their exact text kept beside the jsonb copy. `adk_rs_text.sql` runs before this.

ALTER TABLE events ADD COLUMN exact_event_data TEXT;

UPDATE adk_internal_metadata SET value = '2' WHERE key = 'adk_rs_schema_version';
