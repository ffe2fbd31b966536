-- What a loop waits for while its step meets an outage, and since when (store/loop-waiting.ts).
ALTER TABLE "Loop" ADD COLUMN "waitingFor" TEXT;
ALTER TABLE "Loop" ADD COLUMN "waitingSince" TIMESTAMP(3);
