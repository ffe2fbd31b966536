-- CreateTable
CREATE TABLE "LoopEvent" (
    "id" TEXT NOT NULL,
    "loopId" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "phase" TEXT NOT NULL,
    "roundIteration" INTEGER NOT NULL,
    "lastVerdict" TEXT,
    "failureReason" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "LoopEvent_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "LoopEvent_key_key" ON "LoopEvent"("key");

-- CreateIndex
CREATE INDEX "LoopEvent_loopId_createdAt_idx" ON "LoopEvent"("loopId", "createdAt");

-- AddForeignKey
ALTER TABLE "LoopEvent" ADD CONSTRAINT "LoopEvent_loopId_fkey" FOREIGN KEY ("loopId") REFERENCES "Loop"("id") ON DELETE CASCADE ON UPDATE CASCADE;
