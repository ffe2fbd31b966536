import type { FinalReport } from '../domain/reports';
import { finalReport } from '../store/reports';
import type { ActivityDeps } from './deps';
import { deliver, type DeliverInput, type DeliverOutput } from './delivery';
import { prepareDelivery, type DeliveryPreparation, type PrepareDeliveryInput } from './prepare-delivery';
import { recordProgress, type ProgressInput } from './progress';

// A passed change whose base did not move and that no person must approve is delivered by the activity that
// found so: one activity and one workflow task less at the end of most loops (docs/performance.md). When
// anything stands in the way (a moved base, a replay to verify, an approval), the preparation is returned
// and the workflow goes on as before (workflows/delivery.ts).

export interface PrepareThenDeliverInput extends PrepareDeliveryInput {
  /** Asked by the workflow: deliver when clear, then record the loop's end it hands over (its move into PASSED). */
  deliverWhenClear?: { ended: ProgressInput };
}

/** `delivered`: set when this activity delivered the change. */
export type PreparedOrDelivered = DeliveryPreparation & { delivered?: DeliverOutput };

export async function prepareThenDeliver(
  deps: ActivityDeps,
  { deliverWhenClear, ...input }: PrepareThenDeliverInput,
): Promise<PreparedOrDelivered> {
  if (!deliverWhenClear) return prepareDelivery(deps, input);
  const delivery = { loopId: input.loopId, sequence: input.sequence, outcome: 'PASSED', approvedBy: null } as const;
  // A retry after the delivery (its worker was lost before it answered): delivered it stays, whatever the
  // base did since — preparing again could replay the delivered change onto a base that moved meanwhile.
  const stored = await finalReport(deps.prisma, input.loopId);
  if (stored) {
    const report = stored.body as unknown as FinalReport;
    return {
      drift: report.baseDrift ?? noDrift(),
      replayed: null,
      contextImpact: report.contextImpact ?? { level: 'NONE', reasons: [] },
      approvalRequired: false,
      delivered: await deliverAndEnd(deps, { ...delivery, ended: deliverWhenClear.ended }),
    };
  }
  const prepared = await prepareDelivery(deps, input);
  if (prepared.drift.behind > 0 || prepared.replayed || prepared.approvalRequired) return prepared;
  return {
    ...prepared,
    delivered: await deliverAndEnd(deps, { ...delivery, ended: deliverWhenClear.ended }, prepared),
  };
}

/**
 * Delivers, then records the loop's end that the workflow handed over: no write of its own. `prepared`: the
 * drift and impact this activity read while preparing, which the report states without reading them again.
 */
export async function deliverAndEnd(
  deps: ActivityDeps,
  input: DeliverInput & { ended: ProgressInput },
  prepared?: DeliveryPreparation,
): Promise<DeliverOutput> {
  const delivered = await deliver(deps, input, prepared);
  await recordProgress(deps, input.ended);
  return delivered;
}

/** A report that states no drift (every delivery writes one; the type allows older reports without). */
function noDrift(): DeliveryPreparation['drift'] {
  return { baseRef: '', baseCommit: '', currentCommit: null, behind: 0, conflicts: null, problem: 'not in the report' };
}
