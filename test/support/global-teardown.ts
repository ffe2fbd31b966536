import { stopTestPlatform, type TestPlatform } from './global-setup';

export default async function globalTeardown(): Promise<void> {
  const platform = (globalThis as { __TEST_PLATFORM__?: TestPlatform }).__TEST_PLATFORM__;
  if (platform) await stopTestPlatform(platform);
}
