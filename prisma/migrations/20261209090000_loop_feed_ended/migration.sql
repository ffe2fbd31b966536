-- The event streams of a loop wait out a burst of commits before they read, but read the end of the loop at
-- once (api/loop-event-stream.ts): the notification of a write to the Loop row says `<id> ended` when the
-- status of the row is terminal (the list is TERMINAL_STATUSES of domain/loop-state.ts, checked by
-- test/integration/loop-writes.test.ts), and `<id>` otherwise, as before. Escaped as in
-- 20261208090000_loop_feed_notify: each semicolon written \073.
CREATE OR REPLACE FUNCTION loop_feed_notify_loop() RETURNS trigger LANGUAGE plpgsql
  AS E'BEGIN PERFORM pg_notify(''loop_feed'', NEW."id" || CASE WHEN NEW."status" IN (''PASSED'', ''APPROVED'', ''REJECTED'', ''CANCELLED'', ''FAILED'', ''TERMINATED'') THEN '' ended'' ELSE '''' END)\073 RETURN NULL\073 END';
