import { GRADLE_WRAPPER_DOWNLOAD_FAILED } from '../verification/gate-outcome';

// Set-up failures an operator fixes with a switch of the worker's environment, not the repository:
// the escalation names the switch (docs/repository.md, "Set-up").

const HINTS: Array<[RegExp, string]> = [
  [
    /No compatible signature found in package metadata|Cannot find matching keyid/,
    "corepack could not check the package manager's signature, as happens when the registry mirror serves none: " +
      "set COREPACK_INTEGRITY_KEYS=0 in the worker's environment",
  ],
  [
    // Node's wording: corepack, and the pnpm and yarn it runs, trust only Node's own CA list.
    /self[- ]signed certificate in certificate chain|unable to get local issuer certificate|UNABLE_TO_GET_ISSUER_CERT_LOCALLY/,
    "a TLS-inspecting proxy's or a private registry's certificate is not trusted: set NODE_EXTRA_CA_CERTS in the worker's environment to its CA file",
  ],
  [
    // The wrapper prints the URL it fetches, then dies with a stack trace through its own classes.
    GRADLE_WRAPPER_DOWNLOAD_FAILED,
    "the repository's Gradle wrapper (gradlew) could not download the Gradle its gradle/wrapper/gradle-wrapper.properties " +
      'pins (distributionUrl): let set-up reach that host in SANDBOX_EGRESS_SETUP — services.gradle.org sends the ' +
      "download on to github.com and GitHub's release-asset host — or mirror the distribution where set-up can reach it",
  ],
];

/** What the operator can switch to fix the failure `output` shows; null when it is not one of those. */
export function operatorHint(output: string): string | null {
  return HINTS.find(([pattern]) => pattern.test(output))?.[1] ?? null;
}
