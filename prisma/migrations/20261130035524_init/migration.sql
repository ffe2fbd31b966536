-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "public";

-- CreateTable
CREATE TABLE "Loop" (
    "id" TEXT NOT NULL,
    "workflowId" TEXT NOT NULL,
    "idempotencyKey" TEXT,
    "requestHash" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "phase" TEXT NOT NULL,
    "repoUrl" TEXT NOT NULL,
    "baseRef" TEXT NOT NULL,
    "baseCommit" TEXT,
    "branch" TEXT,
    "workspacePath" TEXT,
    "gatePlan" JSONB,
    "maxIterations" INTEGER NOT NULL,
    "roundIteration" INTEGER NOT NULL DEFAULT 0,
    "lastVerdict" TEXT,
    "failureReason" TEXT,
    "input" JSONB NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,
    "finishedAt" TIMESTAMP(3),

    CONSTRAINT "Loop_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ContractVersion" (
    "id" TEXT NOT NULL,
    "loopId" TEXT NOT NULL,
    "version" INTEGER NOT NULL,
    "hash" TEXT NOT NULL,
    "contract" JSONB NOT NULL,
    "reason" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ContractVersion_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Iteration" (
    "id" TEXT NOT NULL,
    "loopId" TEXT NOT NULL,
    "sequence" INTEGER NOT NULL,
    "roundIteration" INTEGER NOT NULL,
    "contractVersion" INTEGER NOT NULL,
    "startCommit" TEXT NOT NULL,
    "checkpointCommit" TEXT,
    "diffHash" TEXT,
    "changedFiles" JSONB,
    "noChange" BOOLEAN,
    "makerExitCode" INTEGER,
    "makerTimeoutStatus" TEXT,
    "makerAttempts" INTEGER NOT NULL DEFAULT 0,
    "makerPid" INTEGER,
    "makerHost" TEXT,
    "startedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "makerFinishedAt" TIMESTAMP(3),
    "inspectedAt" TIMESTAMP(3),
    "verifiedAt" TIMESTAMP(3),
    "reviewedAt" TIMESTAMP(3),
    "reviewOutcome" JSONB,
    "backtrackedTo" TEXT,

    CONSTRAINT "Iteration_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Evidence" (
    "id" TEXT NOT NULL,
    "loopId" TEXT NOT NULL,
    "iterationId" TEXT NOT NULL,
    "gate" TEXT NOT NULL,
    "gateOrder" INTEGER NOT NULL,
    "status" TEXT NOT NULL,
    "source" TEXT NOT NULL,
    "sourceDetail" TEXT,
    "command" JSONB NOT NULL,
    "executionId" TEXT NOT NULL,
    "pid" INTEGER,
    "startTime" TIMESTAMP(3),
    "endTime" TIMESTAMP(3),
    "exitCode" INTEGER,
    "timeoutStatus" TEXT,
    "stdout" TEXT NOT NULL,
    "stderr" TEXT NOT NULL,
    "stdoutSha256" TEXT,
    "stderrSha256" TEXT,
    "stdoutBytes" INTEGER NOT NULL DEFAULT 0,
    "stderrBytes" INTEGER NOT NULL DEFAULT 0,
    "outputTruncated" BOOLEAN NOT NULL DEFAULT false,
    "testCounts" JSONB,
    "failureReason" TEXT,
    "failureSignature" TEXT,
    "assertionEvidence" JSONB NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Evidence_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Finding" (
    "id" TEXT NOT NULL,
    "loopId" TEXT NOT NULL,
    "iterationId" TEXT NOT NULL,
    "findingId" TEXT NOT NULL,
    "source" TEXT NOT NULL,
    "rule" TEXT,
    "signature" TEXT NOT NULL,
    "title" TEXT NOT NULL,
    "topic" TEXT NOT NULL,
    "severity" TEXT NOT NULL,
    "validity" TEXT NOT NULL,
    "claimedValidity" TEXT,
    "triageReasoning" TEXT,
    "triageCounterEvidence" TEXT,
    "disposition" TEXT NOT NULL,
    "location" JSONB NOT NULL,
    "acceptanceCriteria" JSONB NOT NULL,
    "evidence" TEXT NOT NULL,
    "failureScenario" TEXT NOT NULL,
    "reproduction" TEXT NOT NULL,
    "concreteAlternativeDiff" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Finding_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ExecutionRecord" (
    "id" TEXT NOT NULL,
    "loopId" TEXT NOT NULL,
    "iterationSeq" INTEGER,
    "role" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "provider" TEXT NOT NULL,
    "model" TEXT,
    "responseId" TEXT,
    "requestId" TEXT,
    "pid" INTEGER,
    "promptTokens" INTEGER,
    "completionTokens" INTEGER,
    "costUsd" DOUBLE PRECISION,
    "latencyMs" INTEGER NOT NULL,
    "outcome" TEXT NOT NULL,
    "detail" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ExecutionRecord_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Verdict" (
    "id" TEXT NOT NULL,
    "loopId" TEXT NOT NULL,
    "iterationId" TEXT NOT NULL,
    "verdict" TEXT NOT NULL,
    "trigger" TEXT,
    "directives" JSONB NOT NULL,
    "report" JSONB NOT NULL,
    "markdown" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Verdict_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Report" (
    "id" TEXT NOT NULL,
    "loopId" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "body" JSONB NOT NULL,
    "markdown" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Report_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Escalation" (
    "id" TEXT NOT NULL,
    "loopId" TEXT NOT NULL,
    "sequence" INTEGER NOT NULL,
    "trigger" TEXT NOT NULL,
    "reportId" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "decidedAt" TIMESTAMP(3),

    CONSTRAINT "Escalation_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Decision" (
    "id" TEXT NOT NULL,
    "loopId" TEXT NOT NULL,
    "escalationId" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "guidance" TEXT,
    "actor" TEXT NOT NULL,
    "comment" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Decision_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ApiKey" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "role" TEXT NOT NULL,
    "prefix" TEXT NOT NULL,
    "keyHash" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastUsedAt" TIMESTAMP(3),
    "revokedAt" TIMESTAMP(3),

    CONSTRAINT "ApiKey_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "Loop_workflowId_key" ON "Loop"("workflowId");

-- CreateIndex
CREATE UNIQUE INDEX "Loop_idempotencyKey_key" ON "Loop"("idempotencyKey");

-- CreateIndex
CREATE INDEX "Loop_status_createdAt_idx" ON "Loop"("status", "createdAt");

-- CreateIndex
CREATE INDEX "Loop_createdAt_idx" ON "Loop"("createdAt");

-- CreateIndex
CREATE UNIQUE INDEX "ContractVersion_loopId_version_key" ON "ContractVersion"("loopId", "version");

-- CreateIndex
CREATE UNIQUE INDEX "Iteration_loopId_sequence_key" ON "Iteration"("loopId", "sequence");

-- CreateIndex
CREATE INDEX "Evidence_loopId_idx" ON "Evidence"("loopId");

-- CreateIndex
CREATE UNIQUE INDEX "Evidence_iterationId_gate_key" ON "Evidence"("iterationId", "gate");

-- CreateIndex
CREATE INDEX "Finding_loopId_signature_idx" ON "Finding"("loopId", "signature");

-- CreateIndex
CREATE UNIQUE INDEX "Finding_iterationId_findingId_key" ON "Finding"("iterationId", "findingId");

-- CreateIndex
CREATE INDEX "ExecutionRecord_loopId_createdAt_idx" ON "ExecutionRecord"("loopId", "createdAt");

-- CreateIndex
CREATE UNIQUE INDEX "Verdict_iterationId_key" ON "Verdict"("iterationId");

-- CreateIndex
CREATE INDEX "Verdict_loopId_idx" ON "Verdict"("loopId");

-- CreateIndex
CREATE INDEX "Report_loopId_createdAt_idx" ON "Report"("loopId", "createdAt");

-- CreateIndex
CREATE UNIQUE INDEX "Report_loopId_key_key" ON "Report"("loopId", "key");

-- CreateIndex
CREATE INDEX "Escalation_status_createdAt_idx" ON "Escalation"("status", "createdAt");

-- CreateIndex
CREATE UNIQUE INDEX "Escalation_loopId_sequence_key" ON "Escalation"("loopId", "sequence");

-- CreateIndex
CREATE UNIQUE INDEX "Decision_escalationId_key" ON "Decision"("escalationId");

-- CreateIndex
CREATE UNIQUE INDEX "ApiKey_keyHash_key" ON "ApiKey"("keyHash");

-- CreateIndex
CREATE INDEX "ApiKey_createdAt_idx" ON "ApiKey"("createdAt");

-- AddForeignKey
ALTER TABLE "ContractVersion" ADD CONSTRAINT "ContractVersion_loopId_fkey" FOREIGN KEY ("loopId") REFERENCES "Loop"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Iteration" ADD CONSTRAINT "Iteration_loopId_fkey" FOREIGN KEY ("loopId") REFERENCES "Loop"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Evidence" ADD CONSTRAINT "Evidence_loopId_fkey" FOREIGN KEY ("loopId") REFERENCES "Loop"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Evidence" ADD CONSTRAINT "Evidence_iterationId_fkey" FOREIGN KEY ("iterationId") REFERENCES "Iteration"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Finding" ADD CONSTRAINT "Finding_loopId_fkey" FOREIGN KEY ("loopId") REFERENCES "Loop"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Finding" ADD CONSTRAINT "Finding_iterationId_fkey" FOREIGN KEY ("iterationId") REFERENCES "Iteration"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ExecutionRecord" ADD CONSTRAINT "ExecutionRecord_loopId_fkey" FOREIGN KEY ("loopId") REFERENCES "Loop"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Verdict" ADD CONSTRAINT "Verdict_loopId_fkey" FOREIGN KEY ("loopId") REFERENCES "Loop"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Verdict" ADD CONSTRAINT "Verdict_iterationId_fkey" FOREIGN KEY ("iterationId") REFERENCES "Iteration"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Report" ADD CONSTRAINT "Report_loopId_fkey" FOREIGN KEY ("loopId") REFERENCES "Loop"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Escalation" ADD CONSTRAINT "Escalation_loopId_fkey" FOREIGN KEY ("loopId") REFERENCES "Loop"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Decision" ADD CONSTRAINT "Decision_loopId_fkey" FOREIGN KEY ("loopId") REFERENCES "Loop"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Decision" ADD CONSTRAINT "Decision_escalationId_fkey" FOREIGN KEY ("escalationId") REFERENCES "Escalation"("id") ON DELETE CASCADE ON UPDATE CASCADE;

