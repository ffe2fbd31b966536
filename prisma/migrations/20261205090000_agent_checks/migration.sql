-- Smoke tests of the coding-agent presets (activities/makers/agent-check.ts), listed at GET /v1/agents.
CREATE TABLE "AgentCheck" (
    "id" TEXT NOT NULL,
    "backend" TEXT NOT NULL,
    "host" TEXT NOT NULL,
    "version" TEXT,
    "ok" BOOLEAN NOT NULL,
    "outcome" TEXT NOT NULL,
    "explanation" TEXT NOT NULL,
    "model" TEXT,
    "promptTokens" INTEGER,
    "completionTokens" INTEGER,
    "latencyMs" INTEGER NOT NULL,
    "checkedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "AgentCheck_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "AgentCheck_backend_checkedAt_idx" ON "AgentCheck"("backend", "checkedAt");
