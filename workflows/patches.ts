// Patches in force: their patched() guards the new branch, so loops started before it replay the old one.

/** A continued run claims the loop's run binding from the run it continues before anything else. */
export const CLAIM_CONTINUED_RUN = 'claim-continued-run';
/** A new loop's test names are resolved against the base commit's tests before the first maker (acceptance-tests.ts). */
export const RESOLVE_TEST_NAMES_AT_BASE = 'resolve-test-names-at-base';
/** A passed change is prepared for delivery: replayed onto a moved base and verified again, its context impact read (delivery.ts). */
export const PREPARE_DELIVERY = 'prepare-delivery';
/** A change every gate passed is reviewed by the verification's activity; the review activity only when that failed. */
export const REVIEW_IN_VERIFICATION = 'review-in-verification';
/** The maker's activity verifies its own checkpoint (and reviews it); the verification activity only when that failed. */
export const VERIFY_IN_MAKER_ACTIVITY = 'verify-in-maker-activity';
/** A passed change is delivered by the activity that prepared its delivery, when nothing stands in the way. */
export const DELIVER_WHEN_PREPARED = 'deliver-when-prepared';

// Patches retired at the version floor (CONTRIBUTING.md, "The version floor"): their old branches are gone,
// and each is called as deprecatePatch() where its patched() was, so a loop started on the release before
// the floor (its history carries the patch's marker) still replays. The next floor raise removes them.

/** A received decision is acted on only once the authorizeDecision activity honours it. */
export const AUTHORIZE_DECISIONS = 'authorize-decisions';
/** A decision deadline never approves an escalation that carries system BLOCKER findings. */
export const DEADLINE_SPARES_SYSTEM_BLOCKERS = 'deadline-spares-system-blockers';
/** Dependencies are installed in the maker's workspace (SETUP) before the first maker and after a manifest changed. */
export const SETUP_PHASE = 'setup-phase';
/** Delivery may push and open a pull request (longer timeout); its URL becomes the LoopPullRequest search attribute. */
export const DELIVER_PULL_REQUEST = 'deliver-pull-request';
/** The loop's record writes are local activities (no task-queue round trip; a lost worker costs seconds). */
export const LOCAL_RECORDS = 'local-records';
/** A decision signal the loop cannot take is recorded as refused, so its sender can see it was ignored. */
export const RECORD_REFUSED_SIGNALS = 'record-refused-signals';
/** Entering the maker, verify, review and judge phases is recorded by the phase's own first activity: no write of its own. */
export const PROGRESS_IN_PHASE_ACTIVITIES = 'progress-in-phase-activities';
/** Entering PREPARING and CONTRACT is recorded by prepareWorkspace and the contract's freeze, like the later phases. */
export const START_PROGRESS_IN_ACTIVITIES = 'start-progress-in-activities';
/** The checkpoint's tamper and scope check runs in the maker's activity, right after the checkpoint commit: no round trip of its own. */
export const INSPECT_IN_MAKER_ACTIVITY = 'inspect-in-maker-activity';
/** The loop's end (PASSED or APPROVED) is recorded by the delivery activity once it delivered: no write of its own. */
export const END_IN_DELIVERY = 'end-in-delivery';
