-- AlterTable
ALTER TABLE "Loop" ADD COLUMN "submittedByKeyId" TEXT,
ADD COLUMN "sandbox" TEXT;

-- CreateTable
CREATE TABLE "DecisionTicket" (
    "id" TEXT NOT NULL,
    "loopId" TEXT NOT NULL,
    "escalationSequence" INTEGER NOT NULL,
    "tokenHash" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "actor" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "usedAt" TIMESTAMP(3),

    CONSTRAINT "DecisionTicket_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "DecisionTicket_tokenHash_key" ON "DecisionTicket"("tokenHash");

-- CreateIndex
CREATE INDEX "DecisionTicket_loopId_escalationSequence_idx" ON "DecisionTicket"("loopId", "escalationSequence");

-- AddForeignKey
ALTER TABLE "DecisionTicket" ADD CONSTRAINT "DecisionTicket_loopId_fkey" FOREIGN KEY ("loopId") REFERENCES "Loop"("id") ON DELETE CASCADE ON UPDATE CASCADE;
