-- The workflow run bound to the loop: a run the loop did not create is refused (activities/run-binding.ts).
ALTER TABLE "Loop" ADD COLUMN "currentRunId" TEXT;
