-- A loop's event streams wait out a burst of commits before they read, but read its end at once
-- (api/loop-event-stream.ts): the notification of a write to the Loop row says `<id> ended` when the row's
-- status is terminal (the list is domain/loop-state.ts TERMINAL_STATUSES, checked by test/integration/loop-writes.test.ts), and
-- `<id>` otherwise, as before. Escaped as in 20261208090000_loop_feed_notify: each semicolon written \073.
CREATE OR REPLACE FUNCTION loop_feed_notify_loop() RETURNS trigger LANGUAGE plpgsql
  AS E'BEGIN PERFORM pg_notify(''loop_feed'', NEW."id" || CASE WHEN NEW."status" IN (''PASSED'', ''APPROVED'', ''REJECTED'', ''CANCELLED'', ''FAILED'', ''TERMINATED'') THEN '' ended'' ELSE '''' END)\073 RETURN NULL\073 END';
