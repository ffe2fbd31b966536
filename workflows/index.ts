// The worker loads only this file: every workflow the service runs is exported here.
export { engineeringLoop } from './engineering-loop';
export { agentChecks } from './agent-checks';
