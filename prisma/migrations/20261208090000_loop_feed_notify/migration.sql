-- The live event streams of a loop wake when its records are committed (store/loop-writes.ts), rather
-- than at their next poll: a write to the loop or to one of the tables of its timeline (store/loop-feed.ts)
-- sends the id of the loop on channel loop_feed. PostgreSQL delivers a notification when its transaction
-- commits, once per id and transaction, and drops it when the transaction rolls back.
-- The bodies are escaped strings with each semicolon written \073: the Prisma CLI splits a migration at
-- every semicolon, within quotes too (and trips on apostrophes in comments).
CREATE FUNCTION loop_feed_notify_loop() RETURNS trigger LANGUAGE plpgsql
  AS E'BEGIN PERFORM pg_notify(''loop_feed'', NEW."id")\073 RETURN NULL\073 END';

CREATE FUNCTION loop_feed_notify_record() RETURNS trigger LANGUAGE plpgsql
  AS E'BEGIN PERFORM pg_notify(''loop_feed'', NEW."loopId")\073 RETURN NULL\073 END';

CREATE TRIGGER loop_feed_notify AFTER INSERT OR UPDATE ON "Loop"
  FOR EACH ROW EXECUTE FUNCTION loop_feed_notify_loop();
CREATE TRIGGER loop_feed_notify AFTER INSERT OR UPDATE ON "LoopEvent"
  FOR EACH ROW EXECUTE FUNCTION loop_feed_notify_record();
CREATE TRIGGER loop_feed_notify AFTER INSERT OR UPDATE ON "ContractVersion"
  FOR EACH ROW EXECUTE FUNCTION loop_feed_notify_record();
CREATE TRIGGER loop_feed_notify AFTER INSERT OR UPDATE ON "Evidence"
  FOR EACH ROW EXECUTE FUNCTION loop_feed_notify_record();
CREATE TRIGGER loop_feed_notify AFTER INSERT OR UPDATE ON "ExecutionRecord"
  FOR EACH ROW EXECUTE FUNCTION loop_feed_notify_record();
CREATE TRIGGER loop_feed_notify AFTER INSERT OR UPDATE ON "Verdict"
  FOR EACH ROW EXECUTE FUNCTION loop_feed_notify_record();
CREATE TRIGGER loop_feed_notify AFTER INSERT OR UPDATE ON "Escalation"
  FOR EACH ROW EXECUTE FUNCTION loop_feed_notify_record();
CREATE TRIGGER loop_feed_notify AFTER INSERT OR UPDATE ON "Decision"
  FOR EACH ROW EXECUTE FUNCTION loop_feed_notify_record();
